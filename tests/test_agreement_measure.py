"""benchmarks/agreement.py counts issue 44's way: which unjudged records leave the measure's denominator, and which
lines are log-stated moments.

Truth: issue 44's definition (only decisions in a hole of the evidence leave the denominator: hours or quorum epochs
no line covers, ZooKeeper history restarted, a partition's first record; a state the record contradicts counts
against), and the real log itself for the moments (every 4.x ``Setting new leader ... Previous partition:
PartitionRegistration(...leader=-1...)`` line of GraphLogistics's controller.log, read here apart from the parsers).
"""
from __future__ import annotations

import copy
import gzip
import re
import sys

from conftest import REAL_LOGS, REPO, real_cluster_events
from replay_engine.common import judge

sys.path.insert(0, str(REPO / "benchmarks"))
from agreement import as_replayed, classify_reason, log_stated_moments  # noqa: E402


def test_only_holes_leave_the_denominator():
    assert classify_reason(judge.NEW_HISTORY) == ("hole", "history restarted")
    assert classify_reason(judge.UNSEEN) == ("hole", "first record")
    # the replay held a state the record contradicts: counted against, whatever the replay filed it as
    assert classify_reason(judge.GAP) == ("contradicted", "state not shown")
    assert classify_reason(judge.unseen_reason([2])) == ("contradicted", "registration")
    assert classify_reason("election: ISR before the record unknown")[0] == "uncompared"


def test_every_election_after_no_leader_is_a_log_stated_moment():
    path = REAL_LOGS / "GraphLogistics__kafka" / "logs" / "controller.log.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    want = {i for i, line in enumerate(lines, 1)
            if "Setting new leader for topicId" in line and re.search(r"Previous partition: PartitionRegistration\("
                                                                     r"[^)]*\bleader=-1\b", line)}
    assert len(want) == 52  # controller.log.gz lines 51.. (one per partition the ELR election gave a leader)
    got = {(e.source_file, e.source_pos): fam for e, fam, _ in log_stated_moments(
        as_replayed(real_cluster_events("GraphLogistics__kafka")))}
    rel = "GraphLogistics__kafka/logs/controller.log.gz"
    assert {pos for (f, pos), fam in got.items() if f == rel and fam == "new leader after none"} == want


def test_a_failed_election_of_a_partition_zookeeper_holds_no_state_for_is_no_moment():
    # Raghavendralacharya (2.3.0) state-change.log.2019-08-29-22.gz:2283-2284: controller 0 (epoch 101, still acting on
    # its context) fails topic125-2's election with "LeaderAndIsr information doesn't exist for partition topic125-2"
    # (2.3.0 PartitionStateMachine.doElectLeaderForPartitions: no state znode): the topic was deleted (controller 2's
    # list at its failover, controller.log.2019-08-30-10.gz:11, leaves it out). No partition is there to have a leader.
    from conftest import REAL_LOGS2

    cluster = "Raghavendralacharya__kafka-node"
    rel = "kafka_2.12-2.3.0/logs/state-change.log.2019-08-29-22.gz"
    lines = gzip.decompress((REAL_LOGS2 / cluster / rel).read_bytes()).decode().splitlines()
    assert "failed to change state for partition topic125-2 from OfflinePartition to OnlinePartition" in lines[2282]
    assert "LeaderAndIsr information doesn't exist for partition topic125-2" in lines[2283]
    events = as_replayed(real_cluster_events(cluster, folder="real_logs2"))
    failed = [e for e in events if e.source_file == f"{cluster}/{rel}" and e.source_pos == 2283]
    assert [e.event_type for e in failed] == ["leader_election_failed"]
    assert (failed[0].source_file, failed[0].source_pos) not in {
        (e.source_file, e.source_pos) for e, _, _ in log_stated_moments(events)}


def test_lines_restating_a_metadata_logs_records_are_read_on_the_logs_clock():
    """Danielowo2000 (3.5.0, one combined node, clusters told apart): the controller's "Created partition
    quickstartmore-events-0 with topic ID fbWXoc3ESZOLSadDZCYFYQ and PartitionRegistration(..., leaderEpoch=0,
    partitionEpoch=0)" at 13:07:47,082 (kafka_2.13-3.5.0/logs/controller.log.gz:16, log4j local time) is the
    PartitionRecord at offset 24327 of kraft-combined-logs/__cluster_metadata-0 (its UTC timestamp 12:07:47.088): the
    node's lines run an hour ahead of the log. Read on the log's clock, that line and the broker's epochs 1 and 2 at
    13:45:26 (state-change.log.gz:5, :8: the log's changes at offsets 28516, 28518) lie inside the log's span: they
    restate its records (judged there), not decisions of their own."""
    from forensics.pipeline import split_clusters
    from agreement import kraft_recorded, line_clocks

    name = "Danielowo2000__BigDataTechnologies-Version-2"
    events, _ = split_clusters(as_replayed([copy.copy(e) for e in real_cluster_events(name, "real_logs2")]))
    mine = [e for e in events if e.cluster == f"{name} [ZP2ltPx0So-u7ZsfIzft0Q]"]
    logs = f"{name}/kafka_2.13-3.5.0/logs/"
    skew = line_clocks(mine, lambda e: ((e.detail or {}).get("topic_id") or e.topic, e.partition))
    assert abs(skew[1] - 3600 * 10**6) < 10**6
    keys = {k for r in kraft_recorded(mine) for k in r.keys}
    assert not {(logs + "controller.log.gz", 16, 0), (logs + "state-change.log.gz", 5, 0),
                (logs + "state-change.log.gz", 8, 0)} & keys
    assert any(k[1] == 24327 and "__cluster_metadata-0" in k[0] for k in keys)
