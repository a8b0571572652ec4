"""An executor task's column-wise conversions equal the row-at-a-time ones they replace.

Independent truth: ``parsers.schema.event_from_row`` over ``Table.to_pylist()`` (the schema's own
inverse of ``Event.as_row``), Python's sort on the replay key and ``forensics.pipeline.drop_log_copies``
for the events; ``Interval.to_row`` for the timeline. On every real log set of ``../shared/real_logs``,
with the rows handed over in a shuffled order, and with a rotated copy of a log file beside it (whose
entries must count once).
"""
import random

import pyarrow as pa
import pytest
from conftest import REAL_LOGS, per_cluster
from test_shard import load

from forensics.audit.task_io import events_of, task_events, timeline_columns
from forensics.pipeline import drop_log_copies, replay_order
from parsers.schema import event_from_row, events_to_arrow
from replay_engine.api import replay_cluster
from replay_engine.common.timeline import timeline_arrow_schema

DATASETS = sorted(p for p in REAL_LOGS.iterdir() if p.is_dir())


def old_task_events(table: pa.Table):
    """What the tasks did before: a dict per row, then Python's sort and the copy filter."""
    table = table.set_column(table.schema.get_field_index("ts"), "ts", table.column("ts").cast(pa.int64()))
    events = [event_from_row(r) for r in table.to_pylist()]
    events.sort(key=replay_order)
    return drop_log_copies(events)[0]


def shuffled_table(events, seed: int) -> pa.Table:
    events = list(events)
    random.Random(seed).shuffle(events)
    return pa.Table.from_batches([events_to_arrow(events)])


@pytest.mark.parametrize("root", per_cluster(DATASETS, lambda p: p.name))
def test_task_events_equal_the_row_path(root):
    events = load(root)
    assert events, f"{root.name}: no events (every data set here holds some)"
    table = shuffled_table(events, 7)
    assert task_events(table) == old_task_events(table)


def test_a_rotated_copy_counts_once_as_before():
    # A broker's server.log held twice (the copy under a rotated name): drop_log_copies must still run
    # and give what it gave on the rows.
    root = REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0"
    events = load(root)
    logged = [e for e in events if e.source_kind == "broker_log" and e.broker_id is not None and e.raw]
    assert logged, "the data set has broker log entries"
    name = logged[0].source_file
    import dataclasses

    copies = [dataclasses.replace(e, source_file=name + ".2021-01-01-00") for e in events if e.source_file == name]
    table = shuffled_table(events + copies, 3)
    got = task_events(table)
    assert got == old_task_events(table)
    assert len(got) < table.num_rows  # the copies were dropped, not replayed twice


def test_events_of_keeps_nulls_and_details_apart():
    root = REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0"
    table = shuffled_table(load(root), 1)
    table = table.set_column(table.schema.get_field_index("ts"), "ts", table.column("ts").cast(pa.int64()))
    assert events_of(table) == [event_from_row(r) for r in table.to_pylist()]


@pytest.mark.parametrize("root", per_cluster(DATASETS[:8], lambda p: p.name))
def test_timeline_columns_equal_to_row(root):
    res = replay_cluster(load(root), root.name)
    names = timeline_arrow_schema().names
    cols = timeline_columns(res.intervals, root.name, names)
    rows = [dict(iv.to_row(), cluster=root.name) for iv in res.intervals]
    assert list(cols) == names
    assert [dict(zip(names, vals)) for vals in zip(*cols.values())] == rows


def test_the_shard_task_replays_with_the_collector_paused_after_reading_its_broadcast(monkeypatch):
    # PySpark's Broadcast.load (pyspark/core/broadcast.py) unpickles between gc.disable() and an unconditional
    # gc.enable(): a task that paused the collector and then read its broadcast ran with it on again.
    import gc

    from forensics.audit.distributed import ClusterPlan, make_shard_fn
    from replay_engine.sharding import shard
    from replay_engine.zk.from_events import cluster_context

    root = REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0"
    events = load(root)

    class LikePySparkBroadcast:
        @property
        def value(self):
            gc.disable()
            try:
                return {root.name: ClusterPlan(1, cluster_context(events), False, False)}
            finally:
                gc.enable()

    seen = []
    real = shard.replay_shard

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(shard, "replay_shard", watched)
    table = pa.Table.from_batches([events_to_arrow(events)])
    table = table.append_column("_bucket", pa.array([0] * table.num_rows, pa.int32()))
    assert gc.isenabled()
    class Results:  # the task's side of the accumulator (forensics.audit.shard_results.send)
        sent = []

        def add(self, value):
            self.sent.extend(value)

    results = Results()
    out = make_shard_fn(LikePySparkBroadcast(), results)(table)
    assert seen == [False]
    assert gc.isenabled()  # put back after the task
    assert out.num_rows == len(replay_cluster(events, root.name).intervals)  # the timeline as rows
    assert [(c, b, wide) for c, b, _, wide in results.sent] == [(root.name, 0, True)]  # the rest, once
