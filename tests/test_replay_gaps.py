"""Gaps between what the real logs record and what the replay reports (issue 15), closed one rule at a time.

Each test takes its expectation from a recorded line of a real log (file and line named) or from Kafka's
source at a release tag (file and function named).
"""
from parsers.schema import iso_utc
from replay_engine.zk.from_events import version_from_paths
from replay_engine import rules as R
from test_replay_real_logs import load


def _comparison(res, source_suffix: str):
    hits = [c for c in res.comparisons if (c.record.cite() or "").endswith(source_suffix)]
    assert len(hits) == 1, (source_suffix, hits)
    return hits[0]


def test_version_from_the_distribution_directory():
    # A Kafka binary distribution unpacks to kafka_<scala>-<kafka>/; SUMMARY.tsv of real_logs reads the same
    # version off the same directory names.
    assert version_from_paths(["agamsidhu__Kafka/kafka_2.11-0.9.0.0/logs/controller.log.gz"]) == "0.9.0.0"
    assert version_from_paths(["x/kafka_2.10-0.8.2.1/logs/server.log", "x/kafka_2.10-0.8.2.1/logs/a.log"]) == "0.8.2.1"
    assert version_from_paths(["a/kafka_2.11-0.9.0.0/logs/s.log", "b/kafka_2.12-2.5.1/logs/s.log"]) is None  # mixed
    assert version_from_paths(["logs/server.log", "kafka_2.11-0.9.0.0"]) is None  # a file, not a directory
    rep = load("agamsidhu__Kafka").to_json()
    assert rep["kafka_version"] == "0.9.0" and "file names" in rep["kafka_version_source"]


def test_failover_moves_dead_replicas_out_of_isr_only_from_23():
    # ReplicaStateMachine.startup: 2.2.0 hands only live replicas to OnlineReplica; 2.3.0 (KAFKA-3143) also hands
    # the dead brokers' replicas to OfflineReplica ("Triggering offline replica state changes").
    assert not R.decide("zk.failover.offline_replicas", (2, 2, 1))
    assert not R.decide("zk.failover.offline_replicas", (0, 9, 0))
    assert R.decide("zk.failover.offline_replicas", (2, 3, 0))
    assert R.decide("zk.failover.offline_replicas", None)
    # agamsidhu (0.9.0.0): controller 2 took over at 20:58:53.384 with Hello-Kafka-0's only replica (broker 0) gone;
    # its next election (controller.log.2017-10-06-20.gz line 241) wrote {"leader":0,"leader_epoch":1,"isr":[0]}:
    # the epoch was still 0 in between, no OfflineReplica write at failover.
    res = load("agamsidhu__Kafka")
    between = [iv for iv in res.intervals if (iv.topic, iv.partition) == ("Hello-Kafka", 0)
               and "2017-10-06T20:58:53.384" <= iso_utc(iv.start) < "2017-10-06T20:59:21.637"]
    assert between and all(iv.view.leader_epoch == 0 for iv in between), [iv.describe() for iv in between]


def test_broker_leaves_zookeeper_when_it_resigns_during_its_shutdown():
    # KafkaServer.shutdown (3.4.0 core/src/main/scala/kafka/server/KafkaServer.scala): info("shutting down"),
    # controlled shutdown, ..., kafkaController.shutdown() ("Resigned"), zkClient.close(). gaparedes' broker 1 logged
    # "Resigned" at 10:40:35.550 (controller.log.gz line 8) and "shut down completed" only at 10:40:35.680; controller 0
    # failed to elect cars-0 and cars-3 (whose only ISR member was broker 1) at 10:40:35.583 (state-change.log.gz
    # lines 27 and 50): broker 1 was gone by then.
    res = load("gaparedes__kafka-demo")
    for suffix in ("state-change.log.gz:27", "state-change.log.gz:50"):
        c = _comparison(res, suffix)
        assert c.agreed and c.recorded.get("failed"), (c.recorded, c.replayed)
    periods = next(b["periods"] for b in res.to_json()["brokers"] if b["broker"] == 1)
    assert any(p["state"] == "down" and p["start"] == "2023-06-12T10:40:35.550Z" for p in periods), periods


def test_controllers_all_leaders_dump_gives_the_isr_a_failed_election_was_judged_on():
    # vishnu1368 (2.5.1): controller 2's TRACE "All leaders = ... __consumer_offsets-8 -> (Leader:2,ISR:2,...)"
    # (controller.log.2025-12-04-22.gz line 40) is the ISR controller 1 had when it failed to elect
    # __consumer_offsets-8 out of OfflinePartition (state-change.log.2025-12-04-22.gz line 383) after broker 2 left.
    # Before the dump was read these records were uncompared ("ISR unknown"); now each is judged, and agrees.
    res = load("vishnu1368__kafka_2.12-2.5.1")
    c = _comparison(res, "state-change.log.2025-12-04-22.gz:383")
    assert c.agreed and c.recorded.get("failed")
    failed = [c for c in res.comparisons if c.recorded.get("failed")]
    assert len(failed) >= 33 and all(c.agreed for c in failed)


def test_offline_partition_is_leaderless_even_when_its_leader_was_unknown():
    # Artificial-Ridiculous (2.1.1) state-change.log.2019-06-05-18.gz line 1: "Changed partition my-replicated-topic-0
    # state from OnlinePartition to OfflinePartition" at 19:52:13.711 (the log starts there, the leader before is not
    # in the evidence); line 2 elects leader 0 at 19:52:13.723. OfflinePartition is Kafka's "no live leader"
    # (PartitionStateMachine), so those 12 ms are a leaderless episode.
    res = load("Artificial-Ridiculous__kafka")
    eps = [(iso_utc(lp.episode.start), iso_utc(lp.episode.end)) for lp in res.leaderless
           if (lp.episode.topic, lp.episode.partition) == ("my-replicated-topic", 0)]
    assert ("2019-06-05T19:52:13.711Z", "2019-06-05T19:52:13.723Z") in eps, eps


def test_kraft_elr_elections_from_logs_only_are_compared():
    # GraphLogistics (4.1.1, one broker, logs only): broker 1 was fenced at 10:33:33.966 (ISR -> [], ELR [1]), its
    # unfence was granted at .968 (controller.log.gz line 50) and the controller logged 52 "Setting new leader for topicId
    # Si2sFI7LTKSxigLG22b0Ig, partition N to 1 using ELR. Previous partition: PartitionRegistration(replicas=[1],
    # isr=[], elr=[1], ... leader=-1 ...)" lines (from line 51). The broker names that topic id
    # (state-change.log.gz line 2: "Leader __consumer_offsets-13 with topic id Some(Si2sFI7LTKSxigLG22b0Ig)").
    # PartitionChangeBuilder (3.9 / trunk electAnyLeader, isValidNewLeader): with an empty ISR an acceptable ELR member
    # leads; handleBrokerUnfenced makes the unfenced broker acceptable.
    res = load("GraphLogistics__kafka")
    c = _comparison(res, "controller.log.gz:51")
    assert c.tp == ("__consumer_offsets", 0) and c.agreed and c.recorded == {"leader": 1}
    elr = [c for c in res.comparisons if "(elr)" in c.how]
    assert len(elr) == 52 and all(c.agreed for c in elr)


def test_kraft_change_that_changes_nothing_writes_no_record():
    # PartitionChangeBuilder.build (3.9 branch metadata/.../controller/PartitionChangeBuilder.java): a record that
    # sets nothing (changeRecordIsNoOp) is not written, so no new leader epoch; the leader field is set only for a
    # new leader, or before metadata version 3.6 for an ISR shrink (triggerLeaderEpochBumpForIsrShrinkIfNeeded).
    from replay_engine.kraft.election import change_bumps_epoch
    assert change_bumps_epoch(-1, (3,), -1, (3,)) is None
    assert change_bumps_epoch(2, (1, 2), 1, (1,)) is True
    assert change_bumps_epoch(1, (1, 2), 1, (1,), (3, 9, 0)) is False
    assert change_bumps_epoch(1, (1, 2), 1, (1,), (3, 5, 1)) is True
    assert change_bumps_epoch(1, (1,), 1, (1, 2)) is False
    # BetrajJ (3.9): broker 1 states kraft-test-0's leader epoch 131 with leader 2 (state-change.log.2025-03-28-18.gz
    # line 5). Replaying every fence as a new epoch put a leaderless epoch 131 of the replay's own there; it is no
    # longer a divergence.
    res = load("BetrajJ__kafka-kraft")
    assert not [c for c in res.comparisons if c.record.cite().endswith("state-change.log.2025-03-28-18.gz:5")
                and not c.agreed]


def test_failed_election_with_no_assigned_replica_alive_is_judged_without_the_isr():
    from replay_engine import rules as R

    def fails(version, assigned, live, shutdown=False):
        return R.decide("zk.election.fails_whatever_the_isr", version, assigned, frozenset(live), shutdown)

    assert fails((0, 10, 2), (0,), ()) and fails((0, 10, 2), (1, 2), {0})
    assert not fails((0, 10, 2), (1, 2), {2})
    # 0.9.0.1 ControlledShutdownLeaderSelector: newIsr.headOption, no liveness test: the ISR decides
    assert fails((0, 9, 0), (1, 2), {0}) and not fails((0, 9, 0), (1, 2), {0}, shutdown=True)
    assert fails((0, 10, 0), (1, 2), {0}, shutdown=True)  # KAFKA-3670: liveAssignedReplicas first
    # andreinedelciu (0.10.2) state-change.log.2020-10-28-15.gz line 9: "initiated state change for partition
    # [netflow_kafka_topic,0] from OfflinePartition to OnlinePartition failed", NoReplicaOnlineException "No replica
    # for partition [netflow_kafka_topic,0] is alive. Live brokers are: [Set()], Assigned replicas are: [List(0)]"
    # (0.10.2.0 OfflinePartitionLeaderSelector.selectLeader): judged though the ISR it had is not in the evidence.
    res = load("andreinedelciu__kafka-brokers-public")
    c = _comparison(res, "state-change.log.2020-10-28-15.gz:9")
    assert c.agreed and c.replayed == {"leader": -1, "failed": True}


def test_a_partition_created_again_is_judged_as_new():
    # united10 (2.0.0): Test_json2 existed under controller epoch 3 (leader 0, epoch 0); after its ZooKeeper data was
    # reset, controller 0 epoch 1 logged "Changed partition Test_json2-0 state from NonExistentPartition to
    # NewPartition" (state-change.log.2018-11-04-23.gz line 3) and "from NewPartition to OnlinePartition with state
    # LeaderAndIsr(leader=0, leaderEpoch=0, isr=List(0), zkVersion=0)" (line 5): a new znode at version 0, judged as a
    # new partition (PartitionStateMachine: NewPartition -> OnlinePartition initialises leader and ISR).
    res = load("united10__Matchmaking_platform")
    c = _comparison(res, "state-change.log.2018-11-04-23.gz:5")
    assert c.agreed and c.recorded["leader"] == 0 and c.recorded["leader_epoch"] == 0


def test_a_new_history_forgets_the_znode_version_written_in_the_old_one():
    # AndreasTraut (2.8.0): __consumer_offsets-21 was last written at zkVersion 11 under controller epoch 9
    # (state-change.log.2021-04-28-16.gz); "0 successfully elected as the controller. Epoch incremented to 1"
    # (controller.log.2021-04-28-16.gz line 110) starts new ZooKeeper data, whose state znodes begin again at version 0
    # (KafkaZkClient.createTopicPartitionStatesRaw). Controller 1 epoch 5 then wrote "LeaderAndIsr(leader=0,
    # leaderEpoch=2, isr=List(0), zkVersion=2)" (state-change.log.2021-05-03-18.gz line 719) out of OfflinePartition
    # with broker 0 back: the version 2 <= 11 is no sign of another restart, and the election is judged.
    res = load("AndreasTraut__kafka_2.13-2.8.0")
    c = _comparison(res, "state-change.log.2021-05-03-18.gz:719")
    assert c.verdict == "agreed" and c.replayed["leader"] == 0 and c.replayed["leader_epoch"] == 2, c


def test_offline_replica_isr_write_is_judged_whoever_is_alive():
    # ReplicaStateMachine.doRemoveReplicasFromIsr (2.8.0 core/src/main/scala/kafka/controller/ReplicaStateMachine.scala):
    # newLeader = NoLeader if the replica led, adjustedIsr keeps a last member, newLeaderAndIsr bumps the epoch; no
    # liveness is read. AndreasTraut state-change.log.2021-04-26-20.gz line 1260: controller 0 (itself shutting down,
    # the only broker it knew) wrote __consumer_offsets-25 "(Leader:-1,ISR:1,LeaderEpoch:3,...) after removing replica
    # 1 from the ISR"; it was uncompared ("no broker known live to the replay") and is now judged.
    res = load("AndreasTraut__kafka_2.13-2.8.0")
    c = _comparison(res, "state-change.log.2021-04-26-20.gz:1260")
    assert c.verdict == "agreed" and c.replayed == {"leader": -1, "isr": [1], "leader_epoch": 3}, c
    assert not [c for c in res.comparisons if (c.reason or "").startswith("isr_removal: no broker known live")]


def test_a_write_under_an_older_controller_epoch_is_new_zookeeper_data_from_21():
    # KAFKA-6082 (2.1.0 core/src/main/scala/kafka/zk/KafkaZkClient.scala updateLeaderAndIsr): every controller write
    # checks /controller_epoch's znode version in the same multi-op, so from 2.1 no deposed controller can write.
    # Before (2.0.0 updateLeaderAndIsr(leaderAndIsrs, controllerEpoch)) only the state znode's own version is checked.
    assert R.decide("zk.controller.stale_epoch_write", (2, 0, 1)) == "zombie"
    assert R.decide("zk.controller.stale_epoch_write", (2, 1, 0)) == "new_data"
    # Yehor (3.9.0): controller 2 epoch 2 was elected on 2024-11-29 (controller.log.2024-11-29-11.gz line 146); on
    # 2024-12-02 "[Controller id=0 epoch=1] Partition months-0 state changed to (...)" (state-change.log.2024-12-02-17.gz
    # line 17) is a write under epoch 1: new ZooKeeper data. Its own lines then are one history: controller 2, elected
    # again with epoch 2 at 18:00:33.076, failed to elect __consumer_offsets-21 (state-change.log.gz line 848) and
    # removed replica 1 from its ISR, "(Leader:-1,ISR:1,...,LeaderEpoch:1,ZkVersion:1,ControllerEpoch:2)" (line 2070):
    # judged now (it was "history restarted" against the previous data's version 1) and agreed.
    res = load("YehorYehorychev__Kafka")
    assert any(f["kind"] == "controller_epoch_not_increasing" and f["epoch"] == 1 and f["previous_epoch"] == 2
               for f in res.to_json()["findings"]), "the new data is reported"
    c = _comparison(res, "state-change.log.gz:2070")
    assert c.verdict == "agreed" and c.replayed == {"leader": -1, "isr": [1], "leader_epoch": 1}, c


def test_the_first_lines_of_new_data_are_kept_when_a_write_proves_it_new():
    # Eniyanilavan (2.2.1): controller 0 epoch 6 was known (controller.log.2019-07-07-23.gz line 2); on 2019-07-16
    # "[Controller id=0 epoch=1] Changed partition python-0 state from NonExistentPartition to NewPartition with
    # assigned replicas 1" (state-change.log.2019-07-16-13.gz line 1, in memory: a zombie could log it) and then its
    # write "from NewPartition to OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1),
    # zkVersion=0)" (line 3), which proves the data new: the assignment the first line gave belongs to the new data
    # and the creation is judged (PartitionStateMachine NewPartition -> OnlinePartition: first live assigned replica).
    res = load("Eniyanilavan__Kafka")
    c = _comparison(res, "state-change.log.2019-07-16-13.gz:3")
    assert c.verdict == "agreed" and c.replayed == {"leader": 1, "isr": [1], "leader_epoch": 0}, c


def test_failed_elections_judged_on_the_isr_the_controller_sent_in_update_metadata():
    # JacksonFarley (2.3.0): controller 1 epoch 5 sent "UpdateMetadata request PartitionState(controllerEpoch=5, leader=-1,
    # leaderEpoch=1, isr=[0], zkVersion=1, replicas=[0], offlineReplicas=[0]) ... for partition __consumer_offsets-22"
    # (state-change.log.2019-12-04-22.gz line 137, the controller's context) and then failed to elect it out of
    # OfflinePartition (line 195) with only broker 1 alive ("Currently active brokers in the cluster: Set(1)",
    # controller.log.2019-12-04-22.gz line 10). 2.3.0 PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection:
    # no live replica of [0] in the ISR, unclean disabled by default: no leader. These 52 records were uncompared ("ISR
    # unknown") and now agree.
    res = load("JacksonFarley__Kafka-Data-Centric-Project")
    c = _comparison(res, "state-change.log.2019-12-04-22.gz:195")
    assert c.agreed and c.recorded.get("failed") and c.replayed == {"leader": -1, "failed": True}, c
    failed = [c for c in res.comparisons if c.recorded.get("failed") and c.verdict != "unknown"]
    assert len(failed) >= 52 and all(c.agreed for c in failed)


def test_a_partition_whose_isr_no_line_ever_stated_is_an_evidence_gap_not_a_miss():
    # AndreasTraut (2.8.0): the evidence begins at 16:12 with controller 0 already at epoch 4; its first partition write,
    # "Partition second-0 state changed to (Leader:0,ISR:0,LeaderEpoch:1,ControllerEpoch:4) after removing replica 1
    # from the ISR" (state-change.log.2021-04-26-16.gz line 6), was decided on an ISR set before any line of the
    # evidence: an evidence gap (off the denominator, listed as such), not an uncompared decision.
    from replay_engine.common.judge import UNSEEN
    res = load("AndreasTraut__kafka_2.13-2.8.0")
    c = _comparison(res, "state-change.log.2021-04-26-16.gz:6")
    assert c.verdict == "unknown" and c.reason == UNSEEN
    # every such record is counted a hole (the lines read since, e.g. a failover's OfflineReplica writes, make them fewer)
    assert res.agreement()["evidence_gaps"] >= sum(1 for o in res.comparisons if o.reason == UNSEEN) > 0
    # A partition the evidence described is never one, unless new ZooKeeper data (a controller epoch going back) began
    # since: every UNSEEN record's partition had no judged record before it in its current history.
    restarts = sorted(f["ts"] for f in res.image.findings if f["kind"] == "controller_epoch_not_increasing")
    for c in res.comparisons:
        if c.reason == UNSEEN:
            last = max((o.ts for o in res.comparisons if o.tp == c.tp and o.ts < c.ts and o.verdict != "unknown"),
                       default=None)
            assert last is None or any(last < r <= c.ts for r in restarts), c


def test_a_creation_line_naming_only_the_leader_gives_the_isr_kafka_wrote_with_it():
    # Aminoid (0.10.0): "changed partition [twitterstream,0] from NewPartition to OnlinePartition with leader 0"
    # (state-change.log.2017-01-18-23.gz line 13) names the leader only; 0.10.0.0 PartitionStateMachine
    # .initializeLeaderAndIsrForPartition writes LeaderAndIsr(liveAssignedReplicas.head, liveAssignedReplicas) at epoch
    # 0, so the ISR was [0]. The later offline election "Selected new leader and ISR {"leader":0,"leader_epoch":1,
    # "isr":[0]}" (controller.log.2017-01-19-08.gz line 45) is judged on it (it was "ISR unknown"), and agrees.
    res = load("Aminoid__basic-sentiment-analysis")
    c = _comparison(res, "controller.log.2017-01-19-08.gz:45")
    assert c.verdict == "agreed" and c.replayed == {"leader": 0, "isr": [0], "leader_epoch": 1}, c


def test_a_partition_history_restarted_in_a_hole_is_a_reported_evidence_gap():
    # Eniyanilavan (2.2.1): dcode_fileParse_XD-0 was at leader epoch 3 under controller epoch 2 (UpdateMetadata at
    # 09:29:21.411, state-change.log.2019-07-05-08.gz line 38); no file holds a line from 09:29:23 to 10:04:27 and no
    # state-change line until "[Controller id=0 epoch=3] Changed partition dcode_fileParse_XD-0 from OnlinePartition to
    # OnlinePartition with state LeaderAndIsr(leader=0, leaderEpoch=1, isr=List(0), zkVersion=1)" at 11:55:59.098
    # (state-change.log.2019-07-05-09.gz line 1): the topic was recreated in that hole (epoch 1 < 3). The decision rests
    # on the new topic's state, which no line shows: an evidence gap, and a finding names the restart.
    from replay_engine.common.judge import NEW_HISTORY
    res = load("Eniyanilavan__Kafka")
    c = _comparison(res, "state-change.log.2019-07-05-09.gz:1")
    assert c.reason == NEW_HISTORY and NEW_HISTORY.startswith("evidence gap")
    assert any(f["kind"] == "partition_history_restarted" and f["topic"] == "dcode_fileParse_XD" and f["partition"] == 0
               and "leader epoch 1 after 3" in f["text"] for f in res.to_json()["findings"])
