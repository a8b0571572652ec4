"""The replay plan's groups (forensics.audit.plan_groups), kept by the audit store in each day file's footer
or counted by a Spark job, fold into the context that ``cluster_context`` computes over the same events in
one process (independent truth: that function, on real log sets and the samples' ZooKeeper data)."""
import dataclasses

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REAL_LOGS, SAMPLES
from test_shard import load
from test_shard_spark import CLUSTERS

from forensics.audit import plan_groups
from forensics.audit.distributed import cluster_plans
from forensics.audit.run import EVENT_SORT, events_table_schema
from forensics.audit.store import PART_FILE, Store, dated
from parsers.schema import FIELD_NAMES, events_to_arrow
from replay_engine.zk.from_events import cluster_context

pytestmark = pytest.mark.spark


def _events():
    roots = [REAL_LOGS / c for c in CLUSTERS] + [SAMPLES / s for s in ("rf1_broker_kill", "controller_failover")]
    events = [e for r in roots for e in load(r)]
    # a broker's controller and state-change lines in one shared file (as a container's stdout holds them):
    # only the logger tells their window there
    shared = [dataclasses.replace(e, source_file=f"{e.cluster}/stdout-{e.broker_id}.log", cluster=e.cluster + "+shared")
              for e in events
              if e.logger == "state.change.logger" or (e.logger or "").startswith("kafka.controller.")]
    assert shared
    return events + shared


def _dated(spark, events):
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)])).select(*FIELD_NAMES)
    return dated(df, "ts")


def _same_as_one_process(plans, events):
    assert sorted(plans) == sorted({e.cluster for e in events})
    for c, plan in plans.items():
        mine = [e for e in events if e.cluster == c]
        assert plan.context == cluster_context(mine), c
        assert plan.events == len(mine)
    assert any(p.context.zk for p in plans.values()) and any(p.context.log_windows for p in plans.values())


def test_groups_kept_in_the_store_footers_fold_into_the_one_process_context(spark, tmp_path):
    events = [e for e in _events() if e.event_type != "zk_txn"]
    store = Store(tmp_path)
    written = store.write_spark(_dated(spark, events), "events", EVENT_SORT, footer=plan_groups.footer)
    assert len(written) > len({e.cluster for e in events})  # several days of some cluster: footers add up
    groups = plan_groups.stored_groups(store, sorted({e.cluster for e in events}))
    assert groups is not None
    # the plan folds from footers alone: the DataFrame is never read
    _same_as_one_process(cluster_plans(spark, None, 2, groups), events)
    # and the store's footers count what Spark counts from the table read back
    back = spark.read.schema(events_table_schema()).parquet(str(store.table("events")))
    assert plan_groups.sort_rows(plan_groups.merged([pa.Table.from_pylist(groups, plan_groups.SCHEMA)]).to_pylist()) \
        == plan_groups.sort_rows(plan_groups.merged(
            [pa.Table.from_pylist(plan_groups.spark_groups(back), plan_groups.SCHEMA)]).to_pylist())


def test_a_spark_job_counts_the_groups_of_any_events(spark):
    events = [e for e in _events() if e.event_type != "zk_txn"]
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)])).select(*FIELD_NAMES)
    _same_as_one_process(cluster_plans(spark, df.repartition(5), 2), events)


def test_a_file_without_true_groups_sends_the_plan_back_to_spark(spark, tmp_path):
    events = [e for e in load(SAMPLES / "rf1_broker_kill") if e.event_type != "zk_txn"]
    store = Store(tmp_path)
    store.write_spark(_dated(spark, events), "events", EVENT_SORT, footer=plan_groups.footer)
    c = events[0].cluster
    assert plan_groups.stored_groups(store, [c]) is not None
    f = sorted(store.table("events").glob(f"cluster=*/date=*/{PART_FILE}"))[0]
    table = pq.read_table(f, partitioning=None)
    # a day rewritten by another tool that kept the metadata: the groups no longer count its rows
    pq.write_table(table.slice(1), f)
    assert plan_groups.stored_groups(store, [c]) is None
    # a day written before footers were kept: its groups are unknown
    pq.write_table(table.replace_schema_metadata(None), f)
    assert plan_groups.stored_groups(store, [c]) is None
    # an unreadable footer (a truncated file): the Spark job reads the rows and says what is wrong
    f.write_bytes(f.read_bytes()[:100])
    assert plan_groups.stored_groups(store, [c]) is None
    pq.write_table(table, f)
    assert plan_groups.stored_groups(store, [c]) is not None


def test_the_footer_is_the_same_bytes_whatever_the_row_order():
    events = [e for e in load(SAMPLES / "controller_failover") if e.event_type != "zk_txn"]
    table = pa.Table.from_batches([events_to_arrow(events)])
    shuffled = table.take(pa.array(list(reversed(range(table.num_rows)))))
    assert plan_groups.footer(table) == plan_groups.footer(shuffled)
    # chunks counted apart add up to the whole
    half = table.num_rows // 2
    parts = [plan_groups.groups_of(table.slice(0, half)), plan_groups.groups_of(table.slice(half))]
    assert plan_groups.sort_rows(plan_groups.merged(parts).to_pylist()) == \
        plan_groups.sort_rows(plan_groups.groups_of(table).to_pylist())
