"""Broker-side partition templates (ISR changes, become leader/follower, LeaderAndIsr
requests, stale controllers), per version."""
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source


def parse(text: str, path: str = "server.log"):
    events, summary = parse_source(text.encode(), SourceContext(path=path))
    assert summary.balanced()
    assert summary.unrecognized == 0, summary.samples
    return events


def one(text: str, path: str = "server.log"):
    events = parse(text, path)
    assert len(events) == 1, events
    return events[0]


def test_isr_shrink_010_011_1x_22():
    ev = one("[2016-12-18 15:15:55,046] INFO Partition [topicold,24] on broker 1: Shrinking ISR for partition "
             "[topicold,24] from 1,0,2 to 1 (kafka.cluster.Partition)")
    assert (ev.event_type, ev.topic, ev.partition, ev.broker_id, ev.isr) == ("isr_shrink", "topicold", 24, 1, [1])
    assert ev.detail["old_isr"] == [1, 0, 2]
    ev = one("[2018-04-28 21:59:00,000] INFO Partition [__Samples,16] on broker 2: Shrinking ISR from 2,1 to 2 "
             "(kafka.cluster.Partition)")
    assert (ev.topic, ev.partition, ev.broker_id, ev.isr) == ("__Samples", 16, 2, [2])
    ev = one("[2021-03-16 11:30:00,000] INFO [Partition my-kafka-topic-2 broker=1] Shrinking ISR from 1,2 to 1 "
             "(kafka.cluster.Partition)")
    assert (ev.topic, ev.partition, ev.broker_id, ev.isr) == ("my-kafka-topic", 2, 1, [1])
    ev = one("[2021-11-12 23:01:23,628] INFO [Partition test-topic-replicated-1 broker=1] Shrinking ISR from 1,2,0 to "
             "1,2. Leader: (highWatermark: 1, endOffset: 2). Out of sync replicas: (brokerId: 0, endOffset: 1). "
             "(kafka.cluster.Partition)")
    assert (ev.isr, ev.detail["old_isr"], ev.detail["out_of_sync"]) == ([1, 2], [1, 2, 0], [0])
    assert (ev.detail["high_watermark"], ev.detail["leader_end_offset"], ev.detail["out_of_sync_end_offsets"]) == (
        1, 2, {"0": 1})


def test_isr_expand_0102_prints_the_new_topic_partition_form():
    ev = one("[2021-04-28 16:45:00,000] INFO Partition [dns_kafka_topic,2] on broker 1: Expanding ISR for partition "
             "dns_kafka_topic-2 from 1 to 1,2 (kafka.cluster.Partition)")
    assert (ev.event_type, ev.topic, ev.partition, ev.isr, ev.detail["old_isr"]) == (
        "isr_expand", "dns_kafka_topic", 2, [1, 2], [1])


def test_isr_updated_24_28_36():
    ev = one("[2020-04-12 15:44:00,000] INFO [Partition library-events-1 broker=0] ISR updated to [0,2,1] and zkVersion "
             "updated to [2] (kafka.cluster.Partition)")
    assert (ev.event_type, ev.isr, ev.zk_version, ev.broker_id) == ("isr_updated", [0, 2, 1], 2, 0)
    ev = one("[2021-11-12 23:01:23,700] INFO [Partition t-1 broker=1] ISR updated to 1,2 and version updated to [3] "
             "(kafka.cluster.Partition)")
    assert (ev.isr, ev.zk_version) == ([1, 2], 3)
    ev = one("[2025-02-11 11:00:00,000] INFO [Partition test-topic-1 broker=1] ISR updated to 1,2  and version updated "
             "to 111 (kafka.cluster.Partition)")
    assert (ev.isr, ev.zk_version, ev.detail.get("under_min_isr")) == ([1, 2], 111, None)
    ev = one("[2025-02-11 11:00:00,000] INFO [Partition t-0 broker=3] ISR updated to 3 (under-min-isr) and version "
             "updated to 9 (kafka.cluster.Partition)")
    assert (ev.isr, ev.zk_version, ev.detail["under_min_isr"]) == ([3], 9, True)


def test_become_leader_011_1x_24():
    ev = one("[2017-11-26 15:00:00,000] INFO Partition [__consumer_offsets,0] on broker 0: __consumer_offsets-0 starts "
             "at Leader Epoch 1 from offset 0. Previous Leader Epoch was: -1 (kafka.cluster.Partition)")
    assert (ev.event_type, ev.topic, ev.partition, ev.broker_id, ev.leader, ev.leader_epoch) == (
        "become_leader", "__consumer_offsets", 0, 0, 0, 1)
    assert ev.detail["previous_leader_epoch"] == -1 and ev.detail["offset"] == 0
    ev = one("[2019-06-05 20:00:00,000] INFO [Partition my-replicated-topic-0 broker=2] my-replicated-topic-0 starts "
             "at Leader Epoch 5 from offset 2. Previous Leader Epoch was: 4 (kafka.cluster.Partition)")
    assert (ev.topic, ev.leader, ev.leader_epoch, ev.detail["offset"], ev.detail["previous_leader_epoch"]) == (
        "my-replicated-topic", 2, 5, 2, 4)
    ev = one("[2025-12-04 22:00:00,000] INFO [Partition first-topic-1 broker=2] first-topic-1 starts at leader epoch 1 "
             "from offset 7 with high watermark 7. Previous leader epoch was 0. (kafka.cluster.Partition)")
    assert (ev.leader_epoch, ev.detail["high_watermark"]) == (1, 7)


def test_become_leader_26_25dev_33_36():
    ev = one("[2021-04-26 16:12:43,000] INFO [Broker id=0] Leader second-0 starts at leader epoch 0 from offset 0 with "
             "high watermark 0 ISR [0,1] addingReplicas [] removingReplicas []. Previous leader epoch was -1. "
             "(state.change.logger)", "state-change.log")
    assert (ev.event_type, ev.topic, ev.partition, ev.leader, ev.isr, ev.leader_epoch) == (
        "become_leader", "second", 0, 0, [0, 1], 0)
    ev = one("[2020-03-26 11:38:33,078] INFO [Broker id=0] Leader test-1 starts at leader epoch 1 from offset 0 with "
             "high watermark 0 ISR 0 addingReplicas  removingReplicas .Previous leader epoch was 0. (state.change.logger)",
             "state-change.log")
    assert (ev.topic, ev.partition, ev.isr, ev.leader_epoch, ev.detail["previous_leader_epoch"]) == ("test", 1, [0], 1, 0)
    ev = one("[2025-05-14 23:24:17,547] INFO [Broker id=10] Leader test-sasl-topic-0 with topic id Some("
             "GOIdTokRTt2yMNJFmzS22w) starts at leader epoch 3 from offset 5 with partition epoch 4, high watermark 5, "
             "ISR [10,2], adding replicas [] and removing replicas [] . Previous leader None and previous leader epoch "
             "was -1. (state.change.logger)", "state-change.log")
    assert (ev.topic, ev.leader, ev.isr, ev.leader_epoch, ev.zk_version) == ("test-sasl-topic", 10, [10, 2], 3, 4)
    assert ev.detail["topic_id"] == "GOIdTokRTt2yMNJFmzS22w"
    ev = one("[2025-01-01 00:00:00,000] INFO [Broker id=1] Leader t-0 with topic id Some(X) starts at leader epoch 9 "
             "from offset 1 with partition epoch 12, high watermark 1, ISR [1], adding replicas [] and removing replicas "
             "[] (under-min-isr). Previous leader Some(2) and previous leader epoch was 8. (state.change.logger)",
             "state-change.log")
    assert (ev.leader_epoch, ev.zk_version, ev.detail["under_min_isr"]) == (9, 12, True)


def test_become_follower_26_and_33_with_current_leader():
    ev = one("[2021-04-26 16:13:00,000] INFO [Broker id=1] Follower first-0 starts at leader epoch 2 from offset 0 with "
             "high watermark 0. Previous leader epoch was -1. (state.change.logger)", "state-change.log")
    assert (ev.event_type, ev.topic, ev.broker_id, ev.leader_epoch, ev.leader) == ("become_follower", "first", 1, 2, None)
    ev = one("[2025-02-06 11:00:00,000] INFO [Broker id=3] Follower kraft-test-2 starts at leader epoch 1 from offset 0 "
             "with partition epoch 2 and high watermark 0. Current leader is 1. Previous leader Some(1) and previous "
             "leader epoch was 1. (state.change.logger)", "state-change.log")
    assert (ev.topic, ev.partition, ev.leader, ev.leader_epoch, ev.zk_version) == ("kraft-test", 2, 1, 1, 2)


def test_become_follower_fetcher_trace_09_2x_24():
    ev = one("[2017-10-06 21:01:20,495] TRACE Broker 0 started fetcher to new leader as part of become-follower request "
             "from controller 2 epoch 4 with correlation id 5 for partition [Multiplerbrokerapplication,0] "
             "(state.change.logger)", "state-change.log")
    assert (ev.event_type, ev.broker_id, ev.topic, ev.controller_id, ev.controller_epoch, ev.leader) == (
        "become_follower", 0, "Multiplerbrokerapplication", 2, 4, None)
    ev = one("[2019-06-05 19:57:28,773] TRACE [Broker id=0] Started fetcher to new leader as part of become-follower "
             "request from controller 0 epoch 1 with correlation id 14 for partition my-replicated-topic-0 with leader 1 "
             "(state.change.logger)", "state-change.log")
    assert (ev.leader, ev.detail["correlation_id"]) == (1, 14)
    ev = one("[2020-04-12 15:43:57,953] TRACE [Broker id=0] Started fetcher to new leader as part of become-follower "
             "request from controller 0 epoch 6 with correlation id 5 for partition library-events-0 with leader "
             "BrokerEndPoint(id=1, host=IN-LT71176.corp.epsilon.com:9093) (state.change.logger)", "state-change.log")
    assert (ev.topic, ev.partition, ev.leader) == ("library-events", 0, 1)


def test_leader_and_isr_received_08_0102_1x_24():
    ev = one("[2017-10-06 21:01:20,492] TRACE Broker 0 received LeaderAndIsr request (LeaderAndIsrInfo:(Leader:2,ISR:2,"
             "1,0,LeaderEpoch:0,ControllerEpoch:4),ReplicationFactor:3),AllReplicas:2,1,0) correlation id 5 from "
             "controller 2 epoch 4 for partition [Multiplerbrokerapplication,0] (state.change.logger)", "state-change.log")
    assert (ev.event_type, ev.broker_id, ev.topic, ev.partition) == ("leader_and_isr_received", 0, "Multiplerbrokerapplication", 0)
    assert (ev.leader, ev.isr, ev.leader_epoch, ev.replicas, ev.controller_id, ev.controller_epoch) == (
        2, [2, 1, 0], 0, [2, 1, 0], 2, 4)
    ev = one("[2020-10-08 16:51:26,500] TRACE Broker 0 received LeaderAndIsr request PartitionState(controllerEpoch=1, "
             "leader=0, leaderEpoch=3, isr=[0, 1], zkVersion=4, replicas=[0, 1]) correlation id 1 from controller 0 "
             "epoch 2 for partition [netflow_kafka_topic,0] (state.change.logger)", "state-change.log")
    assert (ev.leader, ev.isr, ev.leader_epoch, ev.zk_version, ev.replicas, ev.controller_epoch) == (0, [0, 1], 3, 4, [0, 1], 2)
    assert ev.detail["state_controller_epoch"] == 1
    ev = one("[2019-06-05 19:57:28,700] TRACE [Broker id=2] Received LeaderAndIsr request PartitionState(controllerEpoch"
             "=1, leader=0, leaderEpoch=1, isr=0,2, zkVersion=1, replicas=1,0,2, isNew=false) correlation id 14 from "
             "controller 0 epoch 1 for partition my-replicated-topic-0 (state.change.logger)", "state-change.log")
    assert (ev.broker_id, ev.isr, ev.replicas, ev.zk_version) == (2, [0, 2], [1, 0, 2], 1)
    ev = one("[2020-04-11 21:00:00,000] TRACE [Broker id=0] Received LeaderAndIsr request LeaderAndIsrPartitionState("
             "topicName='test-topic', partitionIndex=1, controllerEpoch=1, leader=0, leaderEpoch=0, isr=[0], zkVersion=0, "
             "replicas=[0], addingReplicas=[], removingReplicas=[], isNew=true) correlation id 1 from controller 0 epoch 1 "
             "(state.change.logger)", "state-change.log")
    assert (ev.topic, ev.partition, ev.leader, ev.isr) == ("test-topic", 1, 0, [0])


def test_leader_epoch_ignores_are_not_stale_controllers():
    # the request's leader epoch, the broker's own: the partition's epoch stated (tests/test_same_epoch_ignored.py)
    ev = one("[2021-04-26 18:00:00,000] INFO [Broker id=0] Ignoring LeaderAndIsr request from controller 0 with "
             "correlation id 1 epoch 3 for partition erstesTopic-0 since its associated leader epoch 0 matches the "
             "current leader epoch (state.change.logger)", "state-change.log")
    assert (ev.event_type, ev.leader_epoch, ev.detail["sender_epoch"]) == ("leader_and_isr_received", 0, 3)


def test_stale_controller_requests():
    ev = one("[2019-01-01 00:00:00,000] WARN [Broker id=1] Ignoring LeaderAndIsr request from controller 2 with "
             "correlation id 7 since its controller epoch 5 is old. Latest known controller epoch is 6 "
             "(state.change.logger)", "state-change.log")
    assert (ev.event_type, ev.broker_id, ev.controller_id, ev.controller_epoch) == ("stale_controller_request", 1, 2, 5)
    assert ev.detail == {"latest_epoch": 6, "request": "LeaderAndIsr", "correlation_id": 7,
                         "template": "replica.stale_controller"}
    ev = one("[2017-01-01 00:00:00,000] WARN Broker 3 ignoring LeaderAndIsr request from controller 1 with correlation "
             "id 2 since its controller epoch 4 is old. Latest known controller epoch is 9 (state.change.logger)",
             "state-change.log")
    assert (ev.broker_id, ev.controller_id, ev.controller_epoch, ev.detail["latest_epoch"]) == (3, 1, 4, 9)
    ev = one("[2019-01-01 00:00:00,000] WARN Received update metadata request with correlation id 9 from an old "
             "controller 2 with epoch 5. Latest known controller epoch is 6 (state.change.logger)", "state-change.log")
    assert (ev.controller_id, ev.controller_epoch, ev.detail["request"]) == (2, 5, "UpdateMetadata")
    ev = one("[2018-01-01 00:00:00,000] WARN Received stop replica request from an old controller epoch 5. Latest "
             "known controller epoch is 6 (state.change.logger)", "state-change.log")
    assert (ev.controller_id, ev.controller_epoch, ev.detail["request"]) == (None, 5, "StopReplica")


def test_follower_with_unavailable_leader_0102_28():
    # ReplicaManager.makeFollowers (0.10.2.0 / 2.8.0 core/src/main/scala/kafka/server/ReplicaManager.scala): the
    # controller sent a leader the broker does not hold alive; -1 is the controller saying there is no leader.
    # AndreasTraut__kafka_2.13-2.8.0/logs/state-change.log.2021-04-28-16.gz line 802
    ev = one("[2021-04-28 11:31:58,153] ERROR [Broker id=0] Received LeaderAndIsrRequest with correlation id 1 from "
             "controller 0 epoch 7 for partition __consumer_offsets-18 (last update controller epoch 6) but cannot "
             "become follower since the new leader -1 is unavailable. (state.change.logger)", "state-change.log")
    assert (ev.event_type, ev.broker_id, ev.topic, ev.partition, ev.leader) == (
        "leader_and_isr_received", 0, "__consumer_offsets", 18, -1)
    assert (ev.controller_id, ev.controller_epoch, ev.detail["state_controller_epoch"]) == (0, 7, 6)
    # andreinedelciu__kafka-brokers-public/logs/state-change.log.gz line 3022 (0.10.2)
    ev = one("[2021-04-28 16:41:34,286] ERROR Broker 1 received LeaderAndIsrRequest with correlation id 1 from "
             "controller 1 epoch 56 for partition dns_kafka_topic-2 but cannot become follower since the new leader "
             "1010 is unavailable. (state.change.logger)", "state-change.log")
    assert (ev.broker_id, ev.topic, ev.partition, ev.leader, ev.controller_epoch) == (1, "dns_kafka_topic", 2, 1010, 56)
