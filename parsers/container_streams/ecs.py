"""Exports from Elasticsearch/OpenSearch of what Filebeat shipped (ECS documents, one JSON per line).

A document is one log entry (Filebeat's multiline joins a stack trace to its header):
``message``, ``@timestamp``, ``log.file.path``, ``host.name``, ``kubernetes.pod.name``,
as nested objects or dotted keys, bare or inside the ``_source`` of a search/scroll hit.
Filebeat's Kafka module (``module/kafka/log/ingest/pipeline.yml``) replaces ``message``
with the text between level and logger, moves the ``[Component]`` ident to
``kafka.log.component`` and the class to ``kafka.log.class``, and parses the stamp into
``@timestamp`` (UTC). Such an entry is written back into Kafka's layout with a zoned stamp,
so the broker-log grammar reads it as it reads a file.

An index is not a file: an export comes in the order the query chose, so each source's
entries are put back in time order.
"""
from __future__ import annotations

import json
from typing import Iterable, Iterator

from parsers.container_streams.records import INNER_HEADER, Piece
from parsers.broker_logs.log4j_layout import BadTimestamp, iso_with_zone_micros

NAME = "Elasticsearch/OpenSearch export (ECS)"
# Fields only a shipper adds: they tell an export from a broker that itself logs JSON (log4j2's JsonLayout).
_SHIPPER_KEYS = ("_source", "_index", "log.file.path", "host.name", "kubernetes.pod.name", "agent.type",
                 "agent.name", "input.type", "fileset.name", "kafka.log.class", "container.name")
_SOURCE_KEYS = ("kubernetes.pod.name", "container.name", "host.name", "host.hostname", "agent.hostname", "agent.name")


def _flat(obj: dict, prefix: str = "", out: dict | None = None) -> dict:
    out = {} if out is None else out
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and k != "_source":
            _flat(v, key + ".", out)
        else:
            out[key] = v
    return out


def document(line: str) -> dict | None:
    """The flattened document of an export line, or None."""
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    hit = obj.get("_source")
    doc = _flat(hit if isinstance(hit, dict) else obj)
    if "message" not in doc or "@timestamp" not in doc:
        return None
    if isinstance(hit, dict) or any(k in doc for k in _SHIPPER_KEYS):
        return doc
    return None


def line_matches(line: str) -> bool:
    return document(line) is not None


def _text(doc: dict) -> str:
    """The entry as the broker wrote it, or as near as the document keeps it."""
    for key in ("event.original", "log.original"):
        v = doc.get(key)
        if isinstance(v, str) and INNER_HEADER.match(v):
            return v
    message = str(doc.get("message") or "")
    if INNER_HEADER.match(message):
        return message
    level = str(doc.get("log.level") or doc.get("kafka.log.level") or "INFO").upper()
    component = doc.get("kafka.log.component")
    logger = doc.get("kafka.log.class") or doc.get("log.logger")
    head = f"[{doc['@timestamp']}] {level} "
    if isinstance(component, str) and component and component != "unknown":
        head += f"[{component}] "
    head += message
    if logger:
        head += f" ({logger})"
    trace_class, trace_msg = doc.get("kafka.log.trace.class"), doc.get("kafka.log.trace.message")
    if trace_class:
        head += f"\n{trace_class}: {trace_msg or ''}"
    elif isinstance(doc.get("error.stack_trace"), str):  # log4j2's EcsLayout, Elastic's Java agents
        head += "\n" + doc["error.stack_trace"].rstrip("\n")
    return head


def _order(doc: dict, pos: int) -> tuple:
    stamp = doc.get("@timestamp")
    try:
        ts = iso_with_zone_micros(stamp) if isinstance(stamp, str) else int(stamp or 0)
    except (BadTimestamp, ValueError, TypeError):
        ts = 0
    offset = doc.get("log.offset")
    return (ts, str(doc.get("log.file.path") or ""), offset if isinstance(offset, int) else 0, pos)


def pieces(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Piece]:
    for pos, line in lines:
        s = line.strip()
        if not s or s in ("[", "]"):
            yield Piece("other", pos, why="empty line")
            continue
        doc = document(s.rstrip(","))
        if doc is None:
            yield Piece("quarantined", pos, None, line, why="not an ECS document with message and @timestamp")
            continue
        source = next((str(doc[k]) for k in _SOURCE_KEYS if doc.get(k)), None) or "?"
        stamp = doc["@timestamp"] if isinstance(doc["@timestamp"], str) else None
        yield Piece("line", pos, source, _text(doc), stamp, order=_order(doc, pos))
