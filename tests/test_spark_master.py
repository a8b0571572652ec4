"""forensics.spark.resolve_master: which master a command's session is built with, in the order its docstring gives.

Independent truth: pyspark 4.0's java_gateway.py (launch_gateway): under spark-submit the JVM is already running
and PYSPARK_GATEWAY_PORT names its gateway; that JVM's conf holds spark-submit's --master, which an explicit
``builder.master()`` would replace (tests/test_audit_spark_submit.py runs spark-submit itself, in the opt-in tier).
"""
import pytest

from forensics.spark import resolve_master


@pytest.fixture
def env(monkeypatch, tmp_path):
    for name in ("PYSPARK_GATEWAY_PORT", "SPARK_MASTER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    return monkeypatch, tmp_path


def test_the_master_given_wins(env):
    monkeypatch, _ = env
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "4242")
    monkeypatch.setenv("SPARK_MASTER", "spark://h:7077")
    assert resolve_master("local[2]") == "local[2]"


def test_under_spark_submit_the_builder_names_no_master(env):
    monkeypatch, _ = env
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "4242")
    monkeypatch.setenv("SPARK_MASTER", "spark://h:7077")  # spark-submit's own --master is in its JVM's conf
    assert resolve_master(None) is None


def test_then_spark_master_then_spark_defaults_then_local(env):
    monkeypatch, conf = env
    assert resolve_master(None) == "local[*]"
    (conf / "spark-defaults.conf").write_text("spark.master yarn\n")
    assert resolve_master(None) is None  # Spark reads it itself
    monkeypatch.setenv("SPARK_MASTER", "spark://h:7077")
    assert resolve_master(None) == "spark://h:7077"
