"""``kubectl logs``: ``--prefix`` (``[pod/kafka-0/kafka] line``) and ``--timestamps`` (an RFC 3339
stamp before each line), alone or together.

kubectl reads the node's CRI file and prints the message part: the broker's own line,
its header included. The stamp is the runtime's; the broker's header keeps its own.
"""
from __future__ import annotations

import re
from typing import Iterable, Iterator

from parsers.container_streams.records import INNER_HEADER, Piece, source_from_path, split_stamp

NAME_PREFIX = "kubectl logs --prefix"
NAME_TIMESTAMPS = "runtime time stamps (kubectl logs --timestamps, docker logs -t)"
_PREFIX = re.compile(r"^\[pod/([^/\]\s]+)/([^\]\s]+)\](?: |$)")


def prefix_matches(line: str) -> bool:
    return _PREFIX.match(line) is not None


def timestamps_matches(line: str) -> bool:
    stamp, _ = split_stamp(line)
    return stamp is not None


def timestamps_inner_header(line: str) -> bool:
    """Does the line behind the stamp start with a log header of its own (what tells
    kubectl's stamp apart from a layout that itself starts with an ISO-8601 stamp)?"""
    stamp, rest = split_stamp(line)
    return stamp is not None and INNER_HEADER.match(rest) is not None


def prefix_pieces(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Piece]:
    for pos, line in lines:
        m = _PREFIX.match(line)
        if m is None:
            yield Piece("other", pos, why="line without kubectl's [pod/NAME/CONTAINER] prefix")
            continue
        stamp, text = split_stamp(line[m.end():])
        yield Piece("line", pos, f"{m.group(1)}/{m.group(2)}", text, stamp)


def timestamps_pieces(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Piece]:
    source = source_from_path(path)
    for pos, line in lines:
        stamp, text = split_stamp(line)
        if stamp is None:
            # kubectl stamps every line; one without is someone's note or a cut line: still the pod's text
            yield Piece("line", pos, source, line)
            continue
        yield Piece("line", pos, source, text, stamp)
