"""KRaft brokers as the quorum controller holds them: the handlers of the facts that change a registration (registered
with its epoch, fenced, in controlled shutdown, a new incarnation over an unclean shutdown, unregistered) and what
each change does to the partitions and the replay's own steps. The state itself is ``brokers.KraftBrokerStates``
(the replay's ``brokers``, which every decision reads), whose methods are its only writers, as ``BrokerStates`` is
the ZooKeeper-mode replay's: every change with the record or line it came from and the Kafka rule it follows.

Acceptable leaders are registered, unfenced and not in controlled shutdown (3.5.1 .. 3.9.0-rc3
ClusterControlManager.isActive, PartitionChangeBuilder's isAcceptableLeader).
"""
from __future__ import annotations

from typing import Any

from replay_engine.common import facts as F
from replay_engine.common.brokers import (RULE_ELECTED_ACTIVE, RULE_FENCED, RULE_GRANTED_UNFENCED, RULE_SESSION_TIMEOUT,
                                   RULE_SHUTDOWN_NOW)
from replay_engine.common.part import Part

# the kind of line or record (its event) -> the rule by which it fences the broker, when not RULE_FENCED
FENCE_RULES = {"controlled_shutdown_result": RULE_SHUTDOWN_NOW}


class KraftBrokers(Part):
    """The handlers of broker registrations and liveness; the replay's ``registrations``."""

    def __init__(self, replay: Any):
        # the KraftReplay: its partitions (shown as their leaders come and go) and evidence; weak, as in the other parts
        self.belong_to(replay)
        self.parts = replay.parts
        self.states = replay.brokers  # brokers.KraftBrokerStates
        self.journal: list[tuple] | None = None  # shard mode: every change of a broker's liveness, in order

    def liveness(self, b: int, ts: int, ref: F.Ref, cause: str) -> None:
        if self.journal is not None:
            self.journal.append((ts, b, cause, ref.source_file, ref.source_pos, ref.event))
        self.states.settle(b, ts, ref, cause)
        # the partitions it leads (the store's index of leaders; a broker id is never negative)
        for tp in sorted(self.r.store.led_by.get(b, ())) if b >= 0 else sorted(self.parts):
            p = self.parts[tp]
            if p.leader == b:
                self.r.show(p, ts, ref, "liveness")

    def on_registered(self, f: F.BrokerRegistered) -> None:
        b = f.broker
        self.states.register(b, f.epoch, f.fenced, f.ref, f.incarnation)
        self.r.evidence_by_broker.setdefault(b, []).append(f.ref)
        self.liveness(b, f.ts, f.ref, "registered")

    def on_broker_down(self, f: F.BrokerDown) -> None:
        b = f.broker
        if f.cause == "heartbeat_timeout":
            # "Fencing broker N because its session has timed out": maybeFenceOneStaleBroker logs it and runs
            # handleBrokerFenced in the same event (3.5.1 .. 3.9.0-rc3 ReplicationControlManager); 3.4-3.6 log the
            # fence record at no INFO line, 3.7+ as "Replayed BrokerRegistrationChangeRecord ..." (the same fence
            # stated again, see fence)
            self.fence(b, f, "fenced", RULE_SESSION_TIMEOUT)
        elif f.cause == "unregistered":
            self.states.unregister(b, f.ts, f.ref)
            self.liveness(b, f.ts, f.ref, "unregistered")
            if not self.r.has_records:
                # handleBrokerUnregistered: the broker leaves every ISR and ELR (3.7.0 .. trunk
                # ReplicationControlManager, brokerToRemove over partitionsWithBrokerInIsr and partitionsWithBrokerInElr)
                self.r.steps.leaving(b, f, elr_too=True)
        elif f.cause == "shutdown":
            # "Unfenced broker N has requested and been granted an immediate shutdown" (kraft_facts): unfenced until
            # this line, then SHUTDOWN_NOW fences it (processBrokerHeartbeat -> handleBrokerFenced)
            self.states.unfence(b, f.ref, RULE_GRANTED_UNFENCED)
            self.fence(b, f, f.cause, RULE_SHUTDOWN_NOW)
        else:
            self.fence(b, f, f.cause, FENCE_RULES.get(f.ref.event, RULE_FENCED))

    def fence(self, b: int, f: F.Fact, cause: str, rule: str) -> None:
        if b in self.states.fenced and b in self.states.registered:
            # handleBrokerFenced runs only when a broker's state becomes fenced (maybeFenceOneStaleBroker finds unfenced
            # brokers only; processBrokerHeartbeat on a change of state): a fence of a fenced broker is the same one,
            # stated again (its liveness read from this line too)
            self.r.evidence_by_broker.setdefault(b, []).append(f.ref)
            self.states.stated(b, f.ts)
            return
        self.states.fence(b, f.ts, f.ref, rule)
        self.r.evidence_by_broker.setdefault(b, []).append(f.ref)
        self.liveness(b, f.ts, f.ref, cause)
        if not self.r.has_records:
            self.r.steps.leaving(b, f)

    def on_unfenced(self, f: F.BrokerUp) -> None:
        b = f.broker
        self.states.unfence(b, f.ref)
        self.liveness(b, f.ts, f.ref, "unfenced")
        if not self.r.has_records:
            self.r.steps.unfence(f)

    def on_controlled_shutdown(self, f: F.ControlledShutdownRequest) -> None:
        """The controller granted a controlled shutdown ('Unfenced broker N has requested and been granted a
        controlled shutdown', or a registration change to in-controlled-shutdown)."""
        b = f.broker
        if b in self.states.shutting:
            return
        if f.ref.event == "controlled_shutdown_requested":
            self.states.unfence(b, f.ref, RULE_GRANTED_UNFENCED)  # the grant: unfenced until this line
        self.states.enter_controlled_shutdown(b, f.ts, f.ref)
        self.r.evidence_by_broker.setdefault(b, []).append(f.ref)
        self.liveness(b, f.ts, f.ref, "controlled_shutdown")
        if not self.r.has_records:
            self.r.steps.leaving(b, f)

    def on_stopped(self, f: F.BrokerStopped) -> None:
        """What-if: the broker was killed; it serves nothing from here, but the controller learns only at its fence."""
        self.states.stop(f.broker, f.ref)
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.leader == f.broker:
                self.r.show(p, f.ts, f.ref, "liveness")

    def on_unclean_shutdown(self, f: F.BrokerUncleanShutdown) -> None:
        """The controller registers a new incarnation of the broker: the changes it writes first, up to the
        RegisterBrokerRecord, remove the previous incarnation from every ISR and ELR (3.9.0-rc3
        ClusterControlManager.registerBroker, ReplicationControlManager.handleBrokerUncleanShutdown)."""
        self.states.begin_unclean_shutdown(f.broker, f.ref)
        self.r.evidence_by_broker.setdefault(f.broker, []).append(f.ref)
        if not self.r.has_records:
            self.r.steps.unclean_shutdown(f.broker, f)

    def leader_active(self, leader: int, ts: int, ref: F.Ref, tp: F.TP | None = None) -> None:
        """A line shows ``leader`` elected at a new leader epoch: it was an acceptable leader then. With ``tp`` the
        line is that partition's record of the election, which the replay's state of the broker contradicted: the state
        is adopted from it (``KraftBrokerStates.adopt_active``) and a finding says so, as the ZooKeeper-mode replay's
        ``broker_state_adopted``."""
        if tp is None:
            self.states.unfence(leader, ref, RULE_ELECTED_ACTIVE)
        else:
            held = ("fenced" if leader in self.states.fenced else "in controlled shutdown"
                    if leader in self.states.shutting else "not registered")
            self.states.adopt_active(leader, ref, RULE_ELECTED_ACTIVE)
            self.r.findings.append({
                "kind": "broker_state_adopted", "ts": ts, "brokers": [leader],
                "text": f"{tp[0]}-{tp[1]}: broker {leader} leads at a new leader epoch, so it was an acceptable "
                        f"leader (registered, unfenced, not in controlled shutdown); the replay held it {held} and "
                        "takes the record's state from here",
                "evidence": [ref.to_json()]})
        self.liveness(leader, ts, ref, "elected leader")

    def on_leader_active_hint(self, f: F.LeaderActiveHint) -> None:
        """Another shard's line showed ``f.leader`` active (its own shard decided, with its partition's state). Phase
        1's candidates are taken where the leader was not acceptable, as the line's own shard mostly finds."""
        if f.candidate:
            if self.r.has_records or not self.states.held_out(f.leader):
                return
            self.r.inferred.append(f.key)
        self.leader_active(f.leader, f.ts, f.ref)

    def on_registration_observed(self, f: F.BrokerRegistrationObserved) -> None:
        self.states.registration_restated(f.broker, f.epoch, f.ref)
