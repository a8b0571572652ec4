"""A broker log too big to hold, read by parts: byte ranges of a plain file, or a gzip stream.

A range owns the lines that start in it (``textranges.plan_ranges`` gives each range the
number of its first line and how many it owns) and the entries whose header is one of them:
it skips its leading lines up to its first header (the range before owns them: they
continue that range's last entry) and reads on past its last line to finish its last
entry, up to the next header. Every range chooses the layout from the file's own first
lines, so all agree on what a header is.

Per range: the events (not yet attributed to the file's broker nor finished over the file:
both need the whole file, see ``merge_parts`` and ``finish_file_events``), the quarantined
lines, and a part: its counts and the state its findings are written from. ``merge_parts``
makes of a file's parts the summary ``parse_broker_log`` gives for the whole file.
"""
from __future__ import annotations

from typing import Any, BinaryIO, Iterable, Iterator

from parsers.broker_logs.broker_log import (BACKWARDS_US, MAX_LINE_CHARS, Reading, _is_binary, _take_head,
                                            write_findings)
from parsers.broker_logs.log4j_layout import BadTimestamp, LocalClock, choose_layout
from parsers.common.accounting import FileSummary, merge_chronologies
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems
from parsers.common.textranges import file_chunks, gunzip_stream, line_blocks
from parsers.schema import Event

# Stamps of a range's first entries kept to judge them against the ranges before (Chronology.lead).
LEAD_CAP = 2000
OWN_ALL = 1 << 62


class _Owned:
    """The blocks of the lines a range processes: from its first header among the lines it owns
    (from its first line, for the file's first range) to the first header after them."""

    def __init__(self, first_no: int, owned: int, skip_lead: bool, is_anchor):
        self.end = first_no + owned
        self.skip = skip_lead
        self.is_anchor = is_anchor
        self.lo: int | None = None if skip_lead else first_no
        self.hi = first_no  # one past the last line handed on

    def __call__(self, blocks: Iterable[tuple[int, list[str]]]) -> Iterator[tuple[int, list[str]]]:
        is_anchor, end = self.is_anchor, self.end
        for first, lines in blocks:
            if self.skip:
                i = 0
                while i < len(lines) and first + i < end and not is_anchor(lines[i]):
                    i += 1
                if i == len(lines):
                    continue
                if first + i >= end:
                    return  # no header among the lines it owns: the range before reads them all
                self.skip = False
                self.lo = first + i
                first, lines = first + i, lines[i:]
            if first + len(lines) <= end:
                self.hi = first + len(lines)
                yield first, lines
                continue
            j = max(0, end - first)
            while j < len(lines) and not is_anchor(lines[j]):
                j += 1
            if j:
                self.hi = first + j
                yield first, lines if j == len(lines) else lines[:j]
            if j < len(lines):
                return


def _anchor_test(layout):
    """Does an entry start at this line, whatever came before it? (What resets the grouping.)"""
    if layout is None:
        return lambda text: True  # no layout: every line is an orphan of its own

    def is_anchor(text: str) -> bool:
        if _is_binary(text):
            return False
        try:
            return layout.parse(text) is not None
        except (BadTimestamp, ValueError, IndexError):
            return False

    return is_anchor


def _head(fh: BinaryIO, gz: bool, size: int) -> list[tuple[int, str]]:
    chunks = gunzip_stream(fh, size, ReadProblems()) if gz else file_chunks(fh, 0, 1 << 20)
    head, rest = _take_head(line_blocks(chunks, ReadProblems(), MAX_LINE_CHARS))
    rest.close()
    return head


def read_part(path: str, size: int, ctx: SourceContext, start: int, first_no: int, owned: int,
              gz: bool) -> Iterator[tuple[str, Any]]:
    """Read one range of a broker log: yields ("events", [Event]) batches, then ("part", dict).

    ``gz``: the whole gzip file as one stream (``start`` 0, ``owned`` OWN_ALL).
    """
    summary = FileSummary(path=ctx.path, kind="broker_log", broker_id=ctx.broker_hint, cluster=ctx.cluster)
    problems = ReadProblems(bad_lines=[])
    with open(path, "rb") as fh:
        if start == 0:
            chunks = gunzip_stream(fh, size, problems) if gz else file_chunks(fh, 0)
            head, blocks = _take_head(line_blocks(chunks, problems, MAX_LINE_CHARS, first_no))
        else:
            with open(path, "rb") as fh0:
                head = _head(fh0, gz, size)
            blocks = line_blocks(file_chunks(fh, start), problems, MAX_LINE_CHARS, first_no)
        layout = choose_layout([t for _, t in head], LocalClock(ctx.tz))
        owned_lines = _Owned(first_no, owned, start > 0, _anchor_test(layout))
        reading = Reading(ctx, summary, problems, lead_cap=LEAD_CAP if start > 0 else 0)
        for batch in reading.run(owned_lines(blocks), head, True, _is_binary):
            if batch:
                yield "events", batch
    lo = owned_lines.lo if owned_lines.lo is not None else owned_lines.hi
    yield "part", {"summary": summary.to_json(), "state": reading.state((lo, owned_lines.hi)),
                   "samples": summary.samples}


def merge_parts(path: str, broker_hint: int | None, cluster: str | None, size: int,
                parts: list[dict[str, Any]]) -> FileSummary:
    """The summary of a file from its parts (in file order), as ``parse_broker_log`` writes it for
    the whole file; event counts come later, from the finished events."""
    s = FileSummary(path=path, kind="broker_log", broker_id=broker_hint, cluster=cluster, bytes=size)
    damaged: dict[str, list] = {}
    long_lines: list = []
    read_errors: list[str] = []
    bad, first_bad = 0, None
    layout_none = False
    for part in parts:
        ps = part["summary"]
        for k in ("lines", "parsed", "other", "unrecognized", "quarantined"):
            setattr(s, k, getattr(s, k) + (ps.get(k) or 0))
        s.writer_ids.update({int(k): v for k, v in (ps.get("writer_ids") or {}).items()})
        if s.kafka_version is None:
            s.kafka_version = ps.get("kafka_version")
        st = part["state"]
        for kind, (count, first, why) in st["damaged"].items():
            d = damaged.setdefault(kind, [0, first, why])
            d[0] += count
            if first < d[1]:
                d[1], d[2] = first, why
        long_lines.extend(st["long_lines"])
        read_errors.extend(st["read_errors"])
        n, f = st["non_utf8"]
        bad += n
        if f is not None and (first_bad is None or f < first_bad):
            first_bad = f
        layout_none = layout_none or st["layout_none"]
    first, last, backwards, exact = merge_chronologies([p["state"]["chron"] for p in parts], BACKWARDS_US)
    s.see_ts(first)
    s.see_ts(last)
    s.broker_id = broker_hint if broker_hint is not None else (
        next(iter(s.writer_ids)) if len(s.writer_ids) == 1 else None)
    write_findings(s, {"chron": {"backwards": backwards}, "damaged": damaged, "layout_none": layout_none,
                       "long_lines": long_lines, "read_errors": read_errors, "non_utf8": [bad, first_bad]}, exact)
    return s


# What a part's event still needs once its file's broker is known (finish_part_events).
ATTR_NONE, ATTR_BROKER, ATTR_SUBJECT = 0, 1, 2


class PartFinisher:
    """A part's events finished alone, a batch at a time, before its file's broker is known
    (``templates.finish.PartEnds`` says what it leaves to the parts around it). Each event given back comes
    with what attribution will still do to it: ATTR_BROKER, the file's broker becomes its writer;
    ATTR_SUBJECT, its subject too (a line about the writer, as ``finish_stream`` makes it once the writer is
    known); ATTR_NONE, nothing (``attribute`` does it)."""

    def __init__(self, ends):
        from parsers.broker_logs.templates.finish import Finisher

        self.finisher = Finisher(ends)
        self.attrs: dict[int, int] = {}

    def feed(self, events: Iterable[Event]) -> tuple[list[Event], list[int]]:
        from parsers.broker_logs.templates.finish import HELD_TYPES, _about_writer

        out: list[Event] = []
        feed, attrs = self.finisher.feed, self.attrs
        for ev in events:
            t = ev.event_type
            if ev.broker_id is None and t != "client_error":
                attrs[id(ev)] = ATTR_SUBJECT if ev.subject_broker is None and _about_writer(ev) else ATTR_BROKER
            if t in HELD_TYPES:
                out.extend(feed(ev))
            else:
                if ev.subject_broker is None and ev.broker_id is not None and _about_writer(ev):
                    ev.subject_broker = ev.broker_id
                out.append(ev)
        return out, [attrs.pop(id(ev), ATTR_NONE) for ev in out]

    def close(self) -> tuple[list[Event], list[int]]:
        out = self.finisher.close()
        return out, [self.attrs.pop(id(ev), ATTR_NONE) for ev in out]


def attribute(ev: Event, attr: int, broker: int | None) -> None:
    """What ``finish_file_events`` does to an event, done later (see ``finish_part_events``)."""
    if broker is not None and attr != ATTR_NONE:
        ev.broker_id = broker
        if attr == ATTR_SUBJECT:
            ev.subject_broker = broker


def finish_file_events(events: Iterable[Event], broker: int | None) -> Iterator[Event]:
    """A file's events in file order, attributed to its broker and finished as ``parse_broker_log`` does."""
    from parsers.broker_logs.templates.finish import finish_stream

    def attributed() -> Iterator[Event]:
        for ev in events:
            if ev.broker_id is None and broker is not None:
                ev.broker_id = broker
            yield ev

    return finish_stream(attributed() if broker is not None else events)
