"""``spark-submit`` of the CLI (how docs/audit.md runs the audit on YARN and Kubernetes): the master given to
spark-submit is the one the audit runs on. PySpark started by spark-submit connects to the JVM spark-submit
started (pyspark/java_gateway.py: launch_gateway reads PYSPARK_GATEWAY_PORT) and that JVM's conf holds
spark-submit's --master; a master set again by our session builder would silently replace it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from samplegen.corpus import AuditSpec, write_audit_tree

# spark-submit starts a JVM of its own (the rule it holds: tests/test_spark_master.py)
pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]


def test_spark_submit_master_is_the_audits(tmp_path):
    import pyspark

    write_audit_tree(AuditSpec(clusters=1, days=1, brokers=3, bytes_per_file=4000, seed=5, partitions=40,
                               incidents_per_day=2), tmp_path / "tree")
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_MASTER", "PYSPARK_GATEWAY_PORT")}
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join(x for x in (str(REPO), os.environ.get("PYTHONPATH")) if x))
    proc = subprocess.run([str(submit), "--master", "local[1]", str(REPO / "forensics" / "__main__.py"), "audit",
                           str(tmp_path / "tree"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = proc.stdout + proc.stderr  # spark-submit merges the Python driver's stderr into its stdout
    assert "on Spark local[1]" in said, [x for x in said.splitlines() if "on Spark" in x]
    assert (tmp_path / "out" / "audit_summary.json").exists()
