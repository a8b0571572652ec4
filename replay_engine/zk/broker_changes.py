"""The broker-change and controlled-shutdown handlers of the ZooKeeper-mode controller.

Kafka's ``KafkaController`` reacts to brokers in a few places: the broker-change handler (``onBrokerStartup``,
``onBrokerFailure``: 0.8.2.2 ``ReplicaStateMachine.BrokerChangeListener``, 2.8.0 ``processBrokerChange``, which logs
"Newly added brokers: ..., deleted brokers: ..., all live brokers: ..."), a broker bounced under a new epoch
(2.2+, ``zk.broker.bounce``), and a controlled shutdown (``doControlledShutdown``). These handlers read a broker fact,
ask ``replay_engine.common.brokers`` to record what it changes (with the line that shows it), and ask the partition
decisions (``zk_partitions``) for the elections and ISR writes Kafka makes then.
"""
from __future__ import annotations

from replay_engine.common import facts as F
from replay_engine.common.apply import DECIDED
from replay_engine.common.brokers import RULE_SHUTDOWN_TAKEN
from replay_engine.common.states import OFFLINE
from replay_engine.zk.context import ZkPart


class BrokerHandlers(ZkPart):
    """Broker facts in, broker state (through ``BrokerStates``) and the decisions Kafka takes then out."""

    def broker_stopped(self, f: F.BrokerStopped) -> None:
        if self.brokers.stop(f.broker, f.ref):
            self.c.note_broker(f.broker, f.ref)
            self.c.liveness_changed(f.broker, f.ts, f.ref)

    def controller_view_follows(self, f: F.Fact) -> bool:
        """Does this fact change what the controller believes? A broker's word about itself reaches the
        controller only through ZooKeeper later: it counts at once only when the controller's own log (which
        would show when it learnt) is missing from the evidence."""
        view = getattr(f, "view", "zk")
        return view != "self" or not self.c.coverage.controller_logged(f.ts, self.c.controller)

    def register(self, b: int, f: F.Fact) -> None:
        if self.brokers.register(b, f.ts, f.ref):
            self.c.liveness_changed(b, f.ts, f.ref)

    def deregister(self, b: int, f: F.Fact, cause: str, died: F.Ref | None = None) -> None:
        if self.brokers.deregister(b, f.ref, cause, died):
            self.c.liveness_changed(b, f.ts, f.ref)

    def replicas_online(self, f: F.ReplicasOnline) -> None:
        self.brokers.replicas_online(f.broker, f.tps, f.ref)

    def replicas_offline(self, f: F.ReplicasOffline) -> None:
        tps = f.tps
        if f.cause == "failover":
            tps = tuple(tp for tp in tps if not (tp in self.parts and self.parts[tp].deleting))
        self.brokers.replicas_offline(f.broker, tps, f.ref)
        self.c.note_broker(f.broker, f.ref)
        for tp in f.tps:
            self.c.evidence_by_tp.setdefault(tp, []).append(f.ref)

    def broker_up(self, f: F.BrokerUp) -> None:
        b = f.broker
        brokers = self.brokers
        self.c.note_broker(b, f.ref)
        died = brokers.unstop(b, f.ref)
        if f.view != "self" or self.controller_view_follows(f):
            brokers.log_dirs_back(b, f.ref)
        if f.view == "self":
            brokers.self_reports(b, f.ref)
        brokers.back(b, f.ref)
        old_epoch = brokers.epochs.get(b)
        bounced = b in brokers.registered and f.epoch is not None and old_epoch is not None and old_epoch != f.epoch
        if bounced:
            self.deregister(b, f, "bounced", died)
        self.register(b, f)
        if f.epoch is not None:
            brokers.set_epoch(b, f.epoch, f.ref)
        bounced = bounced and self.c.rule("zk.broker.bounce", old_epoch, f.epoch)  # the controller notices it
        if not self.controller_view_follows(f) or (b in brokers.live and not bounced):
            return
        if bounced and b in brokers.live and self.c.controller is not None:
            self.controller_sees_failure(b, F.BrokerDown(f.ts, f.ref, broker=b, cause="bounced"))
        brokers.controller_sees_up(b, f.ref)
        c = self.c.controller
        if c is not None and c in brokers.live and c != b:
            self.c.partition_handlers.trigger_online_state_change(f)

    def broker_down(self, f: F.BrokerDown) -> None:
        b = f.broker
        self.c.note_broker(b, f.ref)
        died = self.brokers.unstop(b, f.ref)
        if f.view == "self":
            self.brokers.self_reports(b, f.ref)
        self.deregister(b, f, f.cause, died)
        if not self.controller_view_follows(f):
            if b == self.c.controller:
                self.c.failover_handlers.controller_gone(
                    F.ControllerGone(f.ts, f.ref, controller=b, cause=f"controller's broker {f.cause}"))
            return
        if b not in self.brokers.live:
            return
        self.controller_sees_failure(b, f)

    def controller_sees_failure(self, b: int, f: F.Fact) -> None:
        self.brokers.controller_sees_down(b, f.ref)
        if b == self.c.controller:
            cause = getattr(f, "cause", "")
            self.c.failover_handlers.controller_gone(
                F.ControllerGone(f.ts, f.ref, controller=b, cause=f"controller's broker {cause}"))
            return
        if self.c.controller is not None:
            # onBrokerFailure -> onReplicasBecomeOffline: elect first, then remove from ISRs.
            for tp in sorted(self.c.led_by.get(b, ())):
                p = self.parts[tp]
                if not p.deleting:
                    self.store.move(p, OFFLINE, DECIDED, f.ts, f.ref)
            self.c.partition_handlers.trigger_online_state_change(f)
            self.c.partition_handlers.remove_replica_from_isr(b, f)

    def live_set(self, f: F.LiveSet) -> None:
        """The controller's full view of live brokers; it also tells registration for brokers that do not
        speak for themselves in the evidence."""
        self.live_set_view(f)
        if self.c.failover_waiting is not None and f.controller in (None, self.c.controller):
            self.c.failover_handlers.on_failover(f)

    def live_set_view(self, f: F.LiveSet) -> None:
        self.brokers.state_membership(True, f.ref)
        self.brokers.controller_view(f.brokers, f.ref)
        for b in sorted(f.brokers):
            self.register(b, f)
        for b in sorted(self.brokers.registered - f.brokers):
            if b in self.brokers.stopping:
                # It asked to shut down and is now gone from the controller's view: stopped, even if its
                # own "shut down completed" line is not in the evidence (rotated away, overwritten). Only a
                # shutdown the evidence states counts: one inferred from records differs between shards.
                self.deregister(b, f, "shutdown")
            elif b not in self.brokers.self_reporting:
                self.deregister(b, f, "controller_detected")

    def controlled_shutdown(self, f: F.ControlledShutdownRequest) -> None:
        b = f.broker
        self.c.note_broker(b, f.ref)
        if self.c.controller is None or b not in self.brokers.live:
            return
        self.brokers.shutdown_taken(b, f.ref, server_stopping=not self.c.inferring,
                                    rule=RULE_SHUTDOWN_TAKEN if self.c.inferring else None)
        decide = self.c.partition_handlers
        decide.commit_all(decide.propose_controlled_shutdown(b, f))
