"""The only writer of partition state in the replay, and the gate every partition transition passes.

Like ZooKeeper mode's ``PartitionStateMachine.doHandleStateChanges`` (Kafka 2.7.0,
core/src/main/scala/kafka/controller/PartitionStateMachine.scala), each state change is checked against
the valid previous states of its target (``replay_engine.common.states.PARTITION_VALID_PREVIOUS``, Kafka's
``PartitionState.validPreviousStates``). How the replay's own notions relate to that table:

- ``Unknown`` is not a Kafka state: the partition has not been seen yet, or the replay forgot it (a
  reset of the cluster's data). Kafka itself would know the state; the replay does not, so a transition
  out of Unknown is not checked (it cannot be judged), and going back to Unknown is the replay forgetting,
  not a transition of the cluster.
- Initialising is not a transition either: on failover ``initializePartitionState`` puts Online, Offline
  or New straight from what ZooKeeper holds, without the check; the replay does the same at a
  controller's election, and the what-if seeds a partition it knows nothing about the same way.
- A write that leaves the state as it was changes nothing (the replay's "stays New" after a failed
  initialisation is Kafka's partition left in NewPartition, not a NewPartition -> NewPartition move).
- A transition the replay *decides* (``DECIDED``) and the table rejects is not made, as Kafka logs
  "Partition ... should be in one of [...] states before moving to ... state. Instead it is in ...
  state" and leaves the partition alone: it becomes a finding naming both states.
- A transition the evidence shows (``RECORDED``: the controller's record; ``OBSERVED``: a broker's or a
  dump's view) is what the cluster did and is followed; when the record states its previous state that
  state is the one checked. If the table rejects it, it is a finding too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replay_engine.common import facts as F
from replay_engine.common.partition import UNKNOWN, PState
from replay_engine.common.states import PARTITION_VALID_PREVIOUS
from replay_engine.common.frozen import quick_init

DECIDED, RECORDED, OBSERVED = "decided", "recorded", "observed"
INVALID_TRANSITION = "invalid_partition_transition"


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


KEEP: Any = _Keep()  # a field a write leaves as it is


def valid(current: str, target: str) -> bool:
    """Kafka's ``isValidTransition``: is ``current`` among the valid previous states of ``target``?"""
    return current in PARTITION_VALID_PREVIOUS[target]


def invalid_text(tp: F.TP, current: str, target: str) -> str:
    """Kafka's ``logInvalidTransition`` message (PartitionStateMachine.scala, 2.7.0)."""
    return (f"Partition {tp[0]}-{tp[1]} should be in one of {','.join(sorted(PARTITION_VALID_PREVIOUS[target]))} "
            f"states before moving to {target} state. Instead it is in {current} state")


@quick_init
@dataclass(frozen=True)
class Change:
    """What one decision does to one partition (KEEP = left as it is)."""

    leader: Any = KEEP
    isr: Any = KEEP
    leader_epoch: Any = KEEP
    zk_version: Any = KEEP
    controller_epoch: Any = KEEP
    state: Any = KEEP
    init_failed: Any = KEEP
    attempted: str | None = None  # the state the decision moves to (checked), None: no move
    failed_election: bool = False  # a failed election, to count in the partition's history


class PartitionStore:
    """The replay's partitions (and who leads which): read by everyone, written only here."""

    def __init__(self, findings: list[dict[str, Any]]):
        self.parts: dict[F.TP, PState] = {}
        self.led_by: dict[int, set[F.TP]] = {}
        self.ar_history: dict[F.TP, list[tuple[int, tuple[int, ...]]]] = {}
        # KRaft: each partition's eligible leader replicas and last known ELR (KIP-966), as (ELR, lastKnownElr)
        self.elr: dict[F.TP, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self.findings = findings

    # ---------------------------------------------------------------- partitions

    def part(self, tp: F.TP) -> PState:
        p = self.parts.get(tp)
        if p is None:
            p = self.parts[tp] = PState(tp)
        return p

    def set_elr(self, tp: F.TP, elr: tuple[int, ...], last_known_elr: tuple[int, ...]) -> None:
        self.elr[tp] = (elr, last_known_elr)

    def forget_elr(self, tp: F.TP) -> None:
        self.elr.pop(tp, None)

    def drop(self, tp: F.TP) -> None:
        p = self.parts.pop(tp)
        self.set_leader(p, None)

    # ---------------------------------------------------------------- states

    def check(self, p: PState, target: str, origin: str, ts: int, ref: F.Ref | None, stated: str | None = None) -> bool:
        """Does the move of ``p`` to ``target`` pass the table? An invalid one becomes a finding.

        ``stated``: the previous state as the record itself gives it (else the replay's)."""
        current = stated if stated is not None else p.state
        if current == UNKNOWN or current == target:
            return True  # nothing to judge: the state is not known, or it does not change
        if valid(current, target):
            return True
        self.findings.append({
            "kind": INVALID_TRANSITION, "ts": ts, "topic": p.tp[0], "partition": p.tp[1], "from": current,
            "to": target, "origin": origin,
            "text": invalid_text(p.tp, current, target) + (
                " (the replay's own decision: not made)" if origin == DECIDED else f" ({origin} in the evidence)"),
            "evidence": [ref.to_json()] if ref is not None else []})
        return False

    def move(self, p: PState, target: str, origin: str, ts: int, ref: F.Ref | None, stated: str | None = None) -> bool:
        """A state change, checked. A decided one the table rejects is not made; evidence is followed."""
        current = stated if stated is not None else p.state
        if current == target or current == UNKNOWN or current in PARTITION_VALID_PREVIOUS[target]:
            p.state = target  # the common case, without a call (one per record)
            return True
        ok = self.check(p, target, origin, ts, ref, stated)
        if ok or origin != DECIDED:
            p.state = target
        return ok

    def initialize(self, p: PState, state: str) -> None:
        """Set without the check (``initializePartitionState`` at failover; what-if seeding)."""
        p.state = state

    def forget(self, p: PState) -> None:
        """The replay no longer knows the state (a new history starts): not a transition of the cluster."""
        p.state = UNKNOWN

    # ---------------------------------------------------------------- fields

    def set_leader(self, p: PState, leader: int | None) -> None:
        if p.leader is not None and p.leader >= 0:
            self.led_by.get(p.leader, set()).discard(p.tp)
        p.leader = leader
        if leader is not None and leader >= 0:
            self.led_by.setdefault(leader, set()).add(p.tp)

    def set_replicas(self, p: PState, replicas, ts: int, ordered: bool = True) -> None:
        """AR as a line states it; ``ordered`` False when the line gives the members only (see PState)."""
        ar = tuple(replicas)
        p.replicas_ordered = ordered
        if p.replicas != ar:
            p.replicas = ar
            self.ar_history.setdefault(p.tp, []).append((ts, ar))

    _SETTABLE = frozenset({"replicas", "isr", "leader_epoch", "zk_version", "controller_epoch",
                           "recorded_zk_version", "deleting", "reassign_target", "init_failed"})

    def set(self, p: PState, **fields: Any) -> None:
        """Write the named fields as given (KEEP leaves one as it is). ``replicas`` here only forgets: a known
        assignment goes through set_replicas, which keeps its history."""
        for name, value in fields.items():
            if name not in self._SETTABLE:
                raise TypeError(f"PartitionStore.set: {name} is not written here")
            if value is not KEEP:
                setattr(p, name, value)

    def adopt(self, p: PState, leader=None, isr=None, leader_epoch=None, zk_version=None, controller_epoch=None,
              replicas=None, ts: int = 0, recorded: bool = False, replicas_ordered: bool = True) -> None:
        """What a record or observation states (None = it does not say). ``recorded``: the controller's own
        write, whose znode version is remembered (a later write that does not raise it is a new history)."""
        if replicas is not None:
            self.set_replicas(p, replicas, ts, replicas_ordered)
        if leader is not None:
            self.set_leader(p, leader)
        if isr is not None:
            p.isr = tuple(isr)
        if leader_epoch is not None:
            p.leader_epoch = leader_epoch
        if controller_epoch is not None:
            p.controller_epoch = controller_epoch
        if zk_version is not None:
            p.zk_version = zk_version
            if recorded:
                p.recorded_zk_version = zk_version

    # ---------------------------------------------------------------- decisions

    def apply_decision(self, p: PState, c: Change, ts: int, ref: F.Ref | None) -> bool:
        """A decision's change, if its state move passes the table; else nothing (and a finding)."""
        if c.attempted is not None and not self.check(p, c.attempted, DECIDED, ts, ref):
            return False
        self.apply(p, c)
        return True

    def apply(self, p: PState, c: Change) -> None:
        """A change whose state move is already checked (see :meth:`check`)."""
        if c.leader is not KEEP:
            self.set_leader(p, c.leader)
        if c.isr is not KEEP:
            p.isr = c.isr
        if c.leader_epoch is not KEEP:
            p.leader_epoch = c.leader_epoch
        if c.zk_version is not KEEP:
            p.zk_version = c.zk_version
        if c.controller_epoch is not KEEP:
            p.controller_epoch = c.controller_epoch
        if c.state is not KEEP:
            p.state = c.state
        if c.init_failed is not KEEP:
            p.init_failed = c.init_failed
