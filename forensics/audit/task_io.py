"""What an executor task of the replay reads and hands back, column by column.

A task gets its events as one Arrow table and returns its timeline as Arrow columns. Both
conversions run once per event or interval, so they are done per column (one Python list per
column, no dict per row): the order and the dropping of log copies are decided on the Arrow
columns, before any ``Event`` exists, and the timeline is read off the intervals' attributes.
"""
from __future__ import annotations

import dataclasses

import pyarrow as pa
import pyarrow.compute as pc

from parsers.schema import Event, load_detail

_EVENT_FIELDS = tuple(f.name for f in dataclasses.fields(Event))
# ``forensics.pipeline.collect_events``'s replay order: (ts or 0, source_file or "", source_pos or 0, source_sub)
_ORDER = (("ts", 0), ("source_file", ""), ("source_pos", 0), ("source_sub", 0))
# ``forensics.pipeline._copy_key``: entries of one broker with the same time and text
_COPY_KEY = ("cluster", "broker_id", "ts", "raw", "source_sub", "event_type")


def task_events(table: pa.Table) -> list[Event]:
    """A task's Arrow rows as events in replay order, copies of a log entry counted once (as
    ``postmortem`` does: an entry held twice, a rotation beside its copy, counts once)."""
    from forensics.pipeline import drop_log_copies

    # epoch microseconds, not datetimes: converting millions of timestamps to objects costs more than the replay
    table = table.set_column(table.schema.get_field_index("ts"), "ts", table.column("ts").cast(pa.int64()))
    table = table.take(_replay_order(table))
    events = events_of(table)
    if _may_hold_copies(table):
        events, _ = drop_log_copies(events)
    return events


def _replay_order(table: pa.Table) -> pa.Array:
    """Indices in replay order. Arrow's sort is stable, as ``list.sort`` is, and compares strings by
    their UTF-8 bytes, which orders them as Python orders code points."""
    keys = pa.table({f"k{i}": pc.fill_null(table.column(name), pa.scalar(null, table.schema.field(name).type))
                     for i, (name, null) in enumerate(_ORDER)})
    return pc.sort_indices(keys, sort_keys=[(f"k{i}", "ascending") for i in range(len(_ORDER))])


def _may_hold_copies(table: pa.Table) -> bool:
    """Could ``drop_log_copies`` drop anything here: two rows of one copy key read from different files?
    When not, it would return the events unchanged, and its per-event pass is skipped. Grouping by the
    line's text is the costly part, so it is done only for the times where the key without the text
    already spans several files (entries of different logs can share a millisecond)."""
    t = table.select(["source_kind", "source_file", *_COPY_KEY])
    t = t.filter(pc.and_(pc.equal(t.column("source_kind"), "broker_log"),
                         pc.and_(pc.is_valid(t.column("broker_id")),
                                 pc.and_(pc.is_valid(t.column("raw")), pc.is_valid(t.column("source_file"))))))
    if t.num_rows < 2:
        return False
    t = t.set_column(t.schema.get_field_index("source_sub"), "source_sub",
                     pc.fill_null(t.column("source_sub"), pa.scalar(0, t.schema.field("source_sub").type)))
    for key in ([k for k in _COPY_KEY if k != "raw"], list(_COPY_KEY)):
        files = t.group_by(key, use_threads=False).aggregate([("source_file", "count_distinct")])
        shared = files.filter(pc.greater(files.column("source_file_count_distinct"), 1))
        if shared.num_rows == 0:
            return False
        t = t.filter(pc.is_in(t.column("ts"), value_set=shared.column("ts").combine_chunks()))
    return True


def events_of(table: pa.Table) -> list[Event]:
    """``[event_from_row(r) for r in table.to_pylist()]`` column by column (``ts`` already epoch
    microseconds), without a dict per row. Equal detail texts are parsed once and share their dict
    (the replay reads details, never changes them)."""
    cols = {n: table.column(n).to_pylist() for n in _EVENT_FIELDS}
    parsed: dict[str, dict] = {}

    def detail(d):
        if not isinstance(d, str):
            return d or None
        got = parsed.get(d)
        if got is None:
            got = parsed[d] = load_detail(d)
        return got

    cols["detail"] = [detail(d) for d in cols["detail"]]
    cols["source_sub"] = [0 if v is None else v for v in cols["source_sub"]]
    return [Event(*vals) for vals in zip(*(cols[n] for n in _EVENT_FIELDS))]


def timeline_columns(intervals: list, cluster: str, names) -> dict[str, list]:
    """``Interval.to_row`` of every interval (plus its cluster), as one list per column of ``names``."""
    views = [iv.view for iv in intervals]
    refs = [iv.opened_by for iv in intervals]
    leaderless: dict[int, bool] = {}  # intervals share their views: the property computed once a view

    def is_leaderless(v) -> bool:
        got = leaderless.get(id(v))
        if got is None:
            got = leaderless[id(v)] = v.leaderless
        return got

    cols = {
        "cluster": [cluster] * len(intervals),
        "topic": [iv.topic for iv in intervals],
        "partition": [iv.partition for iv in intervals],
        "start": [iv.start for iv in intervals],
        "end": [iv.end for iv in intervals],
        "leader": [v.leader for v in views],
        "isr": [None if v.isr is None else list(v.isr) for v in views],
        "leader_epoch": [v.leader_epoch for v in views],
        "controller_epoch": [v.controller_epoch for v in views],
        "state": [v.state for v in views],
        "leader_alive": [v.leader_alive for v in views],
        "leader_serving": [v.leader_serving for v in views],
        "leaderless": [is_leaderless(v) for v in views],
        "basis": [iv.basis for iv in intervals],
        "opened_by_event": [r.event for r in refs],
        "opened_by_file": [r.source_file for r in refs],
        "opened_by_pos": [r.source_pos for r in refs],
        "opened_by_text": [r.text for r in refs],
    }
    missing = set(names) - set(cols)
    if missing:
        raise ValueError(f"timeline columns not built here: {sorted(missing)}")
    return {n: cols[n] for n in names}
