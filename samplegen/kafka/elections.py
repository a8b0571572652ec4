"""Kafka's leader-election strategies (ZooKeeper mode, 2.4-3.9 ``Election``): pure functions.

``assignment`` is the AR in order (first = preferred); ``live`` the brokers
that count as online for the election. Each returns the new leader (or None)
and the new ISR.
"""
from __future__ import annotations


def offline(assignment: list[int], isr: list[int], live: set[int], allow_unclean: bool) -> tuple[int | None, list[int], bool]:
    """OfflinePartitionLeaderElectionStrategy: first live ISR member in AR order, else (if allowed) first live replica.

    Returns (leader, new ISR, unclean?).
    """
    for r in assignment:
        if r in live and r in isr:
            return r, [b for b in isr if b in live], False
    if allow_unclean:
        for r in assignment:
            if r in live:
                return r, [r], True
    return None, isr, False


def controlled_shutdown(assignment: list[int], isr: list[int], live_or_shutting: set[int],
                        shutting: set[int]) -> tuple[int | None, list[int]]:
    """ControlledShutdownPartitionLeaderElectionStrategy: skip brokers being shut down."""
    new_isr = [b for b in isr if b not in shutting]
    for r in assignment:
        if r in live_or_shutting and r in isr and r not in shutting:
            return r, new_isr
    return None, isr


def preferred(assignment: list[int], isr: list[int], live: set[int]) -> tuple[int | None, list[int]]:
    """PreferredReplicaPartitionLeaderElectionStrategy: only the head of the AR, if live and in ISR."""
    head = assignment[0]
    if head in live and head in isr:
        return head, isr
    return None, isr


def remove_from_isr(leader: int, isr: list[int], replica: int) -> tuple[int, list[int]]:
    """ReplicaStateMachine.removeReplicasFromIsr: the leader becomes -1 if it is the one removed; the last ISR member stays."""
    new_leader = -1 if replica == leader else leader
    new_isr = isr if len(isr) == 1 else [b for b in isr if b != replica]
    return new_leader, new_isr
