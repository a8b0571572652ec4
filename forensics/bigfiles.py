"""Broker logs too big to hand to a task whole: planned on the driver, read by parts on the executors.

Spark's ``binaryFile`` gives a task the whole file as one value (the JVM holds it, then
Python): a 426 MB ``kafkaServer.out`` is a heap error. A plain file over ``range_bytes`` is
cut into byte ranges, as Spark's own text source splits files, each read by one task from
the file itself; a big gzip file is read as a stream by one task. Tasks read local paths
(what ``sources.collect_inputs`` gives for local files and extracted archives); remote URIs
stay with ``binaryFile``.

Per file the driver then merges the parts' accounting (``merge_parts``), and one more pass
attributes the file's events to its broker and finishes them in file order, as the
whole-file parser does (``finish_file_events``). On a local master (``make_staged_part_fn``) there is no
such pass: each part finishes its own events and stages them as Parquet, and the driver settles what the
parts left to each other (an election whose epoch line is in the next part, the file's broker:
``settle_big_files``) as a few values that reading the staged events applies (``forensics.stage_output``).

A big container stream whose lines must be put in time order first (an Elasticsearch export, logcli
without ``--forward``) is read by one task with an external sort (``sorted_runs``); its events come out
finished, as a whole file's do.

A big container stream (``parsers.container_streams``) is otherwise read the same way, after a first pass
(each source's first lines and the ids it names), made by Spark tasks range by range when a surveyor is
given (``spark_surveyor``), else on the driver (``plan_stream``). Its events are
finished per source: the source's index rides in the high bits of ``source_sub`` (``SOURCE_SHIFT``)
from the range tasks to the finishing pass, which sorts on it and clears it.
"""
from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import pyarrow as pa

from forensics.sources import FileRef
from parsers.broker_logs.broker_log_ranges import OWN_ALL, finish_file_events, merge_parts, read_part
from parsers.common.accounting import KEEP_SAMPLES, FileSummary
from parsers.common.context import SourceContext
from parsers.common.textio import GZIP_MAGIC, ReadProblems
from parsers.common.textranges import gunzip_stream, plan_ranges
from parsers.container_streams.plan import plan_stream
from parsers.dispatch import sniff_kind
from parsers.schema import FIELD_NAMES, Event
from forensics.worker_imports import in_workers

# A plain file larger than this is read by ranges of about this size; a gzip file larger than
# GZIP_STREAM_BYTES (compressed) is read as a stream. Smaller files keep the whole-text fast path.
RANGE_BYTES = int(os.environ.get("KAFKA_FORENSICS_RANGE_BYTES", str(64 << 20)))
GZIP_STREAM_BYTES = int(os.environ.get("KAFKA_FORENSICS_GZIP_STREAM_BYTES", str(8 << 20)))
# A container stream's source index in an event's source_sub, above the index among one entry's events.
SOURCE_SHIFT = 20
MAX_SOURCES = (1 << (31 - SOURCE_SHIFT)) - 1
RANGE_DDL = ("read_path string, display string, broker_hint int, cluster_hint string, size long, "
             "start long, first_no long, owned long, gz boolean, part int, task int")


@dataclass
class BigPlan:
    rows: list[tuple]  # one per task, as RANGE_DDL
    refs: dict[str, FileRef]  # display -> file read by parts
    surveys: dict[str, dict] = field(default_factory=dict)  # display -> survey, for container streams
    # Container streams read in time order by sorted runs (``container_streams.sorted_runs``), one task each.
    sorted: list[FileRef] = field(default_factory=list)


def _local(ref: FileRef) -> bool:
    return "://" not in ref.read_path or ref.read_path.startswith("file://")


def _head(path: str, gz: bool, n: int = 65536) -> bytes:
    with open(path, "rb") as fh:
        if not gz:
            return fh.read(n)
        out = bytearray()
        for chunk in gunzip_stream(fh, os.path.getsize(path), ReadProblems()):
            out += chunk
            if len(out) >= n:
                break
        return bytes(out[:n])


def plan_big_files(refs: list[FileRef], range_bytes: int | None = None,
                   gzip_bytes: int | None = None, surveyor=None) -> tuple[list[FileRef], BigPlan]:
    """Split ``refs`` into the files read whole (returned) and the big broker logs and container streams
    read by parts. A container stream the ranges cannot read in file order (an export in the query's
    order, logcli's newest first) is read by sorted runs (``plan.sorted``). A stream's survey (what every
    range must know beforehand) is made by ``surveyor`` when given: (survey jobs) -> their surveys, each
    job a range of ``stream_head`` for ``survey_part`` (``survey_jobs``); else in one pass here."""
    from parsers.container_streams.plan import plan_from_parts, stream_head

    range_bytes = RANGE_BYTES if range_bytes is None else range_bytes
    gzip_bytes = GZIP_STREAM_BYTES if gzip_bytes is None else gzip_bytes
    whole: list[FileRef] = []
    plan = BigPlan([], {})
    streams: list[tuple[FileRef, str, bool, str | None, list]] = []
    for ref in refs:
        path = ref.read_path[len("file://"):] if ref.read_path.startswith("file://") else ref.read_path
        gz = False
        kind = None
        if _local(ref) and ref.size > min(range_bytes, gzip_bytes):
            try:
                with open(path, "rb") as fh:
                    gz = fh.read(2) == GZIP_MAGIC
                if ref.size > (gzip_bytes if gz else range_bytes):
                    kind = sniff_kind(ref.display, _head(path, gz))
            except OSError:
                kind = None
        if kind == "container_stream":
            key, ranges = stream_head(path, ref.size, gz, range_bytes) if surveyor is not None else (None, [])
            streams.append((ref, path, gz, key, ranges))
            continue
        if kind != "broker_log":
            whole.append(ref)
            continue
        plan.refs[ref.display] = ref
        if gz:
            ranges = [(0, ref.size, 1, OWN_ALL)]
        else:
            with open(path, "rb") as fh:
                ranges = plan_ranges(fh, ref.size, range_bytes)
        for part, (start, _end, first_no, owned) in enumerate(ranges):
            plan.rows.append((path, ref.display, ref.broker_hint, ref.cluster_hint, ref.size, start, first_no,
                              owned, gz, part, len(plan.rows)))
        if not ranges:  # nothing but an empty payload: one part still accounts for the file
            plan.rows.append((path, ref.display, ref.broker_hint, ref.cluster_hint, ref.size, 0, 1, OWN_ALL, gz, 0,
                              len(plan.rows)))
    jobs = survey_jobs(streams)
    surveyed = surveyor(jobs) if jobs else []
    by_stream: dict[str, list[dict]] = {}
    for job, got in zip(jobs, surveyed):
        by_stream.setdefault(job[1], []).append(got)
    for ref, path, gz, key, ranges in streams:
        if ranges:
            survey, ranges = plan_from_parts(path, ref.display, ref.size, gz, range_bytes, key, ranges,
                                             by_stream.get(ref.display, []))
        else:
            survey, ranges = plan_stream(path, ref.display, ref.size, gz, range_bytes)
        if not survey["ranged"] and survey["key"] is not None:  # its entries are put in order first
            plan.sorted.append(ref)
            continue
        if not ranges or len(survey["sources"]) > MAX_SOURCES:
            whole.append(ref)
            continue
        plan.refs[ref.display] = ref
        plan.surveys[ref.display] = survey
        for part, (start, _end, first_no, owned) in enumerate(ranges):
            plan.rows.append((path, ref.display, ref.broker_hint, ref.cluster_hint, ref.size, start, first_no,
                              owned, gz, part, len(plan.rows)))
    return whole, plan


# The survey of one range of a container stream, as Spark's tasks are handed it (``survey_jobs``).
SURVEY_DDL = "read_path string, display string, size long, gz boolean, key string, start long, stop long"


def survey_jobs(streams: list[tuple]) -> list[tuple]:
    """The streams' ranges to survey (``stream_head``'s), as SURVEY_DDL rows, streams in order then ranges."""
    return [(path, ref.display, ref.size, gz, key, start, stop)
            for ref, path, gz, key, ranges in streams for start, stop in ranges]


def make_survey_fn():
    """What Spark runs per survey job: (SURVEY_DDL rows) -> (job index, survey as JSON)."""
    from parsers.container_streams.plan import survey_part

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for r in batch.to_pylist():
                got = survey_part(r["read_path"], r["display"], r["size"], r["gz"], r["key"], r["start"], r["stop"])
                yield pa.RecordBatch.from_pylist([{"job": r["job"], "survey": json.dumps(got)}], schema=_SURVEYED)

    return run


_SURVEYED = pa.schema([pa.field("job", pa.int64()), pa.field("survey", pa.string())])


# Survey tasks per core. A task costs its Python worker ~0.27 CPU s before survey_part runs (2 GB compose, 32
# ranges: one task per range 14.5 CPU s, four tasks of eight ranges 6.8, two 6.1, at load 11-12, before
# worker_imports took ~0.12 s of it), and a range's survey ~0.18 s: a task surveys consecutive ranges, two tasks
# a core evening out a slow one.
SURVEY_TASKS_PER_CORE = 2


def survey_frame(spark, jobs: list[tuple]):
    """The survey jobs as a DataFrame of SURVEY_DDL rows and their index (``job``), in consecutive slices of
    at most SURVEY_TASKS_PER_CORE per core."""
    rows = [(*job, i) for i, job in enumerate(jobs)]
    tasks = max(1, min(len(rows), SURVEY_TASKS_PER_CORE * spark.sparkContext.defaultParallelism))
    return spark.createDataFrame(spark.sparkContext.parallelize(rows, tasks), SURVEY_DDL + ", job long")


def spark_surveyor(spark):
    """A ``plan_big_files`` surveyor running the ranges of every stream at once in a few Spark tasks."""

    def run(jobs: list[tuple]) -> list[dict]:
        surveyed = survey_frame(spark, jobs).mapInArrow(in_workers(make_survey_fn()), "job long, survey string")
        got = {r["job"]: json.loads(r["survey"]) for r in surveyed.collect()}
        return [got[i] for i in range(len(jobs))]

    return run


def make_part_fn(tz: str, default_cluster: str | None, out_schema: pa.Schema, batch_rows: int,
                 surveys: dict[str, dict] | None = None):
    """What Spark runs per range: (range rows) -> events, quarantined lines and one ``part`` row."""
    surveys = surveys or {}

    def to_batch(rows: list[dict[str, Any]]) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([pa.array([r.get(f.name) for r in rows], type=f.type) for f in out_schema],
                                          schema=out_schema)

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for r in batch.to_pylist():
                cluster = r["cluster_hint"] or default_cluster
                ctx = SourceContext(r["display"], cluster, r["broker_hint"], tz)
                if r["display"] in surveys:
                    yield from stream_part(r, ctx, cluster, surveys[r["display"]])
                    continue
                for kind, got in read_part(r["read_path"], r["size"], ctx, r["start"], r["first_no"], r["owned"],
                                           r["gz"]):
                    if kind == "events":
                        for i in range(0, len(got), batch_rows):
                            rows = [ev.as_row() for ev in got[i:i + batch_rows]]
                            for row in rows:
                                row["row_kind"] = "event"
                            yield to_batch(rows)
                        continue
                    rows = [{
                        "cluster": cluster, "source_kind": "broker_log", "source_file": q.source_file,
                        "source_pos": q.source_pos, "source_sub": r["part"] * KEEP_SAMPLES + seq,
                        "event_type": q.category, "detail": json.dumps({"reason": q.reason}, sort_keys=True),
                        "raw": q.raw, "row_kind": "quarantine",
                    } for seq, q in enumerate(got["samples"])]
                    rows.append({"cluster": cluster, "source_file": r["display"], "source_pos": r["part"],
                                 "source_sub": 0, "row_kind": "part",
                                 "detail": json.dumps({"summary": got["summary"], "state": got["state"]})})
                    yield to_batch(rows)

    def stream_part(r: dict, ctx: SourceContext, cluster: str | None, survey: dict) -> Iterator[pa.RecordBatch]:
        from parsers.container_streams.ranges import read_range

        index = {name: i << SOURCE_SHIFT for i, name in enumerate(sorted(survey["sources"]))}
        parts: dict[str, list] = {}
        samples = []
        for kind, name, got in read_range(r["read_path"], r["size"], ctx, survey, r["start"], r["first_no"],
                                          r["owned"], r["gz"]):
            if kind == "events":
                high = index[name]
                for i in range(0, len(got), batch_rows):
                    rows = [ev.as_row() for ev in got[i:i + batch_rows]]
                    for row in rows:
                        row["source_sub"] = high | row["source_sub"]
                        row["row_kind"] = "event"
                    yield to_batch(rows)
            elif kind == "part":
                samples.extend(got.pop("samples"))
                parts.setdefault(name, []).append(got)
            else:
                samples[:0] = got.pop("samples")
                if got["cut"] is not None:
                    samples.insert(0, got["cut"].pop("sample"))
                stream_range = got
        rows = [{
            "cluster": cluster, "source_kind": "container_stream", "source_file": q.source_file,
            "source_pos": q.source_pos, "source_sub": r["part"] * KEEP_SAMPLES + seq,
            "event_type": q.category, "detail": json.dumps({"reason": q.reason}, sort_keys=True),
            "raw": q.raw, "row_kind": "quarantine",
        } for seq, q in enumerate(samples[:KEEP_SAMPLES])]
        rows.append({"cluster": cluster, "source_file": r["display"], "source_pos": r["part"], "source_sub": 0,
                     "row_kind": "part", "detail": json.dumps({"range": stream_range, "parts": parts})})
        yield to_batch(rows)

    return parse


def merge_file_parts(plan: BigPlan, part_rows: list[tuple[str, int, str]], cluster: str | None,
                     tz: str = "UTC", broker_map: tuple = ()) -> list[FileSummary]:
    """(display, part index, part JSON) rows -> one summary per file read by parts."""
    from parsers.container_streams.stream_merge import merge_stream

    by_file: dict[str, list[tuple[int, dict]]] = {}
    for display, part, detail in part_rows:
        by_file.setdefault(display, []).append((part, json.loads(detail)))
    out = []
    for display, ref in sorted(plan.refs.items()):
        parts = [p for _, p in sorted(by_file.get(display, []), key=lambda x: x[0])]
        if display in plan.surveys:
            by_source: dict[str, list] = {}
            for p in parts:
                for name, got in p["parts"].items():
                    for g in got:
                        g["samples"] = []
                    by_source.setdefault(name, []).extend(got)
            for p in parts:
                p["range"]["samples"] = []
            ctx = SourceContext(display, ref.cluster_hint or cluster, ref.broker_hint, tz, tuple(broker_map))
            merged = merge_stream(ctx, ref.size, plan.surveys[display], [p["range"] for p in parts], by_source)
            out.append(FileSummary.from_json(json.loads(merged.dumps())))  # as a whole file's comes from its task
            continue
        out.append(merge_parts(display, ref.broker_hint, ref.cluster_hint or cluster, ref.size, parts))
    return out


def _low_sub(rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    low = (1 << SOURCE_SHIFT) - 1
    for row in rows:
        row["source_sub"] &= low
        yield row


def make_finish_fn(brokers_bc, out_schema: pa.Schema, batch_rows: int):
    """Events of the files read by parts, sorted by (file, line, sub) within a partition -> attributed
    and finished events (``finish_file_events``), a batch at a time."""

    def rows_of(batches: Iterator[pa.RecordBatch]) -> Iterator[dict[str, Any]]:
        for batch in batches:
            cols = {}
            for name in out_schema.names:
                col = batch.column(batch.schema.get_field_index(name))
                cols[name] = (col.cast(pa.int64()) if name == "ts" else col).to_pylist()
            for i in range(batch.num_rows):
                yield {name: cols[name][i] for name in out_schema.names}

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        brokers = brokers_bc.value
        raws: dict[tuple[int, int], str | None] = {}

        def events(rows) -> Iterator[Event]:
            for row in rows:
                kw = {n: row[n] for n in FIELD_NAMES if n not in ("detail", "raw")}
                kw["detail"] = json.loads(row["detail"]) if row["detail"] else None
                raws[(row["source_pos"], row["source_sub"])] = row["raw"]  # already cut to RAW_LIMIT
                yield Event(**kw)

        out: list[dict[str, Any]] = []
        for (display, source), rows in itertools.groupby(
                rows_of(batches), key=lambda r: (r["source_file"], r["source_sub"] >> SOURCE_SHIFT)):
            raws.clear()
            broker = brokers.get(display)
            if isinstance(broker, list):  # a container stream: one broker per source
                broker = broker[source]
                rows = _low_sub(rows)
            for ev in finish_file_events(events(rows), broker):
                row = ev.as_row()
                row["raw"] = raws.pop((ev.source_pos, ev.source_sub), None)
                row["row_kind"] = "event"
                out.append(row)
                if len(out) >= batch_rows:
                    yield pa.RecordBatch.from_arrays(
                        [pa.array([r.get(f.name) for r in out], type=f.type) for f in out_schema], schema=out_schema)
                    out = []
        if out:
            yield pa.RecordBatch.from_arrays(
                [pa.array([r.get(f.name) for r in out], type=f.type) for f in out_schema], schema=out_schema)

    return run
