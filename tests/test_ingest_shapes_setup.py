"""The ingest shapes benchmark (issue 48's measure) times the command as a user runs it after the README's set-up:
``kafka-forensics warm-up`` once, so every timed run maps the driver JVM's class archive; or, asked, with none.

Truth: the README's own set-up line names the step; the JVM options the timed command's driver would get under
the benchmark's environment (forensics.jvm_archive.driver_options, what get_spark passes to the JVM) say whether it
maps the archive the step built.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO
from forensics import jvm_archive

sys.path.insert(0, str(REPO / "benchmarks"))
import ingest_shapes_bench as bench  # noqa: E402

PROBE = "from forensics.jvm_archive import driver_options; print(driver_options())"


def _driver_options(env: dict[str, str]) -> str:
    run = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO), **env})
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


def test_the_set_up_step_is_the_readmes():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    setup = re.search(r"## Two commands on a fresh machine.*?```sh\n(.*?)\n```", readme, re.S).group(1)
    assert "kafka-forensics " + " ".join(bench.WARM_UP[2:]) in setup
    assert bench.WARM_UP[:2] == ("-m", "forensics")  # the same command, run by the venv's Python


def test_without_the_set_up_no_timed_run_maps_an_archive(tmp_path, monkeypatch):
    monkeypatch.setenv(jvm_archive.CACHE_ENV, str(tmp_path))
    monkeypatch.delenv(jvm_archive.OFF_ENV, raising=False)
    built = jvm_archive.archive_path()
    if built is None:
        pytest.skip("no Java")
    built.write_bytes(b"x")  # an archive in the cache: --archive none must not map it
    env, said = bench.set_up("none")
    assert _driver_options(env) == ""
    assert said.startswith("set-up: none") and "no class archive" in said


@pytest.mark.slow  # warm-up runs a postmortem in a JVM that writes the archive
def test_the_set_up_builds_the_archive_every_timed_run_maps(tmp_path, monkeypatch):
    monkeypatch.setenv(jvm_archive.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(jvm_archive.OFF_ENV, raising=False)
    if jvm_archive.archive_path() is None:
        pytest.skip("no Java")
    assert _driver_options({}) == ""  # nothing built yet
    env, said = bench.set_up("warm-up")
    path = jvm_archive.archive_path()
    assert path.is_file() and path.stat().st_size > 10_000_000
    assert _driver_options(env).split()[0] == f"-XX:SharedArchiveFile={path}"
    assert said.startswith("set-up: `kafka-forensics warm-up`") and path.name in said
