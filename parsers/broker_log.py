"""A Kafka broker log file (server.log, controller.log, state-change.log, any version) -> events.

Reads bytes (plain or gzip, possibly damaged), groups lines into entries, lets
the template rules classify each entry and keeps the per-file accounting. The
grammar of the messages is in ``parsers.templates``; this module never looks
inside a message.
"""
from __future__ import annotations

import re
from typing import Iterator

from parsers.accounting import FileSummary, Quarantined
from parsers.context import SourceContext
from parsers.log4j_layout import LocalClock, LogEntry, Orphan, choose_layout, iter_entries
from parsers.schema import Event
from parsers.textio import ReadProblems, decode_line, iter_raw_lines, looks_binary

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
    for raw in iter_raw_lines(data, problems):
        n += 1
        if len(raw) > MAX_LINE_CHARS:
            summary.notes.append(f"line {n}: {len(raw)} bytes long, cut to {MAX_LINE_CHARS} for parsing")
            raw = raw[:MAX_LINE_CHARS]
        yield n, decode_line(raw, n, problems)
    summary.lines = n


def parse_broker_log(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    from parsers import templates  # the grammar; imported here so the rules load once per worker

    problems = ReadProblems()
    clock = LocalClock(ctx.tz)
    numbered = _numbered(data, problems, summary)

    head: list[tuple[int, str]] = []
    for item in numbered:
        head.append(item)
        if len(head) >= SNIFF_LINES:
            break
    layout = choose_layout([t for _, t in head], clock)

    def lines() -> Iterator[tuple[int, str]]:
        yield from head
        yield from numbered

    def orphan(o: Orphan) -> None:
        summary.count(o.reason)
        summary.sample(Quarantined(ctx.path, o.line_no, o.reason, o.why, o.text[:2000]))

    events: list[Event] = []
    if layout is None:
        for line_no, text in lines():
            orphan(Orphan(line_no, text, "unrecognized", "not a log4j log: no line has a recognisable header"))
        summary.errors.append("no line has a log header this tool recognises (not a Kafka broker log?)")
    else:
        for entry in iter_entries(lines(), layout, orphan, _is_binary):
            summary.see_ts(entry.ts)
            writer = templates.writer_id(entry.message)
            if writer is not None:
                summary.writer_ids[writer] += 1
            category, evs, why = templates.RULES.classify(entry)
            summary.count(category, entry.n_lines)
            if category == "unrecognized":
                summary.sample(Quarantined(ctx.path, entry.line_no, "unrecognized", why or "", _raw(entry)[:2000]))
                continue
            for sub, ev in enumerate(evs):
                _stamp(ev, entry, ctx, writer, sub)
                if ev.event_type == "kafka_version" and ev.detail and summary.kafka_version is None:
                    summary.kafka_version = ev.detail.get("version")
                events.append(ev)

    _attribute_writer(events, ctx, summary)
    templates.finish(events)
    for ev in events:
        summary.event_counts[ev.event_type] += 1
    summary.events = len(events)
    summary.errors.extend(problems.errors)
    if problems.non_utf8_lines:
        summary.notes.append(
            f"{problems.non_utf8_lines} line(s) were not valid UTF-8 (first at line {problems.first_non_utf8_line});"
            " read as Latin-1"
        )
    return events


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
