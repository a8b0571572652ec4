"""Topic deletion told by the controller's own lines (no ZooKeeper data needed). TopicDeletionManager takes a
topic's partitions offline to delete them (onTopicDeletion -> onPartitionDeletion: OfflinePartition, then
NonExistentPartition once every replica is deleted; 0.9.0.0-3.9 core/src/main/scala/kafka/controller/
TopicDeletionManager.scala), so a partition that lost its leader because its topic was being deleted is told so.
The controller names the topics queued for deletion when it starts ("List of topics to be deleted: ...",
KafkaController.initializeTopicDeletion, 0.9+), when a request arrives ("Starting topic deletion for topics ...",
KafkaController.processTopicDeletion, 1.1+) and when it (re)starts one ("Deletion of topic X (re)started").

Truth: the raw controller lines of ../shared/real_logs, read with gzip, independently of the parsers.
"""
from __future__ import annotations

import gzip
import re

import pytest

from conftest import REAL_LOGS, log4j_us, replayed_cluster
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.causes.cases import DELETED

_TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] ")
_REQUEST = re.compile(r"(?:Starting topic deletion for topics |List of topics to be deleted: |Deletion of topic )"
                      r"(?P<topics>\S+)")


def _controller_lines(cluster: str) -> list[tuple[int, str]]:
    out = []
    for f in sorted((REAL_LOGS / cluster).rglob("controller.log*")):
        data = f.read_bytes()
        text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        for line in text.decode("utf-8", "replace").splitlines():
            m = _TS.match(line)
            if m:
                out.append((log4j_us(m.group(1)), line))
    return sorted(out)


@pytest.mark.parametrize("cluster,topic,partition", [
    # 3.7.1: the controller starts with WalletKafka queued for deletion; broker 0's replica sits in an offline log
    # directory, so the deletion halts and the partition stays offline to the end of the evidence
    ("NikhilDighe9975__kafka_setup", "WalletKafka", 0),
    # 1.0.0: mytest2 deleted again and again, each time briefly leaderless
    ("zhanglong318__kafka", "mytest2", 0),
])
def test_outages_that_began_with_a_deletion_are_told_as_deletions(cluster, topic, partition):
    if not (REAL_LOGS / cluster).is_dir():
        pytest.skip("../shared/real_logs absent")
    lines = _controller_lines(cluster)
    elections = [ts for ts, line in lines if "successfully elected as the controller" in line]
    requests = [ts for ts, line in lines if (m := _REQUEST.search(line)) and topic in m["topics"].split(",")
                and "successfully completed" not in line]
    res = replayed_cluster(cluster)
    eps = [lp for lp in res.leaderless if (lp.episode.topic, lp.episode.partition) == (topic, partition)]
    assert eps
    told = 0
    for lp in eps:
        start = lp.episode.start
        # deletions the controller had under way then: named at or before that moment by the controller in
        # office (a new controller re-reads its queue and names the topic again)
        pending = [r for r in requests if r <= start and not any(r < e <= start for e in elections)]
        # onTopicDeletion runs as the request is handled: a partition that lost its leader within a second of
        # its topic's deletion line lost it to the deletion
        just = [r for r in pending if start - r <= 1_000_000]
        if just:
            assert lp.cause.kind == DELETED, (lp.cause.kind, lp.cause.summary)
            assert any(ref.ts in pending for ref in lp.cause.chain)  # the line that says so is cited
            told += 1
        elif not pending:
            assert lp.cause.kind != DELETED, lp.cause.summary
    assert told >= 1


def test_the_controllers_deletion_lines_are_read_in_each_layout():
    text = ("[2017-01-01 10:00:00,000] INFO [Controller 1]: List of topics to be deleted: t1,t2 "
            "(kafka.controller.KafkaController)\n"
            "[2017-01-01 10:00:00,001] INFO [Controller 1]: List of topics to be deleted:  "
            "(kafka.controller.KafkaController)\n"
            "[2018-04-13 21:43:03,681] INFO [Controller id=0] Starting topic deletion for topics mytest2 "
            "(kafka.controller.KafkaController)\n"
            "[2018-04-13 21:43:03,690] INFO [Topic Deletion Manager 0], Deletion of topic mytest2 (re)started "
            "(kafka.controller.TopicDeletionManager)\n"
            "[2024-07-18 18:07:52,701] INFO [Topic Deletion Manager 0] Deletion of topic WalletKafka (re)started "
            "(kafka.controller.TopicDeletionManager)\n")
    evs, summary = parse_source(text.encode(), SourceContext("b/controller.log", cluster="c"))
    got = [(e.source_pos, e.topic, e.detail["via"]) for e in evs if e.event_type == "topic_deletion_requested"]
    assert got == [(1, "t1", "controller_startup"), (1, "t2", "controller_startup"), (3, "mytest2", "request"),
                   (4, "mytest2", "deletion_started"), (5, "WalletKafka", "deletion_started")]
    assert summary.unrecognized == 0 and summary.quarantined == 0


def test_a_deletion_on_hold_is_told_with_its_reason():
    cluster = "NikhilDighe9975__kafka_setup"
    if not (REAL_LOGS / cluster).is_dir():
        pytest.skip("../shared/real_logs absent")
    held = [(ts, line) for ts, line in _controller_lines(cluster) if "Halted deletion of topics WalletKafka" in line]
    assert held
    ts, line = held[0]
    reason = line.split(" due to ", 1)[1].rsplit(" (kafka.controller", 1)[0]
    res = replayed_cluster(cluster)
    (lp,) = [lp for lp in res.leaderless if (lp.episode.topic, lp.episode.partition) == ("WalletKafka", 0)]
    assert lp.cause.kind == DELETED
    assert any(ref.ts == ts for ref in lp.cause.chain)
    assert "put the deletion on hold" in lp.cause.summary and f"({reason})" in lp.cause.summary


def test_the_hold_line_is_read_with_and_without_its_reason():
    text = ("[2017-01-01 10:00:00,000] INFO [Topic Deletion Manager 1], Halted deletion of topics t1,t2 "
            "(kafka.controller.TopicDeletionManager)\n"
            "[2024-07-18 18:07:53,993] INFO [Topic Deletion Manager 0] Halted deletion of topics WalletKafka due to "
            "replica deletion failure (kafka.controller.TopicDeletionManager)\n")
    evs, summary = parse_source(text.encode(), SourceContext("b/controller.log", cluster="c"))
    got = [(e.source_pos, e.topic, e.detail["reason"]) for e in evs if e.event_type == "topic_deletion_halted"]
    assert got == [(1, "t1", None), (1, "t2", None), (2, "WalletKafka", "replica deletion failure")]
    assert summary.unrecognized == 0
