"""Pre-mortem risk against hand-derived expectations, Kafka's source per release, and real clusters' states."""
import json

from conftest import ZK_REAL, replayed_cluster
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from replay_engine.estimates.risk import (Controller, PartitionState, controller_of, pair_failures, partition_outcome,
                                single_failures, states_from_replay)

ZK = Controller("zk", (2, 8, 0))


def ps(topic, p, reps, isr, leader, unclean=False, min_isr=1, elr=(), last_known_elr=()):
    return PartitionState((topic, p), tuple(reps), tuple(isr), leader, unclean, min_isr, tuple(elr),
                          tuple(last_known_elr))


def test_partition_outcomes_by_hand():
    live = frozenset({1, 2, 3})
    assert partition_outcome(ps("t", 0, [1], [1], 1), frozenset({1}), live, ZK).leaderless == 1  # RF=1
    o = partition_outcome(ps("t", 0, [1, 2, 3], [1, 2, 3], 1, min_isr=2), frozenset({1}), live, ZK)
    assert (o.leaderless, o.leaders_moved, o.under_min_isr) == (0, 1, 0)
    o = partition_outcome(ps("t", 0, [1, 2], [1], 1, unclean=True), frozenset({1}), live, ZK)
    assert (o.leaderless, o.unclean) == (0, 1)
    o = partition_outcome(ps("t", 0, [1, 2, 3], [1, 2], 1, min_isr=2), frozenset({2}), live, ZK)
    assert (o.leaderless, o.under_min_isr) == (0, 1)  # follower lost, ISR [1] < 2: acks=all fails


def test_pairs_equal_brute_force():
    live = frozenset({1, 2, 3, 4})
    parts = [ps("t", i, reps, reps, reps[0], min_isr=2) for i, reps in
             enumerate([[1, 2, 3], [2, 3, 4], [3, 4, 1], [4, 1, 2], [1], [2, 4]])]
    for ctl in (ZK, Controller("kraft", (3, 7, 0), elr_enabled=True)):
        _pairs_equal_brute_force(parts, live, ctl)


def _pairs_equal_brute_force(parts, live, ctl):
    pairs = pair_failures(parts, live, ctl)
    for (a, b), imp in pairs.items():
        brute = [partition_outcome(p, frozenset({a, b}), live, ctl) for p in parts]
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
    singles = single_failures(parts, live, controller_of(res))
    dw = next(e for e in truth["events"] if e["kind"] == "create_topic" and e["topic"] == "dw_test")
    for b in (1, 2, 3):
        on_b = [p for p, reps in dw["assignment"].items() if reps == [b]]
        # only dw_test (RF=1) goes leaderless; __consumer_offsets (RF=3) just moves leaders
        assert singles[b].leaderless == len(on_b) == 2
        assert set(singles[b].topics) == {"dw_test"}
        assert singles[b].leaders_moved > 0
    # the broker actually killed (2) is among the worst: losing it costs exactly dw_test-1 and dw_test-4
    assert sorted(p for p, reps in dw["assignment"].items() if reps == [2]) == ["1", "4"]


# ---------------------------------------------------------------- the cluster's own controller, per mode and release


def test_kraft_elects_an_eligible_leader_replica_where_zookeeper_mode_finds_none():
    # replicas [1, 2, 3], ISR [1] (leader 1), ELR [2]: broker 2 left the ISR below min.insync.replicas 2 with the
    # eligible.leader.replicas.version feature on. Broker 1 fails: handleBrokerFenced (3.7.0
    # ReplicationControlManager.generateLeaderAndIsrUpdates) builds a change with target ISR [] and, as
    # isValidNewLeader accepts an ELR member when the target ISR is empty (3.7.0 PartitionChangeBuilder), elects 2,
    # ISR [2]: no leaderless partition, but below min ISR. Without the feature (3.6), or by the ZooKeeper-mode rule
    # (no live ISR member, unclean election off), the partition has no leader.
    live = frozenset({1, 2, 3})
    p = ps("t", 0, [1, 2, 3], [1], 1, min_isr=2, elr=[2])
    o = partition_outcome(p, frozenset({1}), live, Controller("kraft", (3, 7, 0), elr_enabled=True))
    assert (o.leaderless, o.leaders_moved, o.unclean, o.under_min_isr) == (0, 1, 0, 1)
    for ctl in (Controller("kraft", (3, 6, 0)), Controller("kraft", (3, 7, 0), elr_enabled=False), ZK):
        assert partition_outcome(p, frozenset({1}), live, ctl).leaderless == 1, ctl


def test_kraft_fences_each_failed_broker_and_keeps_the_isr_with_elr():
    # ELR on, replicas [1, 2, 3], ISR [1, 2] (leader 1), min ISR 2: fencing 1 leaves target ISR [2] < 2, so 1 joins
    # the ELR (maybePopulateTargetElr) and 2 leads; fencing 2 (the pair) empties the ISR, ELR {1, 2}, neither
    # acceptable: no leader (3.7.0 PartitionChangeBuilder.electAnyLeader), and 3, never in sync, is not elected.
    live = frozenset({1, 2, 3})
    ctl = Controller("kraft", (3, 9, 0), elr_enabled=True)
    p = ps("t", 0, [1, 2, 3], [1, 2], 1, min_isr=2)
    one = partition_outcome(p, frozenset({1}), live, ctl)
    assert (one.leaderless, one.leaders_moved, one.under_min_isr) == (0, 1, 1)
    assert partition_outcome(p, frozenset({1, 2}), live, ctl).leaderless == 1
    # a single replica partition, as KRaft 4.x left GraphLogistics__kafka's topic (controller.log.gz line 51:
    # "Previous partition: PartitionRegistration(replicas=[1], ..., isr=[], elr=[1], lastKnownElr=[1], leader=-1"):
    # losing broker 1 leaves it leaderless
    assert partition_outcome(ps("t", 0, [1], [1], 1), frozenset({1}), live, ctl).leaderless == 1


def test_zookeeper_08_1_elects_in_isr_order():
    # 0.8.1.1 OfflinePartitionLeaderSelector: val newLeader = liveBrokersInIsr.head (the ISR's order);
    # 0.8.2.1 on: the first live assigned replica that is in the ISR. AR [3, 2, 1], ISR [1, 2, 3], 3 leads and fails.
    live = frozenset({1, 2, 3})
    p = ps("t", 0, [3, 2, 1], [3, 1, 2], 3, min_isr=1)
    old = Controller("zk", (0, 8, 1))
    assert partition_outcome(p, frozenset({3}), live, old).leaders_moved == 1
    from replay_engine import rules as R
    assert R.decide("zk.election.offline", old.version, p.replicas, p.isr, live - {3}, False).leader == 1
    assert R.decide("zk.election.offline", (0, 9, 0), p.replicas, p.isr, live - {3}, False).leader == 2


def test_zookeeper_09_cluster_elects_uncleanly_by_its_default():
    # danisharora__helloworld (Kafka 0.9.0.0): at the end of its evidence brokers 1 and 2 are live and its partitions
    # have an ISR of one broker, 2. 0.9.0.0 Defaults.UncleanLeaderElectionEnable = true (KIP-106 made it false in
    # 0.11) and OfflinePartitionLeaderSelector.selectLeader picks "the alive assigned replicas" when no ISR member is
    # live: losing broker 2 elects every partition it leads uncleanly, none is left leaderless.
    res = replayed_cluster("danisharora__helloworld", "real_logs2")
    ctl = controller_of(res)
    assert (ctl.mode, ctl.version) == ("zk", (0, 9, 0))
    parts, live, _ = states_from_replay(res)
    singles = single_failures(parts, live, ctl)
    led = [p for p in parts if p.leader == 2 and p.isr == (2,) and len(p.replicas) > 1]
    assert led and singles[2].unclean == len(led) and singles[2].leaderless == 0
    # the same state under a 1.1+ controller's rule and the 0.11+ default would leave them leaderless
    strict = [PartitionState(p.tp, p.replicas, p.isr, p.leader, False, p.min_isr) for p in led]
    assert single_failures(strict, live, Controller("zk", (1, 1, 0)))[2].leaderless == len(led)
