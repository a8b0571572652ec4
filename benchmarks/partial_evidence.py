"""The replay on part of each cluster's evidence: does it ever contradict a record when files are missing?

Run from the repo root:

    .venv/bin/python benchmarks/partial_evidence.py [--cluster NAME] [--record]

Operators seldom hold every file of a cluster. For every cluster of ``../shared/real_logs`` and scenario of
``../shared/zk_real`` this builds the shapes of evidence they do hold, from the whole: one kind of file left out
(controller, state-change, server, other), or only one kind kept (where a cluster has three or more), the logs
starting at a quarter, half or three quarters of the cluster's time (older files rotated away) or ending there, the
middle fifth of the time lost (a hole), one directory left out; for ZooKeeper data, each txn log between the first
and the last lost, and each later txn log alone (no snapshot, no earlier log). Each is measured as
``benchmarks/agreement.py`` measures the whole (recorded decisions against the replay); with less evidence fewer
records can be judged, but a judged record must agree: ``diverged`` and ``outside`` (a logged leaderless moment
outside every leaderless interval) should be 0.

A time cut of ZooKeeper data (zk_real) drops transactions out of a stream whose zxids are consecutive, a shape
a real capture holds only when files are lost; those rows are listed apart.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import agreement as A  # noqa: E402

SECTION = "## partial evidence (the replay on part of each cluster's files)"
_KINDS = ("controller", "state-change", "server", "kafkaserver")


def file_kind(path: str) -> str:
    name = os.path.basename(path).lower()
    return next((k for k in _KINDS if k in name), "other")


def variants(events: list):
    """(label, events) for each shape of partial evidence built from the whole."""
    files = sorted({e.source_file for e in events})
    kinds = sorted({file_kind(f) for f in files})
    if len(kinds) > 1:
        for k in kinds:
            yield f"no {k} files", [e for e in events if file_kind(e.source_file) != k]
        for k in kinds:
            if len(kinds) > 2:
                yield f"only {k} files", [e for e in events if file_kind(e.source_file) == k]
    ts = sorted(e.ts for e in events if e.ts is not None)
    if ts:
        for q in (25, 50, 75):
            t = ts[q * (len(ts) - 1) // 100]
            yield f"from q{q}", [e for e in events if e.ts is None or e.ts >= t]
            yield f"until q{q}", [e for e in events if e.ts is None or e.ts <= t]
        a, b = ts[40 * (len(ts) - 1) // 100], ts[60 * (len(ts) - 1) // 100]
        yield "hole q40-q60", [e for e in events if e.ts is None or not a < e.ts < b]
    txn_logs = [f for f in files if os.path.basename(f).startswith("log.")]  # ZooKeeper names its txn logs so
    for f in txn_logs[1:-1]:
        yield f"txn log {os.path.basename(f)} lost", [e for e in events if e.source_file != f]
    for f in txn_logs[1:]:
        yield f"txn log {os.path.basename(f)} alone", [e for e in events if e.source_file == f]
    dirs = sorted({os.path.dirname(f) for f in files})
    if len(dirs) > 1:
        for d in dirs:
            yield f"without {d}", [e for e in events if os.path.dirname(e.source_file) != d]


def run(names: list[tuple[str, str]]) -> list[str]:
    lines = ["| cluster | evidence | recorded | compared | agreed | diverged | outside |", "|---|---|---|---|---|---|---|"]
    bad: list[str] = []
    total = [0, 0, 0, 0, 0]
    for name, kind in names:
        events = A.load_real(name) if kind == "real" else A.load_zk_real(name)
        for label, sub in variants(events):
            row = A.measure(name, kind, sub)
            vals = [row.recorded, row.compared, row.agreed, row.diverged, row.outside]
            total = [x + y for x, y in zip(total, vals)]
            line = f"| {name}{' (zk_real)' if kind != 'real' else ''} | {label} | " + " | ".join(map(str, vals)) + " |"
            print(line, flush=True)
            if row.diverged or row.outside:
                lines.append(line)
                bad.append(name)
    lines.append("| **all variants** | | " + " | ".join(map(str, total)) + " |")
    lines.append("")
    lines.append("(rows listed: only those with a divergence or a leaderless moment outside the replay's intervals)")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cluster", action="append", help="only this cluster or zk_real scenario (repeatable)")
    ap.add_argument("--record", action="store_true", help="append the table to its section of benchmarks/journal/")
    args = ap.parse_args(argv)
    want = set(args.cluster or [])
    names = [(n, "real") for n in A.real_log_clusters()] + [(n, "zk_real") for n in A.zk_real_scenarios()]
    out = "\n".join(run([(n, k) for n, k in names if not want or n in want]))
    print()
    print(out)
    if args.record:
        from _common import now_utc, record

        record(SECTION, f"{now_utc()}, `python benchmarks/partial_evidence.py`:\n\n{out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
