"""The controller replay on the executors: each cluster split into partition shards
(``replay_engine.sharding.shard``), one Spark task per shard; the driver gets back only what is small
(outages, tenures, broker periods, agreement counts), never the events or the timeline.

1. One aggregation job gives each shard the whole cluster's context (how far the evidence
   reaches, ZooKeeper or logs alone, KRaft or not); for a KRaft cluster one more reads each file's
   writer and the topic ids' names with the replay's own code (``kraft_contexts``).
2. Events are routed by built-in expressions (CRC-32 of ``topic-partition``, the same rule as
   ``replay_engine.sharding.shard.routes``): a partition's to its own shard, cluster-wide events to every
   shard and, from logs alone, controller records as phase 1 needs them (below). When the events
   are the audit store's files and a cluster has few shards (``reads_files``), its shard tasks read
   the files themselves and keep their rows by the same rule (``forensics.audit.file_shards``):
   no scan-and-route stage before the shards.
3. A task per shard (light shards packed together: ``forensics.audit.placement``) replays each
   (cluster, shard) group of its partition (``streamed_groups.apply_in_tasks``: not sorted by the group
   first, as ``applyInArrow`` would). From logs alone, while a shard's input
   stays within MAX_SHARD_EVENTS with every controller record added, each task first runs phase 1
   (``replay_engine.sharding.cluster_pass``) over the cluster-wide events and records it holds, the same in
   every shard, and keeps of the other partitions' records only those phase 1 kept: no job of its
   own, no broadcast, both cores busy. Bigger clusters run phase 1 once, as a task per cluster
   before the shards, and only the records it kept go to every shard. The timeline comes back as
   typed rows, consumed by the caller's sink (a count, the audit's write: its action runs the shards),
   the rest as one pickled ``ShardOutput`` per shard (``forensics.audit.shard_results``).
4. Shards whose journals disagree (among themselves or with phase 1) mean the split was not
   exact for that cluster: it is replayed again as one task, whole. A KRaft cluster's shards that
   found other lines showing a leader active than phase 1 foresaw run again with those first
   (``replay_engine.kraft.split``), up to ``KRAFT_ROUNDS``.
"""
from __future__ import annotations

import dataclasses
import pickle
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc

from forensics.audit import file_shards
from forensics.audit.placement import one_task_per_group, task_key
from forensics.audit.plan_groups import sort_rows, spark_groups
from forensics.audit.shard_results import channel, missing, received, send
from forensics.audit.streamed_groups import apply_in_groups, apply_in_tasks
from forensics.audit.task_io import task_events, timeline_columns
from forensics.progress import Progress
from parsers.common.gc_pause import cycle_gc_paused
from parsers.schema import FIELD_NAMES
from replay_engine.sharding.cluster_pass import ClusterPass
from replay_engine.zk.from_events import ClusterContext
from replay_engine.kraft.facts import is_kraft_counts
from replay_engine.kraft.context import LEADER_LINE, WIDE_TYPES, KraftSeen, kraft_seen

# the lines a KRaft shard may find showing a leader active (KraftLines._observed: a leader's or a follower's)
LINE_TYPES = ("become_leader", "become_follower")
from replay_engine.sharding.shard import KRAFT_ROUNDS, RECORD_EVENT_TYPES, MergedReplay, ShardsDisagree, merge, next_round
from replay_engine.common.timeline import timeline_arrow_schema
from forensics.worker_imports import in_workers

_TIMELINE = timeline_arrow_schema()
OUT_ARROW = pa.schema(list(_TIMELINE) + [pa.field("_bucket", pa.int32())])


@dataclass(frozen=True)
class ClusterPlan:
    buckets: int
    context: ClusterContext
    kraft: bool
    whole: bool  # replay as one task without shard journals (a small KRaft cluster, or a fallback)
    # Every shard's input stays within MAX_SHARD_EVENTS with all controller records added (``phase1_fits``,
    # decided on the driver): from logs alone, phase 1 then runs in every shard, else once, as a task of its own.
    records_fit: bool = False
    events: int = 0  # the cluster's events (a task's share of the work: forensics.audit.placement.pack)
    kpass: Any = None  # a split KRaft cluster: its phase 1 (replay_engine.kraft.split), once run

    @property
    def kraft_split(self) -> bool:
        return self.kraft and not self.whole

    @property
    def phase1(self) -> bool:
        """Split from logs alone: the cluster-wide state is learnt from the controller's records (phase 1)."""
        return not self.whole and not self.context.zk and self.buckets > 1

    @property
    def phase1_in_shards(self) -> bool:
        return self.phase1 and self.records_fit and not self.kraft

    @property
    def phase1_job(self) -> bool:
        return self.phase1 and (self.kraft or not self.records_fit)


@dataclass
class DistributedReplay:
    merged: dict[str, MergedReplay]
    timeline: Any  # Spark DataFrame with the partition_timeline schema; None when a sink consumed it
    replayed_whole: dict[str, str] = field(default_factory=dict)  # cluster -> why it was not split
    # each task's own CPU seconds (Python side): cluster -> {"shards": [s, ...], "phase1": [s within each shard],
    # "phase1_task": s (phase 1 as its own task), "steps": [by step, each shard]}
    task_cpu: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: list[Any] = field(default_factory=list)  # persisted DataFrames, released by release()
    kraft_rounds: dict[str, int] = field(default_factory=dict)  # a split KRaft cluster -> rounds it took (kraft_split)
    read_files: list[str] = field(default_factory=list)  # clusters whose shard tasks read their store files

    def release(self) -> None:
        for df in self.outputs:
            df.unpersist()


@contextmanager
def _described(spark, what: str):
    """Names the Spark jobs of a step (the UI and the event log show it; the benchmark reads it there)."""
    sc = spark.sparkContext
    sc.setJobDescription(what)
    try:
        yield
    finally:
        sc.setJobDescription(None)


def cluster_plans(spark, events, shards: int, groups: list[dict] | None = None,
                  whole_below_share: bool = False) -> dict[str, ClusterPlan]:
    """Per cluster: its context (the aggregates ``cluster_context`` computes in one process) and its split,
    folded on the driver from the events' plan groups (``forensics.audit.plan_groups``: a row per event
    type and broker's log window or so): ``groups`` as the audit store keeps them, else counted by one Spark job.
    ``whole_below_share``: a cluster is cut into ``shards`` only when it alone is more than a core's share of
    the run's events (``shares_cores``)."""
    if groups is None:
        with _described(spark, "replay: cluster plans"):
            groups = spark_groups(events)
    counts: dict[str, dict[str, int]] = {}
    contexts: dict[str, ClusterContext] = {}
    for r in sort_rows(groups):  # folded in a fixed order
        c = r["cluster"]
        per = counts.setdefault(c, {})
        per[r["event_type"]] = per.get(r["event_type"], 0) + r["n"]
        ctx = contexts.setdefault(c, ClusterContext())
        if not r["n_ts"]:
            continue
        ctx.trace_start = r["a"] if ctx.trace_start is None else min(ctx.trace_start, r["a"])
        ctx.trace_end = r["z"] if ctx.trace_end is None else max(ctx.trace_end, r["z"])
        if r["zk"]:
            ctx.zk = True
            lo, hi = ctx.zk_window if ctx.zk_window is not None else (r["a"], r["z"])
            ctx.zk_window = (min(lo, r["a"]), max(hi, r["z"]))
        if r["window"] is not None:
            key = (r["window"], int(r["broker_id"]))
            lo, hi = ctx.log_windows.get(key, (r["a"], r["z"]))
            ctx.log_windows[key] = (min(lo, r["a"]), max(hi, r["z"]))
    plans = {}
    sizes = {c: sum(per.values()) for c, per in counts.items()}
    total = sum(sizes.values())
    for cluster, ctx in contexts.items():
        kraft = is_kraft_counts(counts.get(cluster, {}))
        n = sizes.get(cluster, 0)
        records = sum(counts.get(cluster, {}).get(t, 0) for t in RECORD_EVENT_TYPES)
        cut = not whole_below_share or shares_cores(n, total, shards)
        k = shard_count(n, shards if cut else 1)
        # KRaft: phase 1 is always a task of its own (kraft_split.phase1), worth it only for shards of a task's weight
        small = k == 1 or -(-n // k) < MIN_TASK_EVENTS
        plans[cluster] = ClusterPlan(1 if kraft and small else k, ctx, kraft, kraft and small,
                                     records_fit=phase1_fits(n, records, k), events=n)
    split_kraft = sorted(c for c, p in plans.items() if p.kraft_split)
    if split_kraft and events is None:  # a split reads every file's writer and topic name: not in the groups
        plans.update({c: dataclasses.replace(plans[c], buckets=1, whole=True) for c in split_kraft})
    elif split_kraft:
        kraft_contexts(spark, events, {c: plans[c].context for c in split_kraft})
    return plans


def kraft_contexts(spark, events, contexts: dict[str, ClusterContext]) -> None:
    """What ``replay_engine.kraft.context.kraft_context`` adds to a KRaft cluster's context, by its own reading
    (``kraft_seen``) of each Spark partition's events, folded (``KraftSeen.merge``) on the driver."""
    from pyspark.sql import functions as F

    ev = events.where(F.col("cluster").isin(*sorted(contexts))).select(*_SEEN_COLUMNS)
    with _described(spark, "replay: KRaft contexts"):
        rows = ev.mapInArrow(in_workers(_seen_of), "cluster string, seen binary").collect()
    seen: dict[str, KraftSeen] = {}
    for r in rows:
        got = pickle.loads(r["seen"])
        seen[r["cluster"]] = got if r["cluster"] not in seen else seen[r["cluster"]].merge(got)
    for cluster, ctx in contexts.items():
        seen.get(cluster, KraftSeen({}, {})).into(ctx)


_SEEN_COLUMNS = ("cluster", "ts", "source_kind", "source_file", "broker_id", "topic", "logger", "detail")


def _seen_of(batches):
    """A Spark partition's rows of KRaft clusters -> one (cluster, pickled ``KraftSeen``) row per cluster."""
    from forensics.audit.task_io import events_of

    for batch in batches:
        t = pa.Table.from_batches([batch])
        t = t.set_column(t.schema.get_field_index("ts"), "ts", t.column("ts").cast(pa.int64()))
        for name in FIELD_NAMES:
            if name not in _SEEN_COLUMNS:
                t = t.append_column(name, pa.nulls(t.num_rows, pa.int32() if name == "source_sub" else pa.null()))
        clusters = sorted(c for c in set(t.column("cluster").to_pylist()) if c is not None)
        out = [pickle.dumps(kraft_seen(events_of(t.filter(pc.equal(t.column("cluster"), c))))) for c in clusters]
        yield pa.RecordBatch.from_pydict({"cluster": clusters, "seen": out},
                                         schema=pa.schema([("cluster", pa.string()), ("seen", pa.binary())]))


# What one task holds at once: a shard's rows, gathered whole by its Python worker (apply_in_tasks). Through
# applyInArrow, which hands a group over as one off-heap Arrow batch, 22 days of 100,000 partitions (1.69 million
# events) in 2 shards failed to allocate in local mode's 1 GB JVM, where 7 days (~260,000 per shard) passed.
MAX_SHARD_EVENTS = 200_000


def shard_count(events: int, shards: int) -> int:
    """``shards``, or more when a cluster has more events than ``shards`` tasks of MAX_SHARD_EVENTS hold
    (the result is the same for any count; only a task's memory changes). More is a multiple of ``shards``
    (the executor cores asked for): 3 equal shards on 2 cores take two waves, the second on one core."""
    need = -(-events // MAX_SHARD_EVENTS)
    return shards * max(1, -(-need // shards))


def shares_cores(events: int, total: int, shards: int) -> bool:
    """Is a cluster of ``events`` more than one core's share of a run of ``total`` on ``shards`` cores, so that
    cutting it shortens the run? A smaller one is replayed whole, as one shard beside the others': its shards
    would each repeat the cluster-wide part (from logs alone, phase 1 over every controller record), which a
    whole replay does once, and each pays a task's fixed cost. Four equal clusters of 98,530 events on `local[2]`
    (benchmarks/journal/replay.md, "several clusters"): cut in 2 shards each, 27.9-28.5 s a warm run; whole, 24.6-25.1 s
    (with phase 1 streamed; 31.9-32.7 against 24.8-27.6 s before). One cluster alone is always cut."""
    return events * shards > total


def phase1_fits(events: int, records: int, shards: int) -> bool:
    """Can every shard also read the other partitions' controller records and stay within MAX_SHARD_EVENTS?
    (Its own share of the events, records included, plus the others' records.) When not, phase 1 runs once."""
    return -(-events // shards) + records - records // shards <= MAX_SHARD_EVENTS


_PHASE1_OUT = pa.schema([pa.field("cluster", pa.string()), pa.field("payload", pa.binary()),
                         pa.field("cpu_s", pa.float64())])


def _phase1_fn(plans_bc):
    def fn(table: pa.Table) -> pa.Table:
        from replay_engine.sharding.cluster_pass import cluster_pass
        from replay_engine.kraft.split import phase1 as kraft_phase1

        cpu = time.process_time()
        plans = plans_bc.value  # before the pause: PySpark's Broadcast.load re-enables the collector
        cluster = table.column("cluster")[0].as_py()
        plan = plans[cluster]
        with cycle_gc_paused():  # as in the shards: many live objects, no garbage
            out = (kraft_phase1 if plan.kraft else cluster_pass)(task_events(table), plan.context)
        return pa.table({"cluster": [cluster], "payload": [pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)],
                         "cpu_s": [time.process_time() - cpu]}, schema=_PHASE1_OUT)

    return fn


def cluster_passes(spark, events, plans: dict[str, ClusterPlan],
                   cpu: dict[str, float] | None = None) -> dict[str, ClusterPass]:
    """Phase 1 as a task of its own, for the clusters too big to run it in every shard and every split KRaft
    cluster: one task per cluster over its cluster-wide events and controller records
    (``replay_engine.sharding.cluster_pass.phase1_events``; KRaft: ``replay_engine.kraft.context.phase1_needs``).
    ``cpu`` receives each task's own CPU seconds."""
    from pyspark.sql import functions as F

    todo = sorted(c for c, p in plans.items() if p.phase1_job)
    if not todo:
        return {}
    events = events.select(*FIELD_NAMES)
    plans_bc = spark.sparkContext.broadcast(plans)
    zk = sorted(c for c in todo if not plans[c].kraft)
    kraft = sorted(c for c in todo if plans[c].kraft)
    parts = []
    if zk:
        sel = events.where(F.col("cluster").isin(*zk) & (
            F.col("topic").isNull() | F.col("partition").isNull() | F.col("event_type").isin(*RECORD_EVENT_TYPES)))
        # Phase 1 needs no line's text: only what tells a copy of a log entry from another entry (the same
        # text), so a 64-bit hash of it rides instead of the text (a third of the bytes).
        parts.append(sel.withColumn("raw", F.when(F.col("raw").isNotNull(), F.xxhash64("raw").cast("string"))))
    if kraft:  # KRaft's phase 1 reads the "Replayed" lines' text and cites the lines a renounce rolled back
        parts.append(events.where(F.col("cluster").isin(*kraft) & kraft_phase1_rows()))
    sel = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    # streamed: a cluster's records over months are more rows than one JVM batch holds (streamed_groups);
    # one task per cluster (placement)
    key, n = task_key(("cluster",), [(c,) for c in todo])
    out = apply_in_groups(sel.withColumn("_task", key), ("_task", "cluster"), _phase1_fn(plans_bc), _PHASE1_OUT, n,
                          partition_by=("_task",))
    with _described(spark, "replay: phase 1"):
        rows = out.collect()
    if cpu is not None:
        cpu.update({r["cluster"]: r["cpu_s"] for r in rows})
    return {r["cluster"]: pickle.loads(r["payload"]) for r in rows}


def kraft_wide():
    """``replay_engine.kraft.context.is_wide`` as a Spark condition."""
    from pyspark.sql import functions as F

    return (F.col("topic").isNull() | F.col("partition").isNull() | F.col("subject_broker").isNotNull()
            | F.col("event_type").isin(*sorted(WIDE_TYPES)))


def kraft_phase1_rows():
    """``replay_engine.kraft.context.phase1_needs`` as a Spark condition (the "Replayed" / "UNCLEAN partition change"
    test on the first 200 characters of the text, as ``is_replay_line``)."""
    from pyspark.sql import functions as F

    head = F.substring(F.col("raw"), 1, 200)
    replay_line = (F.col("source_kind") == "broker_log") & F.coalesce(
        head.contains("Replayed ") | head.contains("UNCLEAN partition change for "), F.lit(False))
    return F.coalesce(kraft_wide() | (F.col("source_kind") == "kraft_metadata") | replay_line
                      | (F.col("event_type") == LEADER_LINE), F.lit(False))


def _line_text(cluster: str, key) -> str:
    f, pos, event, (topic, partition) = key
    return "\x01".join((cluster, "\x02" if f is None else f, "\x02" if pos is None else str(pos), event, topic,
                        str(partition)))


def _hint_key(cluster, source_file, source_pos, event_type):
    """A record's key (``replay_engine.sharding.cluster_pass.event_key`` with its cluster) as one text, nulls marked."""
    from pyspark.sql import functions as F

    return F.concat_ws("\x01", cluster, F.coalesce(source_file, F.lit("\x02")),
                       F.coalesce(source_pos.cast("string"), F.lit("\x02")), event_type)


def _hint_text(cluster: str, key) -> str:
    f, pos, event = key
    return "\x01".join((cluster, "\x02" if f is None else f, "\x02" if pos is None else str(pos), event))


def route(events, plans: dict[str, ClusterPlan], passes: dict[str, ClusterPass] | None = None):
    """Each event to its shard(s): the Spark form of ``replay_engine.sharding.shard.routes``, with ``hints=True``
    for the clusters whose shards run phase 1 (the task then drops the records phase 1 did not keep) and
    the records phase 1 kept (``passes``) for the others. Plans and hints ride as literals: no driver-side
    DataFrame, so no job to build or broadcast one."""
    from pyspark.sql import functions as F

    def lit_map(values):
        return F.create_map(*[F.lit(x) for c in sorted(plans) for x in (c, values(plans[c]))])

    k = F.element_at(lit_map(lambda p: p.buckets), F.col("cluster"))
    records = F.coalesce(F.element_at(lit_map(lambda p: p.phase1_in_shards), F.col("cluster"))
                         & F.col("event_type").isin(*RECORD_EVENT_TYPES), F.lit(False))
    hints = sorted(_hint_text(c, key) for c, cp in (passes or {}).items() if isinstance(cp, ClusterPass)
                   for key in cp.hints)
    if hints:
        key = _hint_key(F.col("cluster"), F.col("source_file"), F.col("source_pos"), F.col("event_type"))
        records = records | (F.col("event_type").isin(*RECORD_EVENT_TYPES) & key.isin(*hints))
    kraft = sorted(c for c, p in plans.items() if p.kraft_split)
    if kraft:  # a KRaft shard reads every cluster-wide event and the lines phase 1 took from other partitions
        records = records | (F.col("cluster").isin(*kraft) & F.coalesce(kraft_wide(), F.lit(False)))
        lines = sorted(_line_text(c, key) for c in kraft for key in (plans[c].kpass.liveness or ()))
        if lines:
            key = F.concat_ws("\x01", _hint_key(F.col("cluster"), F.col("source_file"), F.col("source_pos"),
                                                F.col("event_type")), F.col("topic"), F.col("partition").cast("string"))
            records = records | (F.col("event_type").isin(*LINE_TYPES) & key.isin(*lines))
    tp_text = F.concat(F.col("topic"), F.lit("-"), F.col("partition").cast("string")).cast("binary")
    own = F.pmod(F.crc32(tp_text), k.cast("long")).cast("int")
    everyone = F.col("topic").isNull() | F.col("partition").isNull() | records
    buckets = F.when(everyone, F.sequence(F.lit(0), k - 1)).otherwise(F.array(own))
    return events.withColumn("_bucket", F.explode(buckets))


# A KRaft cluster is split when phase 1 foresees at most this many lines showing a leader active (from logs alone,
# replay_engine.kraft.split). Its foresight misses some where there are any: each miss found costs a round of every
# shard, and rounds cost more than the split saves (benchmarks/journal/replay.md, "KRaft split": 4 rounds, 0.39x the whole
# replay, for a log set whose phase 1 foresaw 25 of 31 lines). A metadata log's records say every decision: none.
KRAFT_LINES_TO_SPLIT = 0

# A shard lighter than this shares its task with other light ones (forensics.audit.placement.pack): the shards
# of many small clusters, each its own task, would cost more in task launches than in replay.
MIN_TASK_EVENTS = 20_000

# Each record batch a task returns is read by the JVM into off-heap Arrow buffers whole: a shard's timeline as
# one batch is ~60 MB at 7 days of 100,000 partitions in 2 shards and grows with the days. Batches of Spark's
# own default size (spark.sql.execution.arrow.maxRecordsPerBatch) keep each allocation a few MB.
BATCH_ROWS = 10_000


def _rows_table(rows: dict[str, list], n: int) -> pa.Table:
    arrays = []
    for f in OUT_ARROW:
        col = rows.get(f.name)
        arrays.append(pa.array(col if col is not None else [None] * n, type=f.type))
    table = pa.Table.from_arrays(arrays, schema=OUT_ARROW)
    if table.num_rows <= BATCH_ROWS:
        return table
    return pa.Table.from_batches(table.to_batches(max_chunksize=BATCH_ROWS), schema=OUT_ARROW)


def make_shard_fn(plans_bc, results):
    """What each executor task runs on one (cluster, shard) group of events: its timeline comes back as rows,
    the rest of its ``ShardOutput`` pickled through ``results`` (``forensics.audit.shard_results``)."""

    def fn(table: pa.Table) -> pa.Table:
        cpu = time.process_time()
        # Read before the collector is paused: PySpark's Broadcast.load (pyspark/core/broadcast.py) unpickles
        # the value between gc.disable() and an unconditional gc.enable(), which turned the collector back on
        # for the rest of the task (the conversion and the output ran 2-3x slower).
        plans = plans_bc.value
        # Millions of live objects (events, facts, intervals) and almost no garbage: the cyclic collector's
        # full passes found nothing and cost a third of the task. Paused for the task, as replay_cluster does.
        with cycle_gc_paused():
            return replay_group(table, plans, cpu)

    def replay_group(table: pa.Table, plans: dict[str, ClusterPlan], cpu: float) -> pa.Table:
        from replay_engine.sharding.shard import (
            replay_kraft_shard,
            replay_shard,
            replay_shard_after_pass,
            replay_whole,
        )

        if table.num_rows == 0:
            return _rows_table({}, 0)
        cluster = table.column("cluster")[0].as_py()
        bucket = table.column("_bucket")[0].as_py()
        plan = plans[cluster]
        # copies of an entry share their partition, so they meet in the same shard
        events = task_events(table)
        c_conv = time.process_time()
        if plan.whole:
            out = replay_whole(events, cluster)
        elif plan.kraft_split:
            out = replay_kraft_shard(events, cluster, bucket, plan.buckets, plan.context, plan.kpass)
        elif plan.phase1_in_shards:
            out = replay_shard_after_pass(events, cluster, bucket, plan.buckets, plan.context)
        else:
            out = replay_shard(events, cluster, bucket, plan.buckets, plan.context)
        c_rep = time.process_time()
        rows = timeline_columns(out.intervals, cluster, _TIMELINE.names)
        n = len(out.intervals)
        rows["_bucket"] = [bucket] * n
        out.intervals = []  # sent as rows; the rest is small
        wide = table.column("topic").null_count > 0 or table.column("partition").null_count > 0
        table = _rows_table(rows, n)
        out.cpu_s = time.process_time() - cpu
        phase1 = out.steps.get("phase1", 0.0)
        out.steps = {"convert": c_conv - cpu, "phase1": phase1, "replay": c_rep - c_conv - phase1,
                     "output": out.cpu_s - (c_rep - cpu)}
        send(results, cluster, bucket, pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL), wide)
        return table

    return fn


# sink(timeline, clusters): one action that reads every row of ``timeline`` (a count, a write), the rows of
# ``clusters``; called again for clusters replayed again whole, whose rows replace those it had.
Sink = Callable[[Any, frozenset], Any]


def reads_files(plan: ClusterPlan) -> bool:
    """May this cluster's shard tasks read its store files themselves (``forensics.audit.file_shards``)? Split,
    not KRaft, no hints of a phase 1 task to route by, and few enough shards that each reading all rows pays."""
    return not plan.whole and not plan.kraft and not plan.phase1_job and plan.buckets <= file_shards.MAX_SHARDS


def _run(spark, events, plans: dict[str, ClusterPlan], progress: Progress, label: str, sink: Sink,
         passes: dict[str, ClusterPass] | None = None, files: dict[str, list[str]] | None = None
         ) -> dict[str, list]:
    """The shards of ``plans``' clusters, run by ``sink``'s action; each cluster's shard outputs. ``files``: the
    clusters whose shards read their store files themselves (chosen by the caller: ``reads_files``), with them."""
    from pyspark.sql import functions as F

    plans_bc = spark.sparkContext.broadcast(plans)
    results = channel(spark)
    whole = sorted(c for c, p in plans.items() if p.whole)
    direct = sorted(c for c in (files or {}) if c in plans)
    split = sorted(c for c, p in plans.items() if not p.whole and c not in direct)
    # built only when some rows go through Spark: each of the expressions is a py4j call or more, on the driver
    routed = route(events.select(*FIELD_NAMES), plans, passes) if split or whole or not direct else None
    parts = []
    shard_fn = make_shard_fn(plans_bc, results)

    def groups(clusters):
        return [(c, b) for c in clusters for b in range(plans[c].buckets)]

    def weights(clusters):
        return [-(-plans[c].events // plans[c].buckets) for c, _ in groups(clusters)]

    if direct:
        # what a task needs of each cluster, not the plans (the broadcast holds those)
        reads = {c: ([str(f) for f in files[c]], plans[c].buckets, plans[c].phase1_in_shards) for c in direct}

        def from_files(cluster: str, bucket: int) -> pa.Table:
            paths, buckets, records = reads[cluster]
            return shard_fn(file_shards.shard_rows(paths, cluster, bucket, buckets, records))

        parts.append(file_shards.file_tasks(spark, groups(direct), weights(direct), MIN_TASK_EVENTS, from_files,
                                            OUT_ARROW))

    # a task per (cluster, shard), light shards packed together (forensics.audit.placement), not shards hashed
    # into the session's shuffle partitions: with hashing two shards could share a task and, past that count,
    # cores would stay idle
    if split or not (whole or direct):  # shards stay within MAX_SHARD_EVENTS: a task may gather its rows whole
        rows = routed.where(F.col("cluster").isin(*split)) if whole or direct else routed
        rows = one_task_per_group(rows, ("cluster", "_bucket"), groups(split), weights=weights(split),
                                  least=MIN_TASK_EVENTS)
        # grouped by the shard too: a row the placement did not foresee shares a task, never a group. Not
        # groupBy().applyInArrow: its sort of each task's rows by the group's key (one group to a task, mostly)
        # was 0.3-0.5 s of a warm 2 GB bench shard's JVM time, and ~1 s while the executor's JIT was still cold
        parts.append(apply_in_tasks(rows, ("cluster", "_bucket"), shard_fn, OUT_ARROW))
    if whole:  # a cluster replayed whole has no cap: its rows are streamed (forensics.audit.streamed_groups)
        key, n = task_key(("cluster", "_bucket"), groups(whole), weights(whole), MIN_TASK_EVENTS)
        rows = routed.where(F.col("cluster").isin(*whole)).withColumn("_task", key)
        parts.append(apply_in_groups(rows, ("_task", "cluster", "_bucket"), shard_fn, OUT_ARROW, n,
                                     partition_by=("_task",)))
    out = parts[0]
    for more in parts[1:]:
        out = out.unionByName(more)
    with progress.watch_spark(spark, label), _described(spark, f"{label}: shards"):
        sink(out.drop("_bucket"), frozenset(plans))  # OUT_ARROW's other columns are the timeline's, in order
    got = received(results)
    lost = missing({c: p.buckets for c, p in plans.items()}, got)
    if lost:  # a sink's bug, not the evidence's: a merge of fewer shards would be silently wrong
        raise RuntimeError(f"{label}: no result came back from shard(s) " + "; ".join(
            f"{c}: {', '.join(map(str, bs))}" for c, bs in lost.items()) +
            ": the timeline's consumer must read all its rows in one action (a count, a write)")
    by_cluster: dict[str, list] = {}
    # Each shard's output holds thousands of leaderless episodes with their evidence: unpickled with the
    # collector running, the growing heap set off several full passes over all of it between the jobs.
    with cycle_gc_paused():
        for (c, _), (payload, _) in sorted(got.items()):
            by_cluster.setdefault(c, []).append(pickle.loads(payload))
    return by_cluster


class _Kept:
    """The default sink: the timeline rows persisted (and counted, which runs the shards), for the caller to
    read as often as it likes; ``release`` frees them."""

    def __init__(self):
        self.frames: list[tuple[Any, frozenset]] = []

    def __call__(self, timeline, clusters: frozenset) -> None:
        from pyspark import StorageLevel

        timeline = timeline.persist(StorageLevel.MEMORY_AND_DISK)
        timeline.count()
        self.frames.append((timeline, clusters))

    def timeline(self):
        from pyspark.sql import functions as F

        out = None
        for i, (df, _) in enumerate(self.frames):
            later = sorted({c for _, cs in self.frames[i + 1:] for c in cs})
            if later:
                df = df.where(~F.col("cluster").isin(*later))
            out = df if out is None else out.unionByName(df)
        return out


def replay_on_executors(spark, events, shards: int, progress: Progress | None = None,
                        groups: list[dict] | None = None, sink: Sink | None = None,
                        files: dict[str, list] | None = None, whole_below_share: bool = False) -> DistributedReplay:
    """``events``: a DataFrame of canonical events of one or more clusters (zk_txn rows are left out here);
    ``groups``: their plan groups if the caller has them (the audit store's footers), else counted here.
    ``sink``: what consumes the timeline (``Sink``: its action is the one that runs the shards); without one
    the timeline is persisted and counted, and kept as ``DistributedReplay.timeline``. ``files``: for clusters
    whose rows in ``events`` are all those of these audit store files, the files, which their shard tasks may
    then read themselves (``forensics.audit.file_shards``). ``whole_below_share``: clusters no bigger than a
    core's share of the events are replayed whole (``shares_cores``), as the audit does; without it every
    cluster is cut into ``shards`` at least."""
    from pyspark.sql import functions as F

    progress = progress or Progress(False)
    kept = _Kept() if sink is None else None
    sink = kept if sink is None else sink
    events = events.where(F.col("event_type") != "zk_txn")
    if groups is not None:  # as the filter above: a null event type is no match either
        groups = [g for g in groups if g["event_type"] is not None and g["event_type"] != "zk_txn"]
    plans = cluster_plans(spark, events, max(1, shards), groups, whole_below_share)
    split = sorted(c for c, p in plans.items() if not p.whole)
    counts = sorted({plans[c].buckets for c in split})
    each = "/".join(map(str, counts)) if counts else str(shards)
    progress.say(f"replay: {len(plans)} cluster(s); {len(split)} split into {each} shard(s) each")
    phase1_cpu: dict[str, float] = {}
    with progress.watch_spark(spark, "replay phase 1"):
        passes = cluster_passes(spark, events, plans, phase1_cpu)
    plans = {c: dataclasses.replace(p, kpass=passes[c]) if p.kraft_split else p for c, p in plans.items()}
    whole: dict[str, str] = {}
    for c in sorted(c for c, p in plans.items() if p.kraft_split and len(p.kpass.liveness) > KRAFT_LINES_TO_SPLIT):
        whole[c] = (f"KRaft from logs alone: phase 1 foresaw {len(plans[c].kpass.liveness)} broker line(s) showing "
                    "a leader active to every partition; agreeing on them can take a round of every shard each "
                    "(replay_engine.kraft.split), so the cluster is replayed whole")
        plans[c] = dataclasses.replace(plans[c], buckets=1, whole=True, kpass=None)
    files = {c: fs for c, fs in sorted((files or {}).items()) if c in plans and reads_files(plans[c])
             and file_shards.readable(fs)}
    by_cluster = _run(spark, events, plans, progress, "replay", sink, passes, files)
    merged: dict[str, MergedReplay] = {}
    redo = []
    rounds: dict[str, ClusterPlan] = {}
    kraft_rounds = {c: 1 for c, p in plans.items() if p.kraft_split}
    for c in sorted(by_cluster):
        try:
            # against phase 1's journal: its task's, or else the one the shards ran themselves
            merged[c] = merge(by_cluster[c], passes[c].journal if c in passes and not plans[c].whole else None)
        except ShardsDisagree as exc:
            if exc.found is not None and KRAFT_ROUNDS > 1:  # KRaft: again, with the lines the shards found
                rounds[c] = dataclasses.replace(plans[c], kpass=next_round(plans[c].kpass, exc.found))
                continue
            redo.append(c)
            whole[c] = f"its shards saw the cluster differently ({exc}); replayed whole"
    for n in range(2, KRAFT_ROUNDS + 1):
        if not rounds:
            break
        progress.say(f"replay: KRaft round {n} for {len(rounds)} cluster(s): {', '.join(sorted(rounds))}")
        got = _run(spark, events.where(F.col("cluster").isin(*sorted(rounds))), rounds, progress, f"replay (round {n})",
                   sink)
        for c in sorted(got):
            by_cluster[c] = got[c]
        pending, rounds = rounds, {}
        kraft_rounds.update(dict.fromkeys(pending, n))
        for c in sorted(pending):
            try:
                merged[c] = merge(got[c])
            except ShardsDisagree as exc:
                if exc.found is not None and n < KRAFT_ROUNDS:
                    rounds[c] = dataclasses.replace(pending[c], kpass=next_round(pending[c].kpass, exc.found))
                    continue
                redo.append(c)
                whole[c] = f"its shards saw the cluster differently ({exc}); replayed whole"
    redo.sort()
    if redo:
        progress.say(f"replay: {len(redo)} cluster(s) replayed whole: {', '.join(redo)}")
        again = {c: ClusterPlan(1, plans[c].context, plans[c].kraft, True, events=plans[c].events) for c in redo}
        by2 = _run(spark, events.where(F.col("cluster").isin(*redo)), again, progress, "replay (whole)", sink)
        for c in redo:
            merged[c] = merge(by2[c])
    task_cpu = {}
    for c, outs in by_cluster.items():
        outs = sorted(outs, key=lambda o: o.bucket)
        task_cpu[c] = {"shards": [o.cpu_s for o in outs], "phase1": [o.steps.get("phase1", 0.0) for o in outs],
                       "phase1_task": phase1_cpu.get(c, 0.0), "steps": [o.steps for o in outs]}
    if kept is None:
        return DistributedReplay(merged, None, whole, task_cpu=task_cpu, kraft_rounds=kraft_rounds,
                                 read_files=sorted(files))
    timeline = kept.timeline()
    return DistributedReplay(merged, timeline, whole, task_cpu=task_cpu, outputs=[df for df, _ in kept.frames],
                             kraft_rounds=kraft_rounds, read_files=sorted(files))
