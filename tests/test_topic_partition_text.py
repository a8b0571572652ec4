"""A partition named in a message, as Kafka prints it (TopicPartition.toString: topic + "-" + partition; 0.8-0.10
also "[topic,partition]"), split into its topic and partition: rules.split_topic_partition, which every partition
template reads its partition with."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("text, expected", [
    # Kafka's TopicPartition.toString: topic + "-" + partition (a topic name is [a-zA-Z0-9._-]: it may hold '-')
    ("my-kafka-topic-2", ("my-kafka-topic", 2)),
    ("__consumer_offsets-49", ("__consumer_offsets", 49)),
    ("t-0", ("t", 0)),
    # 0.8-0.10 print [topic,partition]
    ("[twitterstream,0]", ("twitterstream", 0)),
    ("[a-b,12]", ("a-b", 12)),
    # text around the name, as a template's \S+ or .* may capture it: stripped
    (" t-3", ("t", 3)),
    ("\tt-3 ", ("t", 3)),
    ("\u2003t-3", ("t", 3)),
    # not a partition
    ("t-", None), ("-3", None), ("t", None), ("t--1", ("t-", 1)), ("t-x", None), ("[t,x]", None), ("", None),
])
def test_a_topic_partition_is_split_as_kafka_prints_it(text, expected):
    from parsers.broker_logs.rules import split_topic_partition

    assert split_topic_partition(text) == expected
