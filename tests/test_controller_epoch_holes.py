"""A record decided on a state changed in controller epochs no line names is a hole in the evidence, named.

Every controller epoch is one election (2.8.0 core/src/main/scala/kafka/zk/KafkaZkClient.scala,
registerControllerAndIncrementControllerEpoch: the epoch znode goes up by one per controller elected), and each
controller writes its partition decisions under its own epoch (``ControllerEpoch`` in the state it writes). When a
partition's record is ahead of the state the replay holds and controller epochs between the partition's last write and
the record were held by controllers none of whose lines is in the evidence, what they decided is missing: an evidence
hole naming those epochs (the ZooKeeper-mode like of KRaft's quorum epochs in no line), off the measure's denominator,
not a contradiction of the replay's state.
"""
import copy
import gzip

import pytest

from conftest import REAL_LOGS, REAL_LOGS2, real_cluster_events
from forensics.pipeline import split_clusters
from replay_engine.common import judge as J
from replay_engine.api import replay_cluster

NAME = "AndreasTraut__kafka_2.13-2.8.0"


@pytest.mark.skipif(not (REAL_LOGS / NAME).is_dir(), reason="../shared/real_logs absent")
def test_a_record_after_controller_epochs_no_line_names_is_a_named_hole():
    """UbuntuTopic-0 (Kafka 2.8.0): "[Controller id=1 epoch=6] ... (Leader:1,ISR:1,LeaderEpoch:7,ControllerEpoch:6)"
    at 2021-05-05 10:19:18 (state-change.log.2021-05-05-10.gz), then "[Controller id=1 epoch=8] ...
    (Leader:1,ISR:1,LeaderEpoch:10,ControllerEpoch:8) after removing replica 0" at 14:40:10
    (state-change.log.2021-05-05-13.gz:36): leader epochs 8 and 9 were written in between, and controller epoch 7 is
    named by no line of that cluster's evidence (the folder's earlier incarnation, another cluster id, has its own
    epoch 7). Replayed as the command replays the folder (its clusters told apart), the record is a hole naming
    epoch 7, and epoch 8 too: no line shows controller 1 taking office in it either (its first line, "[Controller
    id=1 epoch=8] Sending UpdateMetadata request ..." at 14:40:10.243, is already its failover's work); on main it
    was 'decided on a state the evidence does not show', counted against the replay."""
    # split_clusters names each event's cluster in place: on copies, the cached events are shared
    events, _ = split_clusters([copy.copy(e) for e in real_cluster_events(NAME)])
    at = ("state-change.log.2021-05-05-13.gz", 36)
    (mine,) = {e.cluster for e in events if e.source_file.endswith("/" + at[0]) and e.source_pos == at[1]}
    ours = [e for e in events if e.cluster == mine]
    # independent of the replay: no line of this cluster is written under controller epoch 7, nor elects it
    files = sorted({e.source_file for e in ours if "controller.log" in e.source_file or "state-change" in e.source_file})
    assert any("state-change.log.2021-05-05-1" in f for f in files)
    for f in files:
        text = gzip.decompress((REAL_LOGS / f).read_bytes()).decode("utf-8", "replace") if f.endswith(".gz") \
            else (REAL_LOGS / f).read_text("utf-8", "replace")
        lines = [ln for ln in text.splitlines() if ln.startswith("[2021-05-0")]
        assert not [ln for ln in lines if "epoch=7]" in ln or "Epoch incremented to 7 " in ln], f
    res = replay_cluster(ours, mine)
    (c,) = [c for c in res.comparisons if c.record.source_file.endswith("/" + at[0]) and c.record.source_pos == at[1]]
    assert c.tp == ("UbuntuTopic", 0) and c.recorded["leader_epoch"] == 10
    assert c.verdict == J.UNKNOWN and c.reason == J.epochs_hole((7, 8))
    assert J.tally([c])["evidence_gaps"] == 1


def test_the_hole_names_each_run_of_epochs():
    assert J.epochs_hole((5, 6, 7, 9)).startswith("evidence gap (controller epoch(s) 5-7, 9 in no line")
    assert J.epochs_hole((4,)).startswith("evidence gap (controller epoch(s) 4 in no line")


@pytest.mark.skipif(not (REAL_LOGS2 / "jay0911__kafka-docker").is_dir(), reason="../shared/real_logs2 absent")
def test_the_epochs_are_counted_from_the_last_state_a_line_showed_not_from_the_replays_own_step():
    """jay0911 (Kafka 2.7.0): controller 0's "All leaders = ... __consumer_offsets-22 -> (Leader:0,ISR:0,
    LeaderEpoch:2,ControllerEpoch:5)" (kafka_2.13-2.7.0/logs/controller.log.2021-11-10-15.gz:11, 16:02:47) is the
    last line on the partition before controller 1 takes office with epoch 14 at 17:01:48 (no election line for
    epochs 6 to 13) and records "(Leader:-1,ISR:0,LeaderEpoch:17,ControllerEpoch:14) after removing replica 0"
    (state-change.log.2021-11-10-16.gz:2). The replay's own failover step in epoch 14 (leader epoch 3) does not hide
    the epochs no line names: the record is a hole naming 6-13."""
    name = "jay0911__kafka-docker"
    events, _ = split_clusters([copy.copy(e) for e in real_cluster_events(name, folder="real_logs2")])
    at = ("state-change.log.2021-11-10-16.gz", 2)
    (mine,) = {e.cluster for e in events if e.source_file.endswith("/" + at[0]) and e.source_pos == at[1]}
    res = replay_cluster([e for e in events if e.cluster == mine], mine)
    (c,) = [c for c in res.comparisons if c.record.source_file.endswith("/" + at[0]) and c.record.source_pos == at[1]]
    assert c.tp == ("__consumer_offsets", 22) and c.recorded["leader_epoch"] == 17
    assert c.reason == J.epochs_hole(tuple(range(6, 14)))


@pytest.mark.skipif(not (REAL_LOGS / NAME).is_dir(), reason="../shared/real_logs absent")
def test_a_line_without_the_leader_epoch_does_not_hide_the_epochs_no_line_names():
    """__consumer_offsets-22 (Kafka 2.8.0): controller 0 (epoch 7) elects leader 0 at leader epoch 2
    (state-change.log.2021-04-28-16.gz:1510, 11:31:58); broker 0's "Received LeaderAndIsrRequest ... from controller 0
    epoch 9 ... (last update controller epoch 8) but cannot become follower since the new leader -1 is unavailable"
    (:1684, 16:09:15; 2.8.0 ReplicaManager.makeFollowers) names no leader epoch; controller 0 (epoch 9) then elects
    leader 0 at leader epoch 4 (:2400). Epoch 3 was written under controller epoch 8, which no line of the cluster
    elects or writes under: a hole naming epoch 8. On main the broker's line counted as a state stated under epoch 9
    and the record was 'decided on a state the evidence does not show', counted against."""
    events, _ = split_clusters([copy.copy(e) for e in real_cluster_events(NAME)])
    at = ("state-change.log.2021-04-28-16.gz", 2400)
    (mine,) = {e.cluster for e in events if e.source_file.endswith("/" + at[0]) and e.source_pos == at[1]}
    ours = [e for e in events if e.cluster == mine]
    # independent of the replay: no line of this cluster is written under controller epoch 8, nor elects it
    assert not [e for e in ours if e.controller_epoch == 8 and e.event_type in ("controller_elected",
                                                                                 "partition_state_change",
                                                                                 "partition_leader_isr_written")]
    res = replay_cluster(ours, mine)
    (c,) = [c for c in res.comparisons if c.record.source_file.endswith("/" + at[0]) and c.record.source_pos == at[1]]
    assert c.tp == ("__consumer_offsets", 22) and c.recorded["leader_epoch"] == 4
    assert c.reason == J.epochs_hole((8,))
