"""One big container stream: `kafka-forensics ingest` of a ~1 GB `docker compose logs` file and a ~1 GB
Docker json-file log, each a single file.

Run from the repo root:

    .venv/bin/python benchmarks/bigstream_bench.py [--size 1] [--formats compose,docker_json] [--record]

The lines are real Kafka lines, the same as benchmarks/bigfile_bench.py uses (every broker log under
``../shared/real_logs`` whose first line is a header of Kafka's default layout), repeated until the
size is reached. Compose: three services (``kafka-1`` .. ``kafka-3``), each walking those logs from
another starting file, interleaved a few lines at a time (seeded), every line behind its padded
``NAME  | `` prefix, with Compose's own "Attaching to" line first. json-file: one container's log,
one record per line (``{"log":"...\\n","stream":"stdout","time":...}``, the time taken from the line's
own header), lines over 16 KiB split as Docker splits them. Files are written under /tmp and removed
after their run. Each run is the command in a fresh process with Spark's default memory settings;
peaks are sampled as bigfile_bench does (JVM heap in use by ``jstat``, RSS from /proc).
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_avg, now_utc, record
from bigfile_bench import GB, ingest, real_pieces

SECTION = "## big single files: container streams (bounded memory, ~1 GB)"
_HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),(\d{3})\]")
SPLIT = 16384


def _lines(pieces: list[bytes], start: int):
    i = start
    while True:
        for line in pieces[i % len(pieces)].decode("utf-8", "replace").split("\n")[:-1]:
            yield line
        i += 1


def write_compose(path: Path, pieces: list[bytes], size: int) -> int:
    names = ["kafka-1", "kafka-2", "kafka-3"]
    width = max(map(len, names))
    walks = [_lines(pieces, k * len(pieces) // 3) for k in range(3)]
    rnd = random.Random(16)
    written = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"Attaching to {', '.join(names)}\n")
        while written < size:
            k = rnd.randrange(3)
            prefix = f"{names[k].ljust(width)} | "
            block = "".join(prefix + next(walks[k]) + "\n" for _ in range(rnd.randint(1, 20)))
            fh.write(block)
            written += len(block)
    return written


def write_docker_json(path: Path, pieces: list[bytes], size: int) -> int:
    walk = _lines(pieces, 0)
    stamp = "2021-01-01T00:00:00.000000000Z"
    written = 0
    with open(path, "w", encoding="utf-8") as fh:
        while written < size:
            out = []
            for _ in range(1000):
                line = next(walk)
                m = _HEADER.match(line)
                if m:
                    stamp = f"{m.group(1)}T{m.group(2)}.{m.group(3)}000000Z"
                parts = [line[i:i + SPLIT] for i in range(0, len(line), SPLIT)] or [""]
                for j, part in enumerate(parts):
                    text = part + ("\n" if j == len(parts) - 1 else "")
                    out.append(json.dumps({"log": text, "stream": "stdout", "time": stamp}, separators=(",", ":")))
            block = "\n".join(out) + "\n"
            fh.write(block)
            written += len(block)
    return written


WRITERS = {"compose": (write_compose, "incident.txt"), "docker_json": (write_docker_json, "ab12-json.log")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=float, default=1.0, help="GB per file")
    ap.add_argument("--formats", default="compose,docker_json")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kf-bigstream-"))
    pieces = real_pieces()
    text = sum(map(len, pieces))
    print(f"real pieces: {len(pieces)} files, {text / 1e6:.1f} MB of text", flush=True)
    runs = []
    try:
        for fmt in args.formats.split(","):
            write, name = WRITERS[fmt]
            d = work / fmt
            d.mkdir()
            src = d / name
            t = time.perf_counter()
            n = write(src, pieces, int(args.size * GB))
            print(f"{fmt}: {n / 1e9:.2f} GB written in {time.perf_counter() - t:.0f} s; load {load_avg():.1f}",
                  flush=True)
            load0 = load_avg()
            r = ingest(src, d / "out")
            r.update({"format": fmt, "bytes": n, "load": [round(load0, 1), round(load_avg(), 1)]})
            if r["rc"] == 0:
                summ = json.loads((d / "out" / "ingest_summary.json").read_text())
                f = summ["files"][0]
                r["streams"] = [(s["name"], s["broker_id"], s["lines"], s["events"]) for s in f.get("streams") or []]
                r["kind"] = f["kind"]
            print(json.dumps({k: v for k, v in r.items() if k != "event_counts"}), flush=True)
            runs.append(r)
            shutil.rmtree(d, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [f"- {now_utc()}, 2 shared cores, `local[*]`, Spark's default memory (driver heap max 1 GB); "
             f"{len(pieces)} real broker logs ({text / 1e6:.0f} MB of text) repeated into one stream",
             "", "| file | GB | lines | events | sources (name, broker, lines) | wall s | CPU s | JVM heap used peak MB | "
             "JVM RSS peak MB | driver Python RSS peak MB | Python worker RSS peak MB (max / all) | load (start, end) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        t = r.get("totals", {})
        streams = "; ".join(f"{a} {b} {c:,}" for a, b, c, _ in r.get("streams", [])) or "-"
        lines.append(f"| {r['format']} | {r['bytes'] / 1e9:.2f} | {t.get('lines', 'failed')} | {t.get('events', '-')} | "
                     f"{streams} | {r['wall_s']} | {r['cpu_s']} | {r['jvm_heap_used']} | {r['jvm_rss']} | "
                     f"{r['driver_rss']} | {r['worker_rss_max']} / {r['workers_rss_sum']} | {r['load']} |")
    lines.append("\n  Command: `nice .venv/bin/python benchmarks/bigstream_bench.py " + " ".join(sys.argv[1:]) + "`")
    text_out = "\n".join(lines)
    print(text_out)
    if args.record:
        record(SECTION, text_out)


if __name__ == "__main__":
    main()
