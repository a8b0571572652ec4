"""A controller that states no live broker holds none: its failed elections are judged on that, not left unknown.

2.3.0 core/src/main/scala/kafka/controller/KafkaController.scala, initializeControllerContext: the new controller reads
/brokers/ids and logs 'Currently active brokers in the cluster: Set(...)'; onControllerFailover then triggers the
offline partitions' elections (PartitionStateMachine.triggerOnlinePartitionStateChange), and with no replica online
each fails (PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection finds none). An empty stated set is a
known state. A record of a deposed controller is not judged on the one in office's view (its own view unknown).
"""
import copy
import gzip

import pytest

from conftest import REAL_LOGS2, real_cluster_events
from forensics.pipeline import drop_log_copies, replay_order
from replay_engine.api import replay_cluster
from replay_engine.common import judge as J

RG = "Raghavendralacharya__kafka-node"
LOGS = "kafka_2.12-2.3.0/logs/"


def _line(rel: str, n: int) -> str:
    return gzip.decompress((REAL_LOGS2 / RG / LOGS / rel).read_bytes()).decode("utf-8", "replace").splitlines()[n - 1]


def _at(res, rel: str, n: int):
    return [c for c in res.comparisons if c.record.source_file.endswith("/" + rel) and c.record.source_pos == n]


@pytest.mark.skipif(not (REAL_LOGS2 / RG).is_dir(), reason="../shared/real_logs2 absent")
def test_failed_elections_of_a_controller_that_stated_no_live_broker_agree():
    assert "[Controller id=2] Currently active brokers in the cluster: Set()" in _line("controller.log.2019-08-30-10.gz", 9)
    assert "[Controller id=2 epoch=102] Controller 2 epoch 102 failed to change state for partition " \
           "__consumer_offsets-22 from OfflinePartition to OnlinePartition" in _line("state-change.log.2019-08-28-21.gz", 172)
    # a deposed controller's failed election moments after: its own view of live brokers is in no line
    assert "[Controller id=0 epoch=101] Controller 0 epoch 101 failed to change state for partition " \
           "__consumer_offsets-13" in _line("state-change.log.2019-08-29-22.gz", 2239)
    events = drop_log_copies(sorted([copy.copy(e) for e in real_cluster_events(RG, "real_logs2")], key=replay_order))[0]
    res = replay_cluster(events, RG)
    (c,) = _at(res, "state-change.log.2019-08-28-21.gz", 172)
    assert c.verdict == J.AGREED, c
    (z,) = _at(res, "state-change.log.2019-08-29-22.gz", 2239)
    assert z.verdict == J.UNKNOWN and "live brokers unknown" in z.reason, z
