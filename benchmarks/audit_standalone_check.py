"""The same audit on ``local[2]`` and on a Spark standalone cluster (a master and 2 one-core workers on
127.0.0.1, started from the pyspark installation as tests/test_audit_standalone.py does): wall time of
each, and whether every Parquet file of ``tables/`` and the summary's per-cluster figures are equal.

    .venv/bin/python benchmarks/audit_standalone_check.py TREE [--until YYYY-MM-DD] [--work DIR]

Both runs are fresh processes (``python -m forensics audit``) on the same files, with ``--shards 2``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, Standalone, load_avg, now_utc  # noqa: E402


def tables(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / "tables").rglob("*.parquet"))}


def audit(tree: str, out: Path, master: str, until: str | None) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(x for x in (str(REPO), os.environ.get("PYTHONPATH")) if x)}
    cmd = [sys.executable, "-m", "forensics", "audit", tree, "--out", str(out), "--master", master, "--shards", "2", "-q"]
    if until:
        cmd += ["--until", until]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=REPO, env=env)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree")
    ap.add_argument("--until")
    ap.add_argument("--work", help="where the two outputs go (default: a temporary folder, removed)")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="kf-sa-check-"))
    print(f"{now_utc()}, load average {load_avg():.1f}", flush=True)
    local_s = audit(args.tree, work / "local", "local[2]", args.until)
    print(f"local[2]: {local_s:.1f} s, load average {load_avg():.1f}", flush=True)
    with Standalone(workers=2, cores=1, memory="3g") as sa:
        remote_s = audit(args.tree, work / "standalone", sa.url, args.until)
        launched = sum("Asked to launch executor" in p.read_text(errors="replace") for p in sa.work.glob("worker*.log"))
    print(f"standalone (2 workers x 1 core): {remote_s:.1f} s, load average {load_avg():.1f}; "
          f"workers that launched an executor: {launched}", flush=True)
    a, b = tables(work / "local"), tables(work / "standalone")
    sa_sum = json.loads((work / "standalone" / "audit_summary.json").read_text())
    lo_sum = json.loads((work / "local" / "audit_summary.json").read_text())
    same = bool(a) and a == b
    print(f"tables: {len(a)} Parquet files, {sum(map(len, a.values())):,} bytes; identical: {same}; "
          f"summary by_cluster identical: {sa_sum['by_cluster'] == lo_sum['by_cluster']}", flush=True)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if same and sa_sum["by_cluster"] == lo_sum["by_cluster"] else 1


if __name__ == "__main__":
    sys.exit(main())
