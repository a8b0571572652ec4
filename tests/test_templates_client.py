"""Client-side templates: Java client, sarama, confluent-kafka-go, in their usual layouts."""
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source


def parse(text: str, path: str = "app.log", broker_hint=None):
    events, summary = parse_source(text.encode(), SourceContext(path=path, broker_hint=broker_hint))
    assert summary.balanced()
    assert summary.unrecognized == 0, summary.samples
    return events


def test_java_producer_errors_name_topic_and_partition():
    events = parse(
        "[2023-12-19 14:08:09,150] WARN [Producer clientId=producer-1] Got error produce response with correlation id 3 "
        "on topic-partition my-topic-0, retrying (1 attempts left). Error: NOT_LEADER_OR_FOLLOWER "
        "(org.apache.kafka.clients.producer.internals.Sender)\n"
        "[2021-02-04 09:01:20,118] WARN [Producer clientId=test-producer] Received invalid metadata error in produce "
        "request on partition topic1-25 due to org.apache.kafka.common.errors.NotLeaderForPartitionException: This "
        "server is not the leader for that topic-partition.. Going to request metadata update now "
        "(org.apache.kafka.clients.producer.internals.Sender)\n", broker_hint=3)
    got = [(e.event_type, e.topic, e.partition, e.detail["client"], e.detail["error"], e.broker_id, e.source_kind)
           for e in events]
    assert got == [("client_error", "my-topic", 0, "java", "NOT_LEADER_OR_FOLLOWER", None, "client_log"),
                   ("client_error", "topic1", 25, "java", "NOT_LEADER_FOR_PARTITION", None, "client_log")]
    assert events[0].detail["attempts_left"] == 1


def test_java_metadata_errors_one_event_per_topic():
    events = parse("[2022-09-18 03:26:09,700] WARN [Consumer clientId=c, groupId=g] Error while fetching metadata with "
                   "correlation id 145 : {test=LEADER_NOT_AVAILABLE, other.t=UNKNOWN_TOPIC_OR_PARTITION} "
                   "(org.apache.kafka.clients.NetworkClient)\n")
    assert [(e.topic, e.partition, e.detail["error"]) for e in events] == [
        ("test", None, "LEADER_NOT_AVAILABLE"), ("other.t", None, "UNKNOWN_TOPIC_OR_PARTITION")]


def test_expiring_records_and_timeouts_in_an_application_layout():
    events = parse(
        "2024-07-07 10:25:20.682 ERROR 1234 --- [ad | producer-1] c.e.App : send failed "
        "org.apache.kafka.common.errors.TimeoutException: Expiring 16 record(s) for my-topic-0:120001 ms has passed "
        "since batch creation\n"
        "2024-07-07 10:25:21.000 ERROR 1234 --- [main] c.e.App : org.apache.kafka.common.errors.TimeoutException: "
        "Topic orders not present in metadata after 60000 ms.\n"
        "2024-07-07 10:25:22.000 ERROR 1234 --- [main] c.e.App : org.apache.kafka.common.errors.TimeoutException: "
        "Timeout of 60000ms expired before the position for partition orders-3 could be determined\n"
        "2024-07-07 10:25:23.000 ERROR 1234 --- [main] c.e.App : org.apache.kafka.common.errors.TimeoutException: "
        "Failed to update metadata after 60000 ms.\n")
    got = [(e.topic, e.partition, e.detail["error"]) for e in events]
    assert got == [("my-topic", 0, "record_expired"), ("orders", None, "TimeoutException"),
                   ("orders", 3, "TimeoutException")]
    assert events[0].detail["records"] == 16


def test_sarama_lines_in_go_log_layout():
    events = parse(
        "[sarama] 2021/03/17 22:07:17 producer/broker/1 state change to [retrying] on orders/3 because kafka server: In "
        "the middle of a leadership election, there is currently no leader for this partition and hence it is "
        "unavailable for writes.\n"
        "[sarama] 2021/03/17 22:07:18 consumer/broker/2 abandoned subscription to payments.v1/0 because kafka server: "
        "Tried to send a message to a replica that is not the leader for some partition. Your metadata is out of date.\n"
        "[sarama] 2021/03/17 22:07:19 client/metadata fetching metadata for all topics from broker b:9092\n")
    got = [(e.topic, e.partition, e.detail["client"], e.detail["error"], e.logger, e.ts_raw) for e in events]
    assert got == [("orders", 3, "sarama", "LEADER_NOT_AVAILABLE", "sarama", "2021/03/17 22:07:17"),
                   ("payments.v1", 0, "sarama", "NOT_LEADER_FOR_PARTITION", "sarama", "2021/03/17 22:07:18")]


def test_confluent_kafka_go_delivery_report():
    events = parse("2021/03/17 22:07:17 Delivery failed: orders[3]@unset(Broker: Leader not available)\n"
                   "2021/03/17 22:07:18 Delivered message to orders[1]@42\n")
    assert [(e.topic, e.partition, e.detail["client"], e.detail["error"], e.detail["offset"]) for e in events] == [
        ("orders", 3, "confluent-kafka-go", "LEADER_NOT_AVAILABLE", "unset")]


def test_broker_internal_loggers_never_yield_client_errors():
    events = parse("[2017-12-02 02:56:40,058] ERROR [ReplicaFetcherThread-0-1], Error for partition [__consumer_offsets,"
                   "9] to broker 1:org.apache.kafka.common.errors.NotLeaderForPartitionException: This server is not "
                   "the leader for that topic-partition. (kafka.server.ReplicaFetcherThread)\n"
                   "[2025-05-14 23:09:00,000] INFO [QuorumController id=10] electUnclean: event unable to start processing "
                   "because of RejectedExecutionException (treated as TimeoutException). "
                   "(org.apache.kafka.controller.QuorumController)\n", "server.log")
    assert events == []


def test_exception_under_an_application_line_names_the_partition():
    # Kafka's own wording (Sender/ProducerBatch) in the thrown exception; the header is the application's.
    events = parse(
        "[2021-08-16 10:34:01,155] ERROR send to orders failed, 53 record(s) dropped (com.example.KafkaSink)\n"
        "org.apache.kafka.common.errors.TimeoutException: Expiring 53 record(s) for orders-200:120001 ms has passed "
        "since batch creation\n"
        "\tat org.apache.kafka.clients.producer.internals.ProducerBatch.expire(ProducerBatch.java:3)\n"
        "[2021-08-16 10:34:02,000] ERROR could not deliver (com.example.KafkaSink)\n"
        "\tat com.example.KafkaSink.send(KafkaSink.java:3)\n")
    assert [(e.topic, e.partition, e.detail["error"], e.detail["records"]) for e in events] == [
        ("orders", 200, "record_expired", 53)]


def test_exception_lines_are_not_read_for_broker_loggers():
    events = parse(
        "[2021-08-16 10:34:01,155] ERROR [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Error in response "
        "(kafka.server.ReplicaFetcherThread)\n"
        "org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s) for orders-2:1 ms has passed\n")
    assert [e for e in events if e.event_type == "client_error"] == []


def test_java_client_cannot_reach_a_broker():
    events = parse(
        "[2021-08-16 10:32:05,124] WARN [Producer clientId=producer-1] Connection to node 1 (kafka-broker-1/10.0.0.11:9092)"
        " could not be established. Broker may not be available. (org.apache.kafka.clients.NetworkClient)\n"
        "[2021-08-16 10:32:05,200] WARN [Consumer clientId=c, groupId=g] Connection to node -1 (localhost/127.0.0.1:9092)"
        " could not be established. Broker may not be available. (org.apache.kafka.clients.NetworkClient)\n")
    assert [(e.topic, e.subject_broker, e.detail["error"], e.detail["broker_address"]) for e in events] == [
        (None, 1, "connection_failed", "kafka-broker-1/10.0.0.11:9092"),
        (None, None, "connection_failed", "localhost/127.0.0.1:9092")]  # node -1: a bootstrap server, no broker id


def test_sarama_producer_errors_as_an_application_prints_them():
    # sarama's ProducerError reads "kafka: Failed to produce message to topic T: <err>"; the partition is the app's
    events = parse(
        "2021/08/16 10:32:35 produce failed (partition 29): kafka: Failed to produce message to topic orders: kafka "
        "server: In the middle of a leadership election, there is currently no leader for this partition and hence it "
        "is unavailable for writes.\n"
        "2021/08/16 10:32:05 kafka: Failed to produce message to topic orders: dial tcp 10.0.0.11:9092: connect: "
        "connection refused\n"
        "2021/08/16 10:32:06 Failed to connect to broker kafka-broker-1:9092: dial tcp 10.0.0.11:9092: connect: "
        "connection refused\n")
    assert [(e.topic, e.partition, e.detail["error"]) for e in events] == [
        ("orders", 29, "LEADER_NOT_AVAILABLE"), ("orders", None, "connection_refused"), (None, None, "connection_refused")]
    assert events[2].detail["broker_address"] == "kafka-broker-1:9092"
