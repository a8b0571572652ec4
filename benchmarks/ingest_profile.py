"""Where the `ingest` command's time goes, in CPU seconds (which other jobs' load distorts little).

    python benchmarks/ingest_profile.py CORPUS [--part spark|worker|both] [--master local[2]] [--top N]

``--part spark``: ``run_ingest`` then ``write_outputs`` (what ``kafka-forensics ingest`` runs) in a fresh
Spark session with its event log on: CPU seconds of the driver, the JVM and Spark's Python workers for the
session start, the ingest and the write, and per Spark stage the tasks' run time, JVM CPU time, GC time
and shuffle bytes (the stages named by what they do).

``--part worker``: what the Python workers run, run here in one process over the same plan (the tasks of
whole files, the ranges of big files and their finishing pass, the driver's planning and merging), timed
unprofiled, then under cProfile with every function's own time put in one category by its module (a
built-in's time goes to its caller's): reading (decompress, decode, split), scan and accounting (the line
loop, the compiled routine scan, per-line bookkeeping), templates (rules, builders, Event objects),
stream demux, finishing, Arrow batches (events to Arrow), Parquet staging, driver planning/merging.
"""
from __future__ import annotations

import argparse
import cProfile
import glob
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Periodic, _TICK, load_avg, process_tree  # noqa: E402

CATEGORIES = (
    ("parsers/common/textio", "read"), ("parsers/common/textranges", "read"), ("gzip", "read"),
    ("parsers/broker_logs/default_layout_scan", "scan+accounting"), ("parsers/broker_logs/_routine", "scan+accounting"),
    ("parsers/broker_logs/broker_log_ranges", "scan+accounting"), ("parsers/broker_logs/broker_log", "scan+accounting"),
    ("parsers/broker_logs/log4j_layout", "scan+accounting"), ("parsers/common/accounting", "scan+accounting"),
    ("parsers/broker_logs/templates/finish", "finish"),
    ("parsers/broker_logs/rules", "templates"), ("parsers/broker_logs/templates", "templates"),
    ("parsers/schema", "templates"),
    ("parsers/container_streams", "stream demux"),
    ("forensics/stage_writer", "parquet staging"), ("pyarrow/parquet", "parquet staging"),
    ("forensics/stage_output", "write (read, sort, parquet)"),
    ("forensics/bigfiles", "arrow batches"), ("forensics/ingest", "arrow batches"), ("pyarrow", "arrow batches"),
    ("json/", "arrow batches"),
)
STAGE_CATEGORY = {"stage_events": "parquet staging", "_event_batch": "arrow batches", "to_batch": "arrow batches",
                  "dump_detail": "arrow batches", "cut_raw": "arrow batches", "as_row": "arrow batches",
                  "rows_of": "arrow batches", "finish_file_events": "finish", "merge_file_parts": "driver plan/merge",
                  "plan_big_files": "driver plan/merge", "plan_stream": "driver plan/merge",
                  "survey": "driver plan/merge", "plan_ranges": "driver plan/merge",
                  "survey_part": "survey", "write_part": "write (read, sort, parquet)"}


def category(func: tuple) -> str | None:
    """A function's category by its name or module; None for built-ins (their caller's)."""
    filename, _, name = func
    if name in STAGE_CATEGORY:
        return STAGE_CATEGORY[name]
    if filename == "~":
        return "_routine" if name.startswith("<built-in method skip") else None
    f = filename.replace("\\", "/")
    for key, cat in CATEGORIES:
        if key in f:
            return cat
    return "other python"


def split_profile(prof: cProfile.Profile) -> Counter:
    """Own time per category; a function named in STAGE_CATEGORY passes its category to what it calls
    outside the parsers (pyarrow, json); built-ins go to their callers' categories by the calls' times."""
    stats = pstats.Stats(prof).stats
    own: Counter = Counter()
    memo: dict = {}

    def cat_of(func, depth=0) -> Counter:
        """Shares of a function's own time by category."""
        if func in memo:
            return memo[func]
        c = category(func)
        if c == "_routine":
            out = Counter({"scan+accounting": 1.0})
        elif c is not None:
            out = Counter({c: 1.0})
        else:
            callers = stats[func][4] if func in stats else {}
            total = sum(v[2] for v in callers.values()) or 0.0
            out = Counter()
            if depth > 20 or not callers:
                out["other python"] = 1.0
            else:
                memo[func] = Counter({"other python": 1.0})  # against cycles
                for caller, v in callers.items():
                    share = (v[2] / total) if total else 1.0 / len(callers)
                    for k, x in cat_of(caller, depth + 1).items():
                        out[k] += share * x
        memo[func] = out
        return out

    for func, (cc, nc, tt, ct, callers) in stats.items():
        for k, x in cat_of(func).items():
            own[k] += tt * x
    return own


# ------------------------------------------------------------------ the Python workers' side, in one process

def worker_side(corpus: Path, stage: bool = True) -> dict[str, float]:
    """Run what the tasks of an ingest on a local master run, here, in the order Spark would (survey, parse and
    stage, write); returns CPU s per step."""
    from forensics import bigfiles, stage_output
    from forensics.filetasks import make_task_fn, plan_tasks
    from forensics.ingest import OUT_ARROW, _BATCH_ROWS, dir_broker_ids, make_local_parse_fn
    from forensics.sources import collect_inputs
    from forensics.staged_parts import make_staged_part_fn, settle_big_files
    from parsers.common.accounting import FileSummary
    from parsers.container_streams.plan import survey_part
    import pyarrow as pa

    work = Path(tempfile.mkdtemp(prefix="kf-profile-"))
    steps: Counter = Counter()

    def surveyor(jobs):
        t = time.process_time()
        out = [survey_part(*job) for job in jobs]
        steps["survey tasks"] += time.process_time() - t
        return out

    def rows(b: pa.RecordBatch) -> list[dict]:
        return [r for r in b.to_pylist() if r["row_kind"] != "quarantine"]

    try:
        t = time.process_time()
        inputs = collect_inputs([str(corpus)], work)
        whole, big = bigfiles.plan_big_files(inputs.files, surveyor=surveyor)
        steps["driver plan/merge"] += time.process_time() - t - steps["survey tasks"]
        stage_dir = str(work / "staged")
        os.makedirs(stage_dir)
        got: list[dict] = []
        if whole:
            tasks = plan_tasks(whole, 8, 128 << 20, 512 << 10)
            run = make_task_fn(tasks, make_local_parse_fn("UTC", "bench", (), stage_dir))
            t = time.process_time()
            for i in range(len(tasks)):
                for b in run(iter([pa.record_batch([pa.array([i], pa.int64())], names=["id"])])):
                    got += rows(b)
            steps["whole-file tasks"] += time.process_time() - t
        if big.rows:
            part_fn = make_staged_part_fn("UTC", "bench", OUT_ARROW, _BATCH_ROWS, big.surveys, stage_dir)
            names = [n.split()[0] for n in bigfiles.RANGE_DDL.split(", ")]
            t = time.process_time()
            for row in big.rows:
                for b in part_fn(iter([pa.RecordBatch.from_pylist([dict(zip(names, row))])])):
                    got += rows(b)
            steps["range tasks"] += time.process_time() - t
        t = time.process_time()
        parts = [(r["source_file"], r["source_pos"], r["detail"]) for r in got if r["row_kind"] == "part"]
        summaries = [FileSummary.from_json(json.loads(r["detail"])) for r in got if r["row_kind"] == "summary"]
        big_summaries = bigfiles.merge_file_parts(big, parts, "bench")
        fixups = stage_output.Fixups()
        fixups.brokers, fixups.events = settle_big_files(big, parts, big_summaries)
        fixups.fill = dir_broker_ids(summaries + big_summaries)
        descriptors = [json.loads(r["detail"]) for r in got if r["row_kind"] == "staged"]
        plan = stage_output.plan_parts(descriptors)
        per_file = {f: fixups.for_file(f) for f in {d["file"] for d in descriptors} if fixups.any_for(f)}
        steps["driver plan/merge"] += time.process_time() - t
        out = work / "events"
        out.mkdir()
        t = time.process_time()
        for i, part in enumerate(plan):
            stage_output.write_part(i, part, per_file, str(out))
        steps["write tasks"] += time.process_time() - t
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dict(steps)


def worker_profile(corpus: Path, top: int) -> None:
    t = time.process_time()
    steps = worker_side(corpus)
    total = time.process_time() - t
    print(f"python side unprofiled: {total:.2f} CPU s; by step: " + ", ".join(f"{k} {v:.2f}" for k, v in steps.items()))
    prof = cProfile.Profile()
    prof.enable()
    worker_side(corpus)
    prof.disable()
    own = split_profile(prof)
    profiled = sum(own.values())
    print(f"python side under cProfile: {profiled:.2f} s; shares by category (scaled to the unprofiled {total:.2f} s):")
    for k, v in own.most_common():
        print(f"  {k:20s} {100 * v / profiled:5.1f}%  ~{total * v / profiled:6.2f} CPU s")
    if top:
        pstats.Stats(prof).sort_stats("tottime").print_stats(top)


# ------------------------------------------------------------------ a Spark run with its event log

class CpuTracker(Periodic):
    """CPU seconds of this process tree by kind (driver: this Python; jvm; python workers), each process's own
    time as last sampled, so processes that exit meanwhile (idle Python workers) keep their share."""

    interval = 0.25

    def __init__(self):
        super().__init__()
        self.seen: dict[int, tuple[str, float]] = {}
        self.threads: dict[int, tuple[str, float]] = {}

    def sample(self) -> None:
        for pid, kind, f in process_tree():
            self.seen[pid] = (kind, (int(f[11]) + int(f[12])) / _TICK)
            if kind == "jvm":
                self._threads(pid)

    def _threads(self, pid: int) -> None:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                    raw = fh.read()
            except OSError:
                continue
            name = raw[raw.index("(") + 1:raw.rindex(")")]
            f = raw.rsplit(")", 1)[1].split()
            self.threads[int(tid)] = (_thread_kind(name), (int(f[11]) + int(f[12])) / _TICK)

    def totals(self) -> Counter:
        self.sample()
        out = Counter()
        for kind, cpu in self.seen.values():
            out[kind] += cpu
        for kind, cpu in self.threads.values():
            out["jvm: " + kind] += cpu
        return out


def _thread_kind(name: str) -> str:
    """A JVM thread's job from its name: JIT compiler, GC, Spark's task threads, the rest."""
    if "Compiler" in name or name.startswith(("C1 ", "C2 ")):
        return "JIT"
    if name.startswith(("GC ", "G1 ", "VM Thread")) or "GC" in name:
        return "GC"
    if name.startswith("Executor task") or name.startswith("Executor") or "task launch" in name:
        return "tasks"
    if name.startswith(("stdout writer", "stderr reader", "Writer Monitor", "Idle Worker")) or "python" in name.lower():
        return "python I/O"
    return "other"

def _stage_table(log_dir: str) -> list[dict]:
    files = [f for f in glob.glob(os.path.join(log_dir, "**", "*"), recursive=True) if os.path.isfile(f)]
    stages: dict[int, dict] = {}
    for path in files:
        with open(path) as fh:
            for line in fh:
                ev = json.loads(line)
                if ev.get("Event") == "SparkListenerTaskEnd":
                    m = ev.get("Task Metrics") or {}
                    s = stages.setdefault(ev["Stage ID"], Counter())
                    s["tasks"] += 1
                    s["run_s"] += m.get("Executor Run Time", 0) / 1e3
                    s["cpu_s"] += m.get("Executor CPU Time", 0) / 1e9
                    s["gc_s"] += m.get("JVM GC Time", 0) / 1e3
                    s["deser_s"] += m.get("Executor Deserialize CPU Time", 0) / 1e9
                    sr = m.get("Shuffle Read Metrics") or {}
                    sw = m.get("Shuffle Write Metrics") or {}
                    s["shuffle_read_mb"] += (sr.get("Remote Bytes Read", 0) + sr.get("Local Bytes Read", 0)) / 1e6
                    s["shuffle_write_mb"] += sw.get("Shuffle Bytes Written", 0) / 1e6
                    s["disk_spill_mb"] += m.get("Disk Bytes Spilled", 0) / 1e6
                    s["out_mb"] += (m.get("Output Metrics") or {}).get("Bytes Written", 0) / 1e6
                    s["in_mb"] += (m.get("Input Metrics") or {}).get("Bytes Read", 0) / 1e6
                elif ev.get("Event") == "SparkListenerStageCompleted":
                    info = ev["Stage Info"]
                    s = stages.setdefault(info["Stage ID"], Counter())
                    s["name"] = info["Stage Name"]
                    s["wall_s"] = (info.get("Completion Time", 0) - info.get("Submission Time", 0)) / 1e3
    return [dict(v, stage=k) for k, v in sorted(stages.items())]


def spark_profile(corpus: Path, master: str) -> None:
    log_dir = tempfile.mkdtemp(prefix="kf-eventlog-")
    os.environ["PYSPARK_SUBMIT_ARGS"] = (f"--conf spark.eventLog.enabled=true --conf spark.eventLog.compress=false "
                                         f"--conf spark.eventLog.dir=file://{log_dir} "
                                         "pyspark-shell")
    from forensics.commands.common import start_spark
    from forensics.ingest import events_stay_in_python, release, run_ingest, write_outputs
    from forensics.jvm_archive import in_use
    from forensics.sources import collect_inputs

    work = Path(tempfile.mkdtemp(prefix="kf-profile-"))
    marks = []

    tracker = CpuTracker()

    def mark(name):
        marks.append((name, time.perf_counter(), tracker.totals(), load_avg()))

    try:
        inputs = collect_inputs([str(corpus)], work)
        tracker.__enter__()
        mark("begin")
        # as `kafka-forensics ingest` starts it: C1 only when the events stay in Python (forensics.spark.
        # driver_jit_options); a session started otherwise compiles with C2 as well, which the command never does
        spark = start_spark(master, rows_in_python=events_stay_in_python(inputs))
        mark("session start")
        jvm_options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "")
        res = run_ingest(spark, inputs, cluster="bench")
        mark("run_ingest")
        write_outputs(res, work / "out")
        mark("write_outputs")
        release(res)
        spark.stop()
        tracker.__exit__(None, None, None)
        print(f"corpus {corpus}: {res.summary_json['totals']}")
        print(f"driver JVM options: {jvm_options}; class "
              f"archive {in_use() or 'none'} (mapped only if written by this install: forensics.jvm_archive)")
        for (_, t0, c0, _), (name, t1, c1, load) in zip(marks, marks[1:]):
            print(f"{name:14s} wall {t1 - t0:6.1f} s  CPU " + ", ".join(f"{k} {c1[k] - c0[k]:.1f}" for k in
                                                                        ("driver", "jvm", "python workers"))
                  + f"  (load {load:.1f}); JVM threads: "
                  + ", ".join(f"{k[5:]} {c1[k] - c0[k]:.1f}" for k in sorted(c1) if k.startswith("jvm: ")))
        print("stages (tasks' executor run / JVM CPU / GC seconds, shuffle MB):")
        for s in _stage_table(log_dir):
            print(f"  {s['stage']:3d} {str(s.get('name', '?'))[:60]:60s} tasks {s.get('tasks', 0):4d} wall {s.get('wall_s', 0):6.1f} "
                  f"run {s.get('run_s', 0):6.1f} cpu {s.get('cpu_s', 0):6.1f} gc {s.get('gc_s', 0):5.1f} "
                  f"shuffle r/w {s.get('shuffle_read_mb', 0):.0f}/{s.get('shuffle_write_mb', 0):.0f} MB "
                  f"in {s.get('in_mb', 0):.0f} out {s.get('out_mb', 0):.0f} MB spill {s.get('disk_spill_mb', 0):.0f}")
    finally:
        tracker._stop.set()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(log_dir, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--part", choices=("spark", "worker", "both"), default="both")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--top", type=int, default=0)
    args = ap.parse_args()
    corpus = Path(args.corpus)
    if args.part in ("worker", "both"):
        worker_profile(corpus, args.top)
    if args.part in ("spark", "both"):
        spark_profile(corpus, args.master)


if __name__ == "__main__":
    main()
