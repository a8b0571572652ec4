"""benchmarks/ingest_profile.py's Spark part starts its session as `kafka-forensics ingest` does: with the
C1-only JIT when the events stay in Python (forensics.spark.driver_jit_options). Started otherwise, its JVM
compiled with C2 as well, which the command never does, and the profile's JIT seconds (3.6 at the session start,
4.1 in run_ingest on the 2 GB rotated corpus, 2026-11-29 00:17) were not the command's."""
import pytest

import forensics.commands.common as common
import forensics.spark
from benchmarks import ingest_profile
from tests.conftest import SAMPLES


class _Started(Exception):
    pass


def test_the_profile_asks_for_the_commands_jit(monkeypatch):
    asked = []

    def start_spark(master, rows_in_python=False, preload=None):
        asked.append((master, rows_in_python))
        raise _Started

    def get_spark(*args, **kwargs):  # a session started some other way than the command's
        raise AssertionError(f"get_spark{args}{kwargs}, not the command's start_spark")

    monkeypatch.setattr(common, "start_spark", start_spark)
    monkeypatch.setattr(forensics.spark, "get_spark", get_spark)
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "pyspark-shell")  # the profile sets its event log there: undone after
    with pytest.raises(_Started):
        ingest_profile.spark_profile(SAMPLES / "rf1_broker_kill", "local[2]")
    assert asked == [("local[2]", True)]
