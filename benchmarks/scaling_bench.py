"""Scaling: ingest + distributed replay time and peak driver memory at 0.5, 1, 2 and 4 GB of logs.

Run from the repo root (one command; each corpus is generated under a temporary folder and removed
after its run):

    .venv/bin/python benchmarks/scaling_bench.py [--sizes 0.5,1,2,4] [--gb-per-day 0.667] [--runs 1] [--record]

The corpora keep one mix: the same cluster (30 brokers, 100,000 partitions), the same bytes per day
and incidents per day, so a bigger corpus is more days of the same logs (2 GB = 3 days). Each size runs
in a fresh process on ``local[2]`` (the audit path: ``run_ingest``, then ``replay_on_executors`` with 2
shards, the timeline counted and the shards' outputs merged on the driver; the driver never holds the
events). Measured: ingest and replay wall times, their sum per GB against the smallest size (the
baseline: linear growth keeps the ratio at 1), the driver Python process's peak RSS (VmHWM) and the
peak used heap of the JVM (sampled every 0.5 s; in local mode that JVM also runs the executors, so its
heap holds Spark's cached blocks).
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
from _common import (REPO, JvmHeapPeak, load_avg, make_corpus, med, now_utc, record, runs_text,  # noqa: E402
                     text_bytes_and_lines, tree_cpu, vm_hwm_mb)

SECTION = "## scaling (ingest + replay at 0.5 to 4 GB)"


def one(corpus: str, master: str, shards: int) -> dict:
    from forensics.audit.distributed import replay_on_executors
    from forensics.ingest import release, run_ingest
    from forensics.sources import collect_inputs
    from forensics.spark import get_spark

    before_spark = vm_hwm_mb()
    t = time.perf_counter()
    spark = get_spark(master)
    start_s = time.perf_counter() - t
    tmp = Path(tempfile.mkdtemp(prefix="kf-scaling-"))
    try:
        with JvmHeapPeak(spark) as heap:
            c0, t0 = tree_cpu(), time.perf_counter()
            res = run_ingest(spark, collect_inputs([corpus], tmp), cluster="bench")
            t1 = time.perf_counter()
            counted: list[int] = []  # the timeline's consumer: its action runs the shards (one cluster)
            dist = replay_on_executors(spark, res.events, shards,
                                       sink=lambda timeline, clusters: counted.append(timeline.count()))
            intervals = counted[-1]
            t2 = time.perf_counter()
            cpu = tree_cpu() - c0
            m = dist.merged["bench"]
            out = {"ingest_s": t1 - t0, "replay_s": t2 - t1, "cpu_s": cpu, "spark_start_s": start_s,
                   "events": res.summary_json["totals"]["events"], "lines": res.summary_json["totals"]["lines"],
                   "files": res.summary_json["totals"]["files"], "intervals": intervals,
                   "leaderless": len(m.leaderless), "replayed_whole": dist.replayed_whole}
            dist.release()
            release(res)
        out.update({"driver_hwm_mb": vm_hwm_mb(), "driver_hwm_before_spark_mb": before_spark,
                    "jvm_heap_peak_mb": heap.peak_mb, "jvm_heap_max_mb": heap.max_mb})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        spark.stop()
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_one":
        print(json.dumps(one(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0.5,1,2,4", help="GB of log text, comma-separated (the first is the baseline)")
    ap.add_argument("--gb-per-day", type=float, default=2 / 3)
    ap.add_argument("--runs", type=int, default=1, help="runs per size (median)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--work", help="folder for the corpora (kept)")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    sizes = [float(x) for x in args.sizes.split(",")]

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="kf-bench-"))
    rows = []
    loads = [load_avg()]
    try:
        for gb in sizes:
            days = round(gb / args.gb_per_day, 3)
            corpus = work / f"corpus-{gb:g}gb-{days:g}d"
            info = make_corpus(corpus, gb, days)
            text, _ = text_bytes_and_lines(corpus)
            results = []
            for _ in range(args.runs):
                res = subprocess.run([sys.executable, __file__, "_one", str(corpus), args.master, str(args.shards)],
                                     capture_output=True, text=True, cwd=REPO)
                if res.returncode != 0:
                    raise SystemExit(f"{gb} GB failed:\n{res.stderr[-3000:]}")
                results.append(json.loads(res.stdout.strip().splitlines()[-1]))
                loads.append(load_avg())
            r = {"gb": gb, "days": days, "text_mb": text / 1e6, "disk_mb": info["disk_bytes"] / 1e6,
                 "files": info["files"], "runs": results}
            for k in ("ingest_s", "replay_s", "cpu_s", "driver_hwm_mb", "jvm_heap_peak_mb", "spark_start_s"):
                r[k] = med([x[k] for x in results])
            r["total_s"] = med([x["ingest_s"] + x["replay_s"] for x in results])
            r["events"] = results[0]["events"]
            r["jvm_heap_max_mb"] = results[0]["jvm_heap_max_mb"]
            rows.append(r)
            print(f"{gb:g} GB ({days:g} days, {info['files']} files, {text / 1e6:,.0f} MB text, {r['events']:,} events): "
                  f"ingest {r['ingest_s']:.1f}s + replay {r['replay_s']:.1f}s = {r['total_s']:.1f}s "
                  f"({runs_text([x['ingest_s'] + x['replay_s'] for x in results])}); {r['cpu_s']:.0f} CPU s; "
                  f"driver peak RSS {r['driver_hwm_mb']:.0f} MB; JVM heap peak {r['jvm_heap_peak_mb']:.0f} MB "
                  f"of {r['jvm_heap_max_mb']:.0f}; load {loads[-1]:.1f}", flush=True)
            if not args.work:
                shutil.rmtree(corpus, ignore_errors=True)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)

    base = rows[0]
    table = ["| GB of text (days) | events | ingest s | replay s | total s | s per GB (x baseline) | CPU s | "
             "driver peak RSS MB (x baseline) | JVM heap peak MB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        per_gb, base_per_gb = r["total_s"] / (r["text_mb"] / 1e3), base["total_s"] / (base["text_mb"] / 1e3)
        table.append(f"| {r['text_mb'] / 1e3:.2f} ({r['days']:g}) | {r['events']:,} | {r['ingest_s']:.1f} | "
                     f"{r['replay_s']:.1f} | {r['total_s']:.1f} | {per_gb:.1f} ({per_gb / base_per_gb:.2f}x) | "
                     f"{r['cpu_s']:.0f} | {r['driver_hwm_mb']:.0f} ({r['driver_hwm_mb'] / base['driver_hwm_mb']:.2f}x) | "
                     f"{r['jvm_heap_peak_mb']:.0f} of {r['jvm_heap_max_mb']:.0f} |")
    print("\n".join(table))
    print(f"load average: {runs_text(loads)}")
    if args.record:
        cmd = (f"`.venv/bin/python benchmarks/scaling_bench.py --sizes {args.sizes} --gb-per-day {args.gb_per_day:g} "
               f"--runs {args.runs} --record`")
        record(SECTION, f"- {now_utc()}, {os.cpu_count()} cores, {args.master}, {args.shards} shards, load average "
                        f"{runs_text(loads)} (start, after each run). Median of {args.runs} run(s) per size.\n\n"
                        + "\n".join(table) + f"\n\n  Command: {cmd}\n")


if __name__ == "__main__":
    main()
