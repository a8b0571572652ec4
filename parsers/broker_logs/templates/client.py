"""Client-side templates: producer/consumer errors that name a partition, from the Java
client, Go sarama and confluent-kafka-go (librdkafka), in whatever layout the
application logs them. Every one becomes ``client_error``.

These rules apply to any logger except the broker's own (a client's log lines carry
application logger names we cannot know in advance). Wording sources:
Java ``Sender`` / ``NetworkClient`` / ``TimeoutException`` messages, sarama's
``Logger.Printf`` lines and error strings, confluent-kafka-go's ``TopicPartition.String()``
(``topic[0]@offset(error)``) with librdkafka's error texts.
"""
from __future__ import annotations

import re

from parsers.broker_logs.rules import Rule
from parsers.broker_logs.templates.shapes import split_topic_partition
from parsers.schema import Event

# Broker-internal loggers: a broker's own inter-broker clients are not "the client".
NOT_BROKER = (
    "kafka.", "state.change.logger", "org.apache.kafka.controller", "org.apache.kafka.raft", "org.apache.kafka.image",
    "org.apache.kafka.metadata", "org.apache.kafka.storage", "org.apache.kafka.server", "org.apache.kafka.coordinator",
    "org.apache.kafka.queue", "org.apache.zookeeper", "org.I0Itec",
)

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _exception_error(cls: str) -> str:
    """``org.apache.kafka.common.errors.NotLeaderOrFollowerException`` -> ``NOT_LEADER_OR_FOLLOWER``."""
    name = cls.rsplit(".", 1)[-1]
    if name.endswith("Exception"):
        name = name[: -len("Exception")]
    return _CAMEL.sub("_", name).upper()


def _event(client: str, error: str, topic: str | None = None, partition: int | None = None, **more) -> Event:
    return Event("client_error", topic=topic, partition=partition, detail={"client": client, "error": error, **more})


def _tp_event(client: str, error: str, tp_text: str, **more) -> Event | None:
    tp = split_topic_partition(tp_text)
    if tp is None:
        return None
    return _event(client, error, tp[0], tp[1], **more)


def _produce_error(entry, m):
    return _tp_event("java", m["err"], m["tp"], attempts_left=int(m["left"]))


def _invalid_metadata(entry, m):
    return _tp_event("java", _exception_error(m["exc"]), m["tp"])


def _metadata_errors(entry, m):
    evs = []
    for item in m["errs"].split(","):
        topic, sep, err = item.strip().partition("=")
        if sep and topic and err:
            evs.append(_event("java", err.strip(), topic.strip()))
    return evs or None


def _expiring(entry, m):
    return _tp_event("java", "record_expired", m["tp"], records=int(m["n"]))


_TIMEOUT_TOPIC = re.compile(r"Topic (\S+) not present in metadata after (\d+) ms")
_TIMEOUT_TP = re.compile(r"for partition ([\w.-]+-\d+)\b")


def _timeout(entry, m):
    msg = m["msg"]
    tm = _TIMEOUT_TOPIC.search(msg)
    if tm:
        return _event("java", "TimeoutException", tm.group(1), message=msg[:300])
    pm = _TIMEOUT_TP.search(msg)
    if pm:
        return _tp_event("java", "TimeoutException", pm.group(1), message=msg[:300])
    return None  # a timeout that names no partition: not a partition-level client error


_SARAMA_ERRORS = (
    ("In the middle of a leadership election", "LEADER_NOT_AVAILABLE"),
    ("not the leader for some partition", "NOT_LEADER_FOR_PARTITION"),
    ("exceeded the user-specified time limit", "REQUEST_TIMED_OUT"),
    ("does not exist on this broker", "UNKNOWN_TOPIC_OR_PARTITION"),
    ("Messages are rejected since there are fewer in-sync replicas than required", "NOT_ENOUGH_REPLICAS"),
    ("fewer in-sync replicas than required", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"),
    ("connection refused", "connection_refused"),
    ("i/o timeout", "io_timeout"),
    ("connection reset by peer", "connection_reset"),
)


def _sarama_error(text: str) -> str:
    return next((name for needle, name in _SARAMA_ERRORS if needle in text), text[:120])


def _sarama(entry, m):
    text = m["err"].strip()
    return _event("sarama", _sarama_error(text), m["topic"], int(m["p"]), message=text[:300])


# sarama's ProducerError names the topic only; applications commonly put the partition beside it.
_APP_PARTITION = re.compile(r"\bpartition[ =:(]*(\d+)")


def _sarama_produce_failed(entry, m):
    text = m["err"].strip()
    pm = _APP_PARTITION.search(entry.message, 0, m.start())
    return _event("sarama", _sarama_error(text), m["topic"], int(pm.group(1)) if pm else None, message=text[:300])


def _sarama_connect_failed(entry, m):
    text = m["err"].strip()
    return _event("sarama", _sarama_error(text), broker_address=m["addr"], message=text[:300])


def _java_node_unreachable(entry, m):
    node = int(m["node"])
    ev = _event("java", "connection_failed", broker_address=m["addr"])
    if node >= 0:  # negative ids are bootstrap servers, not brokers
        ev.subject_broker = node
    return ev


_LIBRDKAFKA_ERRORS = {
    "Broker: Leader not available": "LEADER_NOT_AVAILABLE",
    "Broker: Not leader for partition": "NOT_LEADER_FOR_PARTITION",
    "Broker: Not leader or follower": "NOT_LEADER_OR_FOLLOWER",
    "Broker: Request timed out": "REQUEST_TIMED_OUT",
    "Broker: Unknown topic or partition": "UNKNOWN_TOPIC_OR_PARTITION",
    "Broker: Not enough in-sync replicas": "NOT_ENOUGH_REPLICAS",
    "Local: Message timed out": "record_expired",
    "Local: Unknown partition": "UNKNOWN_PARTITION",
}


def _confluent_go(entry, m):
    text = m["err"]
    error = _LIBRDKAFKA_ERRORS.get(text, text)
    return _event("confluent-kafka-go", error, m["topic"], int(m["p"]), offset=m["off"], message=text)


RULES = [
    Rule("client.java.produce_error", None, ("Got error produce response",),
         re.compile(r"Got error produce response with correlation id \d+ on topic-partition (?P<tp>\S+?), retrying "
                    r"\((?P<left>-?\d+) attempts left\)\. Error: (?P<err>\w+)"),
         _produce_error, search=True, not_loggers=NOT_BROKER),
    Rule("client.java.invalid_metadata", None, ("Received invalid metadata error",),
         re.compile(r"Received invalid metadata error in produce request on partition (?P<tp>\S+?) due to "
                    r"(?P<exc>[\w.$]+)"),
         _invalid_metadata, search=True, not_loggers=NOT_BROKER),
    Rule("client.java.metadata_error", None, ("Error while fetching metadata",),
         re.compile(r"Error while fetching metadata with correlation id \d+ : \{(?P<errs>[^}]*)\}"),
         _metadata_errors, search=True, not_loggers=NOT_BROKER),
    Rule("client.java.expiring", None, ("Expiring ", " record(s) for "),
         re.compile(r"Expiring (?P<n>\d+) record\(s\) for (?P<tp>[\w.-]+-\d+)"),
         _expiring, search=True, not_loggers=NOT_BROKER, thrown=True),
    Rule("client.java.timeout", None, ("TimeoutException",),
         re.compile(r"TimeoutException:? ?(?P<msg>.*)"), _timeout, search=True, not_loggers=NOT_BROKER, thrown=True,
         declines_by_text=True),
    Rule("client.java.node_unreachable", None, ("Connection to node ", "could not be established"),
         re.compile(r"Connection to node (?P<node>-?\d+) \((?P<addr>[^)]*)\) could not be established"),
         _java_node_unreachable, search=True, not_loggers=NOT_BROKER),
    Rule("client.sarama.produce_failed", None, ("Failed to produce message to topic ",),
         re.compile(r"Failed to produce message to topic (?P<topic>[^\s:]+): (?P<err>.*)$"),
         _sarama_produce_failed, search=True, not_loggers=NOT_BROKER),
    Rule("client.sarama.connect_failed", None, ("Failed to connect to broker ",),
         re.compile(r"Failed to connect to broker (?P<addr>\S+?): (?P<err>.*)$"),
         _sarama_connect_failed, search=True, not_loggers=NOT_BROKER),
    Rule("client.sarama.retrying", None, ("state change to [retrying] on ",),
         re.compile(r"producer/(?:broker|flusher)(?:/\d+)? state change to \[retrying\] on (?P<topic>\S+)/(?P<p>\d+) "
                    r"because (?P<err>.*)$"),
         _sarama, search=True, not_loggers=NOT_BROKER),
    Rule("client.sarama.abandoned", None, ("abandoned subscription to ",),
         re.compile(r"consumer/broker/\d+ abandoned subscription to (?P<topic>\S+)/(?P<p>\d+) because (?P<err>.*)$"),
         _sarama, search=True, not_loggers=NOT_BROKER),
    Rule("client.confluent_go.partition_error", None, ("]@", "("),
         re.compile(r"(?P<topic>[\w.-]+)\[(?P<p>\d+)\]@(?P<off>[\w-]+)\((?P<err>(?:Broker|Local): [^)]*)\)"),
         _confluent_go, search=True, not_loggers=NOT_BROKER),
]
