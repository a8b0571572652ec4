"""The four partition-leader election strategies of Kafka's ZooKeeper-mode controller.

Pure functions, as in Kafka's ``PartitionLeaderElectionAlgorithms``: each takes
the assignment (AR, in order: the first replica is the preferred one), the ISR
and who is alive, and returns the new leader and ISR, or None when no replica
is eligible (the partition then keeps ``leader -1`` and its last ISR).

Liveness follows ``ControllerContext.isReplicaOnline``: a broker in controlled
shutdown is *not* online for these purposes; only the controlled-shutdown
strategy sees it (as "live or shutting down").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Sequence

OFFLINE = "OfflinePartitionLeaderElectionStrategy"
REASSIGN = "ReassignPartitionLeaderElectionStrategy"
PREFERRED = "PreferredReplicaPartitionLeaderElectionStrategy"
CONTROLLED_SHUTDOWN = "ControlledShutdownPartitionLeaderElectionStrategy"


@dataclass(frozen=True)
class Election:
    leader: int
    isr: tuple[int, ...]
    unclean: bool = False


def offline_partition_leader(
    assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int], unclean_allowed: bool
) -> Election | None:
    """First live replica in AR order that is in the ISR; else, if unclean is allowed, the first live one.

    The order is the assignment's, never the ISR's: with AR [3,1,2] and ISR [1,3]
    the leader is 3.
    """
    for r in assignment:
        if r in live and r in isr:
            return Election(r, tuple(x for x in isr if x in live))
    if unclean_allowed:
        for r in assignment:
            if r in live:
                return Election(r, (r,), unclean=True)
    return None


def reassign_partition_leader(
    target_replicas: Sequence[int], isr: Sequence[int], live: AbstractSet[int]
) -> Election | None:
    """First live replica of the *target* assignment that is in the ISR; ISR unchanged."""
    for r in target_replicas:
        if r in live and r in isr:
            return Election(r, tuple(isr))
    return None


def preferred_replica_leader(assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int]) -> Election | None:
    """Only the preferred replica (head of AR) may win, if it is live and in the ISR; ISR unchanged."""
    if assignment and assignment[0] in live and assignment[0] in isr:
        return Election(assignment[0], tuple(isr))
    return None


def controlled_shutdown_leader(
    assignment: Sequence[int], isr: Sequence[int], live_or_shutting_down: AbstractSet[int], shutting_down: AbstractSet[int]
) -> Election | None:
    """Like Offline, but brokers being shut down are skipped; they also leave the ISR."""
    new_isr = tuple(x for x in isr if x not in shutting_down)
    for r in assignment:
        if r in live_or_shutting_down and r in isr and r not in shutting_down:
            return Election(r, new_isr)
    return None


def remove_replica_from_isr(leader: int, isr: Sequence[int], replica: int) -> tuple[int, tuple[int, ...]]:
    """What the replica state machine writes when ``replica`` goes offline (Kafka 1.1+).

    The leader becomes -1 if it was the replica; the replica leaves the ISR unless
    it is the last member: Kafka never writes an empty ISR, which is why a dead
    RF=1 partition reads ``leader: -1, isr: [1]``.
    """
    new_leader = -1 if replica == leader else leader
    new_isr = tuple(isr) if len(isr) == 1 else tuple(x for x in isr if x != replica)
    return new_leader, new_isr


def remove_replica_from_isr_010(
    leader: int, isr: Sequence[int], replica: int, unclean_enabled: bool
) -> tuple[int, tuple[int, ...]]:
    """Kafka 0.10 and older: the last ISR member is kept only when unclean election is disabled."""
    new_leader = -1 if replica == leader else leader
    if len(isr) == 1 and isr[0] == replica and not unclean_enabled:
        return new_leader, tuple(isr)
    return new_leader, tuple(x for x in isr if x != replica)

