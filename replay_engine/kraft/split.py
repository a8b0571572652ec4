"""Phase 1 of a KRaft cluster's replay split by partition (``replay_engine.sharding.shard`` splits both modes).

Each partition's decisions read only its own facts and the cluster-wide state: the quorum leader, each broker's
registration, fence and controlled shutdown, configs and feature levels, all from events every shard reads
(``kraft_pass.is_wide``), and what ``kraft_pass`` settles over all partitions (start-up bursts, rolled-back
records, topic names, where the metadata log's records begin).

One thing a partition's facts change for all of them: from logs alone, a broker's line that a leader started an
epoch shows that leader active (elected, so registered, unfenced and not shutting down: ``KraftLines._observed``),
which decides what other partitions can elect. Whether a line does depends on its partition's state. Phase 1
foresees it: the cluster replayed with no partition of its own, each leader's own "starts at leader epoch" line a
candidate, taken where the leader was not acceptable then. Every shard applies the lines phase 1 took from other
partitions to the brokers' liveness (``LeaderActiveHint``) and reports which lines of its own partitions did so.

Why agreement is exact. If the lines the shards report are exactly the lines they were given, every shard went
through the same liveness changes at the same places; by induction over the facts in order, the whole replay's
cluster-wide state equals each shard's, so each partition's facts meet the same state in the whole replay as in
its shard and do the same, including which lines show a leader active. Any such set is the whole replay's own,
so it is unique. When the shards report other lines, the split is refused (``ShardsDisagree.found``) and run
again with the lines they found (``shard.replay_sharded``; the audit, ``forensics.audit.distributed``, up to
``KRAFT_ROUNDS`` times, and splits only clusters whose phase 1 foresaw no line: each round replays every shard).
"""
from __future__ import annotations

import dataclasses
import hashlib

from parsers.common.gc_pause import cycle_gc_paused
from parsers.schema import Event
from replay_engine.common.config import ConfigState, parse_version
from replay_engine.zk.from_events import ClusterContext
from replay_engine.kraft.context import LEADER_LINE, KraftPass, is_wide, kraft_context, kraft_pass, phase1_needs
from replay_engine.common.roles import retire


def journal_digest(journal) -> str:
    return hashlib.sha256(repr(list(journal or ())).encode()).hexdigest()


def phase1(events: list[Event], ctx: ClusterContext | None = None) -> KraftPass:
    """``events``: a KRaft cluster's events, at least those ``phase1_needs``; ``ctx``: the whole cluster's
    (``kraft_context``), else computed from ``events`` (then they must be all of the cluster's)."""
    with cycle_gc_paused():
        return _phase1(events, ctx)


def _phase1(events: list[Event], ctx: ClusterContext | None) -> KraftPass:
    from replay_engine.kraft.replay import KraftReplay
    from replay_engine.kraft.facts import kraft_facts, prepared

    if ctx is None:
        ctx = kraft_context(events)
    evs, ctx = prepared([e for e in events if phase1_needs(e)], ctx)
    version = next(((e.detail or {}).get("version") for e in evs if e.event_type == "kafka_version"), None)
    config = ConfigState(version=parse_version(version))
    kp = kraft_pass(evs, config.version, ctx.writers)
    ctrl = KraftReplay(config)
    ctrl.journal = []
    # the cluster with no partition of its own: of the partitions' events only the leaders' lines, as candidates
    # (kp.liveness is None); the records and "Replayed" lines served the pass
    evs = [e for e in evs if is_wide(e) or e.event_type == LEADER_LINE]
    ctrl.run(kraft_facts(evs, config.version, kp, ctx, keep_tp=lambda _tp: False))
    retire(ctrl)
    return dataclasses.replace(kp, liveness=frozenset(ctrl.inferred), journal=journal_digest(ctrl.journal))


def line_key(e: Event) -> tuple | None:
    """The key a line's ``ObservedState`` has in ``KraftPass.liveness`` (``kraft_facts.liveness_key``)."""
    if e.topic is None or e.partition is None:
        return None
    return (e.source_file, e.source_pos, e.event_type, (e.topic, int(e.partition)))


def shard_events(events: list[Event], keep, kp: KraftPass) -> list[Event]:
    """Of the events a shard holds (its own partitions', every cluster-wide one, maybe all of phase 1's), those its
    replay reads: the others' lines phase 1 took as showing a leader active, and nothing else of theirs."""
    live = kp.liveness or frozenset()
    return [e for e in events if is_wide(e) or keep((e.topic, e.partition)) or (live and line_key(e) in live)]
