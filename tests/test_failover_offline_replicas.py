"""A controller's failover writes the ISRs of replicas on brokers it does not hold live (2.3.0+), from logs alone.

Independent truth: AndreasTraut's own lines (Kafka 2.8.0) and Kafka's source. 2.8.0
core/src/main/scala/kafka/controller/ReplicaStateMachine.scala: ``ReplicaStateMachine.startup`` moves the replicas of
brokers outside the live set to OfflineReplica, and ``ZkReplicaStateMachine.doRemoveReplicasFromIsr`` writes each ISR
holding such a replica (leader -1 if it led, the ISR kept when it was the last member) one leader epoch up, whether the
partition had a leader or not. The controller logs its live set just before ("Currently active brokers in the
cluster", ``KafkaController.initializeControllerContext``).
"""
import pytest

from conftest import REAL_LOGS, REAL_LOGS2, real_cluster_events, replayed_cluster
from forensics.pipeline import drop_log_copies, replay_order
from replay_engine.api import replay_cluster

NAME = "AndreasTraut__kafka_2.13-2.8.0"


def _at(res, file, line):
    (c,) = [c for c in res.comparisons if c.record.source_file.endswith("/" + file) and c.record.source_pos == line]
    return c


@pytest.mark.skipif(not (REAL_LOGS / NAME).is_dir(), reason="../shared/real_logs absent")
def test_a_failovers_isr_writes_whose_lines_are_missing_still_move_the_epoch():
    """__consumer_offsets-21: leader -1, ISR [1], leader epoch 3 at 10:30:37 (state-change.log.2021-04-26-20.gz:1272,
    broker 1 gone). Controller 0 takes office with epoch 4 at 10:55:07 and logs "Currently active brokers in the
    cluster: Set(0)" (controller.log.2021-04-27-10.gz:24): its ReplicaStateMachine writes the ISR [1] again at epoch
    4, a line no file of the evidence holds (state-change.log has none between 10:30:37 and 12:00:17). Its next
    record, "Changed partition __consumer_offsets-21 from OfflinePartition to OnlinePartition with state
    LeaderAndIsr(leader=1, leaderEpoch=5, isr=List(1), ...)" (state-change.log.2021-04-27-10.gz:6, broker 1 back),
    follows from that write: agreed, where the replay that left the write out (main) held epoch 4 and called it a
    state the evidence does not show. The same failover's 24 other partitions of broker 1 alike (:7 .. :30)."""
    res = replayed_cluster(NAME)
    c = _at(res, "state-change.log.2021-04-27-10.gz", 6)
    assert c.tp == ("__consumer_offsets", 21)
    assert c.recorded == {"leader": 1, "isr": [1], "leader_epoch": 5}
    assert c.verdict == "agreed" and c.replayed["leader_epoch"] == 5
    (write,) = [d for d in res.decisions if d.tp == c.tp and d.trigger is not None
                and d.trigger.source_file.endswith("/controller.log.2021-04-27-10.gz") and d.trigger.source_pos == 24]
    assert write.kind == "isr_removal" and write.after == {"leader": -1, "isr": [1], "leader_epoch": 4}
    assert [_at(res, "state-change.log.2021-04-27-10.gz", n).verdict for n in range(7, 31)] == ["agreed"] * 24


def test_a_failovers_isr_writes_are_made_one_after_the_other_as_its_lines_say():
    """airusong (Kafka 3.9.0): controller 0 takes office with epoch 5 at 15:40:31 and logs "Currently active brokers
    in the cluster: Set(0)" (kafka_2.13-3.9.0/logs/controller.log.gz:69): both other replicas of hello-producer-1-1
    leave its ISR, one write each: "... state changed to (Leader:-1,ISR:2,...,LeaderEpoch:2,...) after removing
    replica 1" (state-change.log.gz:45), then "(Leader:-1,ISR:2,...,LeaderEpoch:3,...) after removing replica 2"
    (:108, the last member kept). Between them broker 0 logs that it "cannot become follower since the new leader 1
    is unavailable" (:102): its handling of the request the failover sent before those writes, not a later state.
    Both records are the replay's own decisions at the failover, and agree (on main :108 diverged: the replay had
    taken leader 1 back from :102)."""
    name = "airusong__kafka"
    if not (REAL_LOGS2 / name).is_dir():
        pytest.skip("../shared/real_logs2 absent")
    events = drop_log_copies(sorted(real_cluster_events(name, folder="real_logs2"), key=replay_order))[0]
    res = replay_cluster(events, name)
    first, second = (_at(res, "state-change.log.gz", n) for n in (45, 108))
    assert first.tp == second.tp == ("hello-producer-1", 1)
    assert first.recorded == {"leader": -1, "isr": [2], "leader_epoch": 2} and first.verdict == "agreed"
    assert second.recorded == {"leader": -1, "isr": [2], "leader_epoch": 3} and second.verdict == "agreed"
    assert first.how == second.how == "trigger"


def test_the_registration_a_controller_wrote_for_an_alter_partition_is_its_state_from_then():
    """airusong (3.9.0): nse-eod-topic-1 was created with leader 1 at leader epoch 0 (state-change.log.2024-11-07-20.gz
    :16); on 2024-11-08 17:05:05 controller 0 logs the registration it wrote for an AlterPartition, "ISR for partition
    nse-eod-topic-1 updated to LeaderAndIsr(leader=0, leaderEpoch=1, ..., partitionEpoch=2)" (controller.log.2024-11-08-17
    .gz:749, 3.9.0-rc3 KafkaController.processAlterPartition): leader epoch 1, from an election no line of the evidence
    records. Its controlled shutdown's election of 2024-11-12 15:40:09 ("... with state LeaderAndIsr(leader=1,
    leaderEpoch=2, ...)", state-change.log.2024-11-08-17.gz:3) follows from that state: agreed (on main the replay held
    epoch 0 and filed it as a state the evidence does not show)."""
    name = "airusong__kafka"
    if not (REAL_LOGS2 / name).is_dir():
        pytest.skip("../shared/real_logs2 absent")
    events = drop_log_copies(sorted(real_cluster_events(name, folder="real_logs2"), key=replay_order))[0]
    res = replay_cluster(events, name)
    c = _at(res, "state-change.log.2024-11-08-17.gz", 3)
    assert c.tp == ("nse-eod-topic", 1) and c.recorded == {"leader": 1, "isr": [1, 2], "leader_epoch": 2}
    assert c.verdict == "agreed" and c.replayed["leader_epoch"] == 2
    # the same for the other four the controller's ISR lines state (:4 .. :6, and :19's ISR write of nse-eod-topic-2)
    assert [_at(res, "state-change.log.2024-11-08-17.gz", n).verdict for n in (4, 5, 6, 19)] == ["agreed"] * 4
