"""ZooKeeper mode: an OnlinePartition -> OfflinePartition move shows its leader gone to the controller, and a divergence
that stays is a rule_departure finding naming its rule row.

Kafka takes a partition to OfflinePartition when its leader is not live to the controller (0.10.2.0
core/src/main/scala/kafka/controller/KafkaController.scala onBrokerFailure, 'partitionsWithoutLeader'; 2.3.0
onReplicasBecomeOffline: leader not isReplicaOnline), a topic deletion's step aside. A recorded decision the replay
still judges against is filed as a finding naming the rule row of the release it departs from (tag, file,
function), as KRaft's are (replay_engine.kraft.evidence.departure_findings).
"""
import gzip

import pytest

from conftest import REAL_LOGS2, real_cluster_events
from forensics.pipeline import drop_log_copies, replay_order
from replay_engine.api import replay_cluster
from replay_engine.common import judge as J
from replay_engine.common.brokers import RULE_LEADER_OFFLINE

NAME = "Raghavendralacharya__kafka-node"
LOGS = NAME + "/kafka_2.12-2.3.0/logs/"
pytestmark = pytest.mark.skipif(not (REAL_LOGS2 / NAME).is_dir(), reason="../shared/real_logs2 absent")


def _line(rel: str, n: int) -> str:
    return gzip.decompress((REAL_LOGS2 / LOGS / rel).read_bytes()).decode("utf-8", "replace").splitlines()[n - 1]


_RES = []


def _replayed():
    """The cluster replayed as ``kafka-forensics replay`` replays it (its order, a log entry held twice once), and the
    broker-state changes the replay made by RULE_LEADER_OFFLINE."""
    if not _RES:
        import replay_engine.common.brokers as B

        gone, orig = [], B.BrokerStates.implied_live

        def spy(self, brokers, ref, live=True, rule=None):
            if rule == RULE_LEADER_OFFLINE:
                gone.append((tuple(brokers), ref.cite()))
            return orig(self, brokers, ref, live, rule)

        B.BrokerStates.implied_live = spy
        try:
            events = drop_log_copies(sorted(real_cluster_events(NAME, "real_logs2"), key=replay_order))[0]
            _RES.append((replay_cluster(events, NAME), gone))
        finally:
            B.BrokerStates.implied_live = orig
    return _RES[0]


def _at(res, rel: str, n: int):
    return [c for c in res.comparisons if c.record.source_file == LOGS + rel and c.record.source_pos == n]


def test_a_partition_taken_offline_shows_its_leader_gone_to_the_controller():
    # broker 2 caches topic126-0 led by 0 (controller epoch 35) at 14:28:07; controller 1 takes it offline at
    # 15:25:58.452, then fails to elect __consumer_offsets-22, whose only replica is 0, at .767
    assert "leader=0, leaderEpoch=5" in _line("state-change.log.2019-08-22-11.gz", 67) \
        and "for partition topic126-0" in _line("state-change.log.2019-08-22-11.gz", 67)
    assert "Changed partition topic126-0 state from OnlinePartition to OfflinePartition" \
        in _line("state-change.log.2019-08-22-14.gz", 3)
    assert "failed to change state for partition __consumer_offsets-22 from OfflinePartition to OnlinePartition" \
        in _line("state-change.log.2019-08-22-14.gz", 92)
    res, gone = _replayed()
    assert ((0,), LOGS + "state-change.log.2019-08-22-14.gz:3") in gone
    (c,) = _at(res, "state-change.log.2019-08-22-14.gz", 92)
    assert c.tp == ("__consumer_offsets", 22) and c.verdict == J.AGREED, c


def test_a_divergence_that_stays_is_a_finding_naming_its_rule_row():
    # controller 0 epoch 101, deposed (controller 2 took epoch 102 before), fails to elect __consumer_offsets-22 on a
    # view of the live brokers no line states; the replay, with the acting controller's view, elects 0
    assert "Controller 0 epoch 101 failed to change state for partition __consumer_offsets-22" \
        in _line("state-change.log.2019-08-29-22.gz", 853)
    res, _ = _replayed()
    (c,) = _at(res, "state-change.log.2019-08-29-22.gz", 853)
    assert c.verdict == J.DIVERGED
    (f,) = [f for f in res.image.findings if f.get("kind") == "rule_departure"
            and any(e.get("source_file") == LOGS + "state-change.log.2019-08-29-22.gz" and e.get("source_pos") == 853
                    for e in f["evidence"])]
    assert (f["rule"], f["rule_name"]) == ("zk.election.offline", "offlinePartitionLeaderElection")
    assert f["cite"] == ("1.1.0 core/src/main/scala/kafka/controller/PartitionStateMachine.scala "
                         "PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection")
    # every diverged comparison of the run has its finding, and no agreed one
    departed = {(e["source_file"], e["source_pos"]) for f in res.image.findings if f.get("kind") == "rule_departure"
                for e in f["evidence"]}
    assert departed == {(c.record.source_file, c.record.source_pos) for c in res.comparisons
                        if c.verdict == J.DIVERGED}
