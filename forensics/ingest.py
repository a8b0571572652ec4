"""Ingest: files -> canonical events in Spark -> ``DIR/events/`` (Parquet) + ``ingest_summary.json``.

Local files are packed into tasks of even parsing work and read by the tasks
themselves (``forensics.filetasks``); any other URI is read by Spark's
``binaryFile`` (any filesystem Spark can reach). Our parsers run over Arrow
batches on the executors (``mapInArrow``), a whole file at a time, because
multi-line entries and binary records need the file in order. A local broker log too big to hold whole is read by parts instead
(``forensics.bigfiles``: byte ranges of a plain file, a gzip file as a stream),
with the same events and accounting. The driver only sees per-file summaries
and small lookup tables, never the events.

Output rows of the parse stage carry a ``row_kind``: ``event``, ``quarantine``
(unrecognized or damaged lines, kept with file and line) or ``summary`` (one
per file, the accounting as JSON in ``detail``). On a ``local`` master the tasks
that read local files whole write their events as Parquet themselves
(``forensics.staging``) and return only the other rows.
"""
from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa

from forensics.errors import UserError
from forensics.progress import Progress
from forensics.quarantine_share import KINDS, MORE, QUARANTINE, in_hand, share_of, within_share
from forensics.sources import FileRef, Inputs
from parsers.common.accounting import FileSummary
from parsers.common.gc_pause import cycle_gc_paused
from forensics.stage_writer import StageWriter, event_batch
from parsers.schema import ARROW_SCHEMA, FIELD_NAMES, SPARK_DDL, Event, iso_utc
from forensics.worker_imports import in_workers

OUT_ARROW = ARROW_SCHEMA.append(pa.field("row_kind", pa.string()))
OUT_DDL = SPARK_DDL + ", `row_kind` string"
SORT_KEYS = ("cluster", "ts", "source_file", "source_pos", "source_sub")
_BATCH_ROWS = 20_000
# Local files are packed into tasks of even work and read by the tasks (forensics.filetasks); "0" sends
# them through Spark's binaryFile as remote URIs go (the reference the equivalence test compares with).
LOCAL_TASKS = os.environ.get("KAFKA_FORENSICS_LOCAL_TASKS", "1") != "0"
# On a local master those tasks stage their events as Parquet (forensics.staging); "0" keeps them on the Arrow path.
STAGE_EVENTS = os.environ.get("KAFKA_FORENSICS_STAGE_EVENTS", "1") != "0"
# When every event was staged and no more lines than this were quarantined (each at most RAW_LIMIT characters of
# text), the driver collects them and write_outputs writes them with pyarrow (stage_output.write_quarantine) instead
# of a Spark sort and write (the ingest command's JVM: 12.7 / 13.1 -> 11.8 / 11.7 CPU s on a 280 MB corpus).
QUARANTINE_IN_DRIVER = 5_000


def import_planning_modules() -> tuple:
    """What run_ingest imports to plan the tasks and write the outputs; none imports pyspark. The ingest command
    runs this while Spark starts (``commands.common.start_spark``)."""
    from forensics import bigfiles, filetasks, stage_output, staged_parts, staging

    return bigfiles, filetasks, stage_output, staged_parts, staging


def _norm_uri(p: str) -> str:
    """Spark reports 'file:/a/b'; we may hold '/a/b' or 'file:///a/b'. Compare on one form."""
    if p.startswith("file:"):
        p = p[5:]
        while p.startswith("//"):
            p = p[1:]
    from urllib.parse import unquote

    return unquote(p)


def _rows_to_batch(rows: list[dict[str, Any]]) -> pa.RecordBatch:
    cols = {n: [r.get(n) for r in rows] for n in OUT_ARROW.names}
    return pa.RecordBatch.from_arrays([pa.array(cols[f.name], type=f.type) for f in OUT_ARROW], schema=OUT_ARROW)


def _event_batch(events: list[Event], schema: pa.Schema = OUT_ARROW) -> pa.RecordBatch:
    """Events -> one Arrow batch of ``schema`` (OUT_ARROW, or ARROW_SCHEMA without ``row_kind``)."""
    return event_batch(events, schema)


def stage_events(events: list[Event], path: str) -> dict | None:
    """A file's events as one Parquet file at ``path`` (nothing when there are none), a row group per
    _BATCH_ROWS events; its descriptor (``stage_writer.StageWriter.close``). Written under a hidden name and
    renamed, so Spark never lists a half-written file."""
    writer = StageWriter(path, source_file=events[0].source_file if events else None)
    try:
        for i in range(0, len(events), _BATCH_ROWS):
            writer.write(events[i:i + _BATCH_ROWS])
    except BaseException:
        writer.abort()
        raise
    return writer.close()


def staged_row(ctx_cluster: str | None, display: str, descriptor: dict | None) -> list[dict[str, Any]]:
    """The row that hands a staged file's descriptor to the driver (none for no file)."""
    if descriptor is None:
        return []
    return [{"cluster": ctx_cluster, "source_file": display, "source_sub": 0, "row_kind": "staged",
             "detail": json.dumps(descriptor, separators=(",", ":"))}]


def file_batches(display: str, hint: int | None, cluster: str | None, data: bytes | None, tz: str,
                 broker_map: tuple[tuple[str, int], ...], error: str | None = None,
                 stage_path: str | None = None) -> Iterator[pa.RecordBatch]:
    """One file's output rows: its events, its quarantined lines, then its ``summary`` row. ``error``
    (with no data) says why the task could not read it. With ``stage_path`` the events go to that
    Parquet file instead of the output."""
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    # Staged, the events are written as columns: a line's run of events may stay one EventRun.
    ctx = SourceContext(display, cluster, hint, tz, broker_map, event_runs=stage_path is not None)
    if error is not None:
        events, summary = [], FileSummary(path=display, kind="unreadable", broker_id=hint, cluster=cluster)
        summary.errors.append(error)
        return result_batches(ctx, events, summary)
    with cycle_gc_paused():  # a file's parse makes no cycles (parsers.common.gc_pause)
        events, summary = parse_source(data or b"", ctx)
        extra: list[dict[str, Any]] = []
        if stage_path is not None:
            extra = staged_row(ctx.cluster, display, stage_events(events, stage_path))
            events = []
        return iter(list(result_batches(ctx, events, summary, extra)))


def result_batches(ctx, events: list[Event], summary: FileSummary,
                   extra: list[dict[str, Any]] = ()) -> Iterator[pa.RecordBatch]:
    """A file's events, quarantined lines, ``extra`` rows and ``summary`` row as output batches."""
    display = ctx.path
    for i in range(0, len(events), _BATCH_ROWS):
        yield _event_batch(events[i:i + _BATCH_ROWS])
    rows: list[dict[str, Any]] = list(extra)
    for q in summary.samples:
        rows.append({
            "cluster": ctx.cluster, "source_kind": summary.kind, "source_file": q.source_file,
            "source_pos": q.source_pos, "source_sub": 0, "event_type": q.category,
            "detail": json.dumps({"reason": q.reason}, sort_keys=True), "raw": q.raw,
            "row_kind": "quarantine",
        })
    rows.append({"cluster": ctx.cluster, "source_file": display, "source_sub": 0,
                 "detail": summary.dumps(), "row_kind": "summary"})
    yield _rows_to_batch(rows)


def make_parse_fn(meta_bc, tz: str, default_cluster: str | None, broker_map: tuple[tuple[str, int], ...] = ()):
    """The function Spark runs on executors over ``binaryFile``: (path, content) batches -> output batches."""

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        meta = meta_bc.value
        for batch in batches:
            paths = batch.column(batch.schema.get_field_index("path")).to_pylist()
            contents = batch.column(batch.schema.get_field_index("content"))
            for i, uri in enumerate(paths):
                display, hint, cluster = meta.get(_norm_uri(uri), (uri, None, None))
                yield from file_batches(display, hint, cluster or default_cluster, contents[i].as_py() or b"", tz,
                                        broker_map)

    return parse


def make_sorted_fn(refs: list[FileRef], tz: str, default_cluster: str | None,
                   broker_map: tuple[tuple[str, int], ...] = (), sort_dir: str | None = None,
                   run_lines: int | None = None, stage_dir: str | None = None):
    """What Spark runs per big container stream to be put in time order (``sorted_runs``): (batches of
    indexes into ``refs``) -> the file's output batches, as for a file read whole (with ``stage_dir``, its
    events staged there, as ``file_batches`` stages a file's)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from forensics.filetasks import local_path
        from parsers.common.context import SourceContext
        from parsers.common.textio import GZIP_MAGIC
        from parsers.container_streams.sorted_runs import sorted_stream

        for batch in batches:
            for i in batch.column(0).to_pylist():
                ref = refs[i]
                cluster = ref.cluster_hint or default_cluster
                ctx = SourceContext(ref.display, cluster, ref.broker_hint, tz, broker_map)
                summary = None
                writer = None if stage_dir is None else \
                    StageWriter(os.path.join(stage_dir, f"sorted-{i:05d}.parquet"), ref.display)
                try:
                    with open(local_path(ref), "rb") as fh:
                        gz = fh.read(2) == GZIP_MAGIC
                    for got in sorted_stream(local_path(ref), ref.size, gz, ctx, run_lines, sort_dir):
                        if isinstance(got, FileSummary):
                            summary = got
                            continue
                        for k in range(0, len(got), _BATCH_ROWS):
                            if writer is not None:
                                writer.write(got[k:k + _BATCH_ROWS])
                            else:
                                yield _event_batch(got[k:k + _BATCH_ROWS])
                except Exception as exc:  # noqa: BLE001 - as parse_source: one file's failure loses no other
                    # (Events already given stay; the message says the file was not read to its end.)
                    summary = FileSummary(path=ref.display, kind="container_stream", broker_id=ref.broker_hint,
                                          cluster=cluster, bytes=ref.size)
                    summary.errors.append(f"internal parser error ({type(exc).__name__}: {exc}); "
                                          "file not read to its end")
                extra = [] if writer is None else staged_row(cluster, ref.display, writer.close())
                yield from result_batches(ctx, [], summary, extra)

    return run


def make_local_parse_fn(tz: str, default_cluster: str | None, broker_map: tuple[tuple[str, int], ...] = (),
                        stage_dir: str | None = None):
    """``file_batches`` for a file a task read itself (``forensics.filetasks``); with ``stage_dir``, its
    events are staged there as Parquet, named by the file's place in the task plan."""
    from forensics.staging import staged_name

    def parse_one(ref: FileRef, data: bytes | None, error: str | None, slot: tuple[int, int]) -> Iterator[pa.RecordBatch]:
        stage_path = None if stage_dir is None else os.path.join(stage_dir, staged_name(*slot))
        return file_batches(ref.display, ref.broker_hint, ref.cluster_hint or default_cluster, data, tz, broker_map,
                            error, stage_path)

    return parse_one


class Later:
    """A DataFrame built on its first use (``IngestResult.events``, ``.quarantine``): the ``ingest`` command writes
    staged events and few quarantined lines without them, and building them cost the driver's JVM tenths of a
    second each (the staged folder's read plan 0.19 s at 280 MB, journal: ingest, 19:40)."""

    __slots__ = ("build",)

    def __init__(self, build):
        self.build = build


@dataclass
class IngestResult:
    summaries: list[FileSummary]
    events_df: Any  # Spark DataFrame of canonical events (sorted), a Later building it, or None when nothing was read
    summary_json: dict[str, Any]
    input_problems: list[str] = field(default_factory=list)
    quarantine_df: Any = None  # Spark DataFrame (or a Later): unrecognized/quarantined lines with file and position
    persisted: Any = None  # the cached parse output, released by release()
    staging: str | None = None  # the folder of events staged by the tasks (forensics.staging), removed by release()
    # The staged files' descriptors when every event was staged (write_outputs then writes them itself,
    # forensics.stage_output), and what the driver settled for them after the parse.
    staged: list[dict] | None = None
    fixups: Any = None
    big_files: tuple[str, ...] = ()  # the files read by parts (bigfiles.plan_big_files)
    spark: Any = None
    # the quarantined lines the parse's collect handed over (forensics.quarantine_share), or None: not all of them
    quarantined: list[dict] | None = None

    @property
    def events(self):
        if isinstance(self.events_df, Later):
            self.events_df = self.events_df.build()
        return self.events_df

    @property
    def quarantine(self):
        if isinstance(self.quarantine_df, Later):
            self.quarantine_df = self.quarantine_df.build()
        return self.quarantine_df

    @property
    def total_events(self) -> int:
        return sum(s.events for s in self.summaries)


def events_stay_in_python(inputs: Inputs) -> bool:
    """Whether, on a local master, no event of these inputs goes through the JVM: every file is local, so its
    task stages its events and ``write_outputs`` writes them with pyarrow (``forensics.stage_output``); the
    ``ingest`` command then starts its JVM with C1 only (``spark.driver_jit_options``). A remote URI is read by
    ``binaryFile`` and its events cross Arrow and Spark's sort."""
    from forensics.filetasks import local_path

    return LOCAL_TASKS and STAGE_EVENTS and all(local_path(r) is not None for r in inputs.files)


def _glob_escape(p: str) -> str:
    # Spark treats load() paths as globs; a '[' in a file name must not be read as a class.
    return re.sub(r"([\[\]{}*?])", r"\\\1", p)


def _readable(ref: FileRef) -> str | None:
    if "://" in ref.read_path and not ref.read_path.startswith("file://"):
        return None
    try:
        with open(ref.read_path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    return None


def dir_broker_ids(summaries: list[FileSummary]) -> dict[str, int]:
    """Files whose broker is unknown get it from their folder, when every other file there agrees.

    A folder shared by several brokers (several processes logging into one
    ``logs/``, common on dev boxes) stays unattributed: guessing would be worse.
    """
    by_dir: dict[str, Counter] = {}
    for s in summaries:
        d = s.path.rsplit("/", 1)[0] if "/" in s.path else ""
        c = by_dir.setdefault(d, Counter())
        if s.broker_id is not None:
            c[s.broker_id] += 1
        for w in s.writer_ids:
            c[w] += 0  # presence matters: any second id makes the folder ambiguous
    out = {}
    for s in summaries:
        if s.broker_id is not None or s.kind != "broker_log":
            continue
        d = s.path.rsplit("/", 1)[0] if "/" in s.path else ""
        ids = by_dir.get(d) or Counter()
        if len(ids) == 1:
            out[s.path] = next(iter(ids))
    return out


def run_ingest(
    spark,
    inputs: Inputs,
    tz: str = "UTC",
    cluster: str | None = None,
    progress: Progress | None = None,
) -> IngestResult:
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from forensics.spark import spark_type

    progress = progress or Progress(False)
    summaries: list[FileSummary] = []
    readable: list[FileRef] = []
    for ref in inputs.files:
        err = _readable(ref)
        if err:
            s = FileSummary(path=ref.display, kind="unreadable", broker_id=ref.broker_hint, cluster=ref.cluster_hint or cluster)
            s.errors.append(err)
            summaries.append(s)
        else:
            readable.append(ref)
    total_bytes = sum(r.size for r in readable)
    progress.say(f"ingest: {len(readable)} file(s), {total_bytes / 1e6:.1f} MB, on Spark {spark.sparkContext.master}")

    if readable:
        from forensics.bigfiles import (RANGE_DDL, SOURCE_SHIFT, make_finish_fn, make_part_fn, merge_file_parts,
                                        plan_big_files, spark_surveyor)
        from forensics.staged_parts import make_staged_part_fn, settle_big_files

        t_plan = time.perf_counter()
        whole_refs, big = plan_big_files(readable, surveyor=spark_surveyor(spark))
        if big.refs:
            progress.say(f"ingest: {len(big.refs)} big file(s) read in {len(big.rows)} part(s) "
                         f"(planned in {time.perf_counter() - t_plan:.1f} s)")
        if big.sorted:
            progress.say(f"ingest: {len(big.sorted)} big export(s) put in time order by sorted runs")
        from forensics import staging
        from forensics.filetasks import local_path, make_task_fn, plan_tasks, spark_task_sizes
        from forensics.stage_output import Fixups

        # Empty files: binaryFile returns no row for them and the summaries below account for them.
        local = [r for r in whole_refs if LOCAL_TASKS and r.size > 0 and local_path(r) is not None]
        remote = [r for r in whole_refs if not (LOCAL_TASKS and r.size > 0 and local_path(r) is not None)]
        prev_batch = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
        out_type = spark_type(OUT_ARROW)  # not OUT_DDL: no parse by the JVM (forensics.spark.spark_type)
        # One file (or one part of a big file) per Arrow batch: a batch holds whole file contents.
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "1")
        stage_dir = None
        task_sizes = spark_task_sizes(spark)
        if (local or big.rows or big.sorted) and STAGE_EVENTS and staging.shares_filesystem(spark.sparkContext.master) \
                and staging.split_fits(task_sizes[1]):
            stage_dir = staging.new_dir(spark)
        try:
            outputs = []
            tasks = plan_tasks(local, *task_sizes, slots=spark.sparkContext.defaultParallelism) if local else []
            # the tasks whose quarantined lines the parse's collect hands over, each up to its share (a remote
            # file's task none: its events come through Arrow, so Spark writes the quarantine too)
            share = share_of(QUARANTINE_IN_DRIVER, len(tasks) + len(big.sorted) + len(big.rows))
            if local:
                parse_one = make_local_parse_fn(tz, cluster, tuple(inputs.broker_map), stage_dir)
                outputs.append(spark.range(len(tasks), numPartitions=len(tasks))
                               .mapInArrow(in_workers(within_share(make_task_fn(tasks, parse_one), share)), out_type))
            if remote:
                meta = {_norm_uri(r.read_path): (r.display, r.broker_hint, r.cluster_hint) for r in remote}
                meta_bc = spark.sparkContext.broadcast(meta)
                raw = (
                    spark.read.format("binaryFile")
                    .option("recursiveFileLookup", "false")
                    .load([_glob_escape(r.read_path) for r in remote])
                    .select("path", "content")
                )
                parse_fn = make_parse_fn(meta_bc, tz, cluster, tuple(inputs.broker_map))
                outputs.append(raw.mapInArrow(in_workers(within_share(parse_fn, 0)), out_type))
            if big.sorted:
                from parsers.container_streams import sorted_runs

                # One task per stream to be put in order; its runs go to Spark's local dir unless set.
                sort_dir = os.environ.get(sorted_runs.TMP_ENV) or spark.sparkContext.getConf().get("spark.local.dir",
                                                                                                 None)
                outputs.append(spark.range(len(big.sorted), numPartitions=len(big.sorted))
                               .mapInArrow(in_workers(within_share(make_sorted_fn(
                                   big.sorted, tz, cluster, tuple(inputs.broker_map), sort_dir, sorted_runs.RUN_LINES,
                                   stage_dir), share)), out_type))
            if big.rows:
                # One task per part: the parts are planned to even sizes.
                ranges = spark.createDataFrame(spark.sparkContext.parallelize(big.rows, len(big.rows)), RANGE_DDL)
                part_fn = make_part_fn(tz, cluster, OUT_ARROW, _BATCH_ROWS, big.surveys) if stage_dir is None else \
                    make_staged_part_fn(tz, cluster, OUT_ARROW, _BATCH_ROWS, big.surveys, stage_dir)
                outputs.append(ranges.mapInArrow(in_workers(within_share(part_fn, share)), out_type))
            parsed = outputs[0]
            for more in outputs[1:]:
                parsed = parsed.unionByName(more)
            parsed = parsed.persist(StorageLevel.MEMORY_AND_DISK)
            with progress.watch_spark(spark, "ingest"):
                summary_rows = parsed.where(F.col("row_kind").isin("summary", "part", "staged", QUARANTINE, MORE)) \
                    .select("row_kind", "source_file", "source_pos", "source_sub", "event_type", "detail", "raw") \
                    .collect()
        except BaseException:
            staging.remove(stage_dir)
            raise
        finally:
            spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", prev_batch)
        parsed_summaries = [FileSummary.from_json(json.loads(r["detail"])) for r in summary_rows
                            if r["row_kind"] == "summary"]
        part_rows = [(r["source_file"], r["source_pos"], r["detail"]) for r in summary_rows if r["row_kind"] == "part"]
        staged = [json.loads(r["detail"]) for r in summary_rows if r["row_kind"] == "staged"]
        quarantined = in_hand(summary_rows)
        big_summaries = merge_file_parts(big, part_rows, cluster, tz, tuple(inputs.broker_map))
        fixups = Fixups()
        finished_big = None
        if big.refs and stage_dir is not None:
            fixups.brokers, fixups.events = settle_big_files(big, part_rows, big_summaries)
        elif big.refs:
            # A container stream's events are attributed per source (streams in source-index order).
            brokers_bc = spark.sparkContext.broadcast({
                s.path: [x["broker_id"] for x in s.streams] if s.path in big.surveys else s.broker_id
                for s in big_summaries})
            finished_big = (
                parsed.where((F.col("row_kind") == "event") & F.col("source_file").isin(list(big.refs)))
                .repartition(len(big.refs), "source_file")
                .sortWithinPartitions("source_file", F.expr(f"shiftright(source_sub, {SOURCE_SHIFT})"), "source_pos",
                                      "source_sub")
                .mapInArrow(in_workers(make_finish_fn(brokers_bc, OUT_ARROW, _BATCH_ROWS)), out_type)
                # One partition holds all of a big file's events: kept on disk, streamed, never unrolled
                # in the heap (MEMORY_AND_DISK ran a 4 GB file's 2.3 M events out of Spark's default 1 GB).
                .persist(StorageLevel.DISK_ONLY)
            )
            counts = finished_big.groupBy("source_file", "event_type").count().collect()
            by_path = {s.path: s for s in big_summaries}
            for r in counts:
                s = by_path[r["source_file"]]
                s.event_counts[r["event_type"]] += r["count"]
                s.events += r["count"]
        parsed_summaries.extend(big_summaries)
        # Spark's binaryFile returns no row for an empty file: account for every file given all the same.
        returned = {s.path for s in parsed_summaries}
        for ref in readable:
            if ref.display not in returned:
                s = FileSummary(path=ref.display, kind="empty" if ref.size == 0 else "unreadable",
                                broker_id=ref.broker_hint, cluster=ref.cluster_hint or cluster, bytes=ref.size)
                if ref.size == 0:
                    s.notes.append("empty file")
                else:
                    s.errors.append("Spark returned no content for this file; not parsed")
                parsed_summaries.append(s)
        fill = dir_broker_ids(parsed_summaries)
        fixups.fill = fill
        for s in parsed_summaries:
            if s.path in fill:
                s.broker_id = fill[s.path]
                s.notes.append(f"broker {s.broker_id} inferred from the other files in its folder")
        summaries.extend(parsed_summaries)

        # Events that came through Arrow (remote files; any file when nothing is staged), then the staged ones.
        arrow_events = stage_dir is None or bool(remote)
        result = IngestResult(summaries, Later(lambda: _events_df(spark, parsed, finished_big, big.refs, stage_dir,
                                                                  fixups, fill)),
                              {}, list(inputs.problems), Later(lambda: _quarantine_df(parsed, big.refs)),
                              parsed if finished_big is None else [parsed, finished_big], stage_dir,
                              staged=None if arrow_events else staged, fixups=fixups, big_files=tuple(big.refs),
                              spark=spark, quarantined=quarantined)
    else:
        result = IngestResult(summaries, None, {}, list(inputs.problems))

    summaries.sort(key=lambda s: s.path)
    result.summary_json = build_summary_json(summaries, inputs)
    t = result.summary_json["totals"]
    progress.say(
        f"ingest: {t['lines']:,} lines/records -> {t['events']:,} events "
        f"({t['other']:,} routine, {t['unrecognized']:,} unrecognized, {t['quarantined']:,} quarantined, "
        f"{t['files_with_errors']} file(s) with errors)"
    )
    return result


def _events_df(spark, parsed, finished_big, big_refs, stage_dir: str | None, fixups, fill: dict[str, int]):
    """The events DataFrame of ``run_ingest``: the events that came through Arrow, the big files' finished ones,
    the staged ones, the folder's broker filled in."""
    from pyspark.sql import functions as F

    from forensics import staging

    events_df = parsed.where(F.col("row_kind") == "event")
    if finished_big is not None:
        events_df = events_df.where(~F.col("source_file").isin(list(big_refs))).unionByName(finished_big)
    events_df = events_df.drop("row_kind")
    staged_df = staging.read(spark, stage_dir, fixups) if stage_dir is not None else None
    if staged_df is not None:
        events_df = events_df.unionByName(staged_df)
    if fill:
        fill_df = spark.createDataFrame(sorted(fill.items()), "source_file string, dir_broker int")
        events_df = (
            events_df.join(F.broadcast(fill_df), "source_file", "left")
            .withColumn("broker_id", F.coalesce("broker_id", "dir_broker"))
            .drop("dir_broker")
            .select(*FIELD_NAMES)
        )
    return events_df


def _quarantine_df(parsed, big_refs):
    """The quarantine DataFrame of ``run_ingest`` (what ``quarantine_rows`` gives in the driver)."""
    from pyspark.sql import functions as F

    quarantine_df = parsed.where(F.col("row_kind").isin(*KINDS))
    if big_refs:
        # The parts of one file keep up to KEEP_SAMPLES lines each; the file keeps its first ones.
        from pyspark.sql import Window

        from parsers.common.accounting import KEEP_SAMPLES

        first = Window.partitionBy("source_file").orderBy("source_sub", "source_pos")
        quarantine_df = quarantine_df.withColumn("_n", F.row_number().over(first)) \
            .where(F.col("_n") <= KEEP_SAMPLES)
    return quarantine_df.select(
        "source_file", "source_pos", F.col("event_type").alias("category"),
        F.get_json_object("detail", "$.reason").alias("reason"), "raw",
    ).orderBy("source_file", "source_pos")


def quarantine_rows(parsed, big_files: set[str], kept: int | None = None,
                    got: list[dict] | None = None) -> list[dict] | None:
    """The rows of ``quarantine/`` as ``run_ingest``'s ``quarantine`` DataFrame gives them, in its order, from
    ``parsed`` (its cached parse output), or None when more than QUARANTINE_IN_DRIVER lines were quarantined.
    ``kept``: at most how many rows the tasks kept (the files' unrecognized and quarantined lines, each of which
    a task keeps at most once): none are read when it is over QUARANTINE_IN_DRIVER, and they are read in one job
    when it is not (a limit's collect runs a job on one partition, then on 4, then the rest: three at 15 tasks).
    ``got``: the rows, in the cached output's order, when the parse's collect handed them all over
    (``IngestResult.quarantined``): no job at all."""
    from pyspark.sql import functions as F

    from parsers.common.accounting import KEEP_SAMPLES

    if kept is not None and kept > QUARANTINE_IN_DRIVER:
        return None
    if got is None:
        got = parsed.where(F.col("row_kind").isin(*KINDS)) \
            .select("source_file", "source_pos", "source_sub", "event_type", "detail", "raw")
        got = [r.asDict() for r in (got if kept is not None else got.limit(QUARANTINE_IN_DRIVER + 1)).collect()]
    if len(got) > QUARANTINE_IN_DRIVER:
        return None
    rows = list(got)
    if big_files:
        # As run_ingest's window: a file read by parts keeps its first KEEP_SAMPLES lines by (source_sub, source_pos).
        kept: dict[str, int] = {}
        firsts = []
        for r in sorted(rows, key=lambda r: (_nulls_first(r["source_sub"]), _nulls_first(r["source_pos"]))):
            if r["source_file"] in big_files:
                kept[r["source_file"]] = kept.get(r["source_file"], 0) + 1
                if kept[r["source_file"]] > KEEP_SAMPLES:
                    continue
            firsts.append(r)
        order = {id(r): i for i, r in enumerate(rows)}
        rows = sorted(firsts, key=lambda r: order[id(r)])  # back in Spark's order, for the ties of the sort below
    rows.sort(key=lambda r: (_nulls_first(r["source_file"]), _nulls_first(r["source_pos"])))  # stable, as Spark's
    return [{"source_file": r["source_file"], "source_pos": r["source_pos"], "category": r["event_type"],
             "reason": _reason(r["detail"]), "raw": r["raw"]} for r in rows]


def _nulls_first(v) -> tuple:
    return (v is not None, v if v is not None else 0)


def _reason(detail: str | None) -> str | None:
    """``get_json_object(detail, '$.reason')`` for the detail the tasks wrote (``{"reason": text}``)."""
    if detail is None:
        return None
    try:
        got = json.loads(detail).get("reason")
    except (ValueError, AttributeError):
        return None
    return got if got is None or isinstance(got, str) else json.dumps(got, separators=(",", ":"))


def build_summary_json(summaries: list[FileSummary], inputs: Inputs) -> dict[str, Any]:
    files = []
    totals = Counter()
    event_counts: Counter = Counter()
    kinds: Counter = Counter()
    for s in summaries:
        j = s.to_json()
        j["first_ts"] = iso_utc(s.first_ts)
        j["last_ts"] = iso_utc(s.last_ts)
        files.append(j)
        for k in ("bytes", "lines", "parsed", "other", "unrecognized", "quarantined", "events"):
            totals[k] += getattr(s, k) or 0
        totals["files"] += 1
        totals["files_with_errors"] += 1 if s.errors else 0
        kinds[s.kind] += 1
        event_counts.update(s.event_counts)
    return {
        "files": files,
        "totals": {k: totals[k] for k in ("files", "files_with_errors", "bytes", "lines", "parsed", "other",
                                          "unrecognized", "quarantined", "events")},
        "file_kinds": dict(sorted(kinds.items())),
        "event_counts": dict(sorted(event_counts.items())),
        "input_problems": list(inputs.problems),
        "skipped_hidden_files": inputs.skipped_hidden,
    }


def write_outputs(result: IngestResult, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    if result.events_df is not None:
        # Sorted on write only: the order is part of the output, not of the computation.
        if result.staged is not None:
            from forensics.stage_output import write_events

            write_events(result.spark, result.staged, result.fixups, str(out_dir / "events"))
        else:
            result.events.orderBy(*SORT_KEYS).write.mode("overwrite").parquet(str(out_dir / "events"))
        # With every event staged, few quarantined lines are written here too (QUARANTINE_IN_DRIVER).
        kept = sum((s.unrecognized or 0) + (s.quarantined or 0) for s in result.summaries)
        rows = None if result.staged is None else quarantine_rows(result.persisted, set(result.big_files), kept,
                                                                  result.quarantined)
        if rows is not None:
            from forensics.stage_output import write_quarantine

            write_quarantine(rows, str(out_dir / "quarantine"))
        else:
            result.quarantine.write.mode("overwrite").parquet(str(out_dir / "quarantine"))
    (out_dir / "ingest_summary.json").write_text(json.dumps(result.summary_json, indent=2, sort_keys=False) + "\n")


def release(result: IngestResult) -> None:
    persisted = result.persisted if isinstance(result.persisted, list) else [result.persisted]
    for df in persisted:
        if df is not None:
            df.unpersist()
    if result.staging is not None:
        from forensics.staging import remove

        remove(result.staging)
        result.staging = None


def require_evidence(result: IngestResult) -> None:
    """Refuse (exit 2) when nothing usable was found: empty folder, a JPEG, a foreign log."""
    useful = [s for s in result.summaries if s.events > 0]
    if useful:
        return
    if not result.summaries:
        raise UserError("no input files found" + (f" ({'; '.join(result.input_problems)})" if result.input_problems else ""))
    reasons = Counter()
    for s in result.summaries:
        reasons[s.errors[0] if s.errors else ("no Kafka events in it" if s.lines else "empty")] += 1
    top = "; ".join(f"{n} file(s): {r}" for r, n in reasons.most_common(3))
    extra = f"; {result.input_problems[0]}" if result.input_problems else ""
    raise UserError(f"no Kafka or ZooKeeper evidence found in {len(result.summaries)} file(s) ({top}{extra})")

