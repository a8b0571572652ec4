"""The hot loop for files in Kafka's own layout, ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)``.

Nearly every line of months of broker logs is routine (segment rolls, group
rebalances, fetcher chatter). The reference path (``log4j_layout.iter_entries``
then ``RuleSet.classify``) builds a Header and a LogEntry for each of them and
learns that no rule wants it. Here one strict regex takes a header line apart,
and an entry becomes a LogEntry only when some rule's needles are in it; a
routine one is accounted from plain values. Any line the strict regex
does not take (another stamp form, WARNING, a thread name after the logger, an
impossible date) goes through the layout's own parser exactly as
``iter_entries`` would, so the results are the reference path's: the test
``tests/test_default_layout_scan.py`` holds both paths equal on the real logs.
"""
from __future__ import annotations

import datetime as dt
from typing import Callable, Iterable, Iterator

from parsers.common.accounting import Chronology, FileSummary
from parsers.broker_logs.log4j_layout import (MAX_KEPT_CONTINUATION, BadTimestamp, KafkaDefaultLayout, Layout,
                                              LocalClock, LogEntry, Orphan)
from parsers.broker_logs.rules import RuleSet
from parsers.broker_logs.templates.writer import writer_id


def scan(
    blocks: Iterable[tuple[int, list[str]]],
    layout: Layout,
    clock: LocalClock,
    rules: RuleSet,
    summary: FileSummary,
    chron: Chronology,
    on_orphan: Callable[[Orphan], None],
    on_entry: Callable[[LogEntry], None],
    is_binary: Callable[[str], bool] | None,
    before_last_entry: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Group the lines of ``blocks`` ((number of the first line, lines) pairs, in order) into
    entries as ``iter_entries`` does. A generator: it stops after each block, so that a caller
    reading a big file can pass on what was found so far.

    Entries a rule may want go to ``on_entry`` as LogEntry. A routine entry is accounted here,
    as ``on_entry`` would: its time in ``chron``, its writer in ``summary.writer_ids``, its
    lines as ``other``. Orphans go to ``on_orphan``, in the reference order;
    ``before_last_entry`` runs after the last line and before the last entry closes (where
    the reference reports a cut last line).
    """
    hour_base = clock.hour_base
    match = KafkaDefaultLayout.STRICT.match
    parse = layout.parse
    writer_of = writer_id
    writer_ids = summary.writer_ids
    see = chron.see
    screen = rules.screen  # memoised per logger
    good_hours: set[str] = set()
    routine_lines = 0
    # In UTC the strict stamps sort as text in time order: a routine entry later than the latest
    # one only moves the latest stamp (chron.last is brought up to date before anything reads it).
    # A header of another form (another stamp text) ends that shortcut for the file.
    by_text = clock.zone is dt.timezone.utc
    last_stamp: str | None = None
    stale = False
    # While the chronology keeps the stamps of a range's first entries, every entry goes to it.
    recording = chron.recording
    # open entry: [line_no, text, strict match or None, Header or None, n_lines, continuation]
    cur: list | None = None
    quarantining = False

    def micros(stamp: str) -> int:
        return hour_base(stamp[:13]) + int(stamp[14:16]) * 60_000_000 + int(stamp[17:19]) * 1_000_000 + \
            int(stamp[20:23]) * 1000

    def sync() -> None:
        nonlocal stale
        if stale:
            chron.last = micros(last_stamp)
            stale = False

    def close(e: list) -> None:
        nonlocal routine_lines, last_stamp, stale, by_text, recording
        m = e[2]
        if m is None:
            sync()
            by_text = False
            h = e[3]
            on_entry(LogEntry(e[0], e[4], h.ts, h.ts_raw, h.level, h.logger, h.message, e[5], e[1]))
            if recording:
                recording = chron.recording
            return
        message, cont, stamp = m[6], e[5], e[1][1:24]
        # RuleSet.classify's needle screen: no rule's needles in it, no rule would try its regex
        for first, rest, rule in screen(m[7]):
            if first in message and (not rest or all(n in message for n in rest)):
                break
            if rule.thrown and cont and first in cont[0] and all(n in cont[0] for n in rest):
                break
        else:
            # (re's \d takes any decimal digit: a stamp written in other digits does not sort as its time)
            if by_text and last_stamp is not None and stamp >= last_stamp and not recording and stamp.isascii():
                last_stamp, stale = stamp, True
            else:
                sync()
                see(micros(stamp), e[0])
                if recording:
                    recording = chron.recording
                if by_text and (last_stamp is None or stamp > last_stamp) and stamp.isascii():
                    last_stamp = stamp
            w = writer_of(message)
            if w is not None:
                writer_ids[w] += 1
            routine_lines += e[4]
            return
        sync()
        on_entry(LogEntry(e[0], e[4], micros(stamp), stamp, m[5], m[7], message, cont, e[1]))
        if recording:
            recording = chron.recording
        if by_text and (last_stamp is None or stamp > last_stamp) and stamp.isascii():
            last_stamp = stamp

    for first, block in blocks:
        for i, text in enumerate(block, first):
            if is_binary is not None and is_binary(text):
                on_orphan(Orphan(i, text, "quarantined", "binary data in a text log"))
                continue
            m = match(text)
            if m is not None:
                hour = text[1:14]
                if hour not in good_hours:
                    try:
                        hour_base(hour)
                        good_hours.add(hour)
                    except BadTimestamp:
                        m = None  # month 13: the layout's parser says so, below
                if m is not None:
                    if cur is not None:
                        close(cur)
                    quarantining = False
                    cur = [i, text, m, None, 1, []]
                    continue
            try:
                h = parse(text)
            except BadTimestamp as exc:
                if cur is not None:
                    close(cur)
                    cur = None
                quarantining = True
                on_orphan(Orphan(i, text, "quarantined", f"impossible timestamp: {exc}"))
                continue
            except (ValueError, IndexError) as exc:
                h = None
                if cur is None:
                    on_orphan(Orphan(i, text, "unrecognized", f"malformed header: {exc}"))
                    continue
            if h is not None:
                if cur is not None:
                    close(cur)
                quarantining = False
                cur = [i, text, None, h, 1, []]
                continue
            if cur is not None:
                cur[4] += 1
                if len(cur[5]) < MAX_KEPT_CONTINUATION:
                    cur[5].append(text)
            elif quarantining:
                on_orphan(Orphan(i, text, "quarantined", "continuation of a quarantined entry"))
            else:
                on_orphan(Orphan(i, text, "unrecognized", "no log header before this line"))
        yield
    if before_last_entry is not None:
        before_last_entry()
    if cur is not None:
        close(cur)
    sync()
    summary.other += routine_lines
