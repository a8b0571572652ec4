"""One range of a container stream too big to hold (or a whole gzip stream), read in bounded memory.

A range owns the file's lines that start in it (``textranges.plan_ranges``); the grammar turns them
into pieces as for the whole file, and each source's lines go to the broker-log grammar. Across a
range boundary, within each source, the rule of ``broker_log_ranges`` holds: an entry belongs to the
range where its header is. So a range skips a source's first lines up to that source's first header
(when the source has lines before the range: the range before reads them), and reads on past its
end, taking for every source it holds the lines up to that source's next header. Joined records
never cross a boundary (the survey moves the cuts).

Memory is bounded by a source's buffer: once it holds ``chunk_lines`` lines, the next header of the
source closes it and it is read as one part, as a range is. A source's parts, over all ranges in
file order, are merged by ``stream_merge`` into what the whole read gives.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from itertools import compress, repeat
from operator import itemgetter
from typing import Any

from parsers.broker_logs.broker_log import MAX_LINE_CHARS, Reading, _is_binary
from parsers.broker_logs.broker_log_ranges import LEAD_CAP, OWN_ALL, _anchor_test
from parsers.broker_logs.log4j_layout import (
    BadTimestamp,
    LocalClock,
    choose_layout,
    iso_with_zone_micros,
)
from parsers.common.accounting import KEEP_SAMPLES, FileSummary, Quarantined
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems
from parsers.common.textranges import RawBlock, file_chunks, gunzip_stream, line_blocks, raw_line_blocks
from parsers.container_streams.demux import _CHECKED, _KAFKA_LOGGER, MAX_REPORTED
from parsers.container_streams.detect import GRAMMARS, route_of, split_of, split_raw_of, split_texts_of
from parsers.container_streams.records import Piece
from parsers.container_streams.survey import SPLIT_LINES, split_parts
from parsers.schema import Event, EventRun

CHUNK_LINES = 200_000  # lines of one source read as one part (about 50 MB of text)
_READ_ON_LINES = 256  # lines routed at a time past a range's end


class _Source:
    """One source's lines in this range: the buffer under way, and how its lines are told apart."""

    def __init__(self, name: str, info: dict, tz: str, skip: bool):
        self.name = name
        head = [(t, s) for t, s in info["head"]]
        texts = tuple(t for t, _ in head)
        layout = _layout(texts, tz)
        # No header of the broker's own (a layout without %d): the collector's stamp dates the line.
        self.prefixed = layout is None and info["stamped"]
        if self.prefixed:
            texts = tuple(f"{s} {t}" if s else t for t, s in head)
            layout = _layout(texts, tz)
        self.head = list(enumerate(texts, 1))
        self.is_anchor = _anchor_test(layout)
        self.skip = skip  # its first lines here continue an entry of the range before
        self.open = True  # reading on: its last entry may still continue
        self.taken = False
        self.texts: list[str] = []
        self.pos: list[int] = []
        self.stamps: list[str | None] = []
        self.joined = 0


@lru_cache(maxsize=64)
def _layout(head: tuple[str, ...], tz: str):
    """A source's layout, from its first lines: the same in every range a worker reads."""
    return choose_layout(list(head), LocalClock(tz))


def _numbered(blocks: Iterator[tuple[int, list[str]]]) -> Iterator[tuple[int, str]]:
    for first, lines in blocks:
        yield from zip(range(first, first + len(lines)), lines)


def read_range(path: str, size: int, ctx: SourceContext, survey: dict, start: int, first_no: int, owned: int,
               gz: bool, chunk_lines: int = CHUNK_LINES) -> Iterator[tuple[str, Any]]:
    """Yields ("events", source name, [Event]) and ("part", source name, dict) as sources' parts are read,
    then ("range", None, dict): the range's own accounting (collector lines, quarantined records, read
    problems of the lines it owns). Events are in each source's order, not yet attributed nor finished."""
    grammar = GRAMMARS[survey["key"]]
    problems = ReadProblems(bad_lines=[])
    reader = _RangeReader(grammar, survey["sources"], ctx, first_no, first_no + owned, chunk_lines)
    route = route_of(grammar)
    exhausted = False
    with open(path, "rb") as fh:
        chunks = gunzip_stream(fh, size, problems) if gz else file_chunks(fh, start)
        # A block the grammar splits as bytes (``Grammar.split_raw``) has its sources' lines picked by numpy masks.
        split_raw = split_raw_of(grammar) if route is not None else None
        split_texts = split_texts_of(grammar) if route is not None else None
        blocks = (line_blocks if split_raw is None else raw_line_blocks)(chunks, problems, MAX_LINE_CHARS, first_no)
        if route is None:
            for piece in grammar.pieces(_numbered(blocks), ctx.path):
                yield from reader.piece(piece)
                if reader.done:
                    break
            else:
                exhausted = True
        else:
            for first, lines in blocks:
                if type(lines) is RawBlock:
                    owned = first + len(lines.ends) <= reader.end
                    texts = split_texts(lines, first) if owned and split_texts is not None else None
                    if texts is not None and reader.take_texts(*texts):
                        continue
                    got = split_raw(lines) if owned else None
                    lines = lines.decode(problems, MAX_LINE_CHARS, first)
                    if got is not None and reader.take_block(first, lines, *got):
                        continue
                yield from reader.block(first, lines, route)
                if reader.done:
                    break
            else:
                exhausted = True
    acc, last_src = reader.acc, reader.last_src
    if exhausted and not grammar.json and reader.last_line == problems.unterminated_line and \
            last_src is not None and last_src.pos and last_src.pos[-1] == reader.last_line:
        acc["cut"] = _cut_line(last_src, ctx.path)
    for name in sorted(reader.sources):
        yield from reader.flush(reader.sources[name])
    yield "range", None, close_accounting(acc, problems, first_no, reader.end)


class _RangeReader:
    """The pieces of one range, in file order, put in their sources' buffers; a buffer that is full is read
    (``flush``) at its source's next header. ``done``: past the range's end, every source's last entry
    has ended. ``last_line``/``last_src``: the last piece's line when it is a source's (None otherwise) and
    the source it went to (for a cut last line)."""

    def __init__(self, grammar, infos: dict, ctx: SourceContext, first_no: int, end: int, chunk_lines: int):
        self.grammar, self.infos, self.ctx = grammar, infos, ctx
        self.split = split_of(grammar)
        self.first_no, self.end, self.chunk_lines = first_no, end, chunk_lines
        self.sources: dict[str, _Source] = {}
        self.acc = new_accounting()
        self.reading_on = False
        self.stop_after = OWN_ALL  # reading on: the last record of the sources open at the range's end
        self.done = False
        self.last_line: int | None = None
        self.last_src: _Source | None = None

    def flush(self, src: _Source) -> Iterator[tuple[str, str, Any]]:
        if src.texts:
            yield from _read_part(src, self.ctx)
            src.texts, src.pos, src.stamps = [], [], []

    def _reach(self) -> int:
        """The last record of the sources still open past the range's end: beyond it nothing is left to read
        (the rest of the file is other sources'; a source that logs no more kept a range reading to the end)."""
        return max((self.infos[s.name].get("last", OWN_ALL) for s in self.sources.values() if s.open),
                   default=OWN_ALL)

    def piece(self, piece) -> Iterator[tuple[str, str, Any]]:
        self.last_line, self.last_src = (piece.pos if piece.kind == "line" else None), None
        sources = self.sources
        if piece.pos >= self.end:
            if not self.reading_on:
                self.reading_on = True
                for s in sources.values():
                    s.open = s.taken
                self.stop_after = self._reach()
            if piece.pos > self.stop_after:
                self.done = True
                return
            if piece.kind == "line":
                src = sources.get(piece.source or "?")
                if src is not None and src.open:
                    self.last_src = src
                    for i, part in enumerate(split_parts(piece.text)):
                        text = f"{piece.stamp} {part}" if src.prefixed and piece.stamp else part
                        if src.is_anchor(text):
                            src.open = False
                            self.stop_after = self._reach()
                            break
                        _take(src, text, piece, i == 0, self.acc)
            if not any(s.open for s in sources.values()):
                self.done = True
            return
        if count_outside(self.acc, piece, self.ctx.path):
            return
        name = piece.source or "?"
        src = sources.get(name)
        if src is None:
            info = self.infos[name]
            src = sources[name] = _Source(name, info, self.ctx.tz, info["first"] < self.first_no)
        self.last_src = src
        for i, part in enumerate(split_parts(piece.text)):
            text = f"{piece.stamp} {part}" if src.prefixed and piece.stamp else part
            if src.skip:
                if not src.is_anchor(text):
                    continue
                src.skip = False
            elif len(src.texts) >= self.chunk_lines and src.is_anchor(text):
                yield from self.flush(src)
            _take(src, text, piece, i == 0, self.acc)

    def block(self, first: int, lines: list[str], route) -> Iterator[tuple[str, str, Any]]:
        """A block of lines through ``route``: a line of a source the range reads on as it is (one part, no
        stamp to put before it, no header to wait for, its buffer not full) is put in the buffer here, what
        ``piece`` would do with it; any other line goes to ``piece``. Past its end a range reads only up to
        each source's next header: those lines are routed a few at a time."""
        k = max(0, self.end - first)
        if len(lines) - k <= _READ_ON_LINES:
            yield from self._routed(first, lines, route)
            return
        for at in range(k, len(lines), _READ_ON_LINES):
            if at == k and k:
                yield from self._routed(first, lines[:k], route)
            if self.done:
                return
            yield from self._routed(first + at, lines[at:at + _READ_ON_LINES], route)
            if self.done:
                return

    def _routed(self, first: int, lines: list[str], route) -> Iterator[tuple[str, str, Any]]:
        k = min(len(lines), self.end - first)
        if k > 0 and self.split is not None:
            for at in range(0, k, SPLIT_LINES):
                part = lines[at:min(k, at + SPLIT_LINES)]
                if not self._split(first + at, part):
                    yield from self._by_line(first + at, part, route)
            if k == len(lines):
                return
            first, lines = first + k, lines[k:]
        yield from self._by_line(first, lines, route)

    def _by_line(self, first: int, lines: list[str], route) -> Iterator[tuple[str, str, Any]]:
        names, texts, stamps = route(lines)
        sources, end, chunk_lines = self.sources, self.end, self.chunk_lines
        pieces, path = self.grammar.pieces, self.ctx.path
        n = first - 1
        for name, text, stamp in zip(names, texts, stamps):
            n += 1
            if n < end and name is not None:
                src = sources.get(name)
                if src is not None and not src.skip and not src.prefixed and len(src.texts) < chunk_lines:
                    src.texts.append(text)
                    src.pos.append(n)
                    src.stamps.append(stamp)
                    self.last_line, self.last_src = n, src
                    continue
            for piece in (pieces([(n, text)], path) if name is None else (Piece("line", n, name, text, stamp),)):
                yield from self.piece(piece)
                if self.done:
                    return

    def take_block(self, first: int, lines: list[str], width: int, present: dict[bytes, tuple[str, Any]]) -> bool:
        """``_split`` of a whole block of lines the range owns, which ``split_raw`` took (``present``: each source's
        prefix, name and which lines are its): each source's lines into its buffer by its mask, when each would
        take them all; False (nothing done) otherwise. Each stretch ``_routed`` tries would be taken alike."""
        sources, n = self.sources, len(lines)
        picks = []
        for name, mine in present.values():
            src = sources.get(name)
            count = int(mine.sum())
            if src is None or src.skip or src.prefixed or len(src.texts) + count > self.chunk_lines:
                return False
            picks.append((src, mine, count))
        cut, numbers = itemgetter(slice(width, None)), range(first, first + n)
        for src, mine, count in picks:
            if len(picks) == 1:
                src.texts.extend(map(cut, lines))
                src.pos.extend(numbers)
            else:
                mask = mine.tolist()
                src.texts.extend(map(cut, compress(lines, mask)))
                src.pos.extend(compress(numbers, mask))
            src.stamps.extend(repeat(None, count))
        self.last_line, self.last_src = first + n - 1, next(src for src, mine, _ in picks if mine[-1])
        return True

    def take_texts(self, by_source: dict[str, tuple[list[str], list[int]]], last: str) -> bool:
        """``take_block`` of a block whose sources' lines ``split_texts`` already cut from their prefixes
        ({source: (texts, line numbers)}, ``last``: the source of its last line); False (nothing done) when
        ``take_block`` would not take it."""
        sources, picks = self.sources, []
        for name, (texts, numbers) in by_source.items():
            src = sources.get(name)
            if src is None or src.skip or src.prefixed or len(src.texts) + len(texts) > self.chunk_lines:
                return False
            picks.append((src, texts, numbers))
        for src, texts, numbers in picks:
            src.texts.extend(texts)
            src.pos.extend(numbers)
            src.stamps.extend(repeat(None, len(texts)))
        self.last_line, self.last_src = by_source[last][1][-1], sources[last]
        return True

    def _split(self, first: int, lines: list[str]) -> bool:
        """Lines the range owns into their sources' buffers at once, when ``split`` takes the block and each of
        its sources would take every one of its lines as ``_routed`` does (already met here, past its skip,
        no stamp put before it, its buffer not full by the block's end); False (nothing done) otherwise."""
        got = self.split(lines)
        if got is None:
            return False
        width, keys, present, _text = got
        sources, n = self.sources, len(lines)
        counts = {key: (keys.count(key) if len(present) > 1 else n) for key in present}
        for key, name in present.items():
            src = sources.get(name)
            if src is None or src.skip or src.prefixed or len(src.texts) + counts[key] > self.chunk_lines:
                return False
        cut, numbers = itemgetter(slice(width, None)), range(first, first + n)
        for key, name in present.items():
            src = sources[name]
            if len(present) == 1:
                src.texts.extend(map(cut, lines))
                src.pos.extend(numbers)
            else:
                mask = list(map(key.__eq__, keys))
                src.texts.extend(map(cut, compress(lines, mask)))
                src.pos.extend(compress(numbers, mask))
            src.stamps.extend(repeat(None, counts[key]))
        self.last_line, self.last_src = first + n - 1, sources[present[keys[-1]]]
        return True


def new_accounting() -> dict[str, Any]:
    """A range's own accounting: collector lines, quarantined records, joined-record notes, a cut last line."""
    return {"other": 0, "quarantined": 0, "lines": 0, "outside": {}, "records": {}, "samples": [],
            "joined_notes": [], "cut": None}


def count_outside(acc: dict[str, Any], piece, path: str) -> bool:
    """Count a piece that is no source's line (a collector's own line, a damaged record); False for a line."""
    if piece.kind == "other":
        acc["other"] += 1
        acc["lines"] += 1
        acc["outside"].setdefault(piece.why, [0, piece.pos])[0] += 1
        return True
    if piece.kind == "quarantined":
        acc["quarantined"] += 1
        acc["lines"] += 1
        if len(acc["samples"]) < KEEP_SAMPLES:
            acc["samples"].append(Quarantined(path, piece.pos, "quarantined", piece.why, piece.text[:2000]))
        acc["records"].setdefault(piece.why, [0, piece.pos])[0] += 1
        return True
    return False


def close_accounting(acc: dict[str, Any], problems: ReadProblems, lo: int | None = None,
                     hi: int | None = None) -> dict[str, Any]:
    """The accounting as merge_stream reads it, with the read problems of the lines [lo, hi) (all when None)."""
    def mine(n: int) -> bool:
        return (lo is None or lo <= n) and (hi is None or n < hi)

    bad = [n for n in problems.bad_lines or () if mine(n)]
    acc["long_lines"] = [list(x) for x in problems.long_lines if mine(x[0])]
    acc["non_utf8"] = [len(bad), bad[0] if bad else None]
    acc["read_errors"] = list(problems.errors)
    acc["outside"] = [[why, c, f] for why, (c, f) in acc["outside"].items()]
    acc["records"] = [[why, c, f] for why, (c, f) in acc["records"].items()]
    return acc


def _take(src: _Source, text: str, piece, first_part: bool, acc: dict) -> None:
    src.taken = True
    src.texts.append(text)
    src.pos.append(piece.pos)
    src.stamps.append(piece.stamp)
    if first_part:
        # A joined record counts (and its note is given) where its first line goes.
        if piece.joined > 1:
            src.joined += piece.joined - 1
        if piece.why and len(acc["joined_notes"]) < MAX_REPORTED:
            acc["joined_notes"].append(f"line {piece.pos}: {piece.why}")


def _cut_line(src: _Source, path: str) -> dict:
    """The file ends inside its last line: kept aside, not read (as ``demux._quarantine_cut_line``)."""
    pos, text = src.pos.pop(), src.texts.pop()
    src.stamps.pop()
    why = "the file ends inside this line (cut mid-line)"
    return {"pos": pos, "why": why, "sample": Quarantined(path, pos, "quarantined", why, text[:2000])}


_LINE_NO = re.compile(r"^line (\d+)")


def _read_part(src: _Source, ctx: SourceContext) -> Iterator[tuple[str, str, Any]]:
    """The source's buffered lines (from a header, or from its first line, to before a header) -> events
    and one part, line numbers turned into the file's."""
    pos, stamps = src.pos, src.stamps
    sub = FileSummary(path=ctx.path, kind="broker_log", cluster=ctx.cluster)
    reading = Reading(SourceContext(ctx.path, ctx.cluster, None, ctx.tz, event_runs=ctx.event_runs), sub,
                      ReadProblems(), lead_cap=LEAD_CAP)
    events: list[Event] = []
    gaps: list[int | None] = []
    n_events = client = 0
    for batch in reading.run(iter([(1, src.texts)]), src.head, True, _is_binary):
        for ev in batch:
            n = len(ev) if type(ev) is EventRun else 1  # an EventRun's events share their line
            if len(gaps) < _CHECKED and not src.prefixed:
                gaps.extend([_gap(ev, stamps)] * min(n, _CHECKED - len(gaps)))
            ev.source_pos = pos[ev.source_pos - 1]
            client += n if ev.event_type == "client_error" else 0
            n_events += n
        events.extend(batch)
        if len(events) >= 20_000:
            yield "events", src.name, events
            events = []
    if events:
        yield "events", src.name, events
    for q in sub.samples:
        q.source_pos = pos[q.source_pos - 1]
    state = reading.state()
    chron = state["chron"]
    if chron["backwards"] is not None:
        chron["backwards"][1] = pos[chron["backwards"][1] - 1]
        line, ts, above = chron["first_back"]
        chron["first_back"] = (pos[line - 1], ts, above)
    if chron["lead"]:
        chron["lead"] = [(ts, pos[line - 1]) for ts, line in chron["lead"]]
    for d in state["damaged"].values():
        d[1] = pos[d[1] - 1]
    logger = n_events > 0 or any(_KAFKA_LOGGER.search(t) for t in src.texts)
    samples = sub.samples
    sub.samples = []
    yield "part", src.name, {"summary": sub.to_json(), "state": state, "samples": samples,
                             "lines": len(src.texts), "first": pos[0], "last": pos[-1], "joined": src.joined,
                             "logger": logger, "events": n_events, "client": client, "gaps": gaps}
    src.joined = 0


def _gap(ev: Event, stamps: list[str | None]) -> int | None:
    stamp = stamps[ev.source_pos - 1] if ev.ts is not None else None
    if stamp is None:
        return None
    try:
        return iso_with_zone_micros(stamp) - ev.ts
    except BadTimestamp:
        return None
