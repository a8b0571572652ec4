"""A broker log read as it grows (``kafka-forensics watch``): the whole-file reader, fed what was written since.

The same parts read a whole file (``broker_log.parse_broker_log``): the layout chosen from the file's first lines,
``Reading`` over numbered lines (the templates classify each entry), the writer's attribution and
``templates.finish``. What a whole file settles by reading on is settled here by waiting:

- the last entry is held back until a line that starts another entry follows, or the file has gone quiet
  (``feed(..., quiet=True)``): its stack trace may still be coming;
- a controller's election that its epoch line has not yet followed (up to 2.0 they are two lines,
  ``templates.finish``) is held back with the lines after it, the same way;
- until ``SNIFF_LINES`` lines are written, the layout is chosen once one layout reads all of at least
  ``EARLY_LINES`` first lines, or once the file is quiet;
- a file with no broker hint waits for a line that names its writer (``_attribute_writer``) among its first
  ``SNIFF_LINES`` lines, or for quiet (a client's log names none).

Lines come whole and decoded (``textio.whole_lines`` on the bytes the caller has read up to a line break). The
file's accounting grows in ``summary``; what a chunk's reading found wrong comes back as messages with the file's
line numbers, for the caller to show as it goes.
"""
from __future__ import annotations

from dataclasses import replace

from parsers.broker_logs.broker_log import MAX_LINE_CHARS, SNIFF_LINES, Reading, _is_binary, write_findings
from parsers.broker_logs.log4j_layout import BadTimestamp, LocalClock, choose_layout
from parsers.broker_logs.templates.finish import finish_stream
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems, whole_lines
from parsers.schema import Event


def decode_lines(data: bytes) -> list[str]:
    """Whole lines (``data`` ends with a line break) decoded as a whole file's are."""
    got = whole_lines(data, ReadProblems(), MAX_LINE_CHARS)
    if got is None:  # lines too long or not UTF-8: the line-by-line path, as parse_broker_log takes it
        from parsers.common.textio import decode_line, iter_raw_lines

        problems = ReadProblems()
        return [decode_line(raw, n, problems) for n, raw in enumerate(iter_raw_lines(data, problems, MAX_LINE_CHARS), 1)]
    return got[0]


class GrowingLog:
    """One broker log file (or one source of a container stream) as it is written."""

    def __init__(self, ctx: SourceContext, summary: FileSummary | None = None):
        self.ctx = ctx
        self.summary = summary or FileSummary(path=ctx.path, kind="broker_log", broker_id=ctx.broker_hint,
                                              cluster=ctx.cluster)
        self.head: list[tuple[int, str]] = []  # the file's first lines, numbered: they choose the layout
        self.next_no = 1  # the number of the next line to be written
        self.held: list[str] = []  # lines read, not yet parsed: they end at line next_no - 1
        self.unfinished: list[Event] = []  # events read, not yet attributed and finished (in file order)
        self.layout = None

    @property
    def writer(self) -> int | None:
        """The broker that writes this file: as hinted, or the only one its lines name so far."""
        if self.ctx.broker_hint is not None:
            return self.ctx.broker_hint
        ids = self.summary.writer_ids
        return next(iter(ids)) if len(ids) == 1 else None

    def feed(self, lines: list[str], quiet: bool = False) -> tuple[list[Event], list[str]]:
        """Lines just written (whole); ``quiet``: nothing more was written for a while. Returns the events of the
        entries now complete, in file order, and the problems their reading found."""
        first = self.next_no - len(self.held)
        pending = self.held + lines
        for k, text in enumerate(lines):
            if len(self.head) >= SNIFF_LINES:
                break
            self.head.append((self.next_no + k, text))
        self.next_no += len(lines)
        problems: list[str] = []
        if pending and self.layout is None:
            self.layout = _layout(self.head, self.ctx.tz, quiet)
        if pending and (self.layout is not None or quiet):
            cut = len(pending) if quiet else self._last_anchor(pending)
            problems = self._read(first, pending[:cut])
            pending = pending[cut:]
        self.held = pending
        return self._release(quiet), problems

    def newest_ts(self) -> int | None:
        """The time of the latest line read: of the lines parsed, or of the last entry, held back until the line
        after it is written (a file's clock is the time of what it has written, parsed yet or not)."""
        held = None
        if self.layout is not None:
            for text in reversed(self.held):
                try:
                    header = self.layout.parse(text)
                except (BadTimestamp, ValueError, IndexError):
                    continue
                if header is not None:
                    held = header.ts
                    break
        return max((t for t in (self.summary.last_ts, held) if t is not None), default=None)

    def _release(self, quiet: bool) -> list[Event]:
        """The events read that no later line can change: attributed to the file's writer (none is named yet: they
        wait, as a whole file's wait for all its lines) and finished (an election waits for its epoch line)."""
        broker = self.writer
        waiting = broker is None and self.next_no <= SNIFF_LINES
        if not self.unfinished or (waiting and not quiet):
            return []
        trial = [replace(ev) for ev in self.unfinished]
        if broker is not None:
            for ev in trial:
                if ev.broker_id is None:
                    ev.broker_id = broker
        done = list(finish_stream(trial))
        cut = None if quiet else _open_election(done)
        if cut is None:
            self.unfinished = []
        else:
            done = [ev for ev in done if (ev.source_pos or 0) < cut]
            self.unfinished = [ev for ev in self.unfinished if (ev.source_pos or 0) >= cut]
        for ev in done:
            self.summary.event_counts[ev.event_type] += 1
        self.summary.events += len(done)
        return done

    def _last_anchor(self, lines: list[str]) -> int:
        """Where the last entry starts (nothing is complete before the first line that starts one)."""
        layout = self.layout
        if layout is None:
            return len(lines)
        for i in range(len(lines) - 1, -1, -1):
            text = lines[i]
            if _is_binary(text):
                continue
            try:
                if layout.parse(text) is not None:
                    return i
            except (BadTimestamp, ValueError, IndexError):
                continue
        return 0

    def _read(self, first: int, lines: list[str]) -> list[str]:
        """Read whole entries: their events wait in ``unfinished``; returns what the reading found wrong."""
        if not lines:
            return []
        part = FileSummary(path=self.ctx.path, kind="broker_log", broker_id=self.ctx.broker_hint,
                           cluster=self.ctx.cluster)
        reading = Reading(self.ctx, part, ReadProblems())
        for batch in reading.run(iter([(first, lines)]), self.head, True, _is_binary):
            self.unfinished.extend(batch)
        state = reading.state()
        part.see_ts(state["chron"]["first"])
        part.see_ts(state["chron"]["last"])
        write_findings(part, state, exact_chronology=False)
        self.summary.absorb_counts(part)
        for q in part.samples:
            self.summary.sample(q)
        return list(part.errors)


# First lines a layout is chosen from before SNIFF_LINES are written, when one layout reads every one of them.
EARLY_LINES = 10


def _layout(head: list[tuple[int, str]], tz: str, quiet: bool):
    """The layout of the file's first lines, as a whole file's is chosen (``choose_layout`` over up to SNIFF_LINES
    lines); before there are that many, once one layout reads every one of at least EARLY_LINES of them (it is the
    one more lines would choose), or the file is quiet; else None (not yet)."""
    texts = [t for _, t in head]
    if len(texts) >= SNIFF_LINES or quiet:
        return choose_layout(texts, LocalClock(tz))
    if len(texts) < EARLY_LINES:
        return None
    layout = choose_layout(texts, LocalClock(tz))
    return layout if layout is not None and all(map(layout.recognises, texts)) else None


def _open_election(events: list[Event]) -> int | None:
    """The line of an election the chunk ends before its epoch line (``templates.finish`` would give it without
    its epoch), or None. Up to 2.0 the epoch line follows the election line; a later election or resignation of
    the same controller settles it too."""
    later: dict[int, int] = {}  # controller -> the last line of a line that settles an election before it
    for ev in events:
        if ev.controller_id is not None and ev.event_type in _SETTLES:
            later[ev.controller_id] = max(later.get(ev.controller_id, 0), ev.source_pos or 0)
    open_at = [ev.source_pos for ev in events
               if ev.event_type == "controller_elected" and ev.controller_epoch is None and ev.controller_id is not None
               and (ev.detail or {}).get("via") != "epoch_line" and later.get(ev.controller_id, 0) <= (ev.source_pos or 0)]
    return min(open_at) if open_at else None


_SETTLES = ("controller_elected", "controller_resigned", "controller_startup_state")
