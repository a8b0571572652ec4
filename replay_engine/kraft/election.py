"""The KRaft quorum controller's leader election (``PartitionChangeBuilder``), as pure functions.

Notation as in Kafka: ``replicas`` in order, ``target_isr`` the ISR the change
would write, ``acceptable(r)`` = registered, unfenced and not in controlled
shutdown. Order of preference (3.x, and 4.x with Eligible Leader Replicas):
1. the current leader, if it stays in the target ISR and is acceptable;
2. the first replica, in replica order, that is in the target ISR and acceptable;
3. (ELR, 4.x) if the target ISR is empty: the first acceptable ELR member, which becomes the sole ISR;
4. (unclean) the first acceptable replica: ISR = [leader], recovery state RECOVERING;
5. otherwise no leader (-1). An empty ISR is never written without ELR: the last member stays.

A PREFERRED election (:func:`elect_preferred`) tries the first replica before all that.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Sequence


@dataclass(frozen=True)
class KraftElection:
    leader: int  # -1 = none
    isr: tuple[int, ...]
    how: str  # 'kept', 'isr', 'elr', 'unclean', 'none'


def elect(replicas: Sequence[int], target_isr: Sequence[int], current_leader: int | None,
          acceptable: AbstractSet[int], unclean: bool, elr: Sequence[int] = (), elr_enabled: bool = False) -> KraftElection:
    isr = tuple(target_isr)
    if current_leader is not None and current_leader >= 0 and current_leader in isr and current_leader in acceptable:
        return KraftElection(current_leader, isr, "kept")
    for r in replicas:
        if r in isr and r in acceptable:
            return KraftElection(r, isr, "isr")
    if elr_enabled and not isr:
        for r in elr:
            if r in acceptable:
                return KraftElection(r, (r,), "elr")
    if unclean:
        for r in replicas:
            if r in acceptable:
                return KraftElection(r, (r,), "unclean")
    return KraftElection(-1, isr, "none")


def elect_preferred(replicas: Sequence[int], isr: Sequence[int], current_leader: int | None,
                    acceptable: AbstractSet[int], elr: Sequence[int] = (), elr_enabled: bool = False) -> KraftElection:
    """Election.PREFERRED (the periodic leader rebalance, kafka-leader-election --election-type PREFERRED):
    the first replica if it is in the ISR and acceptable, else as an ordinary election, never unclean."""
    if replicas and replicas[0] in isr and replicas[0] in acceptable:
        return KraftElection(replicas[0], tuple(isr), "preferred")
    return elect(replicas, isr, current_leader, acceptable, False, elr, elr_enabled)


def isr_without(isr: Sequence[int], gone: AbstractSet[int], elr_enabled: bool = False) -> tuple[int, ...]:
    """The ISR after brokers leave it (fenced, shutting down). Without ELR the last member is kept."""
    kept = tuple(r for r in isr if r not in gone)
    if kept or elr_enabled:
        return kept
    return tuple(isr)  # an empty target ISR is not written: the ISR stays as it was


def change_bumps_epoch(old_leader: int | None, old_isr: Sequence[int] | None, new_leader: int, new_isr: Sequence[int],
                       version: tuple[int, int, int] | None = None,
                       target_isr: Sequence[int] | None = None) -> bool | None:
    """What a replayed change writes (PartitionChangeBuilder.build, 3.9 branch): None when the record would be a
    no-op (``changeRecordIsNoOp``: no record, no new epoch); True when it bumps the leader epoch (the leader field
    is set: a new leader, or, before metadata version 3.6 (KAFKA-15021, ``triggerLeaderEpochBumpForIsrShrinkIfNeeded``),
    an ISR shrink); False for an ISR-only change. ``version``: the Kafka release, standing in for the metadata
    version when the evidence does not state it (None: the newest behaviour). ``target_isr``: the ISR the change
    aimed at, when it differs from the one written: a target emptied by the leaving broker is not written without
    ELR (``if (record.isr() == null && !targetIsr.isEmpty() ...)``), yet before 3.6 it still sets the leader field
    (3.5.1 PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded: ``!Replicas.contains(targetIsr, partition.isr)``),
    so the epoch goes up with the leader and ISR unchanged."""
    old = tuple(old_isr) if old_isr is not None else None
    new = tuple(new_isr)
    target = tuple(target_isr) if target_isr is not None else new
    if new_leader != old_leader:
        return True
    shrink = old is not None and not set(old) <= set(target)
    if shrink and version is not None and version < (3, 6, 0):
        return True
    if new == old:
        return None
    return False
