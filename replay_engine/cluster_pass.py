"""Phase 1 of a sharded replay from logs alone: the cluster-wide facts, reduced once.

From logs alone, which controller acted (and in which epoch) and which brokers it held alive are
learnt from its per-partition records (``ZkControllerReplay._infer_from_record``: a state-change
line names its controller and epoch; an election names a live leader; an ISR removal names a
broker the controller saw go; a failed election states the live set). Before, every shard read
every record as a hint. Here the cluster is replayed once with no partition of its own: the
cluster-wide facts and every record as a hint. Most hints change nothing (the controller already
believed what they say); the pass keeps only the records whose hint could change the cluster-wide
state, and the shards of phase 2 read those and their own partitions' facts, nothing else.

Why dropping the others is exact. A hint reads the cluster-wide state (controller, epoch, live
brokers) and, in two cases, the brokers in controlled shutdown, which a shard may infer from its
own partitions only. A hint is dropped only when it changes nothing whatever that shutdown set is
(``could_change``), given the controller, epoch and live set this pass had at that point. A shard
records the cluster-wide states it went through (its journal); when it equals this pass's journal,
each dropped hint met the same controller, epoch and live set in the shard, so it would have
changed nothing there either. When a shard's journal differs, the split is refused and the
cluster replayed whole (``replay_engine.shard.merge``), as when shards disagree among themselves.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from parsers.schema import Event
from replay_engine import facts as F
from replay_engine.from_events import ClusterContext

# A record event is known by where it was read and what it is: the key a shard's router matches
# (several events of one line share it; keeping them all is harmless: an extra hint is one more
# that changes nothing).
HintKey = tuple[str | None, int | None, str]


def event_key(ev: Event) -> HintKey:
    return (ev.source_file, ev.source_pos, ev.event_type)


def _ref_key(ref: F.Ref) -> HintKey:
    return (ref.source_file, ref.source_pos, ref.event)


@dataclass(frozen=True)
class ClusterPass:
    """What phase 1 broadcasts for one cluster: the journal every shard must match, and the records
    whose hints the shards still need."""

    journal: str
    hints: frozenset  # of HintKey
    records: int  # records read as hints in this pass
    facts: int  # cluster-wide facts replayed

    def needs(self, ev: Event) -> bool:
        return event_key(ev) in self.hints


def could_change(ctrl, rec) -> bool:
    """Could this record, read as a hint, change the controller, its epoch or its live set, whatever
    the brokers in controlled shutdown? Mirrors the conditions of
    ``ZkControllerReplay._infer_from_record``."""
    if not ctrl.mode.infers_from_records:
        return False
    cid, ce = getattr(rec, "controller_id", None), getattr(rec, "controller_epoch", None)
    epoch = ctrl.controller_epoch
    if cid is not None and ce is not None and (ctrl.controller != cid or (epoch is not None and ce > epoch)) \
            and (epoch is None or ce >= epoch):
        return True
    live = ctrl.live
    if isinstance(rec, F.RecordedState):
        if rec.kind == "isr_removal" and rec.removed_replica is not None:
            # removed unless in controlled shutdown: a shard may know of a shutdown this pass does not
            return int(rec.removed_replica) in live
        if rec.kind in ("election", "new_partition") and rec.leader is not None and rec.leader >= 0:
            if rec.leader not in live:
                return True
            if rec.isr and (rec.kind == "new_partition" or rec.from_state == "OfflinePartition"):
                return not set(rec.isr) <= live
        return False
    if isinstance(rec, F.RecordedFailedElection) and rec.live is not None:
        # live := stated | (live & shutting): unchanged for every shutdown set only when live == stated
        return set(rec.live) != live
    return False


def phase1_events(events: Iterable[Event]) -> list[Event]:
    """What phase 1 reads: the cluster-wide events and the controller records (every other partition
    event would only be cut away)."""
    from replay_engine.shard import RECORD_EVENT_TYPES

    return [e for e in events if e.topic is None or e.partition is None or e.event_type in RECORD_EVENT_TYPES]


def cluster_pass(events: Iterable[Event], context: ClusterContext) -> ClusterPass:
    """Replay the cluster with no partition of its own (``events``: at least ``phase1_events``)."""
    from replay_engine.api import _cycle_gc_paused

    with _cycle_gc_paused():
        return _cluster_pass(list(events), context)


def _cluster_pass(events: list[Event], context: ClusterContext) -> ClusterPass:
    from replay_engine.api import zk_replay_of
    from replay_engine.shard import journal_digest
    from replay_engine.shard_cut import shard_facts

    ctrl, stream = zk_replay_of(events, context)
    facts = shard_facts(stream.facts, lambda _tp: False)
    kept: set[HintKey] = set()
    infer = ctrl._infer_from_record
    records = 0

    def hint(f: F.RecordHint) -> None:
        nonlocal records
        records += 1
        if could_change(ctrl, f.record):
            kept.add(_ref_key(f.ref))
        infer(f.record)

    ctrl._handlers[F.RecordHint] = hint
    ctrl.journal = []
    ctrl.run(facts, stream.trace_end)
    return ClusterPass(journal_digest(ctrl.journal), frozenset(kept), records, len(facts) - records)
