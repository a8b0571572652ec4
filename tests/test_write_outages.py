"""Under-min-ISR write outages (replay_engine/causes/write_outages.py) against Kafka's rule and hand-read scripts.

Kafka's rule (Partition.appendRecordsToLeader, 0.9+, e.g. 2.8.0 core/src/main/scala/kafka/cluster/Partition.scala):
an acks=-1 produce to a leader with inSyncReplicaIds.size < minIsr throws NotEnoughReplicasException. The
default min.insync.replicas is 1 (KafkaConfig), so without a setting no partition with a leader is ever short.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import Event
from replay_engine.common.config import ConfigState, Resolved
from replay_engine.common.facts import Ref
from replay_engine.common.timeline import Interval, View
from replay_engine.causes.write_outages import explain_all, partition_seconds, under_min_isr
from tests.conftest import SAMPLES

S = 1_000_000


def _iv(start, end, leader, isr, event="partition_state_change", p=0):
    return Interval("t", p, start * S, None if end is None else end * S,
                    View(leader, tuple(isr), 1, 1, "OnlinePartition", True), Ref(start * S, event, "f", start, "x"), "recorded")


def _need(n):
    return lambda topic, ts: Resolved(str(n), "topic config of t")


def test_runs_of_a_short_isr_with_a_live_leader_are_one_outage_each():
    ivs = [_iv(0, 10, 1, [1, 2, 3]), _iv(10, 20, 1, [1, 2], "isr_shrink"), _iv(20, 30, 1, [1]),
           _iv(30, 40, -1, [1]), _iv(40, 50, 2, [2]), _iv(50, None, 2, [1, 2, 3])]
    got = under_min_isr(ivs, _need(3))
    # [1,2] and [1] are one run (10..30); leader -1 is a leaderless outage, not this kind; [2] alone again (40..50)
    assert [(o.start // S, o.end // S, o.isr) for o in got] == [(10, 30, (1,)), (40, 50, (2,))]
    assert partition_seconds(got, None) == 30.0
    assert under_min_isr(ivs, _need(1)) == []


def test_a_replica_the_leader_dropped_lagged_past_replica_lag_time_max_ms():
    ivs = [_iv(0, 10, 1, [1, 2]), _iv(10, None, 1, [1], "isr_shrink")]
    got = under_min_isr(ivs, _need(2))
    errs = [Event("client_error", ts=12 * S, topic="t", partition=0, source_file="app.log", source_pos=7,
                  detail={"client": "java", "error": "NOT_ENOUGH_REPLICAS"}),
            Event("client_error", ts=5 * S, topic="t", partition=0, detail={"error": "NOT_ENOUGH_REPLICAS"}),
            Event("client_error", ts=13 * S, topic="t", partition=1, detail={"error": "NOT_ENOUGH_REPLICAS"})]
    explain_all(got, ivs, None, errs, lambda t, ts: Resolved("30000", "Kafka 2.8.0 default"))
    (o,) = got
    assert [(d.replica, d.why) for d in o.dropped] == [(2, "lagged")]
    assert "replica.lag.time.max.ms (30000 ms, Kafka 2.8.0 default)" in o.summary
    assert o.error_counts == {"NOT_ENOUGH_REPLICAS": 1}  # before the outage and another partition: not tied
    assert o.client_errors[0].source_pos == 7


def _sample_events(name):
    root = SAMPLES / name
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name not in ("README.md", "expected.json"):
            evs, _ = parse_source(p.read_bytes(), SourceContext(path=p.relative_to(root).as_posix(), cluster=name))
            out += evs
    return out


@pytest.fixture(scope="module")
def rf1_kill():
    return _sample_events("rf1_broker_kill")


def test_rf1_broker_kill_has_no_write_outage_at_kafkas_default(rf1_kill):
    from replay_engine.api import replay_cluster

    assert replay_cluster(rf1_kill, "rf1_broker_kill").under_min_isr == []


def test_rf1_broker_kill_with_min_isr_3_hand_read(rf1_kill):
    """README of the sample: broker 1 killed 10:32:05, session expired 10:32:23.000, the controller removes it
    from the ISR of every __consumer_offsets partition (RF 3) at 10:32:23.012 onwards; broker 1 is back at
    11:12:32.512 and rejoins the ISRs after catching up. dw_test_kafka_0816000 has RF 1: below
    min.insync.replicas = 3 from its creation (09:15:02) whatever happens."""
    from replay_engine.api import replay_cluster
    from replay_engine.estimates.whatif import metrics

    res = replay_cluster(rf1_kill, "rf1_broker_kill", overrides={"min.insync.replicas": "3"})
    co = [o for o in res.under_min_isr if o.topic == "__consumer_offsets"]
    assert sorted({o.partition for o in co}) == list(range(50))
    lo, hi = 1629109943012000, 1629109944000000  # 10:32:23.012 .. 10:32:24.000
    back = 1629112352512000  # 11:12:32.512
    for o in co:
        assert lo <= o.start < hi and o.end is not None and o.end > back
        assert [(d.replica, d.why) for d in o.dropped] == [(1, "broker_failed")]
        assert "broker 1 lost its ZooKeeper session at 2021-08-16T10:32:23.000Z" in o.summary
        assert o.min_isr == 3 and o.min_isr_source == "what-if" and len(o.isr) == 2
    rf1 = [o for o in res.under_min_isr if o.topic == "dw_test_kafka_0816000"]
    assert {o.partition for o in rf1} == set(range(300))
    assert all("replication factor, 1, is below min.insync.replicas" in o.summary for o in rf1)
    # whatif's figure is this computation's
    m = metrics(res, rf1_kill)
    assert m["under_min_isr_partition_seconds"] == round(partition_seconds(res.under_min_isr, res.stream.trace_end), 3)
    assert res.to_json()["under_min_isr"][0]["min_insync_replicas"] == 3


def test_the_report_has_the_section_and_the_headline_names_the_larger_outage(rf1_kill):
    """With min.insync.replicas=3 the write outage (300 RF-1 partitions for the whole window, 50 more for 40
    minutes) is larger than the leaderless one (100 partitions, 40 minutes): it leads the headline."""
    from forensics.report.build import build_report
    from forensics.report.render import render_html, render_markdown, render_text
    from replay_engine.api import replay_cluster

    base = build_report([replay_cluster(rf1_kill, "rf1_broker_kill")], {}, rf1_kill, sources=["s"])
    assert base["write_outages"] == [] and base["summary"]["under_min_isr_partitions"] == 0
    assert "refused acks=all" not in base["summary"]["headline"]
    res = replay_cluster(rf1_kill, "rf1_broker_kill", overrides={"min.insync.replicas": "3"})
    rep = build_report([res], {}, rf1_kill, sources=["s"])
    s = rep["summary"]
    assert s["under_min_isr_partitions"] == 350
    assert s["under_min_isr_partition_seconds"] > s["leaderless_partition_seconds"] > 0
    assert s["headline"].startswith("350 partition(s) refused acks=all writes")
    by_topic = {(g["topic"], g["reason"]): g["count"] for g in rep["write_outages"]}
    assert by_topic == {("dw_test_kafka_0816000", "replication factor 1 < min.insync.replicas 3"): 300,
                        ("__consumer_offsets", "broker_failed (replica 1)"): 50}
    for render in (render_text, render_markdown, render_html):
        assert "under min.insync.replicas" in render(rep) or "ISR < min.insync.replicas" in render(rep)


def test_risk_ranks_broker_losses_by_both_kinds_of_write_outage():
    """A loss that leaves 5 partitions refusing acks=all is worse for acks=all producers than one leaving 1
    partition leaderless; at equal totals, no leader at all (every write fails) ranks first."""
    from replay_engine.estimates.risk import Impact, impact_json, rank

    def imp(leaderless, under):
        i = Impact()
        i.leaderless, i.under_min_isr = leaderless, under
        return i

    items = [impact_json("broker 1", [1], imp(1, 0)), impact_json("broker 2", [2], imp(0, 5)),
             impact_json("broker 3", [3], imp(2, 3))]
    assert [d["failure"] for d in rank(items)] == ["broker 3", "broker 2", "broker 1"]
    assert [d["write_unavailable_partitions"] for d in rank(items)] == [5, 5, 1]


def test_the_dashboard_counts_the_partitions_refusing_acks_all():
    """sample under_min_isr (README): 6 payments partitions refuse acks=all from about 10:25:18 to 10:40:05-06."""
    from dashboards.counts import counts_figure
    from dashboards.model import cluster_view
    from replay_engine.api import replay_cluster

    events = _sample_events("under_min_isr")
    res = replay_cluster(events, "under_min_isr")
    view = cluster_view(res.to_json(), res.timeline_rows())
    assert len(view.write_outages) == 6
    fig = counts_figure(view, "UTC", "t")
    (line,) = [t for t in fig["data"] if t["name"].startswith("acks=all refused")]
    assert max(line["y"]) == 6
    peak_at = line["x"][line["y"].index(6)]
    assert peak_at.startswith("2021-11-03") and "10:25:18" in peak_at


def test_a_sharded_replay_carries_the_write_outages_to_the_audit_incident_table():
    """The audit replays by partition shard: the 6 payments write outages of sample under_min_isr survive the
    merge once each and become incident rows of cause_kind under_min_isr."""
    from forensics.audit.tables import incident_rows
    from replay_engine.sharding.shard import replay_sharded

    m = replay_sharded(_sample_events("under_min_isr"), "under_min_isr", 3)
    assert sorted(w["partition"] for w in m.write_outages) == [0, 1, 2, 3, 4, 5]
    rows = [r for r in incident_rows(m) if r["cause_kind"] == "under_min_isr"]
    assert sorted(r["partitions"][0] for r in rows) == [0, 1, 2, 3, 4, 5]
    assert all(r["isr_at_loss"] == [1] and r["cause_brokers"] == [3] and r["partition_seconds"] > 800 for r in rows)


@pytest.mark.parametrize("sets,low,high", [
    # Kafka's default 1: a leader alone is enough, nothing refused
    (["min.insync.replicas=1"], 0, 0),
    # 3 on payments: short from broker 2's loss (ISR writes 10:20:18.04-.21) until broker 3 is back in every ISR
    # (10:45:05.1-.9): 6 x 1486.9 .. 6 x 1487.9 s (README's times)
    (["topic:payments.min.insync.replicas=3"], 6 * 1486.9, 6 * 1487.9),
])
def test_whatif_on_min_insync_replicas_changes_the_write_unavailable_time(sets, low, high):
    """Baseline (topic config 2): 6 partitions x 10:25:18.0x -> 10:40:05.1-.9 = 6 x 887.0 .. 6 x 887.9 s."""
    from replay_engine.estimates.whatif import parse_changes, whatif

    w = whatif(_sample_events("under_min_isr"), parse_changes(sets, None), "under_min_isr").to_json()
    b, v = w["baseline"], w["variant"]
    assert 6 * 887.0 <= b["under_min_isr_partition_seconds"] <= 6 * 887.9
    assert low <= v["under_min_isr_partition_seconds"] <= high
    assert v["write_unavailable_partition_seconds"] == round(v["leaderless_partition_seconds"]
                                                             + v["under_min_isr_partition_seconds"], 3)


def test_min_isr_follows_the_configuration_in_force_at_each_moment():
    """A topic's min.insync.replicas set mid-trace counts only from then on (topic config over the default,
    Kafka's LogConfig); what-if and the report both resolve through the history's configurations."""
    from types import SimpleNamespace

    from replay_engine.common.config import MIN_ISR, ConfigState
    from replay_engine.causes.write_outages import resolver

    before = ConfigState()
    after = ConfigState()
    after.topic = {"orders": {MIN_ISR: ("2", None)}}
    history = SimpleNamespace(config_history=((0, before.image()), (100, after.image())))
    resolve = resolver(history, before)
    assert resolve("orders", 50).value == "1" and resolve("orders", 150).value == "2"
    assert resolve("other", 150).value == "1"
    assert resolver(None, after)("orders", 50).value == "2"  # no history: the fallback configuration
