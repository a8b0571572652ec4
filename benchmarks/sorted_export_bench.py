"""Peak memory of a big Elasticsearch/OpenSearch (ECS) export read by sorted runs, in one process.

    python benchmarks/sorted_export_bench.py --size-gb 0.6 1.5 3 [--work DIR]

The bundled rf1_broker_kill incident is written as Filebeat's Kafka module would export it
(samplegen.containers.write_ecs), its lines shuffled and repeated to each size (an export in no time
order, the case the sorted runs exist for); ``parsers.container_streams.sorted_runs.sorted_stream`` reads
it with its default run and part sizes; peak RSS of a fresh process per size is reported. The export is
removed after each size.
"""
from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one(size_gb: float, work: Path) -> None:
    sys.path.insert(0, str(REPO))
    from parsers.common.context import SourceContext
    from parsers.container_streams import sorted_runs
    from samplegen import containers as C

    src = C.write_ecs(REPO / "sample_logs" / "rf1_broker_kill", work / "one", module=True, hits=False)
    lines = src.read_text().split("\n")[:-1]
    big = work / "export.ndjson"
    rnd = random.Random(1)
    with open(big, "w") as fh:
        n = 0
        while n < size_gb * 1e9:
            rnd.shuffle(lines)
            chunk = "\n".join(lines) + "\n"
            fh.write(chunk)
            n += len(chunk)
    size = big.stat().st_size
    t, evs, summary = time.time(), 0, None
    for got in sorted_runs.sorted_stream(str(big), size, False, SourceContext(str(big), "c", None, "UTC"),
                                         tmp_dir=str(work)):
        if isinstance(got, list):
            evs += len(got)
        else:
            summary = got
    big.unlink()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{size / 1e6:,.0f} MB export: {summary.lines:,} lines, {evs:,} events, {time.time() - t:.0f} s, "
          f"peak RSS {rss:,.0f} MB", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-gb", type=float, nargs="+", default=[0.6, 1.5, 3.0])
    ap.add_argument("--work", help="folder for the export and the runs (default: a temporary folder)")
    ap.add_argument("--one", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        one(args.one, Path(args.work))
        return
    for gb in args.size_gb:
        with tempfile.TemporaryDirectory(dir=args.work) as work:
            subprocess.run([sys.executable, __file__, "--one", str(gb), "--work", work], check=True)


if __name__ == "__main__":
    main()
