"""What-if on a KRaft cluster: both sides replayed by a KRaft controller that decides every partition change itself,
with the release's PartitionChangeBuilder rules (replay_engine/kraft/whatif.py, kraft_counterfactual.py).

Independent truth: the bundled sample kraft_broker_fenced (Kafka 3.9.0; its expected.json and README, derived by hand
from the scenario) and Kafka's source (3.9.0-rc3 metadata/.../controller/ReplicationControlManager.java
handleBrokerFenced / handleBrokerInControlledShutdown / handleBrokerUnfenced / generateLeaderAndIsrUpdates,
PartitionChangeBuilder.electAnyLeader; trunk PartitionChangeBuilder.canElectLastKnownLeader); for ELR a real 4.2.0
single node, BMTushyath__RFIDSAS, whose controller logged its last-known-leader elections.
"""
from __future__ import annotations

import pytest

from test_whatif_samples import expected, load, us
from replay_engine.estimates.whatif import ChangeError, parse_changes, whatif

SAMPLE = "kraft_broker_fenced"


@pytest.fixture(scope="module")
def fenced():
    return load(SAMPLE)


def run(evs, sets=(), ops=()):
    return whatif(evs, parse_changes(list(sets), list(ops)), SAMPLE)


def _episodes(res, topic, partition):
    return [(lp.episode.start, lp.episode.end) for lp in res.leaderless
            if (lp.episode.topic, lp.episode.partition) == (topic, partition) and lp.episode.end != lp.episode.start]


def test_the_baseline_is_the_trace_as_it_happened(fenced):
    exp = expected(SAMPLE)
    (lost,) = exp["leaderless"]
    tol = lost["tolerance_ms"] * 1000
    w = run(fenced, ["unclean.leader.election.enable=true"])
    for p in lost["partitions"]:
        [(start, end)] = _episodes(w.baseline, "payments", p)
        assert abs(start - us(lost["start"])) <= tol and abs(end - us(lost["end"])) <= tol
    # orders never leaderless (handleBrokerFenced moves its two leaderships in the fencing batch), and every partition
    # ends led as the real cluster's metadata log says (the recorded replay's final image): the fencing, the unfence's
    # elections, the AlterPartition ISR expansions and the periodic preferred elections replayed, not copied
    assert not [lp for lp in w.baseline.leaderless if lp.episode.topic == "orders" and lp.episode.end != lp.episode.start]
    real = {tp: p.leader for tp, p in w.recorded.image.partitions.items()}
    assert {tp: p.leader for tp, p in w.baseline.image.partitions.items()} == real
    assert real[("orders", 1)] == real[("orders", 4)] == 2  # the preferred leaderships given back at 10:13:01.5


def test_unclean_election_cannot_help_a_single_replica(fenced):
    d = run(fenced, ["unclean.leader.election.enable=true"]).to_json()
    assert d["changed_partitions"] == [] and "no other replica" in d["verdict"]
    assert d["baseline"]["leaderless_partitions"] == expected(SAMPLE)["leaderless_total"] == 2


def test_replication_factor_3_leaves_only_the_kill_window(fenced):
    # payments re-assigned with RF 3 over brokers 1-3, followers in sync: at broker 2's fence handleBrokerFenced
    # (brokerToRemove 2) elects the first replica of the target ISR that is acceptable (electAnyLeader): no leader -1.
    # What is left is the kill window: broker 2 dead from 09:58:00 (estimated from its fence less
    # broker.session.timeout.ms = 9000) until the controller fences it.
    d = run(fenced, ["topic:payments.replication.factor=3"]).to_json()
    assert d["baseline"]["leaderless_partitions"] == 2 and d["variant"]["leaderless_partitions"] == 0
    changed = {(p["topic"], p["partition"]): p for p in d["changed_partitions"]}
    assert set(changed) == {("payments", 1), ("payments", 4)}
    for p in changed.values():
        assert p["variant"]["leaderless_seconds"] == 0
        assert p["variant"]["unavailable_seconds"] == pytest.approx(9.0, abs=0.1)


def test_a_controlled_shutdown_instead_of_the_kill(fenced):
    # enterControlledShutdown (handleBrokerInControlledShutdown, brokerToRemove 2) moves orders-1 and -4 to another ISR
    # member at once: their 9 s led by a dead broker are gone. payments-1/-4 (RF 1) have no other replica: leaderless
    # from the shutdown itself, until broker 2's unfence elects it (handleBrokerUnfenced) at 10:11:01.750.
    exp = expected(SAMPLE)
    (lost,) = exp["leaderless"]
    w = run(fenced, ops=["controlled-shutdown:2"])
    d = w.to_json()
    changed = {(p["topic"], p["partition"]): p for p in d["changed_partitions"]}
    for p in (1, 4):
        assert changed[("orders", p)]["baseline"]["unavailable_seconds"] == pytest.approx(9.0, abs=0.1)
        assert changed[("orders", p)]["variant"]["unavailable_seconds"] == 0
        [(start, end)] = _episodes(w.variant, "payments", p)
        assert start == pytest.approx(us(lost["start"]) - 9_000_000, abs=50_000)
        assert end == pytest.approx(us(lost["end"]), abs=50_000)
    assert d["variant"]["unavailable_partition_seconds"] < d["baseline"]["unavailable_partition_seconds"]


def test_kill_needs_a_controlled_shutdown_and_zookeeper_only_settings_are_refused(fenced):
    with pytest.raises(ChangeError, match="made no controlled shutdown"):
        run(fenced, ops=["kill:2"])
    with pytest.raises(ChangeError, match="not read by a KRaft controller"):
        run(fenced, ["zookeeper.session.timeout.ms=30000"])


def test_elr_off_turns_the_last_known_leader_elections_clean():
    from conftest import real_cluster_events
    from forensics.pipeline import split_clusters

    # BMTushyath__RFIDSAS (4.2.0, one combined node, eligible.leader.replicas.version 1): controller.log.2026-06-12-16.gz
    # line 424, "Setting new leader for topicId O4PMSoimQdGoaB2StIrNRA, partition 0 to 1 using an unclean election.
    # Previous partition: PartitionRegistration(... isr=[], ... elr=[], lastKnownElr=[1], leader=-1": with ELR the
    # fence empties the ISR and the unfence elects the last known leader uncleanly (canElectLastKnownLeader). Without
    # ELR the fence keeps the last ISR member ([1]: an empty target ISR is not written) and the unfence elects it from
    # the ISR, cleanly: the same leaderless time, no unclean election.
    import copy

    kept, _ = split_clusters([copy.copy(e) for e in real_cluster_events("BMTushyath__RFIDSAS", folder="real_logs2")])
    mine = [e for e in kept if (e.cluster or "").endswith("[SrDnNFhKRxqxonSM1SPDmg]")]
    d = whatif(mine, parse_changes(["eligible.leader.replicas.version=0"], None), "bmt").to_json()
    assert d["baseline"]["unclean_elections"] > 0 and d["variant"]["unclean_elections"] == 0
    assert d["variant"]["leaderless_partition_seconds"] == d["baseline"]["leaderless_partition_seconds"]
