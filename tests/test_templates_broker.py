"""Templates about the broker itself (server.log), per version."""
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source


def parse(text: str, path: str = "server.log", broker_hint=None):
    events, summary = parse_source(text.encode(), SourceContext(path=path, broker_hint=broker_hint))
    assert summary.balanced()
    assert summary.unrecognized == 0, summary.samples
    return events


def one(text: str, path: str = "server.log", broker_hint=None):
    events = parse(text, path, broker_hint)
    assert len(events) == 1, events
    return events[0]


def test_lifecycle_every_ident():
    events = parse(
        "[2016-09-14 03:46:40,100] INFO [Kafka Server 0], starting (kafka.server.KafkaServer)\n"
        "[2016-09-14 03:46:51,700] INFO [Kafka Server 0], started (kafka.server.KafkaServer)\n"
        "[2021-04-26 18:00:00,000] INFO [KafkaServer id=1] shutting down (kafka.server.KafkaServer)\n"
        "[2021-04-26 18:00:01,000] INFO [KafkaServer id=1] shut down completed (kafka.server.KafkaServer)\n"
        "[2025-05-14 22:49:00,000] INFO [BrokerServer id=10] Starting broker (kafka.server.BrokerServer)\n"
        "[2025-05-14 22:49:01,000] INFO [BrokerServer id=10] Transition from SHUTDOWN to STARTING (kafka.server.BrokerServer)\n"
        "[2025-05-14 22:49:09,000] INFO [BrokerServer id=10] Transition from STARTING to STARTED (kafka.server.BrokerServer)\n")
    got = [(e.event_type, e.subject_broker, e.detail.get("phase"), e.detail["mode"]) for e in events]
    assert got == [("broker_startup", 0, "starting", "zk"), ("broker_startup", 0, "started", "zk"),
                   ("broker_shutdown_started", 1, None, "zk"), ("broker_shutdown_completed", 1, None, "zk"),
                   ("broker_startup", 10, "starting", "kraft"), ("broker_startup", 10, "started", "kraft")]


def test_bare_starting_takes_the_file_broker_as_subject():
    events = parse("[2017-01-18 23:11:47,224] INFO starting (kafka.server.KafkaServer)\n"
                   "[2017-01-18 23:11:53,000] INFO [Kafka Server 4], started (kafka.server.KafkaServer)\n")
    assert [(e.event_type, e.broker_id, e.subject_broker) for e in events] == [
        ("broker_startup", 4, 4), ("broker_startup", 4, 4)]
    # an interleaved file (two writers) leaves the unnamed line unattributed
    events = parse("[2017-01-18 23:11:47,224] INFO starting (kafka.server.KafkaServer)\n"
                   "[2017-01-18 23:11:53,000] INFO [Kafka Server 4], started (kafka.server.KafkaServer)\n"
                   "[2017-01-18 23:11:54,000] INFO [Kafka Server 5], started (kafka.server.KafkaServer)\n")
    assert [(e.broker_id, e.subject_broker) for e in events] == [(None, None), (4, 4), (5, 5)]


def test_registration_08_010_22():
    ev = one("[2016-09-14 03:46:51,522] INFO Registered broker 0 at path /brokers/ids/0 with address "
             "192.168.1.6:9092. (kafka.utils.ZkUtils$)")
    assert (ev.event_type, ev.subject_broker, ev.detail["via"], ev.detail["endpoints"]) == (
        "broker_registered", 0, "broker_self", "192.168.1.6:9092")
    ev = one("[2017-01-18 23:12:08,278] INFO Registered broker 2 at path /brokers/ids/2 with addresses: PLAINTEXT -> "
             "EndPoint(192.168.0.2,9092,PLAINTEXT) (kafka.utils.ZkUtils)")
    assert ev.subject_broker == 2 and "broker_epoch" not in ev.detail
    ev = one("[2021-04-26 16:12:41,400] INFO Registered broker 0 at path /brokers/ids/0 with addresses: "
             "PLAINTEXT://localhost:9092, czxid (broker epoch): 168 (kafka.zk.KafkaZkClient)")
    assert (ev.detail["endpoints"], ev.detail["broker_epoch"]) == ("PLAINTEXT://localhost:9092", 168)


def test_controlled_shutdown_outcomes_010_2x_3x():
    events = parse(
        "[2017-01-21 15:15:17,900] INFO [Kafka Server 0], Starting controlled shutdown (kafka.server.KafkaServer)\n"
        "[2017-01-21 15:15:17,950] INFO [Kafka Server 0], Error code from controller: 11 (kafka.server.KafkaServer)\n"
        "[2017-01-21 15:15:17,992] INFO [Kafka Server 0], Remaining partitions to move:  (kafka.server.KafkaServer)\n"
        "[2017-01-21 15:15:22,992] WARN [Kafka Server 0], Retrying controlled shutdown after the previous attempt "
        "failed... (kafka.server.KafkaServer)\n"
        "[2017-01-21 15:15:28,000] WARN [Kafka Server 0], Proceeding to do an unclean shutdown as all the controlled "
        "shutdown attempts failed (kafka.server.KafkaServer)\n")
    got = [(e.event_type, e.detail.get("outcome"), e.detail["side"], e.subject_broker) for e in events]
    assert got == [("controlled_shutdown_requested", None, "broker", 0),
                   ("controlled_shutdown_result", "partitions_remaining", "broker", 0),
                   ("controlled_shutdown_result", "retrying", "broker", 0),
                   ("controlled_shutdown_result", "failed_unclean", "broker", 0)]
    ev = one("[2019-07-05 10:00:00,000] INFO [KafkaServer id=1] Remaining partitions to move: java-0,c-1 "
             "(kafka.server.KafkaServer)")
    assert (ev.detail["remaining"], ev.detail["partitions"]) == (2, [["java", 0], ["c", 1]])
    ev = one("[2021-11-12 21:00:00,000] INFO [KafkaServer id=0] Remaining partitions to move: [RemainingPartition("
             "topicName='management', partitionIndex=0), RemainingPartition(topicName='management', partitionIndex=2)] "
             "(kafka.server.KafkaServer)")
    assert ev.detail["partitions"] == [["management", 0], ["management", 2]]
    events = parse(
        "[2024-12-02 18:00:32,869] WARN [KafkaServer id=2] Error during controlled shutdown, possibly because leader "
        "movement took longer than the configured controller.socket.timeout.ms and/or request.timeout.ms: Connection "
        "to 0 was disconnected before the response was read (kafka.server.KafkaServer)\n"
        "[2024-12-02 18:00:37,875] INFO [KafkaServer id=2] Retrying controlled shutdown (2 retries remaining) "
        "(kafka.server.KafkaServer)\n"
        "[2024-12-02 18:00:37,894] INFO [KafkaServer id=2] Controlled shutdown request returned after 15ms with 7 "
        "partitions remaining to move (kafka.server.KafkaServer)\n"
        "[2024-11-27 10:24:53,989] INFO [KafkaServer id=2] Controlled shutdown request returned successfully after 4ms "
        "(kafka.server.KafkaServer)\n")
    got = [(e.detail["outcome"], e.detail.get("retries_left"), e.detail.get("remaining")) for e in events]
    assert got == [("retrying", 2, None), ("partitions_remaining", None, 7), ("succeeded", None, None)]


def test_zk_session_lines_34_and_35():
    events = parse(
        "[2021-03-16 15:00:00,000] INFO [KafkaServer id=2] started (kafka.server.KafkaServer)\n"
        "[2021-03-16 15:00:01,000] INFO Session establishment complete on server localhost/127.0.0.1:2181, sessionid "
        "= 0x1783a1c8f440003, negotiated timeout = 6000 (org.apache.zookeeper.ClientCnxn)\n"
        "[2024-07-18 23:00:00,000] INFO Session establishment complete on server localhost/[0:0:0:0:0:0:0:1]:2181, "
        "session id = 0x1000155cc320001, negotiated timeout = 18000 (org.apache.zookeeper.ClientCnxn)\n"
        "[2021-03-16 15:00:17,000] WARN Unable to reconnect to ZooKeeper service, session 0x1783a1c8f440001 has "
        "expired (org.apache.zookeeper.ClientCnxn)\n"
        "[2021-03-16 15:00:18,000] INFO Unable to reconnect to ZooKeeper service, session 0x1783a1c8f440001 has "
        "expired, closing socket connection (org.apache.zookeeper.ClientCnxn)\n")
    got = [(e.event_type, e.detail.get("session"), e.subject_broker) for e in events[1:]]
    assert got == [("zk_session_established", "0x1783a1c8f440003", 2), ("zk_session_established", "0x1000155cc320001", 2),
                   ("zk_session_expired", "0x1783a1c8f440001", 2)]
    assert events[1].session_id == 0x1783a1c8f440003 and events[1].detail["timeout_ms"] == 6000


def test_zk_disconnects_but_not_reconnect_attempts():
    events = parse(
        "[2021-04-27 19:31:18,383] INFO Client session timed out, have not heard from server in 17603ms for sessionid "
        "0x10002ea82f90000, closing socket connection and attempting reconnect (org.apache.zookeeper.ClientCnxn)\n"
        "[2021-04-26 20:20:23,503] INFO Unable to read additional data from server sessionid 0x1000009d4720002, likely "
        "server has closed socket, closing socket connection and attempting reconnect (org.apache.zookeeper.ClientCnxn)\n"
        "[2024-12-02 17:00:00,000] WARN Session 0x10000128c950001 for server localhost/[0:0:0:0:0:0:0:1]:2181, Closing "
        "socket connection. Attempting reconnect except it is a SessionExpiredException. (org.apache.zookeeper.ClientCnxn)\n"
        "EndOfStreamException: Unable to read additional data from server sessionid 0x10000128c950001, likely server "
        "has closed socket\n"
        "[2024-12-02 17:00:01,000] WARN Session 0x10000128c950001 for server localhost/127.0.0.1:2181, Closing socket "
        "connection. Attempting reconnect except it is a SessionExpiredException. (org.apache.zookeeper.ClientCnxn)\n"
        "java.net.ConnectException: Connection refused\n"
        "[2018-04-28 23:00:00,000] WARN Session 0x0 for server null, unexpected error, closing socket connection and "
        "attempting reconnect (org.apache.zookeeper.ClientCnxn)\n"
        "java.io.IOException: Connection reset by peer\n")
    assert [(e.event_type, e.detail["session"]) for e in events] == [
        ("zk_disconnected", "0x10002ea82f90000"), ("zk_disconnected", "0x1000009d4720002"),
        ("zk_disconnected", "0x10000128c950001")]
    assert events[0].detail["cause"] == "no response from the server for 17603 ms"
    assert events[2].detail["cause"].startswith("EndOfStreamException")


def test_custom_layout_zk_client_line_found_by_search():
    ev = one("[2018-03-27 12:50:34,661] WARN  <ClientCnxn  :1285> [46.166:2181)] Unable to reconnect to ZooKeeper "
             "service, session 0x162671046950004 has expired", "operator.log")
    assert (ev.event_type, ev.session_id) == ("zk_session_expired", 0x162671046950004)


def test_kafka_config_keeps_the_controller_settings_and_the_broker_id():
    lines = ["[2021-04-26 16:12:40,798] INFO KafkaConfig values: "]
    lines += [f"\t{k} = {v}" for k, v in [
        ("advertised.listeners", "null"), ("broker.id", "3"), ("broker.rack", "null"), ("log.dirs", "/tmp/kafka-logs"),
        ("min.insync.replicas", "2"), ("unclean.leader.election.enable", "false"), ("zookeeper.session.timeout.ms", "18000"),
    ]]
    lines += [f"\tfiller.{i} = {i}" for i in range(300)]  # real dumps are 230-400 lines long
    lines += ["\tzzz.last = 1", " (kafka.server.KafkaConfig)"]
    ev = one("\n".join(lines) + "\n")
    assert (ev.event_type, ev.subject_broker) == ("broker_config", 3)
    assert ev.detail["config"] == {"broker.id": "3", "broker.rack": "null", "min.insync.replicas": "2",
                                   "unclean.leader.election.enable": "false", "zookeeper.session.timeout.ms": "18000"}


def test_kraft_config_uses_node_id_when_broker_id_is_unset():
    ev = one("[2025-01-01 00:00:00,000] INFO KafkaConfig values: \n\tbroker.id = -1\n\tnode.id = 7\n"
             "\tprocess.roles = broker,controller\n (kafka.server.KafkaConfig)\n")
    assert ev.subject_broker == 7 and ev.detail["config"]["process.roles"] == "broker,controller"


def test_kafka_version_both_spellings():
    events = parse("[2017-01-18 23:11:47,300] INFO Kafka version : 0.10.2.0 (org.apache.kafka.common.utils.AppInfoParser)\n"
                   "[2020-11-01 00:00:00,000] INFO Kafka version: 2.5.1 (org.apache.kafka.common.utils.AppInfoParser)\n")
    assert [e.detail["version"] for e in events] == ["0.10.2.0", "2.5.1"]
    _, summary = parse_source(b"[2020-11-01 00:00:00,000] INFO Kafka version: 2.5.1 "
                              b"(org.apache.kafka.common.utils.AppInfoParser)\n", SourceContext(path="s.log"))
    assert summary.kafka_version == "2.5.1"


def test_log_dir_failures():
    ev = one("[2024-07-18 18:07:53,951] WARN [ReplicaManager broker=0] Stopping serving replicas in dir "
             "C:\\tmp\\kafka-logs (kafka.server.ReplicaManager)")
    assert (ev.event_type, ev.subject_broker, ev.detail["dir"]) == ("log_dir_failure", 0, "C:\\tmp\\kafka-logs")
    ev = one("[2020-10-10 13:17:14,873] ERROR Failed to create or validate data directory /data3/kakfa "
             "(kafka.server.LogDirFailureChannel)\njava.io.IOException: Failed to create data directory /data3/kakfa\n",
             broker_hint=4)
    assert (ev.event_type, ev.subject_broker, ev.detail["dir"], ev.detail["via"]) == (
        "log_dir_failure", 4, "/data3/kakfa", "failure_channel")
