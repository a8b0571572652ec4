"""A Python function per group of rows, the group's rows reaching the Python worker in small batches.

``groupBy(...).applyInArrow`` hands a group to Python as one Arrow batch that the JVM builds off-heap
(Netty direct memory, capped by default at the JVM's -Xmx): a cluster's phase 1 over 90 days of
100,000 partitions is ~1.7 million rows, well past local mode's 1 GB. Here the rows are shuffled by
the group's key, sorted by it within each partition (Spark's sort spills to disk), and streamed by
``mapInArrow`` in batches of ``spark.sql.execution.arrow.maxRecordsPerBatch``; the worker gathers
one group's batches at a time, so only the Python side holds a whole group.
"""
from __future__ import annotations

from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
from forensics.worker_imports import in_workers

# Output batches of Spark's own default size: the JVM reads each returned batch off-heap whole.
OUT_BATCH_ROWS = 10_000


def _key_runs(batch: pa.RecordBatch, keys: tuple[str, ...]) -> list[tuple[tuple, int, int]]:
    """(key, start, stop) of each run of equal keys in a batch sorted by them. The boundaries are found on the
    Arrow columns (a null equals a null), so only one key per run becomes a Python value."""
    n = batch.num_rows
    if n == 0:
        return []
    changed = pa.array([False] * (n - 1), pa.bool_())
    for k in keys:
        col = batch.column(k)
        a, b = col.slice(1), col.slice(0, n - 1)
        differ = pc.fill_null(pc.not_equal(a, b), False)
        null_flip = pc.xor(pc.is_null(a), pc.is_null(b))
        changed = pc.or_(changed, pc.or_(differ, null_flip))
    starts = [0] + [i + 1 for i in pc.indices_nonzero(changed).to_pylist()]
    stops = starts[1:] + [n]
    return [(tuple(batch.column(k)[a].as_py() for k in keys), a, z) for a, z in zip(starts, stops)]


def group_tables(batches: Iterator[pa.RecordBatch], keys: tuple[str, ...]) -> Iterator[tuple[tuple, pa.Table]]:
    """Each group's rows as one table, from batches sorted by ``keys`` (a group may span batches)."""
    current, parts, schema = None, [], None
    for batch in batches:
        schema = batch.schema
        for key, a, b in _key_runs(batch, keys):
            if parts and key != current:
                yield current, pa.Table.from_batches(parts, schema=schema)
                parts = []
            current = key
            parts.append(batch.slice(a, b - a))
    if parts:
        yield current, pa.Table.from_batches(parts, schema=schema)


def split_groups(table: pa.Table, keys: tuple[str, ...]) -> list[tuple[tuple, pa.Table]]:
    """The rows of ``table`` (in no order) by their values of ``keys`` (a null is a value), groups in key order,
    a group's rows in the table's order."""
    if table.num_rows == 0:
        return []
    keyed = pa.table({k: table.column(k) for k in keys})
    distinct = keyed.group_by(list(keys), use_threads=False).aggregate([])
    if distinct.num_rows == 1:  # the usual task: one shard, kept as it came (no copy of its rows)
        return [(tuple(distinct.column(k)[0].as_py() for k in keys), table)]
    index = keyed.append_column("_row", pa.array(range(table.num_rows), pa.int64()))
    groups = index.group_by(list(keys), use_threads=False).aggregate([("_row", "list")])
    out = []
    for g in groups.to_pylist():
        out.append((tuple(g[k] for k in keys), table.take(pa.array(g["_row_list"], pa.int64()))))
    return sorted(out, key=lambda kv: tuple((v is not None, v) for v in kv[0]))


def apply_in_tasks(df, keys: tuple[str, ...], fn: Callable[[pa.Table], pa.Table], schema: pa.Schema):
    """``df.groupBy(*keys).applyInArrow(fn, schema)`` for a ``df`` already partitioned so that a group's rows
    share a partition (``forensics.audit.placement.one_task_per_group``): no sort by the keys. Each task
    gathers its partition's batches and splits them by ``keys`` itself, so it must hold them all: for groups
    of bounded size only (the split shards)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        batches = list(batches)
        if not batches:
            return
        for _, table in split_groups(pa.Table.from_batches(batches), keys):
            yield from fn(table).to_batches(max_chunksize=OUT_BATCH_ROWS)

    return df.mapInArrow(in_workers(run), from_arrow_schema(schema))


def apply_in_groups(df, keys: tuple[str, ...], fn: Callable[[pa.Table], pa.Table], schema: pa.Schema,
                    partitions: int, partition_by: tuple[str, ...] | None = None):
    """``df.groupBy(*keys).applyInArrow(fn, schema)`` without a group's rows ever being one JVM batch.
    ``fn`` gets a non-empty group's rows (in no set order, as with applyInArrow) and returns a table of
    ``schema``. ``partitions``: tasks of the shuffle, by the hash of ``partition_by`` (some of ``keys``;
    all of them by default): groups share a task when their hashes meet."""
    from pyspark.sql.pandas.types import from_arrow_schema

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for _, table in group_tables(batches, keys):
            out = fn(table)
            yield from out.to_batches(max_chunksize=OUT_BATCH_ROWS)

    grouped = df.repartition(max(1, partitions), *(partition_by or keys)).sortWithinPartitions(*keys)
    return grouped.mapInArrow(in_workers(run), from_arrow_schema(schema))
