"""Controller-side state-change templates, per Kafka version (expectations derived by hand
from the line text and kafka-log-formats.md sections 3-5)."""
import time

from parsers.common.context import SourceContext
from parsers.dispatch import parse_source


def parse(text: str, path: str = "state-change.log"):
    events, summary = parse_source(text.encode(), SourceContext(path=path))
    assert summary.balanced()
    return events, summary


def one(text: str, path: str = "state-change.log"):
    events, summary = parse(text, path)
    assert summary.unrecognized == 0, summary.samples
    assert len(events) == 1, events
    return events[0]


def test_010_changed_partition_with_leader():
    ev = one("[2017-01-20 16:24:47,045] TRACE Controller 0 epoch 12 changed partition [twitterStream,0] from "
             "OfflinePartition to OnlinePartition with leader 0 (state.change.logger)")
    assert (ev.event_type, ev.topic, ev.partition) == ("partition_state_change", "twitterStream", 0)
    assert (ev.from_state, ev.to_state, ev.leader) == ("OfflinePartition", "OnlinePartition", 0)
    assert (ev.controller_id, ev.controller_epoch, ev.broker_id) == (0, 12, 0)
    assert ev.isr is None and ev.leader_epoch is None


def test_010_new_partition_with_assigned_replicas_and_topic_with_dash_and_comma_free_name():
    ev = one("[2016-09-14 03:47:02,290] TRACE Controller 3 epoch 7 changed partition [ad-events-2,4] state from "
             "NonExistentPartition to NewPartition with assigned replicas 3,1,2 (state.change.logger)")
    assert (ev.topic, ev.partition, ev.replicas) == ("ad-events-2", 4, [3, 1, 2])
    assert (ev.from_state, ev.to_state) == ("NonExistentPartition", "NewPartition")


def test_1x_leader_and_isr_and_dash_topic_split_at_last_dash():
    ev = one("[2018-07-18 17:54:27,790] TRACE [Controller id=0 epoch=4] Changed partition my-replicated-topic-0 from "
             "OnlinePartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=2, isr=List(2), "
             "zkVersion=6) (state.change.logger)")
    assert (ev.topic, ev.partition) == ("my-replicated-topic", 0)
    assert (ev.leader, ev.leader_epoch, ev.isr, ev.zk_version) == (2, 2, [2], 6)
    assert (ev.controller_id, ev.controller_epoch) == (0, 4)


def test_32_leader_recovery_state_with_zk_version():
    ev = one("[2022-05-01 10:00:00,000] INFO [Controller id=1 epoch=3] Changed partition t-1 from OfflinePartition to "
             "OnlinePartition with state LeaderAndIsr(leader=3, leaderEpoch=8, isr=List(3), "
             "leaderRecoveryState=RECOVERING, zkVersion=11) (state.change.logger)")
    assert (ev.leader, ev.leader_epoch, ev.isr, ev.zk_version) == (3, 8, [3], 11)
    assert ev.detail["leader_recovery_state"] == "RECOVERING"


def test_33_partition_epoch():
    ev = one("[2023-06-12 09:58:10,276] INFO [Controller id=0 epoch=1] Changed partition cars-4 from NewPartition to "
             "OnlinePartition with state LeaderAndIsr(leader=0, leaderEpoch=0, isr=List(0, 2), "
             "leaderRecoveryState=RECOVERED, partitionEpoch=5) (state.change.logger)")
    assert (ev.leader, ev.isr, ev.zk_version) == (0, [0, 2], 5)


def test_35_isr_with_broker_epoch_scala_and_40_java_list():
    scala = one("[2024-07-18 18:10:45,483] INFO [Controller id=0 epoch=1] Changed partition demo_topic-0 from "
                "NewPartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=4, isrWithBrokerEpoch="
                "List(BrokerState(brokerId=2, brokerEpoch=-1), BrokerState(brokerId=0, brokerEpoch=-1)), "
                "leaderRecoveryState=RECOVERED, partitionEpoch=9) (state.change.logger)")
    assert (scala.topic, scala.leader, scala.leader_epoch, scala.isr, scala.zk_version) == ("demo_topic", 2, 4, [2, 0], 9)
    java = one("[2025-01-01 00:00:00,000] INFO [Controller id=0 epoch=1] Changed partition t-0 from OfflinePartition "
               "to OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=3, isrWithBrokerEpoch=[BrokerState("
               "brokerId=1, brokerEpoch=-1)], leaderRecoveryState=RECOVERED, partitionEpoch=4) (state.change.logger)")
    assert (java.leader, java.isr, java.zk_version) == (1, [1], 4)


def test_to_offline_has_no_leader_fields():
    ev = one("[2019-07-05 11:55:59,901] TRACE [Controller id=0 epoch=3] Changed partition c-1 state from "
             "OnlinePartition to OfflinePartition (state.change.logger)")
    assert (ev.from_state, ev.to_state, ev.leader, ev.isr) == ("OnlinePartition", "OfflinePartition", None, None)


def test_10_changed_partition_without_epoch_in_prefix():
    ev = one("[2018-04-13 22:10:15,073] TRACE [Controller id=0] Changed partition mytest2-0 state from "
             "OfflinePartition to NonExistentPartition (state.change.logger)")
    assert (ev.controller_id, ev.controller_epoch, ev.to_state) == (0, None, "NonExistentPartition")


def test_unknown_tail_variant_is_unrecognized_not_silently_other():
    events, summary = parse("[2021-01-01 00:00:00,000] INFO [Controller id=0 epoch=1] Changed partition t-0 from "
                            "NewPartition to OnlinePartition with something new (state.change.logger)")
    assert events == [] and summary.unrecognized == 1
    assert "state_change.changed_partition" in summary.samples[0].reason


def test_24_failed_election_strategy_false_means_no_live_isr():
    ev = one("[2022-02-13 04:12:42,920] ERROR [Controller id=1002 epoch=520] Controller 1002 epoch 520 failed to "
             "change state for partition ingest-metrics-0 from OfflinePartition to OnlinePartition "
             "(state.change.logger)\n"
             "kafka.common.StateChangeFailedException: Failed to elect leader for partition ingest-metrics-0 under "
             "strategy OfflinePartitionLeaderElectionStrategy(false)\n"
             "\tat kafka.controller.ZkPartitionStateMachine.doElectLeaderForPartitions(PartitionStateMachine.scala:427)\n")
    assert ev.event_type == "leader_election_failed"
    assert (ev.topic, ev.partition, ev.controller_id, ev.controller_epoch) == ("ingest-metrics", 0, 1002, 520)
    assert (ev.from_state, ev.to_state) == ("OfflinePartition", "OnlinePartition")
    assert ev.detail["strategy"] == "OfflinePartitionLeaderElectionStrategy(false)"
    assert ev.detail["reason"] == "no_live_isr"
    assert ev.detail["exception"] == "StateChangeFailedException"


def test_11_failed_election_without_strategy_argument_has_no_guessed_reason():
    ev = one("[2018-07-18 17:54:28,508] ERROR [Controller id=2 epoch=5] Controller 2 epoch 5 failed to change state "
             "for partition __consumer_offsets-22 from OfflinePartition to OnlinePartition (state.change.logger)\n"
             "kafka.common.StateChangeFailedException: Failed to elect leader for partition __consumer_offsets-22 "
             "under strategy OfflinePartitionLeaderElectionStrategy\n")
    assert ev.detail["strategy"] == "OfflinePartitionLeaderElectionStrategy"
    assert "reason" not in ev.detail  # unclean may have been enabled per topic: the line does not say


def test_011_no_broker_in_isr_alive():
    ev = one("[2017-11-25 16:58:08,601] ERROR Controller 0 epoch 2 initiated state change for partition "
             "[__consumer_offsets,19] from OfflinePartition to OnlinePartition failed (state.change.logger)\n"
             "kafka.common.NoReplicaOnlineException: No broker in ISR for partition [__consumer_offsets,19] is alive. "
             "Live brokers are: [Set(2, 3)], ISR brokers are: [0]\n")
    assert ev.event_type == "leader_election_failed"
    assert (ev.topic, ev.partition, ev.controller_id, ev.controller_epoch) == ("__consumer_offsets", 19, 0, 2)
    assert ev.detail["reason"] == "no_live_isr"
    assert ev.detail["live_brokers"] == [2, 3] and ev.detail["isr"] == [0]


def test_010_no_replica_alive_lists_assigned_replicas():
    ev = one("[2017-01-19 08:34:25,888] ERROR Controller 0 epoch 3 initiated state change for partition "
             "[twitterstream,0] from OfflinePartition to OnlinePartition failed (state.change.logger)\n"
             "kafka.common.NoReplicaOnlineException: No replica for partition [twitterstream,0] is alive. Live "
             "brokers are: [Set()], Assigned replicas are: [List(0, 1)]\n")
    assert ev.detail["reason"] == "no_live_replica"
    assert ev.detail["live_brokers"] == [] and ev.detail["assigned"] == [0, 1]


def test_10_initiated_failed_controlled_shutdown_cause():
    ev = one("[2021-03-16 13:28:18,965] ERROR [Controller id=1 epoch=1] Initiated state change for partition "
             "my-kafka-topic-2 from OnlinePartition to OnlinePartition failed (state.change.logger)\n"
             "kafka.common.StateChangeFailedException: [Controller id=1 epoch=1] Encountered error while electing "
             "leader for partition my-kafka-topic-2 due to: No other replicas in ISR 1 for my-kafka-topic-2 besides "
             "shutting down brokers 1\n")
    assert (ev.event_type, ev.topic, ev.partition) == ("leader_election_failed", "my-kafka-topic", 2)
    assert ev.detail["reason"] == "other"
    assert ev.detail["isr"] == [1] and ev.detail["shutting_down_brokers"] == [1]


def test_refused_transition_is_marked_failed_not_an_election():
    ev = one("[2019-07-05 11:57:04,661] ERROR [Controller id=0 epoch=3] Controller 0 epoch 3 failed to change state "
             "for partition t-1 from OfflinePartition to NonExistentPartition (state.change.logger)\n"
             "java.lang.IllegalStateException: Partition t-1 should be in one of OfflinePartition states\n")
    assert ev.event_type == "partition_state_change"
    assert ev.detail["failed"] is True and ev.detail["exception"] == "IllegalStateException"


def test_replica_state_change_010_and_2x():
    old = one("[2017-01-18 23:37:31,818] TRACE Controller 0 epoch 2 changed state of replica 1 for partition "
              "[twitterstream,0] from NonExistentReplica to NewReplica (state.change.logger)")
    assert (old.event_type, old.subject_broker, old.topic, old.partition) == ("replica_state_change", 1, "twitterstream", 0)
    assert (old.from_state, old.to_state, old.controller_id, old.controller_epoch) == ("NonExistentReplica", "NewReplica", 0, 2)
    new = one("[2019-06-05 23:28:41,420] TRACE [Controller id=0 epoch=1] Changed state of replica 2 for partition "
              "my-replicated-topic-0 from OnlineReplica to OfflineReplica (state.change.logger)")
    assert (new.subject_broker, new.topic, new.partition, new.to_state) == (2, "my-replicated-topic", 0, "OfflineReplica")


def test_26_leader_minus_one_after_removing_replica_and_32_form():
    ev = one("[2021-04-26 16:12:42,730] INFO [Controller id=0 epoch=4] Partition second-1 state changed to "
             "(Leader:-1,ISR:0,LeaderEpoch:1,ControllerEpoch:4) after removing replica 1 from the ISR as part of "
             "transition to OfflineReplica (state.change.logger)")
    assert ev.event_type == "partition_leader_isr_written"
    assert (ev.topic, ev.partition, ev.leader, ev.isr, ev.leader_epoch, ev.controller_epoch) == ("second", 1, -1, [0], 1, 4)
    assert ev.zk_version is None
    assert ev.detail["removed_replica"] == 1 and ev.detail["reason"] == "offline_replica"
    ev32 = one("[2022-06-01 00:00:00,000] INFO [Controller id=2 epoch=9] Partition t-3 state changed to (Leader:-1,"
               "ISR:,LeaderRecoveryState:RECOVERED,LeaderEpoch:7,ZkVersion:12,ControllerEpoch:9) after removing "
               "replica 2 from the ISR as part of transition to OfflineReplica (state.change.logger)")
    assert (ev32.leader, ev32.isr, ev32.leader_epoch, ev32.zk_version) == (-1, [], 7, 12)


def test_010_new_leader_and_isr_json_in_controller_log():
    ev = one("[2018-04-13 21:43:03,697] INFO [Controller id=0] New leader and ISR for partition mytest2-0 is "
             '{"leader":-1,"leader_epoch":1,"isr":[0]} (kafka.controller.KafkaController)', "controller.log")
    assert (ev.event_type, ev.topic, ev.partition, ev.leader, ev.isr, ev.leader_epoch) == (
        "partition_leader_isr_written", "mytest2", 0, -1, [0], 1)


def test_offline_selector_selected_and_unclean():
    sel = one('[2017-12-02 02:47:36,352] INFO [OfflinePartitionLeaderSelector]: Selected new leader and ISR '
              '{"leader":1,"leader_epoch":1,"isr":[1]} for offline partition [LIVETOPICOLD,0] '
              "(kafka.controller.OfflinePartitionLeaderSelector)", "controller.log")
    assert (sel.event_type, sel.topic, sel.leader, sel.isr, sel.leader_epoch) == (
        "partition_leader_isr_written", "LIVETOPICOLD", 1, [1], 1)
    assert sel.detail["reason"] == "election"
    unclean = one("[2021-04-28 16:41:34,236] WARN [OfflinePartitionLeaderSelector]: No broker in ISR is alive for "
                  "[dns_kafka_topic,1]. Elect leader 1 from live brokers 1,2. There's potential data loss. "
                  "(kafka.controller.OfflinePartitionLeaderSelector)", "controller.log")
    assert (unclean.event_type, unclean.topic, unclean.partition, unclean.leader) == (
        "unclean_leader_election", "dns_kafka_topic", 1, 1)
    assert unclean.detail["live_brokers"] == [1, 2]


def test_selector_debug_line_is_routine():
    events, summary = parse("[2017-01-19 08:34:25,700] DEBUG [OfflinePartitionLeaderSelector]: No broker in ISR is "
                            "alive for [t,0]. Pick the leader from the alive assigned replicas: "
                            "(kafka.controller.OfflinePartitionLeaderSelector)", "controller.log")
    assert events == [] and summary.other == 1


def test_psm_startup_dump_010_and_2x_one_event_per_partition():
    events, _ = parse("[2017-01-19 08:34:25,909] INFO [Partition state machine on Controller 0]: Started partition "
                      "state machine with initial state -> Map([twitterstream,0] -> OfflinePartition, [a-b,3] -> "
                      "OnlinePartition) (kafka.controller.PartitionStateMachine)", "controller.log")
    assert [(e.event_type, e.topic, e.partition, e.to_state, e.controller_id) for e in events] == [
        ("partition_state_observed", "twitterstream", 0, "OfflinePartition", 0),
        ("partition_state_observed", "a-b", 3, "OnlinePartition", 0),
    ]
    assert all(e.detail["via"] == "controller_startup" and "dump_incomplete" not in e.detail for e in events)
    assert events[1].raw == ("[2017-01-19 08:34:25,909] INFO [Partition state machine on Controller 0]: Started "
                             "partition state machine with initial state -> ... a-b-3 -> OnlinePartition ...")
    events, _ = parse("[2021-04-26 16:12:41,900] DEBUG [PartitionStateMachine controllerId=100] Started partition "
                      "state machine with initial state -> HashMap(second-0 -> OnlinePartition, first-1 -> "
                      "NewPartition) (kafka.controller.ZkPartitionStateMachine)", "controller.log")
    assert [(e.topic, e.partition, e.to_state, e.controller_id) for e in events] == [
        ("second", 0, "OnlinePartition", 100), ("first", 1, "NewPartition", 100)]


def test_psm_empty_dump_is_routine_and_cut_dump_is_flagged():
    events, summary = parse("[2017-01-18 23:11:53,200] INFO [Partition state machine on Controller 0]: Started "
                            "partition state machine with initial state -> Map() (kafka.controller.PartitionStateMachine)")
    assert events == [] and summary.other == 1
    events, _ = parse("[2024-02-12 18:04:34,245] DEBUG [PartitionStateMachine controllerId=100] Started partition "
                      "state machine with initial state -> Map(a-0 -> OfflinePartition, b-1 -> OnlinePartition, c-")
    assert [(e.topic, e.partition) for e in events] == [("a", 0), ("b", 1)]
    assert all(e.detail["dump_incomplete"] for e in events)


def test_huge_psm_dump_is_linear():
    n = 60_000
    body = ", ".join(f"topic-{i % 97}-{i} -> OnlinePartition" for i in range(n))
    line = ("[2021-04-26 16:12:41,900] DEBUG [PartitionStateMachine controllerId=1] Started partition state machine "
            f"with initial state -> HashMap({body}) (kafka.controller.ZkPartitionStateMachine)")
    assert len(line) > 1_500_000
    t0 = time.process_time()
    events, summary = parse(line)
    took = time.process_time() - t0
    # the line is cut at 1 MB (MAX_LINE_CHARS): what was kept is read, the cut is flagged
    assert 20_000 < len(events) < n and summary.parsed == 1
    assert events[-1].detail["dump_incomplete"] is True
    assert max(len(e.raw) for e in events) < 300  # no event carries a copy of the megabyte line
    assert took < 10, took


def test_update_metadata_sent_is_the_controllers_view_of_the_partition():
    # ControllerChannelManager.sendUpdateMetadataRequests (2.3.0): stateChangeLog.trace(s"Sending UpdateMetadata request
    # $partitionState to brokers $updateMetadataRequestBrokerSet for partition $tp"). Line 137 of JacksonFarley's
    # state-change.log.2019-12-04-22.gz (2.3.0 PartitionState) and a 2.5.1 line of vishnu1368 (UpdateMetadataPartitionState).
    ev = one("[2019-12-04 22:04:27,038] TRACE [Controller id=1 epoch=5] Sending UpdateMetadata request PartitionState("
             "controllerEpoch=5, leader=-1, leaderEpoch=1, isr=[0], zkVersion=1, replicas=[0], offlineReplicas=[0]) to "
             "brokers Set(1) for partition __consumer_offsets-22 (state.change.logger)")
    assert (ev.event_type, ev.topic, ev.partition, ev.controller_id) == ("partition_state_observed", "__consumer_offsets",
                                                                        22, 1)
    assert (ev.leader, ev.isr, ev.leader_epoch, ev.zk_version, ev.replicas, ev.controller_epoch) == (-1, [0], 1, 1, [0], 5)
    assert ev.detail["via"] == "update_metadata_sent" and ev.detail["offline_replicas"] == [0]
    ev = one("[2025-12-05 00:53:12,346] TRACE [Controller id=1 epoch=4] Sending UpdateMetadata request "
             "UpdateMetadataPartitionState(topicName='__consumer_offsets', partitionIndex=49, controllerEpoch=2, leader=1, "
             "leaderEpoch=0, isr=[1], zkVersion=0, replicas=[1], offlineReplicas=[]) to brokers Set(1) for partition "
             "__consumer_offsets-49 (state.change.logger)")
    assert (ev.leader, ev.isr, ev.leader_epoch, ev.controller_epoch, ev.replicas) == (1, [1], 0, 2, [1])
    assert ev.detail["offline_replicas"] == []


def test_update_metadata_sent_during_topic_deletion_observes_no_leader():
    # LeaderAndIsr.LeaderDuringDelete = -2 (2.2.1 core/src/main/scala/kafka/api/LeaderAndIsr.scala): the marker
    # TopicDeletionManager sends for a topic being deleted, not a leader. Eniyanilavan state-change.log, 2019-07-05.
    events, summary = parse("[2019-07-05 11:57:04,660] TRACE [Controller id=0 epoch=3] Sending UpdateMetadata request "
                            "PartitionState(controllerEpoch=3, leader=-2, leaderEpoch=0, isr=[0], zkVersion=0, "
                            "replicas=[1, 0], offlineReplicas=[1, 0]) to brokers Set(0) for partition dcode_fileParse_XD-0 "
                            "(state.change.logger)")
    assert events == [] and summary.unrecognized == 0


def test_update_metadata_sent_0_8_to_0_11_is_the_controllers_view_of_the_partition():
    # ControllerChannelManager.sendRequestsToBrokers, TRACE: 0.10.2.0 "Controller %d epoch %d sending UpdateMetadata
    # request %s to brokers %s for partition %s" with LeaderIsrAndControllerEpoch.toString; 0.9.0.0 "to broker %d";
    # 0.8.2.1 "%s with correlationId %d to broker %d". so3500__volttron-kafka (0.10.2.1)
    # state-change.log.2017-09-25-18.gz line 3109, and the two older shapes with its values.
    ev = one("[2017-09-25 20:05:26,312] TRACE Controller 1 epoch 12 sending UpdateMetadata request (Leader:1,ISR:1,0,"
             "LeaderEpoch:14,ControllerEpoch:12) to brokers Set(0, 1) for partition __consumer_offsets-9 "
             "(state.change.logger)")
    assert (ev.event_type, ev.topic, ev.partition, ev.controller_id) == ("partition_state_observed",
                                                                        "__consumer_offsets", 9, 1)
    assert (ev.leader, ev.isr, ev.leader_epoch, ev.controller_epoch, ev.replicas) == (1, [1, 0], 14, 12, None)
    assert ev.detail["via"] == "update_metadata_sent"
    for tail in ("to broker 0 for partition [__consumer_offsets,9]",
                 "with correlationId 7 to broker 0 for partition [__consumer_offsets,9]"):
        ev = one("[2017-09-25 20:05:26,312] TRACE Controller 1 epoch 12 sending UpdateMetadata request (Leader:-1,ISR:,"
                 f"LeaderEpoch:14,ControllerEpoch:12) {tail} (state.change.logger)")
        assert (ev.topic, ev.partition, ev.leader, ev.isr) == ("__consumer_offsets", 9, -1, [])


def test_failed_elections_read_their_exception_once_and_each_keeps_a_detail_of_its_own(monkeypatch):
    """A controller that cannot elect writes the same exception again at each try (0.11's 166 failed elections of 83
    partitions in an hour of real_logs chase-lewis__JIE7351, "No broker in ISR for partition ... is alive"): the
    exception's text is read once (state_change.exception_cause), and every event still gets a detail and lists of
    its own, as read without remembering."""
    from conftest import REAL_LOGS
    from parsers.broker_logs.templates import state_change
    from parsers.schema import expand_runs

    path = REAL_LOGS / "chase-lewis__JIE7351/logs/state-change.log.2017-11-26-17.gz"

    def read():
        events, summary = parse_source(path.read_bytes(), SourceContext(path=path.name))
        events = expand_runs(events)
        return events, [ev.as_row() for ev in events], summary.to_json()

    remembered = state_change.exception_cause
    remembered.memo.clear()
    events, rows, summary = read()
    failed = [ev for ev in events if ev.event_type == "leader_election_failed"]
    assert len(failed) > 100 and len(remembered.memo) <= len(failed) / 2
    assert len({id(ev.detail) for ev in failed}) == len(failed)
    lists = [v for ev in failed for v in ev.detail.values() if type(v) is list]
    assert lists and len({id(v) for v in lists}) == len(lists)
    monkeypatch.setattr(state_change, "exception_cause", remembered.__wrapped__)
    assert read()[1:] == (rows, summary)
