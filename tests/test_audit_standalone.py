"""``audit`` on a real Spark standalone cluster (a master and a worker on 127.0.0.1, started from the
pyspark installation) gives the same tables, byte for byte, as the same audit on ``local[2]``."""
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.audit.local_cluster import Standalone, code_env
from forensics.audit.run import AuditOptions, run_audit
from samplegen.corpus import AuditSpec, write_audit_tree

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # a master, a worker and a driver JVM of their own

SPEC = AuditSpec(clusters=2, days=2, brokers=3, bytes_per_file=4000, seed=5, partitions=40, incidents_per_day=1.5)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    with Standalone(workers=1, cores=2, work=tmp_path_factory.mktemp("standalone")) as cluster:
        yield cluster.url, cluster.worker_logs[0]


def tables(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / "tables").rglob("*.parquet"))}


def test_audit_on_a_standalone_cluster_equals_local(spark, standalone, tmp_path):
    url, worker_log = standalone
    root = tmp_path / "tree"
    write_audit_tree(SPEC, root)
    remote_out = tmp_path / "remote"
    exe = Path(sys.executable).with_name("kafka-forensics")
    proc = subprocess.run([str(exe), "audit", str(root), "--out", str(remote_out), "--master", url, "--shards", "2"],
                          capture_output=True, text=True, timeout=900, env=code_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "Asked to launch executor" in worker_log.read_text(errors="replace")  # the work ran on the worker
    local = run_audit(AuditOptions(str(root), tmp_path / "local", shards=2))
    remote_tables = tables(remote_out)
    assert remote_tables and remote_tables == tables(tmp_path / "local")
    import json

    remote = json.loads((remote_out / "audit_summary.json").read_text())
    assert remote["by_cluster"] == local["by_cluster"] and remote["incidents"] == local["incidents"] > 0
