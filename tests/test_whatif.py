"""What-if on the real ZooKeeper scenarios, against their ground truth and hand-derived expectations."""
import json

import pytest

from conftest import ZK_REAL
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.estimates.whatif import ChangeError, parse_changes, whatif


def events(scen):
    out = []
    for f in sorted((ZK_REAL / scen / "version-2").iterdir()):
        evs, _ = parse_source(f.read_bytes(), SourceContext(str(f), cluster="zk"))
        out += evs
    return [e for e in out if e.event_type != "zk_txn"]


@pytest.fixture(scope="module")
def s1():
    return events("s1_single_replica_kill")


@pytest.fixture(scope="module")
def s3():
    return events("s3_unclean_election")


def run(evs, sets=(), ops=()):
    return whatif(evs, parse_changes(list(sets), list(ops)), "zk").to_json()


def secs_of(doc, side, topic):
    return sum(p[side]["leaderless_seconds"] for p in doc["changed_partitions"] if p["topic"] == topic)


def test_unclean_on_for_ledger_removes_its_leaderless_time(s3):
    d = run(s3, ["topic:ledger.unclean.leader.election.enable=true"])
    assert secs_of(d, "baseline", "ledger") > 0 and secs_of(d, "variant", "ledger") == 0
    assert d["variant"]["unclean_elections"] == d["baseline"]["unclean_elections"] + 3  # ledger's 3 partitions


def test_unclean_off_for_clickstream_creates_leaderless_time(s3):
    d = run(s3, ["topic:clickstream.unclean.leader.election.enable=false"])
    changed = {(p["topic"], p["partition"]) for p in d["changed_partitions"]}
    assert changed == {("clickstream", 0), ("clickstream", 1), ("clickstream", 2)}
    assert secs_of(d, "baseline", "clickstream") == 0 and secs_of(d, "variant", "clickstream") > 0
    # data loss becomes unavailability: the 3 unclean elections are gone
    assert d["baseline"]["possible_data_loss"] == 3 and d["variant"]["possible_data_loss"] == 0
    truth = json.loads((ZK_REAL / "s3_unclean_election" / "ground_truth.json").read_text())
    end = max(e["t_ms"] for e in truth["events"] if e.get("zxid"))
    kill = next(e for e in truth["events"] if e["kind"] == "session_expired")
    # each clickstream partition: leaderless from broker 1's session expiry to the end of the evidence
    for p in d["changed_partitions"]:
        assert p["variant"]["leaderless_seconds"] == pytest.approx((end - kill["t_ms"]) / 1000, abs=0.05)


def test_rf1_kill_unclean_cannot_help_and_says_so(s1):
    d = run(s1, ["unclean.leader.election.enable=true"])
    assert d["changed_partitions"] == []
    assert d["baseline"]["leaderless_partition_seconds"] == d["variant"]["leaderless_partition_seconds"] > 0
    assert "no other replica" in d["verdict"]


def test_rf3_and_reassign_away_remove_all_leaderless_time(s1):
    for sets, ops in ((["topic:dw_test.replication.factor=3"], []), ([], ["reassign-away:2"])):
        d = run(s1, sets, ops)
        assert d["baseline"]["leaderless_partitions"] == 2  # dw_test-1 and dw_test-4 (README)
        assert d["variant"]["leaderless_partition_seconds"] == 0 and d["variant"]["leaderless_partitions"] == 0


def test_controlled_shutdown_removes_the_kill_window_of_replicated_partitions(s1):
    d = run(s1, [], ["controlled-shutdown:2"])
    truth = json.loads((ZK_REAL / "s1_single_replica_kill" / "ground_truth.json").read_text())
    led_by_2 = {e["partition"] for e in truth["events"] if e["kind"] == "partition_state_change"
                and e["topic"] == "__consumer_offsets" and str(e.get("reason", "")).startswith("onBrokerFailure(2)")
                and "Election" in e["reason"]}
    assert len(led_by_2) == 17
    # those partitions were unavailable from the kill to the session expiry; a controlled shutdown moves them first
    assert d["baseline"]["unavailable_partition_seconds"] > d["variant"]["unavailable_partition_seconds"]
    gone = {p["partition"]: p for p in d["changed_partitions"] if p["topic"] == "__consumer_offsets"}
    assert set(gone) == led_by_2
    for p in gone.values():
        assert p["baseline"]["unavailable_seconds"] == pytest.approx(2.0, abs=0.3)  # the 2 s session timeout
        assert p["variant"]["unavailable_seconds"] == 0


def test_same_whatif_twice_gives_the_same_bytes(s3):
    a = json.dumps(run(s3, ["topic:clickstream.unclean.leader.election.enable=false"]), sort_keys=True)
    b = json.dumps(run(s3, ["topic:clickstream.unclean.leader.election.enable=false"]), sort_keys=True)
    assert a == b


def test_bad_changes_are_user_errors():
    with pytest.raises(ChangeError):
        parse_changes(["no.such.setting=1"], [])
    with pytest.raises(ChangeError):
        parse_changes([], ["explode:3"])
    with pytest.raises(ChangeError):
        parse_changes([], [])
