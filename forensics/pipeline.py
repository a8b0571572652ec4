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
from parsers.schema import Event, event_from_row

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


def collect_events(ingest: IngestResult, since: int | None = None, until: int | None = None) -> list[Event]:
    """Typed events to the driver, in a stable order (cluster, time, file, position)."""
    if ingest.events is None:
        return []
    from pyspark.sql import functions as F

    df = ingest.events.where(~F.col("event_type").isin(*NOT_FOR_REPLAY))
    table = df.toArrow()
    rows = table.to_pylist()
    events = [event_from_row(r) for r in rows]
    if since is not None or until is not None:
        events = [e for e in events if _in_range(e, since, until)]
    events.sort(key=lambda e: (e.cluster or "", e.ts or 0, e.source_file or "", e.source_pos or 0, e.source_sub))
    return events


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
    try:
        inputs = collect_inputs(sources, work / "extract", broker_map)
        for p in inputs.problems:
            progress.say(f"input: {p}")
        spark = start_spark(master)
        ingest = run_ingest(spark, inputs, tz=tz, cluster=cluster, progress=progress)
        require_evidence(ingest)
        events = collect_events(ingest, since, until)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if not events:
        raise UserError("no events in the requested time window" if since or until else "no Kafka events found")
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

    schema = pa.schema([
        ("cluster", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
        ("start", pa.timestamp("us", tz="UTC")), ("end", pa.timestamp("us", tz="UTC")),
        ("leader", pa.int32()), ("isr", pa.list_(pa.int32())), ("leader_epoch", pa.int32()),
        ("controller_epoch", pa.int32()), ("state", pa.string()), ("leader_alive", pa.bool_()),
        ("leaderless", pa.bool_()), ("basis", pa.string()), ("opened_by_event", pa.string()),
        ("opened_by_file", pa.string()), ("opened_by_pos", pa.int64()), ("opened_by_text", pa.string()),
    ])
    cols = {f.name: [r.get(f.name) for r in rows] for f in schema}
    table = pa.Table.from_arrays([pa.array(cols[f.name], type=f.type) for f in schema], schema=schema)
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.parquet"):
        old.unlink()
    pq.write_table(table, path / "part-00000.parquet", compression="zstd")
