"""KRaft from logs, any node layout (issue 44, class 5): single combined nodes that restart, restate what they hold,
lose their metadata or are formatted anew; fences no INFO line records; topics created again under their names.

Each test cites the real lines it rests on; every behaviour is read from Kafka's source (tags in the replay's comments).
"""
from __future__ import annotations

import pytest

from conftest import replayed_cluster
from replay_engine.kraft.election import change_bumps_epoch

DAMIR = "DamirSmetov__Final_Project"
BMT = "BMTushyath__RFIDSAS"
DANIEL = "Danielowo2000__BigDataTechnologies-Version-2"
D_LOGS = DANIEL + "/kafka_2.13-3.5.0/logs/"


def _replay(name: str, folder: str = "real_logs2"):
    return replayed_cluster(name, folder)


def _at(res, cite: str) -> list:
    return [c for c in res.comparisons if c.record.cite() == cite]


def _starts(res, topic: str, partition: int) -> list[int]:
    return [lp.episode.start for lp in res.leaderless if (lp.episode.topic, lp.episode.partition) == (topic, partition)]


@pytest.fixture(scope="module")
def daniel():
    return _replay(DANIEL)


def test_a_restarted_single_node_restating_its_registrations_is_compared_not_left_out():
    res = _replay(DAMIR)
    logs = DAMIR + "/kafka_2.13-4.1.1/logs/"
    # state-change.log.2025-11-28-08.gz line 106 (08:44:42): broker 1 takes up __consumer_offsets-13 at leader epoch 1,
    # leader -1 (its controlled shutdown). Restarted, it loads the metadata image and states the same epoch again at
    # line 160 (08:55:09, "Follower __consumer_offsets-13 starts at leader epoch 1 ... Current leader is -1"): one
    # leader epoch has one leader, so the line is compared with the epoch the replay decided, not left uncompared.
    [first] = _at(res, logs + "state-change.log.2025-11-28-08.gz:106")
    [again] = _at(res, logs + "state-change.log.2025-11-28-08.gz:160")
    assert first.verdict == "agreed" and again.verdict == "agreed" and again.replayed == {"leader": -1}
    ag = res.agreement()
    assert ag["uncompared"] == 0 and ag["agreed"] == ag["compared"] > 1000


def test_a_topic_created_again_under_its_name_starts_a_new_history():
    res = _replay(BMT)
    # controller.log.2026-03-16-11.gz: the node was formatted anew ("The metadata log appears to be empty") and
    # __consumer_offsets created with topic ID jYCAXHTFQSiLotlqJU9sKw (the day before it had rBL3mNjQROK9Vz-01QmkEQ).
    # state-change.log.2026-03-16-11.gz line 6: broker 1 leads __consumer_offsets-13 of the new topic id at leader epoch
    # 0 -- the creation, judged by createTopics' rule, not an older epoch of the old incarnation.
    [c] = _at(res, BMT + "/logs/state-change.log.2026-03-16-11.gz:6")
    assert (c.verdict, c.recorded, c.replayed) == ("agreed", {"leader": 1}, {"leader": 1})
    assert "created partition" in c.how
    # what is left uncompared is a hole: quorum epochs 25-28 that no line names
    left = [c.reason for c in res.comparisons if c.verdict == "unknown"]
    assert left and all(r.startswith("evidence gap (quorum epochs 25-28") for r in left)


def test_a_shutdown_let_go_is_a_fence_and_its_epoch_bump_is_replayed(daniel):
    # controller.log.2023-08-05-16.gz line 9: "The request from broker 1 to shut down has been granted ..."
    # (BrokerHeartbeatManager: SHUTDOWN_NOW, which processBrokerHeartbeat handles by handleBrokerFenced). The single
    # replica's ISR [1] is the whole target ISR, left unwritten, yet in 3.5 the shrink sets the leader field: epoch 9,
    # leader still -1. state-change.log.2023-08-05-16.gz line 11 states exactly that.
    [c] = _at(daniel, D_LOGS + "state-change.log.2023-08-05-16.gz:11")
    assert (c.verdict, c.recorded, c.replayed) == ("agreed", {"leader": -1}, {"leader": -1})
    assert c.how == "broker's own view of the replayed decision"


def test_the_epoch_bump_of_an_emptied_target_isr_follows_the_release():
    # 3.5.1 PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded: !Replicas.contains(targetIsr, partition.isr) sets
    # the leader; 3.6+ (KAFKA-15021) only with bumpLeaderEpochOnIsrShrink below metadata 3.6-IV0: no record at all.
    assert change_bumps_epoch(-1, (1,), -1, (1,), (3, 5, 0), target_isr=()) is True
    assert change_bumps_epoch(-1, (1,), -1, (1,), (3, 6, 0), target_isr=()) is None


def test_a_reload_restating_the_creation_does_not_take_the_partition_back(daniel):
    # controller.log.2023-08-05-16.gz line 25 (16:55:49): the restarted 3.5 controller replays the log and logs
    # "Created partition quickstart-events-0 ... leaderEpoch=0" again; the changes since are replayed at DEBUG. At line
    # 15 of state-change.log.2023-08-05-16.gz the broker states epoch 9 (leader -1), the epoch the replay held before
    # the reload: compared with it, not taken as a new epoch after 0.
    [c] = _at(daniel, D_LOGS + "state-change.log.2023-08-05-16.gz:15")
    assert (c.verdict, c.replayed) == ("agreed", {"leader": -1})
    ag = daniel.agreement()
    assert ag["uncompared"] == 0 and ag["agreed"] == ag["compared"]


def test_a_session_timeout_fences_where_no_line_records_the_fence(daniel):
    from conftest import log4j_us

    # controller.log.2023-07-15-09.gz line 66: "Fencing broker 1 because its session has timed out." (3.5 logs no line
    # for the fence record itself); the single broker's partitions have no leader from then until it is back.
    assert log4j_us("2023-07-15 09:33:19,744") in _starts(daniel, "quickstart-events", 0)


def test_a_fence_whose_event_raft_refused_is_undone():
    from conftest import log4j_us

    res = _replay("BetrajJ__kafka-kraft", folder="real_logs")
    logs = "BetrajJ__kafka-kraft/kafka/logs/"
    # controller.log.2025-03-04-15.gz line 311: controller 3 "Fencing broker 1 because its session has timed out",
    # line 313: "maybeFenceReplicas: event failed with NotLeaderException ... Renouncing leadership": the fence was
    # never committed (QuorumController.handleEventException -> renounce). The same at controller.log.2025-03-04-17.gz
    # lines 19 and 21 (controller 1). Broker 1's partitions keep their leader there.
    undone = {e["source_file"] + ":" + str(e["source_pos"]) for f in res.image.findings
              if f["kind"] == "kraft_uncommitted_reverted" for e in f["evidence"][1:]}
    assert {logs + "controller.log.2025-03-04-15.gz:311", logs + "controller.log.2025-03-04-17.gz:19"} <= undone
    starts = set(_starts(res, "__consumer_offsets", 1))
    assert not starts & {log4j_us("2025-03-04 16:33:40,344"), log4j_us("2025-03-04 18:04:06,082")}


def test_a_topic_removed_in_the_controllers_log_has_no_leaderless_partition_after():
    from conftest import log4j_us

    res = _replay("BetrajJ__kafka-kraft", folder="real_logs")
    # controller.log.2025-02-28-11.gz line 72: "Replayed RemoveTopicRecord for topic kafka-topic with ID
    # DUc4knVDQMGKcHKxYw3MQQ" (ReplicationControlManager.replay(RemoveTopicRecord)); no line creates it again.
    gone = log4j_us("2025-02-28 12:06:32,009")
    assert all(lp.episode.start < gone for lp in res.leaderless if lp.episode.topic == "kafka-topic")


def test_a_line_stating_an_elr_election_is_compared_with_it():
    res = _replay("GraphLogistics__kafka", folder="real_logs")
    # controller.log.gz line 64: "Setting new leader for topicId Si2sFI7LTKSxigLG22b0Ig, partition 13 to 1 using ELR.
    # Previous partition: PartitionRegistration(... leaderEpoch=49 ...)"; state-change.log.gz line 2: broker 1 leads
    # __consumer_offsets-13 at leader epoch 50, the epoch that change wrote.
    [c] = _at(res, "GraphLogistics__kafka/logs/state-change.log.gz:2")
    assert (c.verdict, c.replayed) == ("agreed", {"leader": 1})
    assert res.agreement()["uncompared"] == 0


@pytest.fixture(scope="module")
def bmt():
    return _replay(BMT)


def test_a_live_unclean_partition_change_line_is_a_record(bmt):
    # controller.log.2026-03-16-11.gz line 431: "Fencing broker 1 at epoch 635 because its session has timed out", then
    # the active controller's "UNCLEAN partition change for rfid-events-0 ...: isr: [1] -> [], leader: 1 -> -1,
    # leaderEpoch: 2 -> 3" (line 434) and fifty more in the same millisecond (PartitionRegistration
    # .maybeLogPartitionChange). The active controller logs a record once, as it writes it (QuorumController
    # .QuorumMetaLogListener.handleCommit does not replay it again), so the burst is live, not a start-up's history.
    [c] = _at(bmt, BMT + "/logs/controller.log.2026-03-16-11.gz:434")
    assert (c.verdict, c.recorded, c.replayed) == ("agreed", {"leader": -1}, {"leader": -1})
    # controller.log.2026-03-17-11.gz line 90 (11:21:36.884): the restarted controller, before "Becoming the active
    # controller", replays its log and logs "UNCLEAN partition change for __consumer_offsets-13 ...: leader: 1 -> -1,
    # leaderEpoch: 24 -> 25": a decision of the day before, not one taken at this line.
    assert not _at(bmt, BMT + "/logs/controller.log.2026-03-17-11.gz:90")
    assert not [c for c in bmt.comparisons if c.verdict == "diverged"]


def test_an_election_logged_by_the_controller_ends_the_leaderless_time_it_states():
    from conftest import log4j_us

    res = _replay(DAMIR)
    # controller.log.2025-11-28-08.gz line 202: "The request from broker 1 to unfence has been granted ..." (08:55:09.852)
    # and line 203: "Setting new leader for topicId 9AEIsnUQTTS5liR7nQkf3A, partition 0 to 1 using ELR. Previous
    # partition: PartitionRegistration(... leader=-1 ...)" (08:55:09.858): the election the grant began, logged by
    # PartitionChangeBuilder.tryElection in the same controller event; quickstart-events-0 was leaderless until it.
    at = log4j_us("2025-11-28 08:55:09,858")
    assert any(lp.episode.start < at <= lp.episode.end for lp in res.leaderless
               if (lp.episode.topic, lp.episode.partition) == ("quickstart-events", 0))


def test_a_partition_first_known_leaderless_was_so_since_its_replicas_left():
    from conftest import log4j_us

    res = _replay("GraphLogistics__kafka", folder="real_logs")
    # controller.log.gz line 44: "Fencing broker 1 at epoch 10 because its session has timed out" (10:33:33.680); line
    # 51 (10:33:33.968), the first line naming the partition: "Setting new leader for topicId Si2sFI7LTKSxigLG22b0Ig,
    # partition 0 to 1 using ELR. Previous partition: PartitionRegistration(replicas=[1], ... leader=-1 ...)", after
    # the unfence grant of line 50 that began that event. Its only replica was no acceptable leader in between
    # (isAcceptableLeader), so nothing led it from the fence to the election.
    fenced, elected = log4j_us("2026-02-24 10:33:33,680"), log4j_us("2026-02-24 10:33:33,968")
    assert [(lp.episode.start, lp.episode.end) for lp in res.leaderless
            if (lp.episode.topic, lp.episode.partition) == ("__consumer_offsets", 0)] == [(fenced, elected)]


def test_the_active_controllers_creation_line_is_judged_and_a_reloads_is_not():
    res = _replay("timctf__floodpath")
    logs = "timctf__floodpath/kafka_2.13-4.0.0/logs/"
    # controller.log.2025-04-26-21.gz: "Becoming the active controller at epoch 9" (line 56), then "CreateTopics
    # result(s): CreatableTopic(name='quickstart-events', ...): SUCCESS" (84) and "Replayed PartitionRecord for new
    # partition quickstart-events-0 ... PartitionRegistration(replicas=[1], ..., isr=[1], ..., leader=1" (86): the
    # active controller replays the record it writes (ReplicationControlManager.replay; handleCommit does not replay
    # its own records again), a creation judged by createTopic's rule (kraft.election.created).
    [c] = _at(res, logs + "controller.log.2025-04-26-21.gz:86")
    assert (c.verdict, c.recorded["leader"], c.replayed["leader"]) == ("agreed", 1, 1)
    assert "createTopics" in c.how
    # line 39, before line 56, restates test-0's PartitionRecord as the node reloads its log: not a creation
    assert not _at(res, logs + "controller.log.2025-04-26-21.gz:39")
    assert res.agreement()["uncompared"] == 0


def test_a_leaderless_partition_is_elected_at_its_new_leaders_unfence():
    res = _replay("BetrajJ__kafka-kraft", folder="real_logs")
    logs = "BetrajJ__kafka-kraft/kafka/logs/"
    # state-change.log.2025-02-07-17.gz line 21 (11:14:39.087): test-topic-0 "starts at leader epoch 62 ... Current
    # leader is -1" (its ISR in no line). controller.log.2025-02-11-11.gz line 408 (11:14:40.865): "The request from
    # broker 1 to unfence has been granted", handleBrokerUnfenced (line 409) electing partitionsWithNoLeader with broker
    # 1 as brokerToAdd; broker 2's unfence follows at line 411 (11:14:40.992). Line 70 (11:14:41.260): broker 1 "Leader
    # test-topic-0 ... starts at leader epoch 63 ... Previous leader Some(-1) and previous leader epoch was 62". A
    # leaderless partition is elected only at an unfence, and its ISR does not change meanwhile: broker 1 was elected at
    # its own unfence, when it was the only acceptable broker -- whatever the ISR, not left 'ISR unknown'.
    for line in (70, 77, 82):
        [c] = _at(res, logs + f"state-change.log.2025-02-07-17.gz:{line}")
        assert (c.verdict, c.recorded, c.replayed) == ("agreed", {"leader": 1}, {"leader": 1}), line
        assert "whatever the ISR" in c.how


def test_the_leaderless_time_lasts_until_the_elected_broker_takes_it_up(daniel):
    from conftest import log4j_us

    # controller.log.2023-07-26-22.gz line 4 (22:30:19.762): "The request from broker 1 to unfence has been granted",
    # whose handleBrokerUnfenced elects json-events-0's only replica, broker 1 (the replay's own step, at the grant).
    # state-change.log.2023-07-26-22.gz line 30 (22:30:19.814): broker 1 "Follower json-events-0 starts at leader
    # epoch 1 ... Current leader is -1" -- it applies the fence's record only now (ReplicaManager.applyDelta applies
    # committed records in order) and takes up leader epoch 2 at line 86 (22:30:22.008): no broker led the partition
    # at line 30.
    at = log4j_us("2023-07-26 22:30:19,814")
    assert any(lp.episode.start < at <= lp.episode.end for lp in daniel.leaderless
               if (lp.episode.topic, lp.episode.partition) == ("json-events", 0))


def test_changes_a_controller_restates_from_its_log_past_every_line_are_listed_in_the_hole_they_were_written(bmt):
    # controller.log.2026-06-12-16.gz: the node restarts on 2026-06-12 16:54:44 and, before "Becoming the active
    # controller at epoch 30" (line 406), replays its log, logging each record (4.x ReplicationControlManager.replay ->
    # PartitionRegistration.maybeLogPartitionChange): lines 321-402, rfid-events-0 leader epochs 40-63 (partition epochs
    # 47-76), written after the last line that stated the partition (leader epoch 39, 2026-05-17 16:46:58,
    # state-change.log.2026-06-12-16.gz:14) and in no line since: the quorum was at epoch 16 then (line 136, 05-17
    # 16:43:26) and is at 30 now. Each is listed, its reason naming those quorum epochs; the registration it leaves is
    # taken (line 402's leader 1 at epoch 64), so the fence of 16:54:53 (line 417: leaderEpoch 64 -> 65) is judged on it.
    f = BMT + "/logs/controller.log.2026-06-12-16.gz"
    listed = {c.record.source_pos: c for c in bmt.comparisons if c.record.source_file == f and 321 <= c.record.source_pos <= 402}
    assert sorted(listed) == [321, 323, 328, 330, 332, 335, 337, 342, 344, 349, 351, 356, 358, 363, 365, 367, 370, 372,
                              374, 377, 379, 384, 386, 388, 391, 393, 395, 398, 400, 402]
    assert all(c.verdict == "unknown" and c.reason.startswith("evidence gap (quorum epochs ")
               and "restated by controller 1 loading its log: a record written after the last line stating the "
               "partition before (2026-05-17T16:46:58.817Z)" in c.reason for c in listed.values())
    [fence] = [c for c in bmt.comparisons if c.record.source_file == f and c.record.source_pos == 417]
    assert (fence.verdict, fence.recorded, fence.replayed) == ("agreed", {"leader": -1}, {"leader": -1})
    # restated again by the next start-up (controller.log.gz:149, leader epoch 40 at 17:01:01): compared with nothing
    # the replay made up (the leader epoch a judged change reached is the one its line states)
    assert not [c for c in bmt.comparisons if c.verdict == "diverged"]
