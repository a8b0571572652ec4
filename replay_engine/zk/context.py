"""The ZooKeeper-mode controller's context: what every part of the replayed controller reads and keeps.

Kafka's ``ControllerContext`` (2.7.0 core/src/main/scala/kafka/controller/ControllerContext.scala) holds the
controller's epoch, the live and shutting-down brokers, the partitions' assignments and leaders; the state
machines and handlers read it. Here the same: the brokers (``replay_engine.common.brokers``, their only writer), the
partitions (``replay_engine.common.apply``, theirs), the acting controller and its tenures, the configuration, and the
replay's own books (decisions, comparisons, the timeline it shows, findings). The parts of the controller
(``zk_partitions``, ``zk_brokers``, ``zk_failover``, ``zk_topics``, ``zk_records``, ``zk_seeding``) each hold this
context; ``controller.ZkControllerReplay`` is the context with its parts and the event loop.
"""
from __future__ import annotations

from dataclasses import replace
from typing import AbstractSet, Any, Callable, Mapping, NamedTuple

from replay_engine.common import facts as F
from replay_engine.common import judge as J
from replay_engine import rules as R
from replay_engine.common.apply import PartitionStore
from replay_engine.common.brokers import BrokerStates
from replay_engine.common.config import UNCLEAN, ConfigImage, ConfigState, as_bool
from replay_engine.zk.from_events import Coverage
from replay_engine.common.frozen import FrozenMap
from replay_engine.zk.modes import CounterfactualMode, ZkRecordsMode, mode_for
from replay_engine.common.partition import UNKNOWN, Decision, PState, Tenure
from replay_engine.common.states import NEW, OFFLINE
from replay_engine.common.timeline import TimelineBuilder, View
from replay_engine.common.part import Part


class Held(NamedTuple):
    """OfflineReplica writes held back for want of their records (``PartitionHandlers.hold_isr_removals``)."""

    trigger: F.Fact
    brokers: tuple[int, ...]  # removed in this order
    leader_epoch: int | None  # the partition's epoch they were taken on
    # once the first of them is taken up: the rest, as (broker, leader, ISR, leader epoch) computed from the state
    # they were taken on (a line the broker logged since, handling the failover's earlier request, restates older)
    steps: tuple[tuple[int, int, tuple[int, ...], int], ...] | None = None


class ControllerContext:
    """The controller's state and the questions its parts ask of it."""

    # The parts, set by ZkControllerReplay (controller.py) once the context exists; each part holds the context, so
    # the context names them without importing them (no import circle): zk_partitions.PartitionHandlers,
    # zk_brokers.BrokerHandlers, zk_failover.FailoverHandlers, zk_topics.TopicHandlers, zk_records.RecordHandlers,
    # zk_seeding.Seeding.
    partition_handlers: Any
    broker_handlers: Any
    failover_handlers: Any
    topic_handlers: Any
    record_handlers: Any
    seeding: Any
    # What replay_engine.protocol.Replay names that ZooKeeper mode does not keep: ELR is KRaft's (KIP-966); the lines
    # showing a leader active are a KRaft shard's
    elr: Mapping[F.TP, tuple[tuple[int, ...], tuple[int, ...]]] = FrozenMap()
    elr_enabled = False
    inferred: tuple = ()

    def __init__(self, config: ConfigState, coverage: Coverage | None = None, mode: ZkRecordsMode | None = None):
        """``mode``: how records are used (see replay_engine.zk.modes); by default, following them, with
        ZooKeeper's log when ``coverage`` holds it. In a what-if topology (``CounterfactualMode.rewrite``)
        followers of a rewritten partition are assumed to keep up, so ISR = live replicas of the new AR."""
        self.config = config
        self.mode = mode if mode is not None else mode_for(coverage)
        self.coverage = self.mode.coverage(coverage)
        self.rewrite = dict(self.mode.rewrite) if isinstance(self.mode, CounterfactualMode) else {}
        self.next_rebalance: int | None = None
        # Every broker's state (registered, live to the controller, shutting down, stopping, stopped, epochs, log
        # dirs, periods), each change with its provenance: written only there (replay_engine.common.brokers).
        self.brokers = BrokerStates()
        # topic -> its deletions: (the record that began one, when it ended or None). One ends when the topic is
        # gone, or when another controller takes over (it re-reads the queue and says so if the topic is in it).
        self.deletions: dict[str, list[tuple[F.Ref, int | None]]] = {}
        self.deletion_halts: dict[str, list[tuple[F.Ref, str | None]]] = {}  # topic -> (line, reason) of each hold
        self.after_hole = False  # ZooKeeper's data had a hole: records on states not seen since are evidence gaps
        self.hidden: set[F.TP] = set()  # partitions that existed before a hole, their state since unknown
        self.covered_before: int | None = None  # the first zxid after the last hole a snapshot covered
        self.controller: int | None = None
        self.controller_epoch: int | None = None
        # a controller elected whose failover waits for its logged view of live brokers (see controller_elected)
        self.failover_waiting: F.ControllerElected | None = None
        # The partitions, who leads which, and their assignments over time: written only by the apply module.
        self.store = PartitionStore(findings=[])
        self.parts = self.store.parts
        self.led_by = self.store.led_by
        self.ar_history = self.store.ar_history
        self.part: Callable[[F.TP], PState] = self.store.part
        self.timeline = TimelineBuilder()
        # What the timeline shows: confirmed state only (records, observations, decisions where no record
        # is expected). The replay's own belief (self.parts) may run ahead of it until the record arrives.
        self.shown: dict[F.TP, View] = {}
        self.shown_led_by: dict[int, set[F.TP]] = {}
        self.pending = J.Pending()
        self.decisions: list[Decision] = []
        self.comparisons: list[J.Comparison] = []  # one per record judged, whatever the verdict
        self.preferred_requested: dict[F.TP, int] = {}  # partition -> when a preferred election was asked
        self.preferred_asks = 0  # how many times it was written (the judge's view holds a copy)
        self._view_key: tuple | None = None
        self._view: J.JudgeView | None = None
        self.tenures: list[Tenure] = []
        self.evidence_by_broker: dict[int, list[F.Ref]] = {}
        self.evidence_by_tp: dict[F.TP, list[F.Ref]] = {}
        self.failed_elections: dict[F.TP, list[F.Ref]] = {}
        # partition -> controller epoch of its last record logged under an epoch below the one known (logs only)
        self.below_epoch: dict[F.TP, int] = {}
        # a controller's own line stating a partition under a controller epoch below the one the replay's state was
        # written under: a deposed controller's context, or ZooKeeper's data anew (``RecordHandlers.restarted``)
        self.stale_views: dict[F.TP, F.ObservedState] = {}
        # partition -> ISR writes whose inputs the evidence states but whose records it should hold (logs only), not
        # yet applied: taken up at the partition's next record if it follows from them (PartitionHandlers.take_up_held)
        self.held_back: dict[F.TP, Held] = {}
        self.stated_epoch: dict[F.TP, int] = {}  # partition -> controller epoch of the last state a line stated
        self.unclean_elections: list[Decision] = []
        self.findings: list[dict[str, Any]] = self.store.findings
        self.config_history: list[tuple[int, ConfigImage]] = [(0, config.image())]
        self.now = 0
        self.seq = 0  # decisions numbered in the order they were taken
        self.inferring = False  # replaying a controlled shutdown a record implies (not one the evidence states)

    # ---------------------------------------------------------------- the acting controller

    def take_office(self, controller: int, epoch: int | None, ts: int, ref: F.Ref) -> None:
        """``controller`` takes office in ``epoch`` (or the next one, when its line does not say): a tenure begins, and
        the auto leader rebalance's first check is 5 s away (KafkaController.onControllerFailover)."""
        self.controller = controller
        self.controller_epoch = epoch if epoch is not None else (
            None if self.controller_epoch is None else self.controller_epoch + 1)
        self.tenures.append(Tenure(controller, self.controller_epoch, ts, start_ref=ref))
        self.next_rebalance = ts + 5_000_000

    def note_stated_epoch(self, tp: F.TP, epoch: int | None) -> None:
        """A line stated the partition's state as written under controller ``epoch``."""
        if epoch is not None:
            self.stated_epoch[tp] = epoch

    def epochs_in_no_line(self, after: int | None, before: int | None) -> tuple[int, ...]:
        """Controller epochs strictly between ``after`` (of a partition's last write) and ``before`` (of a record)
        in which no controller takes office in the evidence (its election line, or a line it wrote under that
        epoch): every controller epoch is one election (KafkaZkClient.registerControllerAndIncrementControllerEpoch),
        and what those controllers decided is in no line."""
        if after is None or before is None or not 0 < before - after <= 10_000:
            return ()
        named = {t.epoch for t in self.tenures}
        # the record's own epoch too, when no line shows that controller taking office (its tenure inferred from its
        # own lines): its failover's writes (onControllerFailover, 0.10.2.0 KafkaController) are in no line
        own = next((t for t in reversed(self.tenures) if t.epoch == before), None)
        inferred = own is None or own.start_ref is None or own.start_ref.event == "inferred_controller"
        return tuple(e for e in range(after + 1, before) if e not in named) + ((before,) if inferred else ())

    def end_tenure(self, ts: int, ref: F.Ref, cause: str) -> None:
        if self.tenures and self.tenures[-1].end is None:
            self.tenures[-1] = replace(self.tenures[-1], end=ts, end_ref=ref, end_cause=cause)

    def leave_office(self) -> None:
        self.controller = None
        self.next_rebalance = None

    def next_seq(self) -> int:
        """The next decision's number (decisions are numbered in the order they were taken)."""
        self.seq += 1
        return self.seq

    def preferred_asked(self, tps, ts: int) -> None:
        """A preferred leader election was asked for ``tps`` at ``ts`` (an admin request, or the rebalance timer)."""
        for tp in tps:
            self.preferred_requested[tp] = ts
        self.preferred_asks += 1

    # ---------------------------------------------------------------- questions the parts ask

    def online(self, b: int) -> bool:
        return self.brokers.online(b)

    def online_set(self, tp: F.TP | None = None) -> frozenset[int]:
        return self.brokers.online_set(tp)

    @property
    def live(self) -> AbstractSet[int]:
        return self.brokers.live

    @property
    def known_brokers(self) -> AbstractSet[int]:
        return self.brokers.known

    @property
    def periods(self) -> dict[int, list]:
        return self.brokers.periods

    def judge_view(self) -> J.JudgeView:
        """The frozen view the judge reads at a record: the brokers as the acting controller sees them, and the rules
        in force. Built again only when one of them changed since the last record."""
        t = self.tenures[-1] if self.tenures else None
        key = (self.brokers.writes, self.controller, self.controller_epoch, len(self.tenures),
               t is not None and t.end is None, len(self.config_history), self.preferred_asks)
        if key != self._view_key:
            self._view_key, self._view = key, self._build_judge_view()
        return self._view

    def _build_judge_view(self) -> J.JudgeView:
        brokers = self.brokers
        t = self.tenures[-1] if self.tenures and self.tenures[-1].end is None else None
        inherited = t is None or t.start_ref is None or t.start_ref.event == "inferred_controller"
        return J.JudgeView(
            self.controller, frozenset(brokers.live), frozenset(brokers.shutting), brokers.online_set(),
            FrozenMap({b: frozenset(tps) for b, tps in brokers.offline_replicas.items()}),
            None if brokers.membership_stated else frozenset(brokers.seen),
            brokers.versions.get(self.controller, self.config.version), self.config.image(),
            FrozenMap(self.preferred_requested), self.coverage, inherited)

    def config_changed(self, ts: int) -> None:
        self.config_history.append((ts, self.config.image()))

    def view(self, p: PState) -> View:
        state = p.state
        leader = p.leader
        if p.deleting:
            state = OFFLINE
        if state == NEW and p.init_failed:
            leader = -1
        alive = None if leader is None or leader < 0 else self.brokers.alive(leader)
        serving = None if leader is None or leader < 0 or leader not in self.brokers.stopped else False
        return View(leader, p.isr, p.leader_epoch, p.controller_epoch, state, alive, serving)

    def touch(self, p: PState, ts: int, ref: F.Ref, basis: str) -> None:
        if p.state == UNKNOWN and p.leader is None:
            return  # nothing known yet: no interval to show
        self.show(p.tp, self.view(p), ts, ref, basis)

    def show(self, tp: F.TP, view: View, ts: int, ref: F.Ref, basis: str) -> None:
        old = self.shown.get(tp)
        if old is not None and old.leader is not None and old.leader >= 0:
            self.shown_led_by.get(old.leader, set()).discard(tp)
        self.shown[tp] = view
        if view.leader is not None and view.leader >= 0:
            self.shown_led_by.setdefault(view.leader, set()).add(tp)
        self.timeline.update(tp, ts, view, ref, basis)

    def liveness_changed(self, b: int, ts: int, ref: F.Ref) -> None:
        alive = b in self.brokers.registered
        serving = False if b in self.brokers.stopped else None
        for tp in sorted(self.shown_led_by.get(b, ())):
            v = self.shown[tp]
            if v.leader_alive != alive or v.leader_serving != serving:
                self.show(tp, View(v.leader, v.isr, v.leader_epoch, v.controller_epoch, v.state, alive, serving),
                          ts, ref, "liveness")

    def unclean_allowed(self, topic: str) -> bool:
        return as_bool(self.config.value(UNCLEAN, topic, self.controller))

    def rule(self, decision: str, *args):
        """Kafka's rule for ``decision`` in the version that wrote the evidence (replay_engine.rules): the acting
        controller's own version when it logged one (a rolling upgrade mixes them), else the cluster's."""
        return R.decide(decision, self.brokers.versions.get(self.controller, self.config.version), *args)

    def release_known(self) -> bool:
        """Is the Kafka release ``rule`` reads in the evidence (a 'Kafka version:' line or a config), not assumed?"""
        return self.brokers.versions.get(self.controller, self.config.version) is not None

    def recorded_here(self, ts: int, kind: str) -> bool:
        return self.coverage.recorded(ts, self.controller, kind)

    def note_broker(self, b: int, ref: F.Ref) -> None:
        self.evidence_by_broker.setdefault(b, []).append(ref)

    def defers_gaps(self) -> bool:
        """A record on a state the replay never saw is an evidence gap: logs only, or after a ZooKeeper hole."""
        return self.mode.evidence_gaps or self.after_hole

    def known(self, p: PState) -> bool:
        return p.isr is not None and (p.leader is not None or p.state == NEW)


class ZkPart(Part):
    """A part of the ZooKeeper-mode controller (its handlers, the seeding): the context, weakly (``c``), and the owners
    of the state every part reads, at hand."""

    OWNER = "c"

    def __init__(self, c: ControllerContext):
        self.belong_to(c)
        self.store = c.store
        self.brokers = c.brokers
        self.parts = c.parts
        self.config = c.config
        self.mode = c.mode
        self.pending = c.pending
        self.findings = c.findings
