"""One big broker log: `kafka-forensics ingest` of a single server.log of 0.5, 2 and 4 GB (and a .gz).

Run from the repo root:

    .venv/bin/python benchmarks/bigfile_bench.py [--sizes 0.5,2,4] [--gz-size 2] [--hourly-check 0.5] [--record]

The file is real Kafka lines: every broker log under ``../shared/real_logs`` whose first line is a
header of Kafka's default layout (about 1,500 files, 107 MB of text, Kafka 0.8 to 4.x), decompressed,
concatenated in path order and repeated until the size is reached. It is written under /tmp and
removed after its run. Each run is the command itself in a fresh process (``python -m forensics
ingest FILE --out DIR``) with Spark's default memory settings: no driver or executor memory flag
(so the driver's JVM, which also runs the executors in local mode, gets Spark's default 1 GB heap).

Measured, sampling every 0.5 s: wall time; the JVM's used heap (``jstat -gc PID 1000``: survivor,
eden and old generation in use), its peak, and the JVM's RSS; the RSS of the driver's Python process
and of Spark's Python workers (each, and all of them together), peaks from /proc.

``--hourly-check SIZE``: the same bytes cut into files of about 8 MB at the real files' boundaries
(what hourly rotation gives), ingested too; the event counts per type and the accounting totals must
be equal to the single file's.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, Periodic, _children, cmdline, load_avg, now_utc, record, rss_mb  # noqa: E402

SECTION = "## big single files (bounded memory, 0.5 to 4 GB)"
REAL = REPO.parent / "shared" / "real_logs"
GB = 1 << 30


def real_pieces() -> list[bytes]:
    """The real broker logs that start with a header (so the file they are cut from ends between entries)."""
    from parsers.dispatch import sniff_kind
    from parsers.broker_logs.log4j_layout import KafkaDefaultLayout, LocalClock

    layout = KafkaDefaultLayout(LocalClock("UTC"))
    out = []
    for p in sorted(REAL.rglob("*")):
        if not p.is_file() or p.suffix in (".tsv", ".md"):
            continue
        data = p.read_bytes()
        if sniff_kind(str(p), data) != "broker_log":
            continue
        if data[:2] == b"\x1f\x8b":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError):
                continue
        try:
            ok = layout.parse(data.split(b"\n", 1)[0].decode("utf-8", "replace")) is not None
        except ValueError:
            ok = False
        if ok:
            out.append(data if data.endswith(b"\n") else data + b"\n")
    return out


def write_big(path: Path, pieces: list[bytes], size: int, hourly: Path | None = None, gz: bool = False) -> int:
    """Pieces repeated into one file of at least ``size`` bytes of text (and, with ``hourly``, into
    files of about 8 MB, cut at the same piece boundaries)."""
    opener = (lambda p: gzip.open(p, "wb", compresslevel=1)) if gz else (lambda p: open(p, "wb"))
    written = 0
    hour_fh, hour_n, hour_bytes = None, 0, 0
    with opener(path) as fh:
        while written < size:
            for piece in pieces:
                fh.write(piece)
                written += len(piece)
                if hourly is not None:
                    if hour_fh is None or hour_bytes >= 8 << 20:
                        if hour_fh:
                            hour_fh.close()
                        hour_n += 1
                        hour_fh = open(hourly / f"server.log.{hour_n:05d}", "wb")
                        hour_bytes = 0
                    hour_fh.write(piece)
                    hour_bytes += len(piece)
                if written >= size:
                    break
    if hour_fh:
        hour_fh.close()
    return written


class Sampler(Periodic):
    """Peaks of the driver's RSS, the JVM's heap in use and RSS, and Spark's Python workers' RSS."""

    interval = 0.5

    def __init__(self, root: int):
        super().__init__()
        self.root = root
        self.peak = {"driver_rss": 0.0, "jvm_rss": 0.0, "jvm_heap_used": 0.0, "jvm_heap_committed": 0.0,
                     "worker_rss_max": 0.0, "workers_rss_sum": 0.0, "workers": 0}
        self.jvm: int | None = None
        self._jstat: subprocess.Popen | None = None

    def _jstat_reader(self, pid: int) -> None:
        # The JVM's perf data appears a moment after it starts: jstat started too early says 'not found'.
        while not self._stop.is_set() and os.path.exists(f"/proc/{pid}"):
            self._jstat = subprocess.Popen(["jstat", "-gc", str(pid), "1000"], stdout=subprocess.PIPE, text=True,
                                           stderr=subprocess.DEVNULL)
            self._read_jstat(self._jstat)
            self._jstat.wait()
            self._stop.wait(1.0)

    def _read_jstat(self, proc: subprocess.Popen) -> None:
        cols = None
        for line in proc.stdout:
            f = line.split()
            if f and f[0] == "S0C":
                cols = f
                continue
            if cols is None or len(f) != len(cols):
                continue
            try:
                v = dict(zip(cols, map(float, f)))
            except ValueError:
                continue
            used = (v["S0U"] + v["S1U"] + v["EU"] + v["OU"]) / 1024
            committed = (v["S0C"] + v["S1C"] + v["EC"] + v["OC"]) / 1024
            self.peak["jvm_heap_used"] = max(self.peak["jvm_heap_used"], used)
            self.peak["jvm_heap_committed"] = max(self.peak["jvm_heap_committed"], committed)

    def sample(self) -> None:
        kids = _children()
        self.peak["driver_rss"] = max(self.peak["driver_rss"], rss_mb(self.root))
        todo = list(kids.get(self.root, ()))
        workers = []
        while todo:
            pid = todo.pop()
            cmd = cmdline(pid)
            exe = cmd[0] if cmd else ""
            # spark-submit first runs a small launcher JVM (org.apache.spark.launcher.Main); the driver's
            # JVM, which in local mode also runs the executors, is the one running SparkSubmit.
            if "org.apache.spark.deploy.SparkSubmit" in cmd:
                if self.jvm is None and not self._stop.is_set():
                    self.jvm = pid
                    threading.Thread(target=self._jstat_reader, args=(pid,), daemon=True).start()
                self.peak["jvm_rss"] = max(self.peak["jvm_rss"], rss_mb(pid))
            elif "python" in exe and "pyspark.daemon" in cmd:
                workers.append(rss_mb(pid))
            todo.extend(kids.get(pid, ()))
        if workers:
            self.peak["worker_rss_max"] = max(self.peak["worker_rss_max"], max(workers))
            self.peak["workers_rss_sum"] = max(self.peak["workers_rss_sum"], sum(workers))
            self.peak["workers"] = max(self.peak["workers"], len(workers))

    def __exit__(self, *exc):
        super().__exit__(*exc)
        if self._jstat is not None:
            self._jstat.kill()
            self._jstat.wait()


def ingest(src: Path, out: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPARK_DRIVER_MEMORY", "SPARK_EXECUTOR_MEMORY", "PYSPARK_SUBMIT_ARGS"))}
    cmd = [sys.executable, "-m", "forensics", "ingest", str(src), "--out", str(out), "--cluster", "bench", "-q"]
    t0 = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with Sampler(proc.pid) as s:
        stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    res = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "rc": proc.returncode,
           **{k: round(v, 1) for k, v in s.peak.items()}}
    if proc.returncode != 0:
        res["stderr"] = stderr[-2000:]
        return res
    summ = json.loads((out / "ingest_summary.json").read_text())
    res["totals"] = summ["totals"]
    res["event_counts"] = summ["event_counts"]
    res["notes"] = [n for f in summ["files"] for n in f["notes"]][:3]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0.5,2,4", help="GB of text in the single server.log, comma-separated")
    ap.add_argument("--gz-size", type=float, default=2.0, help="GB of text in the single server.log.gz (0: none)")
    ap.add_argument("--hourly-check", type=float, default=0.5, help="size also ingested as ~8 MB files (0: none)")
    ap.add_argument("--work", default=None, help="folder for the files (default: a new one under /tmp)")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="kf-bigfile-"))
    work.mkdir(parents=True, exist_ok=True)
    pieces = real_pieces()
    text = sum(map(len, pieces))
    print(f"real pieces: {len(pieces)} files, {text / 1e6:.1f} MB of text", flush=True)
    runs = []
    plan = [(float(x), False) for x in args.sizes.split(",") if x] + ([(args.gz_size, True)] if args.gz_size else [])
    try:
        for size, gz in plan:
            d = work / f"{size:g}{'gz' if gz else ''}"
            d.mkdir(exist_ok=True)
            src = d / ("server.log.gz" if gz else "server.log")
            hourly = None
            if not gz and size == args.hourly_check:
                hourly = d / "hourly"
                hourly.mkdir(exist_ok=True)
            t = time.perf_counter()
            n = write_big(src, pieces, int(size * GB), hourly, gz)
            print(f"{src.name} {size:g} GB: {n / 1e9:.2f} GB of text, {src.stat().st_size / 1e9:.2f} GB on disk, "
                  f"written in {time.perf_counter() - t:.0f} s; load {load_avg():.1f}", flush=True)
            r = ingest(src, d / "out")
            r.update({"size_gb": size, "gz": gz, "text_bytes": n, "disk_bytes": src.stat().st_size,
                      "load": round(load_avg(), 1)})
            print(json.dumps({k: v for k, v in r.items() if k != "event_counts"}), flush=True)
            if hourly is not None:
                h = ingest(hourly, d / "out-hourly")
                r["hourly"] = {"wall_s": h["wall_s"], "files": h.get("totals", {}).get("files"), "rc": h["rc"]}
                same_counts = h.get("event_counts") == r.get("event_counts")
                keys = ("lines", "parsed", "other", "unrecognized", "quarantined", "events")
                same_totals = all(h.get("totals", {}).get(k) == r.get("totals", {}).get(k) for k in keys)
                r["hourly"].update({"same_event_counts": same_counts, "same_totals": same_totals})
                if not (same_counts and same_totals):
                    r["hourly"]["diff"] = {k: (r.get("totals", {}).get(k), h.get("totals", {}).get(k)) for k in keys}
                    r["hourly"]["diff_types"] = {k: (r["event_counts"].get(k), h["event_counts"].get(k))
                                                 for k in set(r.get("event_counts", {})) | set(h.get("event_counts", {}))
                                                 if r["event_counts"].get(k) != h["event_counts"].get(k)}
                print("hourly:", json.dumps(r["hourly"]), flush=True)
            runs.append(r)
            shutil.rmtree(d, ignore_errors=True)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    lines = [f"- {now_utc()}, 2 shared cores, `local[*]`, Spark's default memory (driver heap max 1 GB); "
             f"{len(pieces)} real broker logs ({text / 1e6:.0f} MB of text) repeated into one file",
             "", "| file | GB of text | GB on disk | lines | events | wall s | CPU s | JVM heap used peak MB | JVM RSS peak MB | "
             "driver Python RSS peak MB | Python worker RSS peak MB (max / all) | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        t = r.get("totals", {})
        lines.append(f"| {'server.log.gz' if r['gz'] else 'server.log'} | {r['text_bytes'] / 1e9:.2f} | "
                     f"{r['disk_bytes'] / 1e9:.2f} | {t.get('lines', 'failed')} | {t.get('events', '-')} | {r['wall_s']} | {r['cpu_s']} | "
                     f"{r['jvm_heap_used']} | {r['jvm_rss']} | {r['driver_rss']} | "
                     f"{r['worker_rss_max']} / {r['workers_rss_sum']} | {r['load']} |")
    for r in runs:
        if "hourly" in r:
            h = r["hourly"]
            lines.append(f"\n  {r['size_gb']:g} GB as {h['files']} files of ~8 MB: same event counts per type "
                         f"{h['same_event_counts']}, same accounting totals {h['same_totals']}"
                         + (f" (differences: {h.get('diff')} {h.get('diff_types')})" if "diff" in h else ""))
    lines.append("\n  Command: `.venv/bin/python benchmarks/bigfile_bench.py " + " ".join(sys.argv[1:]) + "`")
    text_out = "\n".join(lines)
    print(text_out)
    if args.record:
        record(SECTION, text_out)


if __name__ == "__main__":
    main()
