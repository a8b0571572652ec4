"""Shard tasks that read the audit store's files themselves (``forensics.audit.file_shards``) get the rows
the router's rule gives them, and the replay they run equals the one-process replay.

Independent truth: ``replay_engine.sharding.shard.routes``, the one-process statement of which shard an event goes
to, over the same parsed events; and ``replay_cluster`` of each cluster's events in one process.
"""
import dataclasses
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REAL_LOGS, SAMPLES, ZK_REAL
from test_shard import load
from test_shard_spark import _tasks_of_shards, assert_split_equals_whole, ordered

from forensics.audit import plan_groups
from forensics.audit.distributed import replay_on_executors
from forensics.audit.file_shards import FILE_COLUMNS, readable, shard_rows
from forensics.audit.run import EVENT_SORT, events_table_schema
from forensics.audit.store import Store, dated
from parsers.schema import events_to_arrow
from replay_engine.api import replay_cluster
from replay_engine.sharding.shard import routes

pytestmark = pytest.mark.spark

# logs alone (phase 1 in every shard, which then reads every controller record), a bundled ZooKeeper-mode
# sample and a real ZooKeeper scenario with its transaction log (zk_txn rows, which no shard reads)
ROOTS = [REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0", REAL_LOGS / "Eniyanilavan__Kafka",
         SAMPLES / "controller_failover", ZK_REAL / "s2_controller_failover"]


@pytest.fixture(scope="module")
def stored(spark, tmp_path_factory):
    """The clusters' events written as the audit writes its events table; their events by cluster."""
    events = {root.name: load(root) for root in ROOTS}
    # the parser's raw record of each transaction (parsers/zookeeper/events.py), which the sources leave out of
    # what they hand on, but an events table may hold: added here, for no shard to read
    zk = ROOTS[-1].name
    events[zk] += [dataclasses.replace(e, event_type="zk_txn", source_sub=99) for e in events[zk]
                   if e.source_kind == "zk_txnlog"]
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow([e for es in events.values() for e in es])]))
    store = Store(tmp_path_factory.mktemp("file-shards"))
    store.write_spark(dated(df, "ts"), "events", EVENT_SORT, footer=plan_groups.footer)
    return store, events


def _key(row):
    return (row["source_file"], row["source_pos"], row["source_sub"] or 0, row["event_type"], row["topic"],
            row["partition"], row["subject_broker"], row["raw"])


@pytest.mark.parametrize("buckets", [1, 2, 7])
@pytest.mark.parametrize("records", [True, False], ids=["phase1-in-shards", "no-records"])
def test_a_shard_reads_the_rows_the_routing_rule_sends_it(stored, buckets, records):
    store, events = stored
    files = store.files("events", events)
    for cluster, evs in events.items():
        for b in range(buckets):
            got = shard_rows([str(f) for f in files[cluster]], cluster, b, buckets, records)
            assert set(got.column("cluster").to_pylist()) <= {cluster}
            assert set(got.column("_bucket").to_pylist()) <= {b}
            want = Counter(_key(e.as_row()) for e in evs if e.event_type != "zk_txn"
                           and b in routes(e, buckets, True if records else None))
            assert Counter(_key(r) for r in got.to_pylist()) == want


def test_shard_tasks_reading_the_files_replay_each_cluster_as_one_process_does(spark, stored):
    store, events = stored
    clusters = sorted(events)
    df = spark.read.schema(events_table_schema()).parquet(str(store.table("events")))
    groups = plan_groups.stored_groups(store, clusters)
    dist = replay_on_executors(spark, df, 3, groups=groups, files=store.files("events", clusters))
    routed = replay_on_executors(spark, df, 3, groups=groups)  # the same, routed by a Spark scan and shuffle
    try:
        assert dist.read_files == clusters and routed.read_files == []
        assert dist.replayed_whole == {}
        # small clusters: their 12 shards share one task, as when Spark routes them
        _tasks_of_shards(dist.outputs[0], {c: 3 for c in clusters}, len(clusters) * 3, 1)
        rows = dist.timeline.collect()
        assert sorted(map(tuple, rows)) == sorted(map(tuple, routed.timeline.collect()))
        for c in clusters:
            whole = replay_cluster(ordered(e for e in events[c] if e.event_type != "zk_txn"), c)
            assert_split_equals_whole(dist.merged[c], whole, [r for r in rows if r["cluster"] == c], 3)
    finally:
        dist.release()
        routed.release()


def test_files_a_task_cannot_read_whole_are_left_to_spark(stored, tmp_path):
    store, events = stored
    good = store.files("events", events)[ROOTS[0].name]
    assert readable(good)
    short = tmp_path / "short.parquet"
    table = pq.read_table(good[0])
    pq.write_table(table.drop_columns([FILE_COLUMNS[-1]]), short)  # a store file from before a field was added
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(good[0].read_bytes()[:100])
    assert not readable([*good, short]) and not readable([broken])
