"""ZooKeeper mode: the controller's own life (election, epochs, failover) and what it does for brokers
(failure, bounce, controlled shutdown), reassignment and topic deletion.

What changed: a broker that restarts between two reads of /brokers/ids is seen as bounced (failure then
startup) only from 2.2 (KIP-380 broker epochs); a new controller moves the replicas of dead brokers to
OfflineReplica (an ISR write, so a leader-epoch bump, even for partitions already leaderless) only from
2.3 (KAFKA-3143); controlled shutdown ran synchronously in the request thread under the controller lock
until 1.0 and is an event of the controller's queue from 1.1, checked against the broker epoch from 2.2;
reassignment takes the AlterPartitionReassignments API from 2.4 (KIP-455).
"""
from __future__ import annotations

from replay_engine.rules.rule import Rule

KC = "core/src/main/scala/kafka/controller/KafkaController.scala"
RSM = "core/src/main/scala/kafka/controller/ReplicaStateMachine.scala"
PSM = "core/src/main/scala/kafka/controller/PartitionStateMachine.scala"


def next_controller_epoch(previous: int | None) -> int | None:
    """The winner of /controller writes /controller_epoch = previous + 1 (conditional on its zkVersion)."""
    return None if previous is None else previous + 1


def resigns_watch(cause: str) -> bool:
    """Before 2.1 a controller resigns when ZooKeeper tells it: its session expired, or /controller was deleted or
    now names another broker. A write refused because another controller moved on is an error, not a resignation."""
    return cause in ("session_expired", "controller_changed")


def resigns_watch_or_moved(cause: str) -> bool:
    """2.1+: also when a write fails with ControllerMovedException (its /controller_epoch zkVersion is stale)."""
    return cause in ("session_expired", "controller_changed", "controller_moved")


def stale_epoch_write_zombie() -> str:
    """Before 2.1 a partition write is conditional on the state znode's own version only: a deposed controller
    (a zombie) can still write, and log it, under its old epoch."""
    return "zombie"


def stale_epoch_write_new_data() -> str:
    """2.1+: every controller write is a multi-op checking /controller_epoch's znode version, so a write logged
    under an epoch lower than one already elected succeeded against a recreated /controller_epoch: ZooKeeper's
    data is new (a wiped or replaced ensemble) and the partitions' history starts again."""
    return "new_data"


def election_fenced(znode_epoch: int, controller_epoch: int) -> bool:
    """An election reads the state znode first and gives up when a controller of a later epoch wrote it."""
    return znode_epoch > controller_epoch


def bounce_never(old_epoch, new_epoch) -> bool:
    """Before 2.2 the controller compares broker ids only: a broker back before the watch fired is not seen."""
    return False


def bounce_by_epoch(old_epoch, new_epoch) -> bool:
    """``curBrokerIdAndEpochs(brokerId) > controllerContext.liveBrokerIdAndEpochs(brokerId)``: the czxid of the new
    /brokers/ids/N znode is larger, so onBrokerFailure then onBrokerStartup."""
    return old_epoch is not None and new_epoch is not None and new_epoch != old_epoch


def failure_order() -> tuple[str, ...]:
    """onBrokerFailure: partitions led by the dead brokers go OfflinePartition and are elected first, then the
    dead replicas go OfflineReplica (removed from ISRs)."""
    return ("offline_partitions", "elect_offline", "offline_replicas")


def failover_offline_replicas_no() -> bool:
    """ReplicaStateMachine.startup handles live replicas only: no write for dead ones."""
    return False


def failover_offline_replicas_yes() -> bool:
    return True


def failed_election_writes(elected: bool) -> bool:
    """An election that finds no leader throws before writing: no znode write, no leader-epoch bump."""
    return elected


def shutdown_action(replication_factor: int, leads: bool) -> str:
    """What a controlled shutdown does to one partition of the broker: RF 1 is left alone (it goes down with
    the broker); led partitions get a ControlledShutdown election; followed ones an OfflineReplica ISR removal."""
    if replication_factor <= 1:
        return "none"
    return "move_leader" if leads else "remove_from_isr"


def reassign_znode() -> dict[str, object]:
    return {"request": "/admin/reassign_partitions znode", "cancel": False, "adding_removing_in_state": False}


def reassign_kip455() -> dict[str, object]:
    return {"request": "AlterPartitionReassignments API or /admin/reassign_partitions", "cancel": True,
            "adding_removing_in_state": True}


BROKER_FAILURE = "zk.broker.failure_order"
BOUNCE = "zk.broker.bounce"
CONTROLLER_EPOCH = "zk.controller.epoch"
RESIGNATION = "zk.controller.resignation"
FAILOVER_OFFLINE_REPLICAS = "zk.failover.offline_replicas"
FAILED_ELECTION = "zk.election.failed_writes"
CONTROLLED_SHUTDOWN = "zk.controlled_shutdown"
REASSIGNMENT = "zk.reassignment"
STALE_EPOCH_WRITE = "zk.controller.stale_epoch_write"
ELECTION_FENCE = "zk.election.epoch_fence"

RULES = [
    Rule("controller epoch +1 per election (ZkUtils)", CONTROLLER_EPOCH, (0, 8, 0), (2, 1, 0), next_controller_epoch,
         ("0.8.2.1", KC, "KafkaController.incrementControllerEpoch"),
         "The broker that creates the ephemeral /controller znode writes /controller_epoch + 1; a write by a "
         "controller with an older epoch is refused (\"written by another controller\")."),
    Rule("controller epoch +1 in the same transaction", CONTROLLER_EPOCH, (2, 1, 0), None, next_controller_epoch,
         ("2.1.0", "core/src/main/scala/kafka/zk/KafkaZkClient.scala",
          "KafkaZkClient.registerControllerAndIncrementControllerEpoch"),
         "/controller and /controller_epoch + 1 in one multi-op; later writes carry the epoch znode version "
         "(ControllerMovedException for a zombie controller)."),
    Rule("resign on session expiry or /controller change", RESIGNATION, (0, 8, 0), (2, 1, 0), resigns_watch,
         ("0.8.2.1", KC, "KafkaController.onControllerResignation"),
         "SessionExpirationListener.handleNewSession and LeaderChangeListener.handleDataDeleted/handleDataChange "
         "(1.1: Reelect / ControllerChange events) call onControllerResignation; a zombie's partition writes are "
         "refused only where the znode's controller epoch is compared (\"written by another controller\")."),
    Rule("resign also when a write finds the controller moved", RESIGNATION, (2, 1, 0), None, resigns_watch_or_moved,
         ("2.1.0", "core/src/main/scala/kafka/controller/ControllerEventManager.scala", "ControllerEventManager"),
         "Every write is conditional on the /controller_epoch zkVersion; `case e: ControllerMovedException => "
         "controllerMovedListener()` makes the old controller resign (maybeResign) at its first refused write."),
    Rule("a write under an older controller epoch: a zombie's", STALE_EPOCH_WRITE, (0, 8, 0), (2, 1, 0),
         stale_epoch_write_zombie, ("2.0.0", "core/src/main/scala/kafka/zk/KafkaZkClient.scala",
                                    "KafkaZkClient.updateLeaderAndIsr"),
         "`updateLeaderAndIsr(leaderAndIsrs, controllerEpoch)` sets each state znode conditionally on its own "
         "version only: a deposed controller's writes can succeed and be logged under its old epoch."),
    Rule("a write under an older controller epoch: new ZooKeeper data", STALE_EPOCH_WRITE, (2, 1, 0), None,
         stale_epoch_write_new_data, ("2.1.0", "core/src/main/scala/kafka/zk/KafkaZkClient.scala",
                                      "KafkaZkClient.updateLeaderAndIsr"),
         "KAFKA-6082: writes carry `expectedControllerEpochZkVersion` (a check of /controller_epoch in the same "
         "multi-op, ControllerMovedException otherwise): a write logged under an epoch below one already elected "
         "ran against a recreated /controller_epoch, so the partitions' history starts again."),
    Rule("an election gives up on a state a later controller wrote", ELECTION_FENCE, (0, 8, 0), None,
         election_fenced, ("0.10.2.0", PSM, "PartitionStateMachine.electLeaderForPartition"),
         "`if (controllerEpoch > controller.epoch) throw StateChangeFailedException(\"aborted leader election ... "
         "already written by another controller ...\")` on the LeaderAndIsr just read from ZooKeeper (0.8.0 on; 2.7.0 "
         "doElectLeaderForPartitions alike): an election logged as made under epoch E found the znode written under "
         "epoch E or below."),
    Rule("no bounce detection", BOUNCE, (0, 8, 0), (2, 2, 0), bounce_never,
         ("2.1.0", KC, "KafkaController.BrokerChange.process"),
         "Only ids are compared (`newBrokerIds`, `deadBrokerIds`): a broker that re-registers before the watch "
         "fires is neither failed nor started."),
    Rule("bounced broker: failure then startup (KIP-380)", BOUNCE, (2, 2, 0), None, bounce_by_epoch,
         ("2.2.0", KC, "KafkaController.BrokerChange.process"),
         "`bouncedBrokerIds = (curBrokerIds & liveOrShuttingDownBrokerIds).filter(epoch > known epoch)`: "
         "onBrokerFailure then onBrokerStartup."),
    Rule("onBrokerFailure: elect, then OfflineReplica", BROKER_FAILURE, (0, 8, 0), (1, 1, 0), failure_order,
         ("0.8.2.1", KC, "KafkaController.onBrokerFailure"),
         "Partitions led by dead brokers -> OfflinePartition; triggerOnlinePartitionStateChange(); then the "
         "dead brokers' replicas -> OfflineReplica."),
    Rule("onReplicasBecomeOffline: elect, then OfflineReplica", BROKER_FAILURE, (1, 1, 0), None, failure_order,
         ("1.1.0", KC, "KafkaController.onReplicasBecomeOffline"),
         "Same order: partitions without a live leader -> OfflinePartition, triggerOnlinePartitionStateChange(), "
         "then OfflineReplica for the replicas (also for a failed log directory)."),
    Rule("failover: live replicas only", FAILOVER_OFFLINE_REPLICAS, (0, 8, 0), (2, 3, 0), failover_offline_replicas_no,
         ("2.2.0", RSM, "ReplicaStateMachine.startup"),
         "`handleStateChanges(controllerContext.allLiveReplicas().toSeq, OnlineReplica)`: a new controller "
         "writes nothing for replicas on dead brokers, so an already-offline partition keeps its leader epoch."),
    Rule("failover: dead replicas -> OfflineReplica", FAILOVER_OFFLINE_REPLICAS, (2, 3, 0), None,
         failover_offline_replicas_yes, ("2.3.0", RSM, "ReplicaStateMachine.startup"),
         "`handleStateChanges(offlineReplicas.toSeq, OfflineReplica)` (KAFKA-3143): every partition whose ISR "
         "holds a dead broker is written once more (leader epoch + 1, last member kept), leaderless ones included."),
    Rule("failed election writes nothing", FAILED_ELECTION, (0, 8, 0), (1, 1, 0), failed_election_writes,
         ("0.8.2.1", PSM, "PartitionStateMachine.electLeaderForPartition"),
         "The selector throws NoReplicaOnlineException before the conditional write: the partition stays "
         "OfflinePartition with its epoch (failover's triggerOnlinePartitionStateChange included)."),
    Rule("electLeaderForPartitions: no leader, no write", FAILED_ELECTION, (1, 1, 0), None, failed_election_writes,
         ("1.1.0", PSM, "PartitionStateMachine.electLeaderForPartitions"),
         "Partitions whose election finds no leader are `failedElections`, logged, and not written."),
    Rule("synchronous shutdownBroker", CONTROLLED_SHUTDOWN, (0, 8, 0), (1, 1, 0), shutdown_action,
         ("0.9.0.0", KC, "KafkaController.shutdownBroker"),
         "In the request thread under controllerLock, one partition at a time: `if (replicationFactor > 1)`, "
         "led -> ControlledShutdownLeaderSelector, followed -> StopReplica and OfflineReplica; the broker retries "
         "while it still leads (controlled.shutdown.max.retries)."),
    Rule("ControlledShutdown event", CONTROLLED_SHUTDOWN, (1, 1, 0), (2, 2, 0), shutdown_action,
         ("1.1.0", KC, "KafkaController.ControlledShutdown.doControlledShutdown"),
         "An event of the controller queue: partitions with RF > 1 led by the broker -> "
         "ControlledShutdownPartitionLeaderElectionStrategy in one batch; followed ones -> OfflineReplica."),
    Rule("ControlledShutdown event with broker epoch (KIP-380)", CONTROLLED_SHUTDOWN, (2, 2, 0), None, shutdown_action,
         ("2.2.0", KC, "KafkaController.ControlledShutdown.doControlledShutdown"),
         "As from 1.1, and a request carrying an older broker epoch is refused (StaleBrokerEpochException)."),
    Rule("/admin/reassign_partitions only", REASSIGNMENT, (0, 8, 0), (2, 4, 0), reassign_znode,
         ("2.3.0", KC, "KafkaController.onPartitionReassignment"),
         "RAR = OAR + RAR, wait for the new replicas to join the ISR, elect with the reassign strategy if the "
         "leader is not in RAR or not live (else bump the epoch), drop the old replicas; no cancellation."),
    Rule("AlterPartitionReassignments (KIP-455)", REASSIGNMENT, (2, 4, 0), None, reassign_kip455,
         ("2.4.0", KC, "KafkaController.processApiPartitionReassignment"),
         "Reassignments by API as well as znode, cancellable; the state carries adding/removing replicas; same "
         "election and epoch-bump steps."),
]
