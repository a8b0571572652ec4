"""The first pass over a container stream too big to hold: what every range of it must know beforehand.

A range reads its sources' lines with the broker-log grammar, and three things about a source are
decided over the whole file, not over the lines one range sees: its layout (from its first lines,
which may lie in another range), its broker id (from the line where it names itself, anywhere) and
whether it starts before the range (then its first lines in the range may continue an entry begun
before). The pass keeps per source its first ``SNIFF_LINES`` lines and the ids its lines name: a
few kilobytes whatever the file's size.

It also moves range cuts that fall inside a joined record (CRI ``P`` partials, Docker's 16 KiB
splits) to the line after the record's last part, so no record spans two ranges; and it tells a
stream the ranges cannot read in file order (an export in the query's order, read by ``sorted_runs``) from
one they can.
"""
from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from itertools import chain, compress

import numpy as np

from parsers.broker_logs.broker_log import MAX_LINE_CHARS, SNIFF_LINES
from parsers.common.textio import ReadProblems
from parsers.common.textranges import RawBlock
from parsers.container_streams.detect import GRAMMARS, detect_head, split_of, split_raw_of
from parsers.container_streams.identity import (
    configured_raw,
    first_named,
    ident_id,
    idents,
    ident_places,
    named_ids,
    self_named,
)


def split_parts(text: str) -> list[str]:
    """The log lines of one record's text, as the whole-file demultiplexer splits them."""
    if "\n" not in text:
        return [text.removesuffix("\r")]
    return [p.removesuffix("\r") for p in text.split("\n")]



def survey(numbered: Iterable[tuple[int, str]], path: str, cuts: Iterable[int] = ()) -> dict:
    """One pass over a stream's numbered lines -> a JSON-able survey.

    ``cuts``: the first line of each range but the first. The survey's ``moved`` maps a cut that
    falls inside a joined record to the line after that record's last part.
    """
    numbered = iter(numbered)
    key, head = detect_head(numbered)
    if key is None:
        return {"key": None, "ranged": False, "why": "no container or collector format recognised"}
    grammar = GRAMMARS[key]
    if grammar.reorder:
        return {"key": key, "ranged": False, "why": f"{grammar.name}: entries come in the query's order"}
    cut_list = sorted(set(cuts))
    moved: dict[int, int] = {}
    consumed = [0]

    def counted() -> Iterator[tuple[int, str]]:
        for item in chain(head, numbered):
            consumed[0] = item[0]
            yield item

    sources: dict[str, dict] = {}
    last_stamp: dict[str, str] = {}
    for piece in grammar.pieces(counted(), path):
        if piece.kind != "line":
            continue
        name = piece.source or "?"
        src = sources.get(name)
        if src is None:
            src = sources[name] = {"first": piece.pos, "head": [], "stamped": False, "ids": {}, "back": 0, "fwd": 0}
        src["last"] = piece.pos
        if piece.joined > 1:
            # The record's parts run from piece.pos to the line just read: no range may start inside.
            i = bisect.bisect_right(cut_list, piece.pos)
            while i < len(cut_list) and cut_list[i] <= consumed[0]:
                moved[cut_list[i]] = max(moved.get(cut_list[i], 0), consumed[0] + 1)
                i += 1
        stamp = piece.stamp
        if stamp is not None:
            src["stamped"] = True
        for part in split_parts(piece.text):
            if len(src["head"]) < SNIFF_LINES:
                src["head"].append([part, stamp])
            if "id" in part:
                for bid, (words, pos) in named_ids([part], [piece.pos]).items():
                    src["ids"].setdefault(str(bid), [words, pos])
            if stamp is not None:
                prev = last_stamp.get(name)
                if prev is not None:
                    if stamp < prev:
                        src["back"] += 1
                    elif stamp > prev:
                        src["fwd"] += 1
                last_stamp[name] = stamp
    backwards = sorted(n for n, s in sources.items() if s["back"] > s["fwd"])
    if backwards:
        return {"key": key, "ranged": False,
                "why": f"{', '.join(backwards)}: lines newest first (put in order by sorted runs)"}
    return {"key": key, "ranged": True, "sources": sources, "moved": {str(k): v for k, v in moved.items()},
            "lines": consumed[0]}


# Lines ``split`` is tried on at a time: a block's lines it does not take (a source not met yet in a range,
# Compose's own line, a colour code) leave only their own stretch to ``route``.
SPLIT_LINES = 4096

# Lines a range's survey reads past its end, to see a record begun in it end (Docker's 16 KiB parts).
LOOKAHEAD_LINES = 256


def survey_range(numbered: Iterable[tuple[int, str]], path: str, key: str, end: int) -> dict:
    """The survey of one range of a stream, for ``merge_surveys``: ``numbered`` are the range's lines from
    its first (read on up to LOOKAHEAD_LINES past ``end``, the first line it does not own). Per source:
    what ``survey`` keeps, and its first and last collector stamps here (the stamp order across ranges).
    ``crossing``: a record begun in the range ends past it (``survey`` would move the next range's cut)."""
    grammar = GRAMMARS[key]
    consumed = [0]

    def counted() -> Iterator[tuple[int, str]]:
        for item in numbered:
            consumed[0] = item[0]
            yield item

    sources: dict[str, dict] = {}
    crossing = False
    for piece in grammar.pieces(counted(), path):
        if piece.pos >= end:
            continue
        if piece.joined > 1 and consumed[0] >= end:
            crossing = True
        if piece.kind == "line":
            _surveyed(sources, piece.source or "?", piece.pos, piece.text, piece.stamp)
    return {"sources": sources, "crossing": crossing}


def survey_blocks(blocks: Iterable[tuple[int, list[str]]], path: str, key: str, end: int) -> dict:
    """``survey_range`` of the lines of ``blocks`` before ``end``, for a grammar that routes a block at once
    (``Grammar.route``: no record spans lines, so none crosses the end)."""
    grammar = GRAMMARS[key]
    route, pieces, split, split_raw = grammar.route, grammar.pieces, split_of(grammar), split_raw_of(grammar)
    sources: dict[str, dict] = {}
    for first, lines in blocks:
        if first >= end:
            continue
        if type(lines) is RawBlock:
            if first + len(lines.ends) > end:
                lines = lines.head(end - first)
            got = split_raw(lines) if split_raw is not None else None
            if got is not None:
                _survey_raw(sources, first, lines, *got, split, route, pieces, path)
                continue
            lines = lines.decode(ReadProblems(), MAX_LINE_CHARS, first)
        if first + len(lines) > end:
            lines = lines[:end - first]
        for at in range(0, len(lines), SPLIT_LINES) if split is not None else ():
            part = lines[at:at + SPLIT_LINES]
            got = split(part)
            if got is not None:
                _survey_split(sources, first + at, part, *got)
            else:
                _survey_routed(sources, first + at, part, route, pieces, path)
        if split is None:
            _survey_routed(sources, first, lines, route, pieces, path)
    return {"sources": sources, "crossing": False}


def _survey_raw(sources: dict[str, dict], first: int, block: RawBlock, width: int,
                present: dict[bytes, tuple[str, np.ndarray]], split, route, pieces, path: str) -> None:
    """What ``survey_blocks`` notes of a block that ``split_raw`` took (every line a known source's, no stamp),
    with the block left as bytes once no source in the rest of it has a short head: before that, its next
    SPLIT_LINES lines are decoded and noted as ``survey_blocks`` notes them. Then each source's last line is the
    last one its prefix starts, and the ids its lines name that it had not named are found as ``_survey_split``
    finds them (the rest's idents by one search, the first line of the source holding each one new to it, the
    configuration dump lines each): what it notes does not depend on where the stretches of lines are cut."""
    body, ends = block.body, block.ends
    n = len(ends)
    at = 0
    while at < n and any((name not in sources or len(sources[name]["head"]) < SNIFF_LINES) and mine[at:].any()
                         for name, mine in present.values()):
        stop = min(n, at + SPLIT_LINES)
        lo = 0 if at == 0 else int(ends[at - 1]) + 1
        lines = RawBlock(body[lo:int(ends[stop - 1]) + 1], ends[at:stop] - lo).decode(
            ReadProblems(), MAX_LINE_CHARS, first + at)
        got = split(lines)
        if got is not None:
            _survey_split(sources, first + at, lines, *got)
        else:
            _survey_routed(sources, first + at, lines, route, pieces, path)
        at = stop
    if at == n:
        return
    start = 0 if at == 0 else int(ends[at - 1]) + 1
    rest = {}
    for key, (name, mine) in present.items():
        if mine[at:].any():
            rest[name] = mine
            sources[name]["last"] = first + n - 1 - int(np.argmax(mine[::-1]))
    dumps = configured_raw(body, start, width)
    found: dict[str, dict[str, tuple[int, str]]] = {name: {} for name in rest}  # source -> id -> (place, words)
    for w, places in ident_places(body, start).items():
        bid = ident_id(w)
        wanting = [name for name in rest if bid not in sources[name]["ids"]]
        if not wanting:
            continue
        lines = np.searchsorted(ends, places)
        for name in wanting:
            hit = rest[name][lines]
            if hit.any():
                place = places[int(np.argmax(hit))]
                mine = found[name]
                if bid not in mine or place < mine[bid][0]:
                    mine[bid] = (place, w.strip().rstrip(" "))
    for line, key, said, bid in dumps:
        name = present[key][0]
        mine = found[name]
        if bid not in sources[name]["ids"] and (bid not in mine or line < mine[bid][0]):
            mine[bid] = (line, said)
    for name, mine in found.items():
        ids = sources[name]["ids"]
        for place, said, bid in sorted((place, said, bid) for bid, (place, said) in mine.items()):
            ids[bid] = [said, first + int(np.searchsorted(ends, place))]


def _survey_routed(sources: dict[str, dict], first: int, lines: list[str], route, pieces, path: str) -> None:
    """What ``survey_blocks`` notes of lines read one by one through ``route``."""
    names, texts, stamps = route(lines)
    n = first - 1
    for name, text, stamp in zip(names, texts, stamps):
        n += 1
        if name is None:
            for piece in pieces([(n, text)], path):
                if piece.kind == "line":
                    _surveyed(sources, piece.source or "?", piece.pos, piece.text, piece.stamp)
            continue
        src = sources.get(name)
        if src is None or stamp is not None or len(src["head"]) < SNIFF_LINES:
            _surveyed(sources, name, n, text, stamp)
            continue
        # what _surveyed does with the line of a source past its head, with no stamp
        src["last"] = n
        if "id" in text:
            _note_ids(src["ids"], text, n)


def _survey_split(sources: dict[str, dict], first: int, lines: list[str], width: int, keys: list[str],
                  present: dict[str, str], text: str) -> None:
    """What ``survey_blocks`` notes of a block that ``split`` took (every line a source's, no stamp): a source's
    lines one by one only while its head is short; then its last line, and the ids its lines name that it
    had not named before: the block's idents found by one search, and only when one names an id new to the
    source (or a config dump line is in the block) its lines' text searched (``first_named``), a line's
    number found only for what is new."""
    numbers = range(first, first + len(lines))
    words = idents(text)  # the block's; a source's lines hold some of them
    dumped = ".id = " in text
    for key in sorted(present, key=keys.index):  # sources met in the order of their first lines
        name = present[key]
        src = sources.get(name)
        mask = list(map(key.__eq__, keys)) if len(present) > 1 else None
        if src is None or len(src["head"]) < SNIFF_LINES:
            for n, line in compress(zip(numbers, lines), mask) if mask else zip(numbers, lines):
                _surveyed(sources, name, n, line[width:], None)
                if len(sources[name]["head"]) >= SNIFF_LINES:
                    break
            src = sources[name]
        src["last"] = first + len(keys) - 1 - keys[::-1].index(key)
        ids = src["ids"]
        new = [w for w in words if ident_id(w) not in ids]
        if not new and not dumped:
            continue
        mine = "\n".join(compress(lines, mask)) if mask else text
        mine_at = None
        at = n = 0
        for start, said, bid in first_named(mine, width, new):
            if bid not in ids:
                n += mine.count("\n", at, start)
                at = start
                if mine_at is None:
                    mine_at = list(compress(numbers, mask)) if mask else numbers
                ids[bid] = [said, mine_at[n]]


def _surveyed(sources: dict[str, dict], name: str, pos: int, text: str, stamp: str | None) -> None:
    """One record of a source into the range's survey: its lines' head, the ids they name, its stamp."""
    src = sources.get(name)
    if src is None:
        src = sources[name] = {"first": pos, "head": [], "stamped": False, "ids": {}, "back": 0, "fwd": 0,
                               "first_stamp": None, "last_stamp": None}
    src["last"] = pos
    if stamp is not None:
        src["stamped"] = True
    head = src["head"]
    for part in split_parts(text) if "\n" in text or text.endswith("\r") else (text,):
        if len(head) < SNIFF_LINES:
            head.append([part, stamp])
        if "id" in part:
            _note_ids(src["ids"], part, pos)
        if stamp is not None:
            prev = src["last_stamp"]
            if prev is not None:
                if stamp < prev:
                    src["back"] += 1
                elif stamp > prev:
                    src["fwd"] += 1
            else:
                src["first_stamp"] = stamp
            src["last_stamp"] = stamp


def _note_ids(ids: dict[str, list], text: str, pos: int) -> None:
    """The ids a line names as its writer's (``identity.named_ids``), each kept where it is first named."""
    for m in self_named(text):
        bid = str(int(next(g for g in m.groups() if g is not None)))
        if bid not in ids:
            ids[bid] = [m.group(0).strip().rstrip(" "), pos]


def merge_surveys(key: str, ranges: list[dict], lines: int) -> dict | None:
    """The ranges' surveys (``survey_range``, in file order) -> what ``survey`` gives for the whole stream
    (``lines``: its number of lines); None when a record crosses a range's end (``survey`` then moves
    the cut: read the stream in one pass instead)."""
    grammar = GRAMMARS[key]
    if grammar.reorder:
        return {"key": key, "ranged": False, "why": f"{grammar.name}: entries come in the query's order"}
    if any(r["crossing"] for r in ranges):
        return None
    sources: dict[str, dict] = {}
    last_stamp: dict[str, str] = {}
    for r in ranges:
        for name, got in r["sources"].items():
            src = sources.get(name)
            if src is None:
                src = sources[name] = {"first": got["first"], "head": [], "stamped": False, "ids": {}, "back": 0,
                                       "fwd": 0}
            src["last"] = got["last"]
            src["head"].extend(got["head"][:SNIFF_LINES - len(src["head"])])
            src["stamped"] = src["stamped"] or got["stamped"]
            for bid, found in got["ids"].items():
                src["ids"].setdefault(bid, found)
            src["back"] += got["back"]
            src["fwd"] += got["fwd"]
            prev, first = last_stamp.get(name), got["first_stamp"]
            if prev is not None and first is not None:
                if first < prev:
                    src["back"] += 1
                elif first > prev:
                    src["fwd"] += 1
            if got["last_stamp"] is not None:
                last_stamp[name] = got["last_stamp"]
    backwards = sorted(n for n, s in sources.items() if s["back"] > s["fwd"])
    if backwards:
        return {"key": key, "ranged": False,
                "why": f"{', '.join(backwards)}: lines newest first (put in order by sorted runs)"}
    return {"key": key, "ranged": True, "sources": sources, "moved": {}, "lines": lines}
