"""The replay on Spark executors (routing by Spark expressions, phase 1 in every shard, shards, merge)
equals the one-process replay of the same events, and splits logs-only clusters without falling back.

Independent truth: ``replay_cluster`` over the same events in one process, on real ZooKeeper-mode
log sets whose controller records change the controller's live set (so the phase 1 that every shard
runs keeps hints, and each shard must replay exactly those of the other partitions' records).
"""
import pyarrow as pa
import pytest
from conftest import REAL_LOGS
from test_shard import load

from forensics.audit.distributed import replay_on_executors
from forensics.pipeline import drop_log_copies
from parsers.schema import events_to_arrow
from replay_engine.api import replay_cluster

pytestmark = pytest.mark.spark

CLUSTERS = ("AndreasTraut__kafka_2.13-2.8.0", "YehorYehorychev__Kafka", "minhdc2__kafka-Golang", "Eniyanilavan__Kafka")


def ordered(events):
    events = sorted(events, key=lambda e: (e.ts or 0, e.source_file or "", e.source_pos or 0, e.source_sub))
    return drop_log_copies(events)[0]  # as every executor task does


def test_executors_split_logs_only_clusters_as_the_whole_replay(spark):
    events = [e for c in CLUSTERS for e in load(REAL_LOGS / c)]
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    dist = replay_on_executors(spark, df, 3)
    try:
        assert dist.replayed_whole == {}  # every cluster split, none replayed whole after disagreeing
        rows = dist.timeline.collect()
        for c in CLUSTERS:
            whole = replay_cluster(ordered(e for e in events if e.cluster == c), c)
            m = dist.merged[c]
            assert m.shards == 3
            assert sorted((r["topic"], r["partition"]) for r in rows if r["cluster"] == c) == sorted(
                (iv.topic, iv.partition) for iv in whole.intervals)
            assert [lp.to_json() for lp in m.leaderless] == [lp.to_json() for lp in whole.leaderless]
            assert [(t.controller, t.epoch, t.start) for t in m.tenures] == [
                (t.controller, t.epoch, t.start) for t in whole.image.tenures]
            assert {b: [(p.state, p.start, p.end) for p in ps] for b, ps in m.periods.items()} == {
                b: [(p.state, p.start, p.end) for p in ps] for b, ps in whole.image.periods.items()}
            ag = whole.agreement()
            assert {k: m.agreement[k] for k in ag} == ag
        cpu = dist.task_cpu
        # every shard ran phase 1 itself (logs alone), before its own partitions
        assert all(len(cpu[c]["shards"]) == 3 and all(s > 0 for s in cpu[c]["phase1"]) for c in CLUSTERS)
    finally:
        dist.release()


def test_a_cluster_with_more_events_than_its_shards_hold_gets_more_shards(spark, monkeypatch):
    """Each shard's events reach its task as one Arrow batch, so a big cluster is split into more shards than
    asked (forensics.audit.distributed.MAX_SHARD_EVENTS); the result is still the whole replay's."""
    import forensics.audit.distributed as dist_mod

    c = "AndreasTraut__kafka_2.13-2.8.0"
    events = load(REAL_LOGS / c)
    cap = len(events) // 5
    monkeypatch.setattr(dist_mod, "MAX_SHARD_EVENTS", cap)  # the plan is made on the driver
    expected = -(-len(events) // cap)
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    dist = replay_on_executors(spark, df, 2)
    try:
        m = dist.merged[c]
        assert m.shards == expected >= 5 and dist.replayed_whole == {}
        whole = replay_cluster(ordered(events), c)
        assert [lp.to_json() for lp in m.leaderless] == [lp.to_json() for lp in whole.leaderless]
        assert sorted((r["topic"], r["partition"]) for r in dist.timeline.collect()) == sorted(
            (iv.topic, iv.partition) for iv in whole.intervals)
        assert len(dist.task_cpu[c]["shards"]) == expected
    finally:
        dist.release()
