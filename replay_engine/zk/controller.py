"""The ZooKeeper-mode controller, re-run over facts in order (one event queue, one thread, as in Kafka).

For each input the loop does what ``KafkaController`` does (onBrokerStartup,
onBrokerFailure, onControllerFailover, topic creation, controlled shutdown,
preferred election, reassignment), calling the pure election functions, and
produces :class:`Decision` records. The cluster's own records (state-znode
writes, ``Changed partition`` lines, failed elections) are then compared with
those decisions, and the timeline follows the record: the replay fills in
only where nothing was recorded. Every disagreement is a divergence with
evidence on both sides.

The controller is in parts, as Kafka's is: its context (``zk.context``: the brokers, whose only writer is
``replay_engine.common.brokers``, the partitions, whose only writer is ``replay_engine.common.apply``, the acting controller,
the configuration), the partition decisions and elections (``zk.partitions``), the broker-change and
controlled-shutdown handlers (``zk.broker_changes``), failover and ZooKeeper holes (``zk.failover``), the topic and
configuration handlers (``zk.topics``), the following and judging of the real controller's records
(``zk.records``; the judge is ``replay_engine.common.judge``), the partitions' lines that are no decision
(``zk.observations``), and a what-if's seeding (``zk.seeding``). The mode
(``replay_engine.zk.modes``) says how records are used. See docs/replay.md.
"""
from __future__ import annotations

from replay_engine.common import facts as F
from replay_engine.common import judge as J
from replay_engine.common.config import ConfigState
from replay_engine.zk.from_events import Coverage
from replay_engine.zk.modes import ZkRecordsMode
from replay_engine.common.roles import Router
from replay_engine.zk.broker_changes import BrokerHandlers
from replay_engine.zk.context import ControllerContext
from replay_engine.zk.failover import FailoverHandlers
from replay_engine.zk.observations import ObservationHandlers
from replay_engine.zk.partitions import PartitionHandlers
from replay_engine.zk.records import RecordHandlers
from replay_engine.zk.seeding import Seeding
from replay_engine.zk.topics import TopicHandlers


class ZkControllerReplay(ControllerContext):
    """The controller's context with its parts, and the loop that hands each fact to them."""

    def __init__(self, config: ConfigState, coverage: Coverage | None = None, mode: ZkRecordsMode | None = None):
        super().__init__(config, coverage, mode)
        self.partition_handlers = PartitionHandlers(self)
        self.broker_handlers = BrokerHandlers(self)
        self.failover_handlers = FailoverHandlers(self)
        self.topic_handlers = TopicHandlers(self)
        self.record_handlers = RecordHandlers(self)
        self.observation_handlers = ObservationHandlers(self)
        self.seeding = Seeding(self)
        # Each fact goes to its role's handler (replay_engine.common.roles); the mode chooses what records and
        # observations do: judged and followed, or (counterfactual) only seeding what the replay does not know.
        follow = self.mode.follows_records
        brokers, partitions, failover = self.broker_handlers, self.partition_handlers, self.failover_handlers
        topics, records, seeding = self.topic_handlers, self.record_handlers, self.seeding
        observations = self.observation_handlers
        self.router = Router(
            inputs={
                F.BrokerUp: brokers.broker_up,
                F.BrokerDown: brokers.broker_down,
                F.LiveSet: brokers.live_set,
                F.ControllerElected: failover.controller_elected,
                F.ControllerGone: failover.controller_gone,
                F.TopicAssignment: topics.topic_assignment,
                F.TopicGone: topics.topic_gone,
                F.TopicsListed: topics.topics_listed,
                F.TopicConfig: topics.topic_config,
                F.BrokerConfig: topics.broker_config,
                F.KafkaVersion: topics.kafka_version,
                F.LeaderIsrChange: partitions.leader_isr_change,
                F.ControlledShutdownRequest: brokers.controlled_shutdown,
                F.PreferredElectionRequest: partitions.preferred_request,
                F.ReassignmentRequest: topics.reassignment_request,
                F.TopicDeletionRequest: topics.deletion_request,
                F.ReassignAway: partitions.reassign_away,
                F.BrokerStopped: brokers.broker_stopped,
                F.ReplicasOffline: brokers.replicas_offline,
                F.ReplicasOnline: brokers.replicas_online,
                F.ZkHole: failover.hole,
            },
            records={
                F.RecordedState: records.recorded_state if follow else seeding.seed_from_record,
                F.RecordedFailedElection: records.recorded_failed if follow else seeding.seed_from_failed,
                F.RecordHint: records.record_hint,
            },
            observations={F.ObservedState: observations.observed if follow else seeding.seed_from_observation},
            evidence={F.Evidence: records.evidence, F.TopicDeletionHalted: topics.deletion_halted},
        )
        # Shard mode (replay_engine.sharding.shard): how the cluster-wide state evolved, to check that every shard
        # saw the same cluster. None = not recorded.
        self.journal: list[tuple] | None = None
        self._journal_last: tuple | None = None  # the cluster-wide state last journaled (``start``, ``step``)
        self._timers = self.mode.fires_timers

    def run(self, facts: list[F.Fact], trace_end: int | None = None) -> None:
        self.start()
        step = self.step
        for fact in facts:
            step(fact)
        self.finish(trace_end)

    def start(self) -> None:
        """Before the first ``step`` (``run`` is start, a step per fact in order, finish): the journal's first state."""
        self._journal_last = self._cluster_state() if self.journal is not None else None
        self._timers = self.mode.fires_timers

    def step(self, fact: F.Fact) -> None:
        """One fact, as the controller's single event thread takes it."""
        if self._timers:
            self.partition_handlers.fire_timers(fact.ts)
        if fact.ts > self.now:
            self.now = fact.ts
        if self.failover_waiting is not None and not isinstance(fact, (F.LiveSet, F.Evidence)):
            self.failover_handlers.on_failover(self.failover_waiting)
        self.router.route(fact)
        journal = self.journal
        if journal is not None:
            now = self._cluster_state()
            if now != self._journal_last:
                r = fact.ref
                journal.append((fact.ts, r.source_file, r.source_pos, r.event, now))
                self._journal_last = now

    def skip_to(self, ts: int | None) -> None:
        """Time reaches ``ts`` without a fact: a record phase 1 foresaw changes nothing
        (``replay_engine.sharding.cluster_pass.inert``), taken only where no timer runs, as ``step`` takes time."""
        if ts is not None and ts > self.now:
            self.now = ts

    def finish(self, trace_end: int | None = None) -> None:
        end = trace_end if trace_end is not None else self.now
        if self._timers:
            self.partition_handlers.fire_timers(end)
        self.pending.resolve_unconfirmed()
        self.findings.extend(J.zk_departure_findings(self.comparisons, self.config.version))

    def _cluster_state(self) -> tuple:
        # Brokers in controlled shutdown are left out: a shutdown inferred from records (no request in the
        # evidence) is inferred by each shard from its own partitions' elections, milliseconds apart.
        b = self.brokers
        return (self.controller, self.controller_epoch, frozenset(b.live), frozenset(b.registered), frozenset(b.stopped))
