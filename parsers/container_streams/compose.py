"""``docker compose logs`` (and ``docker-compose``, ``docker compose up``): ``NAME  | line``.

Compose pads every service name to the widest and separates it with ``|``; with a
terminal it colours the prefix (ANSI codes around it, sometimes in the line too). With
``--timestamps`` an RFC 3339 stamp follows the bar. Lines without a prefix are Compose's
own ("Attaching to kafka-1, zookeeper-1", "kafka-1 exited with code 137").
"""
from __future__ import annotations

import re
from typing import Iterable, Iterator

from parsers.container_streams.records import INNER_HEADER, Piece, split_stamp, strip_ansi

NAME = "docker compose logs"
_PREFIX = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*\|(?: |$)")


def line_matches(line: str) -> bool:
    return _PREFIX.match(strip_ansi(line)) is not None


def unprefixed_log_line(line: str) -> bool:
    """A log header without the service prefix: Compose never writes one, an operator's paste
    does (the first line copied without its prefix). Such a file is read as the log it mostly is."""
    return INNER_HEADER.match(strip_ansi(line)) is not None


NO_PREFIX = "(no prefix)"


def pieces(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Piece]:
    for pos, raw in lines:
        line = strip_ansi(raw)
        m = _PREFIX.match(line)
        if m is None:
            if unprefixed_log_line(line):
                yield Piece("line", pos, NO_PREFIX, line)
            else:
                yield Piece("other", pos, why="Compose's own line (no service prefix)")
            continue
        stamp, text = split_stamp(line[m.end():])
        yield Piece("line", pos, m.group(1), text, stamp)
