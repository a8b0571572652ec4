"""Phase 1 of a sharded replay from logs alone: the cluster-wide facts, reduced once.

From logs alone, which controller acted (and in which epoch) and which brokers it held alive are
learnt from its per-partition records (``ZkControllerReplay._infer_from_record``: a state-change
line names its controller and epoch; an election names a live leader; an ISR removal names a
broker the controller saw go; a failed election states the live set). Before, every shard read
every record as a hint. Here the cluster is replayed once with no partition of its own: the
cluster-wide facts and every record as a hint. Most hints change nothing (the controller already
believed what they say); the pass keeps only the records whose hint changed the controller, its
epoch or its live set here, or could have in a shard (``depends_on_shutdowns``), and the shards of
phase 2 read those and their own partitions' facts, nothing else.

Why dropping the others is exact. A hint reads the cluster-wide state (controller, epoch, live
brokers, what the evidence says of versions and shutdowns, the same in every shard) and, in two
cases, the brokers in controlled shutdown, which a shard may infer from its own partitions only;
those two are kept whenever the shutdown set could matter. A shard records the cluster-wide states
it went through (its journal); when it equals this pass's journal, each dropped hint met the same
controller, epoch and live set in the shard as here, where it changed nothing, so it would have
changed nothing there either. When a shard's journal differs, the split is refused and the
cluster replayed whole (``replay_engine.shard.merge``), as when shards disagree among themselves.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from parsers.common.gc_pause import cycle_gc_paused
from parsers.schema import Event
from replay_engine import facts as F
from replay_engine.from_events import ClusterContext
from replay_engine.roles import retire

# Log lines that become controller records (RecordedState / RecordedFailedElection): from logs alone,
# phase 1 reads them all, and every shard those it keeps (as hints outside its own partitions).
RECORD_EVENT_TYPES = ("partition_state_change", "partition_leader_isr_written", "leader_election_failed")


def journal_digest(journal: list[tuple] | None) -> str:
    import hashlib

    h = hashlib.sha256()
    for ts, f, pos, event, state in journal or ():
        ctrl, epoch, live, registered, stopped = state
        h.update(repr((ts, f, pos, event, ctrl, epoch, sorted(live), sorted(registered), sorted(stopped))).encode())
    return h.hexdigest()


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


def depends_on_shutdowns(ctrl, rec) -> bool:
    """Could this record's hint act differently in a shard that knows of a controlled shutdown this pass
    does not (one inferred from that shard's own partitions)? ``ZkControllerReplay._infer_from_record``
    reads the brokers in controlled shutdown only for an ISR removal (a leaving broker is not taken out
    of the live set) and a failed election's stated live set (leaving brokers are kept)."""
    if not ctrl.mode.infers_from_records:
        return False
    if isinstance(rec, F.RecordedState):
        return rec.kind == "isr_removal" and rec.removed_replica is not None and int(rec.removed_replica) in ctrl.live
    if isinstance(rec, F.RecordedFailedElection) and rec.live is not None:
        return set(rec.live) != ctrl.live  # live := stated | (live & leaving): the same for every shutdown set only then
    return False


def _cluster_view(ctrl) -> tuple:
    # a controller inferred from a record always opens a tenure, even under the same id and epoch after a reset
    return ctrl.controller, ctrl.controller_epoch, len(ctrl.tenures), frozenset(ctrl.live)


def phase1_events(events: Iterable[Event]) -> list[Event]:
    """What phase 1 reads: the cluster-wide events and the controller records (every other partition
    event would only be cut away)."""

    return [e for e in events if e.topic is None or e.partition is None or e.event_type in RECORD_EVENT_TYPES]


def cluster_pass(events: Iterable[Event], context: ClusterContext) -> ClusterPass:
    """Replay the cluster with no partition of its own (``events``: at least ``phase1_events``)."""
    with cycle_gc_paused():
        return _cluster_pass(list(events), context)


def _cluster_pass(events: list[Event], context: ClusterContext) -> ClusterPass:
    from replay_engine.api import zk_replay_of
    from replay_engine.shard_cut import shard_facts

    ctrl, stream = zk_replay_of(events, context)
    facts = shard_facts(stream.facts, lambda _tp: False)
    kept: set[HintKey] = set()
    infer = ctrl._infer_from_record
    records = 0

    def hint(f: F.RecordHint) -> None:
        nonlocal records
        records += 1
        before, fragile = _cluster_view(ctrl), depends_on_shutdowns(ctrl, f.record)
        infer(f.record)
        if fragile or _cluster_view(ctrl) != before:
            kept.add(_ref_key(f.ref))

    ctrl.router.replace(F.RecordHint, hint)
    ctrl.journal = []
    ctrl.run(facts, stream.trace_end)
    retire(ctrl)
    return ClusterPass(journal_digest(ctrl.journal), frozenset(kept), records, len(facts) - records)
