"""KRaft mode: the quorum controller re-run over the ``__cluster_metadata`` log (and KRaft log lines).

In KRaft the controller's decisions *are* the metadata log: a
``PartitionChangeRecord`` after a broker is fenced is the controller's
election. The replay keeps broker registrations (fenced, controlled
shutdown), topics and partition registrations, re-derives every leader
change with the ``PartitionChangeBuilder`` rules (``kraft_rules``) at the
point it was recorded, and follows the record. Leader changes that only the
broker logs show (KRaft logs elections at DEBUG) are judged against what the
brokers say they became. Produces the same outputs as the ZooKeeper-mode
replay, so reports, dashboards, what-if and audit work unchanged.

It reads facts, not events (``kraft_facts`` makes them), each routed to its
handler by its role (``roles.Router``). The handlers are in parts, one job each: ``kraft_brokers`` (registrations,
fences, controlled shutdowns, written through ``brokers.KraftBrokerStates``, the only writer of broker state, which
every decision reads as ``brokers``), ``kraft_topics`` (topic ids, incarnations,
configuration), ``kraft_records`` (the controller's partition records), ``kraft_steps`` (the replay's own steps from
logs alone), ``kraft_lines`` (brokers' statements of leader epochs), over one partition store (``apply``) and one
ledger of leader epochs (``kraft_epochs``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from replay_engine.common import facts as F
from replay_engine import rules as R
from replay_engine.common.apply import PartitionStore
from replay_engine.common.brokers import KraftBrokerStates
from replay_engine.common.config import MIN_ISR, UNCLEAN, ConfigImage, ConfigState, as_bool
from replay_engine.common.frozen import FrozenMap
from replay_engine.common.judge import Comparison, judge_kraft
from replay_engine.kraft.brokers import KraftBrokers
from replay_engine.kraft.counterfactual import KraftCounterfactual, KraftVariant
from replay_engine.kraft.epochs import EpochLedger
from replay_engine.kraft.evidence import departure_findings
from replay_engine.kraft.facts import KraftStream
from replay_engine.kraft.lines import UNKNOWN_BEFORE, KraftLines  # noqa: F401 (UNKNOWN_BEFORE: re-exported)
from replay_engine.kraft.records import KraftRecords
from replay_engine.kraft.steps import KraftSteps
from replay_engine.kraft.topics import KraftTopics
from replay_engine.common.partition import UNKNOWN, Decision, PState, Tenure
from replay_engine.common.roles import Router
from replay_engine.common.states import OFFLINE, ONLINE
from replay_engine.common.timeline import TimelineBuilder


class KraftReplay:
    # What replay_engine.protocol.Replay names that KRaft does not keep: ZooKeeper mode's acting controller (a KRaft
    # replay's quorum leaders are its tenures) and its topic-deletion queue
    controller: int | None = None
    controller_epoch: int | None = None
    deletions: Mapping[str, tuple] = FrozenMap()
    deletion_halts: Mapping[str, tuple] = FrozenMap()

    def __init__(self, config: ConfigState, variant: KraftVariant | None = None):
        """``variant``: a what-if side, which decides every partition change itself (``kraft_counterfactual``)
        instead of following the controller's records."""
        self.config = config
        # Partitions are written only through the apply module. KRaft has no partition state machine: the
        # state shown is Online with a leader, Offline without, and moves between those pass the table.
        self.findings: list[dict[str, Any]] = []
        self.store = PartitionStore(self.findings)
        self.parts = self.store.parts
        self.ar_history = self.store.ar_history
        self.elr_enabled = False
        self.timeline = TimelineBuilder()
        self.decisions: list[Decision] = []
        self.comparisons: list[Comparison] = []  # one per record judged, whatever the verdict
        self.tenures: list[Tenure] = []
        self.config_history: list[tuple[int, ConfigImage]] = [(0, config.image())]
        self.failed_elections: dict[F.TP, list[F.Ref]] = {}
        self.evidence_by_broker: dict[int, list[F.Ref]] = {}
        self.evidence_by_tp: dict[F.TP, list[F.Ref]] = {}
        self.unclean_elections: list[Decision] = []
        self.has_records = False
        self.inferred: list[tuple] = []  # lines of its own partitions that showed a leader active (kraft_split)
        self.holes: list[tuple[int, int, int, int]] = []  # stretches the evidence lost (quorum_epoch_holes)
        self.began: int | None = None  # the time of the evidence's first line
        self.controller_view: tuple[int, int] | None = None  # see KraftStream.controller_view
        self._seq = 0
        self.brokers = KraftBrokerStates()  # every broker's registration: what every decision reads
        self.registrations = KraftBrokers(self)  # its handlers, the only code that changes it
        self.ledger = EpochLedger()
        self.topics = KraftTopics(self)
        self.records = KraftRecords(self)
        self.steps = KraftSteps(self)
        self.lines = KraftLines(self)
        b, t, rec = self.registrations, self.topics, self.records
        # The metadata log (or the lines the controller logs of it) is followed; a what-if side decides for itself
        cf = KraftCounterfactual(self, variant) if variant is not None else None
        if variant is not None and variant.elr is not None:
            self.elr_enabled = variant.elr
        self.router = Router(
            inputs={F.ControllerElected: self._quorum_leader, F.ControllerGone: self._quorum_leader_gone,
                    F.BrokerRegistered: b.on_registered, F.BrokerUp: b.on_unfenced, F.BrokerDown: b.on_broker_down,
                    F.ControlledShutdownRequest: b.on_controlled_shutdown,
                    F.BrokerUncleanShutdown: b.on_unclean_shutdown, F.BrokerStopped: b.on_stopped,
                    F.TopicNamed: t.on_topic_named,
                    F.TopicGone: t.on_topic_gone, F.TopicConfig: t.on_topic_config,
                    F.BrokerConfig: t.on_broker_config,
                    F.FeatureLevel: cf.on_feature_level if cf else t.on_feature_level,
                    F.KafkaVersion: t.on_kafka_version,
                    F.LeaderIsrChange: cf.on_isr_updated if cf else rec.on_isr_updated,
                    F.MetadataLogBegins: cf.on_metadata_log_begins if cf else self._metadata_log_begins},
            records={F.PartitionRegistration: cf.on_partition_record if cf else rec.on_partition_record,
                     F.PartitionChange: cf.on_partition_change if cf else rec.on_partition_change},
            observations={F.ObservedState: cf.on_observation if cf else self.lines.on_observation,
                          F.BrokerRegistrationObserved: b.on_registration_observed,
                          F.LeaderActiveHint: b.on_leader_active_hint},
            evidence={F.Evidence: self._evidence})

    # ------------------------------------------------------------------ what the image and a split replay read

    @property
    def live(self) -> set[int]:
        return self.brokers.live

    @property
    def known_brokers(self) -> set[int]:
        return self.brokers.known

    @property
    def periods(self) -> dict:
        return self.brokers.periods

    @property
    def elr(self) -> dict:
        return self.store.elr

    @property
    def journal(self) -> list[tuple] | None:
        return self.registrations.journal

    @journal.setter
    def journal(self, value: list[tuple] | None) -> None:
        self.registrations.journal = value

    def acceptable(self) -> frozenset[int]:
        return self.brokers.acceptable()

    # ------------------------------------------------------------------ shared by the parts

    def show(self, p: PState, ts: int, ref: F.Ref, basis: str) -> None:
        if p.leader is None and p.state == UNKNOWN:
            return
        alive = None if p.leader is None or p.leader < 0 else p.leader in self.brokers.live
        # what-if: a killed leader the controller still holds unfenced serves nothing (None: nothing says otherwise)
        serving = False if alive and p.leader in self.brokers.stopped else None
        state = p.state if p.state != UNKNOWN else (ONLINE if p.leader is not None and p.leader >= 0 else OFFLINE)
        self.timeline.update_fields(p.tp, ts, ref, basis, p.leader, p.isr, p.leader_epoch, p.controller_epoch, state,
                                    alive, serving)

    def set_replicas(self, p: PState, replicas, ts: int) -> None:
        self.store.set_replicas(p, replicas, ts)

    def unclean(self, topic: str) -> bool:
        return as_bool(self.config.value(UNCLEAN, topic))

    def min_isr(self, topic: str) -> int:
        return self.config.int_value(MIN_ISR, topic)

    def rule(self, decision: str, *args):
        """Kafka's rule for ``decision`` in the version that wrote the evidence (replay_engine.rules)."""
        return R.decide(decision, self.config.version, *args)

    def run(self, stream: KraftStream) -> None:
        """``stream``: from ``kraft_facts.kraft_facts``: the facts in the cluster's order, and what the whole
        cluster's events say besides (stretches the evidence lost, records a renounce rolled back)."""
        self.start(stream)
        route, handlers = self.router.route, self.router.by_type()
        for fact in stream.facts:
            handler = handlers.get(type(fact))
            if handler is None:
                route(fact)  # no handler: stops the run with both names (roles.UnroutedFact)
            else:
                handler(fact)
        self.finish(stream)

    def start(self, stream: KraftStream) -> None:
        """Before the first ``step`` (``run`` is start, a step per fact in order, finish): what the whole
        cluster's events say besides the facts. ``watch`` calls it again as the evidence grows."""
        self.holes = list(stream.holes)
        self.began = stream.began
        self.controller_view = stream.controller_view

    def step(self, fact: F.Fact) -> None:
        """One fact, in the cluster's order."""
        self.router.route(fact)

    def finish(self, stream: KraftStream) -> None:
        """After the last fact: the findings of the whole run."""
        self.findings.extend(stream.findings)
        self.findings.extend(departure_findings(self.comparisons, self.config.version))

    def _quorum_leader(self, f: F.ControllerElected) -> None:
        self._tenure(f, f.controller, f.epoch)

    def _quorum_leader_gone(self, f: F.ControllerGone) -> None:
        """The quorum has no leader known, or the leader renounced (kraft_facts emits this only while one is
        in office)."""
        if self.tenures and self.tenures[-1].end is None:
            self.tenures[-1] = replace(self.tenures[-1], end=f.ts, end_ref=f.ref, end_cause="renounced")

    def _tenure(self, f: F.Fact, c: int | None, epoch: int | None) -> None:
        if self.tenures and self.tenures[-1].end is None:
            t = self.tenures[-1]
            if t.controller == c and (epoch is None or t.epoch == epoch):
                return
            cause = "new quorum leader" if c is not None and c >= 0 else "renounced"
            self.tenures[-1] = replace(t, end=f.ts, end_ref=f.ref, end_cause=cause)
        if c is not None and c >= 0:
            self.tenures.append(Tenure(c, epoch, f.ts, start_ref=f.ref))

    def _metadata_log_begins(self, f: F.MetadataLogBegins) -> None:
        self.has_records = True

    def _evidence(self, f: F.Evidence) -> None:
        if f.broker is not None:
            self.evidence_by_broker.setdefault(f.broker, []).append(f.ref)
        if f.tp is not None:
            self.evidence_by_tp.setdefault(f.tp, []).append(f.ref)

    def judge(self, tp: F.TP, f: F.Fact, recorded: dict, replayed: dict, how: str) -> None:
        r = f.ref
        c = judge_kraft(tp, f.ts, r, recorded, replayed, how)
        self.comparisons.append(c)
        if c.agreed and isinstance(f, F.ObservedState) and f.leader_epoch is not None and "leader" in replayed:
            self.ledger.epoch_decided.setdefault(tp, {})[f.leader_epoch] = replayed["leader"]
        self._seq += 1
        self.decisions.append(Decision(self._seq, f.ts, tp, "election" if "leader" in replayed else "isr_removal",
                                       how, r, {}, replayed, status=c.verdict, record=r))
