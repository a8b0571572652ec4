"""ZooKeeper mode: the ISR writes, by the controller (OfflineReplica) and by partition leaders.

The last ISR member is where releases differ: 0.8.0-0.8.1 remove it like any other (the znode reads
``"isr":[]``); 0.8.2-1.0 keep it only when unclean election is disabled for the topic (so with the
pre-0.11 default, true, a 0.9 controller writes ``"isr":[]``); 1.1 on keep it always (the rewritten
``removeReplicasFromIsr`` never writes an empty ISR). Every write bumps the leader epoch.
"""
from __future__ import annotations

from typing import Sequence

from replay_engine.zk import elections as E
from replay_engine.rules.rule import Rule, Version

KC = "core/src/main/scala/kafka/controller/KafkaController.scala"
RSM = "core/src/main/scala/kafka/controller/ReplicaStateMachine.scala"


def remove_always(leader: int, isr: Sequence[int], replica: int, unclean_enabled: bool) -> tuple[int, tuple[int, ...]]:
    """0.8.0-0.8.1: ``leaderAndIsr.isr.filter(b => b != replicaId)``, even when nothing is left."""
    return (-1 if replica == leader else leader), tuple(x for x in isr if x != replica)


def remove_unless_unclean_disabled(leader: int, isr: Sequence[int], replica: int,
                                   unclean_enabled: bool) -> tuple[int, tuple[int, ...]]:
    return E.remove_replica_from_isr_010(leader, isr, replica, unclean_enabled)


def remove_keep_last(leader: int, isr: Sequence[int], replica: int, unclean_enabled: bool) -> tuple[int, tuple[int, ...]]:
    return E.remove_replica_from_isr(leader, isr, replica)


def epoch_after_isr_write(leader_epoch: int | None, replica_in_isr: bool) -> int | None:
    """A replica not in the ISR: nothing written ("Cannot remove replica ... since it is not in the ISR" before
    1.1; filtered out by ``leaderAndIsrsWithoutReplica`` after). Otherwise the write bumps the leader epoch."""
    if leader_epoch is None or not replica_in_isr:
        return leader_epoch
    return leader_epoch + 1


def writer_leader(ibp: Version | None) -> str:
    return "leader"


def writer_alter_isr(ibp: Version | None) -> str:
    """2.7+: ``useAlterIsr = interBrokerProtocolVersion.isAlterIsrSupported`` (>= 2.7-IV2); else the old path."""
    return "controller" if ibp is None or ibp >= (2, 7, 0) else "leader"


OFFLINE_REPLICA_ISR = "zk.offline_replica.isr"
OFFLINE_REPLICA_EPOCH = "zk.offline_replica.epoch"
ISR_CHANGE = "zk.isr_change.writer"

RULES = [
    Rule("last ISR member removed (ISR may become empty)", OFFLINE_REPLICA_ISR, (0, 8, 0), (0, 8, 2), remove_always,
         ("0.8.1.1", KC, "KafkaController.removeReplicaFromIsr"),
         "Leader -1 if the replica led; `leaderAndIsr.isr.filter(b => b != replicaId)` is written even when "
         "empty."),
    Rule("last ISR member kept only if unclean election is disabled", OFFLINE_REPLICA_ISR, (0, 8, 2), (1, 1, 0),
         remove_unless_unclean_disabled, ("0.10.2.0", KC, "KafkaController.removeReplicaFromIsr"),
         "`if (newIsr.isEmpty && !LogConfig.fromProps(...).uncleanLeaderElectionEnable)` the ISR is retained "
         "(\"Retaining last ISR\"); with unclean election enabled (the default before 0.11) `\"isr\":[]` is "
         "written."),
    Rule("last ISR member always kept", OFFLINE_REPLICA_ISR, (1, 1, 0), None, remove_keep_last,
         ("1.1.0", RSM, "ReplicaStateMachine.doRemoveReplicasFromIsr"),
         "`val adjustedIsr = if (leaderAndIsr.isr.size == 1) leaderAndIsr.isr else leaderAndIsr.isr.filter(_ != "
         "replicaId)`: an empty ISR is never written; leader -1 if the replica led."),
    Rule("epoch +1 on every OfflineReplica ISR write", OFFLINE_REPLICA_EPOCH, (0, 8, 0), (1, 1, 0),
         epoch_after_isr_write, ("0.10.2.0", KC, "KafkaController.removeReplicaFromIsr"),
         "`// increment the leader epoch even if the ISR changes`: `new LeaderAndIsr(newLeader, leaderEpoch + 1, "
         "...)`; a replica not in the ISR: warning, no write."),
    Rule("newLeaderAndIsr bumps the epoch", OFFLINE_REPLICA_EPOCH, (1, 1, 0), None, epoch_after_isr_write,
         ("1.1.0", RSM, "ReplicaStateMachine.doRemoveReplicasFromIsr"),
         "`leaderAndIsr.newLeaderAndIsr(newLeader, adjustedIsr)` (leaderEpoch + 1) for every partition whose ISR "
         "holds the replica, including a leaderless one whose last member it is; others are not written."),
    Rule("leader writes the state znode, controller not told", ISR_CHANGE, (0, 8, 0), (0, 9, 0), writer_leader,
         ("0.8.2.1", "core/src/main/scala/kafka/cluster/Partition.scala", "Partition.updateIsr"),
         "The leader shrinks/expands the ISR by a conditional write of the state znode (zkVersion + 1, leader "
         "epoch unchanged)."),
    Rule("leader writes the znode and /isr_change_notification", ISR_CHANGE, (0, 9, 0), (2, 7, 0), writer_leader,
         ("0.9.0.0", "core/src/main/scala/kafka/cluster/Partition.scala", "Partition.updateIsr"),
         "As before, plus `replicaManager.recordIsrChange`: the controller learns of the change through "
         "/isr_change_notification and only refreshes metadata."),
    Rule("AlterIsr: the controller writes the leader's ISR change", ISR_CHANGE, (2, 7, 0), None, writer_alter_isr,
         ("2.7.0", KC, "KafkaController.processAlterIsr"),
         "KIP-497, with inter.broker.protocol.version >= 2.7-IV2: the leader sends AlterIsr and the controller "
         "writes the znode with the same leader epoch; an older protocol version keeps the leader's own write."),
]
