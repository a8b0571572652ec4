"""Replay speed: events/s of the engine on one core, and the speed-up of partition shards on 2 executors.

Run from the repo root (one command; corpus and events under a temporary folder, removed at the end):

    .venv/bin/python benchmarks/replay_bench.py [--size-gb 2] [--days 3] [--runs 3] [--record]

1. A corpus (30 brokers, 100,000 partitions) is generated and ingested once with Spark; its events
   (all but raw ZooKeeper txns, as ``postmortem`` collects them) are written to Parquet.
2. One core: a fresh Python process reads them, orders them as ``forensics.pipeline.collect_events``
   does, and times ``replay_engine.api.replay_cluster`` alone (``--runs`` times): events/s by CPU time
   (the engine's speed on one core, whatever else runs on the machine) and by wall time. Goal: 300,000/s.
3. Distributed: ``forensics.audit.distributed.replay_on_executors`` over the Parquet events, in a fresh
   Spark per configuration: ``local[1]`` with 1 shard (the baseline: one core through Spark) and
   ``local[2]`` with 2 shards (partitions split over 2 executor cores). Speed-up = baseline / 2 executors.
With ``--record`` the result is appended to its section of benchmarks/RESULTS.md.
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
from _common import (REPO, load_avg, make_corpus, med, now_utc, record, runs_text,  # noqa: E402
                     tree_cpu, vm_hwm_mb)

SECTION = "## replay (engine events/s on one core; partition shards on 2 executors)"


def events_parquet(corpus: Path, out: Path, master: str) -> dict:
    """Ingest once; the replay's input events as Parquet (reused when present)."""
    stamp = out / "_bench.json"
    if stamp.exists():
        return json.loads(stamp.read_text())
    from pyspark.sql import functions as F

    from forensics.ingest import release, run_ingest
    from forensics.sources import collect_inputs
    from forensics.spark import get_spark

    spark = get_spark(master)
    tmp = Path(tempfile.mkdtemp(prefix="kf-replay-bench-"))
    try:
        t = time.perf_counter()
        res = run_ingest(spark, collect_inputs([str(corpus)], tmp), cluster="bench")
        res.events.where(F.col("event_type") != "zk_txn").write.mode("overwrite").parquet(str(out / "events"))
        info = {"events": spark.read.parquet(str(out / "events")).count(), "ingest_s": time.perf_counter() - t}
        release(res)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        spark.stop()
    stamp.write_text(json.dumps(info))
    return info


def one_core(parquet: str, runs: int) -> dict:
    """In this (fresh) process: the events as the driver holds them, then replay_cluster, timed."""
    import pyarrow.parquet as pq

    from forensics.pipeline import drop_log_copies
    from parsers.schema import event_from_row
    from replay_engine.api import replay_cluster

    t = time.perf_counter()
    table = pq.read_table(parquet)
    table = table.set_column(table.schema.get_field_index("ts"), "ts", table.column("ts").cast("int64"))
    events = [event_from_row(r) for r in table.to_pylist()]
    del table
    events.sort(key=lambda e: (e.cluster or "", e.ts or 0, e.source_file or "", e.source_pos or 0, e.source_sub))
    events, _ = drop_log_copies(events)
    load_s = time.perf_counter() - t
    cpu, wall = [], []
    res = None
    for _ in range(runs):
        res = None
        c, t = time.process_time(), time.perf_counter()
        res = replay_cluster(events, "bench")
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    return {"events": len(events), "load_s": load_s, "cpu": cpu, "wall": wall, "intervals": len(res.intervals),
            "leaderless": len(res.leaderless), "decisions": len(res.decisions),
            "partitions": len({(i.topic, i.partition) for i in res.intervals}),
            "brokers": len(res.image.known_brokers), "vm_hwm_mb": vm_hwm_mb()}


def distributed(parquet: str, master: str, shards: int, runs: int) -> dict:
    """In this (fresh) process: replay_on_executors over the Parquet events, ``runs`` times."""
    from forensics.audit.distributed import replay_on_executors
    from forensics.spark import get_spark

    t = time.perf_counter()
    spark = get_spark(master)
    start_s = time.perf_counter() - t
    walls, cpus, info = [], [], {}
    for _ in range(runs):
        c, t = tree_cpu(), time.perf_counter()
        events = spark.read.parquet(parquet)
        dist = replay_on_executors(spark, events, shards)
        n_intervals = dist.timeline.count()
        walls.append(time.perf_counter() - t)
        cpus.append(tree_cpu() - c)
        m = dist.merged["bench"]
        info = {"intervals": n_intervals, "replayed_whole": dist.replayed_whole,
                "leaderless": len(m.leaderless) if hasattr(m, "leaderless") else None}
        dist.release()
    spark.stop()
    return {"master": master, "shards": shards, "spark_start_s": start_s, "wall": walls, "cpu": cpus, **info}


def _child(mode: str, *args) -> dict:
    out = subprocess.run([sys.executable, __file__, mode, *map(str, args)], capture_output=True, text=True,
                         cwd=REPO)
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("_one_core", "_distributed"):
        if sys.argv[1] == "_one_core":
            print(json.dumps(one_core(sys.argv[2], int(sys.argv[3]))))
        else:
            print(json.dumps(distributed(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-gb", type=float, default=2.0)
    ap.add_argument("--days", type=float, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", help="folder for the corpus and events (kept; reused)")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="kf-bench-"))
    corpus = work / f"corpus-{args.size_gb:g}gb-{args.days:g}d"
    try:
        info = make_corpus(corpus, args.size_gb, args.days)
        ev = events_parquet(corpus, work / f"events-{args.size_gb:g}gb-{args.days:g}d", "local[2]")
        parquet = str(work / f"events-{args.size_gb:g}gb-{args.days:g}d" / "events")
        print(f"corpus: {info['output']}\nevents for the replay: {ev['events']:,}", flush=True)
        loads = [load_avg()]
        one = _child("_one_core", parquet, args.runs)
        loads.append(load_avg())
        n = one["events"]
        cpu_med, wall_med = med(one["cpu"]), med(one["wall"])
        line1 = (f"one core: {n:,} events ({one['partitions']:,} partitions, {one['brokers']} brokers, "
                 f"{one['decisions']:,} decisions, {one['intervals']:,} timeline intervals, {one['leaderless']:,} "
                 f"leaderless episodes): replay_cluster median {cpu_med:.1f} CPU s ({runs_text(one['cpu'])}) = "
                 f"**{n / cpu_med:,.0f} events/s** on one core (goal 300,000: "
                 f"{'met' if n / cpu_med >= 300_000 else f'missed, {300_000 / (n / cpu_med):.1f}x short'}); "
                 f"wall median {wall_med:.1f}s ({runs_text(one['wall'])}) = {n / wall_med:,.0f} events/s; "
                 f"process peak RSS {one['vm_hwm_mb']:,.0f} MB (events loaded in {one['load_s']:.1f}s, not timed)")
        print(line1, flush=True)
        base = _child("_distributed", parquet, "local[1]", 1, args.runs)
        loads.append(load_avg())
        print(f"local[1], 1 shard: {runs_text(base['wall'])} s", flush=True)
        two = _child("_distributed", parquet, "local[2]", 2, args.runs)
        loads.append(load_avg())
        print(f"local[2], 2 shards: {runs_text(two['wall'])} s", flush=True)
        b, d = med(base["wall"]), med(two["wall"])
        line2 = (f"replay_on_executors (Parquet events -> timeline rows counted, shard outputs merged on the driver): "
                 f"local[1] with 1 shard median {b:.1f}s ({runs_text(base['wall'])}; {med(base['cpu']):.1f} CPU s) = "
                 f"{n / b:,.0f} events/s; local[2] with 2 shards median {d:.1f}s ({runs_text(two['wall'])}; "
                 f"{med(two['cpu']):.1f} CPU s) = {n / d:,.0f} events/s: **speed-up {b / d:.2f}x** on 2 executor cores"
                 + (f"; replayed whole: {two['replayed_whole']}" if two["replayed_whole"] else "")
                 + f"; against the in-process one-core replay: {wall_med / d:.2f}x")
        print(line2)
        print(f"load average: {runs_text(loads)}")
        if args.record:
            cmd = f"`.venv/bin/python benchmarks/replay_bench.py --size-gb {args.size_gb:g} --days {args.days:g} --runs {args.runs} --record`"
            record(SECTION, f"- {now_utc()}, {os.cpu_count()} cores, load average {runs_text(loads)} (start, after each "
                            f"step). Corpus `{info['command']}`.\n  - {line1}\n  - {line2}\n  Command: {cmd}\n")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
