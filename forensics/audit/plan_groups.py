"""What a cluster's replay plan is folded from: the events counted per group of (cluster, event type, read
from ZooKeeper's txn log or not, and for a broker's or client's log line the controller log window its file
and logger tell, with its broker), with the group's rows, rows with a time, first and last time (epoch
microseconds).

Groups of any part of the events fold into the same plan (sums, minima, maxima:
``forensics.audit.distributed.cluster_plans``), so they are counted wherever events are in hand: the
audit store counts each day file it writes and keeps the groups in the file's footer (reading them back
is a footer per day, no Spark job), and ``spark_groups`` counts any events DataFrame, a task per
partition. Both count with ``groups_of``, the one grammar of a group.
"""
from __future__ import annotations

import json
from typing import Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
from forensics.worker_imports import in_workers

KEYS = ("cluster", "event_type", "zk", "window", "broker_id")
SCHEMA = pa.schema([pa.field("cluster", pa.string()), pa.field("event_type", pa.string()), pa.field("zk", pa.bool_()),
                    pa.field("window", pa.string()), pa.field("broker_id", pa.int32()), pa.field("n", pa.int64()),
                    pa.field("n_ts", pa.int64()), pa.field("a", pa.int64()), pa.field("z", pa.int64())])
# the event fields a group is told from
READS = ("cluster", "event_type", "source_kind", "source_file", "logger", "broker_id", "ts")
# the key of a Parquet file's metadata that holds its groups (without the cluster: the directory names it)
FOOTER_KEY = b"kafka_forensics.plan_groups"
# rows counted at once by a Spark task: Spark's batches are ARROW_BATCH_ROWS, and counting each apart cost
# ~0.2 s more on 287,000 events
CHUNK_ROWS = 100_000


def groups_of(table: pa.Table) -> pa.Table:
    """The groups of ``table``'s rows (columns READS; ``cluster`` may be absent, then null). ``window``: the
    controller record whose log a broker's or client's line bounds (``log_window_kind`` of its file and
    logger, told once per distinct pair), with its broker; null for other rows."""
    n = table.num_rows
    cluster = table.column("cluster") if "cluster" in table.column_names else pa.nulls(n, pa.string())
    kind = table.column("source_kind")
    broker = table.column("broker_id").cast(pa.int32())
    windowed = pc.and_(pc.or_(pc.is_in(kind, value_set=pa.array(["broker_log", "client_log"])), pc.is_null(kind)),
                       pc.is_valid(broker))
    windowed = pc.fill_null(windowed, False)
    ts = table.column("ts")
    if pa.types.is_timestamp(ts.type):
        ts = ts.cast(pa.timestamp("us", tz=ts.type.tz)).cast(pa.int64())
    window = _windows(table.column("source_file"), table.column("logger"))
    window = pc.if_else(windowed, window, pa.nulls(n, pa.string()))
    keyed = pa.table({
        "cluster": cluster.cast(pa.string()),
        "event_type": table.column("event_type").cast(pa.string()),
        "zk": pc.fill_null(pc.equal(kind, "zk_txnlog"), False),
        "window": window,
        "broker_id": pc.if_else(pc.is_valid(window), broker, pa.nulls(n, pa.int32())),
        "us": ts.cast(pa.int64()),
    })
    out = keyed.group_by(list(KEYS), use_threads=False).aggregate(
        [("us", "count", pc.CountOptions(mode="all")), ("us", "count"), ("us", "min"), ("us", "max")])
    # pyarrow names both counts "us_count": the aggregates are told by their order, which is the order asked
    names = list(out.column_names)
    for i, new in zip([i for i, c in enumerate(names) if c.startswith("us_")], ("n", "n_ts", "a", "z")):
        names[i] = new
    return out.rename_columns(names).select(SCHEMA.names).cast(SCHEMA)


def _windows(files, loggers) -> pa.Array:
    """``log_window_kind`` of each row's (file, logger), computed once per distinct pair. A null and an empty
    text are alike to it, and no path holds a NUL, so the pair is joined on one."""
    from replay_engine.zk.from_events import log_window_kind

    pairs = pc.binary_join_element_wise(pc.fill_null(files, ""), pc.fill_null(loggers, ""), "\x00")
    if isinstance(pairs, pa.ChunkedArray):
        pairs = pairs.combine_chunks()
    codes = pc.dictionary_encode(pairs)
    kinds = pa.array([log_window_kind(*p.split("\x00", 1)) for p in codes.dictionary.to_pylist()], pa.string())
    return pc.take(kinds, codes.indices)


def merged(parts: list[pa.Table]) -> pa.Table:
    """Groups of several parts of the events as the groups of them all."""
    out = pa.concat_tables(parts).group_by(list(KEYS), use_threads=False).aggregate(
        [("n", "sum"), ("n_ts", "sum"), ("a", "min"), ("z", "max")])
    return out.rename_columns([c.rsplit("_", 1)[0] if c.endswith(("_sum", "_min", "_max")) else c
                               for c in out.column_names]).select(SCHEMA.names).cast(SCHEMA)


def sort_rows(rows: Iterable[dict]) -> list[dict]:
    """Groups in a fixed order (nulls last in each field), whatever order they were counted in."""
    return sorted(rows, key=lambda r: tuple((r[k] is None, r[k]) for k in SCHEMA.names))


def footer(table: pa.Table) -> dict[bytes, bytes]:
    """A day file's groups as its Parquet metadata: the same rows give the same bytes."""
    rows = sort_rows(groups_of(table.select([c for c in READS if c in table.column_names])).to_pylist())
    data = [[r[k] for k in SCHEMA.names if k != "cluster"] for r in rows]
    return {FOOTER_KEY: json.dumps(data, separators=(",", ":")).encode()}


def from_footer(footer, cluster: str) -> list[dict] | None:
    """The groups a day file's Parquet footer holds, with the cluster its directory names; None when it holds
    none (written before the footers were kept), or groups that do not count the file's rows (a file rewritten
    by another tool with its metadata kept, or unreadable)."""
    raw = ((footer.metadata if footer is not None else None) or {}).get(FOOTER_KEY)
    if raw is None:
        return None
    names = [k for k in SCHEMA.names if k != "cluster"]
    try:
        rows = [{"cluster": cluster, **dict(zip(names, r, strict=True))} for r in json.loads(raw)]
    except (ValueError, TypeError):
        return None
    if sum(r["n"] for r in rows if isinstance(r["n"], int)) != footer.num_rows:
        return None
    return rows


def stored_groups(store, clusters) -> list[dict] | None:
    """The groups of the listed clusters' events as the audit store's files keep them (``Store.write_spark``
    with ``footer``); None when a file holds none, for the caller to count them with Spark."""
    rows: list[dict] = []
    for c, footers in store.footers("events", clusters).items():
        for f in footers:
            got = from_footer(f, c)
            if got is None:
                return None
            rows += got
    return rows


def spark_groups(events) -> list[dict]:
    """The groups of an events DataFrame: each task counts its partition, the driver gets the counts."""
    from pyspark.sql.pandas.types import from_arrow_schema

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # a chunk of rows at a time, so a task holds its groups, never its partition's rows
        parts, chunk, held = [], [], 0
        for b in batches:
            chunk.append(b)
            held += b.num_rows
            if held >= CHUNK_ROWS:
                parts.append(groups_of(pa.Table.from_batches(chunk)))
                chunk, held = [], 0
        if chunk:
            parts.append(groups_of(pa.Table.from_batches(chunk)))
        if parts:
            yield from merged(parts).to_batches()

    return events.select(*READS).mapInArrow(in_workers(count), from_arrow_schema(SCHEMA)).toArrow().to_pylist()
