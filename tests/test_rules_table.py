"""The versioned rule table (replay_engine/rules): its shape, its generated page, and each rule at its
version boundaries.

Independent truth: Kafka's source at the release tags. Each expectation below quotes the deciding line
(tag, file, function). Where Kafka's own git history is beside the checkout (../.mirror/apache+kafka/repo,
as ../shared is), every citation is also checked to name a file that exists at its tag and holds the
function.
"""
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from replay_engine import rules as R
from replay_engine.rules import doc, kraft as KR, zk_config as C, zk_controller as Z, zk_elections as EL, zk_isr as I

KAFKA_GIT = Path(os.environ.get("KAFKA_GIT_DIR", REPO.parent / ".mirror" / "apache+kafka" / "repo"))


def test_semantics_page_is_generated_from_the_table():
    page = (REPO / "docs" / "semantics.md").read_text()
    assert page == doc.render(), "docs/semantics.md is stale: python -m replay_engine.rules.doc > docs/semantics.md"


def test_every_decision_is_covered_without_gap_or_overlap():
    assert R.check_table() == []


def test_check_table_finds_a_gap():
    rows = [r for r in R.TABLE if r.decision == I.OFFLINE_REPLICA_ISR and r.since != (0, 8, 2)]
    assert R.check_table(rows), "removing the 0.8.2-1.0 row leaves 0.8.2 uncovered"


def test_the_page_has_a_row_per_rule_and_range():
    page = doc.render()
    for r in R.TABLE:
        assert f"| {r.range_text} | {r.name} |" in page


@pytest.mark.skipif(not KAFKA_GIT.is_dir(), reason="Kafka's git history is not beside the checkout")
def test_every_citation_names_a_file_and_function_at_its_tag():
    for r in R.TABLE:
        tag, path, fn = r.cite
        text = subprocess.run(["git", f"--git-dir={KAFKA_GIT}", "show", f"{tag}:{path}"], capture_output=True,
                              text=True).stdout
        assert text, f"{r.decision} / {r.name}: {path} does not exist at {tag}"
        last = fn.split(".")[-1]
        assert last in text, f"{r.decision} / {r.name}: {last} not in {path} at {tag}"


# ---------------------------------------------------------------- lookup and fallback

def test_unknown_version_takes_the_documented_default_and_says_so():
    res = R.resolve(I.OFFLINE_REPLICA_ISR, None)
    assert res.rule is R.rule_for(I.OFFLINE_REPLICA_ISR, R.DEFAULT_ZK)
    assert res.fallback and "version unknown" in res.fallback
    assert R.resolve(KR.ELECTION, None).rule is R.rule_for(KR.ELECTION, R.DEFAULT_KRAFT)


def test_version_outside_every_range_takes_the_nearest_row_and_says_so():
    old = R.resolve(KR.ELECTION, (2, 8, 0))  # KRaft rows start at 3.0
    assert old.rule.since == (3, 0, 0) and "older than every range" in old.fallback
    assert R.resolve(EL.OFFLINE, (0, 9, 0)).fallback is None


def test_rule_set_names_the_narrowest_common_range():
    assert R.rule_set_name("zk", (2, 4, 1)) == "zk 2.4-2.6"
    assert R.rule_set_name("zk", (1, 0, 0)) == "zk 1.0"
    assert "version unknown" in R.rule_set_name("zk", None)
    d = R.describe("zk", (0, 9, 0))
    assert {row["decision"] for row in d["rules"]} == {x for x in R.decisions() if x.startswith("zk.")}


# ---------------------------------------------------------------- OfflineReplica: the last ISR member

def _remove(version, leader, isr, replica, unclean):
    return R.decide(I.OFFLINE_REPLICA_ISR, version, leader, isr, replica, unclean)


def test_last_isr_member_08_0_is_removed():
    # 0.8.1.1 KafkaController.removeReplicaFromIsr:
    #   new LeaderAndIsr(newLeader, leaderAndIsr.leaderEpoch + 1, leaderAndIsr.isr.filter(b => b != replicaId), ...)
    assert _remove((0, 8, 1), 1, (1,), 1, False) == (-1, ())


def test_last_isr_member_09_with_unclean_enabled_leaves_an_empty_isr():
    # 0.9.0.0 KafkaController.removeReplicaFromIsr:
    #   if (newIsr.isEmpty && !LogConfig.fromProps(...).uncleanLeaderElectionEnable) { newIsr = leaderAndIsr.isr }
    # with the 0.9 default (Defaults.UncleanLeaderElectionEnable = true): "isr":[] is written.
    unclean = R.decide(C.UNCLEAN_DEFAULT, (0, 9, 0)) == "true"
    assert unclean
    assert _remove((0, 9, 0), 1, (1,), 1, unclean) == (-1, ())
    assert _remove((1, 0, 0), 1, (1,), 1, False) == (-1, (1,))  # "Retaining last ISR 1"


def test_last_isr_member_11_is_always_kept():
    # 1.1.0 ReplicaStateMachine.doRemoveReplicasFromIsr:
    #   val adjustedIsr = if (leaderAndIsr.isr.size == 1) leaderAndIsr.isr else leaderAndIsr.isr.filter(_ != replicaId)
    assert _remove((1, 1, 0), 1, (1,), 1, True) == (-1, (1,))
    assert _remove((1, 1, 0), 2, (1, 2), 1, True) == (2, (2,))


def test_offline_replica_write_bumps_the_epoch_only_where_the_replica_is_in_the_isr():
    # 1.1.0 doRemoveReplicasFromIsr: leaderAndIsrsWithReplica -> newLeaderAndIsr (leaderEpoch + 1);
    # leaderAndIsrsWithoutReplica are not written.
    for v in ((0, 9, 0), (2, 4, 0)):
        assert R.decide(I.OFFLINE_REPLICA_EPOCH, v, 7, True) == 8
        assert R.decide(I.OFFLINE_REPLICA_EPOCH, v, 7, False) == 7


# ---------------------------------------------------------------- elections

def test_offline_election_08_0_prefers_isr_order_08_2_assignment_order():
    # 0.8.1.1 OfflinePartitionLeaderSelector: val newLeader = liveBrokersInIsr.head
    # 0.8.2.1: val liveReplicasInIsr = liveAssignedReplicas.filter(r => liveBrokersInIsr.contains(r)); liveReplicasInIsr.head
    ar, isr, live = (3, 1, 2), (1, 3), {1, 2, 3}
    assert R.decide(EL.OFFLINE, (0, 8, 1), ar, isr, live, False).leader == 1
    assert R.decide(EL.OFFLINE, (0, 8, 2), ar, isr, live, False).leader == 3
    assert R.decide(EL.OFFLINE, (2, 4, 0), ar, isr, live, False).leader == 3


def test_offline_election_unclean_takes_first_live_assigned_replica_with_isr_of_itself():
    # 1.1.0 offlinePartitionLeaderElection: assignment.find(liveReplicas.contains) when unclean is enabled;
    # PartitionStateMachine: newIsr = List(leader)
    res = R.decide(EL.OFFLINE, (2, 0, 0), (1, 2, 3), (1,), {3, 2}, True)
    assert (res.leader, res.isr, res.unclean) == (2, (2,), True)
    assert R.decide(EL.OFFLINE, (2, 0, 0), (1, 2, 3), (1,), {3, 2}, False) is None


def test_controlled_shutdown_before_0_10_0_takes_the_isr_head():
    # 0.9.0.1 ControlledShutdownLeaderSelector: newIsr = isr.filter(!shuttingDown); newLeaderOpt = newIsr.headOption
    # 0.10.0.0 (KAFKA-3670): liveAssignedReplicas.filter(newIsr.contains).headOption
    ar, isr = (1, 2, 3), (1, 3, 2)
    old = R.decide(EL.CONTROLLED_SHUTDOWN, (0, 9, 0), ar, isr, {1, 2, 3}, {1})
    new = R.decide(EL.CONTROLLED_SHUTDOWN, (0, 10, 0), ar, isr, {1, 2, 3}, {1})
    assert (old.leader, old.isr) == (3, (3, 2))
    assert (new.leader, new.isr) == (2, (3, 2))


def test_preferred_and_reassign_do_not_change_with_version():
    for v in ((0, 8, 2), (2, 4, 0)):
        assert R.decide(EL.PREFERRED, v, (2, 1), (1, 2), {1, 2}).leader == 2
        assert R.decide(EL.PREFERRED, v, (2, 1), (1,), {1, 2}) is None
        assert R.decide(EL.REASSIGN, v, (4, 2), (2, 4), {2, 4}).leader == 4


# ---------------------------------------------------------------- controller, brokers, config

def test_failover_moves_dead_replicas_offline_from_2_3():
    # 2.2.0 ReplicaStateMachine.startup: handleStateChanges(controllerContext.allLiveReplicas().toSeq, OnlineReplica)
    # 2.3.0: val (onlineReplicas, offlineReplicas) = ...; handleStateChanges(offlineReplicas.toSeq, OfflineReplica)
    assert R.decide(Z.FAILOVER_OFFLINE_REPLICAS, (2, 2, 1)) is False
    assert R.decide(Z.FAILOVER_OFFLINE_REPLICAS, (2, 3, 0)) is True


def test_bounce_is_detected_by_broker_epoch_from_2_2():
    # 2.2.0 BrokerChange.process: bouncedBrokerIds = (curBrokerIds & liveOrShuttingDownBrokerIds)
    #   .filter(brokerId => curBrokerIdAndEpochs(brokerId) > controllerContext.liveBrokerIdAndEpochs(brokerId))
    assert R.decide(Z.BOUNCE, (2, 1, 1), 10, 20) is False
    assert R.decide(Z.BOUNCE, (2, 2, 0), 10, 20) is True
    assert R.decide(Z.BOUNCE, (2, 2, 0), 10, 10) is False


def test_unclean_default_true_before_0_11_false_after():
    # 0.10.2.0 KafkaConfig Defaults: val UncleanLeaderElectionEnable = true; 0.11.0.0: = false (KIP-106)
    assert R.decide(C.UNCLEAN_DEFAULT, (0, 10, 2)) == "true"
    assert R.decide(C.UNCLEAN_DEFAULT, (0, 11, 0)) == "false"


def test_enabling_unclean_retries_offline_partitions_from_2_0_cluster_2_1_topic():
    # 2.0.0 DynamicBrokerConfig: server.kafkaController.enableDefaultUncleanLeaderElection()
    # 2.1.0 ConfigHandler: kafkaController.enableTopicUncleanLeaderElection(topic) (KAFKA-6835)
    assert not R.decide(C.UNCLEAN_RETRY, (1, 1, 0), "cluster")
    assert R.decide(C.UNCLEAN_RETRY, (2, 0, 0), "cluster") and not R.decide(C.UNCLEAN_RETRY, (2, 0, 0), "topic")
    assert R.decide(C.UNCLEAN_RETRY, (2, 1, 0), "topic")


def test_auto_rebalance_default_off_in_0_8_1_on_from_0_8_2():
    # 0.8.1.1 KafkaConfig: props.getBoolean("auto.leader.rebalance.enable", false); 0.8.2.1: (..., true)
    assert R.decide(C.AUTO_REBALANCE, (0, 8, 1))["auto.leader.rebalance.enable"] == "false"
    assert R.decide(C.AUTO_REBALANCE, (0, 8, 2))["auto.leader.rebalance.enable"] == "true"
    assert R.decide(C.AUTO_REBALANCE, (3, 4, 0))["leader.imbalance.per.broker.percentage"] == "10"


def test_delete_topic_default_true_from_1_0():
    # 0.11.0.0 Defaults.DeleteTopicEnable = false; 1.0.0: = true
    assert R.decide(C.DELETE_TOPIC, (0, 11, 0)) == "false"
    assert R.decide(C.DELETE_TOPIC, (1, 0, 0)) == "true"


def test_isr_change_written_by_controller_from_2_7_with_the_protocol():
    # 2.7.0 Partition: private val useAlterIsr: Boolean = interBrokerProtocolVersion.isAlterIsrSupported (>= 2.7-IV2)
    assert R.decide(I.ISR_CHANGE, (2, 6, 0), None) == "leader"
    assert R.decide(I.ISR_CHANGE, (2, 7, 0), (2, 7, 0)) == "controller"
    assert R.decide(I.ISR_CHANGE, (2, 8, 0), (2, 6, 0)) == "leader"


def test_controlled_shutdown_leaves_rf1_alone():
    # 1.1.0 doControlledShutdown: partitionReplicaAssignment(partition).size > 1 (0.9.0.0: if (replicationFactor > 1))
    for v in ((0, 9, 0), (2, 4, 0)):
        assert R.decide(Z.CONTROLLED_SHUTDOWN, v, 1, True) == "none"
        assert R.decide(Z.CONTROLLED_SHUTDOWN, v, 3, True) == "move_leader"
        assert R.decide(Z.CONTROLLED_SHUTDOWN, v, 3, False) == "remove_from_isr"


# ---------------------------------------------------------------- KRaft

def test_kraft_elr_winner_is_found_in_replica_order():
    # 3.7.0 PartitionChangeBuilder.isValidNewLeader: (targetIsr.contains(r) || (targetIsr.isEmpty() &&
    # targetElr.contains(r))) && isAcceptableLeader(r); electAnyLeader: targetReplicas.stream().filter(isValidNewLeader)
    res = R.decide(KR.ELECTION, (3, 7, 0), (1, 2, 3), (), None, {2, 3}, False, (3, 2), True)
    assert (res.leader, res.isr, res.how) == (2, (2,), "elr")


def test_kraft_before_3_7_has_no_elr():
    res = R.decide(KR.ELECTION, (3, 6, 0), (1, 2, 3), (1,), None, {2, 3}, False, (3, 2), True)
    assert res.leader == -1


def test_kraft_isr_shrink_keeps_the_last_member_without_elr():
    # 3.4.0 PartitionChangeBuilder.build: if (record.isr() == null && !targetIsr.isEmpty() && ...) record.setIsr(...)
    assert R.decide(KR.ISR_SHRINK, (3, 4, 0), (1,), {1}) == (1,)
    # 3.7.0: (!targetIsr.isEmpty() || eligibleLeaderReplicasEnabled)
    assert R.decide(KR.ISR_SHRINK, (3, 7, 0), (1,), {1}, True) == ()


def test_kraft_unclean_leader_recovering_from_3_2():
    assert R.decide(KR.RECOVERY, (3, 1, 0)) == "RECOVERED"
    assert R.decide(KR.RECOVERY, (3, 2, 0)) == "RECOVERING"


def test_kraft_fencing_after_session_timeout():
    # 3.0.0 BrokerHeartbeatManager.hasValidSession: broker.lastContactNs + sessionTimeoutNs >= time.nanoseconds()
    assert not R.decide(KR.FENCING, (3, 9, 0), 0, 9_000_000, 9000)
    assert R.decide(KR.FENCING, (3, 9, 0), 0, 9_000_001, 9000)


def test_kraft_renounce_drops_uncommitted_records():
    # 3.0.0 QuorumController.renounce: snapshotRegistry.revertToSnapshot(lastCommittedOffset)
    assert R.decide(KR.RENOUNCE, (3, 9, 0), [10, 11, 12], 11) == [10, 11]


def test_kraft_last_known_leader_is_elected_when_isr_and_elr_are_empty():
    # 3.7.0 PartitionChangeBuilder.electAnyLeader: if (canElectLastKnownLeader()) return new
    # ElectionResult(partition.lastKnownElr[0], true); canElectLastKnownLeader needs targetElr and targetIsr empty and
    # partition.lastKnownElr.length == 1; tryElection then sets the ISR to [leader] (unclean).
    res = R.decide(KR.ELECTION, (3, 7, 0), (1, 2, 3), (), None, {2, 3}, False, (), True, (1,))
    assert (res.leader, res.isr, res.how) == (1, (1,), "unclean")
    assert R.decide(KR.ELECTION, (3, 7, 0), (1, 2, 3), (), None, {2, 3}, False, (), True, (1, 2)).leader == -1
    assert R.decide(KR.ELECTION, (3, 6, 0), (1, 2, 3), (), None, {2, 3}, False, (), True, (1,)).leader == -1


def test_controller_resigns_on_a_refused_write_only_from_2_1():
    # 2.1.0 ControllerEventManager: case e: ControllerMovedException => controllerMovedListener() (-> maybeResign);
    # 2.0.0 has no such handler: resignation only through the session / /controller watches.
    assert R.decide(Z.RESIGNATION, (2, 0, 0), "session_expired")
    assert not R.decide(Z.RESIGNATION, (2, 0, 0), "controller_moved")
    assert R.decide(Z.RESIGNATION, (2, 1, 0), "controller_moved")


def test_kraft_isr_shrink_bumps_the_leader_epoch_only_before_3_6():
    # 3.5.0 PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded: if (!Replicas.contains(targetIsr, partition.isr) ...)
    #   record.setLeader(partition.leader);
    # 3.6.0: bumpLeaderEpochOnIsrShrink = metadataVersion.isLeaderEpochBumpRequiredOnIsrShrink() || zkMigrationEnabled
    assert R.decide(KR.EPOCH_BUMP, (3, 5, 0), 1, (1, 2), 1, (1,)) is True
    assert R.decide(KR.EPOCH_BUMP, (3, 6, 0), 1, (1, 2), 1, (1,)) is False
    assert R.decide(KR.EPOCH_BUMP, (3, 9, 0), 1, (1, 2), 2, (2,)) is True
    assert R.decide(KR.EPOCH_BUMP, (3, 9, 0), 1, (1, 2), 1, (1, 2)) is None


def test_kraft_created_partition_leaves_out_a_broker_in_controlled_shutdown_from_3_3():
    # 3.0.0 ReplicationControlManager.createTopic: isr = brokerIds.filter(clusterControl::unfenced), leader isr.get(0);
    # 3.3.0 (KAFKA-13916): filter(clusterControl::active), unfenced and not in controlled shutdown.
    replicas, active, shutting = (2, 1, 3), frozenset({1, 3}), frozenset({2})
    assert R.decide(KR.CREATED, (3, 2, 0), replicas, active, shutting) == (2, (2, 1, 3))
    assert R.decide(KR.CREATED, (3, 3, 0), replicas, active, shutting) == (1, (1, 3))
    # nothing usable: Kafka refuses the creation; a record that exists anyway is compared against no leader
    assert R.decide(KR.CREATED, (3, 9, 0), (2,), frozenset({1}), frozenset()) == (-1, (2,))


def test_kraft_target_elr_from_3_7_below_min_isr():
    # 3.7.0 PartitionChangeBuilder.maybePopulateTargetElr: a target ISR below min ISR puts the members leaving it
    # (and the ELR kept) in the ELR; at or above min ISR the ELR is cleared. No ELR before 3.7 or without the feature.
    assert R.decide(KR.TARGET_ELR, (3, 7, 0), (1, 2), (2,), (), 2, True) == (1,)
    assert R.decide(KR.TARGET_ELR, (3, 7, 0), (1, 2, 3), (2, 3), (1,), 2, True) == ()
    assert R.decide(KR.TARGET_ELR, (3, 7, 0), (1,), (), (3,), 2, True) == (1, 3)
    assert R.decide(KR.TARGET_ELR, (3, 7, 0), (1, 2), (2,), (), 2, False) == ()
    assert R.decide(KR.TARGET_ELR, (3, 6, 0), (1, 2), (2,), (), 2, True) == ()
