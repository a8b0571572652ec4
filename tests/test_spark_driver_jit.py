"""forensics.spark.driver_jit_options: a cluster master's driver JVM compiles with C1 only (it plans queries
and gathers small results; C2's recompiling of the planner took CPU from the run, benchmarks/journal/replay.md), and
so does the local JVM of an ``ingest`` whose events never enter it (staged by the tasks, written with pyarrow: C2
compiled for 10 of its 21.5 CPU s on a 280 MB corpus, benchmarks/journal/ingest.md); any other local master's JVM,
which is also the executors, keeps HotSpot's full tiered JIT."""
import subprocess
import sys
from pathlib import Path

import pytest

import forensics.commands.ingest as ingest_command
from forensics.ingest import events_stay_in_python
from forensics.sources import FileRef, Inputs
from forensics.spark import driver_jit_options

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("master", ["local", "local[1]", "local[2]", "local[*]", "local-cluster[2,1,1024]"])
def test_a_local_master_keeps_the_full_jit(master):
    assert driver_jit_options(master) == ""


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "yarn", "k8s://https://10.0.0.1:6443"])
def test_a_cluster_masters_driver_stops_at_c1(master):
    assert driver_jit_options(master).split() == ["-XX:TieredStopAtLevel=1"]
    assert driver_jit_options(master, rows_in_python=True).split() == ["-XX:TieredStopAtLevel=1"]


def test_an_unknown_master_is_left_to_spark():
    # spark-defaults.conf or spark-submit names it (resolve_master gives None): nothing is assumed
    assert driver_jit_options(None) == ""
    assert driver_jit_options(None, rows_in_python=True) == ""


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]"])
def test_a_local_jvm_that_sees_no_rows_stops_at_c1(master):
    assert driver_jit_options(master, rows_in_python=True).split() == ["-XX:TieredStopAtLevel=1"]


def test_local_cluster_executors_are_other_jvms_and_keep_the_full_jit():
    # their tasks may not share the driver's filesystem (forensics.staging.shares_filesystem): no staging there
    assert driver_jit_options("local-cluster[2,1,1024]", rows_in_python=True) == ""


def test_only_local_files_keep_the_events_out_of_the_jvm(tmp_path):
    local = FileRef(str(tmp_path / "server.log"), "server.log", size=10)
    uri = FileRef(f"file://{tmp_path}/controller.log", "controller.log", size=10)
    remote = FileRef("s3a://bucket/logs/server.log", "s3a://bucket/logs/server.log", size=10)
    assert events_stay_in_python(Inputs(files=[local, uri]))
    assert not events_stay_in_python(Inputs(files=[local, remote]))


class _Started(Exception):
    pass


@pytest.mark.parametrize("remote", [False, True])
def test_the_ingest_command_asks_for_c1_when_its_events_stay_in_python(tmp_path, monkeypatch, remote):
    from forensics.cli import main

    asked = []

    def start_spark(master, rows_in_python=False, preload=None):
        asked.append((master, rows_in_python))
        raise _Started

    monkeypatch.setattr(ingest_command, "start_spark", start_spark)
    monkeypatch.setenv("KAFKA_FORENSICS_DEBUG", "1")  # the sentinel comes through, not an 'internal error' exit
    if remote:  # as a remote URI among the inputs makes it (test_only_local_files_keep_the_events_out_of_the_jvm)
        import forensics.ingest

        monkeypatch.setattr(forensics.ingest, "events_stay_in_python", lambda inputs: False)
    with pytest.raises(_Started):
        main(["ingest", str(REPO / "sample_logs" / "rf1_broker_kill"), "--out", str(tmp_path / "out"),
              "--master", "local[2]"])
    assert asked == [("local[2]", not remote)]


@pytest.mark.slow  # a JVM of its own, started as the ingest command starts it
def test_the_setting_reaches_the_jvm(tmp_path):
    probe = ("from forensics.spark import get_spark\n"
             "s = get_spark('local[1]', rows_in_python=True)\n"
             "mx = s._jvm.java.lang.management.ManagementFactory\n"
             "hs = mx.getPlatformMXBean(s._jvm.java.lang.Class.forName('com.sun.management.HotSpotDiagnosticMXBean'))\n"
             "print('TieredStopAtLevel', hs.getVMOption('TieredStopAtLevel').getValue())\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "TieredStopAtLevel 1"
