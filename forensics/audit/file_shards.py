"""Shard tasks that read their rows from the audit store's day files themselves: no scan, no shuffle.

Routed by Spark (``distributed.route``), a replay is a job of two stages: the day files scanned and
each row sent to its shard(s) through a shuffle, then the shards. On the 2 GB benchmark that first
stage is ~1 s of an 8 s run on two cores, and it does not shrink with more executors
(benchmarks/journal/replay.md, "where a run goes"). A task that knows its cluster's files reads them with
pyarrow, as the store's writer tasks wrote them, and keeps its own shard's rows by ``route``'s rule:
one stage, the shards' own.

The price: every shard of a cluster reads all of the cluster's rows, ~0.7 µs a row (0.2 s for the
benchmark's 287,465 in one task, where each of its two shards replays its half in ~6 s), so K shards
cost ~0.7 K µs per row of the cluster, against ~4.5 µs for Spark's scan and route (1.3 s for the same
rows) before its shuffle is read. Up to MAX_SHARDS shards (at most 4 x ``MAX_SHARD_EVENTS`` rows read
by a task) that is less; a cluster cut into more (a long span: ``distributed.shard_count``) is routed
by Spark.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from forensics.audit.placement import pack
from forensics.audit.streamed_groups import OUT_BATCH_ROWS
from parsers.schema import FIELD_NAMES
from replay_engine.sharding.cluster_pass import RECORD_EVENT_TYPES
from replay_engine.sharding.shard import bucket_of_name
from forensics.worker_imports import in_workers

MAX_SHARDS = 4
READ_ROWS = 65_536  # a task holds its shard's rows and one batch of the file's
# the store's files hold every event field but the cluster, which their directory names
FILE_COLUMNS = tuple(n for n in FIELD_NAMES if n != "cluster")


def readable(paths: list[Path]) -> bool:
    """Can a task read these files' rows itself: each footer readable, each file holding every event column?
    (When not, Spark reads them, and says what is wrong with a file.)"""
    for p in paths:
        try:
            names = set(pq.read_schema(p).names)
        except (OSError, pa.ArrowException):
            return False
        if not names.issuperset(FILE_COLUMNS):
            return False
    return True


def shard_rows(paths: list[str], cluster: str, bucket: int, buckets: int, records: bool) -> pa.Table:
    """The rows ``route`` sends to shard ``bucket`` of ``buckets`` (without phase 1's hints), from the cluster's
    files: a partition's events to its own shard; every shard gets the events of no partition and, when
    ``records`` (phase 1 runs in every shard), every controller record; ZooKeeper transactions to none, as
    ``replay_on_executors`` leaves them out. Columns: the event fields, then ``_bucket``."""
    owned: dict[str, bool] = {}  # a partition's name -> in this shard (names recur in every batch)
    kept: list[pa.RecordBatch] = []
    record_types = pa.array(sorted(RECORD_EVENT_TYPES), pa.string())
    for path in paths:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=READ_ROWS, columns=list(FILE_COLUMNS)):
            kept.append(batch.filter(_keep(batch, bucket, buckets, records, record_types, owned)))
    if not kept:  # files of no rows: an empty shard, which the shard function returns at once
        return pa.table({n: [] for n in FIELD_NAMES})
    table = pa.Table.from_batches(kept)
    n = table.num_rows
    table = table.add_column(0, "cluster", pa.array([cluster] * n, pa.string()))
    return table.select(list(FIELD_NAMES)).append_column("_bucket", pa.array([bucket] * n, pa.int32()))


def _keep(batch: pa.RecordBatch, bucket: int, buckets: int, records: bool, record_types: pa.Array,
          owned: dict[str, bool]) -> pa.Array:
    topic, partition, event = batch.column("topic"), batch.column("partition"), batch.column("event_type")
    wide = pc.or_(pc.is_null(topic), pc.is_null(partition))
    if records:
        wide = pc.or_(wide, pc.is_in(event, value_set=record_types))
    names = pc.dictionary_encode(pc.binary_join_element_wise(topic, pc.cast(partition, pa.string()), "-"))
    mine = []
    for name in names.dictionary.to_pylist():
        got = owned.get(name)
        if got is None:
            got = owned[name] = bucket_of_name(name, buckets) == bucket
        mine.append(got)
    own = pc.fill_null(pc.take(pa.array(mine, pa.bool_()), names.indices), False)
    routed = pc.or_(pc.fill_null(wide, False), own)
    # as Spark's filter ``event_type != 'zk_txn'``: a null event type is no match either
    return pc.and_(routed, pc.fill_null(pc.not_equal(event, "zk_txn"), False))


def file_tasks(spark, groups: list[tuple[str, int]], weights: list[int], least: int,
               run: Callable[[str, int], pa.Table], schema: pa.Schema):
    """A DataFrame of ``schema``: the tables ``run(cluster, bucket)`` returns for each of ``groups``, one
    Spark task per group (light ones packed together: ``forensics.audit.placement.pack``), from no input:
    each task reads its own rows."""
    from pyspark.sql.pandas.types import from_arrow_schema

    task_of, n = pack(weights, least)
    n = max(1, n)
    by_task: list[list[tuple[str, int]]] = [[] for _ in range(n)]
    for g, t in zip(groups, task_of):
        by_task[t].append(g)

    def tasks(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            for t in b.column("id").to_pylist():
                for cluster, bucket in by_task[t]:
                    yield from run(cluster, bucket).to_batches(max_chunksize=OUT_BATCH_ROWS)

    # spark.range(0, n, 1, n): n partitions of one id each, the task's index
    return spark.range(0, n, 1, n).mapInArrow(in_workers(tasks), from_arrow_schema(schema))
