"""Big files read by parts on a local master: each part's events finished on their own and staged as
Parquet by its task (``make_staged_part_fn``), and what the parts left to each other settled by the driver
(``settle_big_files``) once their accounting is merged (``bigfiles.merge_file_parts``).

Reading parts through the JVM (``bigfiles.make_part_fn``) handed every event to Spark, shuffled all of a
file's events into one task to attribute and finish them in file order (``bigfiles.make_finish_fn``), and
handed them to Spark again: on the 0.5 GB real-format file, that one task ran 199 s while the other core
waited, and the events crossed between Python and the JVM four times (``benchmarks/RESULTS.md``, ingest
profile). Here nothing waits for the whole file but the driver's merge: an election whose epoch line is
in the next part and the file's broker are a few values (``stage_output.Fixups``) applied as the staged
events are read.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterator

import pyarrow as pa

from forensics.bigfiles import BigPlan
from parsers.broker_logs.broker_log_ranges import read_part
from parsers.common.accounting import KEEP_SAMPLES, FileSummary
from parsers.common.context import SourceContext
from parsers.common.gc_pause import cycle_gc_paused
from parsers.schema import Event, EventRun


def staged_part_name(task: int) -> str:
    """The staged file of range task ``task`` (fixed by the plan: a retried task overwrites its own)."""
    return f"range-{task:05d}.parquet"


def make_staged_part_fn(tz: str, default_cluster: str | None, out_schema: pa.Schema, batch_rows: int,
                        surveys: dict[str, dict], stage_dir: str):
    """``make_part_fn`` for a local master: each range's events finished on their own
    (``broker_log_ranges.PartFinisher``) and staged as Parquet (``forensics.stage_writer``) by the task;
    it hands back only its quarantined lines, its ``part`` row (its accounting, what its finishing left
    open, its event counts) and the ``staged`` row of its file. No event crosses the JVM, and nothing
    waits for the whole file but the driver's merge of the parts (``settle_big_files``)."""
    from forensics.stage_writer import StageWriter
    from parsers.broker_logs.broker_log_ranges import PartFinisher
    from parsers.broker_logs.templates.finish import PartEnds

    def to_batch(rows: list[dict[str, Any]]) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([pa.array([r.get(f.name) for r in rows], type=f.type) for f in out_schema],
                                          schema=out_schema)

    def quarantine_rows(samples, r: dict, cluster: str | None, kind: str) -> list[dict[str, Any]]:
        return [{
            "cluster": cluster, "source_kind": kind, "source_file": q.source_file,
            "source_pos": q.source_pos, "source_sub": r["part"] * KEEP_SAMPLES + seq,
            "event_type": q.category, "detail": json.dumps({"reason": q.reason}, sort_keys=True),
            "raw": q.raw, "row_kind": "quarantine",
        } for seq, q in enumerate(samples)]

    def staged(cluster, display, descriptor) -> list[dict[str, Any]]:
        if descriptor is None:
            return []
        return [{"cluster": cluster, "source_file": display, "source_sub": 0, "row_kind": "staged",
                 "detail": json.dumps(descriptor, separators=(",", ":"))}]

    class Sink:
        """A range's finished events, held to its end, then to the staged file in time order (row groups of
        ``stage_writer.GROUP_ROWS``); their counts by type.

        A big file's text goes back in time wherever rotated logs were joined out of order, so row groups of
        consecutive events span most of the file's time; each output part reads every row group that reaches
        into its time (``stage_output.plan_parts``): on the 2 GB one-file shape the 22 parts read 2.3x the
        staged rows, 1.24x sorted by range. Held, a range's events cost what a whole file's cost in its task
        (files under ``bigfiles.RANGE_BYTES`` are read whole); the write sorts every part anyway."""

        def __init__(self, writer):
            self.writer, self.events, self.attrs, self.srcs = writer, [], [], []
            self.counts: dict[str, int] = {}

        def add(self, got: tuple[list[Event], list[int]], src: int = 0) -> None:
            evs, attrs = got
            self.events.extend(evs)
            self.attrs.extend(attrs)
            self.srcs.extend([src] * len(evs))
            for ev in evs:
                self.counts[ev.event_type] = self.counts.get(ev.event_type, 0) + (len(ev) if type(ev) is EventRun else 1)

        def flush(self) -> None:
            evs, attrs, srcs = self.events, self.attrs, self.srcs
            order = sorted(range(len(evs)), key=_time_key(evs))  # stable: a line's events stay in order
            for at in range(0, len(order), batch_rows):
                some = order[at:at + batch_rows]
                self.writer.write([evs[i] for i in some], [attrs[i] for i in some], [srcs[i] for i in some])
            self.events, self.attrs, self.srcs = [], [], []

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for r in batch.to_pylist():
                cluster = r["cluster_hint"] or default_cluster
                ctx = SourceContext(r["display"], cluster, r["broker_hint"], tz, event_runs=True)
                writer = StageWriter(os.path.join(stage_dir, staged_part_name(r["task"])), r["display"], True)
                try:
                    # A range's reading makes no cycles, as a whole file's does not (``ingest.file_batches``);
                    # the collector's passes over its live events were a sixth of a range task's time.
                    with cycle_gc_paused():
                        if r["display"] in surveys:
                            rows = stream_part(r, ctx, cluster, surveys[r["display"]], Sink(writer))
                        else:
                            rows = log_part(r, ctx, cluster, Sink(writer))
                except BaseException:
                    writer.abort()
                    raise
                yield to_batch(rows + staged(cluster, r["display"], writer.close()))

    def log_part(r: dict, ctx: SourceContext, cluster: str | None, sink) -> list[dict[str, Any]]:
        ends = PartEnds(first=r["start"] == 0)
        finisher = PartFinisher(ends)
        got = None
        for kind, got in read_part(r["read_path"], r["size"], ctx, r["start"], r["first_no"], r["owned"], r["gz"]):
            if kind == "events":
                sink.add(finisher.feed(got))
        sink.add(finisher.close())
        sink.flush()
        rows = quarantine_rows(got["samples"], r, cluster, "broker_log")
        rows.append({"cluster": cluster, "source_file": r["display"], "source_pos": r["part"], "source_sub": 0,
                     "row_kind": "part", "detail": json.dumps({"summary": got["summary"], "state": got["state"],
                                                               "ends": ends.to_json(), "counts": sink.counts})})
        return rows

    def stream_part(r: dict, ctx: SourceContext, cluster: str | None, survey: dict, sink) -> list[dict[str, Any]]:
        from parsers.container_streams.ranges import read_range

        names = sorted(survey["sources"])
        index = {name: i for i, name in enumerate(names)}
        finishers: dict[str, tuple] = {}
        parts: dict[str, list] = {}
        samples = []
        for kind, name, got in read_range(r["read_path"], r["size"], ctx, survey, r["start"], r["first_no"],
                                          r["owned"], r["gz"]):
            if kind == "events":
                if name not in finishers:
                    ends = PartEnds(first=survey["sources"][name]["first"] >= r["first_no"])
                    finishers[name] = (ends, PartFinisher(ends))
                sink.add(finishers[name][1].feed(got), index[name])
            elif kind == "part":
                samples.extend(got.pop("samples"))
                parts.setdefault(name, []).append(got)
            else:
                samples[:0] = got.pop("samples")
                if got["cut"] is not None:
                    samples.insert(0, got["cut"].pop("sample"))
                stream_range = got
        for name, (_ends, finisher) in finishers.items():
            sink.add(finisher.close(), index[name])
        sink.flush()
        rows = quarantine_rows(samples[:KEEP_SAMPLES], r, cluster, "container_stream")
        rows.append({"cluster": cluster, "source_file": r["display"], "source_pos": r["part"], "source_sub": 0,
                     "row_kind": "part", "detail": json.dumps({
                         "range": stream_range, "parts": parts, "counts": sink.counts,
                         "ends": {name: ends.to_json() for name, (ends, _f) in sorted(finishers.items())}})})
        return rows

    return parse


def _time_key(events: list) -> Callable[[int], Any]:
    """Event i's (cluster, time) as the output parts are cut by (``stage_writer.range_key``: no cluster as "",
    no time first)."""
    from forensics.stage_writer import NULL_TS

    ts = [NULL_TS if ev.ts is None else ev.ts for ev in events]
    clusters = {ev.cluster for ev in events}
    if len(clusters) <= 1:  # a broker log's range: one cluster
        return ts.__getitem__
    cluster = ["" if ev.cluster is None else ev.cluster for ev in events]
    return lambda i: (cluster[i], ts[i])


def settle_big_files(plan: BigPlan, part_rows: list[tuple[str, int, str]], summaries: list[FileSummary]) \
        -> tuple[dict[str, Any], dict[str, dict[tuple[int, int], dict]]]:
    """After ``merge_file_parts``, for files whose parts were staged (``make_staged_part_fn``): each file's
    broker (a container stream's: one per source, by index), the changes reading on across the parts'
    ends makes to their events (``templates.finish.settle_parts``), and the event counts, brought into
    ``summaries`` as the finished events would give them."""
    from parsers.broker_logs.templates.finish import settle_parts

    by_file: dict[str, list[tuple[int, dict]]] = {}
    for display, part, detail in part_rows:
        by_file.setdefault(display, []).append((part, json.loads(detail)))
    by_path = {s.path: s for s in summaries}
    brokers: dict[str, Any] = {}
    changes: dict[str, dict[tuple[int, int], dict]] = {}
    for display in sorted(plan.refs):
        parts = [p for _, p in sorted(by_file.get(display, []), key=lambda x: x[0])]
        s = by_path[display]
        if display in plan.surveys:
            brokers[display] = [x["broker_id"] for x in s.streams]
            sources = sorted(plan.surveys[display]["sources"])
            settled = [c for name in sources
                       for c in settle_parts([p["ends"][name] for p in parts if name in p["ends"]])]
        else:
            brokers[display] = s.broker_id
            settled = settle_parts([p["ends"] for p in parts])
        for p in parts:
            for kind, n in p["counts"].items():
                s.event_counts[kind] += n
                s.events += n
        for pos, sub, vals in settled:
            if "event_type" in vals:  # an epoch line that is the election (templates.finish)
                s.event_counts["controller_startup_state"] -= 1
                s.event_counts[vals["event_type"]] += 1
            changes.setdefault(display, {})[(pos, sub)] = vals
        for kind in [k for k, n in s.event_counts.items() if n == 0]:
            del s.event_counts[kind]
    return brokers, changes
