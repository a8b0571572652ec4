"""CPU seconds of ``parse_source`` over a folder of logs, in one process (no Spark): the parser's own
cost, as the real-format ingest section of benchmarks/journal/ingest.md reports it.

    python benchmarks/parse_cpu.py FOLDER [--profile N]

``--profile N`` prints cProfile's N costliest functions (cProfile inflates many small Python calls).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parsers.common.context import SourceContext
from parsers.dispatch import parse_source


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--profile", type=int, default=0)
    args = ap.parse_args()
    files = sorted(p for p in Path(args.folder).rglob("*") if p.is_file() and not p.name.startswith("."))
    datas = [(str(p.relative_to(args.folder)), p.read_bytes()) for p in files]

    prof = None
    if args.profile:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    t0 = time.process_time()
    events = lines = 0
    for rel, data in datas:
        evs, summary = parse_source(data, SourceContext(rel, cluster=rel.split("/")[0]))
        events += len(evs)
        lines += summary.lines
    cpu = time.process_time() - t0
    if prof is not None:
        prof.disable()
        import pstats
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.profile)
    text = sum(len(broker_log_text(d)) for _, d in datas)
    print(f"parse_source: {len(datas)} files, {text / 1e6:,.0f} MB of text, "
          f"{lines:,} lines, {events:,} events: {cpu:.2f} CPU s = {text / 1e6 / cpu:.1f} MB per CPU s")


def broker_log_text(data: bytes) -> bytes:
    import gzip
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


if __name__ == "__main__":
    main()
