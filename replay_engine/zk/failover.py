"""A controller taking office or leaving it, and ZooKeeper's data losing transactions (ZooKeeper mode).

Kafka's ``onControllerFailover`` (0.8.0 .. 3.9 ``KafkaController``): the new controller reads its context (the live
brokers, the partitions), starts the replica state machine (2.3+: replicas of dead brokers to OfflineReplica, rule
``zk.failover.offline_replicas``), initialises every partition's state from ZooKeeper
(``PartitionStateMachine.initializePartitionState``) and elects leaders for the offline ones. A resignation ends the
tenure. A hole in ZooKeeper's transactions (``zk_holes``) makes the replay forget what it held.
"""
from __future__ import annotations

from typing import AbstractSet

from replay_engine.common import facts as F
from replay_engine.common.states import NEW, NON_EXISTENT, OFFLINE, ONLINE
from replay_engine.zk.context import ZkPart


class FailoverHandlers(ZkPart):
    """Controller elections and resignations, and holes in ZooKeeper's data."""

    def controller_elected(self, f: F.ControllerElected) -> None:
        c = f.controller
        if self.c.controller == c and (f.epoch is None or f.epoch == self.c.controller_epoch):
            return
        self.c.end_tenure(f.ts, f.ref, "another controller elected")
        if f.epoch is not None and self.c.controller_epoch is not None and f.epoch <= self.c.controller_epoch:
            self.findings.append({"kind": "controller_epoch_not_increasing", "ts": f.ts, "controller": c,
                                  "epoch": f.epoch, "previous_epoch": self.c.controller_epoch,
                                  "text": f"controller epoch went from {self.c.controller_epoch} back to {f.epoch}: "
                                          "ZooKeeper's data was reset or another cluster's logs are mixed in",
                                  "evidence": [f.ref.to_json()]})
            if f.epoch < self.c.controller_epoch:
                self.forget_partitions(keep={tp for tp, e in self.c.below_epoch.items() if e == f.epoch})
        self.c.below_epoch.clear()
        self.c.stale_views.clear()
        self.c.topic_handlers.end_deletions(f.ts)
        self.c.take_office(c, f.epoch, f.ts, f.ref)
        self.c.broker_handlers.register(c, f)
        self.brokers.failover(c, f.ref)
        if self.c.coverage.controller_logged(f.ts, c) and not self.c.coverage.zk_covers(f.ts):
            # onControllerFailover (0.8.0 .. 3.9 KafkaController): initializeControllerContext logs "Currently
            # active brokers in the cluster" before the state machines start and elect. Logs only, that line is
            # the controller's view; its elections wait for it (or for the next fact, should the line be lost).
            self.c.failover_waiting = f
            return
        self.on_failover(f)

    def on_failover(self, f: F.Fact) -> None:
        """onControllerFailover: ReplicaStateMachine.startup before PartitionStateMachine.startup."""
        self.c.failover_waiting = None
        if self.c.rule("zk.failover.offline_replicas"):
            # 2.8.0 core/src/main/scala/kafka/controller/ReplicaStateMachine.scala, ReplicaStateMachine.startup ->
            # handleStateChanges(offlineReplicas, OfflineReplica) -> ZkReplicaStateMachine.doRemoveReplicasFromIsr:
            # every ISR holding a replica of a broker not in the live set is written (leader -1 if it led, the ISR
            # kept if it was the last member), one leader epoch up, whether or not the partition had a leader. With
            # the live set stated by the controller's own line ("Currently active brokers in the cluster"), every
            # input is in the evidence: where it should also hold their state-change lines, the writes are held back
            # and taken up at each partition's next record if it follows from them, lines lost or not
            # (PartitionHandlers.take_up_held); where the evidence does not record them they are applied as always.
            # Only where the release is in the evidence: before 2.3 the failover writes no ISR (the rule's other row),
            # and a guess of the release must not move the epochs of records still to come.
            gone = tuple(sorted(self.brokers.known - self.brokers.live))
            if isinstance(f, F.LiveSet) and self.c.release_known() and self.c.recorded_here(f.ts, "isr_removal"):
                self.c.partition_handlers.hold_isr_removals(gone, f)
            else:
                for b in gone:
                    self.c.partition_handlers.remove_replica_from_isr(b, f)
        # A tenure inferred from a record began before the evidence, its view of live brokers never stated: a leader
        # no line shows joining or leaving is not known dead to it (logs that start mid-tenure name few brokers live).
        inferred = f.ref is not None and f.ref.event == "inferred_controller"
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.deleting or p.state == NON_EXISTENT:
                continue
            if p.state == NEW:
                continue
            # PartitionStateMachine.initializePartitionState: set from what is known, not a checked transition
            if p.leader is not None and (p.leader < 0 or p.leader not in self.brokers.live and (
                    not inferred or p.leader in self.brokers.known)):
                self.store.initialize(p, OFFLINE)
            elif p.leader is not None:
                self.store.initialize(p, ONLINE)
        self.c.partition_handlers.trigger_online_state_change(f)

    def forget_partitions(self, keep: AbstractSet[F.TP] = frozenset(),
                          assigned: AbstractSet[str] = frozenset()) -> None:
        """A new history starts (cluster data reset): what was known about partitions no longer holds, except for
        ``keep``, partitions the new history's own lines already spoke of, and the replicas of ``assigned``
        topics (their assignment known unchanged)."""
        for p in self.parts.values():
            if p.tp in keep:
                continue
            # the znode version the controller last wrote belongs to the old data too: the new history's
            # writes start again from version 0 (KafkaZkClient.createTopicPartitionStatesRaw)
            self.store.set(p, isr=None, leader_epoch=None, zk_version=None, recorded_zk_version=None)
            if p.tp[0] not in assigned:
                self.store.set(p, replicas=None)
            self.store.forget(p)
            self.store.set_leader(p, None)
        self.pending.clear()
        self.c.held_back.clear()

    def controller_gone(self, f: F.ControllerGone) -> None:
        if f.cause == "resigned" and f.controller is not None and f.controller in self.brokers.stopping:
            # KafkaServer.shutdown (0.9.0.0 .. 3.9, core/src/main/scala/kafka/server/KafkaServer.scala): after
            # info("shutting down") and the controlled shutdown, kafkaController.shutdown() (which logs the
            # resignation on every broker) is followed by the ZooKeeper client's close: the broker's registration
            # goes with its session at that moment, before its own "shut down completed".
            self.c.broker_handlers.broker_down(F.BrokerDown(f.ts, f.ref, broker=f.controller, cause="shutdown"))
        if self.c.controller is None:
            return
        if f.controller is not None and f.controller != self.c.controller:
            return
        self.c.end_tenure(f.ts, f.ref, f.cause)
        self.c.leave_office()

    def hole(self, f: F.ZkHole) -> None:
        """Transactions no file holds (``zk_holes``): partitions, registrations and epochs may all have changed
        there. What the replay held of the partitions is forgotten (a record is judged again once the evidence
        restates the state it was decided on). Without a snapshot at its end no broker counts as seen until a fact
        shows it; with one, the partitions it shows unchanged are kept, and a broker it does not list, or lists as
        registered inside the hole, went down in it (its registration, if any, follows from the snapshot)."""
        span = f"{hex(f.after + 1)}-{hex(f.before - 1)}"
        last = self.findings[-1] if self.findings and self.findings[-1]["kind"] == "zk_hole" else None
        if f.snapshot is None and last is not None and self.c.covered_before == f.after + 1:
            # the rest of a hole a snapshot covers part of (one lost txn log): one finding for it
            last["text"] += f"; transactions {span}, after the snapshot, are in no file at all"
        elif f.snapshot is None:
            self.findings.append({"kind": "zk_hole", "ts": f.ts, "evidence": [f.ref.to_json()],
                                  "text": f"ZooKeeper transactions {span} are in no file given (a txn log is missing): "
                                          "what they changed is not in the evidence"})
        else:
            self.c.covered_before = f.before
            self.findings.append({"kind": "zk_hole", "ts": f.ts, "evidence": [f.ref.to_json()],
                                  "text": f"ZooKeeper transactions {span} are in no file given (a txn log is missing); "
                                          f"the snapshot at {hex(f.snapshot)} states what they left, not how: "
                                          f"{len(f.keep)} partitions unchanged, brokers registered "
                                          f"{sorted(f.members)}"})
        self.c.after_hole = True
        self.c.hidden.update(tp for tp in self.parts if tp not in f.keep)
        self.forget_partitions(keep=f.keep, assigned=f.assigned)
        if f.snapshot is None:
            self.brokers.state_membership(False, f.ref)
            return
        self.brokers.state_membership(True, f.ref)
        for b in sorted((self.brokers.registered | self.brokers.live) - (f.members - f.anew)):
            self.c.broker_handlers.broker_down(F.BrokerDown(f.ts, f.ref, broker=b, cause="zk_hole"))
