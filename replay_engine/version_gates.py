"""Where the ZooKeeper-mode controller's behaviour changed between Kafka releases: small pure predicates,
each read from Kafka's source at the release tags it cites. ``version`` is (major, minor, patch) or None
(unknown: the newest behaviour holds, as for the rest of the replay).

(The versioned rule table in ``replay_engine/rules`` holds the same boundary as a rule; this predicate is the
call site's stand-in until the table is merged.)
"""
from __future__ import annotations

Version = tuple[int, int, int] | None


def failover_takes_offline_replicas_out_of_isr(version: Version) -> bool:
    """Does a new controller move the replicas of dead brokers to OfflineReplica (out of the ISR) at start-up?

    0.8 .. 2.2 ReplicaStateMachine.startup: ``handleStateChanges(allLiveReplicas(), OnlineReplica)`` only; a dead
    broker's replicas are set to ReplicaDeletionIneligible in initializeReplicaState and keep their ISR place.
    2.3.0 (KAFKA-3143, core/src/main/scala/kafka/controller/ReplicaStateMachine.scala ``startup``): "Triggering offline
    replica state changes", ``handleStateChanges(offlineReplicas, OfflineReplica)``.
    """
    return version is None or version >= (2, 3, 0)
