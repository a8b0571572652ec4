"""A leader epoch a KRaft broker states it started, re-derived at the line (logs only, no metadata log).

The quorum controller writes a new leader epoch only when a PartitionChangeRecord sets the leader
(PartitionChangeBuilder.build, 3.6 to 4.x). Knowing the registration just before (the epoch before, its leader,
ISR and replica order), the change a broker states is judged by the election that made it, without knowing which
step ran it, because each step's election is PartitionChangeBuilder.electLeader over a target ISR
(3.9 ReplicationControlManager.generateLeaderAndIsrUpdates):

- a leaderless partition gaining a leader: handleBrokerUnfenced over partitionsWithNoLeader, the unfenced broker
  acceptable (``brokerToAdd``), target ISR the current one;
- a leader leaving with no successor (leader -1), or a successor: handleBrokerFenced / enterControlledShutdown of
  the old leader (``brokerToRemove``, never acceptable), target ISR without it (the last member stays without ELR);
- or, the old leader still acceptable, the periodic rebalance (maybeBalancePartitionLeaders, Election.PREFERRED):
  the first replica.

An elected leader was acceptable at its election (isAcceptableLeader: active, or the broker being unfenced), so
the stated leader counts as acceptable; the check is that no replica ahead of it in the election's order was.
Every election here is the rule table's row for the release that wrote the evidence (``version``).
"""
from __future__ import annotations

from typing import AbstractSet, Sequence

from replay_engine import rules as R
from replay_engine.rules.rule import Version


def rederive_stated_leader(replicas: Sequence[int] | None, isr: Sequence[int] | None, leader_before: int,
                           stated_leader: int, acceptable: AbstractSet[int], unclean: bool,
                           elr_enabled: bool = False, *, version: Version | None) -> tuple[int | None, str]:
    """(the leader PartitionChangeBuilder elects for this change, how); (None, why) when it cannot be derived."""
    if not isr:
        return None, "leader epoch: ISR before the line unknown"
    order = tuple(replicas) if replicas else tuple(isr)
    elected = {stated_leader} if stated_leader >= 0 else set()
    if leader_before < 0:
        res = R.decide("kraft.election", version, order, isr, None, frozenset(acceptable) | elected, unclean, (),
                       elr_enabled)
        return res.leader, f"leaderless partition elected (handleBrokerUnfenced, {res.how})"
    ok = (frozenset(acceptable) | elected) - {leader_before}
    target = R.decide("kraft.isr_shrink", version, isr, {leader_before}, elr_enabled)
    res = R.decide("kraft.election", version, order, target, None, ok, unclean, (), elr_enabled)
    if res.leader != stated_leader and leader_before in acceptable and stated_leader >= 0:
        pref = R.decide("kraft.election.preferred", version, order, isr, leader_before,
                        frozenset(acceptable) | elected)
        if pref.how == "preferred":
            return pref.leader, "preferred election (maybeBalancePartitionLeaders)"
    return res.leader, f"leader {leader_before} left (handleBrokerFenced / enterControlledShutdown, {res.how})"


def stated_leader_whatever_the_isr(replicas: Sequence[int] | None, leader_before: int, stated_leader: int,
                                   acceptable: AbstractSet[int], unclean: bool) -> bool:
    """True when the stated outcome is what the election gives for every ISR it could have had.

    When ISR-only changes came in between unseen, the ISR is any subset of the replicas holding the stated leader
    (a clean election elects from the ISR). electLeader takes the first ISR member in replica order that is
    acceptable: if no replica ahead of the stated leader was acceptable, it is elected whatever the rest of the ISR;
    a stated -1 holds whatever the ISR when no replica but the leaving one was acceptable (and no unclean election)."""
    if not replicas or unclean:
        return False
    ok = (frozenset(acceptable) | ({stated_leader} if stated_leader >= 0 else set())) - {leader_before}
    first = next((r for r in replicas if r in ok), -1)
    return first == stated_leader


def isr_after_leader_left(replicas: Sequence[int] | None, isr: Sequence[int], leader_before: int, stated_leader: int,
                          acceptable: AbstractSet[int], elr_enabled: bool = False, *,
                          version: Version | None) -> tuple[int, ...] | None:
    """The ISR after a stated move of leadership judged as the old leader leaving (handleBrokerFenced /
    enterControlledShutdown: ``brokerToRemove`` leaves the target ISR), or None when it is not known.

    If the old leader was still acceptable as far as the evidence shows, the periodic rebalance
    (maybeBalancePartitionLeaders, Election.PREFERRED, which leaves the ISR as it is) may have made the same move
    whenever the stated leader is the first replica: which of the two ran, and so the ISR, is then unknown."""
    order = tuple(replicas) if replicas else tuple(isr)
    if leader_before in acceptable and stated_leader >= 0:
        pref = R.decide("kraft.election.preferred", version, order, isr, leader_before,
                        frozenset(acceptable) | {stated_leader})
        if pref.how == "preferred" and pref.leader == stated_leader:
            return None
    return R.decide("kraft.isr_shrink", version, isr, {leader_before}, elr_enabled)


def previous_from_leader_line(previous: tuple[int, int] | None, stated_epoch: int | None,
                              known_epoch: int | None) -> bool:
    """True when a leader's own line names the registration just before the epoch it starts, and the replay knows
    none as recent.

    Partition.makeLeader (3.x-4.x) logs "Previous leader Some(L) and previous leader epoch was E" before it updates
    leaderReplicaIdOpt and leaderEpoch (3.9.0-rc3 core/src/main/scala/kafka/cluster/Partition.scala makeLeader): E
    and L are what the broker held before. When E is the epoch just before the one started, L led the partition
    at E. (makeFollower logs the same words after the update, so a follower's line names the new values: not
    taken, see the parser.)"""
    if previous is None or stated_epoch is None or previous[1] != stated_epoch - 1 or previous[1] < 0:
        return False
    return known_epoch is None or known_epoch < previous[1]


def no_broker_acceptable(acceptable: AbstractSet[int], known: AbstractSet[int], elr_enabled: bool) -> bool:
    """True when the election of any partition gives no leader, whatever its replicas and ISR.

    PartitionChangeBuilder only elects a replica for which isAcceptableLeader holds (registered, unfenced, not in
    controlled shutdown), in a clean and an unclean election alike (3.9.0-rc3
    metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java electLeader / electAnyLeader /
    isValidNewLeader): with brokers known (``known``: registered, fenced or shutting down) and none acceptable, no
    replica can lead. With ELR in use a last known leader is elected without that test (canElectLastKnownLeader,
    3.7+), so not then."""
    return not elr_enabled and bool(known) and not acceptable


def created_leader(replicas: Sequence[int], acceptable: AbstractSet[int], shutting_down: AbstractSet[int] = frozenset(),
                   *, version: Version | None) -> tuple[int, tuple[int, ...]]:
    """(leader, ISR) of a partition createTopics registers (rule ``kraft.election.created``: the usable replicas form
    the ISR, the first of them leads, leader epoch 0 and partition epoch 0); no usable replica, no leader.
    ``acceptable``: registered, unfenced, not shutting down; ``shutting_down``: unfenced brokers in controlled
    shutdown, usable at creation before 3.3."""
    return R.decide("kraft.election.created", version, tuple(replicas), frozenset(acceptable), frozenset(shutting_down))


def states_the_creation(leader_epoch: int | None, partition_epoch: int | None) -> bool:
    """True when a broker's line states a registration no change followed: every PartitionChangeRecord raises the
    partition epoch (3.9.0-rc3 PartitionRegistration.merge), so leader epoch 0 at partition epoch 0 is the
    PartitionRecord createTopics wrote."""
    return leader_epoch == 0 and partition_epoch == 0
