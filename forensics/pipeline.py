"""The shared front half of replay, postmortem, whatif and risk: sources -> ingest (Spark) -> replay.

Spark parses everything; the driver then collects only the typed events the
replay needs (not the raw ZooKeeper txns, not routine lines), which are a
small fraction of the input. ``audit`` distributes the replay instead.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.errors import UserError
from forensics.ingest import IngestResult, release, require_evidence, run_ingest
from forensics.progress import Progress
from forensics.sources import collect_inputs
from parsers.schema import Event, event_from_row, iso_utc

# Raw txns stay in the events table for forensics but carry nothing the replay reads.
NOT_FOR_REPLAY = ("zk_txn",)


@dataclass
class Analysis:
    ingest: IngestResult
    events: list[Event]
    workdir: Path
    cluster: str
    notes: list[str] = field(default_factory=list)

    def close(self) -> None:
        release(self.ingest)
        shutil.rmtree(self.workdir, ignore_errors=True)


def replay_order(e) -> tuple:
    """The order events are replayed in: by cluster, then time, then where each was read (file, position, entry)."""
    return (e.cluster or "", e.ts or 0, e.source_file or "", e.source_pos or 0, e.source_sub)


def collect_events(ingest: IngestResult, since: int | None = None, until: int | None = None) -> list[Event]:
    """Typed events to the driver, in a stable order (cluster, time, file, position)."""
    if ingest.events is None:
        return []
    from pyspark.sql import functions as F

    df = ingest.events.where(~F.col("event_type").isin(*NOT_FOR_REPLAY))
    table = df.toArrow()
    rows = table.to_pylist()
    events = [event_from_row(r) for r in rows]
    events.sort(key=replay_order)
    events, copies = drop_log_copies(events)
    if copies:
        ingest.summary_json["log_copies"] = copies
    # Before the time window: the lines that name a cluster are written at start-up, often before it.
    events, told = split_clusters(events)
    if told:
        ingest.summary_json["clusters_told_apart"] = told
    if since is not None or until is not None:
        events = [e for e in events if _in_range(e, since, until)]
    events.sort(key=replay_order)
    return events


def split_clusters(events: list[Event]) -> tuple[list[Event], list[dict[str, Any]]]:
    """Events given as one cluster that hold several (``replay_engine.folders.clusters``) get their own cluster's name;
    those no evidence places are left out. Returns the events kept and, per cluster given, what told them apart."""
    from replay_engine.folders.clusters import tell_clusters

    by_cluster: dict[str | None, list[Event]] = {}
    for e in events:
        by_cluster.setdefault(e.cluster, []).append(e)
    told, left = [], set()
    for base, mine in by_cluster.items():
        t = tell_clusters(mine, base)
        if not t.clusters:
            continue
        for e, name in zip(mine, t.names):
            e.cluster = name
            if name is None:
                left.add(id(e))
        told.append(t.record(base))
    return ([e for e in events if id(e) not in left] if left else events), told


def _copy_key(e: Event) -> tuple | None:
    if e.source_kind != "broker_log" or e.broker_id is None or e.raw is None or e.source_file is None:
        return None
    return (e.cluster, e.broker_id, e.ts, e.raw, e.source_sub, e.event_type)


def drop_log_copies(events: list[Event]) -> tuple[list[Event], list[dict[str, Any]]]:
    """An entry a broker logged once but the evidence holds twice counts once.

    ``server.log`` and a rotated ``server.log.2021-10-21-14`` covering the same hour, or
    ``kafkaServer.out`` beside ``server.log``: replayed twice, every decision in the overlap is
    compared twice and every client error counted twice. Copies are entries of one broker with
    the same time and text in different files; the copy in the first file by name is kept,
    whatever the input order. Repeats inside one file are real and kept. Returns the events
    kept (in their order) and, per pair of files, what was dropped with a citation of each side.
    """
    kept_at: dict[tuple, tuple[str, int]] = {}
    for e in events:
        k = _copy_key(e)
        if k is not None and (k not in kept_at or (e.source_file, e.source_pos) < kept_at[k]):
            kept_at[k] = (e.source_file, e.source_pos or 0)
    out: list[Event] = []
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for e in events:
        k = _copy_key(e)
        if k is None or kept_at[k][0] == e.source_file:
            out.append(e)
            continue
        kept_file, kept_pos = kept_at[k]
        p = pairs.setdefault((e.source_file, kept_file), {"copy": e.source_file, "kept": kept_file, "entries": set(),
                                                          "first": (e.source_pos or 0, kept_pos, e)})
        p["entries"].add(e.source_pos)
        if (e.source_pos or 0) < p["first"][0]:
            p["first"] = (e.source_pos or 0, kept_pos, e)
    copies = []
    for (copy, kept), p in sorted(pairs.items()):
        pos, kept_pos, ev = p["first"]
        n = len(p["entries"])
        copies.append({
            "copy": copy, "kept": kept, "entries": n,
            "text": f"{n} entr{'y' if n == 1 else 'ies'} of {copy} (first at line {pos}) repeat {kept} (line "
                    f"{kept_pos}): same broker, time and text, a rotated or duplicated copy; counted once",
            "evidence": [{"ts": iso_utc(ev.ts), "event": ev.event_type, "source_file": copy, "source_pos": pos,
                          "text": (ev.raw or "").split("\n", 1)[0][:300]},
                         {"ts": iso_utc(ev.ts), "event": ev.event_type, "source_file": kept, "source_pos": kept_pos,
                          "text": (ev.raw or "").split("\n", 1)[0][:300]}],
        })
    return out, copies


def _in_range(ev: Event, since: int | None, until: int | None) -> bool:
    # Configuration, versions and assignments describe the cluster, whenever they were written.
    if ev.event_type in ("broker_config", "kafka_version", "topic_config_written", "topic_assignment_written",
                         "topic_created", "broker_config_written"):
        return until is None or ev.ts is None or ev.ts <= until
    if ev.ts is None:
        return True
    return (since is None or ev.ts >= since) and (until is None or ev.ts <= until)


def analyse(
    sources: list[str],
    *,
    master: str | None,
    tz: str,
    cluster: str,
    broker_map: list[str] | None,
    progress: Progress,
    since: int | None = None,
    until: int | None = None,
) -> Analysis:
    from forensics.commands.common import start_spark

    work = Path(tempfile.mkdtemp(prefix="kf-work-"))
    ingest = None
    try:
        inputs = collect_inputs(sources, work / "extract", broker_map)
        for p in inputs.problems:
            progress.say(f"input: {p}")
        spark = start_spark(master)
        ingest = run_ingest(spark, inputs, tz=tz, cluster=cluster, progress=progress)
        require_evidence(ingest)
        events = collect_events(ingest, since, until)
        if not events:
            raise UserError("no events in the requested time window" if since or until else "no Kafka events found")
    except BaseException:
        if ingest is not None:
            release(ingest)  # the cache and the staged events (forensics.staging) go now, not at exit
        shutil.rmtree(work, ignore_errors=True)
        raise
    progress.say(f"replay input: {len(events):,} events")
    return Analysis(ingest, events, work, cluster)


def parse_time(text: str | None, tz: str) -> int | None:
    """--since/--until: ISO-8601 ('2021-05-05T16:00', with or without zone) in --tz when no zone is given."""
    if not text:
        return None
    import datetime as dt
    from zoneinfo import ZoneInfo

    t = text.strip().replace(" ", "T")
    try:
        d = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise UserError(f"cannot read time {text!r}: use ISO-8601, e.g. 2021-05-05T16:00:00") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc if tz == "UTC" else ZoneInfo(tz))
    return int(d.timestamp() * 1_000_000)


def write_timeline(rows: list[dict[str, Any]], path: Path) -> None:
    """partition_timeline as one Parquet file (written by the driver: it is small and must be byte-stable)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from replay_engine.common.timeline import timeline_arrow_schema

    schema = timeline_arrow_schema()
    cols = {f.name: [r.get(f.name) for r in rows] for f in schema}
    table = pa.Table.from_arrays([pa.array(cols[f.name], type=f.type) for f in schema], schema=schema)
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.parquet"):
        old.unlink()
    pq.write_table(table, path / "part-00000.parquet", compression="zstd")
