"""What the electing controller's own lines state before a recorded election: the state it read, the brokers it held live.

Kafka's ZooKeeper-mode election reads the partition's state znode and gives up when a controller of a later epoch
wrote it (0.10.2.0 core/src/main/scala/kafka/controller/PartitionStateMachine.scala, electLeaderForPartition: "aborted
leader election ... already written by another controller"; rule zk.election.epoch_fence). An election recorded under
epoch E where the replay holds the partition written under a later epoch was therefore taken on another znode: the
partition's history restarted (ZooKeeper's data, or the topic, recreated), and the state the same controller's own
'sending UpdateMetadata request (Leader:..,ISR:..,LeaderEpoch:..,ControllerEpoch:..)' line stated before it is the one
it decided on. That line's recipients are live or shutting down to it (0.10.2.0 KafkaController
.sendUpdateMetadataRequest: liveOrShuttingDownBrokerIds).

A clean election's leader is an ISR member (every PartitionLeaderSelector of 0.10.2.0): one outside the ISR the replay
holds, in an OnlinePartition -> OnlinePartition move, shows a state no line showed; decided by a controller whose
taking office is in no line, it is a hole naming that epoch.
"""
import copy
import gzip

import pytest

from conftest import REAL_LOGS2, real_cluster_events
from forensics.pipeline import drop_log_copies, replay_order, split_clusters
from replay_engine.api import replay_cluster
from replay_engine.common import judge as J

SO = "so3500__volttron-kafka"
PM = "pmitra43__kafka_load_generator"


def _line(cluster: str, rel: str, n: int) -> str:
    return gzip.decompress((REAL_LOGS2 / cluster / rel).read_bytes()).decode("utf-8", "replace").splitlines()[n - 1]


def _replay(cluster: str, at: tuple[str, int]):
    """The cluster replayed as ``kafka-forensics replay`` replays it; with several clusters in the folder, the one
    holding the line ``at``."""
    events, _ = split_clusters([copy.copy(e) for e in real_cluster_events(cluster, "real_logs2")])
    (mine,) = {e.cluster for e in events if e.source_file.endswith("/" + at[0]) and e.source_pos == at[1]}
    ours = drop_log_copies(sorted([e for e in events if e.cluster == mine], key=replay_order))[0]
    return replay_cluster(ours, mine)


def _at(res, rel: str, n: int):
    return [c for c in res.comparisons if c.record.source_file.endswith("/" + rel) and c.record.source_pos == n]


@pytest.mark.skipif(not (REAL_LOGS2 / SO).is_dir(), reason="../shared/real_logs2 absent")
def test_an_election_the_fence_would_refuse_restarts_the_history_from_the_controllers_own_line():
    logs = "kafka_2.12-0.10.2.1/logs/"
    sc = logs + "state-change.log.2017-09-19-12.gz"
    # independent truth, the lines themselves: the partition at leader epoch 17 under controller epoch 21 ...
    assert "(Leader:0,ISR:0,LeaderEpoch:17,ControllerEpoch:21)" in _line(SO, logs + "state-change.log.2017-09-13-17.gz",
                                                                            469)
    # ... then controller 0 epoch 3 states it at leader epoch 0, ISR 1,0 (written under epoch 2), sends it to
    # brokers 0 and 1, and elects 1 (AR 1,0: the first live assigned replica in the ISR)
    assert "Controller 0 epoch 3 sending UpdateMetadata request (Leader:1,ISR:1,0,LeaderEpoch:0,ControllerEpoch:2) " \
           "to brokers Set() for partition __consumer_offsets-30" in _line(SO, sc, 47)
    assert "Assigned replicas are: [List(1, 0)]" in _line(SO, sc, 81)
    assert "to brokers Set(0, 1) for partition __consumer_offsets-30" in _line(SO, sc, 1452)
    assert "Controller 0 epoch 3 changed partition [__consumer_offsets,30] from OfflinePartition to OnlinePartition " \
           "with leader 1" in _line(SO, sc, 1930)
    res = _replay(SO, ("state-change.log.2017-09-19-12.gz", 1930))
    (c,) = _at(res, "state-change.log.2017-09-19-12.gz", 1930)
    assert c.tp == ("__consumer_offsets", 30) and c.recorded["leader"] == 1
    assert c.verdict == J.AGREED and c.replayed["leader"] == 1 and sorted(c.replayed["isr"]) == [0, 1], c
    restarted = [f for f in res.image.findings if f.get("kind") == "partition_history_restarted"
                 and (f.get("topic"), f.get("partition")) == ("__consumer_offsets", 30)
                 and any(e.get("source_pos") == 1930 for e in f.get("evidence", []))]
    assert restarted and "epoch_fence" not in restarted[0]["text"] \
        and "electLeaderForPartition" in restarted[0]["text"]


@pytest.mark.skipif(not (REAL_LOGS2 / PM).is_dir(), reason="../shared/real_logs2 absent")
def test_a_clean_election_outside_the_held_isr_under_an_epoch_no_line_elects_is_a_named_hole():
    logs = "kafka_2.11-0.10.2.0/logs/"
    sc = "state-change.log.2017-06-27-11.gz"
    # controller 0 epoch 9 moves __consumer_offsets-36 from OnlinePartition to OnlinePartition with leader 1, at leader
    # epoch 6 (its own request line two lines on); no line of the evidence shows epoch 9 taking office, nor leader
    # epoch 5, nor broker 1 joining the ISR the replay last saw (leader 0, ISR 0, leader epoch 4, controller epoch 8)
    assert "Controller 0 epoch 9 changed partition [__consumer_offsets,36] from OnlinePartition to OnlinePartition " \
           "with leader 1" in _line(PM, logs + sc, 66)
    assert "(Leader:1,ISR:1,2,LeaderEpoch:6,ControllerEpoch:9)" in _line(PM, logs + sc, 68)
    res = _replay(PM, (sc, 66))
    (c,) = _at(res, sc, 66)
    assert c.verdict == J.UNKNOWN and c.reason == J.epochs_hole((9,)), c
