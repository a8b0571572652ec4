"""Docker's json-file logging driver (``/var/lib/docker/containers/<id>/<id>-json.log``):
``{"log":"line\\n","stream":"stdout","time":"2024-01-02T03:04:05.123456789Z"}``.

Docker splits a line longer than 16 KiB into several records; only the last ends in
``\\n``. Those are joined (per stream: stdout and stderr parts may interleave). With
``--log-opt tag=...`` / labels, ``attrs`` names the container.
"""
from __future__ import annotations

import json
from typing import Iterable, Iterator

from parsers.container_streams.records import Piece, source_from_path

NAME = "Docker json-file log"


def record(line: str) -> dict | None:
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("log"), str) and ("stream" in obj or "time" in obj):
        return obj
    return None


def line_matches(line: str) -> bool:
    return line.startswith('{"log":') or record(line) is not None


def _name(obj: dict, default: str) -> str:
    attrs = obj.get("attrs")
    if isinstance(attrs, dict):
        for key in ("tag", "name", "com.docker.compose.service", "io.kubernetes.pod.name"):
            if isinstance(attrs.get(key), str) and attrs[key]:
                return attrs[key]
    return default


def pieces(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Piece]:
    default = source_from_path(path)
    partial: dict[tuple[str, str], tuple[int, str | None, list[str]]] = {}
    for pos, line in lines:
        if not line.strip():
            yield Piece("other", pos, why="empty line")
            continue
        obj = record(line)
        if obj is None:
            yield Piece("quarantined", pos, default, line, why="not a JSON record of Docker's json-file driver")
            continue
        source = _name(obj, default)
        stream = str(obj.get("stream") or "")
        stamp = obj.get("time") if isinstance(obj.get("time"), str) else None
        text = obj["log"]
        key = (source, stream)
        if not text.endswith("\n"):
            partial.setdefault(key, (pos, stamp, []))[2].append(text)
            continue
        text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
        if key in partial:
            first_pos, first_stamp, parts = partial.pop(key)
            parts.append(text)
            yield Piece("line", first_pos, source, "".join(parts), first_stamp, joined=len(parts))
            continue
        yield Piece("line", pos, source, text, stamp)
    for (source, _), (first_pos, first_stamp, parts) in partial.items():
        yield Piece("line", first_pos, source, "".join(parts), first_stamp, joined=len(parts),
                    why="the file ends before the last part of this split line")
