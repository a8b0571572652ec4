"""ZooKeeper-mode controller templates (controller.log / server.log), per version."""
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source


def parse(text: str, path: str = "controller.log"):
    events, summary = parse_source(text.encode(), SourceContext(path=path))
    assert summary.balanced()
    assert summary.unrecognized == 0, summary.samples
    return events


def one(text: str, path: str = "controller.log"):
    events = parse(text, path)
    assert len(events) == 1, events
    return events[0]


def test_21_election_carries_epoch_and_epoch_zk_version():
    ev = one("[2021-04-26 16:12:41,785] INFO [Controller id=0] 0 successfully elected as the controller. Epoch "
             "incremented to 4 and epoch zk version is now 3 (kafka.controller.KafkaController)")
    assert (ev.event_type, ev.controller_id, ev.subject_broker, ev.controller_epoch) == ("controller_elected", 0, 0, 4)
    assert ev.detail["epoch_zk_version"] == 3 and ev.broker_id == 0


def test_011_to_20_election_gets_the_epoch_of_the_next_line():
    events = parse(
        "[2018-07-18 14:54:28,991] INFO [Controller id=2] 2 successfully elected as the controller "
        "(kafka.controller.KafkaController)\n"
        "[2018-07-18 14:54:28,995] INFO [Controller id=2] Reading controller epoch from ZooKeeper "
        "(kafka.controller.KafkaController)\n"
        "[2018-07-18 14:54:29,006] INFO [Controller id=2] Epoch incremented to 7 (kafka.controller.KafkaController)\n")
    assert [(e.event_type, e.source_pos) for e in events] == [("controller_elected", 1), ("controller_startup_state", 3)]
    assert events[0].controller_epoch == 7 and events[0].detail["epoch_from_line"] == 3
    assert events[1].detail["kind"] == "epoch" and events[1].controller_epoch == 7


def test_10_and_011_epoch_line_variants():
    ev = parse("[2021-03-17 22:07:17,101] INFO [Controller id=3] 3 successfully elected as the controller "
               "(kafka.controller.KafkaController)\n"
               "[2021-03-17 22:07:17,469] INFO [Controller id=3] Incremented epoch to 16 (kafka.controller.KafkaController)\n")
    assert ev[0].controller_epoch == 16
    ev = parse("[2018-04-28 23:06:18,298] INFO [Controller 1]: 1 successfully elected as the controller "
               "(kafka.controller.KafkaController)\n"
               "[2018-04-28 23:06:18,311] INFO [Controller 1]: Controller 1 incremented epoch to 1 "
               "(kafka.controller.KafkaController)\n")
    assert (ev[0].controller_id, ev[0].controller_epoch) == (1, 1)


def test_08_to_010_controller_log_epoch_line_is_the_election():
    ev = one("[2017-10-06 20:08:29,169] INFO [Controller 0]: Controller 0 incremented epoch to 1 "
             "(kafka.controller.KafkaController)")
    assert (ev.event_type, ev.controller_id, ev.subject_broker, ev.controller_epoch) == ("controller_elected", 0, 0, 1)
    assert ev.detail["via"] == "epoch_line"


def test_08_to_010_elector_line_in_server_log():
    events = parse("[2016-09-14 03:46:51,472] INFO 0 successfully elected as leader (kafka.server.ZookeeperLeaderElector)\n"
                   "[2016-09-14 03:46:51,567] INFO New leader is 0 (kafka.server.ZookeeperLeaderElector$LeaderChangeListener)\n",
                   "server.log")
    assert [(e.event_type, e.controller_id) for e in events] == [("controller_elected", 0), ("controller_observed", 0)]
    assert events[0].controller_epoch is None


def test_resigned_010_and_1x_and_moved():
    assert one("[2017-11-25 17:05:53,976] INFO [Controller 0]: Broker 0 resigned as the controller "
               "(kafka.controller.KafkaController)").event_type == "controller_resigned"
    ev = one("[2021-04-26 20:20:36,011] INFO [Controller id=5] Resigned (kafka.controller.KafkaController)")
    assert (ev.event_type, ev.controller_id, ev.subject_broker) == ("controller_resigned", 5, 5)
    moved = one("[2020-01-01 00:00:00,000] INFO [Controller id=2] Controller moved to another broker when processing "
                "BrokerChange. (kafka.controller.KafkaController)")
    assert (moved.event_type, moved.controller_id, moved.detail["event"]) == ("controller_moved", 2, "BrokerChange")


def test_lost_election_debug_lines_name_the_winner():
    ev = one("[2021-04-26 16:13:18,264] DEBUG [Controller id=1] Broker 0 has been elected as the controller, so "
             "stopping the election process. (kafka.controller.KafkaController)")
    assert (ev.event_type, ev.controller_id, ev.broker_id) == ("controller_observed", 0, 1)
    ev = one("[2019-01-01 00:00:00,000] DEBUG [Controller id=3] Broker 1 was elected as controller instead of broker 3 "
             "(kafka.controller.KafkaController)")
    assert (ev.controller_id, ev.broker_id) == (1, 3)
    ev = one("[2017-01-01 00:00:00,000] DEBUG Broker 2 was elected as leader instead of broker 0 "
             "(kafka.server.ZookeeperLeaderElector)", "server.log")
    assert (ev.event_type, ev.controller_id, ev.broker_id) == ("controller_observed", 2, None)  # 0 wrote it


def test_broker_change_08_listener_and_22_bounced():
    events = parse("[2015-09-01 09:54:30,027] INFO [BrokerChangeListener on Controller 3]: Newly added brokers: , "
                   "deleted brokers: 1, all live brokers: 0,5,2,3,4 (kafka.controller.ReplicaStateMachine$BrokerChangeListener)")
    assert [(e.event_type, e.subject_broker, e.controller_id, e.broker_id) for e in events] == [("broker_failed", 1, 3, 3)]
    assert events[0].detail["live_brokers"] == [0, 5, 2, 3, 4]
    events = parse("[2020-01-01 00:00:00,000] INFO [Controller id=1] Newly added brokers: 4, deleted brokers: 2,3, "
                   "bounced brokers: 5, all live brokers: 1,4,5 (kafka.controller.KafkaController)")
    assert [(e.event_type, e.subject_broker) for e in events] == [
        ("broker_registered", 4), ("broker_failed", 5), ("broker_registered", 5), ("broker_failed", 2), ("broker_failed", 3)]
    assert [e.source_sub for e in events] == [0, 1, 2, 3, 4]
    assert events[1].detail["bounced"] is True


def test_broker_change_without_change_and_failure_callback():
    ev = one("[2017-01-19 08:34:41,092] INFO [BrokerChangeListener on Controller 0]: Newly added brokers: , deleted "
             "brokers: , all live brokers: 0 (kafka.controller.ReplicaStateMachine$BrokerChangeListener)")
    assert (ev.event_type, ev.detail["kind"], ev.detail["brokers"]) == ("controller_startup_state", "broker_change_noop", [0])
    events = parse("[2021-03-16 12:33:44,013] INFO [Controller id=1] Broker failure callback for 2, 3 "
                   "(kafka.controller.KafkaController)")
    assert [(e.event_type, e.subject_broker, e.detail["via"]) for e in events] == [
        ("broker_failed", 2, "failure_callback"), ("broker_failed", 3, "failure_callback")]


def test_startup_view():
    events = parse(
        "[2020-11-06 01:52:00,116] INFO [Controller id=0] Initialized broker epochs cache: HashMap(0 -> 4294999970, "
        "2 -> 4294999980) (kafka.controller.KafkaController)\n"
        "[2020-11-06 01:52:00,263] INFO [Controller id=0] Currently active brokers in the cluster: Set(0, 2) "
        "(kafka.controller.KafkaController)\n"
        "[2020-11-06 01:52:00,264] INFO [Controller id=0] Currently shutting brokers in the cluster: HashSet() "
        "(kafka.controller.KafkaController)\n"
        "[2020-11-06 01:52:00,265] INFO [Controller id=0] Current list of topics in the cluster: HashSet(b, a-1) "
        "(kafka.controller.KafkaController)\n")
    kinds = [(e.detail["kind"], e.controller_id) for e in events]
    assert kinds == [("broker_epochs", 0), ("live_brokers", 0), ("shutting_down_brokers", 0), ("topics", 0)]
    assert events[0].detail["epochs"] == {"0": 4294999970, "2": 4294999980}
    assert events[1].detail["brokers"] == [0, 2] and events[2].detail["brokers"] == []
    assert events[3].detail["topics"] == ["a-1", "b"]


def test_controller_side_controlled_shutdown():
    ev = one("[2017-01-18 23:13:16,320] INFO [Controller 0]: Shutting down broker 2 (kafka.controller.KafkaController)")
    assert (ev.event_type, ev.subject_broker, ev.controller_id, ev.detail["side"]) == (
        "controlled_shutdown_requested", 2, 0, "controller")


def test_preferred_elections():
    assert parse("[2019-06-04 18:36:36,000] INFO [Controller id=0] Starting preferred replica leader election for "
                 "partitions  (kafka.controller.KafkaController)") == []
    ev = one("[2019-07-01 11:04:34,888] INFO [Controller id=0] Starting preferred replica leader election for "
             "partitions x-0,y_z-1 (kafka.controller.KafkaController)")
    assert ev.detail["partitions"] == [["x", 0], ["y_z", 1]] and ev.detail["phase"] == "started"
    ev = one("[2021-11-12 22:55:47,613] INFO [Controller id=0] Starting replica leader election (PREFERRED) for "
             "partitions management-2 triggered by AutoTriggered (kafka.controller.KafkaController)")
    assert (ev.detail["trigger"], ev.detail["election_type"], ev.detail["partitions"]) == (
        "AutoTriggered", "PREFERRED", [["management", 2]])
    ev = one("[2021-11-12 22:55:47,632] INFO [Controller id=0] Partition management-2 completed preferred replica "
             "leader election. New leader is 1 (kafka.controller.KafkaController)")
    assert (ev.topic, ev.partition, ev.leader, ev.detail["phase"]) == ("management", 2, 1, "completed")
    assert parse("[2021-04-26 16:12:46,000] INFO [Controller id=0] Processing automatic preferred replica leader "
                 "election (kafka.controller.KafkaController)") == []


def test_reassignment():
    ev = one("[2019-01-01 00:00:00,000] INFO [Controller id=1] Handling reassignment of partition t-3 to new replicas "
             "2,3 (kafka.controller.KafkaController)")
    assert (ev.event_type, ev.topic, ev.partition, ev.replicas, ev.detail["phase"]) == ("reassignment", "t", 3, [2, 3], "started")
    assert parse("[2019-06-04 18:36:36,000] INFO [Controller id=0] Removing partitions Set() from the list of "
                 "reassigned partitions in zookeeper (kafka.controller.KafkaController)") == []


def test_topics_created_010_and_28_and_deleted():
    ev = one("[2017-01-18 23:37:31,786] INFO [TopicChangeListener on Controller 0]: New topics: [Set(twitterstream)], "
             "deleted topics: [Set()], new partition replica assignment [Map([twitterstream,0] -> List(0, 1), "
             "[twitterstream,1] -> List(1, 0))] (kafka.controller.PartitionStateMachine$TopicChangeListener)")
    assert (ev.event_type, ev.topic, ev.detail["assignment"]) == ("topic_created", "twitterstream", {"0": [0, 1], "1": [1, 0]})
    ev = one("[2021-05-05 14:41:00,000] INFO [Controller id=0] New topics: [Set(__consumer_offsets)], deleted topics: "
             "[HashSet()], new partition replica assignment [Set(TopicIdReplicaAssignment(__consumer_offsets,Some(g7IvvU),"
             "HashMap(__consumer_offsets-22 -> ReplicaAssignment(replicas=1, addingReplicas=, removingReplicas=), "
             "__consumer_offsets-8 -> ReplicaAssignment(replicas=0,1, addingReplicas=, removingReplicas=))))] "
             "(kafka.controller.KafkaController)")
    assert ev.detail["assignment"] == {"22": [1], "8": [0, 1]}
    assert parse("[2019-07-05 11:00:00,000] INFO [Controller id=0] New topics: [Set()], deleted topics: [Set(x)], new "
                 "partition replica assignment [Map()] (kafka.controller.KafkaController)") == []
    ev = one("[2018-04-13 21:43:10,000] INFO [Topic Deletion Manager 0], Deletion of topic mytest2 successfully "
             "completed (kafka.controller.TopicDeletionManager)")
    assert (ev.event_type, ev.topic, ev.controller_id) == ("topic_deleted", "mytest2", 0)


def test_log_dir_failure_controller_side_and_controller_isr_update():
    ev = one("[2021-03-16 14:59:43,457] INFO [Controller id=1] Mark replicas my-kafka-topic2-0,a-1 on broker 3 as "
             "offline (state.change.logger)", "state-change.log")
    assert (ev.event_type, ev.subject_broker, ev.controller_id) == ("log_dir_failure", 3, 1)
    assert ev.detail["partitions"] == [["my-kafka-topic2", 0], ["a", 1]]
    ev = one("[2021-04-26 16:13:18,921] DEBUG [Controller id=0] ISR for partition second-0 updated to [0,1] and "
             "zkVersion updated to [2] (kafka.controller.KafkaController)")
    assert (ev.event_type, ev.topic, ev.partition, ev.isr, ev.zk_version, ev.detail["side"]) == (
        "isr_updated", "second", 0, [0, 1], 2, "controller")


def test_08_controller_session_expiry_listener():
    ev = one("[2017-12-02 02:47:36,102] INFO [SessionExpirationListener on 3], ZK expired; shut down all controller "
             "components and try to re-elect (kafka.controller.KafkaController$SessionExpirationListener)")
    assert (ev.event_type, ev.subject_broker, ev.broker_id, ev.detail["via"]) == (
        "zk_session_expired", 3, 3, "controller_listener")


def test_all_leaders_dump_0102_22_39():
    # KafkaController.doControlledShutdown (0.10.2.0 .. 3.4.0 core/src/main/scala/kafka/controller/KafkaController.scala)
    # ends with trace("All leaders = " + partitionLeadershipInfo): one observation per partition.
    # Eniyanilavan__Kafka/logs/controller.log.2019-07-05-09.gz line 76 (2.2.1; shortened to two items)
    evs = parse("[2019-07-05 11:55:59,113] TRACE [Controller id=0] All leaders = __consumer_offsets-49 -> (Leader:1,"
                "ISR:1,LeaderEpoch:0,ControllerEpoch:3),dcode_fileParse_XD-0 -> (Leader:-1,ISR:0,1,LeaderEpoch:1,"
                "ControllerEpoch:3) (kafka.controller.KafkaController)")
    assert [(e.event_type, e.controller_id, e.topic, e.partition, e.leader, e.isr, e.leader_epoch, e.controller_epoch)
            for e in evs] == [("partition_state_observed", 0, "__consumer_offsets", 49, 1, [1], 0, 3),
                              ("partition_state_observed", 0, "dcode_fileParse_XD", 0, -1, [0, 1], 1, 3)]
    # andreinedelciu__kafka-brokers-public/logs/controller.log.2020-10-08-16.gz line 63 (0.10.2: "[topic,p]")
    evs = parse("[2020-10-08 16:51:34,226] TRACE [Controller 0]: All leaders = [dns_kafka_topic,1] -> (Leader:0,ISR:0,"
                "LeaderEpoch:0,ControllerEpoch:1),[netflow_kafka_topic,0] -> (Leader:0,ISR:0,LeaderEpoch:0,"
                "ControllerEpoch:1) (kafka.controller.KafkaController)")
    assert [(e.topic, e.partition, e.leader) for e in evs] == [("dns_kafka_topic", 1, 0), ("netflow_kafka_topic", 0, 0)]
    # YehorYehorychev__Kafka/logs/controller.log.2024-11-27-10.gz line 21 (3.9: recovery state and zkVersion)
    ev = one("[2024-11-27 10:24:53,988] TRACE [Controller id=0] All leaders = cities-0 -> (Leader:0,ISR:0,"
             "LeaderRecoveryState:RECOVERED,LeaderEpoch:0,ZkVersion:0,ControllerEpoch:1) (kafka.controller.KafkaController)")
    assert (ev.topic, ev.partition, ev.leader, ev.zk_version, ev.controller_epoch) == ("cities", 0, 0, 0, 1)


def test_the_controllers_list_of_preferred_replicas_is_the_assignment():
    # KafkaController.checkAndTriggerPartitionRebalance, DEBUG: 0.10.2.0 "preferred replicas by broker " +
    # preferredReplicasForTopicsByBrokers and "topics not in preferred replica " + ...; 2.7.0 s"Topics not in preferred
    # replica for broker $leaderBroker $topicsNotInPreferredReplica". so3500__volttron-kafka (0.10.2.1)
    # controller.log.2017-09-07-16.gz line 34 (shortened), cesaralcancio__study-kafka (2.7.0) controller.log.gz
    # line 255.
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    def events(text):
        evs, summary = parse_source(text.encode(), SourceContext(path="controller.log"))
        assert summary.unrecognized == 0
        return [(e.event_type, e.topic, e.partition, e.replicas, e.controller_id, e.detail["via"]) for e in evs]

    assert events("[2017-09-07 16:38:35,621] DEBUG [Controller 2]: preferred replicas by broker Map(1 -> Map("
                  "[connect-test,0] -> List(1), [my-replicated-topic,0] -> List(1, 2, 0)), 0 -> Map("
                  "[__consumer_offsets,19] -> List(0))) (kafka.controller.KafkaController)") == [
        ("partition_state_observed", "connect-test", 0, [1], 2, "controller_assignment"),
        ("partition_state_observed", "my-replicated-topic", 0, [1, 2, 0], 2, "controller_assignment"),
        ("partition_state_observed", "__consumer_offsets", 19, [0], 2, "controller_assignment")]
    assert events("[2021-02-16 19:32:08,805] DEBUG [Controller id=1] Topics not in preferred replica for broker 3 "
                  "HashMap(ECOMMERCE_SEND_EMAIL-1 -> List(3, 4, 5), ECOMMERCE_NEW_ORDER-2 -> List(3, 1, 2)) "
                  "(kafka.controller.KafkaController)") == [
        ("partition_state_observed", "ECOMMERCE_SEND_EMAIL", 1, [3, 4, 5], 1, "controller_assignment"),
        ("partition_state_observed", "ECOMMERCE_NEW_ORDER", 2, [3, 1, 2], 1, "controller_assignment")]
    assert events("[2017-09-07 16:38:35,643] DEBUG [Controller 2]: topics not in preferred replica Map() "
                  "(kafka.controller.KafkaController)") == []


def test_the_isr_the_controller_holds_before_removing_a_replica_0822_10():
    # KafkaController.removeReplicaFromIsr (0.8.2.2 .. 1.0.0 core/src/main/scala/kafka/controller/KafkaController.scala)
    # debug("Removing replica %d from ISR %s for partition %s.") with partitionLeadershipInfo's ISR: the controller's
    # own view of the ISR before the write. danisharora__helloworld kafka_2.11-0.9.0.0/logs/controller.log.2016-11-23-10.gz
    # line 64 (0.9.0.0)
    ev = one("[2016-11-23 11:33:35,868] DEBUG [Controller 0]: Removing replica 2 from ISR 0,1,2 for partition "
             "[__consumer_offsets,43]. (kafka.controller.KafkaController)")
    assert (ev.event_type, ev.controller_id, ev.topic, ev.partition, ev.isr, ev.leader, ev.leader_epoch) == (
        "partition_state_observed", 0, "__consumer_offsets", 43, [0, 1, 2], None, None)
    assert (ev.detail["via"], ev.detail["removed_replica"]) == ("controller_isr_before_removal", 2)


def test_the_registration_the_controller_wrote_for_an_alter_partition_28_39():
    # airusong (3.9.0) kafka_2.13-3.9.0/logs/controller.log.2024-11-08-17.gz:749, 3.9.0-rc3 KafkaController
    # .processAlterPartition: debug(s"ISR for partition $partition updated to $updatedIsr.")
    ev = one("[2024-11-08 17:05:05,492] DEBUG [Controller id=0] ISR for partition nse-eod-topic-1 updated to "
             "LeaderAndIsr(leader=0, leaderEpoch=1, isrWithBrokerEpoch=List(BrokerState(brokerId=0, brokerEpoch=-1), "
             "BrokerState(brokerId=1, brokerEpoch=-1)), leaderRecoveryState=RECOVERED, partitionEpoch=2). "
             "(kafka.controller.KafkaController)")
    assert (ev.event_type, ev.controller_id, ev.topic, ev.partition, ev.leader, ev.leader_epoch, ev.isr,
            ev.zk_version) == ("partition_state_observed", 0, "nse-eod-topic", 1, 0, 1, [0, 1], 2)
