"""``audit`` on a real Spark standalone cluster (a master and a worker on 127.0.0.1, started from the
pyspark installation) gives the same tables, byte for byte, as the same audit on ``local[2]``."""
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from forensics.audit.run import AuditOptions, run_audit
from samplegen.corpus import AuditSpec, write_audit_tree

pytestmark = pytest.mark.spark

SPEC = AuditSpec(clusters=2, days=2, brokers=3, bytes_per_file=4000, seed=5, partitions=40, incidents_per_day=1.5)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_class() -> tuple[Path, Path]:
    import pyspark

    home = Path(pyspark.__file__).parent
    return home, home / "bin" / "spark-class"


def wait_for(log: Path, text: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{log.name}: exited {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.5)
    raise RuntimeError(f"{log.name}: no {text!r} within {timeout}s: {log.read_text(errors='replace')[-2000:]}")


def checkout_env() -> dict[str, str]:
    """The driver and the executors import the code under test (this checkout), not whatever an editable
    install points at."""
    repo = str(Path(__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(x for x in (repo, os.environ.get("PYTHONPATH")) if x)}


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    home, cls = spark_class()
    work = tmp_path_factory.mktemp("standalone")
    env = {**checkout_env(), "SPARK_HOME": str(home), "SPARK_LOG_DIR": str(work), "SPARK_WORKER_DIR": str(work / "w")}
    port = free_port()
    procs = []
    try:
        mlog = work / "master.log"
        master = subprocess.Popen([str(cls), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(port), "--webui-port", str(free_port())],
                                  stdout=mlog.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
        procs.append(master)
        wait_for(mlog, "I have been elected leader", master)
        url = f"spark://127.0.0.1:{port}"
        wlog = work / "worker.log"
        worker = subprocess.Popen([str(cls), "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                   "--cores", "2", "--memory", "2g", "--webui-port", str(free_port()),
                                   "--work-dir", str(work / "w")],
                                  stdout=wlog.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
        procs.append(worker)
        wait_for(wlog, "Successfully registered with master", worker)
        yield url, wlog
    finally:
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def tables(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / "tables").rglob("*.parquet"))}


def test_audit_on_a_standalone_cluster_equals_local(spark, standalone, tmp_path):
    url, worker_log = standalone
    root = tmp_path / "tree"
    write_audit_tree(SPEC, root)
    remote_out = tmp_path / "remote"
    exe = Path(sys.executable).with_name("kafka-forensics")
    proc = subprocess.run([str(exe), "audit", str(root), "--out", str(remote_out), "--master", url, "--shards", "2"],
                          capture_output=True, text=True, timeout=900, env=checkout_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "Asked to launch executor" in worker_log.read_text(errors="replace")  # the work ran on the worker
    local = run_audit(AuditOptions(str(root), tmp_path / "local", shards=2))
    remote_tables = tables(remote_out)
    assert remote_tables and remote_tables == tables(tmp_path / "local")
    import json

    remote = json.loads((remote_out / "audit_summary.json").read_text())
    assert remote["by_cluster"] == local["by_cluster"] and remote["incidents"] == local["incidents"] > 0
