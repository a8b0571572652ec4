"""watch: the latency from writing the line that proves an incident to the incident being told, the CPU taken
while following ~1,000 lines a second, and memory over a 24-hour playback (issue 46).

A 24-hour cluster in Kafka 2.8's line formats (``samplegen corpus``: 3 brokers, ZooKeeper mode from the logs,
hourly rotation, half the parts gzipped, an incident an hour or so) is played back (``playback``) at the speed
that writes ``--lines-per-s`` while ``kafka-forensics watch --json`` follows it in its own process. Per incident,
the latency is the time ``watch`` told it opened (its notification's ``at``) minus the time ``playback`` wrote
the line the incident starts with (the first of the lines that prove it, by file and line: ``playback --log``).
CPU is the whole ``watch`` process tree's (driver, JVM, Python workers) from /proc, over the playback; memory is
the tree's resident set, sampled every few seconds. At the end, what ``watch`` told is compared with the
postmortem of the same files (parsed and replayed whole in process).

Run from the repository's root (the host is shared: the figures say its load):
  nice -n 10 .venv/bin/python benchmarks/live_bench.py --lines-per-s 1000 [--record]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, become_subreaper, load_avg, machine, now_utc, reap, record, rss_mb, text_bytes_and_lines, tree_cpu, _children  # noqa: E402,E501


def tree_rss(root: int) -> float:
    kids, total, todo = _children(), 0.0, [root]
    while todo:
        pid = todo.pop()
        total += rss_mb(pid)
        todo.extend(kids.get(pid, ()))
    return total


def corpus(work: Path, days: float, incidents: int) -> Path:
    out = work / "corpus"
    if not (out / ".done").exists():
        subprocess.run([sys.executable, "-m", "samplegen", "corpus", "--out", str(out), "--brokers", "3",
                        "--partitions", "300", "--days", f"{days:g}", "--size-gb", f"{0.03 * days:g}",
                        "--incidents-per-day", str(incidents), "--seed", "1"], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
        (out / ".done").write_text("")
    return out


def latencies(out: Path, dest: Path, play_log: Path) -> list[dict]:
    """Per incident opened: when it was told, and when the first line proving it was written. A line is known by
    its file (the name ``playback`` wrote it under: a rotated part's lines were written to ``server.log``), its
    line (or byte) and its time."""
    written: dict[tuple[str, int, int], float] = {}
    for line in play_log.read_text().splitlines():
        w = json.loads(line)
        if w["line"] is not None:
            written.setdefault((os.path.relpath(w["file"], dest), w["line"], w["ts"]), w["wall"])
    first_name = {}  # where a logical file is now -> the name it was written under
    for f in json.loads((out / "live" / "files.json").read_text())["files"].values():
        first_name[f["path"]] = os.path.relpath(f["display"].split("#", 1)[0], str(dest))
    rows = []
    for n in (json.loads(x) for x in (out / "incidents.jsonl").read_text().splitlines()):
        if n["event"] != "incident_opened":
            continue
        proofs = []
        for e in n["evidence"]:
            if not e.get("ts") or e["ts"] < n["start"]:
                continue
            name = first_name.get(e["source_file"], os.path.relpath(e["source_file"], dest))
            key = (name, e["source_pos"], _us(e["ts"]))
            if key in written:
                proofs.append(written[key])
        if proofs:
            told = _epoch(n["at"])
            rows.append({"id": n["id"], "told": told, "written": min(proofs), "latency_s": told - min(proofs)})
    return rows


def _us(iso: str) -> int:
    return int(round(_epoch(iso) * 1e6))


def _epoch(iso: str) -> float:
    import datetime as dt

    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines-per-s", type=float, default=1000.0)
    ap.add_argument("--days", type=float, default=1.0)
    ap.add_argument("--incidents-per-day", type=int, default=24)
    ap.add_argument("--keep", type=float, default=2.0, help="watch --keep (hours)")
    ap.add_argument("--work", help="folder for the corpus (kept, reused)")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    import tempfile

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="live-bench-"))
    src = corpus(work, args.days, args.incidents_per_day)
    _, lines = text_bytes_and_lines(src)
    speed = args.lines_per_s / (lines / (args.days * 86400))
    run = Path(tempfile.mkdtemp(prefix="run-", dir=work))
    dest, out = run / "cluster", run / "out"
    dest.mkdir()
    become_subreaper()
    load0 = load_avg()
    watch = subprocess.Popen([sys.executable, "-m", "forensics", "watch", str(dest), "--out", str(out), "--json",
                              "--keep", f"{args.keep:g}", "--until-idle", "30", "--cluster", "bench"],
                             cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    t0 = time.time()
    while not (out / "live" / "batches.jsonl").exists():
        if watch.poll() is not None:
            sys.exit(watch.stderr.read().decode()[-3000:])
        time.sleep(0.5)
    started = time.time() - t0
    samples = []
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            samples.append((time.time(), tree_cpu(watch.pid), tree_rss(watch.pid)))
            stop.wait(5.0)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    play_log = run / "play.jsonl"
    t_play = time.time()
    subprocess.run([sys.executable, "-m", "forensics", "playback", str(src), str(dest), "--speed", f"{speed:.3f}",
                    "--log", str(play_log), "-q"], cwd=REPO, check=True)
    t_end = time.time()
    cpu_play = [s for s in samples if t_play <= s[0] <= t_end]
    try:
        watch.wait(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(watch.pid, signal.SIGTERM)
        watch.wait()
    stop.set()
    sampler.join()
    reap()
    lat = latencies(out, dest, play_log)
    vals = sorted(r["latency_s"] for r in lat)
    p95 = vals[min(len(vals) - 1, int(round(0.95 * (len(vals) - 1))))] if vals else float("nan")
    cores = (cpu_play[-1][1] - cpu_play[0][1]) / (cpu_play[-1][0] - cpu_play[0][0]) if len(cpu_play) > 1 else 0.0
    rss = [s[2] for s in cpu_play]
    quarters = [round(rss[int(k * (len(rss) - 1) / 4)]) for k in range(5)] if rss else []
    # the postmortem of the same files (parsed and replayed whole, in process)
    from forensics.live.compare import answer, postmortem_report

    same = answer(json.loads((out / "report.json").read_text())) == answer(postmortem_report(dest, "bench"))
    batches = [json.loads(x) for x in (out / "live" / "batches.jsonl").read_text().splitlines()]
    pictures = [b["picture_s"] for b in batches if b["picture_s"] is not None]
    state = [b["state_bytes"] for b in batches if b.get("state_bytes")]
    state_q = [round(state[int(k * (len(state) - 1) / 4)] / 1e6, 2) for k in range(5)] if state else []
    line = (f"- {now_utc()}, {machine()} at the start {load0:.1f}, `nice -n 10`, shared host: 24 h corpus "
            f"({lines:,} lines, 3 brokers, 300 partitions, samplegen corpus --days {args.days:g} --incidents-per-day "
            f"{args.incidents_per_day}) played at {speed:.0f}x = {args.lines_per_s:,.0f} lines/s for "
            f"{t_end - t_play:.0f} s while `watch --keep {args.keep:g}` followed it (Spark start {started:.0f} s). "
            f"Latency of {len(vals)} incidents: median {statistics.median(vals) if vals else float('nan'):.1f} s, "
            f"**p95 {p95:.1f} s**, max {max(vals) if vals else float('nan'):.1f} s; CPU while following "
            f"**{cores:.2f} cores** (the watch process tree); resident memory of the tree at each quarter of the "
            f"playback {quarters} MB, the settled replay's state {state_q} MB; pictures median {statistics.median(pictures) if pictures else 0:.2f} s over "
            f"{len(batches)} batches; answer {'**the same as postmortem**' if same else '**differs from postmortem**'}")
    print(line)
    print(json.dumps({"latencies": lat, "samples": samples[-5:]}, indent=1)[:2000])
    if args.record:
        record("## watch: latency, CPU, memory (issue 46)", line)


if __name__ == "__main__":
    main()
