"""Kafka's replica assignment, checked against assignments real Kafka made (zk_real ground truth) and by hand."""
import json

from conftest import ZK_REAL
from replay_engine.estimates.assignment import (assign_rack_aware, assign_rack_unaware, extend_replication, rack_alternated,
                                      replica_index)


def test_rack_unaware_matches_kafkas_worked_example():
    # Hand-derived from AdminUtils' doc comment (5 brokers, 10 partitions, RF 3, start index 0, shift 0):
    # p0: 0 1 2, p1: 1 2 3, p2: 2 3 4, p3: 3 4 0, p4: 4 0 1, p5: 0 2 3, p6: 1 3 4, ...
    a = assign_rack_unaware([0, 1, 2, 3, 4], 10, 3, start_index=0, replica_shift=0)
    assert a[0] == [0, 1, 2] and a[4] == [4, 0, 1]
    assert a[5] == [0, 2, 3] and a[6] == [1, 3, 4] and a[9] == [4, 1, 2]


def test_scenario_dw_test_start_index_0():
    # s1: dw_test RF=1 created with start index 0 over brokers 1,2,3 (README: partitions 1 and 4 on broker 2)
    truth = json.loads((ZK_REAL / "s1_single_replica_kill" / "ground_truth.json").read_text())
    created = next(e for e in truth["events"] if e["kind"] == "create_topic" and e["topic"] == "dw_test")
    got = assign_rack_unaware([1, 2, 3], 6, 1, start_index=0)
    assert {str(p): r for p, r in got.items()} == created["assignment"]


def test_replica_index_wraps_past_the_first_replica():
    assert [replica_index(2, 0, j, 4) for j in range(3)] == [3, 0, 1]


def test_rack_alternated_order():
    assert rack_alternated({1: "a", 2: "a", 3: "b", 4: "c", 5: "b"}) == [1, 3, 4, 2, 5]


def test_rack_aware_spreads_replicas_over_racks():
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    a = assign_rack_aware(racks, 12, 3, start_index=0)
    for reps in a.values():
        assert len({racks[b] for b in reps}) == 3 and len(set(reps)) == 3


def test_extend_replication_keeps_the_preferred_leader():
    cur = {p: [p % 3 + 1] for p in range(6)}  # RF=1 round robin over 1,2,3
    new = extend_replication(cur, [1, 2, 3], 3)
    for p, reps in new.items():
        assert reps[0] == cur[p][0] and sorted(reps) == [1, 2, 3]
