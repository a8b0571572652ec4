"""Broker state: the one writer of each broker's state over time, and the questions decisions ask of it.

Kafka keeps a broker's state in one place and asks it one question per decision. ZooKeeper mode:
``ControllerContext`` holds the registered brokers with their epochs and ``shuttingDownBrokerIds``;
``liveBrokerIds`` is the registered set minus the brokers shutting down, the controller's own broker included
(0.10.2.0 core/src/main/scala/kafka/controller/KafkaController.scala, ``ControllerContext.liveBrokerIds``;
2.7.0 core/src/main/scala/kafka/controller/ControllerContext.scala, ``liveBrokerIds``), and every election asks
``isReplicaOnline(broker, partition)``: live, not shutting down, and (1.1+, KIP-112) the replica not on a failed
log directory (2.7.0 ``ControllerContext.isReplicaOnline``). Its state changes in a handful of places: the
broker-change handler (registrations come and go, with their epochs), controlled shutdown
(``doControlledShutdown`` adds the broker to ``shuttingDownBrokerIds``; ``onBrokerFailure`` removes it when it
dies), a failover (``resetContext`` clears the set), a log-directory failure. KRaft's ``ClusterControlManager``
owns every ``BrokerRegistration`` the same way (fenced, in controlled shutdown, epoch).

A replay reads evidence instead of receiving ZooKeeper watches, so it holds more than the controller did: what
ZooKeeper lists (``registered``: the timeline's "alive"), what the acting controller believes (``live``: Kafka's
``liveOrShuttingDownBrokerIds``; ``shutting``), what the broker itself says (``stopping``: its server is shutting
down; ``stopped``: its process halted while ZooKeeper still lists it; ``self_reporting``: its own log is in the
evidence), and what the evidence has shown at all (``known``, ``seen`` since the evidence or its last hole began,
``membership_stated``). Every change carries where it came from (:class:`Change`): the line or zxid that shows it,
the Kafka rule that implies it from a record (``rule``), or neither (unknown). :class:`BrokerStates` is the only
code that writes any of it (``tests/test_brokers.py`` reads every module to hold that); the replays read the
sets and ask the questions below.

A KRaft replay holds each broker's registration as the quorum controller does (:class:`KraftBrokerStates`: broker
epoch and incarnation id, fenced, in controlled shutdown, a new incarnation pending over an unclean shutdown, and the periods as an
acceptable leader); every change cites the record or line and the quorum controller's code it follows. Both keep
their changes in one log (:class:`StateLog`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, NamedTuple

from replay_engine.common.facts import TP, Ref, iso_utc
from replay_engine.common.partition import BrokerPeriod

# The fields of a broker's state (the names :class:`Change` uses, and that no other module may write).
REGISTERED, LIVE, SHUTTING, STOPPING, STOPPED = "registered", "live", "shutting", "stopping", "stopped"
EPOCH, SEEN, OFFLINE_REPLICAS, SELF_REPORTING, VERSION = "epoch", "seen", "offline_replicas", "self_reporting", "version"
MEMBERSHIP = "membership_stated"  # a cluster-wide fact: broker None
FENCED = "fenced"  # KRaft: the registration is fenced (BrokerRegistration.fenced)


class Change(NamedTuple):
    """One change of one broker's state, with its provenance: ``ref`` the line or zxid that shows it (or the
    record that implies it), ``rule`` the Kafka rule by which a record implies it (tag, file, function); both
    None: the replay does not know why (a default)."""

    ts: int | None
    broker: int | None
    field: str
    value: Any
    ref: Ref | None
    rule: str | None = None


# Why a record implies a state (``Change.rule``): each cites the Kafka source it is read from.
RULE_ELECTED_LIVE = ("2.7.0 core/src/main/scala/kafka/controller/PartitionStateMachine.scala, "
                     "PartitionLeaderElectionAlgorithms: every strategy elects among the replicas isReplicaOnline "
                     "holds; initializeLeaderAndIsrForPartitions / Election.leaderForOffline: the ISR written is the "
                     "online part")
RULE_REMOVED_GONE = ("2.7.0 core/src/main/scala/kafka/controller/ReplicaStateMachine.scala, doHandleStateChanges "
                     "OfflineReplica: a replica leaves the ISR when its broker is gone to the controller (or shutting "
                     "down)")
RULE_STATED_LIVE = ("0.8.2.2 core/src/main/scala/kafka/controller/PartitionLeaderSelector.scala, "
                    "OfflinePartitionLeaderSelector.selectLeader: the NoReplicaOnlineException names the live brokers "
                    "the controller held")
RULE_FAILOVER = ("2.8.0 core/src/main/scala/kafka/controller/ControllerContext.scala, resetContext: a new controller "
                 "starts with no broker shutting down; KafkaController.onControllerFailover registers its own broker")
RULE_SHUTDOWN_TAKEN = ("2.7.0 core/src/main/scala/kafka/controller/KafkaController.scala, doControlledShutdown: "
                       "the broker joins shuttingDownBrokerIds before its leadership moves")
RULE_ELIGIBILITY = ("2.7.0 core/src/main/scala/kafka/controller/PartitionStateMachine.scala, "
                    "PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection (0.10.2.0 "
                    "PartitionLeaderSelector.scala, OfflinePartitionLeaderSelector.selectLeader): an offline election "
                    "takes the first assigned replica in the ISR that ControllerContext.isReplicaOnline holds "
                    "(liveBrokerIds: registered and not shutting down, the controller's own broker included); the "
                    "record's outcome follows only with this broker the other way")
RULE_SHUTDOWN_MOVE = ("2.1.0 core/src/main/scala/kafka/controller/KafkaController.scala, doControlledShutdown: the "
                      "ControlledShutdownPartitionLeaderElectionStrategy runs only for partitions led by the broker it "
                      "has just put in shuttingDownBrokerIds (0.8.2.2 .. 1.0.0 ControlledShutdownLeaderSelector alike)")
RULE_DIED = ("0.10.2.0 core/src/main/scala/kafka/controller/KafkaController.scala, onBrokerFailure: a dead broker "
             "leaves shuttingDownBrokerIds")


class StateLog:
    """Every change of broker state in one replay, in order, with its provenance: what both modes' broker states
    share."""

    def __init__(self) -> None:
        self.changes: list[Change] = []  # every change, in order, with its provenance
        self.writes = 0  # how many changes so far (a reader caching a view of the sets compares it)

    def _note(self, ref: Ref | None, b: int | None, field: str, value: Any, rule: str | None = None) -> None:
        self.changes.append(Change(ref.ts if ref is not None else None, b, field, value, ref, rule))
        self.writes += 1

    def _set(self, which: set[int], field: str, b: int, on: bool, ref: Ref | None, rule: str | None = None) -> None:
        """Put ``b`` in or out of one of the sets (``field`` names it), noting the change if it is one."""
        if (b in which) != on:
            (which.add if on else which.discard)(b)
            self._note(ref, b, field, on, rule)

    def history(self, b: int) -> list[Change]:
        """Every change of broker ``b``'s state, in order, each with its provenance."""
        return [c for c in self.changes if c.broker == b]


class BrokerStates(StateLog):
    """Every broker's state in one ZooKeeper-mode replay. Read the sets; write only through the methods."""

    def __init__(self) -> None:
        super().__init__()
        self.registered: set[int] = set()  # ZooKeeper lists it: what the timeline and broker lanes show
        self.live: set[int] = set()  # the acting controller's view, shutting-down brokers included
        self.shutting: set[int] = set()  # its controlled shutdown taken up by the acting controller
        # its KafkaServer logged "shutting down", or the controller logged its controlled-shutdown request (not one
        # inferred from records: a partition shard infers only from its own), until it is seen down or back
        self.stopping: set[int] = set()
        self.stopped: dict[int, Ref] = {}  # process dead (halted, or a what-if's kill), session not yet expired
        self.self_reporting: set[int] = set()  # brokers whose own logs are in the evidence
        self.known: set[int] = set()  # ever seen joining or leaving
        self.seen: set[int] = set()  # seen registered or gone since the evidence began, or since its last hole
        # the cluster's whole membership was stated once (a ZooKeeper snapshot, a controller's list of live
        # brokers): from then on a broker never seen is one that never registered
        self.membership_stated = False
        self.epochs: dict[int, Any] = {}  # broker epoch of its registration (the znode's czxid)
        self.versions: dict[int, tuple[int, int, int]] = {}  # each broker's own 'Kafka version:'
        self.offline_replicas: dict[int, set[TP]] = {}  # broker -> its replicas on a failed log dir
        self.periods: dict[int, list[BrokerPeriod]] = {}  # broker -> its up and down periods, in order
        self.adopted: list[Change] = []  # states a record contradicted the replay on, adopted from it

    # ---------------------------------------------------------------- questions (as Kafka asks them)

    def online(self, b: int) -> bool:
        """``liveBrokerIds.contains(b)``: live to the controller and not shutting down."""
        return b in self.live and b not in self.shutting

    def online_set(self, tp: TP | None = None) -> frozenset[int]:
        """Kafka's ``isReplicaOnline`` over every broker: live, not shutting down, and (for a partition) not on a
        failed log dir."""
        if tp is None or not self.offline_replicas:  # the common case, in C (called for every record)
            return frozenset(self.live.difference(self.shutting))
        offline = self.offline_replicas
        return frozenset(b for b in self.live if b not in self.shutting and tp not in offline.get(b, ()))

    def unseen(self, brokers: Iterable[int | None]) -> frozenset[int]:
        """Brokers no fact has shown registered or gone since the evidence (or its last hole) began, while the
        cluster's membership was never stated."""
        if self.membership_stated:
            return frozenset()
        return frozenset(b for b in brokers if b is not None and b >= 0 and b not in self.seen)

    def alive(self, b: int) -> bool | None:
        """Is ``b`` registered: True, False, or None for a broker the evidence never shows joining or leaving (logs
        that start mid-life: not known dead)."""
        if b in self.registered:
            return True
        return False if b in self.known else None

    # ---------------------------------------------------------------- registration (what ZooKeeper lists)

    def _period_open(self, b: int, ts: int | None, ref: Ref, state: str) -> None:
        ps = self.periods.setdefault(b, [])
        if ps and ps[-1].end is None:
            ps[-1] = replace(ps[-1], end=ts, end_ref=ref)
        ps.append(BrokerPeriod(b, ts, start_ref=ref, state=state))

    def register(self, b: int, ts: int, ref: Ref) -> bool:
        """``b`` is registered from ``ref`` on. True when that changes what ZooKeeper lists."""
        if b not in self.seen:
            self.seen.add(b)
            self._note(ref, b, SEEN, True)
        if b in self.registered:
            return False
        self.registered.add(b)
        self.known.add(b)
        self._period_open(b, ts, ref, "up")
        self._note(ref, b, REGISTERED, True)
        return True

    def deregister(self, b: int, ref: Ref, cause: str, died: Ref | None = None) -> bool:
        """``b``'s registration is gone (``cause``); a process that died earlier (``died``, a halt) was down from
        then, whenever ZooKeeper let it go. True when that changes what ZooKeeper lists."""
        self._set(self.stopping, STOPPING, b, False, ref)
        if b not in self.seen:
            self.seen.add(b)
            self._note(ref, b, SEEN, True)
        if b in self.registered:
            self.registered.discard(b)
            at = died if died is not None else ref
            self._period_open(b, at.ts, at, "down")
            ps = self.periods[b]
            ps[-2] = replace(ps[-2], end_cause="halted" if died is not None else cause)
            self._note(at, b, REGISTERED, False)
            return True
        if b not in self.known:
            self.known.add(b)
            self._period_open(b, ref.ts, ref, "down")
            ps = self.periods[b]
            ps[-1] = replace(ps[-1], end_cause=cause)
            self._note(ref, b, REGISTERED, False)
        return False

    def set_epoch(self, b: int, epoch: Any, ref: Ref) -> None:
        if self.epochs.get(b) != epoch or b not in self.epochs:
            self.epochs[b] = epoch
            self._note(ref, b, EPOCH, epoch)

    def stop(self, b: int, ref: Ref) -> bool:
        """``b``'s process halted at ``ref`` (no shutdown hook ran) while ZooKeeper still lists it."""
        if b not in self.registered or b in self.stopped:
            return False
        self.stopped[b] = ref
        self._note(ref, b, STOPPED, True)
        return True

    def unstop(self, b: int, ref: Ref) -> Ref | None:
        """``b`` is heard of again (up or down): no longer a dead process ZooKeeper lists. Where it died."""
        died = self.stopped.pop(b, None)
        if died is not None:
            self._note(ref, b, STOPPED, False)
        return died

    def self_reports(self, b: int, ref: Ref) -> None:
        self._set(self.self_reporting, SELF_REPORTING, b, True, ref)

    def back(self, b: int, ref: Ref) -> None:
        """``b`` starts (again): whatever shutdown it was in is over."""
        self._set(self.stopping, STOPPING, b, False, ref)

    def server_stopping(self, b: int, ref: Ref) -> None:
        """``b``'s server said it is shutting down (KafkaServer.shutdown's "shutting down"), or the controller logged
        its controlled-shutdown request."""
        self._set(self.stopping, STOPPING, b, True, ref)

    def note_version(self, b: int, version: tuple[int, int, int], ref: Ref) -> None:
        if self.versions.get(b) != version:
            self.versions[b] = version
            self._note(ref, b, VERSION, version)

    def state_membership(self, stated: bool, ref: Ref) -> None:
        """The cluster's whole membership is stated (``stated``); or ZooKeeper transactions no file holds were lost,
        and no broker counts as seen until a fact shows it."""
        if self.membership_stated != stated:
            self.membership_stated = stated
            self._note(ref, None, MEMBERSHIP, stated)
        if not stated:
            for b in sorted(self.seen):
                self._note(ref, b, SEEN, False)
            self.seen.clear()

    # ---------------------------------------------------------------- log directories

    def replicas_offline(self, b: int, tps: Iterable[TP], ref: Ref) -> None:
        self.offline_replicas.setdefault(b, set()).update(tps)
        self._note(ref, b, OFFLINE_REPLICAS, frozenset(self.offline_replicas[b]))

    def replicas_online(self, b: int, tps: Iterable[TP], ref: Ref) -> None:
        held = self.offline_replicas.get(b)
        if held:
            held.difference_update(tps)
            if not held:
                del self.offline_replicas[b]
            self._note(ref, b, OFFLINE_REPLICAS, frozenset(self.offline_replicas.get(b, ())))

    def log_dirs_back(self, b: int, ref: Ref) -> None:
        """A restarted broker brings its log dirs back."""
        if self.offline_replicas.pop(b, None) is not None:
            self._note(ref, b, OFFLINE_REPLICAS, frozenset())

    # ---------------------------------------------------------------- the acting controller's view

    def controller_sees_up(self, b: int, ref: Ref) -> None:
        """The broker-change handler finds ``b`` registered (onBrokerStartup): live, not shutting down."""
        self._set(self.live, LIVE, b, True, ref)
        self._set(self.shutting, SHUTTING, b, False, ref)

    def controller_sees_down(self, b: int, ref: Ref) -> None:
        """The broker-change handler finds ``b`` gone (onBrokerFailure): out of the live and shutting-down sets."""
        self._set(self.live, LIVE, b, False, ref)
        self._set(self.shutting, SHUTTING, b, False, ref, RULE_DIED)

    def controller_view(self, brokers: frozenset[int], ref: Ref) -> None:
        """The controller's whole view of live brokers, stated (``Currently active brokers``, a broker-change line,
        a snapshot's registrations)."""
        for b in sorted(brokers - self.live):
            self._set(self.live, LIVE, b, True, ref)
        for b in sorted(self.live - brokers):
            self._set(self.live, LIVE, b, False, ref)
            self._set(self.shutting, SHUTTING, b, False, ref, RULE_DIED)

    def failover(self, controller: int, ref: Ref) -> None:
        """A controller takes office: its own broker is live, and no broker is shutting down to it."""
        self._set(self.live, LIVE, controller, True, ref, RULE_FAILOVER)
        for b in sorted(self.shutting):
            self._note(ref, b, SHUTTING, False, RULE_FAILOVER)
        self.shutting.clear()

    def shutdown_taken(self, b: int, ref: Ref, server_stopping: bool, rule: str | None = None) -> None:
        """The acting controller took up ``b``'s controlled shutdown (``doControlledShutdown``). ``server_stopping``:
        the request itself is in the evidence (not inferred from a record, nor only the broker's word that it was
        answered)."""
        self._set(self.shutting, SHUTTING, b, True, ref, rule)
        if server_stopping:
            self.server_stopping(b, ref)

    # ---------------------------------------------------------------- what a controller's record implies

    def adopt(self, b: int, eligible: bool, ref: Ref, rule: str, controller: int | None = None) -> Change:
        """A record the replay's view of ``b`` contradicts: by Kafka's ``rule`` it follows only with ``b`` eligible
        (``isReplicaOnline``) or not. Adopted, with the record as provenance. Not eligible is shutting down when its
        server said it is stopping (a controlled shutdown goes first: KafkaServer.controlledShutdown), or when it is
        the acting ``controller``'s own broker (it is registered: it acts; 0.10.2.0 KafkaController.shutdownBroker puts
        the controller's own broker in shuttingDownBrokerIds like any other, and liveBrokerIds leaves it out); else
        gone."""
        n = len(self.changes)
        if eligible:
            self._set(self.live, LIVE, b, True, ref, rule)
            self._set(self.shutting, SHUTTING, b, False, ref, rule)
        elif b in self.stopping or b == controller:
            self._set(self.shutting, SHUTTING, b, True, ref, rule)
        else:
            self._set(self.live, LIVE, b, False, ref, rule)
        change = self.changes[-1] if len(self.changes) > n else Change(ref.ts, b, LIVE, eligible, ref, rule)
        self.adopted.append(change)
        return change

    def implied_live(self, brokers: Iterable[int], ref: Ref, live: bool = True, rule: str | None = None) -> None:
        """Brokers a record shows its controller held live (an elected leader, an ISR written from online replicas),
        or (``live`` False) saw go (a replica removed from an ISR: OfflineReplica; a leader whose partition went
        offline)."""
        for b in brokers:
            self._set(self.live, LIVE, b, live, ref, rule or (RULE_ELECTED_LIVE if live else RULE_REMOVED_GONE))

    def stated_live(self, brokers: frozenset[int], ref: Ref) -> None:
        """A failed election's exception states the controller's live brokers: ``brokers`` is its live set now
        (``zk_inference.implied_liveness``: the stated ones and those shutting down)."""
        for b in sorted(self.live - brokers):
            self._set(self.live, LIVE, b, False, ref, RULE_STATED_LIVE)
        for b in sorted(brokers - self.live):
            self._set(self.live, LIVE, b, True, ref, RULE_STATED_LIVE)


# Why a KRaft record or line gives a registration's state (``Change.rule``): the quorum controller's code that makes
# the change this kind of record or line shows, or by which it implies one. Tags: the KRaft releases the replay reads
# (3.5.1 .. 3.9.0-rc3; 4.x keeps these functions), file metadata/src/main/java/org/apache/kafka/controller/.
_KC = "3.9.0-rc3 metadata/src/main/java/org/apache/kafka/controller/"
RULE_REGISTERED = (_KC + "ClusterControlManager.java, registerBroker / replay(RegisterBrokerRecord): a new "
                   "registration (incarnation) with its broker epoch, fenced as the record says, not in controlled "
                   "shutdown")
RULE_RESTATED = (_KC + "ClusterControlManager.java, replay(RegisterBrokerRecord) ('Replayed initial "
                 "RegisterBrokerRecord' / '... modifying the registration for broker N'): a controller loading the log "
                 "restates a registration it held before")
RULE_UNREGISTERED = (_KC + "ClusterControlManager.java, replay(UnregisterBrokerRecord): the registration removed "
                     "(ReplicationControlManager.unregisterBroker writes it, after handleBrokerUnregistered)")
RULE_FENCED = (_KC + "ClusterControlManager.java, replay(FenceBrokerRecord) / replay(BrokerRegistrationChangeRecord "
               "fenced=1): the registration fenced (ReplicationControlManager.handleBrokerFenced writes it)")
RULE_SESSION_TIMEOUT = (_KC + "ReplicationControlManager.java, maybeFenceOneStaleBroker: 'Fencing broker N because "
                        "its session has timed out', handleBrokerFenced in the same event")
RULE_SHUTDOWN_NOW = (_KC + "BrokerHeartbeatManager.java, calculateNextBrokerState: a broker granted its shut down "
                     "goes to SHUTDOWN_NOW, which ReplicationControlManager.processBrokerHeartbeat handles with "
                     "handleBrokerFenced")
RULE_GRANTED_UNFENCED = (_KC + "BrokerHeartbeatManager.java, calculateNextBrokerState: 'Unfenced broker N has "
                         "requested and been granted ...' is logged only in case UNFENCED: the broker was registered and "
                         "unfenced until this line, whatever the replay held")
RULE_UNFENCED = (_KC + "ClusterControlManager.java, replay(UnfenceBrokerRecord) / replay(BrokerRegistrationChangeRecord "
                 "fenced=-1), written by ReplicationControlManager.handleBrokerUnfenced when "
                 "BrokerHeartbeatManager.calculateNextBrokerState grants UNFENCED; only a FENCED broker is granted it "
                 "(a broker in controlled shutdown goes on to SHUTDOWN_NOW and registers again), so it is out of "
                 "controlled shutdown")
RULE_CONTROLLED_SHUTDOWN = (_KC + "BrokerHeartbeatManager.java, calculateNextBrokerState: 'Unfenced broker N has "
                            "requested and been granted a controlled shutdown' (CONTROLLED_SHUTDOWN); "
                            "ReplicationControlManager.handleBrokerInControlledShutdown writes "
                            "BrokerRegistrationChangeRecord inControlledShutdown=1")
RULE_UNCLEAN_SHUTDOWN = (_KC + "ClusterControlManager.java, registerBroker: 'Registering a new incarnation of broker "
                         "N' (3.9+; 3.8+ in the log: the changes before a RegisterBrokerRecord in its batch); "
                         "ReplicationControlManager.handleBrokerUncleanShutdown removes the previous incarnation from "
                         "every ISR and ELR before the new RegisterBrokerRecord")
RULE_CHANGED_IMPLIES_REGISTERED = (_KC + "ClusterControlManager.java, replayRegistrationChange: a fence or unfence "
                                   "changes a registration; with none it throws, so the broker was registered")
RULE_ELECTED_ACTIVE = (_KC + "PartitionChangeBuilder.java, isAcceptableLeader / "
                       "ReplicationControlManager.generateLeaderAndIsrUpdates: a leader elected at a new leader epoch "
                       "was registered, unfenced and not in controlled shutdown (ClusterControlManager.isActive)")
RULE_ACTIVE = (_KC + "ClusterControlManager.java, isActive: registered, unfenced and not in controlled shutdown (what "
               "PartitionChangeBuilder.isAcceptableLeader elects), after the change at this line")
RULE_KILLED = "what-if: the broker is killed; its controller learns of it only when its session times out"
UNCLEAN_SHUTDOWN = "unclean_shutdown"  # KRaft: a new incarnation is being registered over an unclean shutdown
INCARNATION = "incarnation"  # KRaft: the registration's incarnation id (BrokerRegistration.incarnationId)


class KraftBrokerStates(StateLog):
    """Every broker's registration in one KRaft replay, as the quorum controller's ClusterControlManager holds it
    (3.5.1 .. 3.9.0-rc3 ``BrokerRegistration``: its broker epoch, ``fenced``, ``inControlledShutdown``), and each
    broker's periods as an acceptable leader. Read the sets; write only through the methods, each change with the
    record or line it came from and the Kafka rule it follows (``RULE_*`` above).

    ``live`` is what PartitionChangeBuilder may elect, ``ClusterControlManager.isActive``: registered, unfenced, not in
    controlled shutdown (a broker shutting down has, for availability, already left); ``stopped`` (what-if) a broker
    killed that the controller still holds unfenced until its session times out."""

    def __init__(self) -> None:
        super().__init__()
        self.registered: dict[int, Any] = {}  # broker -> its broker epoch (None: a registration no line dated)
        self.incarnation_ids: dict[int, str] = {}  # broker -> the incarnation id of its registration, where named
        self.fenced: set[int] = set()
        self.shutting: set[int] = set()  # in controlled shutdown
        self.live: set[int] = set()  # registered, unfenced, not in controlled shutdown: what the timeline calls alive
        self.known: set[int] = set()
        self.periods: dict[int, list[BrokerPeriod]] = {}
        self.stopped: set[int] = set()
        self.recent_gone: dict[int, int] = {}  # broker -> when it was last fenced, unregistered or began shutting down
        self.liveness_at: dict[int, int] = {}  # broker -> time of the last line the replay took its state from
        # broker -> the line of the controller beginning to register its new incarnation; until that registration the
        # changes it writes are handleBrokerUncleanShutdown's (brokerWithUncleanShutdown)
        self.unclean_shutdown: dict[int, Ref] = {}
        self.adopted: list[Change] = []  # states a record showed where the replay held the broker otherwise

    # ---------------------------------------------------------------- questions (as Kafka asks them)

    def acceptable(self) -> frozenset[int]:
        """isAcceptableLeader over every broker: ClusterControlManager.isActive."""
        return frozenset(b for b in self.registered if b not in self.fenced and b not in self.shutting)

    def held_out(self, b: int) -> bool:
        """Not an acceptable leader as far as the replay knows: fenced, shutting down or not registered."""
        return b in self.fenced or b in self.shutting or b not in self.registered

    def shutting_down(self) -> frozenset[int]:
        """Registered, unfenced brokers in controlled shutdown (not acceptable leaders, but unfenced)."""
        return frozenset(b for b in self.shutting if b in self.registered and b not in self.fenced)

    # ---------------------------------------------------------------- the registration (ClusterControlManager.replay)

    def _register(self, b: int, epoch: Any, ref: Ref | None, rule: str) -> None:
        if b not in self.registered:
            self._note(ref, b, REGISTERED, True, rule)
        elif self.registered[b] == epoch:
            return
        self.registered[b] = epoch
        self._note(ref, b, EPOCH, epoch, rule)

    def register(self, b: int, epoch: Any, fenced: bool | None, ref: Ref, incarnation: str | None = None) -> None:
        """A RegisterBrokerRecord (a new incarnation, fenced as the record says) or its line."""
        if self.unclean_shutdown.pop(b, None) is not None:
            self._note(ref, b, UNCLEAN_SHUTDOWN, False, RULE_REGISTERED)
        self._register(b, epoch, ref, RULE_REGISTERED)
        if incarnation is not None and self.incarnation_ids.get(b) != incarnation:
            self.incarnation_ids[b] = incarnation
            self._note(ref, b, INCARNATION, incarnation, RULE_REGISTERED)
        if fenced is not None:
            self._set(self.fenced, FENCED, b, fenced, ref, RULE_REGISTERED)
        self._set(self.shutting, SHUTTING, b, False, ref, RULE_REGISTERED)
        self._set(self.stopped, STOPPED, b, False, ref, RULE_REGISTERED)

    def registration_restated(self, b: int, epoch: Any, ref: Ref) -> None:
        """A registration a controller restates while loading the log: registered before, not just now."""
        self._register(b, epoch, ref, RULE_RESTATED)
        self.known.add(b)

    def unregister(self, b: int, ts: int, ref: Ref) -> None:
        if b in self.registered:
            del self.registered[b]
            self.incarnation_ids.pop(b, None)
            self._note(ref, b, REGISTERED, False, RULE_UNREGISTERED)
        self.recent_gone[b] = ts

    def fence(self, b: int, ts: int, ref: Ref, rule: str = RULE_FENCED) -> None:
        """A fence (FenceBrokerRecord, a registration change fenced=1, a session timed out, SHUTDOWN_NOW)."""
        if b not in self.registered:
            self._register(b, None, ref, RULE_CHANGED_IMPLIES_REGISTERED)
        self._set(self.fenced, FENCED, b, True, ref, rule)
        self.recent_gone[b] = ts

    def unfence(self, b: int, ref: Ref, rule: str = RULE_UNFENCED) -> None:
        """An unfence (UnfenceBrokerRecord, a registration change fenced=-1, its grant), or, with ``rule``, a state a
        line implies: the broker registered, unfenced and out of controlled shutdown."""
        if b not in self.registered:
            self._register(b, None, ref, rule if rule != RULE_UNFENCED else RULE_CHANGED_IMPLIES_REGISTERED)
        self._set(self.fenced, FENCED, b, False, ref, rule)
        self._set(self.shutting, SHUTTING, b, False, ref, rule)

    def adopt_active(self, b: int, ref: Ref, rule: str = RULE_ELECTED_ACTIVE) -> Change:
        """A record electing ``b`` where the replay held it out (fenced, in controlled shutdown or not registered): by
        Kafka's ``rule`` it was an acceptable leader then. Adopted, with the record as provenance (as
        ``BrokerStates.adopt``); the record itself still counts against the agreement where it was judged so."""
        n = len(self.changes)
        self.unfence(b, ref, rule)
        change = self.changes[-1] if len(self.changes) > n else Change(ref.ts, b, FENCED, False, ref, rule)
        self.adopted.append(change)
        return change

    def enter_controlled_shutdown(self, b: int, ts: int, ref: Ref) -> None:
        self._set(self.shutting, SHUTTING, b, True, ref, RULE_CONTROLLED_SHUTDOWN)
        self.recent_gone[b] = ts

    def begin_unclean_shutdown(self, b: int, ref: Ref) -> None:
        """The controller registers a new incarnation of ``b`` over one that did not shut down cleanly."""
        self.unclean_shutdown[b] = ref
        self._note(ref, b, UNCLEAN_SHUTDOWN, True, RULE_UNCLEAN_SHUTDOWN)

    def stop(self, b: int, ref: Ref) -> None:
        """What-if: ``b`` was killed; the controller learns only when its session times out."""
        self._set(self.stopped, STOPPED, b, True, ref, RULE_KILLED)

    def stated(self, b: int, ts: int) -> None:
        """A line stated ``b``'s state at ``ts`` (a change, or the same one again)."""
        self.liveness_at[b] = ts

    # ---------------------------------------------------------------- periods as an acceptable leader

    def _period(self, b: int, ts: int, ref: Ref, state: str, cause: str | None = None) -> None:
        ps = self.periods.setdefault(b, [])
        if ps and ps[-1].state == state:
            return
        if ps and ps[-1].end is None:
            ps[-1] = replace(ps[-1], end=ts, end_ref=ref, end_cause=cause)
        ps.append(BrokerPeriod(b, ts, start_ref=ref, state=state))
        self.known.add(b)

    def settle(self, b: int, ts: int, ref: Ref, cause: str) -> None:
        """``b``'s registration changed at ``ref`` (``cause``): whether it is an acceptable leader now, and its
        periods with it."""
        self.stated(b, ts)
        up = b in self.registered and b not in self.fenced and b not in self.shutting
        was = b in self.live
        if up and not was:
            self._set(self.live, LIVE, b, True, ref, RULE_ACTIVE)
            self._period(b, ts, ref, "up")
        elif not up and was:
            self._set(self.live, LIVE, b, False, ref, RULE_ACTIVE)
            self._period(b, ts, ref, "down", cause)
        elif not up and b not in self.periods:
            # registered fenced, as every broker starts: catching up with the metadata log, not a failure
            self._period(b, ts, ref, "starting" if cause == "registered" else "down", cause)

    def first_up(self, b: int, since: int, until: int) -> int | None:
        """When broker ``b`` first became an acceptable leader in (since, until], if it did."""
        return next((per.start for per in self.periods.get(b, ()) if per.state == "up" and per.start is not None
                     and since < per.start <= until), None)

    def acceptable_at(self, ts: int) -> frozenset[int]:
        """The brokers that were acceptable leaders at ``ts`` (their periods up then), as the replay followed them."""
        return frozenset(b for b, ps in self.periods.items()
                         if any(per.state == "up" and per.start is not None and per.start <= ts
                                and (per.end is None or ts < per.end) for per in ps))

    def all_out_since(self, replicas, ts: int) -> tuple[int, Ref] | None:
        """When the last of ``replicas`` left (its down period's start and line), if none of them has been an
        acceptable leader since but by its latest unfence (the grant begins the controller event whose
        handleBrokerUnfenced elects the leaderless partitions: 3.9.0-rc3 BrokerHeartbeatManager
        .calculateNextBrokerState, ReplicationControlManager.handleBrokerUnfenced); else None."""
        last = None
        for b in replicas:
            ps = [per for per in self.periods.get(b, ()) if per.start is not None and per.start <= ts]
            if ps and ps[-1].state == "up" and ps[-1].start_ref is not None \
                    and ps[-1].start_ref.event == "broker_unfenced":
                ps = ps[:-1]
            if not ps or ps[-1].state == "up":
                return None
            if last is None or ps[-1].start > last[0]:
                last = (ps[-1].start, ps[-1].start_ref)
        return last

    def up_between(self, b: int, since: int, until: int) -> str | None:
        """The first period in which broker ``b`` was acceptable overlapping (since, until], as text, if any."""
        for per in self.periods.get(b, []):
            if per.state == "up" and per.start is not None and per.start <= until \
                    and (per.end is None or per.end > since):
                return f"up from {iso_utc(per.start)}" + (f" to {iso_utc(per.end)}" if per.end is not None else "")
        return None
