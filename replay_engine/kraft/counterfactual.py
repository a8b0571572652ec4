"""A KRaft replay that decides for itself (what-if): the trace's broker events in, every partition change the
replay's own, by the release's PartitionChangeBuilder (``kraft_build``, through ``KraftSteps``).

The controller's records say only what happened, so they are not followed: a record of a partition the replay does not
know yet seeds it (its state as stated, as the ZooKeeper-mode ``CounterfactualMode`` seeds); a creation is decided by
createTopic's rule over the variant's replicas; a leader's ISR change (AlterPartition, "ISR updated to ...") is an
input, taken where the replay's leader is the one that could have asked it (validateAlterPartitionData: the new ISR
holds the leader); a leader change no broker event wrote (the periodic rebalance, an election asked for) is replayed
as the PREFERRED election it was. Everything else a record states is the real controller's decision, which the
replay's own steps take in its place.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from replay_engine.common import facts as F
from replay_engine.common.apply import DECIDED, OBSERVED
from replay_engine.kraft.build import BrokerEvent, Registration, build
from replay_engine.kraft.point import created_leader
from replay_engine.kraft.part import KraftPart
from replay_engine.common.partition import Decision, PState
from replay_engine.common.states import OFFLINE, ONLINE


@dataclass(frozen=True)
class KraftVariant:
    """What a KRaft what-if changes besides configuration: the replicas of rewritten partitions (a replication factor
    changed: the followers are taken in sync) and eligible.leader.replicas.version forced on or off (None: as the
    trace's FeatureLevelRecords say)."""

    rewrite: Mapping[F.TP, tuple[int, ...]] = field(default_factory=dict)
    elr: bool | None = None


class KraftCounterfactual(KraftPart):
    """The record and observation handlers of a KRaft replay that decides for itself."""

    def __init__(self, replay: Any, variant: KraftVariant):
        super().__init__(replay)
        self.variant = variant

    # ------------------------------------------------------------------ records

    def on_partition_record(self, f: F.PartitionRegistration) -> None:
        tp = f.tp
        self.r.topics.incarnation(tp, f.topic_id, f.ts, f.ref)
        p = self.parts.get(tp)
        replicas = tuple(self.variant.rewrite.get(tp, f.replicas or ()))
        if f.snapshot:
            if p is None or p.isr is None:
                self._seed(tp, f.ts, f.ref, replicas, f.leader, f.isr, f.leader_epoch, f.zk_version,
                           f.elr, f.last_known_elr)
            return
        if p is not None and p.isr is not None:
            return  # the partition is the replay's already (a record stating it again)
        # createTopic: the active replicas form the ISR, the first of them leads (kraft.election.created)
        leader, isr = created_leader(replicas, self.brokers.acceptable(), self.brokers.shutting_down(),
                                     version=self.r.config.version)
        p = self.store.part(tp)
        before = p.snapshot()
        self.r.set_replicas(p, replicas, f.ts)
        self.store.set_leader(p, leader)
        self.store.set(p, isr=tuple(isr), leader_epoch=0, zk_version=0)
        self.store.move(p, ONLINE if leader >= 0 else OFFLINE, DECIDED, f.ts, f.ref)
        self.store.set_elr(tp, (), ())
        self._decided(p, f, before, "new partition (KRaft createTopics)")

    def on_partition_change(self, f: F.PartitionChange) -> None:
        tp = f.tp
        self.r.topics.incarnation(tp, f.topic_id, f.ts, f.ref)
        p = self.parts.get(tp)
        if p is None or p.isr is None:
            prev = f.previous
            if prev is not None:
                # a 4.x line states the registration it started from: the partition as it stood before
                self._seed(tp, f.ts, f.ref, tuple(self.variant.rewrite.get(tp, prev["replicas"])), prev["leader"],
                           prev["isr"], prev["leader_epoch"], prev["partition_epoch"], prev["elr"],
                           prev["last_known_elr"])
            elif f.isr is not None and f.leader is not None:
                self._seed(tp, f.ts, f.ref, tuple(self.variant.rewrite.get(tp, f.replicas or f.isr)), f.leader, f.isr,
                           f.leader_epoch, f.zk_version, f.elr, f.last_known_elr)
            return
        written_for_a_broker = bool(f.broker_events) or not f.metadata_log
        if "leader" not in f.changed and "isr" in f.changed and f.isr is not None and not f.broker_events:
            self._alter_partition(p, f.isr, f)
        elif "leader" in f.changed and not written_for_a_broker:
            self._preferred(p, f)

    def on_isr_updated(self, f: F.LeaderIsrChange) -> None:
        p = self.parts.get(f.tp)
        if p is not None and p.isr is not None and f.isr is not None:
            self._alter_partition(p, f.isr, f)

    def on_observation(self, f: F.ObservedState) -> None:
        """A broker's line of the state it took up: the partition's state only where the replay knows none."""
        tp = f.tp
        self.r.topics.incarnation(tp, f.topic_id, f.ts, f.ref)
        p = self.parts.get(tp)
        if (p is None or p.isr is None) and f.isr is not None and f.leader is not None:
            self._seed(tp, f.ts, f.ref, tuple(self.variant.rewrite.get(tp, f.replicas or f.isr)), f.leader, f.isr,
                       f.leader_epoch, f.zk_version, None, None)

    def on_metadata_log_begins(self, f: F.MetadataLogBegins) -> None:
        """The replay's own steps decide from the metadata log's first record on too."""

    def on_feature_level(self, f: F.FeatureLevel) -> None:
        if self.variant.elr is None:
            self.r.topics.on_feature_level(f)

    # ------------------------------------------------------------------ what the replay does with them

    def _seed(self, tp: F.TP, ts: int, ref: F.Ref, replicas, leader, isr, leader_epoch, partition_epoch, elr,
              last_known) -> None:
        p = self.store.part(tp)
        if replicas:
            self.r.set_replicas(p, replicas, ts)
        self.store.set_leader(p, leader)
        if tp in self.variant.rewrite and leader is not None and leader >= 0:
            isr = tuple(r for r in replicas if r == leader or r in self.brokers.live)  # followers taken in sync
        self.store.set(p, isr=tuple(isr or ()), leader_epoch=leader_epoch, zk_version=partition_epoch)
        self.store.move(p, ONLINE if (leader if leader is not None else -1) >= 0 else OFFLINE, OBSERVED, ts, ref)
        self.store.set_elr(tp, tuple(elr or ()), tuple(last_known or ()))
        self.r.show(p, ts, ref, "observed")

    def _alter_partition(self, p: PState, isr, f: F.Fact) -> None:
        """A leader's AlterPartition, as the controller writes it only when valid (3.5.1 .. 3.9.0-rc3
        ReplicationControlManager.validateAlterPartitionData: assigned replicas holding the leader; 3.3+ each of
        them eligible, kraft.alter_partition). A rewritten partition keeps its followers in sync."""
        if p.tp in self.variant.rewrite or p.leader is None or p.leader < 0:
            return
        new = tuple(isr)
        if new == tuple(p.isr) or not self.r.rule("kraft.alter_partition", p.replicas, p.leader, new,
                                                  self.brokers.acceptable() | {p.leader}):
            return
        self.store.set(p, isr=new)
        self.r.show(p, f.ts, f.ref, "replayed")

    def _preferred(self, p: PState, f: F.PartitionChange) -> None:
        """A leader change no broker event wrote: the periodic rebalance (maybeBalancePartitionLeaders) or an election
        asked for, replayed as Election.PREFERRED (never unclean) on the replay's own registration."""
        elr, last_known = self.store.elr.get(p.tp, ((), ()))
        reg = Registration(tuple(p.replicas or p.isr), tuple(p.isr), p.leader if p.leader is not None else -1,
                           tuple(elr), tuple(last_known))
        rec = build(reg, self.brokers.acceptable(), BrokerEvent(), version=self.r.config.version, preferred=True,
                    elr_enabled=self.r.elr_enabled, min_isr=self.r.min_isr(p.tp[0]))
        if rec is not None:
            self.r.steps.apply(p, f, rec, reg)

    def _decided(self, p: PState, f: F.Fact, before: dict, how: str) -> None:
        self.r._seq += 1
        self.r.decisions.append(Decision(self.r._seq, f.ts, p.tp, "new_partition", how, f.ref, before,
                                         {"leader": p.leader, "isr": list(p.isr or ())}, status="applied"))
        self.r.show(p, f.ts, f.ref, "replayed")
