"""forensics.spark.local_driver_memory: the heap a local master gets when nothing else set it (Spark's 1g did
not hold the 90-day audit of a 100,000-partition cluster), and that any setting of the user's wins."""
import pytest

from forensics.spark import local_driver_memory


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in ("KAFKA_FORENSICS_DRIVER_MEMORY", "PYSPARK_SUBMIT_ARGS", "SPARK_DRIVER_MEMORY", "PYSPARK_GATEWAY_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    return tmp_path


def test_a_local_master_gets_a_quarter_of_the_memory_within_1_to_8_gb(clean_env):
    import os

    got = local_driver_memory("local[2]")
    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    assert got == f"{max(1024, min(8192, total_mb // 4))}m"


def test_cluster_masters_and_spark_submit_keep_their_own(clean_env, monkeypatch):
    assert local_driver_memory("spark://127.0.0.1:7077") is None
    assert local_driver_memory("yarn") is None
    assert local_driver_memory(None) is None  # spark-defaults.conf names the master: Spark's own settings rule
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "4242")  # launched by spark-submit: the JVM already runs
    assert local_driver_memory("local[2]") is None


@pytest.mark.parametrize("how", ["submit_args", "submit_conf", "env", "defaults"])
def test_a_setting_of_the_users_wins(clean_env, monkeypatch, how):
    if how == "submit_args":
        monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-memory 3g pyspark-shell")
    elif how == "submit_conf":
        monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--conf spark.driver.memory=3g pyspark-shell")
    elif how == "env":
        monkeypatch.setenv("SPARK_DRIVER_MEMORY", "3g")
    else:
        (clean_env / "spark-defaults.conf").write_text("spark.driver.memory 3g\n")
    assert local_driver_memory("local[2]") is None
    monkeypatch.setenv("KAFKA_FORENSICS_DRIVER_MEMORY", "2g")  # ours, asked for explicitly
    assert local_driver_memory("local[2]") == "2g"
