"""Broker state the records show (issue 44 class 1), on cited real lines of ../shared/real_logs2.

Independent truth: the lines and Kafka's source. 2.7.0 PartitionStateMachine.scala
PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection (0.10.2.0 OfflinePartitionLeaderSelector.selectLeader):
an offline election takes the first assigned replica in the ISR that ``isReplicaOnline`` holds, so a failed one shows
every ISR member not eligible to the controller; 2.1.0 KafkaController.doControlledShutdown runs the
ControlledShutdownPartitionLeaderElectionStrategy only for partitions led by a broker it has put in
``shuttingDownBrokerIds``.
"""
import pytest

from conftest import REAL_LOGS2, real_cluster_events
from forensics.pipeline import drop_log_copies, replay_order
from replay_engine.common import judge as J
from replay_engine.api import replay_cluster, zk_replay_of
from replay_engine.common.brokers import RULE_SHUTDOWN_MOVE, SHUTTING


def _events(name):
    if not (REAL_LOGS2 / name).is_dir():
        pytest.skip("../shared/real_logs2 absent")
    events = sorted(real_cluster_events(name, folder="real_logs2"), key=replay_order)
    return drop_log_copies(events)[0]  # as 'kafka-forensics replay' reads a folder


def _at(res, file, line):
    (c,) = [c for c in res.comparisons if c.record.source_file.endswith(file) and c.record.source_pos == line]
    return c


def test_a_failed_election_the_replay_would_have_won_puts_the_brokers_state_right():
    """Raghavendralacharya (Kafka 2.3.0), state-change.log.2019-08-22-14.gz:92: "[Controller id=1 epoch=36] ...
    failed to change state for partition __consumer_offsets-22 from OfflinePartition to OnlinePartition ...
    OfflinePartitionLeaderElectionStrategy" at 15:25:58,767, while the replay held broker 0 (its ISR) eligible and
    elected it. The record shows broker 0 not eligible to controller 1: adopted from that line (a
    broker_state_adopted finding), the record itself not agreed. The next failed election of the same batch
    (:114, __consumer_offsets-30) follows from the adopted state and agrees (on main it diverged too)."""
    name = "Raghavendralacharya__kafka-node"
    res = replay_cluster(_events(name), name)
    first = _at(res, "state-change.log.2019-08-22-14.gz", 92)
    assert first.tp == ("__consumer_offsets", 22) and not first.agreed
    assert first.verdict == J.DIVERGED or first.reason.startswith(J.ADOPTED)  # against the agreement, not a gap
    assert first.implied == (frozenset(), frozenset({0}))
    (finding,) = [f for f in res.image.findings if f["kind"] == "broker_state_adopted"
                  and f["evidence"][0]["source_file"].endswith("state-change.log.2019-08-22-14.gz")
                  and f["evidence"][0]["source_pos"] == 92]
    assert finding["brokers"] == [0] and "broker 0 not eligible" in finding["text"]
    second = _at(res, "state-change.log.2019-08-22-14.gz", 114)
    assert second.tp == ("__consumer_offsets", 30) and second.agreed
    assert second.recorded == second.replayed == {"leader": -1, "failed": True}


def test_a_failed_controlled_shutdown_move_shows_its_leader_shutting_down():
    """DeepakPatwa (Kafka 2.1.0), state-change.log.2019-02-05-10.gz:11-12: "[Controller id=0 epoch=1] ... failed to
    change state for partition my-replicated-topic-0 from OnlinePartition to OnlinePartition ... Failed to elect
    leader ... under strategy ControlledShutdownPartitionLeaderElectionStrategy" at 10:51:36,387; the partition's
    leader, by :6 of the same file, is 0: the controller's own broker. No line of the evidence states broker 0's
    controlled shutdown being taken up; this one does, by Kafka's rule."""
    ctrl, stream = zk_replay_of(_events("DeepakPatwa__Data1"))
    ctrl.run(stream.facts, stream.trace_end)
    (c,) = [c for c in ctrl.brokers.history(0) if c.field == SHUTTING and c.value and c.ref.source_pos == 11
            and c.ref.source_file.endswith("state-change.log.2019-02-05-10.gz")]
    assert c.rule == RULE_SHUTDOWN_MOVE and "doControlledShutdown" in c.rule
    assert c.ref.text.startswith("[2019-02-05 10:51:36,387] ERROR [Controller id=0 epoch=1]")


def test_an_election_aborted_by_the_controller_epoch_fence_says_nothing_of_the_brokers():
    """danisharora (Kafka 0.9.0.0), state-change.log.2016-11-15-16.gz:262-263: "Controller 2 epoch 39 initiated state
    change for partition [__consumer_offsets,19] from OfflinePartition to OnlinePartition failed ... aborted leader
    election ... since the LeaderAndIsr path was already written by another controller ... another controller was
    elected with epoch 40" (17:50:51). 0.9.0.0 PartitionStateMachine.electLeaderForPartition throws before any leader
    selector runs when the state's controller epoch is above its own: no election rule, no view of live brokers. The
    record shows the partition written under epoch 40 (a write no earlier line shows): that state is adopted and the
    record counts against, no broker is taken as not eligible from it (on main: diverged, judged as an offline
    election, and broker states adopted from it), and :293 (__consumer_offsets-47) is no longer 'agreed' by accident."""
    name = "danisharora__helloworld"
    res = replay_cluster(_events(name), name)
    for line, tp in ((262, ("__consumer_offsets", 19)), (293, ("__consumer_offsets", 47))):
        c = _at(res, "state-change.log.2016-11-15-16.gz", line)
        assert c.tp == tp and c.verdict == J.UNKNOWN and c.reason.startswith(J.ADOPTED)
        assert "controller epoch 40" in c.reason and "fence" in c.reason and c.implied is None
    cited = {(e["source_file"].rsplit("/", 1)[-1], e["source_pos"]) for f in res.image.findings
             if f["kind"] == "broker_state_adopted" for e in f["evidence"]}
    assert not {x for x in cited if x[0] == "state-change.log.2016-11-15-16.gz" and 262 <= x[1] <= 800}
