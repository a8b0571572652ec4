"""forensics.spark.driver_jit_options: a cluster master's driver JVM compiles with C1 only (it plans queries
and gathers small results; C2's recompiling of the planner took CPU from the run, benchmarks/journal/replay.md), while
a local master's JVM, which is also the executors, keeps HotSpot's full tiered JIT."""
import pytest

from forensics.spark import driver_jit_options


@pytest.mark.parametrize("master", ["local", "local[1]", "local[2]", "local[*]", "local-cluster[2,1,1024]"])
def test_a_local_master_keeps_the_full_jit(master):
    assert driver_jit_options(master) == ""


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "yarn", "k8s://https://10.0.0.1:6443"])
def test_a_cluster_masters_driver_stops_at_c1(master):
    assert driver_jit_options(master).split() == ["-XX:TieredStopAtLevel=1"]


def test_an_unknown_master_is_left_to_spark():
    # spark-defaults.conf or spark-submit names it (resolve_master gives None): nothing is assumed
    assert driver_jit_options(None) == ""
