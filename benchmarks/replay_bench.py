"""Replay speed: events/s of the engine on one core, and the speed-up of partition shards on 2 executors.

Run from the repo root (one command; corpus and events under a temporary folder, removed at the end):

    .venv/bin/python benchmarks/replay_bench.py [--size-gb 2] [--days 3] [--runs 3] [--no-standalone] [--pin]
        [--interleave] [--record]

1. A corpus (30 brokers, 100,000 partitions) is generated and ingested once with Spark; its events
   (all but raw ZooKeeper txns, as ``postmortem`` collects them) are written to Parquet.
2. One core: a fresh Python process reads them, orders them as ``forensics.pipeline.collect_events``
   does, and times ``replay_engine.api.replay_cluster`` alone (``--runs`` times): events/s by CPU time
   (the engine's speed on one core, whatever else runs on the machine) and by wall time. Goal: 300,000/s.
3. Distributed: ``forensics.audit.distributed.replay_on_executors`` over the Parquet events, in a fresh
   Spark per configuration: ``local[1]`` with 1 shard (the baseline: one core through Spark) and
   ``local[2]`` with 2 shards (partitions split over 2 executor cores). Speed-up = baseline / 2 executors.
4. The same on a Spark standalone cluster on 127.0.0.1 (a master and workers of 1 core each, started
   from the pyspark installation): 1 worker with 1 shard, then 2 workers with 2 shards; every
   configuration's output (timeline rows and merged replay) is hashed and compared.
With ``--pin`` each executor gets a CPU of its own, as executors do on a cluster: ``local[1]`` runs on one
CPU and ``local[2]`` on two; standalone worker i (and its executor) on CPU i, the driver and the master on
CPU 0 with the first worker, so the second worker adds its CPU and nothing else. Without it a 1-core
executor's JVM threads (JIT compiler, GC, Arrow transfer) and its Python worker spread over every CPU of
the machine, so "1 executor" uses more than one core's worth.
With ``--interleave`` the two configurations of a comparison are up at once, each in its own process, and take
turns run by run (a b, a b, ...): on a host whose speed drifts, the runs of one are no longer all in a slower
stretch than the other's; the line then gives the ratio of each pair of runs too. Each waits one run of the
other between its own: under PySpark's minute of idle before it stops a Python worker while runs stay under
a minute (``interleaved``).
CPU seconds count the whole process tree (driver, JVM, Python workers; a standalone cluster's master,
workers and executors), so a loaded machine shows in the wall times, not in them.
With ``--against OTHER`` (another checkout of this repository, e.g. ``git worktree add /tmp/base REV``) step 2 runs
in turns with OTHER's code on the same events (this, other, this, other: ``--against-rounds``), each in a fresh
process, and the line gives both medians and the ratio of events/s: a refactor's "no slower", same host, same run.
``--no-distributed`` leaves out steps 3 and 4.
With ``--record`` the result is appended to its section of benchmarks/journal/ (its area's file).
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
from _common import (REPO, Standalone, host_cpu, load_avg, make_corpus, med, now_utc, on_cpus,  # noqa: E402
                     record, runs_text, tree_cpu, vm_hwm_mb)

SECTION = "## replay (engine events/s on one core; partition shards on 2 executors)"


def events_parquet(corpus: Path, out: Path, master: str, layout: str = "ingest") -> dict:
    """Ingest once; the replay's input events as Parquet (reused when present). ``layout``: "ingest", the
    ingest's own output partitions as Spark writes them; "audit", the audit's events table (one sorted
    file per cluster and day, ``forensics.audit.store``), which is what ``audit`` replays."""
    stamp = out / "_bench.json"
    if stamp.exists():
        return json.loads(stamp.read_text())
    from pyspark.sql import functions as F

    from forensics.audit import plan_groups
    from forensics.audit.run import EVENT_SORT
    from forensics.audit.store import Store, dated
    from forensics.ingest import release, run_ingest
    from forensics.sources import collect_inputs
    from forensics.spark import get_spark

    spark = get_spark(master)
    tmp = Path(tempfile.mkdtemp(prefix="kf-replay-bench-"))
    try:
        t = time.perf_counter()
        res = run_ingest(spark, collect_inputs([str(corpus)], tmp), cluster="bench")
        events = res.events.where(F.col("event_type") != "zk_txn")
        if layout == "audit":
            events = dated(events, "ts")
            Store(out / "audit").write_spark(events, "events", EVENT_SORT, footer=plan_groups.footer)
            (out / "events").symlink_to(Store(out / "audit").table("events"), target_is_directory=True)
        else:
            events.write.mode("overwrite").parquet(str(out / "events"))
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

    from forensics.pipeline import drop_log_copies, replay_order
    from parsers.schema import event_from_row
    from replay_engine.api import replay_cluster

    t = time.perf_counter()
    table = pq.read_table(parquet)
    if "date" in table.column_names:  # the audit's layout: cluster and date are directory names
        table = table.drop_columns(["date"])
        table = table.set_column(table.schema.get_field_index("cluster"), "cluster", table.column("cluster").cast("string"))
    table = table.set_column(table.schema.get_field_index("ts"), "ts", table.column("ts").cast("int64"))
    events = [event_from_row(r) for r in table.to_pylist()]
    del table
    events.sort(key=replay_order)
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


def output_digest(dist) -> str:
    """SHA-256 of what the replay hands on: the timeline rows in a fixed order, and each cluster's merged
    replay (outages, tenures, periods, agreement, findings) as sorted JSON. Equal digests: the same bytes."""
    import dataclasses
    import hashlib

    h = hashlib.sha256()
    cols = dist.timeline.columns
    for r in dist.timeline.orderBy(*cols).collect():
        h.update(json.dumps([r[c] for c in cols], default=str).encode())
    for c in sorted(dist.merged):
        m = dataclasses.asdict(dist.merged[c])
        m.pop("shards")  # how many shards ran is the run's setting, not its output
        h.update(json.dumps(m, sort_keys=True, default=str).encode())
    return h.hexdigest()


def spark_jobs(evdir: Path) -> list[dict]:
    """Spark's event log (uncompressed JSON lines): each job's description, start and end (epoch ms), and
    its longest task's run time."""
    jobs: dict[int, dict] = {}
    stage_job: dict[int, int] = {}
    for f in sorted(evdir.rglob("*")):
        if not f.is_file() or f.name.startswith("."):
            continue
        for line in f.open(encoding="utf-8", errors="replace"):
            e = json.loads(line)
            kind = e.get("Event")
            if kind == "SparkListenerJobStart":
                desc = (e.get("Properties") or {}).get("spark.job.description") or "other"
                jobs[e["Job ID"]] = {"desc": desc, "start": e["Submission Time"], "end": None, "task_max_s": 0.0}
                stage_job.update({sid: e["Job ID"] for sid in e["Stage IDs"]})
            elif kind == "SparkListenerJobEnd" and e["Job ID"] in jobs:
                jobs[e["Job ID"]]["end"] = e["Completion Time"]
            elif kind == "SparkListenerTaskEnd" and e.get("Stage ID") in stage_job:
                run = ((e.get("Task Metrics") or {}).get("Executor Run Time") or 0) / 1e3
                j = jobs.get(stage_job[e["Stage ID"]])
                if j is not None:
                    j["task_max_s"] = max(j["task_max_s"], run)
    return [j for _, j in sorted(jobs.items()) if j["end"] is not None]


def wall_split(jobs: list[dict], t0: float, t1: float) -> dict[str, float]:
    """Seconds of the run [t0, t1] (epoch s) in Spark jobs, by description, and outside any job (the
    driver's own work: planning, pickles, the merge; and Spark's scheduling between jobs)."""
    out: dict[str, float] = {}
    busy = 0.0
    for j in jobs:
        a, z = max(j["start"] / 1e3, t0), min(j["end"] / 1e3, t1)
        if z <= a:
            continue
        out[j["desc"]] = out.get(j["desc"], 0.0) + (z - a)
        busy += z - a
        if j["desc"].endswith(": shards"):
            out["slowest shard task"] = max(out.get("slowest shard task", 0.0), j["task_max_s"])
    out["outside jobs"] = (t1 - t0) - busy
    return out


class Replays:
    """A fresh Spark session (in this process) replaying the Parquet events with ``replay_on_executors``, one
    timed run per ``run()``. CPU seconds are this process tree's plus those of ``pids`` (a standalone
    cluster's master and workers, whose trees hold the executors). Spark's event log tells how each run's
    wall time splits into jobs (``finish``)."""

    def __init__(self, parquet: str, master: str, shards: int, pids: tuple[int, ...] = ()):
        self.evdir = Path(tempfile.mkdtemp(prefix="kf-replay-events-"))
        conf = (f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file://{self.evdir} "
                "--conf spark.eventLog.compress=false --conf spark.eventLog.rolling.enabled=false")
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"{conf} {os.environ.get('PYSPARK_SUBMIT_ARGS') or 'pyspark-shell'}"
        from forensics.spark import get_spark

        self.parquet, self.master, self.shards, self.pids = parquet, master, shards, pids
        self.audit = any(Path(parquet).glob("cluster=*/date=*"))
        t = time.perf_counter()
        self.spark = get_spark(master)
        self.start_s = time.perf_counter() - t
        self.walls, self.cpus, self.tasks, self.spans, self.info = [], [], [], [], {}
        self.others, self.steals = [], []  # per run: the rest of the machine's CPU seconds; the hypervisor's

    def _cpu(self) -> float:
        return tree_cpu() + sum(tree_cpu(p) for p in self.pids)

    def _replay(self, sink=None):
        from forensics.audit.distributed import replay_on_executors
        from forensics.audit.plan_groups import stored_groups
        from forensics.audit.run import events_table_schema
        from forensics.audit.store import Store

        # the audit's table is read as the audit reads it: with its schema given (no job inferring it) and
        # the plan's groups from its files' footers (none there: counted by a Spark job, as for the ingest's)
        spark, parquet = self.spark, self.parquet
        events = (spark.read.schema(events_table_schema()) if self.audit else spark.read).parquet(parquet)
        store = Store(Path(parquet).resolve().parent.parent)
        groups = stored_groups(store, ["bench"]) if self.audit else None
        # as the audit: shard tasks read the store's files themselves, unless told to route by Spark (--spark-route)
        files = store.files("events", ["bench"]) if groups is not None and not os.environ.get(SPARK_ROUTE) else None
        return replay_on_executors(spark, events, self.shards, groups=groups, sink=sink, files=files)

    def run(self) -> float:
        (h, st), c, t, t0 = host_cpu(), self._cpu(), time.perf_counter(), time.time()
        counted: list[int] = []
        # the timeline's consumer, as the audit's write is: its action runs the shards
        dist = self._replay(sink=lambda timeline, clusters: counted.append(timeline.count()))
        self.walls.append(time.perf_counter() - t)
        self.spans.append((t0, time.time()))
        self.cpus.append(self._cpu() - c)
        h1, st1 = host_cpu()
        self.others.append(max(0.0, (h1 - h) - self.cpus[-1]))
        self.steals.append(st1 - st)
        m = dist.merged["bench"]
        # one cluster: a cluster replayed again whole is counted again, all its rows
        self.info = {"intervals": counted[-1], "replayed_whole": dist.replayed_whole, "shards_used": m.shards,
                     "leaderless": len(m.leaderless) if hasattr(m, "leaderless") else None,
                     "read_files": bool(dist.read_files)}
        self.tasks.append(dist.task_cpu["bench"])
        return self.walls[-1]

    def finish(self) -> dict:
        # after the timing: the output's digest, from a replay that keeps its timeline
        dist = self._replay()
        self.info["digest"] = output_digest(dist)
        dist.release()
        self.spark.stop()
        jobs = spark_jobs(self.evdir)
        shutil.rmtree(self.evdir, ignore_errors=True)
        return {"master": self.master, "shards": self.shards, "spark_start_s": self.start_s, "wall": self.walls,
                "cpu": self.cpus, "others": self.others, "steal": self.steals, "tasks": self.tasks,
                "split": [wall_split(jobs, a, z) for a, z in self.spans], **self.info}


def distributed(parquet: str, master: str, shards: int, runs: int, pids: tuple[int, ...] = ()) -> dict:
    """``runs`` replays in this (fresh) process, one after the other."""
    r = Replays(parquet, master, shards, pids)
    for _ in range(runs):
        r.run()
    return r.finish()


def serve(parquet: str, master: str, shards: int, pids: tuple[int, ...] = ()) -> None:
    """``Replays`` driven from stdin, one line per command (``run``, ``finish``); answers on stdout, each a JSON
    line after the marker ``REPLY``: how the interleaved comparison (``interleaved``) runs two configurations."""
    r = Replays(parquet, master, shards, pids)
    print("REPLY " + json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "run":
            print("REPLY " + json.dumps({"wall": r.run()}), flush=True)
        elif cmd == "finish":
            print("REPLY " + json.dumps(r.finish()), flush=True)
            return


class _Server:
    """A ``serve`` child process."""

    def __init__(self, args: list, cpus: int | None):
        self.err = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen([sys.executable, __file__, "_serve", *map(str, args)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, text=True, cwd=REPO,
                                     preexec_fn=on_cpus(range(cpus)) if cpus else None)

    def ask(self, cmd: str | None = None) -> dict:
        if cmd is not None:
            self.proc.stdin.write(cmd + "\n")
            self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith("REPLY "):
                return json.loads(line[len("REPLY "):])
        self.err.seek(0)
        raise SystemExit(f"replay server failed:\n{self.err.read()[-3000:]}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.err.close()


def interleaved(a: tuple[list, int | None], b: tuple[list, int | None], runs: int) -> tuple[dict, dict]:
    """Two configurations (``serve`` arguments, CPUs to pin to), each in its own process and Spark session,
    both up at once and taking turns: run i of one, then of the other (a b, a b, ...). A host that speeds up or
    slows down during the measurement then touches both alike; run i of each is a pair.

    Not swapped every round (a b, b a, ...): then the faster configuration waited two of the other's runs every
    other round, and past a minute PySpark stops an idle Python worker (PythonWorkerFactory's idle timeout), so
    every other run of it started on fresh workers (seen in their process ids, 2026-11-27 14:08-14:16) and ran
    ~1.2 s slower (local[2] at 22 s a run: 22.8, 22.8, 22.9 after the long wait against 21.2-21.6 after none),
    a cost the one-executor baseline, whose waits stayed under a minute, never paid. Each now waits one run of
    the other; an audit's executors, busy task after task, keep theirs."""
    servers = [_Server(*a), _Server(*b)]
    try:
        for s in servers:
            s.ask()
        for _ in range(runs):
            for s in servers:
                s.ask("run")
        return servers[0].ask("finish"), servers[1].ask("finish")
    finally:
        for s in servers:
            s.close()


def _shards(run: dict) -> str:
    """The shards the replay used: more than asked when a shard would exceed MAX_SHARD_EVENTS."""
    n = run.get("shards_used", run["shards"])
    more = f" (asked {run['shards']}; raised by MAX_SHARD_EVENTS)" if n != run["shards"] else ""
    return f"{n} shard{'s' if n != 1 else ''}{more}"


def _steps(tasks: dict) -> str:
    """The slowest shard's CPU seconds by step."""
    i = max(range(len(tasks["shards"])), key=lambda k: tasks["shards"][k])
    st = tasks["steps"][i]
    return ", ".join(f"{k} {st[k]:.1f}" for k in ("convert", "phase1", "replay", "output") if st.get(k))


def _split(split: dict) -> str:
    return ", ".join(f"{k} {v:.1f}s" for k, v in split.items())


def makespan(tasks: list[float], cores: int) -> float:
    """When the last of ``tasks`` (seconds each) ends on ``cores`` cores, each task, longest first, to the core
    that frees first. Spark hands tasks to free cores in its own order, so this is an estimate, exact when there
    are no more tasks than cores."""
    load = [0.0] * max(1, cores)
    for t in sorted(tasks, reverse=True):
        load[load.index(min(load))] += t
    return max(load)


def _host(name: str, run: dict) -> str:
    o, st = run["others"], run["steal"]
    return f"{name} {med(o):.1f}, {max(o):.1f}, steal {med(st):.1f}, {max(st):.1f}"


def _speedup_line(what: str, one_name: str, two_name: str, one: dict, two: dict, n: int) -> str:
    b, d = med(one["wall"]), med(two["wall"])
    out = (f"{what}: {one_name} median {b:.1f}s ({runs_text(one['wall'])}; {med(one['cpu']):.1f} CPU s) = "
           f"{n / b:,.0f} events/s; {two_name} median {d:.1f}s ({runs_text(two['wall'])}; {med(two['cpu']):.1f} CPU s) "
           f"= {n / d:,.0f} events/s: **speed-up {b / d:.2f}x** (goal 1.8x: {'met' if b / d >= 1.8 else 'missed'}; "
           f"CPU seconds {med(two['cpu']) / med(one['cpu']):.2f}x the baseline's; fastest runs "
           f"{min(one['wall']):.1f} -> {min(two['wall']):.1f} s: {min(one['wall']) / min(two['wall']):.2f}x; "
           f"run by run {runs_text([x / y for x, y in zip(one['wall'], two['wall'])], '{:.2f}')}x)")
    # Load-proof: the Python tasks' own CPU seconds. The shards run side by side, each with its own phase 1
    # (logs alone), or after phase 1's own task on big clusters: the critical path is that task (if any) plus
    # the shards as the configuration's cores can run them (one core: one after the other; MAX_SHARD_EVENTS
    # can give the baseline several).
    crit1 = med([t.get("phase1_task", 0.0) + makespan(t["shards"], 1) for t in one["tasks"]])
    crit2 = med([t.get("phase1_task", 0.0) + makespan(t["shards"], 2) for t in two["tasks"]])
    out += (f"; tasks' own CPU s (median run): baseline {crit1:.1f} (last run's slowest shard: "
            f"{_steps(one['tasks'][-1])}), shards "
            f"{', '.join(f'{x:.1f}' for x in two['tasks'][-1]['shards'])} (last run; slowest "
            f"{_steps(two['tasks'][-1])}), critical path {crit2:.1f}: {crit1 / crit2:.2f}x")
    # what else the host ran during each run: a miss on a busy or stolen host is the host's, not the replay's
    out += f"; the rest of the host during the runs (CPU s, median, max): {_host(one_name, one)}; {_host(two_name, two)}"
    out += f"; wall by Spark job (last run): {one_name}: {_split(one['split'][-1])}; {two_name}: {_split(two['split'][-1])}"
    if two["replayed_whole"]:
        out += f"; replayed whole: {two['replayed_whole']}"
    return out


SPARK_ROUTE = "KF_BENCH_SPARK_ROUTE"


def _child(mode: str, *args, cpus: int | None = None, checkout: Path | None = None) -> dict:
    """``mode`` in a fresh process; with ``cpus``, that process and all it starts (the local master's
    JVM and Python workers) run on that many CPUs only; with ``checkout``, that checkout's own copy of this script
    and its code (its ``_common`` puts it first on the path)."""
    script = Path(__file__) if checkout is None else checkout / "benchmarks" / Path(__file__).name
    out = subprocess.run([sys.executable, str(script), mode, *map(str, args)], capture_output=True, text=True,
                         cwd=checkout or REPO, preexec_fn=on_cpus(range(cpus)) if cpus else None)
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _against(other: Path, parquet: str, runs: int, rounds: int, first: dict) -> str:
    """The one-core replay of this checkout and ``other`` in turns on the same events (``first``: this checkout's
    first round, already run): both medians and the ratio of events/s."""
    mine, theirs = [first], []
    for k in range(rounds):
        theirs.append(_child("_one_core", parquet, runs, checkout=other))
        if k + 1 < rounds:
            mine.append(_child("_one_core", parquet, runs))
    rev = subprocess.run(["git", "-C", str(other), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip() or "?"
    here = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "?"
    c1, c0 = med([c for r in mine for c in r["cpu"]]), med([c for r in theirs for c in r["cpu"]])
    n1, n0 = mine[0]["events"], theirs[0]["events"]
    return (f"against {rev} on the same events, in turns ({rounds} rounds of {runs} runs each, a fresh process per "
            f"round): this ({here}) {n1:,} events, median {c1:.2f} CPU s = {n1 / c1:,.0f} events/s; {rev} {n0:,} events, "
            f"median {c0:.2f} CPU s = {n0 / c0:,.0f} events/s; **this / {rev}: {(n1 / c1) / (n0 / c0):.2f}x** "
            f"events/s (CPU s, this {', '.join(f'{c:.2f}' for r in mine for c in r['cpu'])}; {rev} "
            f"{', '.join(f'{c:.2f}' for r in theirs for c in r['cpu'])})")


def _finish(args, info: dict, loads: list, line1: str, lines: list[str], shared: bool) -> None:
    print(f"load average: {runs_text(loads)}")
    if args.record:
        cmd = (f"`.venv/bin/python benchmarks/replay_bench.py --size-gb {args.size_gb:g} --days {args.days:g} "
               f"--runs {args.runs}{' --no-standalone' if args.no_standalone else ''}"
               f"{' --interleave' if args.interleave else ''}"
               f"{' --layout audit' if args.layout == 'audit' else ''}"
               f"{' --pin' if args.pin else ''}"
               f"{' --pin-standalone shared' if shared else ''}"
               f"{' --against OTHER' if args.against else ''}"
               f"{f' --against-rounds {args.against_rounds}' if args.against and args.against_rounds != 2 else ''}"
               f"{' --no-distributed' if args.no_distributed else ''} --record`")
        body = "".join(f"  - {x}\n" for x in [line1, *lines])
        layout = ("the audit's events table (a sorted file per day)" if args.layout == "audit"
                  else "the ingest's output partitions")
        record(SECTION, f"- {now_utc()}, {os.cpu_count()} cores, load average {runs_text(loads)} (start, after each "
                        f"step). Corpus `{info['command']}`; events read from {layout}.\n{body}  Command: {cmd}\n")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_serve":
        pids = tuple(int(x) for x in sys.argv[5].split(",")) if len(sys.argv) > 5 else ()
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]), pids)
        return
    if len(sys.argv) > 1 and sys.argv[1] in ("_one_core", "_distributed"):
        if sys.argv[1] == "_one_core":
            print(json.dumps(one_core(sys.argv[2], int(sys.argv[3]))))
        else:
            pids = tuple(int(x) for x in sys.argv[6].split(",")) if len(sys.argv) > 6 else ()
            print(json.dumps(distributed(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), pids)))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-gb", type=float, default=2.0)
    ap.add_argument("--days", type=float, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", help="folder for the corpus and events (kept; reused)")
    ap.add_argument("--no-standalone", action="store_true", help="skip the Spark standalone cluster runs")
    ap.add_argument("--pin", action="store_true",
                    help="give each executor its own CPU, as on a cluster: local[N] runs on N CPUs; standalone worker i "
                         "and its executor on CPU i, the driver and master on CPU 0 (so the second worker adds one CPU)")
    ap.add_argument("--pin-standalone", choices=("worker", "shared"), default="worker",
                    help="with --pin, the standalone clusters' CPUs: each worker on a CPU of its own with the driver "
                         "and master on the first (worker), or the whole cluster and its driver on as many CPUs as "
                         "it has workers, shared out by the system as for local[N] (shared)")
    ap.add_argument("--layout", choices=("ingest", "audit"), default="ingest",
                    help="the events as the ingest's output partitions (default), or as the audit's events table "
                         "(one sorted file per cluster and day), which is what `audit` replays")
    ap.add_argument("--interleave", action="store_true",
                    help="run the two configurations of each comparison at once, in turns (a b, a b, ...), instead of "
                         "all runs of one then all of the other: a host whose speed drifts touches both alike")
    ap.add_argument("--spark-route", action="store_true",
                    help="with --layout audit: route the events to the shards by a Spark scan and shuffle, as for "
                         "events that are not the audit's store files, instead of each shard task reading the files")
    ap.add_argument("--against", type=Path, help="another checkout: the one-core replay of both, in turns")
    ap.add_argument("--against-rounds", type=int, default=2)
    ap.add_argument("--no-distributed", action="store_true", help="only the one-core replay (steps 1-2)")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    shared = args.pin and args.pin_standalone == "shared"  # --pin-standalone counts only with --pin
    if args.spark_route:
        os.environ[SPARK_ROUTE] = "1"  # the child processes inherit it

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="kf-bench-"))
    corpus = work / f"corpus-{args.size_gb:g}gb-{args.days:g}d"
    try:
        info = make_corpus(corpus, args.size_gb, args.days)
        evname = f"events-{args.size_gb:g}gb-{args.days:g}d" + ("-audit" if args.layout == "audit" else "")
        ev = events_parquet(corpus, work / evname, "local[2]", args.layout)
        parquet = str(work / evname / "events")
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
        lines: list[str] = []
        if args.against:
            line_vs = _against(args.against.resolve(), parquet, args.runs, args.against_rounds, one)
            print(line_vs, flush=True)
            lines.append(line_vs)
            loads.append(load_avg())
        if args.no_distributed:
            _finish(args, info, loads, line1, lines, shared)
            return
        pin = " (pinned: each executor core on a CPU of its own)" if args.pin else ""
        if args.interleave:
            base, two = interleaved(([parquet, "local[1]", 1], 1 if args.pin else None),
                                    ([parquet, "local[2]", 2], 2 if args.pin else None), args.runs)
        else:
            base = _child("_distributed", parquet, "local[1]", 1, args.runs, cpus=1 if args.pin else None)
            loads.append(load_avg())
            two = _child("_distributed", parquet, "local[2]", 2, args.runs, cpus=2 if args.pin else None)
        loads.append(load_avg())
        print(f"local[1], 1 shard: {runs_text(base['wall'])} s", flush=True)
        print(f"local[2], 2 shards: {runs_text(two['wall'])} s", flush=True)
        line2 = _speedup_line("replay_on_executors (Parquet events -> shards, each running phase 1 -> timeline rows "
                              f"counted, shard outputs merged on the driver){pin}", f"local[1] with {_shards(base)}",
                              f"local[2] with {_shards(two)}", base, two, n)
        line2 += f"; against the in-process one-core replay: {wall_med / med(two['wall']):.2f}x"
        line2 += (f"; output (timeline rows and merged replay, SHA-256) "
                  f"{'identical' if base['digest'] == two['digest'] else 'DIFFERENT'} in local[1] and local[2] "
                  f"({two['digest'][:16]})")
        print(line2, flush=True)
        lines.append(line2)
        if not args.no_standalone:
            pin_w = args.pin and not shared

            def drv(n: int) -> int | None:  # the driver on CPU 0, with the master and the first worker; or on all n
                return (n if shared else 1) if args.pin else None

            if args.interleave:
                with Standalone(1, pin=pin_w, shared=shared) as one_w, Standalone(2, pin=pin_w, shared=shared) as two_w:
                    sa1, sa2 = interleaved(([parquet, one_w.url, 1, ",".join(map(str, one_w.pids))], drv(1)),
                                           ([parquet, two_w.url, 2, ",".join(map(str, two_w.pids))], drv(2)),
                                           args.runs)
            else:
                with Standalone(1, pin=pin_w, shared=shared) as one_w:
                    sa1 = _child("_distributed", parquet, one_w.url, 1, args.runs, ",".join(map(str, one_w.pids)),
                                 cpus=drv(1))
                loads.append(load_avg())
                with Standalone(2, pin=pin_w, shared=shared) as two_w:
                    sa2 = _child("_distributed", parquet, two_w.url, 2, args.runs, ",".join(map(str, two_w.pids)),
                                 cpus=drv(2))
            loads.append(load_avg())
            pin_sa = ""
            if pin_w:
                pin_sa = " (pinned: worker i and its executor on CPU i; driver and master on CPU 0)"
            elif shared:
                pin_sa = (" (pinned as local[N]: N workers, their executors, the master and the driver on N CPUs, "
                          "which the system shares out)")
            line3 = _speedup_line(f"Spark standalone on 127.0.0.1 (workers of 1 core, 2 GB){pin_sa}", f"1 worker with {_shards(sa1)}",
                                  f"2 workers with {_shards(sa2)}", sa1, sa2, n)
            same = len({base["digest"], two["digest"], sa1["digest"], sa2["digest"]}) == 1
            line3 += (f"; output (timeline rows and merged replay, SHA-256) {'identical' if same else 'DIFFERENT'} "
                      f"across local[1], local[2] and both standalone runs ({two['digest'][:16]})")
            print(line3, flush=True)
            lines.append(line3)
        _finish(args, info, loads, line1, lines, shared)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
