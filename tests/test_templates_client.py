"""Client-side templates: Java client, sarama, confluent-kafka-go, in their usual layouts."""
from parsers.context import SourceContext
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
