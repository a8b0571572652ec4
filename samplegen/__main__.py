"""``python -m samplegen``: write the bundled samples, a benchmark corpus, or an audit tree.

    python -m samplegen samples --out sample_logs [--only rf1_broker_kill]
    python -m samplegen corpus --out DIR --brokers 30 --partitions 100000 --days 3 --size-gb 2 --gzip-fraction 0.5 --seed 1
    python -m samplegen audit --out DIR --clusters 3 --days 90 --brokers 3 --mb-per-file 0.05 --seed 1
    python -m samplegen audit --out DIR --clusters 1 --days 1 --brokers 30 --partitions 100000 --mb-per-file 50
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

# What the generator owns inside a sample folder (README.md and expected.json are written by hand).
GENERATED = ("kafka-broker-*", "kafka-controller-*", "zookeeper", "zkcli", "clients")


def _samples(args) -> int:
    from samplegen.kraft_samples import write_kraft_sample
    from samplegen.kraft_scenarios import KRAFT_SCENARIOS
    from samplegen.samples import write_sample
    from samplegen.scenarios import SCENARIOS

    writers = {**{n: (write_sample, s) for n, s in SCENARIOS.items()},
               **{n: (write_kraft_sample, s) for n, s in KRAFT_SCENARIOS.items()}}
    names = args.only or sorted(writers)
    for name in names:
        if name not in writers:
            print(f"unknown scenario {name!r}; known: {', '.join(sorted(writers))}", file=sys.stderr)
            return 2
        out = Path(args.out) / name
        for pattern in GENERATED:
            for old in out.glob(pattern):
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        t = time.perf_counter()
        write, scenario = writers[name]
        write(scenario, out)
        size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
        print(f"{name}: {size / 1e6:.2f} MB in {time.perf_counter() - t:.1f}s -> {out}")
    return 0


def _corpus(args) -> int:
    from samplegen.corpus import CorpusSpec, write_corpus

    spec = CorpusSpec(brokers=args.brokers, partitions=args.partitions, days=args.days,
                      size_bytes=int(args.size_gb * 1e9), gzip_fraction=args.gzip_fraction, seed=args.seed,
                      start=args.start, incidents_per_day=args.incidents_per_day)
    t, cpu = time.perf_counter(), time.process_time()
    stats = write_corpus(spec, Path(args.out))
    dt, dcpu = time.perf_counter() - t, time.process_time() - cpu
    mb = stats.raw_bytes / 1e6
    print(f"{stats.files} files, {mb:.0f} MB of log text ({stats.disk_bytes / 1e6:.0f} MB on disk), {stats.lines:,} lines, "
          f"{stats.incidents} incidents in {dt:.1f}s ({mb / dt:.0f} MB/s wall, {mb / max(dcpu, 1e-9):.0f} MB/s per CPU second) "
          f"-> {args.out}")
    return 0


def _audit(args) -> int:
    from samplegen.corpus import AuditSpec, write_audit_tree

    spec = AuditSpec(clusters=args.clusters, days=args.days, brokers=args.brokers, partitions=args.partitions,
                     incidents_per_day=args.incidents_per_day, bytes_per_file=int(args.mb_per_file * 1e6),
                     seed=args.seed, start=args.start)
    t = time.perf_counter()
    stats = write_audit_tree(spec, Path(args.out))
    print(f"{stats.files} files, {stats.raw_bytes / 1e6:.1f} MB of log text ({stats.disk_bytes / 1e6:.1f} MB on disk), "
          f"{stats.lines:,} lines, {stats.incidents} incidents in {time.perf_counter() - t:.1f}s -> {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    from samplegen.corpus import AuditSpec  # its defaults are the CLI's

    ap = argparse.ArgumentParser(prog="python -m samplegen", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("samples", help="write the bundled incidents (deterministic)")
    s.add_argument("--out", required=True)
    s.add_argument("--only", action="append", help="one scenario (repeatable)")
    s.set_defaults(fn=_samples)
    c = sub.add_parser("corpus", help="a large realistic corpus for benchmarks (streaming)")
    c.add_argument("--out", required=True)
    c.add_argument("--brokers", type=int, default=30)
    c.add_argument("--partitions", type=int, default=100_000)
    c.add_argument("--days", type=float, default=3)
    c.add_argument("--size-gb", type=float, default=2.0)
    c.add_argument("--gzip-fraction", type=float, default=0.5)
    c.add_argument("--incidents-per-day", type=float, default=2.0)
    c.add_argument("--start", default="2023-03-01")
    c.add_argument("--seed", type=int, default=1)
    c.set_defaults(fn=_corpus)
    a = sub.add_parser("audit", help="cluster=NAME/date=YYYY-MM-DD/broker=N/server.log.gz for months, small files")
    a.add_argument("--out", required=True)
    a.add_argument("--clusters", type=int, default=3)
    a.add_argument("--days", type=int, default=90)
    a.add_argument("--brokers", type=int, default=3)
    a.add_argument("--mb-per-file", type=float, default=0.05,
                   help="routine server.log text per broker-day; controller and state-change lines come on top")
    a.add_argument("--partitions", type=int, default=AuditSpec.partitions, help="partitions per cluster")
    a.add_argument("--incidents-per-day", type=float, default=AuditSpec.incidents_per_day,
                   help="broker kills and controlled restarts per cluster-day")
    a.add_argument("--start", default="2023-01-01")
    a.add_argument("--seed", type=int, default=1)
    a.set_defaults(fn=_audit)
    args = ap.parse_args(argv)
    try:
        return args.fn(args)
    except (OSError, ValueError) as exc:
        print(f"samplegen: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
