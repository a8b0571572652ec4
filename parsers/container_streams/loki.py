"""Grafana Loki's ``logcli query``: ``--output=jsonl`` (``{"labels":{...},"line":"...","timestamp":"..."}``)
and the default output (``TIMESTAMP {label="value", ...} line``).

logcli prints newest first unless ``--forward`` is given; the demultiplexer turns a
source that runs backwards around (see ``demux``). ``--output=raw`` prints the lines
alone: with ``--forward`` that is the broker's own log, read as such; newest first, its
log headers run back in time, which tells it (``newest_first``).
"""
from __future__ import annotations

import json
import re
from typing import Iterable, Iterator

from parsers.container_streams.records import RFC3339, Piece, source_from_path

NAME_JSONL = "Loki logcli --output=jsonl"
NAME_DEFAULT = "Loki logcli output"
NAME_RAW = "log lines newest first (logcli --output=raw without --forward)"
# The stamp of a log4j/logback header, as far as its seconds: '[2021-08-16 09:00:13,000]', '2021-08-16T09:00:13.1Z'.
_HEADER_STAMP = re.compile(r"^\[?(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,9})?)")
MIN_HEADERS = 3
# Labels that name where a line came from, most specific first.
_NAME_LABELS = ("pod", "pod_name", "container_name", "compose_service", "service_name", "instance", "host",
                "hostname", "filename", "job")
_DEFAULT = re.compile(r"^(" + RFC3339 + r") (\{[^{}]*\}) ?(.*)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def record(line: str) -> dict | None:
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("line"), str) and "timestamp" in obj:
        return obj
    return None


def jsonl_matches(line: str) -> bool:
    return record(line) is not None


def default_matches(line: str) -> bool:
    return _DEFAULT.match(line) is not None


def source_name(labels: dict) -> str:
    pod = labels.get("pod") or labels.get("pod_name")
    container = labels.get("container")
    if pod and container:
        return f"{pod}/{container}"
    for key in _NAME_LABELS:
        if labels.get(key):
            return str(labels[key])
    if container:
        return str(container)
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "?"


def jsonl_pieces(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Piece]:
    for pos, line in lines:
        if not line.strip():
            yield Piece("other", pos, why="empty line")
            continue
        obj = record(line)
        if obj is None:
            yield Piece("quarantined", pos, None, line, why="not a JSON record of logcli --output=jsonl")
            continue
        labels = obj.get("labels") if isinstance(obj.get("labels"), dict) else {}
        stamp = obj["timestamp"] if isinstance(obj["timestamp"], str) else None
        yield Piece("line", pos, source_name(labels), obj["line"].rstrip("\n"), stamp)


def default_pieces(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Piece]:
    for pos, line in lines:
        m = _DEFAULT.match(line)
        if m is None:
            yield Piece("other", pos, why="logcli's own line (no TIMESTAMP {labels} prefix)")
            continue
        labels = {k: v.replace('\\"', '"') for k, v in _LABEL.findall(m.group(2))}
        yield Piece("line", pos, source_name(labels), m.group(3), m.group(1))


def newest_first(lines: list[str]) -> bool:
    """Do the log headers of these lines run back in time? Nearly every step backwards: a file several
    processes append to jumps back and forth, a log turned around only runs back (async appenders
    may have swapped a few entries of one millisecond)."""
    stamps = [m.group(1).replace("T", " ").replace(".", ",") for m in map(_HEADER_STAMP.match, lines) if m]
    if len(stamps) < MIN_HEADERS:
        return False
    back = sum(1 for a, b in zip(stamps, stamps[1:]) if b < a)
    fwd = sum(1 for a, b in zip(stamps, stamps[1:]) if b > a)
    return back >= MIN_HEADERS and fwd * 10 <= back


def raw_pieces(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Piece]:
    source = source_from_path(path)
    for pos, line in lines:
        m = _HEADER_STAMP.match(line)
        # the header's own stamp orders the source (demux turns it around); comparable as text within one layout
        yield Piece("line", pos, source, line, m.group(1).replace("T", " ").replace(".", ",") if m else None)
