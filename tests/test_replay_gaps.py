"""Gaps between what the real logs record and what the replay reports (issue 15), closed one rule at a time.

Each test takes its expectation from a recorded line of a real log (file and line named) or from Kafka's
source at a release tag (file and function named).
"""
from replay_engine.from_events import version_from_paths
from test_replay_real_logs import load


def test_version_from_the_distribution_directory():
    # A Kafka binary distribution unpacks to kafka_<scala>-<kafka>/; SUMMARY.tsv of real_logs reads the same
    # version off the same directory names.
    assert version_from_paths(["agamsidhu__Kafka/kafka_2.11-0.9.0.0/logs/controller.log.gz"]) == "0.9.0.0"
    assert version_from_paths(["x/kafka_2.10-0.8.2.1/logs/server.log", "x/kafka_2.10-0.8.2.1/logs/a.log"]) == "0.8.2.1"
    assert version_from_paths(["a/kafka_2.11-0.9.0.0/logs/s.log", "b/kafka_2.12-2.5.1/logs/s.log"]) is None  # mixed
    assert version_from_paths(["logs/server.log", "kafka_2.11-0.9.0.0"]) is None  # a file, not a directory
    rep = load("agamsidhu__Kafka").to_json()
    assert rep["kafka_version"] == "0.9.0" and "file names" in rep["kafka_version_source"]
