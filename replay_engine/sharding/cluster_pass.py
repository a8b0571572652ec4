"""Phase 1 of a sharded replay from logs alone: the cluster-wide facts, reduced once.

From logs alone, which controller acted (and in which epoch) and which brokers it held alive are
learnt from its per-partition records (``replay_engine.zk.inference``: a state-change
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
cluster replayed whole (``replay_engine.sharding.shard.merge``), as when shards disagree among themselves.

The pass runs in every shard that reads all records, so its cost is not divided by the shards. Most
records are foreseen to change nothing from their event's fields and the controller's state
(``inert``) and are counted without building their facts (``streamed_pass``, 6-7x faster on the
benchmark's shards); the rest are replayed as ``replayed_pass`` replays all of them.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from parsers.common.gc_pause import cycle_gc_paused
from parsers.schema import Event
from replay_engine.common import facts as F
from replay_engine.zk.inference import acting, implied_liveness
from replay_engine.zk.from_events import LOG_KINDS, ZK_KINDS, ClusterContext
from replay_engine.common.roles import retire

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
    does not (one inferred from that shard's own partitions)? ``zk_inference.implied_liveness`` says (``fragile``):
    an ISR removal of a broker in the live set, a failed election's stated live set other than the replay's."""
    if not ctrl.mode.infers_from_records:
        return False
    failed = isinstance(rec, F.RecordedFailedElection)
    b = ctrl.brokers
    return implied_liveness("failed" if failed else rec.kind, None if failed else rec.leader, rec.isr, rec.from_state,
                            None if failed else rec.removed_replica, rec.live if failed else None,
                            b.live, b.shutting, b.stopping).fragile


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
        events = list(events)
        streamed = streamed_pass(events, context)
        return streamed if streamed is not None else replayed_pass(events, context)


class _Hints:
    """The pass's handler of RecordHint: counts the records and keeps those that changed the controller's view or
    could have in a shard."""

    def __init__(self, ctrl):
        self.ctrl, self.kept, self.records = ctrl, set(), 0
        ctrl.router.replace(F.RecordHint, self)
        ctrl.journal = []

    def __call__(self, f: F.RecordHint) -> None:
        ctrl = self.ctrl
        self.records += 1
        before, fragile = _cluster_view(ctrl), depends_on_shutdowns(ctrl, f.record)
        ctrl.record_handlers.infer_from_record(f.record)
        if fragile or _cluster_view(ctrl) != before:
            self.kept.add(_ref_key(f.ref))

    def result(self, facts: int, skipped: int = 0) -> ClusterPass:
        ctrl = self.ctrl
        retire(ctrl)
        return ClusterPass(journal_digest(ctrl.journal), frozenset(self.kept), self.records + skipped, facts)


def replayed_pass(events: list[Event], context: ClusterContext) -> ClusterPass:
    """Phase 1 the plain way: every event's facts, the records among them as hints, replayed in order."""
    from replay_engine.api import zk_replay_of
    from replay_engine.sharding.cut import shard_facts

    ctrl, stream = zk_replay_of(events, context)
    facts = shard_facts(stream.facts, lambda _tp: False)
    hints = _Hints(ctrl)
    ctrl.run(facts, stream.trace_end)
    return hints.result(len(facts) - hints.records)


def inert(ctrl, ev: Event, kind: str) -> bool:
    """Would the hint of this record (a log event of ``record_kind`` ``kind``) leave the controller, its epoch and
    its live set as they are, in this pass and in any shard (not ``depends_on_shutdowns``)? Asked of the rules the
    replay applies (``replay_engine.zk.inference``) with the event's own fields, before the record's facts are built.
    A failed election's live set is read from its exception message, and a record of a stale epoch depends on the
    release: both go the plain way."""
    if kind == "failed" or acting(ctrl.controller, ctrl.controller_epoch, ev.controller_id, ev.controller_epoch,
                                  kind) is not None:
        return False
    b = ctrl.brokers
    implied = implied_liveness(kind, ev.leader, ev.isr, ev.from_state, (ev.detail or {}).get("removed_replica"), None,
                               b.live, b.shutting, b.stopping)
    return not implied.fragile and not implied.changes


def streamed_pass(events: list[Event], context: ClusterContext) -> ClusterPass | None:
    """Phase 1 with the records streamed: only the cluster-wide events' facts are built up front; each record is
    merged in where ``build_facts`` would put its facts and, when ``inert``, counted without being built (most
    are: the controller already believed what they say). The same pass as ``replayed_pass``, step for step, for
    every record that can change something. None when this cluster's order cannot be had that way (ZooKeeper
    transactions, merged in zxid order; a record on a line that also gives a cluster-wide fact, whose order among
    them is the events' own): the caller replays it the plain way."""
    from replay_engine.api import zk_replay_of
    from replay_engine.zk.from_events import event_log_key, log_event_facts, logs_stream_key, record_kind
    from replay_engine.sharding.cut import shard_facts
    from replay_engine.zk.shutdown_sessions import shutdown_session_ends

    if context.zk or context.zk_window is not None:
        return None
    wide: list[Event] = []
    records: list[Event] = []
    for e in events:
        src = e.source_kind
        if src in ZK_KINDS:
            return None
        if e.event_type in RECORD_EVENT_TYPES and e.topic is not None and e.partition is not None and src in LOG_KINDS:
            records.append(e)
        else:
            wide.append(e)
    ctrl, stream = zk_replay_of(wide, context, paths={e.source_file for e in events if e.source_file})
    if not ctrl.mode.infers_from_records or ctrl.mode.fires_timers:
        return None
    facts = shard_facts(stream.facts, lambda _tp: False)
    fact_keys = [logs_stream_key(f) for f in facts]
    record_keys = [event_log_key(e) for e in records]
    if not set(fact_keys).isdisjoint(record_keys):
        return None
    ends = shutdown_session_ends(wide)  # lines that give a BrokerDown besides their own facts (build_facts)
    if ends and any((e.source_file, e.source_pos) in ends for e in records):
        return None
    order = sorted(range(len(records)), key=record_keys.__getitem__)  # stable: the events' order on a tie
    hints = _Hints(ctrl)
    ctrl.start()
    step = ctrl.step
    nothing = lambda _tp: False  # noqa: E731
    i, n, skipped = 0, len(facts), 0
    for j in order:
        key = record_keys[j]
        while i < n and fact_keys[i] < key:
            step(facts[i])
            i += 1
        ev = records[j]
        kind = record_kind(ev)
        if kind is None:
            continue  # evidence of a partition: cut from phase 1
        if ctrl.failover_waiting is None and inert(ctrl, ev, kind):
            skipped += 1
            ctrl.skip_to(ev.ts)
            continue
        for f in shard_facts(log_event_facts(ev, True), nothing):
            step(f)
    for f in facts[i:]:
        step(f)
    ctrl.finish(stream.trace_end)
    return hints.result(n, skipped)
