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
from parsers.schema import Event, EventRun, count_events

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
    problems = ReadProblems()
    got = whole_lines(data, problems, MAX_LINE_CHARS) if fast else None
    if got is not None:
        whole, has_ctrl = got
        blocks: Iterator[tuple[int, list[str]]] = iter([(1, whole)] if whole else [])
    else:
        has_ctrl = True
        blocks = ((n, [decode_line(raw, n, problems)])
                  for n, raw in enumerate(iter_raw_lines(data, problems, max_line=MAX_LINE_CHARS), 1))
    head, blocks = _take_head(blocks)
    reading = Reading(ctx, summary, problems)
    events: list[Event] = []
    for batch in reading.run(blocks, head, got is not None, _is_binary if has_ctrl else None):
        events.extend(batch)
    state = reading.state()
    summary.see_ts(state["chron"]["first"])
    summary.see_ts(state["chron"]["last"])
    _attribute_writer(events, ctx, summary)
    finish_events(events, summary)
    write_findings(summary, state, exact_chronology=True)
    return events


def finish_events(events: list[Event], summary: FileSummary) -> None:
    """What one line cannot know, settled over the file's events (in file order)."""
    from parsers.broker_logs import templates

    templates.finish(events)
    counts = summary.event_counts
    for ev in events:
        if type(ev) is EventRun:
            counts[ev.event_type] += len(ev)
        else:
            counts[ev.event_type] += 1
    summary.events = count_events(events)


def _take_head(blocks: Iterator[tuple[int, list[str]]]) -> tuple[list[tuple[int, str]], Iterator]:
    """The first SNIFF_LINES lines (numbered), and the blocks with nothing taken out."""
    taken = []
    head: list[tuple[int, str]] = []
    for first, block in blocks:
        taken.append((first, block))
        head.extend(zip(range(first, first + SNIFF_LINES - len(head)), block))
        if len(head) >= SNIFF_LINES:
            break
    return head, _chain(taken, blocks)


# Events a reader hands on at a time (a range of a big file can hold very many).
EVENT_BATCH = 20_000


class Reading:
    """One pass over a broker log's lines, or over the lines one range of it owns.

    ``run`` yields the events in batches; ``state`` is what the file's summary is made
    from (``write_findings``), as plain data, so the states of a file's ranges can be
    merged into the same summary the whole file would give.
    """

    def __init__(self, ctx: SourceContext, summary: FileSummary, problems: ReadProblems, lead_cap: int = 0):
        from parsers.broker_logs import templates  # the grammar; imported here so the rules load once per worker

        self.templates = templates
        self.ctx = ctx
        self.summary = summary
        self.problems = problems
        self.chron = Chronology(BACKWARDS_US, lead_cap)
        self.damaged: dict[str, list] = {}  # kind of damage -> [count, first line, first reason]
        self.layout_none = False
        self.events: list[Event] = []
        self.cut: tuple[int, str] | None = None

    def run(self, blocks: Iterator[tuple[int, list[str]]], head: list[tuple[int, str]], scan_ok: bool,
            is_binary) -> Iterator[list[Event]]:
        ctx, summary, problems, templates = self.ctx, self.summary, self.problems, self.templates
        clock = LocalClock(ctx.tz)
        layout = choose_layout([t for _, t in head], clock)

        def cut_short(line_no: int, text: str) -> bool:
            return line_no == problems.unterminated_line and layout is not None and \
                _cut_short(layout, text, [t for n, t in head if n != line_no])

        def orphan_cut(line_no: int, text: str) -> None:
            orphan(Orphan(line_no, text, "quarantined", "the file ends inside this line (cut mid-line)"))

        def lines() -> Iterator[tuple[int, str]]:
            for first, block in blocks:
                summary.lines += len(block)
                for line_no, text in enumerate(block, first):
                    if line_no == problems.unterminated_line and cut_short(line_no, text):
                        orphan_cut(line_no, text)
                        continue
                    yield line_no, text

        damaged = self.damaged

        def orphan(o: Orphan) -> None:
            summary.count(o.reason)
            summary.sample(Quarantined(ctx.path, o.line_no, o.reason, o.why, o.text[:2000]))
            if o.reason == "quarantined":
                d = damaged.setdefault(o.why.split(":", 1)[0], [0, o.line_no, o.why])
                d[0] += 1

        events = self.events
        chron = self.chron
        writer_of = templates.writer_id
        runs = ctx.event_runs  # EventRuns handed on as they are (the staged files' writer takes them)

        def entry_found(entry: LogEntry) -> None:
            chron.see(entry.ts, entry.line_no)
            writer = writer_of(entry.message)
            if writer is not None:
                summary.writer_ids[writer] += 1
            entry_seen(entry, writer)

        def entry_seen(entry: LogEntry, writer: int | None) -> None:
            """An entry whose time and writer are accounted: the rules' turn."""
            category, evs, why = templates.RULES.classify(entry)
            summary.count(category, entry.n_lines)
            if category == "unrecognized":
                summary.sample(Quarantined(ctx.path, entry.line_no, "unrecognized", why or "", _raw(entry)[:2000]))
                return
            sub = 0
            for ev in evs:
                if type(ev) is EventRun:
                    raw = ev.base.raw
                    _stamp(ev.base, entry, ctx, writer, sub)
                    if "raw" in ev.fields:
                        ev.base.raw = raw  # each event's own is in the run's columns
                    sub += len(ev)
                    if runs:
                        events.append(ev)
                    else:
                        events.extend(ev.events())
                    continue
                _stamp(ev, entry, ctx, writer, sub)
                sub += 1
                if ev.event_type == "kafka_version" and ev.detail and summary.kafka_version is None:
                    summary.kafka_version = ev.detail.get("version")
                events.append(ev)

        if layout is None:
            self.layout_none = True
            for line_no, text in lines():
                orphan(Orphan(line_no, text, "unrecognized", "not a log4j log: no line has a recognisable header"))
        elif scan_ok and layout.name == "kafka-default":
            def counted() -> Iterator[tuple[int, list[str]]]:
                for first, block in blocks:
                    summary.lines += len(block)
                    last = first + len(block) - 1
                    if block and cut_short(last, block[-1]):
                        self.cut = (last, block[-1])
                        block = block[:-1]
                    yield first, block

            def before_last_entry() -> None:
                if self.cut is not None:
                    orphan_cut(*self.cut)

            for _ in scan(counted(), layout, clock, templates.RULES, summary, chron, orphan, entry_found,
                          is_binary, before_last_entry, entry_seen):
                if len(events) >= EVENT_BATCH:
                    yield self._hand_on()
        else:
            for entry in iter_entries(lines(), layout, orphan, is_binary):
                entry_found(entry)
                if len(events) >= EVENT_BATCH:
                    yield self._hand_on()
        yield self._hand_on()

    def _hand_on(self) -> list[Event]:
        # Emptied in place: entry_found keeps appending to this very list.
        out = self.events[:]
        self.events.clear()
        return out

    def state(self, window: tuple[int, int] | None = None) -> dict:
        """What the summary's findings are written from; ``window`` keeps only the read problems of
        the lines [lo, hi) this reader owned (a range decodes a few lines around them)."""
        p = self.problems
        long_lines = p.long_lines
        bad = (p.non_utf8_lines, p.first_non_utf8_line)
        if window is not None:
            lo, hi = window
            long_lines = [x for x in long_lines if lo <= x[0] < hi]
            mine = [n for n in (p.bad_lines or ()) if lo <= n < hi]
            bad = (len(mine), mine[0] if mine else None)
        return {"chron": self.chron.to_json(), "damaged": self.damaged, "layout_none": self.layout_none,
                "long_lines": [list(x) for x in long_lines], "read_errors": list(p.errors),
                "non_utf8": list(bad)}


def write_findings(summary: FileSummary, state: dict, exact_chronology: bool) -> None:
    """The file's errors and notes, in the order a reader meets them, from a (merged) state."""
    long_lines = state["long_lines"]
    for line_no, length in long_lines[:MAX_REPORTED]:
        summary.errors.append(f"line {line_no}: {length} bytes long; only the first {MAX_LINE_CHARS} were parsed")
    if len(long_lines) > MAX_REPORTED:
        summary.errors.append(f"{len(long_lines) - MAX_REPORTED} more line(s) longer than {MAX_LINE_CHARS} bytes")
    if state["layout_none"]:
        summary.errors.append("no line has a log header this tool recognises (not a Kafka broker log?)")
    summary.errors.extend(state["read_errors"])
    for count, first, why in sorted(state["damaged"].values(), key=lambda d: d[1]):
        summary.errors.append(f"line {first}: {why}" + (f" ({count} lines quarantined)" if count > 1 else "; quarantined"))
    back = state["chron"]["backwards"]
    if not state["layout_none"] and back is not None:
        count, first, secs = back
        summary.notes.append(
            f"line {first}: entry dated {secs:.1f} s before an entry above it ({'' if exact_chronology else 'at least '}"
            f"{count} such entr{'y' if count == 1 else 'ies'}: clock stepped back, or files joined out of order); "
            "events are ordered by their own time"
        )
    bad, first_bad = state["non_utf8"]
    if bad:
        summary.notes.append(f"{bad} line(s) were not valid UTF-8 (first at line {first_bad}); read as Latin-1")


def _chain(head: list, rest: Iterator) -> Iterator:
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
