"""Splitting one cluster's replay by partition, so executors can share months of it.

Given the cluster-wide facts (brokers, controllers, configuration), each partition's
controller decisions depend only on that partition's own facts: the controller's
state machines are per partition. A shard therefore replays every cluster-wide
fact plus the facts of its own partitions, and the union of the shards is the
whole replay. Facts that name many partitions (a topic's assignment, a preferred
election request) are cut down to the shard's partitions.

Two things cross partitions. (1) How far the evidence reaches (log windows, trace
bounds) is the whole cluster's: shards are handed it (``ClusterContext``). (2) From
logs alone the replay learns cluster-wide state from the controller's records
(which controller acted, whom it believed alive): in that mode every shard also
reads the other shards' records, as hints that touch only that state. What a
record implies through a partition's own state (an inferred controlled shutdown)
reaches only its shard; so each shard journals the cluster-wide state it went
through, and shards that disagree mean the split was not exact: the caller then
replays the cluster whole. Agreement proves exactness: every cluster-wide change
of the whole replay happens in the shard that owns its cause, and in the others
only if it needs nothing partition-specific.

The bucket of a partition must be computed identically here and in Spark
(``pmod(crc32(concat(topic, '-', partition)), n)``), so it is CRC-32 of that text.
"""
from __future__ import annotations

import dataclasses
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from parsers.schema import Event
from replay_engine import facts as F

TP = tuple[str, int]


def bucket_of(topic: str, partition: int, buckets: int) -> int:
    return zlib.crc32(f"{topic}-{partition}".encode()) % buckets


def in_bucket(bucket: int, buckets: int) -> Callable[[TP], bool]:
    memo: dict[TP, bool] = {}

    def keep(tp: TP) -> bool:
        got = memo.get(tp)
        if got is None:
            got = memo[tp] = bucket_of(tp[0], tp[1], buckets) == bucket
        return got

    return keep


def _cut(mapping: dict, topic: str, keep: Callable[[TP], bool]) -> dict:
    return {p: v for p, v in mapping.items() if keep((topic, p))}


def shard_facts(facts: Iterable[F.Fact], keep: Callable[[TP], bool]) -> list[F.Fact]:
    out: list[F.Fact] = []
    for f in facts:
        tp = getattr(f, "tp", None)
        if tp is not None:
            if keep(tp):
                out.append(f)
            elif isinstance(f, (F.RecordedState, F.RecordedFailedElection)):
                out.append(F.RecordHint(f.ts, f.ref, f.order, record=f))
            continue
        if isinstance(f, F.TopicAssignment):
            assignment = _cut(f.assignment, f.topic, keep)
            if assignment or not f.assignment:
                out.append(dataclasses.replace(f, assignment=assignment, adding=_cut(f.adding, f.topic, keep),
                                               removing=_cut(f.removing, f.topic, keep)))
        elif isinstance(f, F.ReplicasOffline):
            tps = tuple(t for t in f.tps if keep(t))
            if tps or not f.tps:
                out.append(dataclasses.replace(f, tps=tps))
        elif isinstance(f, F.PreferredElectionRequest) and f.tps is not None:
            tps = tuple(t for t in f.tps if keep(t))
            if tps or not f.tps:
                out.append(dataclasses.replace(f, tps=tps))
        elif isinstance(f, F.ReassignmentRequest):
            targets = {t: v for t, v in f.targets.items() if keep(t)}
            if targets or not f.targets:
                out.append(dataclasses.replace(f, targets=targets))
        else:
            out.append(f)
    return out


# Log lines that become controller records (RecordedState / RecordedFailedElection): from logs alone,
# every shard reads them all (as hints outside its own partitions).
RECORD_EVENT_TYPES = ("partition_state_change", "partition_leader_isr_written", "leader_election_failed")


def routes(ev: Event, buckets: int, hints: bool) -> range | tuple[int, ...]:
    """The shards an event goes to (the same rule as the Spark router in ``forensics.audit``)."""
    if ev.topic is None or ev.partition is None:
        return range(buckets)
    if hints and ev.event_type in RECORD_EVENT_TYPES:
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
class ShardOutput:
    """What one shard's replay hands back: its own partitions, and the cluster as it saw it."""

    bucket: int
    journal: str  # digest of the cluster-wide state it went through
    result: Any  # ReplayResult restricted to the shard's partitions


class ShardsDisagree(Exception):
    """The shards saw the cluster differently: the cluster must be replayed whole."""


def journal_digest(journal: list[tuple] | None) -> str:
    import hashlib

    h = hashlib.sha256()
    for ts, f, pos, event, state in journal or ():
        ctrl, epoch, live, registered, stopped = state
        h.update(repr((ts, f, pos, event, ctrl, epoch, sorted(live), sorted(registered), sorted(stopped))).encode())
    return h.hexdigest()


def replay_shard(events: list[Event], cluster: str | None, bucket: int, buckets: int, context) -> ShardOutput:
    from replay_engine.api import replay_cluster

    res = replay_cluster(events, cluster, keep_tp=in_bucket(bucket, buckets), context=context)
    return ShardOutput(bucket, journal_digest(res.controller.journal), res)


@dataclass
class MergedReplay:
    """The union of a cluster's shards: what ``replay_cluster`` gives for the whole cluster."""

    cluster: str | None
    mode: str
    intervals: list[Any]
    leaderless: list[Any]
    agreement: dict[str, Any]
    findings: list[dict[str, Any]]
    data_loss: list[dict[str, Any]]
    controller: Any  # one shard's controller: tenures, broker periods, config are the cluster's
    trace_start: int | None
    trace_end: int | None
    shards: int


def merge(outputs: list[ShardOutput]) -> MergedReplay:
    if not outputs:
        raise ValueError("no shard output")
    outputs = sorted(outputs, key=lambda o: o.bucket)
    if len({o.journal for o in outputs}) > 1:
        raise ShardsDisagree(f"{len({o.journal for o in outputs})} different cluster-wide histories")
    first = outputs[0].result
    intervals = sorted((iv for o in outputs for iv in o.result.intervals),
                       key=lambda i: (i.topic, i.partition, i.start, i.end if i.end is not None else 1 << 62))
    leaderless = sorted((lp for o in outputs for lp in o.result.leaderless),
                        key=lambda lp: (lp.episode.topic, lp.episode.partition, lp.episode.start))
    ags = [o.result.agreement() for o in outputs]
    compared = sum(a["compared"] for a in ags)
    agreed = sum(a["agreed"] for a in ags)
    divergences = sorted((d for a in ags for d in a["divergences"]),
                         key=lambda x: (x["ts"] or "", x["topic"], x["partition"]))
    agreement = {"compared": compared, "agreed": agreed, "ratio": round(agreed / compared, 6) if compared else None,
                 "uncompared": sum(a["uncompared"] for a in ags), "evidence_gaps": sum(a["evidence_gaps"] for a in ags),
                 "divergences": divergences}
    data_loss = sorted((u for o in outputs for u in o.result.data_loss),
                       key=lambda u: (u["ts"] or "", u["topic"], u["partition"]))
    return MergedReplay(first.cluster, first.mode, intervals, leaderless, agreement,
                        merge_findings([o.result.controller.findings for o in outputs]), data_loss,
                        first.controller, first.stream.trace_start, first.stream.trace_end, len(outputs))


def replay_sharded(events: list[Event], cluster: str | None, buckets: int) -> MergedReplay:
    """In one process, what the audit does across executors (tests and small inputs)."""
    from replay_engine.from_events import cluster_context

    events = list(events)
    ctx = cluster_context(events)
    per: list[list[Event]] = [[] for _ in range(buckets)]
    for ev in events:
        for b in routes(ev, buckets, hints=not ctx.zk):
            per[b].append(ev)
    return merge([replay_shard(per[b], cluster, b, buckets, ctx) for b in range(buckets)])
