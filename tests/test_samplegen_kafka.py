"""The simulator's Kafka rules against independent truth: hand-derived tables and real ZooKeeper data."""
from __future__ import annotations

import json

import pytest

from samplegen.kafka import elections
from samplegen.kafka.assignment import assign_replicas
from samplegen.kafka.scala import mutable_hashmap_order
from tests.conftest import ZK_REAL


def test_assignment_matches_hand_derivation():
    # AdminUtils rack-unaware, brokers [1,2,3], start index 0, shift 0, RF 2 (worked by hand in
    # sample_logs/unclean_election/README.md).
    assert assign_replicas(6, 2, [3, 1, 2], start_index=0, replica_shift=0) == {
        0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3], 4: [2, 1], 5: [3, 2]}
    # RF 1 with start index 1: broker [1,2,3][(p+1) % 3]; partition 101 on broker 1 (rf1_broker_kill).
    rf1 = assign_replicas(300, 1, [1, 2, 3], start_index=1, replica_shift=0)
    assert rf1[101] == [1]
    assert [p for p, r in rf1.items() if r == [1]] == list(range(2, 300, 3))


def _real_assignment(scenario: str, topic: str) -> dict[int, list[int]]:
    for f in sorted((ZK_REAL / scenario / "oracle").glob("log.*.txns.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if r.get("type") == "create2" and r["txn"]["path"] == f"/brokers/topics/{topic}":
                return {int(k): v for k, v in json.loads(r["txn"]["data"])["partitions"].items()}
    raise AssertionError(f"{topic} not created in {scenario}")


def test_assignment_reproduces_a_real_kafka_assignment():
    # zk_real s1: __consumer_offsets, 50 x RF 3 over [1,2,3]; partition 0 is [2,1,3] so Kafka drew
    # start index 1 and replica shift 1.
    real = _real_assignment("s1_single_replica_kill", "__consumer_offsets")
    assert assign_replicas(50, 3, [1, 2, 3], start_index=1, replica_shift=1) == real


def test_partition_keys_in_scala_hashmap_order_like_real_kafka():
    for f in sorted((ZK_REAL / "s1_single_replica_kill" / "oracle").glob("log.*.txns.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if r.get("type") == "create2" and r["txn"]["path"] == "/brokers/topics/__consumer_offsets":
                keys = list(json.loads(r["txn"]["data"])["partitions"])
                assert mutable_hashmap_order(sorted(keys, key=int)) == keys
                return
    pytest.fail("no __consumer_offsets creation in s1")


# (assignment, isr, live, allow_unclean) -> (leader, new isr, unclean): controller-semantics.md section 6.
OFFLINE_CASES = [
    ([1, 2, 3], [1, 2, 3], {2, 3}, False, (2, [2, 3], False)),
    ([1], [1], {2, 3}, False, (None, [1], False)),  # RF 1: nothing to elect
    ([1, 2], [1], {2, 3}, False, (None, [1], False)),  # live replica outside the ISR, unclean disabled
    ([1, 2], [1], {2, 3}, True, (2, [2], True)),  # ... unclean enabled: stale replica leads
    ([3, 1, 2], [1, 2], {1, 2, 3}, False, (1, [1, 2], False)),  # AR order, not ISR order
]


@pytest.mark.parametrize("assignment,isr,live,unclean,expected", OFFLINE_CASES)
def test_offline_election(assignment, isr, live, unclean, expected):
    assert elections.offline(assignment, isr, live, unclean) == expected


def test_controlled_shutdown_and_preferred_elections():
    assert elections.controlled_shutdown([1, 2, 3], [1, 2, 3], {1, 2, 3}, {1}) == (2, [2, 3])
    assert elections.controlled_shutdown([1], [1], {1, 2}, {1}) == (None, [1])
    assert elections.preferred([1, 2, 3], [2, 3, 1], {1, 2, 3}) == (1, [2, 3, 1])
    assert elections.preferred([1, 2, 3], [2, 3], {1, 2, 3}) == (None, [2, 3])


def test_removing_the_last_isr_member_keeps_it_and_drops_the_leader():
    assert elections.remove_from_isr(1, [1], 1) == (-1, [1])
    assert elections.remove_from_isr(2, [2, 1], 1) == (2, [2])
    assert elections.remove_from_isr(1, [1, 2], 1) == (-1, [2])
