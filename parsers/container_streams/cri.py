"""Kubernetes CRI log files (``/var/log/pods/<ns>_<pod>_<uid>/<container>/0.log``):
``2024-01-02T03:04:05.123456789Z stdout F message``.

The tag is ``F`` for a full line and ``P`` for a part: the runtime splits lines longer
than its buffer (16 KiB in containerd and CRI-O) into ``P`` records ended by an ``F``.
stdout and stderr are joined separately (their parts may interleave).
"""
from __future__ import annotations

import re
from typing import Iterable, Iterator

from parsers.container_streams.records import RFC3339, Piece, source_from_path

NAME = "Kubernetes CRI log"
_CRI = re.compile(r"^(" + RFC3339 + r") (stdout|stderr) ([FP])(?: (.*))?$")


def line_matches(line: str) -> bool:
    return _CRI.match(line) is not None


def pieces(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Piece]:
    source = source_from_path(path)
    partial: dict[str, tuple[int, str, list[str]]] = {}  # stream -> (first line, stamp, parts)
    for pos, line in lines:
        m = _CRI.match(line)
        if m is None:
            yield Piece("quarantined", pos, source, line,
                        why="not a CRI log record (TIMESTAMP stdout|stderr F|P message)")
            continue
        stamp, stream, tag, text = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        if tag == "P":
            first = partial.setdefault(stream, (pos, stamp, []))
            first[2].append(text)
            continue
        if stream in partial:
            first_pos, first_stamp, parts = partial.pop(stream)
            parts.append(text)
            yield Piece("line", first_pos, source, "".join(parts), first_stamp, joined=len(parts))
            continue
        yield Piece("line", pos, source, text, stamp)
    for first_pos, first_stamp, parts in partial.values():
        # the file ends inside a split line: what was written is still the line's start
        yield Piece("line", first_pos, source, "".join(parts), first_stamp, joined=len(parts),
                    why="the file ends before the last part (F) of this split line")
