"""Every election strategy, release by release: one case per rule row and the releases around its boundaries.

Independent truth: Kafka's source at the cited tag (the deciding expression is quoted beside each case). The same
inputs go to every release, so a row whose range is wrong picks the other row's leader and the case fails.
"""
import pytest

from replay_engine import rules as R
from replay_engine.rules import kraft as KR, zk_elections as EL

ALL, NONE = frozenset({1, 2, 3}), frozenset()

# (decision, release, args, expected (leader, ISR) or None for no leader, where it was read)
ZK_CASES = [
    # Offline: AR (3, 2, 1), ISR (1, 2, 3), all live.
    (EL.OFFLINE, (0, 8, 0), ((3, 2, 1), (1, 2, 3), ALL, False), (1, (1, 2, 3)),
     "0.8.0 OfflinePartitionLeaderSelector: val newLeader = liveBrokersInIsr.head"),
    (EL.OFFLINE, (0, 8, 1), ((3, 2, 1), (1, 2, 3), ALL, False), (1, (1, 2, 3)),
     "0.8.1.1 OfflinePartitionLeaderSelector: liveBrokersInIsr.head"),
    (EL.OFFLINE, (0, 8, 2), ((3, 2, 1), (1, 2, 3), ALL, False), (3, (1, 2, 3)),
     "0.8.2.0 (kafka-1503): liveAssignedReplicas.filter(r => liveBrokersInIsr.contains(r)).head"),
    (EL.OFFLINE, (0, 9, 0), ((3, 2, 1), (1, 2, 3), ALL, False), (3, (1, 2, 3)), "0.9.0.0 as 0.8.2"),
    (EL.OFFLINE, (0, 10, 2), ((3, 2, 1), (1, 2, 3), ALL, False), (3, (1, 2, 3)), "0.10.2.0 as 0.8.2"),
    (EL.OFFLINE, (1, 0, 0), ((3, 2, 1), (1, 2, 3), ALL, False), (3, (1, 2, 3)), "1.0.2 as 0.8.2"),
    (EL.OFFLINE, (1, 1, 0), ((3, 2, 1), (1, 2, 3), ALL, False), (3, (1, 2, 3)),
     "1.1.0 offlinePartitionLeaderElection: assignment.find(id => liveReplicas.contains(id) && isr.contains(id))"),
    (EL.OFFLINE, (3, 9, 0), ((3, 2, 1), (1, 2, 3), ALL, False), (3, (1, 2, 3)), "3.9.0-rc3 as 1.1.0"),
    # Offline, no live ISR member: unclean takes the first live assigned replica, ISR [it].
    (EL.OFFLINE, (0, 8, 0), ((3, 2, 1), (1,), frozenset({2, 3}), True), (3, (3,)),
     "0.8.0: liveAssignedReplicasToThisPartition.head, List(newLeader)"),
    (EL.OFFLINE, (2, 4, 0), ((3, 2, 1), (1,), frozenset({2, 3}), False), None,
     "2.4.0: uncleanLeaderElectionEnabled false -> None"),
    # Controlled shutdown of broker 1 (leader): AR (1, 2, 3), ISR (1, 3, 2).
    (EL.CONTROLLED_SHUTDOWN, (0, 8, 0), ((1, 2, 3), (1, 3, 2), ALL, frozenset({1})), (3, (3, 2)),
     "0.8.0 ControlledShutdownLeaderSelector: newIsr (without the leader and shutting-down brokers).headOption"),
    (EL.CONTROLLED_SHUTDOWN, (0, 9, 0), ((1, 2, 3), (1, 3, 2), ALL, frozenset({1})), (3, (3, 2)),
     "0.9.0.1: newIsr.headOption"),
    (EL.CONTROLLED_SHUTDOWN, (0, 10, 0), ((1, 2, 3), (1, 3, 2), ALL, frozenset({1})), (2, (3, 2)),
     "0.10.0.0 (KAFKA-3670): liveAssignedReplicas.filter(newIsr.contains).headOption"),
    (EL.CONTROLLED_SHUTDOWN, (0, 10, 1), ((1, 2, 3), (1, 3, 2), ALL, frozenset({1})), (2, (3, 2)),
     "0.10.1.1: liveAssignedReplicas.find(newIsr.contains)"),
    (EL.CONTROLLED_SHUTDOWN, (0, 10, 2), ((1, 2, 3), (1, 3, 2), ALL, frozenset({1})), (2, (3, 2)),
     "0.10.2.0: liveAssignedReplicas.find(newIsr.contains)"),
    (EL.CONTROLLED_SHUTDOWN, (1, 1, 0), ((1, 2, 3), (1, 3, 2), ALL, frozenset({1})), (2, (3, 2)),
     "1.1.0 controlledShutdownPartitionLeaderElection: assignment.find(live && isr && !shuttingDown)"),
    # Before 0.10.0 no liveness test: a dead ISR member left at the head is elected.
    (EL.CONTROLLED_SHUTDOWN, (0, 9, 0), ((1, 2, 3), (1, 3, 2), frozenset({1, 2}), frozenset({1})), (3, (3, 2)),
     "0.9.0.1: newIsr.headOption, liveAssignedReplicas only receive the request"),
    (EL.CONTROLLED_SHUTDOWN, (0, 10, 0), ((1, 2, 3), (1, 3, 2), frozenset({1, 2}), frozenset({1})), (2, (3, 2)),
     "0.10.0.0: liveAssignedReplicas = assigned live or shutting down"),
    # Preferred: only the head of AR, live and in the ISR; ISR unchanged.
    (EL.PREFERRED, (0, 8, 0), ((2, 1), (1, 2), ALL), (2, (1, 2)),
     "0.8.0 PreferredReplicaPartitionLeaderSelector: preferredReplica = assignedReplicas.head, live and in isr"),
    (EL.PREFERRED, (0, 10, 2), ((2, 1), (1,), ALL), None, "0.10.2.0: not in the ISR -> StateChangeFailedException"),
    (EL.PREFERRED, (1, 1, 0), ((2, 1), (1, 2), ALL), (2, (1, 2)),
     "1.1.0 preferredReplicaPartitionLeaderElection: assignment.headOption.filter(live && isr)"),
    # Reassignment to (4, 2) with ISR (2): 0.8.0 does not ask the ISR.
    (EL.REASSIGN, (0, 8, 0), ((4, 2), (2,), frozenset({2, 4})), (4, (2,)),
     "0.8.0 ReassignedPartitionLeaderSelector: reassignedInSyncReplicas.filter(live).headOption"),
    (EL.REASSIGN, (0, 8, 1), ((4, 2), (2,), frozenset({2, 4})), (2, (2,)),
     "0.8.1 (kafka-1202): filter(r => live.contains(r) && currentLeaderAndIsr.isr.contains(r))"),
    (EL.REASSIGN, (1, 1, 0), ((4, 2), (2,), frozenset({2, 4})), (2, (2,)),
     "1.1.0 reassignPartitionLeaderElection: reassignment.find(live && isr)"),
    # New partition: the first live replica of AR leads, ISR the live replicas.
    (EL.NEW_PARTITION, (0, 8, 0), ((3, 1, 2), frozenset({1, 2})), (1, (1, 2)),
     "0.8.0 initializeLeaderAndIsrForPartition: liveAssignedReplicas.head"),
    (EL.NEW_PARTITION, (2, 4, 0), ((3, 1, 2), NONE), None,
     "2.4.0 initializeLeaderAndIsrForPartitions: no live replica -> failed"),
]


@pytest.mark.parametrize("decision,version,args,expected,source", ZK_CASES,
                         ids=[f"{c[0]}@{R.vtext(c[1])}" for c in ZK_CASES])
def test_zookeeper_election_per_release(decision, version, args, expected, source):
    res = R.decide(decision, version, *args)
    got = None if res is None else (res.leader, res.isr)
    assert got == expected, source


# (release, replicas, target ISR, current leader, acceptable, unclean, expected (leader, how), where it was read)
KRAFT_CASES = [
    # The current leader 1 is still in the target ISR but not acceptable (say it is shutting down while the change is
    # built): 3.0-3.1 try no election at all, 3.2+ elect another.
    ((3, 0, 0), (1, 2, 3), (1, 2, 3), 1, frozenset({2, 3}), False, (1, "kept"),
     "3.0.0 PartitionChangeBuilder.shouldTryElection: !targetIsr.contains(partition.leader)"),
    ((3, 1, 0), (1, 2, 3), (1, 2, 3), 1, frozenset({2, 3}), False, (1, "kept"), "3.1.0 as 3.0.0"),
    ((3, 2, 0), (1, 2, 3), (1, 2, 3), 1, frozenset({2, 3}), False, (2, "isr"),
     "3.2.0 electAnyLeader: isValidNewLeader(partition.leader) = targetIsr.contains && isAcceptableLeader"),
    ((3, 9, 0), (1, 2, 3), (1, 2, 3), 1, frozenset({2, 3}), False, (2, "isr"), "3.9.0-rc3 as 3.2.0"),
    ((4, 2, 0), (1, 2, 3), (1, 2, 3), 1, frozenset({2, 3}), False, (2, "isr"), "4.2.0 as 3.2.0 (ELR off)"),
    # The leader left the target ISR: the first replica in it and acceptable, else unclean, else none.
    ((3, 0, 0), (3, 2, 1), (1, 2), 3, frozenset({1, 2}), False, (2, "isr"), "3.0.0 BestLeader"),
    ((3, 4, 0), (3, 2, 1), (1,), 3, frozenset({2}), True, (2, "unclean"),
     "3.4.0 electAnyLeader: Election.UNCLEAN, the first acceptable replica"),
    ((3, 4, 0), (3, 2, 1), (1,), 3, frozenset({2}), False, (-1, "none"), "3.4.0: NO_LEADER"),
]


@pytest.mark.parametrize("version,replicas,isr,leader,acceptable,unclean,expected,source", KRAFT_CASES,
                         ids=[f"kraft.election@{R.vtext(c[0])}-{i}" for i, c in enumerate(KRAFT_CASES)])
def test_kraft_election_per_release(version, replicas, isr, leader, acceptable, unclean, expected, source):
    res = R.decide(KR.ELECTION, version, replicas, isr, leader, acceptable, unclean)
    assert (res.leader, res.how) == expected, source


def test_kraft_last_known_leader_must_be_acceptable_from_4_2():
    # ISR and ELR empty, lastKnownElr [1], broker 1 fenced (not acceptable), ELR on. 3.9.0-rc3
    # PartitionChangeBuilder.canElectLastKnownLeader: `if (isAcceptableLeader.test(...)) log.trace(...); return true`
    # (liveness only logged): 1 is elected uncleanly. KAFKA-19522 (apache/kafka#20200): `if (!isAcceptableLeader
    # .test(partition.lastKnownElr[0])) { ...; return false; }`: no leader.
    args = ((1,), (), -1, frozenset(), False, (), True, (1,))
    assert (R.decide(KR.ELECTION, (3, 9, 0), *args).leader, R.decide(KR.ELECTION, (3, 9, 0), *args).how) == \
        (1, "unclean")
    assert R.decide(KR.ELECTION, (4, 2, 0), *args).leader == -1
    # acceptable (the broker being unfenced, brokerToAdd): elected by both
    ok = ((1,), (), -1, frozenset({1}), False, (), True, (1,))
    assert R.decide(KR.ELECTION, (4, 2, 0), *ok).leader == R.decide(KR.ELECTION, (3, 9, 0), *ok).leader == 1


def test_kraft_preferred_election_before_3_2_moves_to_the_best_leader():
    # replicas (1, 2, 3), leader 3, ISR (1, 2, 3), broker 1 not acceptable. 3.0.0: setAlwaysElectPreferredIfPossible
    # and !partition.hasPreferredLeader() -> BestLeader, the first valid replica: 2. 3.2.0 electPreferredLeader: the
    # first replica is not valid, the current leader is: it stays.
    args = ((1, 2, 3), (1, 2, 3), 3, frozenset({2, 3}))
    assert R.decide(KR.PREFERRED, (3, 1, 0), *args).leader == 2
    assert R.decide(KR.PREFERRED, (3, 2, 0), *args).leader == 3
    # the first replica valid: both elect it
    for v in ((3, 0, 0), (3, 9, 0)):
        res = R.decide(KR.PREFERRED, v, (1, 2, 3), (1, 2, 3), 3, frozenset({1, 2, 3}))
        assert (res.leader, res.how) == (1, "preferred")


def test_every_election_row_has_a_case():
    covered = {(d, R.rule_for(d, v).name) for d, v, *_ in ZK_CASES}
    covered |= {(KR.ELECTION, R.rule_for(KR.ELECTION, c[0]).name) for c in KRAFT_CASES}
    rows = {(r.decision, r.name) for r in R.TABLE
            if r.decision in (EL.OFFLINE, EL.CONTROLLED_SHUTDOWN, EL.PREFERRED, EL.REASSIGN, EL.NEW_PARTITION,
                              KR.ELECTION)}
    assert rows <= covered, sorted(rows - covered)
