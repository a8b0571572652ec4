"""The driver JVM's class archive (forensics.jvm_archive, `warm-up`): built once, then mapped by the JVM.

The truth is the JVM's own class-loading log: a class mapped from the archive `warm-up` built is logged
as coming from the dynamic archive ("shared objects file (top)"), JDK 17's wording.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from forensics import jvm_archive
from tests.conftest import REPO, SAMPLES

needs_java = pytest.mark.skipif(jvm_archive.archive_key() is None, reason="no Java")


def _cli(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "forensics", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _clean_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_FORENSICS_JVM", "PYSPARK_"))}
    return {**env, jvm_archive.CACHE_ENV: str(cache), "PYTHONPATH": str(REPO)}


@needs_java
def test_options_follow_the_archive_and_the_switch(tmp_path, monkeypatch):
    monkeypatch.setenv(jvm_archive.CACHE_ENV, str(tmp_path))
    monkeypatch.delenv(jvm_archive.OFF_ENV, raising=False)
    monkeypatch.delenv(jvm_archive.DUMP_ENV, raising=False)
    assert jvm_archive.driver_options() == ""  # not built yet: the JVM starts as it always did
    path = jvm_archive.archive_path()
    path.write_bytes(b"x")
    assert jvm_archive.driver_options().split()[0] == f"-XX:SharedArchiveFile={path}"
    assert jvm_archive.in_use() == path
    monkeypatch.setenv(jvm_archive.OFF_ENV, "0")
    assert jvm_archive.driver_options() == "" and jvm_archive.in_use() is None
    monkeypatch.delenv(jvm_archive.OFF_ENV)
    blank = tmp_path / "a b"
    blank.mkdir()
    monkeypatch.setenv(jvm_archive.CACHE_ENV, str(blank))
    jvm_archive.archive_path().write_bytes(b"x")
    assert jvm_archive.driver_options() == ""  # the launcher would split the path


@needs_java
def test_archive_of_another_java_is_not_mapped(tmp_path, monkeypatch):
    mine = jvm_archive.archive_key()
    other = tmp_path / "jdk"
    (other / "bin").mkdir(parents=True)
    (other / "bin" / "java").write_bytes(b"#!/bin/sh\n")
    monkeypatch.setenv("JAVA_HOME", str(other))
    theirs = jvm_archive.archive_key()
    assert theirs != mine
    (other / "bin" / "java").write_bytes(b"#!/bin/sh\n# updated in place\n")
    assert jvm_archive.archive_key() != theirs


@needs_java
def test_two_installs_of_one_spark_have_their_own_archives(tmp_path, monkeypatch):
    # a second virtualenv's pyspark: the same jars, elsewhere. The JVM maps an archive only under the class path
    # it was written with ("shared class paths mismatch"), so one key for both would let either's warm-up
    # replace the other's archive with one its JVMs refuse.
    import pyspark

    mine = jvm_archive.archive_key()
    other = tmp_path / "venv2" / "pyspark"
    (other / "jars").mkdir(parents=True)
    for jar in (Path(pyspark.__file__).parent / "jars").glob("*.jar"):
        (other / "jars" / jar.name).symlink_to(jar)
    monkeypatch.setattr(pyspark, "__file__", str(other / "__init__.py"))
    theirs = jvm_archive.archive_key()
    assert theirs != mine
    monkeypatch.setenv("SPARK_DIST_CLASSPATH", str(tmp_path / "hadoop" / "*"))  # the launcher appends it
    assert jvm_archive.archive_key() != theirs


def test_warm_up_prunes_only_what_this_install_cannot_use(tmp_path, monkeypatch):
    from forensics.commands.warm_up import prune

    mine = tmp_path / "venv1" / "jars"
    other = tmp_path / "venv2" / "jars"
    mine.mkdir(parents=True)
    other.mkdir(parents=True)
    monkeypatch.setattr(jvm_archive, "jars_dir", lambda: mine)

    def archive(name: str, owner: Path | None) -> Path:
        p = tmp_path / "cache" / f"spark-driver-{name}.jsa"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(b"x")
        if owner is not None:
            jvm_archive.owner_file(p).write_text(str(owner))
        return p

    kept = archive("new", mine)
    older = archive("older", mine)  # this install's, for the Java or Spark it had before
    theirs = archive("theirs", other)  # another virtualenv's, still there
    gone = archive("gone", tmp_path / "removed-venv" / "jars")
    unknown = archive("unknown", None)  # written before archives named their install
    gone_tmp = subprocess.Popen(["true"])
    gone_tmp.wait()
    unfinished = tmp_path / "cache" / f"spark-driver-x.{gone_tmp.pid}.tmp"
    unfinished.write_bytes(b"x")
    prune(kept)
    left = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert left == sorted([kept.name, jvm_archive.owner_file(kept).name, theirs.name,
                           jvm_archive.owner_file(theirs).name]), left
    assert not any(p.exists() for p in (older, gone, unknown, unfinished))


def test_abandoned_temporaries(tmp_path):
    from forensics.commands.warm_up import _abandoned

    gone = subprocess.Popen(["true"])
    gone.wait()
    assert _abandoned(tmp_path / f"spark-driver-k.{gone.pid}.tmp")
    assert not _abandoned(tmp_path / f"spark-driver-k.{os.getpid()}.tmp")


def test_warm_up_without_logs_is_a_user_error(tmp_path):
    out = _cli("warm-up", str(tmp_path / "nothing-here"), env=_clean_env(tmp_path))
    assert out.returncode == 2
    assert "nothing-here: no such folder" in out.stderr and "Traceback" not in out.stderr
    assert not list(tmp_path.glob("*.jsa"))


@pytest.mark.slow  # two JVMs, one writing the archive (the options it leads to: the tests above)
@needs_java
def test_warm_up_builds_an_archive_the_next_driver_maps(tmp_path):
    env = _clean_env(tmp_path / "cache")
    stale = tmp_path / "cache" / "spark-driver-0000000000000000.jsa"
    stale.parent.mkdir()
    stale.write_bytes(b"an archive of another Java")
    built = _cli("warm-up", str(SAMPLES / "rf1_broker_kill"), env=env)
    assert built.returncode == 0, built.stderr[-2000:]
    archives = sorted((tmp_path / "cache").glob("*.jsa"))
    assert [p.name for p in archives] == [f"spark-driver-{jvm_archive.archive_key()}.jsa"]  # the stale one went
    assert jvm_archive.owner_file(archives[0]).read_text() == str(jvm_archive.jars_dir())
    assert archives[0].stat().st_size > 10_000_000
    assert not list((tmp_path / "cache").glob("*.tmp"))

    log = tmp_path / "classes.log"
    probe = ("from forensics.spark import get_spark\n"
             "s = get_spark('local[1]')\n"
             "print(s.range(3).count())\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=300,
                         env={**env, "JAVA_TOOL_OPTIONS": f"-Xlog:class+load=info:file={log}"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "3"
    loaded = [line for line in log.read_text().splitlines() if " org.apache.spark.SparkContext " in line]
    assert loaded and "shared objects file (top)" in loaded[0], loaded


@needs_java
def test_a_cache_folder_that_cannot_be_made_is_a_user_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    out = _cli("warm-up", str(SAMPLES / "rf1_broker_kill"), env=_clean_env(blocker / "cache"))
    assert out.returncode == 2, out.stderr
    assert "cannot create the cache folder" in out.stderr and "Traceback" not in out.stderr
