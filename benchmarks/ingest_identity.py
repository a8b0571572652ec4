"""Does `kafka-forensics ingest` still write the same outputs? This checkout against a reference checkout.

    python benchmarks/ingest_identity.py --reference REPO [--work DIR] CORPUS [CORPUS...]

Each CORPUS (a folder: ../shared/real_logs, ../shared/real_logs2, a benchmark corpus of
``real_corpus.py``) is ingested by the command itself, in a fresh process, twice: with the code of the
reference checkout REPO (``git worktree add DIR <commit>``, its ``_routine`` built in place by
``python setup.py build_ext --inplace``; it runs with this venv, REPO first on the path) and with this
checkout's. Compared: ``ingest_summary.json`` byte for byte; the events and the quarantine as read back
from their Parquet folders, row by row in the order written (files in name order), every column's values,
and their Arrow schemas. A digest of each is printed, and kept under DIR so a reference output is computed
once (``--again`` recomputes it). Exit 1 when anything differs.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def parquet_digest(folder: Path) -> dict:
    """Rows in the order written (part files in name order), hashed as canonical JSON lines, and the schema."""
    import pyarrow.parquet as pq

    files = sorted(p for p in folder.glob("*.parquet"))
    h = hashlib.sha256()
    rows = 0
    schema = None
    for f in files:
        pf = pq.ParquetFile(f)
        if schema is None:
            schema = pf.schema_arrow
        for batch in pf.iter_batches(batch_size=20_000):
            for row in batch.to_pylist():
                h.update(json.dumps(row, sort_keys=True, default=str).encode())
                h.update(b"\n")
            rows += batch.num_rows
    return {"rows": rows, "sha256": h.hexdigest(),
            "schema": [f"{f.name}: {f.type} (nullable {f.nullable})" for f in schema] if schema is not None else None}


def run_ingest(corpus: Path, out: Path, repo: Path | None) -> dict:
    env = dict(os.environ)
    if repo is not None:
        env["PYTHONPATH"] = str(repo) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if out.exists():
        shutil.rmtree(out)
    cmd = [sys.executable, "-m", "forensics", "ingest", str(corpus), "--out", str(out), "-q"]
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd="/" if repo is not None else REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"ingest failed ({repo or 'this checkout'}): {proc.stderr[-3000:]}")
    summary = (out / "ingest_summary.json").read_bytes()
    return {"wall_s": round(wall, 1), "summary_sha256": hashlib.sha256(summary).hexdigest(),
            "events": parquet_digest(out / "events"), "quarantine": parquet_digest(out / "quarantine")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="+")
    ap.add_argument("--reference", required=True, help="a checkout of the reference commit")
    ap.add_argument("--work", default="/tmp/kf-ingest-identity")
    ap.add_argument("--again", action="store_true", help="recompute the reference outputs")
    ap.add_argument("--keep", action="store_true", help="keep this checkout's outputs (under --work)")
    args = ap.parse_args()
    ref = Path(args.reference).resolve()
    commit = subprocess.run(["git", "-C", str(ref), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    mine = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    bad = 0
    for c in args.corpora:
        corpus = Path(c).resolve()
        key = hashlib.sha256(str(corpus).encode()).hexdigest()[:12]
        cache = work / f"reference-{commit}-{key}.json"
        if cache.exists() and not args.again:
            want = json.loads(cache.read_text())
        else:
            want = run_ingest(corpus, work / f"ref-out-{key}", ref)
            shutil.rmtree(work / f"ref-out-{key}", ignore_errors=True)
            cache.write_text(json.dumps(want, indent=1))
        got = run_ingest(corpus, work / f"out-{key}", None)
        if not args.keep:
            shutil.rmtree(work / f"out-{key}", ignore_errors=True)
        same = {k: want[k] == got[k] for k in ("summary_sha256", "events", "quarantine")}
        ok = all(same.values())
        bad += not ok
        print(f"{corpus}: reference {commit} ({want['wall_s']} s) vs this checkout {mine} ({got['wall_s']} s): "
              + ("identical" if ok else "DIFFERENT: " + ", ".join(k for k, v in same.items() if not v))
              + f"; summary {got['summary_sha256'][:16]}, events {got['events']['rows']:,} rows "
                f"{got['events']['sha256'][:16]}, quarantine {got['quarantine']['rows']:,} rows "
                f"{got['quarantine']['sha256'][:16]}", flush=True)
        if not ok:
            for k, v in same.items():
                if not v:
                    print(f"  {k}: reference {json.dumps(want[k])[:600]}\n  {'':{len(k)}}  this      "
                          f"{json.dumps(got[k])[:600]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
