"""Reading a report directory (what ``postmortem --out`` or ``replay --out`` wrote): no re-ingest.

A report directory holds ``replay.json`` and ``partition_timeline/*.parquet``
(and, from ``postmortem``, ``report.json``). Problems are the user's (wrong
folder, damaged files) and end in one line: :class:`ReportDirError`, which the command line
shows as it shows any of the user's errors.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MARKERS = ("replay.json", "report.json", "partition_timeline")


class ReportDirError(Exception):
    """A report directory that cannot be read; the message names the file and what is wrong with it."""


def is_report_dir(path: Path) -> bool:
    """A folder that looks like a report directory (even a damaged one): it has any of its files."""
    return path.is_dir() and any((path / m).exists() for m in MARKERS)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportDirError(f"{path}: not a readable JSON document ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''})") from None


def read_timeline(path: Path) -> list[dict[str, Any]]:
    """partition_timeline rows with start/end as epoch microseconds (as ReplayResult.timeline_rows gives)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    files = sorted(path.glob("*.parquet"))
    if not files:
        raise ReportDirError(f"{path}: no Parquet files "
                             "(expected the partition_timeline written by postmortem or replay)")
    try:
        table = pa.concat_tables([pq.read_table(f) for f in files])
    except (OSError, pa.ArrowException) as exc:
        raise ReportDirError(f"{path}: cannot read the partition timeline ({str(exc).splitlines()[0]})") from None
    missing = {"topic", "partition", "start", "end", "leader", "isr", "leaderless"} - set(table.column_names)
    if missing:
        raise ReportDirError(f"{path}: not a partition timeline (missing column(s) {', '.join(sorted(missing))})")
    cols = {}
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_timestamp(col.type):
            col = pc.cast(col, pa.int64())
        cols[name] = col.to_pylist()
    n = table.num_rows
    return [{k: v[i] for k, v in cols.items()} for i in range(n)]


def load_report_dir(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]:
    """(replay documents, timeline rows, report or None)."""
    if not path.is_dir():
        raise ReportDirError(f"{path}: no such directory")
    missing = [m for m in ("replay.json", "partition_timeline") if not (path / m).exists()]
    if missing:
        raise ReportDirError(f"{path}: not a report directory (missing {' and '.join(missing)}; "
                             "write one with: kafka-forensics postmortem SOURCE --out DIR)")
    replay = _json(path / "replay.json")
    report = _json(path / "report.json") if (path / "report.json").exists() else None
    if not isinstance(replay, dict) or not ("clusters" in replay or "leaderless" in replay):
        raise ReportDirError(f"{path / 'replay.json'}: not a replay document")
    from dashboards.model import replay_docs

    return replay_docs(replay), read_timeline(path / "partition_timeline"), report
