"""ZooKeeper mode: the partition-leader elections (Kafka's leader selectors, later
``PartitionLeaderElectionAlgorithms``).

Three things changed across releases: which replica an offline election prefers (0.8.0-0.8.1: the
ISR's order; 0.8.2 on: the assignment's, kafka-1503), which one a controlled shutdown hands leadership to
(before 0.10.0: the head of the ISR left after the shutting-down brokers; 0.10.0 on: the first
replica of the assignment that is live or shutting down and in that ISR, KAFKA-3670), and whether a
reassignment's new leader must be in the ISR (not in 0.8.0; from 0.8.1, kafka-1202). The 1.1 rewrite
(KAFKA-5642/5027) moved the selectors into ``PartitionLeaderElectionAlgorithms`` without changing what
they pick; the rows split there only so each cites the code that ran.
"""
from __future__ import annotations

from typing import AbstractSet, Sequence

from replay_engine.zk import elections as E
from replay_engine.zk.elections import Election
from replay_engine.rules.rule import Rule

SEL = "core/src/main/scala/kafka/controller/PartitionLeaderSelector.scala"
PSM = "core/src/main/scala/kafka/controller/PartitionStateMachine.scala"


def offline_isr_order(assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int],
                      unclean_allowed: bool) -> Election | None:
    """0.8.0-0.8.1: the first live ISR member *in ISR order* (``liveBrokersInIsr.head``)."""
    live_isr = tuple(x for x in isr if x in live)
    if live_isr:
        return Election(live_isr[0], live_isr)
    if unclean_allowed:
        for r in assignment:
            if r in live:
                return Election(r, (r,), unclean=True)
    return None


def controlled_shutdown_isr_head(assignment: Sequence[int], isr: Sequence[int], live_or_shutting_down: AbstractSet[int],
                                 shutting_down: AbstractSet[int]) -> Election | None:
    """Before 0.10.0: ``newIsr = isr without shutting-down brokers; newLeader = newIsr.headOption``.

    No liveness test beyond that, and the ISR's order, not the assignment's. (0.8.0-0.8.1 also drop the
    current leader from newIsr; the strategy runs only for partitions led by a broker being shut down, which
    is then in ``shutting_down`` already, so the pick is the same.)
    """
    new_isr = tuple(x for x in isr if x not in shutting_down)
    if not new_isr:
        return None
    return Election(new_isr[0], new_isr)


def reassign_any_live(target_replicas: Sequence[int], isr: Sequence[int], live: AbstractSet[int]) -> Election | None:
    """0.8.0: the first live replica of the target assignment, in the ISR or not; ISR unchanged."""
    for r in target_replicas:
        if r in live:
            return Election(r, tuple(isr))
    return None


def new_partition_leader(assignment: Sequence[int], live: AbstractSet[int]) -> Election | None:
    """NewPartition -> OnlinePartition: leader the first live replica of the assignment, ISR the live replicas."""
    alive = tuple(r for r in assignment if r in live)
    return Election(alive[0], alive) if alive else None


def fails_unless_isr_head(assigned: Sequence[int], live: AbstractSet[int], controlled_shutdown: bool) -> bool:
    """0.8.0-0.9: the offline selector throws NoReplicaOnlineException ("No replica for partition ... is alive")
    and the preferred one StateChangeFailedException when no assigned replica is live; the controlled-shutdown
    selector takes the ISR's head without a liveness test, so its outcome depends on the ISR."""
    return not controlled_shutdown and not any(r in live for r in assigned)


def fails_with_no_live_replica(assigned: Sequence[int], live: AbstractSet[int], controlled_shutdown: bool) -> bool:
    """0.10.0+: every strategy picks from the assignment filtered by the live (or live-or-shutting-down, of which
    the shutting-down ones are then excluded) replicas, and the ISR is a subset of the assignment."""
    return not any(r in live for r in assigned)


OFFLINE = "zk.election.offline"
CONTROLLED_SHUTDOWN = "zk.election.controlled_shutdown"
PREFERRED = "zk.election.preferred"
REASSIGN = "zk.election.reassign"
NEW_PARTITION = "zk.election.new_partition"
NO_LIVE_REPLICA = "zk.election.fails_whatever_the_isr"

RULES = [
    Rule("first live ISR member in ISR order", OFFLINE, (0, 8, 0), (0, 8, 2), offline_isr_order,
         ("0.8.1.1", SEL, "OfflinePartitionLeaderSelector.selectLeader"),
         "`val newLeader = liveBrokersInIsr.head`; ISR = the live ISR members. With no live ISR member, the "
         "first live assigned replica, ISR = [it] (unclean)."),
    Rule("first live replica in AR order that is in the ISR", OFFLINE, (0, 8, 2), (1, 1, 0), E.offline_partition_leader,
         ("0.8.2.1", SEL, "OfflinePartitionLeaderSelector.selectLeader"),
         "`liveAssignedReplicas.filter(r => liveBrokersInIsr.contains(r)).head`; ISR = the live ISR members "
         "(ISR order). No live ISR member: if the topic allows unclean election, the first live assigned replica "
         "with ISR = [it]; otherwise NoReplicaOnlineException and nothing is written."),
    Rule("offlinePartitionLeaderElection", OFFLINE, (1, 1, 0), None, E.offline_partition_leader,
         ("1.1.0", PSM, "PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection"),
         "`assignment.find(id => liveReplicas.contains(id) && isr.contains(id))`, else (unclean allowed) "
         "`assignment.find(liveReplicas.contains)`; ISR = live ISR members, or [leader] when unclean."),
    Rule("ISR head after removing shutting-down brokers", CONTROLLED_SHUTDOWN, (0, 8, 0), (0, 10, 0),
         controlled_shutdown_isr_head, ("0.9.0.1", SEL, "ControlledShutdownLeaderSelector.selectLeader"),
         "`newIsr = isr.filter(!shuttingDownBrokerIds.contains(_)); newLeader = newIsr.headOption`: the ISR's "
         "order, no liveness test; none left: StateChangeFailedException, the leader stays."),
    Rule("first live-or-shutting-down AR replica in the reduced ISR", CONTROLLED_SHUTDOWN, (0, 10, 0), (1, 1, 0),
         E.controlled_shutdown_leader, ("0.10.0.0", SEL, "ControlledShutdownLeaderSelector.selectLeader"),
         "KAFKA-3670: `liveAssignedReplicas.filter(newIsr.contains).headOption` (0.10.1 on: `.find(newIsr.contains)`) "
         "with liveAssignedReplicas = assigned replicas live or shutting down, newIsr = ISR without shutting-down "
         "brokers: the preferred replica when it can lead."),
    Rule("controlledShutdownPartitionLeaderElection", CONTROLLED_SHUTDOWN, (1, 1, 0), None,
         E.controlled_shutdown_leader,
         ("1.1.0", PSM, "PartitionLeaderElectionAlgorithms.controlledShutdownPartitionLeaderElection"),
         "`assignment.find(id => liveReplicas.contains(id) && isr.contains(id) && !shuttingDownBrokers.contains(id))`"
         " with liveReplicas = live or shutting down; ISR without the shutting-down brokers."),
    Rule("preferred replica if live and in ISR", PREFERRED, (0, 8, 0), (1, 1, 0), E.preferred_replica_leader,
         ("0.8.2.1", SEL, "PreferredReplicaPartitionLeaderSelector.selectLeader"),
         "Only the head of the assignment may win, if live and in the ISR; ISR unchanged. Already leader: "
         "LeaderElectionNotNeededException."),
    Rule("preferredReplicaPartitionLeaderElection", PREFERRED, (1, 1, 0), None, E.preferred_replica_leader,
         ("1.1.0", PSM, "PartitionLeaderElectionAlgorithms.preferredReplicaPartitionLeaderElection"),
         "`assignment.headOption.filter(id => liveReplicas.contains(id) && isr.contains(id))`; ISR unchanged."),
    Rule("first live reassigned replica", REASSIGN, (0, 8, 0), (0, 8, 1), reassign_any_live,
         ("0.8.0", SEL, "ReassignedPartitionLeaderSelector.selectLeader"),
         "`reassignedInSyncReplicas.filter(r => controllerContext.liveBrokerIds.contains(r)).headOption`: the ISR is "
         "not consulted (the selector runs once the new replicas caught up); ISR unchanged."),
    Rule("first live reassigned replica in ISR", REASSIGN, (0, 8, 1), (1, 1, 0), E.reassign_partition_leader,
         ("0.8.2.1", SEL, "ReassignedPartitionLeaderSelector.selectLeader"),
         "The first replica of the target assignment that is live and in the ISR; ISR unchanged."),
    Rule("reassignPartitionLeaderElection", REASSIGN, (1, 1, 0), None, E.reassign_partition_leader,
         ("1.1.0", PSM, "PartitionLeaderElectionAlgorithms.reassignPartitionLeaderElection"),
         "`reassignment.find(id => liveReplicas.contains(id) && isr.contains(id))`; ISR unchanged."),
    Rule("no live assigned replica: offline and preferred fail", NO_LIVE_REPLICA, (0, 8, 0), (0, 10, 0),
         fails_unless_isr_head, ("0.9.0.1", SEL, "OfflinePartitionLeaderSelector.selectLeader"),
         "Offline: `liveAssignedReplicas.isEmpty` -> NoReplicaOnlineException whatever the ISR; preferred: the head "
         "of the assignment must be live. ControlledShutdownLeaderSelector takes `newIsr.headOption` without a "
         "liveness test, so its failure depends on the ISR."),
    Rule("no live assigned replica: every strategy fails", NO_LIVE_REPLICA, (0, 10, 0), (1, 1, 0),
         fails_with_no_live_replica, ("0.10.0.0", SEL, "ControlledShutdownLeaderSelector.selectLeader"),
         "Offline and preferred as before; controlled shutdown now takes `liveAssignedReplicas.find(newIsr.contains)`,"
         " so no live (or shutting-down, which it then excludes) assigned replica fails it whatever the ISR."),
    Rule("no live assigned replica: every algorithm finds none", NO_LIVE_REPLICA, (1, 1, 0), None,
         fails_with_no_live_replica,
         ("1.1.0", PSM, "PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection"),
         "Each PartitionLeaderElectionAlgorithms function filters `assignment` by `liveReplicas` (and by the ISR, a "
         "subset of it): with no assigned replica live there is no leader, whatever the ISR."),
    Rule("first live assigned replica, ISR = live replicas", NEW_PARTITION, (0, 8, 0), (1, 1, 0), new_partition_leader,
         ("0.8.2.1", PSM, "PartitionStateMachine.initializeLeaderAndIsrForPartition"),
         "Leader = first live replica of the assignment, ISR = live replicas, leader epoch 0; none live: the "
         "partition stays NewPartition (StateChangeFailedException)."),
    Rule("initializeLeaderAndIsrForPartitions", NEW_PARTITION, (1, 1, 0), None, new_partition_leader,
         ("1.1.0", PSM, "PartitionStateMachine.initializeLeaderAndIsrForPartitions"),
         "`liveReplicas = replicas.filter(isReplicaOnline)`; leader = liveReplicas.head, ISR = liveReplicas, "
         "leader epoch 0; none live: logged failure, the partition stays NewPartition."),
]
