"""The seed incident (article 003) reconstructed: partition 101 of the RF=1 topic, as the sample's
expected.json (hand-derived from the scenario) and its zkCli transcript say."""
import json
from datetime import datetime

from conftest import SAMPLES
from replay_engine.api import replay_cluster
from test_shard import load

NAME = "rf1_broker_kill"


def us(iso):
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1_000_000)


def test_partition_101_leader_minus_1_isr_1_from_the_session_end_with_its_evidence():
    exp = json.loads((SAMPLES / NAME / "expected.json").read_text())
    want = exp["leaderless"][0]
    res = replay_cluster(load(SAMPLES / NAME), NAME)
    (lp,) = [x for x in res.leaderless if (x.episode.topic, x.episode.partition) == (want["topic"], 101)]
    assert lp.cause.kind == "all_replicas_offline" == want["cause"]
    assert abs(lp.episode.start - us(want["start"])) <= want["tolerance_ms"] * 1000
    # the state while leaderless is what ZooKeeper held (and what zkCli printed at 10:50:12)
    zk = exp["zkcli"]
    at = us(zk["taken_at"])
    (iv,) = [i for i in lp.episode.intervals if i.start <= at and (i.end is None or at < i.end)]
    assert (iv.view.leader, list(iv.view.isr)) == (zk["data"]["leader"], zk["data"]["isr"]) == (-1, [1])
    assert iv.view.leader_epoch == want["state_while_leaderless"]["leader_epoch"]
    # evidence: broker 1's session end (ZooKeeper closeSession) and the controller's failed election
    events = [r.event for r in lp.cause.chain]
    assert "broker_deregistered" in events and "leader_election_failed" in events
    ends = [r for r in lp.cause.chain if r.event == "broker_deregistered"]
    assert abs(ends[0].ts - us(exp["broker_failures"][0]["session_expired_at"])) <= 1000
    assert lp.cause.details["replicas"] == [1] and lp.cause.details["cause_brokers"] == [1]
