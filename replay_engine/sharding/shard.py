"""Splitting one cluster's replay by partition, so executors can share months of it.

Given the cluster-wide facts (brokers, controllers, configuration), each partition's
controller decisions depend only on that partition's own facts: the controller's
state machines are per partition. A shard therefore replays every cluster-wide
fact plus the facts of its own partitions, and the union of the shards is the
whole replay. Facts that name many partitions (a topic's assignment, a preferred
election request) are cut down to the shard's partitions (``replay_engine.sharding.cut``).

Two things cross partitions. (1) How far the evidence reaches (log windows, trace
bounds) is the whole cluster's: shards are handed it (``ClusterContext``). (2) From
logs alone the replay learns cluster-wide state from the controller's records of
every partition (which controller acted, whom it believed alive). That is reduced
once, in a first phase (``replay_engine.sharding.cluster_pass``): the cluster replayed with no
partition of its own keeps only the records that could change that state, and the
shards read those as hints that touch only that state. What a record implies
through a partition's own state (an inferred controlled shutdown) reaches only its
shard; so each shard journals the cluster-wide state it went through, and a shard
whose journal differs from phase 1's (or, with ZooKeeper's log, from the other
shards') means the split was not exact: the caller then replays the cluster whole.
Agreement proves exactness: every cluster-wide change of the whole replay happens in
the shard that owns its cause, and in the others only if it needs nothing
partition-specific; and a record left out of the hints met, in every shard, the
state in which phase 1 found it could change nothing.

A KRaft cluster splits the same way, with a phase 1 of its own (``replay_engine.kraft.split``).

The bucket of a partition must be computed identically here and in Spark
(``pmod(crc32(concat(topic, '-', partition)), n)``), so it is CRC-32 of that text.
"""
from __future__ import annotations

import dataclasses
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from parsers.schema import Event
from replay_engine.sharding.cluster_pass import (
    RECORD_EVENT_TYPES,
    cluster_pass,
    journal_digest,
    phase1_events,
)
from replay_engine.kraft.context import KraftPass, is_wide, kraft_context
from replay_engine.kraft.split import journal_digest as kraft_journal
from replay_engine.kraft.split import line_key, shard_events
from replay_engine.kraft.split import phase1 as kraft_phase1

TP = tuple[str, int]


def bucket_of(topic: str, partition: int, buckets: int) -> int:
    return bucket_of_name(f"{topic}-{partition}", buckets)


def bucket_of_name(name: str, buckets: int) -> int:
    """The bucket of a partition by its name, ``topic-partition`` (for callers that hold the joined text)."""
    return zlib.crc32(name.encode()) % buckets


def in_bucket(bucket: int, buckets: int) -> Callable[[TP], bool]:
    memo: dict[TP, bool] = {}

    def keep(tp: TP) -> bool:
        got = memo.get(tp)
        if got is None:
            got = memo[tp] = bucket_of(tp[0], tp[1], buckets) == bucket
        return got

    return keep




def routes(ev: Event, buckets: int, hints) -> range | tuple[int, ...]:
    """The shards an event goes to (the same rule as the Spark router in ``forensics.audit``).
    ``hints``: None or False (ZooKeeper's log says it all), a ``ClusterPass`` (the records it kept go
    to every shard), or True (every record to every shard, without phase 1); for a KRaft cluster its
    ``KraftPass`` (the lines it took go to every shard)."""
    if ev.topic is None or ev.partition is None:
        return range(buckets)
    if isinstance(hints, KraftPass):
        wide = is_wide(ev) or (hints.liveness and line_key(ev) in hints.liveness)
        return range(buckets) if wide else (bucket_of(ev.topic, ev.partition, buckets),)
    if hints and ev.event_type in RECORD_EVENT_TYPES and (hints is True or hints.needs(ev)):
        return range(buckets)
    return (bucket_of(ev.topic, ev.partition, buckets),)


# One controlled shutdown, inferred by several shards from their own partitions' elections.
SAME_SHUTDOWN_US = 60 * 1_000_000


def _inferred_shutdowns(per_shard: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The whole replay infers a shutdown once, at the first election that shows it: the earliest of the
    shards' inferences of it."""
    seen = sorted(((f["ts"], i, f) for i, fs in enumerate(per_shard) for f in fs
                   if f.get("kind") == "inferred_controlled_shutdown"), key=lambda x: (x[0], x[1]))
    kept: list[tuple[int, int, dict[str, Any]]] = []
    for ts, i, f in seen:
        if any(k[2]["broker"] == f["broker"] and k[1] != i and 0 <= ts - k[0] <= SAME_SHUTDOWN_US for k in kept):
            continue
        kept.append((ts, i, f))
    return [k[2] for k in kept]


def merge_findings(per_shard: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Cluster-wide findings appear in every shard, a partition's in its own: each distinct finding is
    kept as many times as the shard that holds it most."""
    import json

    best: Counter = Counter()
    first: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for findings in per_shard:
        here = Counter()
        for f in findings:
            if f.get("kind") == "inferred_controlled_shutdown":
                continue
            key = json.dumps(f, sort_keys=True, default=str)
            here[key] += 1
            if key not in first:
                first[key] = f
                order.append(key)
        for k, n in here.items():
            best[k] = max(best[k], n)
    out = _inferred_shutdowns(per_shard)
    for k in order:
        out.extend([first[k]] * best[k])
    out.sort(key=lambda f: (f.get("ts") or 0, f.get("kind") or ""))
    return out


@dataclass
class ClusterOutcome:
    """What a replay hands on about a cluster: the cluster as it saw it, and the partitions it replayed."""

    cluster: str | None
    mode: str
    intervals: list[Any]
    leaderless: list[Any]
    agreement: dict[str, Any]
    findings: list[dict[str, Any]]
    data_loss: list[dict[str, Any]]
    tenures: list[Any]
    periods: dict[int, list[Any]]
    kafka_version: str | None
    trace_start: int | None
    trace_end: int | None
    # per topic (topic_spans): a shard's spans in microseconds, the merged cluster's in seconds (in_seconds)
    topics: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    write_outages: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # under min ISR, as JSON


@dataclass(kw_only=True)
class ShardOutput(ClusterOutcome):
    """What one shard's replay hands back (picklable, small): its own partitions, and the cluster as
    it saw it. ``intervals`` may be left out when the caller streams the timeline elsewhere."""

    bucket: int
    journal: str  # digest of the cluster-wide state it went through
    phase1_journal: str | None = None  # phase 1's journal, when the shard ran it itself (``replay_shard_after_pass``)
    # KRaft: the lines of other partitions it applied as showing a leader active, and those of its own that did
    hinted: frozenset | None = None
    inferred: frozenset = frozenset()
    cpu_s: float = 0.0  # the task's own CPU seconds, when an executor ran it (benchmarks; not merged)
    steps: dict[str, float] = dataclasses.field(default_factory=dict)  # cpu_s by step (benchmarks; not merged)

    @classmethod
    def of(cls, res, bucket: int, journal: str, with_intervals: bool = True) -> ShardOutput:
        img = res.image
        return cls(res.cluster, res.mode, list(res.intervals) if with_intervals else [],
                   list(res.leaderless), res.agreement(), list(img.findings), list(res.data_loss),
                   list(img.tenures), dict(img.periods), img.kafka_version,
                   res.stream.trace_start, res.stream.trace_end,
                   topic_spans(res.intervals, res.history.ar_history, res.stream.trace_end),
                   [o.to_json() for o in res.under_min_isr], bucket=bucket, journal=journal)


_SPANS = (("covered_us", "covered_s"), ("isr1_us", "isr1_s"), ("leaderless_us", "leaderless_s"))


def topic_spans(intervals, ar_history: dict, trace_end: int | None) -> dict[str, dict[str, Any]]:
    """Per topic: how many partitions, their replication factor, and how long they had ISR = 1 or no
    leader (microseconds summed over partitions, integers: shards' sums add up to the whole's exactly,
    in any order), from the timeline. Open intervals run to the trace end."""
    out: dict[str, dict[str, Any]] = {}
    parts: dict[str, set[int]] = {}
    for iv in intervals:
        st = out.setdefault(iv.topic, {"partitions": 0, "rf_min": None, "rf_max": None, "rf1_partitions": 0,
                                       "covered_us": 0, "isr1_us": 0, "leaderless_us": 0})
        parts.setdefault(iv.topic, set()).add(iv.partition)
        end = iv.end if iv.end is not None else trace_end
        if end is None or end <= iv.start:
            continue
        us = end - iv.start
        st["covered_us"] += us
        if iv.view.leaderless:
            st["leaderless_us"] += us
        elif iv.view.isr is not None and len(iv.view.isr) == 1:
            st["isr1_us"] += us
    for topic, ps in parts.items():
        st = out[topic]
        st["partitions"] = len(ps)
        rfs = [len(h[-1][1]) for p in ps if (h := ar_history.get((topic, p)))]
        if rfs:
            st["rf_min"], st["rf_max"] = min(rfs), max(rfs)
            st["rf1_partitions"] = sum(1 for r in rfs if r == 1)
    return out


def in_seconds(spans: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``topic_spans`` with its microsecond sums as seconds, converted once."""
    out = {}
    for t, st in spans.items():
        d = {k: v for k, v in st.items() if not k.endswith("_us")}
        d.update({s: st[us] / 1e6 for us, s in _SPANS})
        out[t] = d
    return out


def topic_stats(intervals, ar_history: dict, trace_end: int | None) -> dict[str, dict[str, Any]]:
    """``topic_spans`` in seconds: what a report shows per topic."""
    return in_seconds(topic_spans(intervals, ar_history, trace_end))


class ShardsDisagree(Exception):
    """The shards saw the cluster differently: the cluster must be replayed whole. ``found``: for a KRaft
    cluster, the lines the shards found showing a leader active, where phase 1 foresaw others
    (``replay_engine.kraft.split``)."""

    def __init__(self, message: str, found: frozenset | None = None):
        super().__init__(message)
        self.found = found


def replay_shard(events: list[Event], cluster: str | None, bucket: int, buckets: int, context,
                 with_intervals: bool = True) -> ShardOutput:
    from replay_engine.api import replay_cluster

    res = replay_cluster(events, cluster, keep_tp=in_bucket(bucket, buckets), context=context)
    return ShardOutput.of(res, bucket, journal_digest(res.journal), with_intervals)


def replay_shard_after_pass(events: list[Event], cluster: str | None, bucket: int, buckets: int, context,
                            with_intervals: bool = True) -> ShardOutput:
    """A shard that runs phase 1 itself: ``events`` are its own partitions' events, the cluster-wide
    events and every controller record (``routes`` with ``hints=True``), in replay order. Phase 1 over
    the cluster-wide events and records is the same in every shard; of the other partitions' records
    the shard then replays only those phase 1 kept, as ``replay_sharded`` routes them."""
    import time

    cpu = time.process_time()
    cp = cluster_pass(phase1_events(events), context)
    keep = in_bucket(bucket, buckets)
    mine = [e for e in events if e.topic is None or e.partition is None or keep((e.topic, e.partition))
            or (e.event_type in RECORD_EVENT_TYPES and cp.needs(e))]
    phase1_s = time.process_time() - cpu
    out = replay_shard(mine, cluster, bucket, buckets, context, with_intervals)
    out.phase1_journal = cp.journal
    out.steps["phase1"] = phase1_s
    return out


def replay_kraft_shard(events: list[Event], cluster: str | None, bucket: int, buckets: int, context, kpass,
                       with_intervals: bool = True) -> ShardOutput:
    """A KRaft cluster's shard: ``events`` its own partitions', the cluster-wide ones and the lines ``kpass``
    (phase 1, ``kraft_split.phase1``) took, or more (they are cut to those); ``context``: the whole cluster's
    (``kraft_pass.kraft_context``)."""
    from replay_engine.api import replay_kraft

    keep = in_bucket(bucket, buckets)
    res = replay_kraft(shard_events(events, keep, kpass), cluster, keep_tp=keep, kpass=kpass, context=context)
    out = ShardOutput.of(res, bucket, kraft_journal(res.journal), with_intervals)
    out.hinted, out.inferred = kpass.liveness, frozenset(res.inferred)
    return out


def replay_whole(events: list[Event], cluster: str | None, with_intervals: bool = True) -> ShardOutput:
    """A cluster as one shard (KRaft, or shards that disagreed)."""
    from replay_engine.api import replay_cluster

    return ShardOutput.of(replay_cluster(events, cluster), 0, "", with_intervals)


@dataclass(kw_only=True)
class MergedReplay(ClusterOutcome):
    """The union of a cluster's shards: what ``replay_cluster`` gives for the whole cluster."""

    shards: int


def merge(outputs: list[ShardOutput], expect: str | None = None) -> MergedReplay:
    """``expect``: the journal of phase 1 (``ClusterPass.journal``), which every shard must match; by
    default the one the shards ran themselves, if they did."""
    if not outputs:
        raise ValueError("no shard output")
    outputs = sorted(outputs, key=lambda o: o.bucket)
    hinted = {o.hinted for o in outputs}
    if len(hinted) > 1:
        raise ShardsDisagree("the shards' phase 1 differed")
    if hinted != {None}:
        found = frozenset().union(*(o.inferred for o in outputs))
        if found != next(iter(hinted)):
            raise ShardsDisagree(f"phase 1 took {len(next(iter(hinted)))} line(s) as showing a leader active, the "
                                 f"shards found {len(found)}", found)
    if len({o.phase1_journal for o in outputs}) > 1:
        raise ShardsDisagree("the shards' phase 1 differed")
    if expect is None:
        expect = outputs[0].phase1_journal
    if len({o.journal for o in outputs}) > 1:
        raise ShardsDisagree(f"{len({o.journal for o in outputs})} different cluster-wide histories")
    if expect is not None and outputs[0].journal != expect:
        raise ShardsDisagree("the shards' cluster-wide history differs from phase 1's")
    first = outputs[0]
    intervals = sorted((iv for o in outputs for iv in o.intervals),
                       key=lambda i: (i.topic, i.partition, i.start, i.end if i.end is not None else 1 << 62))
    leaderless = sorted((lp for o in outputs for lp in o.leaderless),
                        key=lambda lp: (lp.episode.topic, lp.episode.partition, lp.episode.start))
    ags = [o.agreement for o in outputs]
    compared = sum(a["compared"] for a in ags)
    agreed = sum(a["agreed"] for a in ags)
    divergences = sorted((d for a in ags for d in a["divergences"]),
                         key=lambda x: (x["ts"] or "", x["topic"], x["partition"]))
    agreement = {"compared": compared, "agreed": agreed, "ratio": round(agreed / compared, 6) if compared else None,
                 "uncompared": sum(a["uncompared"] for a in ags), "evidence_gaps": sum(a["evidence_gaps"] for a in ags),
                 "uncompared_reasons": _sum_counts(a.get("uncompared_reasons", {}) for a in ags),
                 "divergences": divergences}
    data_loss = sorted((u for o in outputs for u in o.data_loss),
                       key=lambda u: (u["ts"] or "", u["topic"], u["partition"]))
    topics: dict[str, dict[str, int]] = {}
    for o in outputs:  # shards own disjoint partitions: their figures add up (integers: exactly, in any order)
        for t, st in o.topics.items():
            cur = topics.setdefault(t, {"partitions": 0, "rf_min": None, "rf_max": None, "rf1_partitions": 0,
                                        "covered_us": 0, "isr1_us": 0, "leaderless_us": 0})
            for k in ("partitions", "rf1_partitions", "covered_us", "isr1_us", "leaderless_us"):
                cur[k] += st[k]
            for k, pick in (("rf_min", min), ("rf_max", max)):
                if st[k] is not None:
                    cur[k] = st[k] if cur[k] is None else pick(cur[k], st[k])
    return MergedReplay(first.cluster, first.mode, intervals, leaderless, agreement,
                        merge_findings([o.findings for o in outputs]), data_loss, first.tenures, first.periods,
                        first.kafka_version, first.trace_start, first.trace_end,
                        in_seconds(dict(sorted(topics.items()))),
                        sorted((w for o in outputs for w in o.write_outages),  # shards own disjoint partitions
                               key=lambda w: (w["topic"], w["partition"], w["start"] or "")), shards=len(outputs))


def replay_sharded(events: list[Event], cluster: str | None, buckets: int) -> MergedReplay:
    """In one process, what the audit does across executors (tests and small inputs): phase 1 (logs
    alone, several shards), then the shards, merged. Raises ``ShardsDisagree`` when the split was not
    exact (the caller replays the cluster whole)."""
    from replay_engine.zk.from_events import cluster_context
    from replay_engine.kraft.facts import is_kraft

    events = list(events)
    if is_kraft(events):
        return _kraft_sharded(events, cluster, buckets)
    ctx = cluster_context(events)
    hints = cluster_pass(phase1_events(events), ctx) if buckets > 1 and not ctx.zk else None
    per: list[list[Event]] = [[] for _ in range(buckets)]
    for ev in events:
        for b in routes(ev, buckets, hints):
            per[b].append(ev)
    return merge([replay_shard(per[b], cluster, b, buckets, ctx) for b in range(buckets)],
                 hints.journal if hints is not None else None)


# Rounds a KRaft split may take to find the lines that show a leader active (a fixpoint; phase 1 mostly has it)
KRAFT_ROUNDS = 8


def _kraft_sharded(events: list[Event], cluster: str | None, buckets: int) -> MergedReplay:
    ctx = kraft_context(events)
    kp = kraft_phase1(events, ctx)
    for _ in range(KRAFT_ROUNDS):
        per: list[list[Event]] = [[] for _ in range(buckets)]
        for ev in events:
            for b in routes(ev, buckets, kp):
                per[b].append(ev)
        try:  # the first round against phase 1's journal too: the liveness it went through with its lines
            return merge([replay_kraft_shard(per[b], cluster, b, buckets, ctx, kp) for b in range(buckets)],
                         kp.journal)
        except ShardsDisagree as exc:
            if exc.found is None:
                raise
            kp = next_round(kp, exc.found)
    raise ShardsDisagree(f"no agreement on the lines showing a leader active in {KRAFT_ROUNDS} rounds")


def next_round(kp: KraftPass, found: frozenset) -> KraftPass:
    """The pass for another round of a KRaft split: the lines the shards found, no journal to match."""
    return dataclasses.replace(kp, liveness=found, journal=None)


def _sum_counts(counts) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, n in c.items():
            out[k] = out.get(k, 0) + n
    return dict(sorted(out.items()))
