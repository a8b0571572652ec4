"""Replay over the real ZooKeeper scenarios: every controller write agrees, the final state is the
state znodes' final state, the leaderless partitions and failed elections are the ground truth's.

Independent truth: ``ground_truth.json`` of each scenario (what the driver did, the zxids the server
returned, and ZooKeeper's own restore of the final tree).
"""
import json
from collections import Counter

import pytest

from conftest import ZK_REAL
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster

SCENARIOS = sorted(p.name for p in ZK_REAL.iterdir() if (p / "ground_truth.json").exists())


def load(scen):
    events = []
    for f in sorted((ZK_REAL / scen / "version-2").iterdir()):
        evs, summary = parse_source(f.read_bytes(), SourceContext(str(f), cluster="zk"))
        assert not summary.errors, (f, summary.errors)
        events += evs
    truth = json.loads((ZK_REAL / scen / "ground_truth.json").read_text())
    return replay_cluster([e for e in events if e.event_type != "zk_txn"], "zk"), truth


@pytest.fixture(scope="module", params=SCENARIOS)
def scenario(request):
    res, truth = load(request.param)
    return request.param, res, truth


def _tp(path):
    parts = path.split("/")
    return parts[3], int(parts[5])


def test_all_five_scenarios_present():
    assert len(SCENARIOS) == 5


def test_every_recorded_controller_write_agrees(scenario):
    name, res, truth = scenario
    ag = res.agreement()
    # every controller write of the scenario is compared (ground truth marks them 'partition_state_change'
    # by the controller; leader-side ISR changes are inputs, not decisions)
    controller_writes = sum(1 for e in truth["events"] if e["kind"] == "partition_state_change"
                            and str(e.get("by", "")).startswith("controller"))
    assert ag["compared"] >= controller_writes > 0
    assert ag["agreed"] == ag["compared"], ag["divergences"][:3]


def test_final_state_equals_the_state_znodes(scenario):
    name, res, truth = scenario
    last = {}
    for iv in res.intervals:
        last[(iv.topic, iv.partition)] = iv
    expected = truth["final_state"]["partition_states"]
    assert len(expected) > 0
    for path, st in expected.items():
        iv = last[_tp(path)]
        s = st["state"]
        assert (iv.view.leader, list(iv.view.isr), iv.view.leader_epoch, iv.view.controller_epoch) == (
            s["leader"], s["isr"], s["leader_epoch"], s["controller_epoch"]), path


def test_leaderless_at_the_end_equals_ground_truth(scenario):
    name, res, truth = scenario
    registered = {int(b) for b in truth["final_state"]["registered_brokers"]}
    expected = set()
    for path, st in truth["final_state"]["partition_states"].items():
        leader = st["state"]["leader"]
        if leader == -1 or leader not in registered:
            expected.add(_tp(path))
    got = {(lp.episode.topic, lp.episode.partition) for lp in res.leaderless if lp.episode.end is None}
    assert got == expected
    if name == "s1_single_replica_kill":
        assert got == {("dw_test", 1), ("dw_test", 4)}  # the README's own statement


def test_failed_elections_are_the_ground_truths(scenario):
    name, res, truth = scenario
    gt = Counter((e["topic"], e["partition"]) for e in truth["events"] if e["kind"] == "leader_election_failed")
    ours = Counter(d.tp for d in res.decisions if d.kind == "election_failed")
    assert ours == gt


def test_controlled_shutdowns_are_inferred(scenario):
    name, res, truth = scenario
    gt = [e["broker"] for e in truth["events"] if e["kind"] == "controlled_shutdown_begin"]
    ours = [f["broker"] for f in res.image.findings if f["kind"] == "inferred_controlled_shutdown"]
    assert ours == gt


def test_causes_in_the_seed_like_scenarios():
    res, _ = load("s1_single_replica_kill")
    for lp in res.leaderless:
        if lp.episode.end is None:
            assert lp.cause.kind == "all_replicas_offline"
            assert "replication factor 1" in lp.cause.summary and "broker 2" in lp.cause.summary
            events = {r.event for r in lp.cause.chain}
            assert "broker_deregistered" in events  # the session end is cited
    res, _ = load("s3_unclean_election")
    open_ = {(lp.episode.topic, lp.episode.partition): lp for lp in res.leaderless if lp.episode.end is None}
    assert {t for t, _ in open_} == {"ledger"}
    for lp in open_.values():
        assert lp.cause.kind == "no_live_isr_unclean_disabled"
        assert "unclean.leader.election.enable was false (topic config of ledger)" in lp.cause.summary
    assert len(res.image.unclean_elections) == 3  # clickstream's partitions, elected uncleanly
    assert {d.tp[0] for d in res.image.unclean_elections} == {"clickstream"}
