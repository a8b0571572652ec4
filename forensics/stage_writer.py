"""A task's events as Arrow batches and as a staged Parquet file (``forensics.staging``), with what the
driver needs to sort them without reading them (``StageWriter.close``).

Every batch of events is one row group; the descriptor a task hands back names, per row group, its rows
and the least and greatest (cluster, time) key in it, and a sample of its keys: the driver cuts the key
space into output parts of even size from the samples, and each part's writer reads only the row groups
whose keys reach into its part (``forensics.stage_output``).

Events of a file read by parts carry two more columns until the driver has merged the parts: ``_attr``
(what attribution to the file's broker still does to the event: ``broker_log_ranges.finish_part_events``)
and ``_src`` (a container stream's source, by index among the stream's sources).
"""
from __future__ import annotations

import os
from itertools import chain
from operator import attrgetter
from typing import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from parsers.schema import ARROW_SCHEMA, RAW_LIMIT, Event, EventRun, Packed, cut_raw, dump_detail

ATTR = "_attr"
SRC = "_src"
PART_COLUMNS = (pa.field(ATTR, pa.int8()), pa.field(SRC, pa.int32()))
# Keys of a row group kept in its descriptor to plan the output parts by: one per this many rows.
SAMPLE_EVERY = 512
# Rows of a row group at most. Each output part reads every row group whose key range reaches into it: a group
# of a file's consecutive events spans little time where the file is in time order, so small groups keep what a
# part reads near what it keeps. A big file whose text goes back in time (logs joined out of order, a rotated
# series concatenated) made every part read nearly every row of 20,000-row groups (issue 48's one-file shape:
# 43 parts read 36x the rows).
GROUP_ROWS = 4096
# How a staged file is written: it lives for one command, is read back once by the parts' writers (and by Spark for
# the commands that replay it), and a big corpus's staged files should stay in the page cache beside the workers.
# No column statistics: the readers find row groups by the descriptor (the parts' writers) or read them whole (Spark),
# and min/max of every text column was a sixth of the write. LZ4, no dictionaries: of the encodings measured on the
# 0.27 GB rotated corpus's 1.08 M staged rows (write, then read back, CPU s, min of 7 in turns under load), snappy with
# dictionaries (pyarrow's default) 2.06 (27.5 MB), lz4 with dictionaries 1.54 (21.6 MB), lz4 without 1.60 (22.4 MB),
# writing 12% less; no compression 603 MB (benchmarks/journal/ingest.md, 2026-11-28 22:00).
# Dictionaries on the text columns but raw (a line's own text, nearly all distinct): the parts' writers read those as
# Arrow dictionaries (``stage_output.write_part``), so their ~300 bytes a row of repeated file names, loggers, event
# types and details are never spelled out row by row in a part's read, combine, sort and take.
DICT_COLUMNS = tuple(f.name for f in ARROW_SCHEMA if f.type == pa.string() and f.name != "raw")
STAGED_PARQUET = {"write_statistics": False, "compression": "lz4", "use_dictionary": list(DICT_COLUMNS)}
# A null time sorts first (Spark's ascending order): as a key, below every stamp.
NULL_TS = -(1 << 63)

_PLAIN = tuple(f.name for f in ARROW_SCHEMA if f.name not in ("detail", "raw"))
_GET = {name: attrgetter(name) for name in _PLAIN}
_DETAIL, _RAW = attrgetter("detail"), attrgetter("raw")
_BASE = attrgetter("base")
_KIND, _DATA, _ENDS = attrgetter("kind"), attrgetter("data"), attrgetter("ends")
_INT32_MAX = (1 << 31) - 1


def event_batch(events: list, schema: pa.Schema = ARROW_SCHEMA, extra: dict | None = None) -> pa.RecordBatch:
    """Events -> one Arrow batch of ``schema``, whose columns are the event fields, ``row_kind`` (all "event")
    and the names in ``extra`` (a value per item of ``events``). Each column is read by one attrgetter mapped
    over the events (a dict per row was a third of the Python workers' time outside the parser; a tuple per
    event transposed in C made one tracked object per event, and the cyclic collector's passes over a file's
    live events cost more than the reading: 1.44 -> 0.97 CPU s for 255,155 events, issue 48's journal)."""
    cols = []
    for f in schema:
        name = f.name
        if extra is not None and name in extra:
            vals = extra[name]
        elif name == "row_kind":
            vals = ["event"] * len(events)
        elif name == "detail":
            vals = list(map(dump_detail, map(_DETAIL, events)))
        elif name == "raw":
            cols.append(_raw_array(list(map(_RAW, events)), f.type))
            continue
        else:
            vals = list(map(_GET[name], events))
        cols.append(pa.array(vals, type=f.type))
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def _raw_array(raws: list, type_: pa.DataType) -> pa.Array:
    """Raw texts as ``cut_raw`` leaves them: nearly none is longer than RAW_LIMIT, so they are converted as they are
    and cut one by one only when some text has more bytes than that (never fewer bytes than characters); a call of
    ``cut_raw`` per event was ~6% of staging on the 0.27 GB rotated corpus."""
    arr = pa.array(raws, type=type_)
    if len(arr) and (pc.max(pc.binary_length(arr)).as_py() or 0) > RAW_LIMIT:
        arr = pa.array(list(map(cut_raw, raws)), type=type_)
    return arr


def event_batches(events: list, schema: pa.Schema = ARROW_SCHEMA, extra: dict | None = None) -> list[pa.RecordBatch]:
    """``event_batch`` of a list that may hold EventRuns: a batch of its plain events (if any), then one of the
    runs of each shape (their own fields), shapes in the order first met. The order of a staged file's rows is
    not the output's: the write sorts every part by (cluster, time, file, line, index in line)."""
    runs = [i for i, ev in enumerate(events) if type(ev) is EventRun]
    if not runs:
        return [event_batch(events, schema, extra)] if events else []
    at = set(runs)
    single = [ev for i, ev in enumerate(events) if i not in at]
    single_extra = None if extra is None else {k: [v for i, v in enumerate(vs) if i not in at] for k, vs in extra.items()}
    shapes: dict[tuple, list[int]] = {}
    for i in runs:
        shapes.setdefault(events[i].fields, []).append(i)
    return ([event_batch(single, schema, single_extra)] if single else []) + \
        [_runs_batch([events[i] for i in shape], shape, schema, extra) for shape in shapes.values()]


def _runs_batch(ran: list, runs: list[int], schema: pa.Schema, extra: dict | None) -> pa.RecordBatch:
    """The events of runs of one shape (``runs``: their places in the list ``extra`` follows) as one batch."""
    lengths = np.fromiter(map(len, ran), dtype=np.int64, count=len(ran))
    rows = int(lengths.sum())
    own_fields = ran[0].fields
    bases = list(map(_BASE, ran))  # what a run's events share
    run_of = []  # row r belongs to run run_of[0][r], made when a shared value differs between runs
    cols = []
    for f in schema:
        name = f.name
        if name in own_fields:
            k = own_fields.index(name)
            cols.append(_own_column([run.columns[k] for run in ran], f, lengths))
            continue
        if name == "source_sub":
            first_row = np.repeat(np.cumsum(lengths) - lengths, lengths)
            base_sub = np.repeat(np.fromiter(map(_GET[name], bases), dtype=np.int64, count=len(ran)), lengths)
            cols.append(pa.array(base_sub + np.arange(rows) - first_row, type=f.type))
            continue
        if extra is not None and name in extra:
            per_run = [extra[name][i] for i in runs]
        elif name == "row_kind":
            per_run = ["event"]
        elif name == "detail":
            per_run = list(map(dump_detail, map(_DETAIL, bases)))
        else:
            per_run = list(map(_GET[name], bases))
        first = per_run[0]
        if per_run.count(first) == len(per_run):  # one value for every run (a file's cluster, source, level ...)
            cols.append(pa.nulls(rows, f.type) if first is None else pa.repeat(pa.scalar(first, f.type), rows))
            continue
        if not run_of:
            run_of.append(pa.array(np.repeat(np.arange(len(ran)), lengths)))
        cols.append(pa.array(per_run, type=f.type).take(run_of[0]))
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def _own_column(columns: list, f: pa.Field, counts: np.ndarray | None = None) -> pa.Array:
    """The runs' own values of one field, in order: ``Packed`` buffers joined as they are, lists value by value;
    raw texts cut as ``cut_raw`` cuts them. ``counts``: each run's events (its length), the same for every field.
    Each step maps a built-in over the runs: the ~33,000 runs of the 0.27 GB rotated corpus, field by field, made
    ~1.3 M Python-level calls (``Packed.__len__``, generator steps) in a sixth of staging."""
    if set(map(type, columns)) != {Packed} or len(set(map(_KIND, columns))) != 1:
        vals = list(chain.from_iterable(columns))
        return pa.array(list(map(cut_raw, vals)) if f.name == "raw" else vals, type=f.type)
    kind = columns[0].kind
    data = b"".join(map(_DATA, columns))
    if kind == "int":
        arr = pa.Array.from_buffers(pa.int32(), len(data) // 4, [None, pa.py_buffer(data)])
        return arr if arr.type == f.type else arr.cast(f.type)
    # Each run's ends count from its own start: shifted by what the runs before it hold.
    if counts is None:
        counts = np.fromiter(map(len, columns), dtype=np.int64, count=len(columns))
    sizes = np.fromiter(map(len, map(_DATA, columns)), dtype=np.int64, count=len(columns))
    if kind == "ints":
        sizes //= 4
    offsets = np.zeros(int(counts.sum()) + 1, dtype=np.int64)
    offsets[1:] = np.frombuffer(b"".join(map(_ENDS, columns)), dtype=np.int32)
    offsets[1:] += np.repeat(np.cumsum(sizes) - sizes, counts)
    large = int(offsets[-1]) > _INT32_MAX
    offs = pa.py_buffer(offsets if large else offsets.astype(np.int32))
    if kind == "ints":
        values = pa.Array.from_buffers(pa.int32(), len(data) // 4, [None, pa.py_buffer(data)])
        arr = (pa.LargeListArray if large else pa.ListArray).from_arrays(
            pa.Array.from_buffers(pa.int64() if large else pa.int32(), len(offsets), [None, offs]), values)
    else:
        arr = pa.Array.from_buffers(pa.large_string() if large else pa.string(), len(offsets) - 1, [None, offs, pa.py_buffer(data)])
        if f.name == "raw" and (np.diff(offsets) > RAW_LIMIT).any():  # bytes, never fewer than characters
            arr = pa.array(list(map(cut_raw, arr.to_pylist())), type=f.type)
    return arr if arr.type == f.type else arr.cast(f.type)


def range_key(cluster: pa.Array, ts: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Each row's (cluster, time) as the output parts are cut by: a null cluster as "", a null time as
    NULL_TS. Never out of Spark's order (nulls first, strings by their bytes): where it ties two keys
    that order tells apart, both land in the same part, which sorts them fully."""
    return pc.fill_null(cluster, ""), pc.fill_null(ts.cast(pa.int64()), NULL_TS)


def group_keys(batch: pa.RecordBatch) -> dict:
    """A row group's rows, least and greatest key, and every SAMPLE_EVERY-th of its keys in order."""
    c, t = range_key(batch.column(batch.schema.get_field_index("cluster")),
                     batch.column(batch.schema.get_field_index("ts")))
    n = len(c)
    at = pa.array(range(SAMPLE_EVERY // 2, n, SAMPLE_EVERY), pa.int64())
    sample = [list(x) for x in zip(c.take(at).to_pylist(), t.take(at).to_pylist())]
    cmm = pc.min_max(c).as_py()
    if cmm["min"] == cmm["max"]:  # one cluster, as a file's events are
        tmm = pc.min_max(t).as_py()
        return {"rows": n, "min": [cmm["min"], tmm["min"]], "max": [cmm["max"], tmm["max"]], "sample": sample}
    order = pc.sort_indices(pa.table({"c": c, "t": t}), sort_keys=[("c", "ascending"), ("t", "ascending")])
    first, last = order[0].as_py(), order[n - 1].as_py()
    return {"rows": n, "min": [c[first].as_py(), t[first].as_py()], "max": [c[last].as_py(), t[last].as_py()],
            "sample": sample}


def batch_group_keys(batch: pa.RecordBatch, group_rows: int) -> list[dict]:
    """``group_keys`` of each slice of ``group_rows`` rows of ``batch``, in one pass over the batch where it holds one
    cluster, as a file's events do (the 389 groups of the 0.27 GB rotated corpus: 0.045 -> 0.023 CPU s); a batch of
    several clusters goes group by group."""
    n = batch.num_rows
    c, t = range_key(batch.column(batch.schema.get_field_index("cluster")),
                     batch.column(batch.schema.get_field_index("ts")))
    cmm = pc.min_max(c).as_py()
    if n == 0 or cmm["min"] != cmm["max"]:
        return [group_keys(batch.slice(at, group_rows)) for at in range(0, n, group_rows)]
    cluster = cmm["min"]
    ts = t.to_numpy(zero_copy_only=False)
    starts = np.arange(0, n, group_rows)
    lows, highs = np.minimum.reduceat(ts, starts).tolist(), np.maximum.reduceat(ts, starts).tolist()
    out = []
    for start, low, high in zip(starts.tolist(), lows, highs):
        rows = min(group_rows, n - start)
        sample = ts[start + SAMPLE_EVERY // 2:start + rows:SAMPLE_EVERY].tolist()
        out.append({"rows": rows, "min": [cluster, low], "max": [cluster, high],
                    "sample": [[cluster, x] for x in sample]})
    return out


class StageWriter:
    """One staged Parquet file, written a row group at a time (nothing is written for no events)."""

    def __init__(self, path: str, source_file: str | None, part_columns: bool = False):
        self.path = path
        self.source_file = source_file
        self.schema = pa.schema(list(ARROW_SCHEMA) + list(PART_COLUMNS)) if part_columns else ARROW_SCHEMA
        self.groups: list[dict] = []
        self._writer = None
        folder, name = os.path.split(path)
        self._tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")

    def write(self, events: list[Event], attrs: Iterable[int] | None = None, srcs: Iterable[int] | None = None) -> None:
        if not events:
            return
        extra = None
        if self.schema is not ARROW_SCHEMA:
            extra = {ATTR: list(attrs) if attrs is not None else [0] * len(events),
                     SRC: list(srcs) if srcs is not None else [0] * len(events)}
        for batch in event_batches(events, self.schema, extra):
            if self._writer is None:
                import pyarrow.parquet as pq

                self._writer = pq.ParquetWriter(self._tmp, self.schema, **STAGED_PARQUET)
            for at in range(0, batch.num_rows, GROUP_ROWS):
                group = batch.slice(at, GROUP_ROWS)
                self._writer.write_batch(group, row_group_size=group.num_rows)
            self.groups += batch_group_keys(batch, GROUP_ROWS)

    def close(self) -> dict | None:
        """Renamed into place (Spark never lists a half-written file); its descriptor, or None if empty."""
        if self._writer is None:
            return None
        self._writer.close()
        os.replace(self._tmp, self.path)
        return {"path": self.path, "file": self.source_file, "rows": sum(g["rows"] for g in self.groups),
                "groups": self.groups}

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        try:
            os.remove(self._tmp)
        except OSError:
            pass
