"""What 0.8-0.11 lines say of a partition, read as the release that wrote them (real_logs2, Kafka 0.10.2).

Independent truth: the cited lines of the clusters' own logs and Kafka's source at the release tags.
"""
import gzip

import pytest

from conftest import SHARED, replayed_cluster
from replay_engine import rules as R

PMITRA = "pmitra43__kafka_load_generator"
PM_LOGS = f"{PMITRA}/kafka_2.11-0.10.2.0/logs/"
SO3500 = "so3500__volttron-kafka"
SO_LOGS = f"{SO3500}/kafka_2.12-0.10.2.1/logs/"


@pytest.fixture(scope="module")
def pmitra():
    return replayed_cluster(PMITRA, "real_logs2")


@pytest.fixture(scope="module")
def so3500():
    return replayed_cluster(SO3500, "real_logs2")


def line(path: str, n: int) -> str:
    with gzip.open(SHARED / "real_logs2" / path, "rt") as fh:
        for i, text in enumerate(fh, 1):
            if i == n:
                return text
    raise AssertionError(f"{path} has no line {n}")


def judged(res, cite: str):
    hits = [c for c in res.comparisons if (c.record.cite() or "").endswith(cite)]
    assert len(hits) == 1, (cite, hits)
    return hits[0]


def test_a_brokers_replica_list_is_a_set_before_0_11():
    # 0.9.0.0 kafka/api/LeaderAndIsrRequest.scala PartitionStateInfo.readFrom: replicas.toSet (Scala Set1..Set4 keep
    # the order added, five or more a HashSet); 0.10.2.0 LeaderAndIsrRequest.java: new HashSet<>(replicasArray.length);
    # 0.11.0.0 PartitionState.java: List<Integer> replicas (KAFKA-5329).
    order = "zk.line.replicas_order"
    assert R.decide(order, (0, 9, 0), 3) and not R.decide(order, (0, 9, 0), 5)
    assert not R.decide(order, (0, 10, 0), 3) and not R.decide(order, (0, 10, 2), 2)
    assert R.decide(order, (0, 10, 2), 1)  # one replica has no order to lose
    assert R.decide(order, (0, 11, 0), 5) and R.decide(order, (3, 9, 0), 3)


def test_a_set_of_replicas_does_not_reorder_the_assignment(pmitra):
    # The controller states __consumer_offsets-47's assignment in order, "Assigned replicas are: [List(2, 1, 0)]"
    # (state-change.log.2017-06-26-19.gz line 431, 0.10.2.0 OfflinePartitionLeaderSelector); broker 0 then lists
    # "AllReplicas:0,1,2" (a HashSet). Elected at line 2391 "with leader 2": the first live assigned replica in
    # the live ISR [2, 1, 0] is 2, as the List says; the set's order gave 0 (a divergence on main before).
    assert "Assigned replicas are: [List(2, 1, 0)]" in line(PM_LOGS + "state-change.log.2017-06-26-19.gz", 431)
    rec = line(PM_LOGS + "state-change.log.2017-06-26-19.gz", 2391)
    assert "changed partition [__consumer_offsets,47] from OfflinePartition to OnlinePartition with leader 2" in rec
    c = judged(pmitra, "state-change.log.2017-06-26-19.gz:2391")
    assert c.agreed and c.replayed["leader"] == 2
    # the partition's other decisions follow the List's order too (elsewhere in the cluster, offline elections
    # whose ISR or brokers' liveness no line shows diverge: issue 44's remaining class 1)
    assert not any(o.verdict == "diverged" for o in pmitra.comparisons if o.tp == c.tp)


def test_the_controllers_list_of_preferred_replicas_is_the_assignment_in_order(so3500):
    # my-replicated-topic-0's assignment is [1, 2, 0]: 0.10.2.0 KafkaController.checkAndTriggerPartitionRebalance
    # logs it every 5 minutes at DEBUG, "preferred replicas by broker Map(... [my-replicated-topic,0] -> List(1, 2,
    # 0) ...)" (controller.log.2017-09-07-13.gz line 44, 16:35:25, controller 1); broker lines list it as a set,
    # "replicas=[0, 1, 2]" (state-change.log.2017-09-07-16.gz line 56). The election at controller.log.2017-09-07-16.gz
    # line 26 ("Select 2 from ISR 2,0", 16:38:30): the first live assigned replica in the live ISR [2, 0] is 2.
    assert "[my-replicated-topic,0] -> List(1, 2, 0)" in line(SO_LOGS + "controller.log.2017-09-07-13.gz", 44)
    assert "replicas=[0, 1, 2]" in line(SO_LOGS + "state-change.log.2017-09-07-16.gz", 56)
    assert '"leader":2' in line(SO_LOGS + "controller.log.2017-09-07-16.gz", 26)
    c = judged(so3500, "controller.log.2017-09-07-16.gz:26")
    assert c.agreed and c.replayed["leader"] == 2


def test_the_controllers_update_metadata_line_states_the_isr(so3500):
    # 0.10.2.0 ControllerChannelManager.sendRequestsToBrokers, TRACE: "Controller 1 epoch 12 sending UpdateMetadata
    # request (Leader:1,ISR:1,0,LeaderEpoch:14,ControllerEpoch:12) ... for partition __consumer_offsets-9"
    # (state-change.log.2017-09-25-18.gz line 3109), after an ISR change notification: broker 0 is back in the ISR,
    # so the auto-rebalance preferred election of line 3557 ("from OnlinePartition to OnlinePartition with leader 0",
    # 0.10.2.0 PreferredReplicaPartitionLeaderSelector: the preferred replica live and in the ISR) follows; without
    # the line the replay held ISR [1] and judged it diverged.
    assert "(Leader:1,ISR:1,0,LeaderEpoch:14" in line(SO_LOGS + "state-change.log.2017-09-25-18.gz", 3109)
    c = judged(so3500, "state-change.log.2017-09-25-18.gz:3557")
    assert c.agreed and c.replayed["leader"] == 0
    assert not any(o.verdict == "diverged" for o in so3500.comparisons if o.tp == c.tp)


def test_a_failed_offline_election_puts_the_partition_offline(so3500):
    # state-change.log.2017-09-11-12.gz line 268: "initiated state change for partition [my-topic-1,0] from
    # OfflinePartition to OnlinePartition failed" (NoReplicaOnlineException, line 269: no live broker), a moment Kafka
    # states the partition had no leader, though the replay had not seen the partition's creation go Online.
    assert "from OfflinePartition to OnlinePartition failed" in line(SO_LOGS + "state-change.log.2017-09-11-12.gz", 268)
    ts = judged(so3500, "state-change.log.2017-09-11-12.gz:268").ts
    assert any(e.episode.topic == "my-topic-1" and e.episode.partition == 0 and e.episode.start <= ts
               and (e.episode.end is None or ts < e.episode.end) for e in so3500.leaderless)
