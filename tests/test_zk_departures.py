"""ZooKeeper mode: a divergence that stays is a rule_departure finding naming its rule row.

A recorded decision the replay still judges against is filed as a finding naming the rule row of the release it departs from (tag, file,
function), as KRaft's are (replay_engine.kraft.evidence.departure_findings).
"""
import gzip

import pytest

from conftest import REAL_LOGS2, real_cluster_events
from forensics.pipeline import drop_log_copies, replay_order
from replay_engine.api import replay_cluster
from replay_engine.common import judge as J

NAME = "Raghavendralacharya__kafka-node"
LOGS = NAME + "/kafka_2.12-2.3.0/logs/"
pytestmark = pytest.mark.skipif(not (REAL_LOGS2 / NAME).is_dir(), reason="../shared/real_logs2 absent")


def _line(rel: str, n: int) -> str:
    return gzip.decompress((REAL_LOGS2 / LOGS / rel).read_bytes()).decode("utf-8", "replace").splitlines()[n - 1]


_RES = []


def _replayed():
    """The cluster replayed as ``kafka-forensics replay`` replays it (its order, a log entry held twice once)."""
    if not _RES:
        events = drop_log_copies(sorted(real_cluster_events(NAME, "real_logs2"), key=replay_order))[0]
        _RES.append(replay_cluster(events, NAME))
    return _RES[0]


def _at(res, rel: str, n: int):
    return [c for c in res.comparisons if c.record.source_file == LOGS + rel and c.record.source_pos == n]


def test_a_divergence_that_stays_is_a_finding_naming_its_rule_row():
    # controller 0 epoch 101, deposed (controller 2 took epoch 102 before), fails to elect __consumer_offsets-22 on a
    # view of the live brokers no line states; the replay, with the acting controller's view, elects 0
    assert "Controller 0 epoch 101 failed to change state for partition __consumer_offsets-22" \
        in _line("state-change.log.2019-08-29-22.gz", 853)
    res = _replayed()
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
