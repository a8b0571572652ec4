"""Replay over every real broker-log cluster (ZooKeeper mode): agreement with the controller's own records.

Independent truth: the decisions the real controllers logged (state-change.log / controller.log). For every
cluster whose logs hold controller decisions, at least 99% of the compared decisions must agree; the few
divergences left are listed below with the reason, read off the logs by hand.
"""
import pytest

from conftest import REAL_LOGS, replayed_cluster

KRAFT = {"Ammar777782439__kafka_2.13-4.0.0", "BetrajJ__kafka-kraft", "GraphLogistics__kafka",
         "Niloufar1171__LDI-POC", "ronem123__rupia-transaction-service"}
ZK_CLUSTERS = sorted(p.name for p in REAL_LOGS.iterdir() if p.is_dir() and p.name != "issue_snippets"
                     and p.name not in KRAFT)

# Divergences explained by reading the logs (cluster -> {(topic, partition): why}).
EXPLAINED: dict[str, dict[tuple[str, int], str]] = {}


# In the default run: 2.8 logs alone with phase 1's hints and failed elections (AndreasTraut), 0.11 (chase-lewis) and
# 1.0 (minhdc2); every other cluster in the opt-in tier (marker corpus), as benchmarks/agreement.py measures them all.
EVERY_RUN = {"AndreasTraut__kafka_2.13-2.8.0", "chase-lewis__JIE7351", "minhdc2__kafka-Golang"}


def load(name):
    """The cluster's replay, once per run (conftest.replayed_cluster): read it, never change it."""
    return replayed_cluster(name)


@pytest.fixture(scope="module", params=[pytest.param(c, marks=() if c in EVERY_RUN else pytest.mark.corpus)
                                        for c in ZK_CLUSTERS])
def replayed(request):
    return request.param, load(request.param)


def test_every_zk_cluster_is_covered():
    assert len(ZK_CLUSTERS) == 20 and EVERY_RUN <= set(ZK_CLUSTERS)


def test_agreement_at_least_99_percent_and_divergences_explained(replayed):
    name, res = replayed
    ag = res.agreement()
    assert ag["compared"] > 0, "every real cluster holds at least one controller decision"
    assert ag["agreed"] / ag["compared"] >= 0.99, ag["divergences"][:3]
    explained = EXPLAINED.get(name, {})
    for d in ag["divergences"]:
        assert (d["topic"], d["partition"]) in explained, d


def test_rf1_consumer_offsets_outages_have_the_right_cause():
    # AndreasTraut (2.8, brokers 0 and 1, __consumer_offsets RF=1): broker 1 was stopped on 2021-04-27 10:30 and
    # the controller logged "failed to change state ... OfflinePartition to OnlinePartition" for its partitions.
    res = load("AndreasTraut__kafka_2.13-2.8.0")
    hit = [lp for lp in res.leaderless if lp.episode.topic == "__consumer_offsets"
           and lp.cause.kind == "all_replicas_offline" and lp.cause.details.get("cause_brokers") == [1]]
    assert hit, "partitions whose only replica (broker 1) was down must be leaderless with that cause"
    for lp in hit:
        assert "replication factor 1" in lp.cause.summary and "broker 1" in lp.cause.summary
        # the controller's own word that broker 1 was gone: a failed election, its failure, the leader -1 write, or
        # (broker 1 logged "shutting down" at 12:29:00 on 2021-05-05 and its later lines are rotated away) a new
        # controller's "Currently active brokers in the cluster: Set(0)" at 16:17:16.618
        assert any(r.event in ("leader_election_failed", "broker_failed", "partition_leader_isr_written",
                               "controller_startup_state") for r in lp.cause.chain)
