"""A controller the replay learns of from a state-change line (logs that start mid-tenure, no election
line) took office before the evidence: its failover's view of live brokers is not in the evidence.

Kafka (2.8.0 core/src/main/scala/kafka/controller/PartitionStateMachine.scala, initializePartitionState)
marks a partition OfflinePartition at failover only when its leader is not among the live brokers the
controller read from ZooKeeper. The replay must not take a partition offline because the few brokers it
has seen so far do not include the leader: here broker 15 itself logs that it leads events-021-404 before
and after the first record of controller 1, so the partition had a leader throughout (the independent
truth is the leader's own Partition lines). Lines in Kafka 2.8's formats, as samplegen's audit corpus
writes them for a 30-broker cluster; the replay took ~3,700 such partitions offline on its first 10 days.
"""
from pathlib import Path

from forensics.pipeline import replay_order
from forensics.sources import parse_folder_in_process
from replay_engine.api import replay_cluster

FILES = {
    "broker=15/server.log": [
        "[2023-01-01 15:07:42,265] INFO [Partition events-021-404 broker=15] Shrinking ISR from 15,29,30 to 15,29. "
        "Leader: (highWatermark: 684001432, endOffset: 684046760). Out of sync replicas: (brokerId: 30, "
        "endOffset: 683725127). (kafka.cluster.Partition)",
        "[2023-01-01 15:07:42,274] INFO [Partition events-021-404 broker=15] ISR updated to 15,29 and version "
        "updated to [1] (kafka.cluster.Partition)",
        "[2023-01-01 15:07:54,265] INFO [Partition events-021-404 broker=15] ISR updated to 15,29,30 and version "
        "updated to [2] (kafka.cluster.Partition)",
        "[2023-01-01 19:02:33,620] INFO [Partition events-021-404 broker=15] Shrinking ISR from 15,29,30 to 15,29. "
        "Leader: (highWatermark: 479507590, endOffset: 479584106). Out of sync replicas: (brokerId: 30, "
        "endOffset: 478986577). (kafka.cluster.Partition)",
        "[2023-01-01 19:02:33,629] INFO [Partition events-021-404 broker=15] ISR updated to 15,29 and version "
        "updated to [3] (kafka.cluster.Partition)",
    ],
    "broker=1/controller.log": [
        "[2023-01-01 18:46:31,009] INFO [Controller id=1] Shutting down broker 23 (kafka.controller.KafkaController)",
    ],
    "broker=1/state-change.log": [
        "[2023-01-01 18:46:31,012] INFO [Controller id=1 epoch=1] Changed partition events-010-22 from "
        "OnlinePartition to OnlinePartition with state LeaderAndIsr(leader=24, leaderEpoch=1, isr=List(24, 25), "
        "zkVersion=1) (state.change.logger)",
    ],
    "broker=23/server.log": [
        "[2023-01-01 18:46:31,000] INFO [KafkaServer id=23] shutting down (kafka.server.KafkaServer)",
        "[2023-01-01 18:46:31,002] INFO [KafkaServer id=23] Starting controlled shutdown (kafka.server.KafkaServer)",
    ],
}


def _replay(tmp_path: Path):
    for name, lines in FILES.items():
        f = tmp_path / "c" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("\n".join(lines) + "\n")
    events = parse_folder_in_process(tmp_path, "c")
    events.sort(key=replay_order)
    return replay_cluster(events, "c")


def test_an_inferred_tenure_does_not_take_offline_what_a_live_leader_leads(tmp_path):
    res = _replay(tmp_path)
    assert res.image.tenures and res.image.tenures[-1].controller == 1  # learnt from the state-change line
    ours = [iv for iv in res.intervals if (iv.topic, iv.partition) == ("events-021", 404)]
    assert ours and all(iv.view.leader == 15 and not iv.view.leaderless for iv in ours)
    assert ours[-1].end is None  # through the leader's own 19:02 lines to the end of the evidence
    assert not res.leaderless
