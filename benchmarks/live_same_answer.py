"""watch ends with postmortem's answer (issue 46): each bundled sample and clusters of ../shared played back
(``playback``) while ``kafka-forensics watch`` follows them in its own process; what it ends with (its
``report.json``) is compared with the postmortem of the same files once written (``forensics.live.compare``):
the incidents with the lines that prove them, the brief failovers, every leaderless interval and its cause.

  nice -n 10 .venv/bin/python benchmarks/live_same_answer.py [--record]
  nice -n 10 .venv/bin/python benchmarks/live_same_answer.py --only zk_real/s3_unclean_election
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, machine, now_utc, record  # noqa: E402

SHARED = REPO.parent / "shared"
# (source folder, speed, longest quiet stretch kept (s; watch waits for 20 s more of quiet to end), hours watch
# keeps): ZooKeeper mode with ZooKeeper's data,
# logs only, KRaft from logs, KRaft with its metadata log. Clusters whose files can be written again in the order
# they were (Saurabh7064's shared logs folder holds brokers writing with clocks hours apart: its lines cannot be
# put back in one time order, and watch says so) and whose evidence --keep covers.
CASES = [(f"sample_logs/{s}", 200, 20, 6) for s in ("rf1_broker_kill", "controller_failover", "unclean_election",
                                                     "under_min_isr", "restart_refused", "kraft_broker_fenced")] + [
    ("../shared/zk_real/s3_unclean_election", 50, 20, 6),
    ("../shared/zk_real/s5_churn", 50, 20, 6),
    ("../shared/real_logs/gaparedes__kafka-demo", 2000, 60, 1000),
    ("../shared/real_logs/Aminoid__basic-sentiment-analysis", 500, 60, 1000),
    ("../shared/real_logs/GraphLogistics__kafka", 200, 60, 1000),
    ("../shared/real_logs/Ammar777782439__kafka_2.13-4.0.0", 2000, 60, 1000),
]


def one(src: Path, speed: float, gap: float, keep: float, work: Path) -> dict:
    from forensics.live.compare import answer, postmortem_report

    name = src.name
    dest, out = work / name, work / f"{name}.out"
    dest.mkdir()
    err = open(work / f"{name}.err", "w")
    watch = subprocess.Popen([sys.executable, "-m", "forensics", "watch", str(dest), "--out", str(out), "--json",
                              "--until-idle", f"{gap + 20:g}", "--keep", f"{keep:g}", "--cluster", name],
                             cwd=REPO, stdout=subprocess.DEVNULL, stderr=err)
    while not (out / "live" / "batches.jsonl").exists():
        if watch.poll() is not None:
            return {"case": name, "error": (work / f"{name}.err").read_text()[-500:]}
        time.sleep(0.5)
    t0 = time.time()
    subprocess.run([sys.executable, "-m", "forensics", "playback", str(src), str(dest), "--speed", str(speed),
                    "--max-gap", str(gap), "-q"], cwd=REPO, check=True)
    played = time.time() - t0
    watch.wait()
    if not (out / "report.json").exists():
        return {"case": name, "error": (work / f"{name}.err").read_text()[-500:]}
    live = json.loads((out / "report.json").read_text())
    pm = postmortem_report(dest, name)
    a, b = answer(live), answer(pm)
    diffs = [k for k in a if a[k] != b[k]]
    return {"case": name, "played_s": round(played), "incidents": len(b["incidents"]),
            "leaderless": len(b["leaderless"]), "same": not diffs, "differ": diffs,
            "warnings": len(live.get("live", {}).get("warnings", []))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="some cases (parts of paths of CASES, or folder names, comma-separated)")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="live-same-"))
    rows = []
    for path, speed, gap, keep in CASES:
        if args.only and not any(o in path for o in args.only.split(",")):
            continue
        src = (REPO / path).resolve()
        row = one(src, speed, gap, keep, work)
        print(json.dumps(row), flush=True)
        rows.append(row)
    same = sum(1 for r in rows if r.get("same"))
    line = (f"- {now_utc()}, {machine()}, `nice -n 10`, shared host: **{same} of {len(rows)}** played back while "
            "`watch` followed them end with postmortem's incidents (with their evidence), failovers and leaderless "
            "intervals with causes: " + "; ".join(
                f"{r['case']} {'same' if r.get('same') else 'differs in ' + ', '.join(r.get('differ') or ['error'])}"
                f" ({r.get('incidents', '?')} incidents, {r.get('leaderless', '?')} intervals, played in "
                f"{r.get('played_s', '?')} s)" for r in rows))
    print(line)
    if args.record:
        record("## watch: the same answer as postmortem (issue 46)", line)


if __name__ == "__main__":
    main()
