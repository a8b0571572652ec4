"""How fast is ``capture`` on a big cluster? A 20,000-partition tree in a throwaway ZooKeeper.

Run from the repo root:

    .venv/bin/python benchmarks/capture_bench.py [--partitions 20000] [--runs 3]

Prints the median capture time and adds it to its section of benchmarks/journal/capture.md.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from kazoo.client import KazooClient  # noqa: E402

from forensics import capture as cap  # noqa: E402
from zk_server import ZkServer, load_kafka_tree, register_broker  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))
from _common import record  # noqa: E402

SECTION = "## capture (snapshot of a live ZooKeeper)"


def topics_for(partitions: int, per_topic: int = 100, brokers: int = 5) -> dict[str, dict[int, list[int]]]:
    topics: dict[str, dict[int, list[int]]] = {}
    for n in range((partitions + per_topic - 1) // per_topic):
        count = min(per_topic, partitions - n * per_topic)
        topics[f"bench-topic-{n:04d}"] = {
            p: [1 + (p + k) % brokers for k in range(3)] for p in range(count)
        }
    return topics


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="kf-capture-bench-"))
    server = ZkServer(work / "zk", heap="1g").start()
    try:
        c = KazooClient(hosts=server.hosts, timeout=30)
        c.start(timeout=30)
        t0 = time.monotonic()
        load_kafka_tree(c, topics_for(args.partitions))
        for b in range(1, 6):
            register_broker(c, b)
        print(f"loaded {args.partitions:,} partitions in {time.monotonic() - t0:.1f}s", flush=True)

        times, reads, znodes = [], [], 0
        for i in range(args.runs):
            opts = cap.CaptureOptions(cap.parse_zk(server.hosts), work / f"out{i}", timeout_s=30)
            t = time.monotonic()
            res = cap.run_capture(opts)
            times.append(time.monotonic() - t)
            znodes = res.manifest["znodes"]
            assert res.counts["partitions"] == args.partitions, res.counts
            # The same reads without writing files: how much is ZooKeeper, how much is the disk.
            zk = cap.connect(opts)
            t = time.monotonic()
            cap.snapshot(zk, opts)
            reads.append(time.monotonic() - t)
            zk.close()
            print(f"run {i + 1}: capture {times[-1]:.2f}s, reads alone {reads[-1]:.2f}s ({znodes:,} znodes)", flush=True)
        c.stop()
        c.close()
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)

    median, median_reads = statistics.median(times), statistics.median(reads)
    line = (f"capture of {args.partitions:,} partitions ({znodes:,} znodes): median {median:.2f}s of {args.runs} "
            f"runs ({', '.join(f'{t:.2f}' for t in times)}); the reads alone (no files written) median "
            f"{median_reads:.2f}s ({znodes / median_reads:,.0f} znodes/s)")
    print(line)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    bullet = (f"- {stamp}, {os.cpu_count()} cores, load average {load:.1f} at the end: {line}.\n"
              f"  Command: `.venv/bin/python benchmarks/capture_bench.py --partitions {args.partitions} --runs {args.runs}`"
              " (ZooKeeper 3.8 standalone on 127.0.0.1, written to local disk).\n")
    record(SECTION, bullet)


if __name__ == "__main__":
    main()
