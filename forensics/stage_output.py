"""The events staged by the ingest's tasks (``forensics.staging``), finished and written in order as the
``ingest`` command's ``events/`` Parquet folder, by Spark tasks running Arrow, not by Spark's own sort.

Spark's ``orderBy(...).write.parquet`` of the staged events read them twice (its range sampling, then
the shuffle), converted every row to its own format and back, and on a fresh JVM compiled all of that
first: on the real-format corpus it cost more CPU than parsing the logs (``benchmarks/RESULTS.md``,
ingest profile). Here the driver already holds, from each staged file's descriptor
(``stage_writer.StageWriter``), the key range and a sample of the keys of every row group. It cuts the
(cluster, time) key space into output parts of about ``ROWS_PER_PART`` rows (``plan_parts``); the task
of part i reads the row groups that reach into it, keeps the rows whose key is in it, finishes them
(``Fixups``: what the driver settled after the parse) and writes them sorted by the full sort key as
``part-0000i.parquet``. Parts are cut in key order, so the folder's files, in name order, hold the
events in the order Spark's ``orderBy`` gave them.

``Fixups`` are also applied to the staged events as Spark reads them (``spark_fixed``), for every
command that replays what it ingested: both ways give the same events.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from forensics.stage_writer import ATTR, DICT_COLUMNS, SRC, range_key
from parsers.schema import ARROW_SCHEMA, FIELD_NAMES, dump_detail
from forensics.worker_imports import in_workers

SORT_KEYS = ("cluster", "ts", "source_file", "source_pos", "source_sub")
# Rows of one output part: the task holding them (read, then sorted) stays around a few hundred MB.
ROWS_PER_PART = int(os.environ.get("KAFKA_FORENSICS_ROWS_PER_PART", "200000"))
FIX_COLUMNS = ("event_type", "subject_broker", "controller_epoch", "detail")


@dataclass
class Fixups:
    """What the driver settled after the parse, per source file: the broker a file read by parts was
    written by (a container stream's: one per source, by index), the broker of a file whose folder names
    only one (``ingest.dir_broker_ids``: its events with none get it), and per event (position, sub) the
    values reading the whole file would have given it (``templates.finish.settle_parts``)."""

    brokers: dict[str, Any] = field(default_factory=dict)
    fill: dict[str, int] = field(default_factory=dict)
    events: dict[str, dict[tuple[int, int], dict]] = field(default_factory=dict)

    def for_file(self, path: str) -> dict:
        return {"broker": self.brokers.get(path), "fill": self.fill.get(path),
                "events": [[pos, sub, vals] for (pos, sub), vals in sorted(self.events.get(path, {}).items())]}

    def any_for(self, path: str) -> bool:
        return path in self.brokers or path in self.fill or path in self.events


def apply_fixups(table: pa.Table, fix: dict) -> pa.Table:
    """One staged file's rows (all of one source file) finished as ``Fixups.for_file`` says; the part
    columns (``_attr``, ``_src``) are dropped."""
    broker, fill, events = fix["broker"], fix["fill"], fix["events"]
    if ATTR in table.column_names:
        attr = table[ATTR]
        if isinstance(broker, list):
            per_row = pa.array(broker, pa.int32()).take(pc.fill_null(table[SRC], 0))
        else:
            per_row = pa.array([broker] * table.num_rows, pa.int32())
        has = pc.and_(pc.greater_equal(pc.fill_null(attr, 0), 1), pc.is_valid(per_row))
        table = table.set_column(table.schema.get_field_index("broker_id"), "broker_id",
                                 pc.if_else(has, per_row, table["broker_id"]))
        subj = pc.and_(pc.equal(pc.fill_null(attr, 0), 2), pc.is_valid(per_row))
        table = table.set_column(table.schema.get_field_index("subject_broker"), "subject_broker",
                                 pc.if_else(subj, per_row, table["subject_broker"]))
    if fill is not None:
        table = table.set_column(table.schema.get_field_index("broker_id"), "broker_id",
                                 pc.fill_null(table["broker_id"], pa.scalar(fill, pa.int32())))
    if events:
        at = {(pos, sub): vals for pos, sub, vals in events}
        hits = pc.is_in(table["source_pos"], value_set=pa.array(sorted({p for p, _ in at}), pa.int64()))
        rows = [i for i in pc.indices_nonzero(hits).to_pylist()
                if (table["source_pos"][i].as_py(), table["source_sub"][i].as_py()) in at]
        if rows:
            settled = [at[(table["source_pos"][i].as_py(), table["source_sub"][i].as_py())] for i in rows]
            for name in FIX_COLUMNS:
                sets = [(i, dump_detail(vals[name]) if name == "detail" else vals[name])
                        for i, vals in zip(rows, settled) if name in vals]
                if sets:
                    table = table.set_column(table.schema.get_field_index(name), name,
                                             set_rows(table[name], [i for i, _ in sets], [v for _, v in sets]))
    return table.select(list(FIELD_NAMES))


def set_rows(column: pa.ChunkedArray, rows: list[int], values: list) -> pa.Array:
    """``column`` with ``values`` at ``rows`` (ascending) and its other rows as they were, in Arrow: a part's few
    settled events no longer take its whole columns to Python lists and back (0.06 CPU s a staged table of the
    2 GB compose stream for one or two rows; benchmarks/journal/ingest.md, 2026-11-29 04:33). A dictionary
    column keeps its dictionary, extended by the values it lacks."""
    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    mask = np.zeros(len(col), dtype=bool)
    mask[rows] = True
    if not pa.types.is_dictionary(col.type):
        return pc.replace_with_mask(col, pa.array(mask), pa.array(values, col.type))
    dictionary, wanted = col.dictionary, pa.array(values, col.type.value_type)
    fresh = pc.unique(wanted.filter(pc.and_(pc.is_valid(wanted), pc.is_null(pc.index_in(wanted, value_set=dictionary)))))
    if len(fresh):
        dictionary = pa.concat_arrays([dictionary, fresh])
    indices = pc.index_in(wanted, value_set=dictionary).cast(col.type.index_type)  # a null value stays null
    return pa.DictionaryArray.from_arrays(pc.replace_with_mask(col.indices, pa.array(mask), indices), dictionary)


def _key(k) -> tuple[str, int]:
    return (k[0], k[1])


def plan_parts(descriptors: list[dict], rows_per_part: int | None = None) -> list[list]:
    """The staged files' descriptors -> the output parts: per part, its bounds [lo, hi) as (cluster, time)
    keys (None: open) and the (staged file, source file, row groups) it reads, with the groups among them whose
    keys reach outside the part (only their rows are filtered by key: ``write_part``)."""
    rows_per_part = rows_per_part or ROWS_PER_PART
    total = sum(d["rows"] for d in descriptors)
    sample = sorted(_key(s) for d in descriptors for g in d["groups"] for s in g["sample"])
    n = max(1, -(-total // rows_per_part))
    cuts: list[tuple[str, int]] = []
    for k in range(1, n):
        if not sample:
            break
        at = sample[min(len(sample) - 1, k * len(sample) // n)]
        if not cuts or at > cuts[-1]:
            cuts.append(at)
    bounds = [None, *cuts, None]
    parts = []
    for lo, hi in zip(bounds, bounds[1:]):
        reads = []
        for d in descriptors:
            groups, cut = [], []
            for i, g in enumerate(d["groups"]):
                low, high = _key(g["min"]), _key(g["max"])
                if (lo is None or high >= lo) and (hi is None or low < hi):
                    groups.append(i)
                    if (lo is not None and low < lo) or (hi is not None and high >= hi):
                        cut.append(i)
            if groups:
                reads.append([d["path"], d["file"], groups, cut])
        parts.append([list(lo) if lo else None, list(hi) if hi else None, reads])
    return parts


def sort_order(table: pa.Table) -> pa.Array:
    """The rows' order by SORT_KEYS as Spark's orderBy gives it: ascending, nulls first, strings by bytes."""
    keys = pa.table({k: _sortable(table[k]) for k in SORT_KEYS})
    try:
        return pc.sort_indices(keys, sort_keys=[(k, "ascending", "at_start") for k in SORT_KEYS])
    except (TypeError, ValueError):  # pyarrow before per-key null placement
        return pc.sort_indices(keys, sort_keys=[(k, "ascending") for k in SORT_KEYS], null_placement="at_start")


def _sortable(column: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    """A dictionary column (Arrow sorts none) as each row's value's rank among the dictionary's values, ordered as
    their text sorts (by bytes); equal texts rank equal, a null row stays null."""
    if not pa.types.is_dictionary(column.type):
        return column
    arr = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)  # one dictionary for every row
    if arr.dictionary.null_count:
        return arr.cast(arr.type.value_type)
    return pc.rank(arr.dictionary, sort_keys="ascending", tiebreaker="dense").take(arr.indices)


def _in_part(table: pa.Table, lo, hi) -> pa.Array:
    c, t = range_key(table["cluster"], table["ts"])
    keep = None
    for bound, after in ((lo, True), (hi, False)):
        if bound is None:
            continue
        bc, bt = bound
        if after:  # key >= lo
            m = pc.or_(pc.greater(c, bc), pc.and_(pc.equal(c, bc), pc.greater_equal(t, bt)))
        else:  # key < hi
            m = pc.or_(pc.less(c, bc), pc.and_(pc.equal(c, bc), pc.less(t, bt)))
        keep = m if keep is None else pc.and_(keep, m)
    return keep


def _read_in_part(pf, groups: list[int], cut: list[int], columns, lo, hi) -> pa.Table:
    """The rows of ``pf``'s row groups ``groups`` in the part [lo, hi): the groups that lie inside it read whole,
    those marked ``cut`` read in a second read and filtered by key at once. (Read together, one chunk per column,
    the groups kept whole were slices of that chunk and held the cut groups' rows outside the part until the part
    was combined: 1.1-1.55x a part's rows on the 2 GB rotated shape.) The rows of the two reads are in no common
    order: the part's sort orders them all, by a key no two events share (the source file, position and sub)."""
    cuts = set(cut)
    whole = [i for i in groups if i not in cuts]
    pieces = [pf.read_row_groups(whole, columns=columns, use_threads=False)] if whole else []
    if cut:
        read = pf.read_row_groups(cut, columns=columns, use_threads=False)
        pieces.append(read.filter(_in_part(read, lo, hi)))
    return pa.concat_tables(pieces)


def _read_part(part: list, fixups: dict[str, dict]) -> list[pa.Table]:
    """Part ``part``'s rows as read from the staged files, finished by their fixups: a table per staged file."""
    import pyarrow.parquet as pq

    lo, hi, reads = part
    tables = []
    for path, source_file, groups, cut in reads:
        fix = fixups.get(source_file)
        pf = pq.ParquetFile(path, read_dictionary=DICT_COLUMNS)
        # the part columns (_attr, _src) only where fixups read them
        t = _read_in_part(pf, groups, cut, None if fix is not None else list(FIELD_NAMES), lo, hi)
        if t.num_rows:
            tables.append(apply_fixups(t, fix) if fix is not None else t.select(list(FIELD_NAMES)))
    return tables


def _sorted(tables: list[pa.Table]) -> pa.Table:
    """``tables``' rows (emptied from the list) as one table in SORT_KEYS order, built a column at a time: each
    column's chunks combined (a take from many chunks cost 3x the copy and the take), taken in order, and dropped
    before the next column is combined, so the part's rows are in memory once plus one column's copy (the whole
    table combined, then taken, held them twice; ``raw`` is the largest column, over half a row's bytes)."""
    if not tables:
        return ARROW_SCHEMA.empty_table()
    schema = tables[0].schema
    chunks = {name: [c for t in tables for c in t.column(name).chunks] for name in schema.names}
    tables.clear()

    def combined(name):
        return pa.chunked_array(chunks.pop(name), schema.field(name).type).combine_chunks()

    keys = {name: combined(name) for name in SORT_KEYS}
    order = sort_order(pa.table(keys))
    columns = []
    for name in schema.names:
        column = keys.pop(name, None)
        if column is None:
            column = combined(name)
        columns.append(column.take(order))
        del column
    return pa.Table.from_arrays(columns, schema=schema)


def write_part(index: int, part: list, fixups: dict[str, dict], out_dir: str) -> int:
    """Part ``index`` of ``plan_parts``: its rows read, finished, sorted and written; their number."""
    import pyarrow.parquet as pq

    table = _sorted(_read_part(part, fixups))
    name = os.path.join(out_dir, f"part-{index:05d}.parquet")
    # The text columns are Arrow dictionaries here, written as the Parquet dictionaries they are; the Arrow schema
    # stored with them would make readers give back dictionaries: without it they read ARROW_SCHEMA's types.
    pq.write_table(table, name, use_dictionary=True, compression="snappy", store_schema=False)
    return table.num_rows


def make_write_fn(parts: list[list], fixups_bc, out_dir: str):
    """What Spark runs per output part: (batches of part indexes) -> one row (part, rows) each."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        fixups = fixups_bc.value
        for batch in batches:
            for i in batch.column(0).to_pylist():
                n = write_part(i, parts[i], fixups, out_dir)
                yield pa.RecordBatch.from_pylist([{"part": i, "rows": n}], schema=WRITE_RESULT)

    return run


WRITE_RESULT = pa.schema([pa.field("part", pa.int64()), pa.field("rows", pa.int64())])


def write_events(spark, descriptors: list[dict], fixups: Fixups, out_dir: str) -> int:
    """The staged events, finished and sorted, as ``out_dir``'s Parquet files (Spark's layout: part files
    in order and ``_SUCCESS``); their number."""
    import shutil

    from forensics.spark import spark_type

    parts = plan_parts(descriptors)
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    files = {d["file"] for d in descriptors}
    per_file = {f: fixups.for_file(f) for f in sorted(files) if fixups.any_for(f)}
    fix_bc = spark.sparkContext.broadcast(per_file)
    try:
        rows = spark.range(len(parts), numPartitions=len(parts)) \
            .mapInArrow(in_workers(make_write_fn(parts, fix_bc, out_dir)), spark_type(WRITE_RESULT)).collect()
    finally:
        fix_bc.unpersist()
    open(os.path.join(out_dir, "_SUCCESS"), "wb").close()
    return sum(r["rows"] for r in rows)



QUARANTINE_ARROW = pa.schema([pa.field("source_file", pa.string()), pa.field("source_pos", pa.int64()),
                              pa.field("category", pa.string()), pa.field("reason", pa.string()),
                              pa.field("raw", pa.string())])


def write_quarantine(rows: list[dict], out_dir: str) -> None:
    """The quarantined lines (``ingest.quarantine_rows``: already in order) as ``out_dir``'s Parquet file, with the
    columns and types Spark's write of the ``quarantine`` DataFrame gives, and ``_SUCCESS``."""
    import shutil

    import pyarrow.parquet as pq

    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    table = pa.Table.from_pylist(rows, schema=QUARANTINE_ARROW)
    pq.write_table(table, os.path.join(out_dir, "part-00000.parquet"), use_dictionary=True, compression="snappy")
    open(os.path.join(out_dir, "_SUCCESS"), "wb").close()
