"""Replay speed of two checkouts on real-format clusters, in the same run on the same host: a refactor's "no
slower" measured where it counts, on the shared evidence (not only on samplegen's corpus, benchmarks/replay_bench.py).

Run from the repo root (OTHER is another checkout of this repository, e.g. ``git worktree add /tmp/base REV``):

    .venv/bin/python benchmarks/replay_checkouts.py OTHER [--cluster FOLDER/NAME ...] [--rounds 2] [--record]

Each round runs, for this checkout and then OTHER, a fresh Python process that parses each cluster with that
checkout's own parsers (``forensics.sources.parse_folder_in_process``), orders its events as the replay does and
times ``replay_engine.api.replay_cluster`` alone by the process's CPU time (best of 3, the collector held off as
every caller holds it): events/s whatever else runs on the machine. Each checkout parses with its own rules, so the
event counts can differ: compare events/s, and the seconds where the counts agree. With ``--record`` the table is
appended to its section of benchmarks/journal/replay.md.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_avg, now_utc, record  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SECTION = "## replay of two checkouts on real clusters (issue 45: no slower)"
CLUSTERS = ("real_logs2/pmitra43__kafka_load_generator", "real_logs2/plehmann93__bdapro_winagg",
            "real_logs2/BMTushyath__RFIDSAS", "real_logs/AndreasTraut__kafka_2.13-2.8.0")

# run in the child, with the checkout first on sys.path
CHILD = r"""
import gc, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from forensics.sources import parse_folder_in_process
from replay_engine.api import replay_cluster
for spec in sys.argv[3:]:
    folder, name = spec.split("/", 1)
    events = parse_folder_in_process(Path(sys.argv[2]) / folder, name)
    events.sort(key=lambda e: (e.cluster or "", e.ts or 0, e.source_file or "", e.source_pos or 0, e.source_sub))
    best = None
    for _ in range(3):
        gc.collect()
        gc.disable()
        t = time.process_time()
        replay_cluster(events, name)
        t = time.process_time() - t
        gc.enable()
        best = t if best is None else min(best, t)
    print(f"{spec}\t{len(events)}\t{best:.3f}", flush=True)
"""


def run(checkout: Path, shared: Path, clusters: list[str]) -> dict[str, tuple[int, float]]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(checkout), str(shared), *clusters],
                         capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        spec, n, s = line.split("\t")
        rows[spec] = (int(n), float(s))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("other", type=Path, help="the other checkout (the baseline)")
    ap.add_argument("--cluster", action="append", help="FOLDER/NAME under ../shared (repeatable)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--shared", type=Path, default=SHARED)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    clusters = args.cluster or list(CLUSTERS)
    best: dict[tuple[str, str], tuple[int, float]] = {}
    loads = [load_avg()]
    for _ in range(args.rounds):
        for label, checkout in (("this", REPO), ("other", args.other.resolve())):
            for spec, (n, s) in run(checkout, args.shared, clusters).items():
                if (label, spec) not in best or s < best[(label, spec)][1]:
                    best[(label, spec)] = (n, s)
        loads.append(load_avg())
    rows = ["| cluster | other: events, CPU s, events/s | this: events, CPU s, events/s | events/s this / other |",
            "|---|---|---|---|"]
    for spec in clusters:
        (n0, s0), (n1, s1) = best[("other", spec)], best[("this", spec)]
        rows.append(f"| {spec} | {n0:,}, {s0:.2f}, {n0 / s0:,.0f} | {n1:,}, {s1:.2f}, {n1 / s1:,.0f} | "
                    f"{(n1 / s1) / (n0 / s0):.2f}x |")
    print("\n".join(rows))
    if args.record:
        rev = [subprocess.run(["git", "-C", str(c), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "?" for c in (REPO, args.other.resolve())]
        table = "".join(f"  {r}\n" for r in rows)
        cmd = " ".join(f"--cluster {c}" for c in args.cluster or ())
        record(SECTION, f"- {now_utc()}, {os.cpu_count()} cores, load average "
                        f"{', '.join(f'{x:.1f}' for x in loads)} (start, after each round). This checkout: {rev[0]}; "
                        f"other: {rev[1]}. Best of {args.rounds} rounds of 3 runs each, CPU s.\n\n{table}\n"
                        f"  Command: `.venv/bin/python benchmarks/replay_checkouts.py OTHER {cmd} "
                        f"--rounds {args.rounds} --record`\n")


if __name__ == "__main__":
    main()
