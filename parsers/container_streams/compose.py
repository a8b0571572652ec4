"""``docker compose logs`` (and ``docker-compose``, ``docker compose up``): ``NAME  | line``.

Compose pads every service name to the widest and separates it with ``|``; with a
terminal it colours the prefix (ANSI codes around it, sometimes in the line too). With
``--timestamps`` an RFC 3339 stamp follows the bar. Lines without a prefix are Compose's
own ("Attaching to kafka-1, zookeeper-1", "kafka-1 exited with code 137").
"""
from __future__ import annotations

import re
from operator import itemgetter
from typing import Iterable, Iterator

import numpy as np

from parsers.common.textranges import RawBlock
from parsers.container_streams.records import INNER_HEADER, RFC3339, Piece, split_stamp, strip_ansi

try:  # a block's lines handed to their services in C (setup.py builds it; without it, split_raw's masks)
    from parsers.common import _demux
except ImportError:  # pragma: no cover - a machine without a C compiler
    _demux = None
# Off: split_texts gives nothing and a range takes a block by split_raw's masks (the tests compare the two).
COMPILED = True

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


# Bulk reading: the prefixes a stream repeats ("kafka-1  | "), each checked by _PREFIX once. Bounded: a stream
# has a few services; a file of other lines must not grow it.
_KNOWN: dict[str, str] = {}
_KNOWN_CAP = 4096


def route(lines: list[str]) -> tuple[list[str | None], list[str], list[str | None]]:
    """A block of lines -> (source, text, stamp) per line, as ``pieces`` reads them, without a Piece per line.

    The source is None for a line this does not take (a colour code in it, a carriage return at its end, no
    prefix seen before or none at all): its text is then the line itself, for ``pieces``. A prefix is the
    line up to the first '|' and one character more: no service name or padding holds a '|'."""
    names: list[str | None] = []
    texts: list[str] = []
    stamps: list[str | None] = []
    known = _KNOWN
    for line in lines:
        bar = line.find("|")
        key = line[:bar + 2]
        name = known.get(key)
        if name is None:
            name = _learn(key) if bar > 0 else None
        if name is None or "\x1b" in line or line.endswith("\r"):
            names.append(None)
            texts.append(line)
            stamps.append(None)
            continue
        text = line[bar + 2:]
        names.append(name)
        if text[:1].isdigit():
            stamp, text = split_stamp(text)
            stamps.append(stamp)
        else:
            stamps.append(None)
        texts.append(text)
    return names, texts, stamps


def _learn(key: str) -> str | None:
    """The service a line starting with ``key`` (up to one past its first '|') belongs to, when ``_PREFIX``
    takes exactly that much of it: '|' then a space, or '|' ending the line."""
    m = _PREFIX.match(key)
    if m is None or m.end() != len(key):
        return None
    if len(_KNOWN) < _KNOWN_CAP:
        _KNOWN[key] = m.group(1)
    return m.group(1)


# A collector's stamp after a bar: a block holding one is read line by line (``route`` splits the stamp off).
_STAMP_AFTER_BAR = re.compile(r"\| " + RFC3339 + " ")


def split(lines: list[str]) -> tuple[int, list[str], dict[str, str], str] | None:
    """A block of lines each of which ``route`` takes as (service, line[width:], no stamp) -> (width, each
    line's prefix, {prefix: service}, the lines joined by '\n'); None for any other block (``route`` it).

    That is the common block of ``docker compose logs``: every line a known service's, the names padded to
    one width, no colour code, no ``--timestamps``. Its lines are then handed on by C loops (a prefix per
    line, a source's lines picked by a mask), not one by one. A prefix here ends with '| ' (so its one '|'
    is the line's first, as ``route`` reads it); two prefixes of one service (two paddings) are left to
    ``route``."""
    if not lines:
        return None
    bar = lines[0].find("|")
    width = bar + 2
    if bar <= 0 or _KNOWN.get(lines[0][:width]) is None or _STAMP_AFTER_BAR.match(lines[0], bar) is not None:
        return None  # (a stream with --timestamps: its first line says so)
    keys = list(map(itemgetter(slice(None, width)), lines))
    present: dict[str, str] = {}
    for key in set(keys):
        name = _KNOWN.get(key)
        if name is None or not key.endswith("| ") or len(key) != width:
            return None
        present[key] = name
    if len(set(present.values())) != len(present):
        return None
    text = "\n".join(lines)
    if "\x1b" in text or "\r" in text or _STAMP_AFTER_BAR.search(text) is not None:
        return None
    return width, keys, present, text


_STAMP_AFTER_BAR_BYTES = re.compile(_STAMP_AFTER_BAR.pattern.encode())


def split_raw(block: RawBlock) -> tuple[int, dict[bytes, tuple[str, np.ndarray]]] | None:
    """``split`` of a block of whole lines still as bytes -> (width, {prefix: (service, which lines are its)} of
    the prefixes in it), when ``split`` would take every stretch of its lines; None otherwise (decode it and
    ``split`` it). ASCII only: a line's bytes are then its characters, and a byte pattern finds what the text
    pattern finds. Each line's prefix is compared by numpy, a column of first bytes at a time; the stamp
    after a bar is searched for only when a line's text starts with a digit or a bar is not a prefix's."""
    body, ends = block.body, block.ends
    if not body.isascii() or b"\x1b" in body:
        return None
    bar = body.find(b"|", 0, int(ends[0]))
    width = bar + 2
    if bar <= 0 or _KNOWN.get(body[:width].decode()) is None or body[bar + 1:width] != b" ":
        return None
    keys = sorted(k.encode() for k in _KNOWN if len(k) == width and k.endswith("| "))
    a = np.frombuffer(body, np.uint8)
    n = len(ends)
    starts = np.empty(n, np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    if int((ends - starts).min()) < width:
        return None
    cols = [a[starts + j] for j in range(width)]
    present: dict[bytes, tuple[str, np.ndarray]] = {}
    taken = 0
    for key in keys:
        mine = cols[0] == key[0]
        for j in range(1, width):
            mine &= cols[j] == key[j]
        got = int(np.count_nonzero(mine))
        if got:
            present[key] = (_KNOWN[key.decode()], mine)
            taken += got
    if taken != n:
        return None
    after = a[starts + width]
    if (int(np.count_nonzero(a == 124)) != n or bool(((after >= 48) & (after <= 57)).any())) and \
            _STAMP_AFTER_BAR_BYTES.search(body) is not None:
        return None
    return width, present


def split_texts(block: RawBlock, first: int) -> tuple[dict[str, tuple[list[str], list[int]]], str] | None:
    """``split_raw`` of a block a range owns, with each service's lines already cut from their prefixes ->
    {service: (texts, line numbers)} in block order and the service of the block's last line, when
    ``split_raw`` would take the block; None otherwise, or without the compiled ``_demux`` (then
    ``split_raw``'s masks pick the decoded lines). The lines' strings are made once, from the bytes, where the
    masks' way makes each twice (the prefixed line, then its cut text): a range's demultiplexing was ~0.13 CPU s
    per 96 MB above the decode alone."""
    if _demux is None or not COMPILED:
        return None
    body, ends = block.body, block.ends
    if b"\x1b" in body:
        return None
    bar = body.find(b"|", 0, int(ends[0]))
    width = bar + 2
    if bar <= 0 or _KNOWN.get(body[:width].decode("latin-1")) is None or body[bar + 1:width] != b" ":
        return None
    if _STAMP_AFTER_BAR_BYTES.match(body, bar) is not None:
        return None  # a stream with --timestamps: its first line says so
    keys = sorted(k.encode() for k in _KNOWN if len(k) == width and k.endswith("| ") and k.isascii())
    got = _demux.split(body, width, tuple(keys), first)
    if got is None:
        return None
    texts, positions, last, stamp = got
    # As split_raw: a stamp after a bar is searched for only where one could be.
    if stamp and _STAMP_AFTER_BAR_BYTES.search(body) is not None:
        return None
    return {_KNOWN[k.decode()]: (t, p) for k, t, p in zip(keys, texts, positions) if t}, _KNOWN[keys[last].decode()]
