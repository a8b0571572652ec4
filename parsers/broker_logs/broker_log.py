"""A Kafka broker log file (server.log, controller.log, state-change.log, any version) -> events.

Reads bytes (plain or gzip, possibly damaged), groups lines into entries, lets
the template rules classify each entry and keeps the per-file accounting. The
grammar of the messages is in ``parsers.broker_logs.templates``; this module never looks
inside a message.
"""
from __future__ import annotations

import re
from typing import Iterator

from parsers.broker_logs.default_layout_scan import scan
from parsers.broker_logs.log4j_layout import LocalClock, LogEntry, Orphan, choose_layout, iter_entries
from parsers.common.accounting import Chronology, FileSummary, Quarantined
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems, decode_line, iter_raw_lines, looks_binary, whole_lines
from parsers.schema import Event

# Control characters other than tab. A line without any (nearly all of them) cannot be
# binary junk; only the rest pays for the full check.
_CTRL = re.compile(r"[\x00-\x08\x0a-\x1f]")


def _is_binary(line: str) -> bool:
    if line.isprintable():  # the common case, decided in C
        return False
    return _CTRL.search(line) is not None and looks_binary(line)


# Lines longer than this are cut before parsing (a 10 MB single line is evidence of
# damage, not a message); the cut is noted and the line is still classified.
MAX_LINE_CHARS = 1_000_000
SNIFF_LINES = 400


def _numbered(data: bytes, problems: ReadProblems, summary: FileSummary) -> Iterator[tuple[int, str]]:
    n = 0
    for raw in iter_raw_lines(data, problems, max_line=MAX_LINE_CHARS):
        n += 1
        yield n, decode_line(raw, n, problems)
    summary.lines = n
    for line_no, length in problems.long_lines[:MAX_REPORTED]:
        summary.errors.append(f"line {line_no}: {length} bytes long; only the first {MAX_LINE_CHARS} were parsed")
    if len(problems.long_lines) > MAX_REPORTED:
        summary.errors.append(f"{len(problems.long_lines) - MAX_REPORTED} more line(s) longer than {MAX_LINE_CHARS} bytes")


# Per kind of problem, how many single-line messages a file may add (all are counted).
MAX_REPORTED = 5
# Entries dated this much before the entry above them are reported (async appenders reorder by milliseconds).
BACKWARDS_US = 1_000_000


def _cut_short(layout, text: str, others: list[str]) -> bool:
    """Is this last line, which no line break ends, visibly incomplete?

    A whole entry still carries what its layout closes with: the closing brace of a JSON
    object, the ``(kafka.x.Y)`` logger when the file's other entries carry one. A cut one
    does not, and its numbers may be cut too (``HashMap(2 -> 242)`` read as epoch 24). A
    line that is no header at all is a continuation line (a stack trace's last line, whole
    as far as can be told), unless it is the start of a header cut before its level.
    """
    try:
        h = layout.parse(text)
    except (ValueError, IndexError):
        return True
    if h is None:
        return layout.name == "json" or _PARTIAL_HEADER.match(text) is not None
    if layout.name == "json":
        return False
    loggers = []
    for t in others:
        try:
            o = layout.parse(t)
        except (ValueError, IndexError):
            continue
        if o is not None:
            loggers.append(o.logger)
    if h.logger is not None:
        # '... node 1 (localhost/127.0.0.1:9093)' cut there also ends in parentheses: a logger is a class name
        return not (_JAVA_NAME.fullmatch(h.logger) and ("." in h.logger or h.logger in loggers))
    return sum(x is not None for x in loggers) * 2 > len(loggers) > 0


_JAVA_NAME = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*")
# A header cut before its message: '[', '[2021-0', '2021/03/17 22:0', '[2021-01-01 00:00:00,000] IN'.
_PARTIAL_HEADER = re.compile(r"^\[?\d{1,4}([-/]\d{0,2}([-/]\d{0,2}([ T][\d:,.]*(\S*\]?( [A-Z]*)?)?)?)?)?$|^\[$")


def parse_broker_log(data: bytes, ctx: SourceContext, summary: FileSummary, fast: bool = True) -> list[Event]:
    """``fast=False`` forces the reference path (line by line, entry objects for every entry):
    the equivalence test compares the two."""
    from parsers.broker_logs import templates  # the grammar; imported here so the rules load once per worker

    problems = ReadProblems()
    clock = LocalClock(ctx.tz)
    got = whole_lines(data, problems, MAX_LINE_CHARS) if fast else None
    whole, has_ctrl = got if got is not None else (None, True)
    if whole is not None:
        summary.lines = len(whole)
        numbered: Iterator[tuple[int, str]] = enumerate(whole, 1)
    else:
        numbered = _numbered(data, problems, summary)

    head: list[tuple[int, str]] = []
    for item in numbered:
        head.append(item)
        if len(head) >= SNIFF_LINES:
            break
    layout = choose_layout([t for _, t in head], clock)

    def cut_short(line_no: int, text: str) -> bool:
        return line_no == problems.unterminated_line and layout is not None and \
            _cut_short(layout, text, [t for n, t in head if n != line_no])

    def lines() -> Iterator[tuple[int, str]]:
        for line_no, text in _chain(head, numbered):
            if cut_short(line_no, text):
                orphan_cut(line_no, text)
                continue
            yield line_no, text

    def orphan_cut(line_no: int, text: str) -> None:
        orphan(Orphan(line_no, text, "quarantined", "the file ends inside this line (cut mid-line)"))

    damaged: dict[str, list] = {}  # kind of damage -> [count, first line, first reason]

    def orphan(o: Orphan) -> None:
        summary.count(o.reason)
        summary.sample(Quarantined(ctx.path, o.line_no, o.reason, o.why, o.text[:2000]))
        if o.reason == "quarantined":
            d = damaged.setdefault(o.why.split(":", 1)[0], [0, o.line_no, o.why])
            d[0] += 1

    events: list[Event] = []
    chron = Chronology(BACKWARDS_US)
    writer_of = templates.writer_id

    def entry_found(entry: LogEntry) -> None:
        chron.see(entry.ts, entry.line_no)
        writer = writer_of(entry.message)
        if writer is not None:
            summary.writer_ids[writer] += 1
        category, evs, why = templates.RULES.classify(entry)
        summary.count(category, entry.n_lines)
        if category == "unrecognized":
            summary.sample(Quarantined(ctx.path, entry.line_no, "unrecognized", why or "", _raw(entry)[:2000]))
            return
        for sub, ev in enumerate(evs):
            _stamp(ev, entry, ctx, writer, sub)
            if ev.event_type == "kafka_version" and ev.detail and summary.kafka_version is None:
                summary.kafka_version = ev.detail.get("version")
            events.append(ev)

    if layout is None:
        for line_no, text in lines():
            orphan(Orphan(line_no, text, "unrecognized", "not a log4j log: no line has a recognisable header"))
        summary.errors.append("no line has a log header this tool recognises (not a Kafka broker log?)")
    elif whole is not None and layout.name == "kafka-default":
        stop = len(whole)
        last_cut = stop > 0 and cut_short(stop, whole[-1])

        def before_last_entry() -> None:
            if last_cut:
                orphan_cut(stop, whole[-1])

        # No control character anywhere (the usual case): no line can be binary junk.
        scan(whole, stop - 1 if last_cut else stop, layout, clock, templates.RULES, summary, chron, orphan, entry_found,
             _is_binary if has_ctrl else None, before_last_entry)
    else:
        for entry in iter_entries(lines(), layout, orphan, _is_binary):
            entry_found(entry)

    summary.see_ts(chron.first)
    summary.see_ts(chron.last)
    _attribute_writer(events, ctx, summary)
    templates.finish(events)
    for ev in events:
        summary.event_counts[ev.event_type] += 1
    summary.events = len(events)
    summary.errors.extend(problems.errors)
    for count, first, why in damaged.values():
        summary.errors.append(f"line {first}: {why}" + (f" ({count} lines quarantined)" if count > 1 else "; quarantined"))
    if layout is not None and chron.backwards is not None:
        count, first, back = chron.backwards
        summary.notes.append(
            f"line {first}: entry dated {back:.1f} s before an entry above it ({count} such entr"
            f"{'y' if count == 1 else 'ies'}: clock stepped back, or files joined out of order); "
            "events are ordered by their own time"
        )
    if problems.non_utf8_lines:
        summary.notes.append(
            f"{problems.non_utf8_lines} line(s) were not valid UTF-8 (first at line {problems.first_non_utf8_line});"
            " read as Latin-1"
        )
    return events


def _chain(head: list[tuple[int, str]], rest: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    yield from head
    yield from rest


def _raw(entry: LogEntry) -> str:
    return entry.full_text()


def _stamp(ev: Event, entry: LogEntry, ctx: SourceContext, writer: int | None, sub: int) -> None:
    ev.cluster = ctx.cluster
    ev.ts = entry.ts
    ev.ts_raw = entry.ts_raw
    ev.source_kind = "broker_log"
    ev.source_file = ctx.path
    ev.source_pos = entry.line_no
    ev.source_sub = sub
    ev.level = entry.level
    ev.logger = entry.logger
    if ev.broker_id is None:
        ev.broker_id = writer
    if ev.raw is None:
        ev.raw = _raw(entry)


def _attribute_writer(events: list[Event], ctx: SourceContext, summary: FileSummary) -> None:
    """Lines that do not name their writer belong to the file's broker, when that is unambiguous."""
    broker = ctx.broker_hint
    if broker is None and len(summary.writer_ids) == 1:
        broker = next(iter(summary.writer_ids))
    summary.broker_id = broker
    if broker is None:
        return
    for ev in events:
        if ev.broker_id is None:
            ev.broker_id = broker
