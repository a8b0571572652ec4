"""What-if and risk on the bundled samples, as the issue's done-when names them; expectations from each
sample's expected.json (hand-derived by its author from the scenario)."""
import json
from datetime import datetime

import pytest

from conftest import SAMPLES
from forensics.sources import collect_inputs
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from replay_engine.estimates.risk import controller_of, single_failures, states_from_replay
from replay_engine.estimates.whatif import parse_changes, whatif


def load(name, before_us=None):
    root = SAMPLES / name
    inputs = collect_inputs([str(root)], root / ".never-extracted")
    out = []
    for f in inputs.files:
        with open(f.read_path, "rb") as fh:
            evs, _ = parse_source(fh.read(), SourceContext(f.display, cluster=name, broker_hint=f.broker_hint))
        out += [e for e in evs if e.event_type != "zk_txn" and (before_us is None or (e.ts or 0) < before_us)]
    return out


def us(iso):
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1_000_000)


def expected(name):
    return json.loads((SAMPLES / name / "expected.json").read_text())


@pytest.fixture(scope="module")
def seed():
    return load("rf1_broker_kill")


def run(evs, sets=(), ops=(), cluster="c"):
    return whatif(evs, parse_changes(list(sets), list(ops)), cluster).to_json()


def test_seed_unclean_election_changes_nothing_and_says_why(seed):
    d = run(seed, ["unclean.leader.election.enable=true"])
    assert d["changed_partitions"] == []
    assert d["baseline"]["leaderless_partitions"] == expected("rf1_broker_kill")["leaderless_total"] == 100
    assert d["variant"]["leaderless_partition_seconds"] == d["baseline"]["leaderless_partition_seconds"] > 0
    assert "no other replica" in d["verdict"]


def test_seed_rf3_or_reassign_away_leave_no_leaderless_time(seed):
    for sets, ops in ((["topic:dw_test_kafka_0816000.replication.factor=3"], []), ([], ["reassign-away:1"])):
        d = run(seed, sets, ops)
        assert d["baseline"]["leaderless_partitions"] == 100
        dw = [p for p in d["changed_partitions"] if p["topic"] == "dw_test_kafka_0816000"]
        assert len(dw) == 100 and all(p["variant"]["leaderless_seconds"] == 0 for p in dw)
        assert d["variant"]["leaderless_partition_seconds"] == 0, (sets, ops)


def test_unclean_sample_off_turns_data_loss_into_unavailability():
    exp = expected("unclean_election")
    (loss,) = exp["unclean_elections"]
    d = run(load("unclean_election"), [f"topic:{loss['topic']}.unclean.leader.election.enable=false"])
    assert d["baseline"]["unclean_elections"] >= 1 and d["variant"]["unclean_elections"] == 0
    (p,) = [x for x in d["changed_partitions"] if (x["topic"], x["partition"]) == (loss["topic"], loss["partition"])]
    assert p["baseline"]["leaderless_seconds"] < 1  # baseline: elected uncleanly at once
    # variant: leaderless from broker 1's loss until it came back (its replica was the only in-sync one)
    fail = next(f for f in exp["broker_failures"] if f["broker"] == loss["old_leader"])
    start = us(fail.get("detected_at") or fail["session_expired_at"])
    end = us(fail["registered_at"])
    assert p["variant"]["leaderless_seconds"] == pytest.approx((end - start) / 1e6, abs=1.0)


def test_risk_on_the_seed_before_the_kill_names_broker_1():
    exp = expected("rf1_broker_kill")
    kill = us(exp["broker_failures"][0]["died_at"])
    res = replay_cluster(load("rf1_broker_kill", before_us=kill), "c")
    parts, live, _ = states_from_replay(res)
    singles = single_failures(parts, live, controller_of(res))
    worst = max(singles, key=lambda b: (singles[b].leaderless, -b))
    assert worst == 1
    assert singles[1].leaderless == exp["leaderless"][0]["count"] == 100
    assert set(singles[1].topics) == {"dw_test_kafka_0816000"}
