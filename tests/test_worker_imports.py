"""The Python workers' import-cache reset (forensics.worker_imports): a zip archive is read again only when it
changed, in the workers every mapInArrow function of ours runs in.

The cost it removes is CPython's (gh-103200: on 3.10 and 3.11 ``zipimporter.invalidate_caches`` reads the whole
archive directory at once) met through PySpark's worker, which resets the caches before every task
(pyspark 4.0.1 worker_util.setup_spark_files)."""
from __future__ import annotations

import ast
import importlib
import sys
import zipfile
import zipimport
from pathlib import Path

import pyarrow as pa
import pytest

from forensics import worker_imports

ROOT = Path(__file__).resolve().parents[1]
needs_old_zipimport = pytest.mark.skipif(not worker_imports.needed(),
                                         reason="CPython 3.12+ reads a reset archive lazily itself (gh-103200)")


@pytest.fixture
def zipped(tmp_path, monkeypatch):
    """A zip on sys.path holding module kf_zipped_a, imported; the zip importers' reset as it was, after."""
    archive = tmp_path / "mods.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("kf_zipped_a.py", "VALUE = 'a'\n")
    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", zipimport.zipimporter.invalidate_caches)
    monkeypatch.syspath_prepend(str(archive))
    for name in ("kf_zipped_a", "kf_zipped_b"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert __import__("kf_zipped_a").VALUE == "a"
    reads: list[str] = []
    real = zipimport._read_directory

    def counted(path):
        reads.append(path)
        return real(path)

    monkeypatch.setattr(zipimport, "_read_directory", counted)
    return archive, reads


@needs_old_zipimport
def test_an_unchanged_archive_is_read_once_however_often_the_caches_are_reset(zipped):
    archive, reads = zipped
    importlib.invalidate_caches()
    assert reads.count(str(archive)) == 1  # CPython's own reset reads it every time
    worker_imports.install()
    for _ in range(5):
        importlib.invalidate_caches()
    assert reads.count(str(archive)) == 2  # the first reset after install reads it once more, then none


@needs_old_zipimport
def test_a_changed_archive_is_read_again_and_its_new_module_imports(zipped):
    archive, reads = zipped
    worker_imports.install()
    importlib.invalidate_caches()
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr("kf_zipped_b.py", "VALUE = 'b'\n")
    importlib.invalidate_caches()  # what addPyFile's reset is for: a new module becomes importable
    assert __import__("kf_zipped_b").VALUE == "b"


def test_install_twice_keeps_one_replacement(monkeypatch):
    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", zipimport.zipimporter.invalidate_caches)
    worker_imports.install()
    once = zipimport.zipimporter.invalidate_caches
    worker_imports.install()
    assert zipimport.zipimporter.invalidate_caches is once


def test_a_wrapped_function_installs_first_and_yields_what_it_yields(monkeypatch):
    order = []
    monkeypatch.setattr(worker_imports, "install", lambda: order.append("install"))

    def fn(batches):
        order.append("fn")
        yield from (b * 2 for b in batches)

    assert list(worker_imports.in_workers(fn)(iter([1, 2]))) == [2, 4]
    assert order == ["install", "fn"]


@pytest.mark.spark
def test_the_reset_is_replaced_in_the_workers_our_functions_run_in(spark):
    def reset_of(batches):  # nested, so Spark's pickle takes it by value, not from this test module
        for _ in batches:
            pass
        yield pa.RecordBatch.from_pylist([{"ours": zipimport.zipimporter.invalidate_caches.__module__
                                           == "forensics.worker_imports"}])

    got = spark.range(4, numPartitions=4).mapInArrow(worker_imports.in_workers(reset_of), "ours boolean").collect()
    assert [r["ours"] for r in got] == [worker_imports.needed()] * 4


def test_every_mapinarrow_function_of_the_package_is_wrapped():
    bare = []
    for path in sorted((ROOT / "forensics").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "mapInArrow":
                arg = node.args[0] if node.args else None
                wrapped = isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "in_workers"
                if not wrapped:
                    bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bare == []
