"""The record the quorum controller writes for one partition in one event: ``PartitionChangeBuilder.build`` as a pure
function, each step that changed between releases taken from the rule table for the release.

``ReplicationControlManager.generateLeaderAndIsrUpdates`` runs the builder for every partition a broker event touches
(3.9.0-rc3 / trunk): the broker fenced, unregistered or entering controlled shutdown is ``brokerToRemove`` (out of the
target ISR, never an acceptable leader), the broker unfenced is ``brokerToAdd`` (acceptable though its registration
still shows it fenced), the broker whose new incarnation registered after an unclean shutdown is
``brokerWithUncleanShutdown`` (out of the target ISR and the ELR, never acceptable; 3.8+ ``handleBrokerUncleanShutdown``).
``build`` then, in Kafka's order (3.8.0 .. trunk ``PartitionChangeBuilder.build``):

1. ``maybePopulateTargetElr`` (ELR on): the target ELR and last known ELR from the current ISR (``kraft.elr.populate``);
2. ``tryElection``: the release's election (``kraft.election`` / ``kraft.election.preferred``); an ELR member elected
   becomes the sole target ISR member, an unclean winner the sole ISR member of the record;
3. ``maybeUpdateRecordElr``: the ELR written (cleared by an unclean election or with ELR off);
4. the target ISR written if it differs (an empty one only with ELR), then the leader epoch bumped on an ISR shrink
   where the release does (``kraft.leader_epoch_bump``);
5. ``maybeUpdateLastKnownLeader``: the last known ELR (``kraft.elr.last_known``);
6. ``changeRecordIsNoOp``: nothing set, no record.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet

from replay_engine import rules as R
from replay_engine.rules.rule import Version
from replay_engine.common.frozen import quick_init

NO_LEADER = -1


@quick_init
@dataclass(frozen=True)
class Registration:
    """What ``PartitionChangeBuilder`` reads of a ``PartitionRegistration``."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()


@quick_init
@dataclass(frozen=True)
class ChangeRecord:
    """The fields a ``PartitionChangeRecord`` sets (None: not set). ``leader`` set means a new leader epoch."""

    leader: int | None = None
    isr: tuple[int, ...] | None = None
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    how: str = ""  # the election's outcome ('kept', 'isr', 'elr', 'unclean', 'none', 'preferred')

    def applied(self, reg: Registration) -> Registration:
        """The registration after the record (PartitionRegistration.merge)."""
        return Registration(reg.replicas, reg.isr if self.isr is None else self.isr,
                            reg.leader if self.leader is None else self.leader,
                            reg.elr if self.elr is None else self.elr,
                            reg.last_known_elr if self.last_known_elr is None else self.last_known_elr)


@quick_init
@dataclass(frozen=True)
class BrokerEvent:
    """The broker event a record is written for (generateLeaderAndIsrUpdates' arguments); all None: an event of no
    broker (an election asked for, the periodic rebalance)."""

    to_remove: int | None = None
    to_add: int | None = None
    unclean_shutdown: int | None = None

    def acceptable(self, active: AbstractSet[int]) -> frozenset[int]:
        """isAcceptableLeader: (r != brokerToRemove && r != brokerWithUncleanShutdown) && (r == brokerToAdd ||
        clusterControl.isActive(r))."""
        ok = set(active) | ({self.to_add} if self.to_add is not None else set())
        return frozenset(ok - {self.to_remove, self.unclean_shutdown})

    def target_isr(self, isr: tuple[int, ...]) -> tuple[int, ...]:
        """Replicas.copyWithout(partition.isr, [brokerToRemove, brokerWithUncleanShutdown])."""
        return tuple(r for r in isr if r not in (self.to_remove, self.unclean_shutdown))


def build(reg: Registration, active: AbstractSet[int], event: BrokerEvent = BrokerEvent(), *,
          version: Version | None, unclean: bool = False, preferred: bool = False, elr_enabled: bool = False,
          min_isr: int = 1, target_isr: tuple[int, ...] | None = None) -> ChangeRecord | None:
    """The PartitionChangeRecord the controller writes for ``reg`` in ``event`` (None: a no-op, no record).
    ``active``: registered, unfenced, not in controlled shutdown (ClusterControlManager.isActive); ``unclean``: the
    topic's unclean.leader.election.enable (Election.UNCLEAN); ``elr_enabled``: eligible.leader.replicas.version >= 1;
    ``target_isr``: an ISR asked for (AlterPartition), else the event's."""
    acceptable = event.acceptable(active)
    target = tuple(target_isr) if target_isr is not None else event.target_isr(reg.isr)
    t_elr, t_lke = R.decide("kraft.elr.populate", version, reg.isr, target, reg.elr, reg.last_known_elr, min_isr,
                            frozenset({event.unclean_shutdown} - {None}), elr_enabled)
    if preferred:
        res = R.decide("kraft.election.preferred", version, reg.replicas, target, reg.leader, acceptable, t_elr,
                       elr_enabled)
    else:
        res = R.decide("kraft.election", version, reg.replicas, target, reg.leader, acceptable, unclean, t_elr,
                       elr_enabled, reg.last_known_elr)
    leader = isr = None
    if res.leader != reg.leader:
        leader = res.leader
        if res.leader in t_elr:
            target, t_elr = (res.leader,), tuple(r for r in t_elr if r != res.leader)
        if res.how == "unclean":
            isr = (res.leader,)
    elr = None
    if isr is not None or not elr_enabled:  # maybeUpdateRecordElr: an unclean election or ELR off clears them
        t_elr, t_lke = (), ()
    if tuple(t_elr) != tuple(reg.elr):
        elr = tuple(t_elr)
    if isr is None and (target or elr_enabled) and tuple(target) != tuple(reg.isr):
        isr = tuple(target)
    if leader is None and tuple(target) != tuple(reg.isr) and R.decide(
            "kraft.leader_epoch_bump", version, reg.leader, reg.isr, reg.leader, reg.isr if isr is None else isr,
            target):
        leader = reg.leader  # the leader field set again: a new leader epoch with the same leader
    lke = R.decide("kraft.elr.last_known", version, reg.leader, reg.last_known_elr, leader, isr, t_lke, elr_enabled)
    if leader is None and isr is None and elr is None and lke is None:
        return None
    return ChangeRecord(leader, isr, elr, lke, res.how)
