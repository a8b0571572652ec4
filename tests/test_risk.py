"""Pre-mortem risk against hand-derived expectations and the zk_real scenario before its kill."""
import json

from conftest import ZK_REAL
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from replay_engine.risk import PartitionState, pair_failures, partition_outcome, single_failures, states_from_replay


def ps(topic, p, reps, isr, leader, unclean=False, min_isr=1):
    return PartitionState((topic, p), tuple(reps), tuple(isr), leader, unclean, min_isr)


def test_partition_outcomes_by_hand():
    live = frozenset({1, 2, 3})
    assert partition_outcome(ps("t", 0, [1], [1], 1), frozenset({1}), live).leaderless == 1  # RF=1
    o = partition_outcome(ps("t", 0, [1, 2, 3], [1, 2, 3], 1, min_isr=2), frozenset({1}), live)
    assert (o.leaderless, o.leaders_moved, o.under_min_isr) == (0, 1, 0)
    o = partition_outcome(ps("t", 0, [1, 2], [1], 1, unclean=True), frozenset({1}), live)
    assert (o.leaderless, o.unclean) == (0, 1)
    o = partition_outcome(ps("t", 0, [1, 2, 3], [1, 2], 1, min_isr=2), frozenset({2}), live)
    assert (o.leaderless, o.under_min_isr) == (0, 1)  # follower lost, ISR [1] < 2: acks=all fails


def test_pairs_equal_brute_force():
    live = frozenset({1, 2, 3, 4})
    parts = [ps("t", i, reps, reps, reps[0], min_isr=2) for i, reps in
             enumerate([[1, 2, 3], [2, 3, 4], [3, 4, 1], [4, 1, 2], [1], [2, 4]])]
    pairs = pair_failures(parts, live)
    for (a, b), imp in pairs.items():
        brute = [partition_outcome(p, frozenset({a, b}), live) for p in parts]
        assert imp.leaderless == sum(x.leaderless for x in brute)
        assert imp.under_min_isr == sum(x.under_min_isr for x in brute)
        assert imp.leaders_moved == sum(x.leaders_moved for x in brute)


def test_s1_before_the_kill_counts_rf1_partitions_per_broker():
    truth = json.loads((ZK_REAL / "s1_single_replica_kill" / "ground_truth.json").read_text())
    kill = next(e for e in truth["events"] if e["kind"] == "broker_kill9")
    events = []
    for f in sorted((ZK_REAL / "s1_single_replica_kill" / "version-2").iterdir()):
        evs, _ = parse_source(f.read_bytes(), SourceContext(str(f), cluster="zk"))
        events += [e for e in evs if e.event_type != "zk_txn" and e.ts <= kill["t_ms"] * 1000]
    res = replay_cluster(events, "zk")
    parts, live, _ = states_from_replay(res)
    singles = single_failures(parts, live)
    dw = next(e for e in truth["events"] if e["kind"] == "create_topic" and e["topic"] == "dw_test")
    for b in (1, 2, 3):
        on_b = [p for p, reps in dw["assignment"].items() if reps == [b]]
        # only dw_test (RF=1) goes leaderless; __consumer_offsets (RF=3) just moves leaders
        assert singles[b].leaderless == len(on_b) == 2
        assert set(singles[b].topics) == {"dw_test"}
        assert singles[b].leaders_moved > 0
    # the broker actually killed (2) is among the worst: losing it costs exactly dw_test-1 and dw_test-4
    assert sorted(p for p, reps in dw["assignment"].items() if reps == [2]) == ["1", "4"]
