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
                                              LocalClock, LogEntry, Orphan, header_of, stray)
from parsers.broker_logs.rules import RuleSet
from parsers.broker_logs.templates.writer import BRACKETED_IDENTS, writer_id

try:  # the compiled accounting of routine entries (setup.py builds it; without it, the same in Python)
    from parsers.broker_logs import _routine
except ImportError:  # pragma: no cover - a machine without a C compiler
    _routine = None
else:
    _routine.set_idents(BRACKETED_IDENTS)


def _records_lead(routine) -> bool:
    """Does this build of ``skip`` record a range's first entries (Chronology.lead)? An older build, not yet
    rebuilt in place, does not: the entries of a range's recording then stay with the Python scan."""
    try:
        routine.skip([], 0, 0, {}, None, {}, 0, 0, 0, None, 0, 0)
    except TypeError:
        return False
    return True


LEAD_IN_C = _routine is not None and _records_lead(_routine)
# Off: every entry goes through the Python below (the equivalence test compares the two).
COMPILED = True


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
    on_seen: Callable[[LogEntry, int | None], None] | None = None,
) -> Iterator[None]:
    """Group the lines of ``blocks`` ((number of the first line, lines) pairs, in order) into
    entries as ``iter_entries`` does. A generator: it stops after each block, so that a caller
    reading a big file can pass on what was found so far.

    Entries a rule may want go to ``on_entry`` as LogEntry. A routine entry is accounted here,
    as ``on_entry`` would: its time in ``chron``, its writer in ``summary.writer_ids``, its
    lines as ``other``. Orphans go to ``on_orphan``, in the reference order;
    ``before_last_entry`` runs after the last line and before the last entry closes (where
    the reference reports a cut last line).

    With ``on_seen``, entries of plain ASCII closed by a strict header are accounted by the compiled
    ``_routine`` (COMPILED): time and writer there; those a rule may want (screened here when they have
    continuation lines) go to ``on_seen`` with their writer.
    """
    hour_base = clock.hour_base
    match = KafkaDefaultLayout.STRICT.match
    parse = layout.parse
    writer_of = writer_id
    writer_ids = summary.writer_ids
    see = chron.see
    wants = rules.wants  # the needle screen, memoised per logger
    settled_other = rules.settled_other
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
    # Every header of Kafka's layout starts with '[' (KafkaDefaultLayout.parse): any other line continues the open
    # entry, as header_of says of it, without the two parses that fail (a broker's "KafkaConfig values:" entry,
    # which no logger closes on its first line, goes on for ~300 tab-indented lines at every start).
    by_bracket = type(layout) is KafkaDefaultLayout

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
        if not wants(m[7], message, cont):
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

    skip = _routine.skip if (_routine is not None and COMPILED and on_seen is not None) else None
    if skip is not None:
        needles = rules.needles
        backwards_us = chron.backwards_us
        lead_in_c = LEAD_IN_C
    for first, block in blocks:
        k, end = 0, len(block)
        while k < end:
            text = block[k]
            i = first + k
            k += 1
            if is_binary is not None and is_binary(text):
                on_orphan(Orphan(i, text, "quarantined", "binary data in a text log"))
                continue
            # A line not starting with '[' continues the open entry with no parse (by_bracket), as one header_of calls
            # "more" does, below.
            if not by_bracket or text[:1] == "[":
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
                        if skip is not None and chron.last is not None and (lead_in_c or not recording):
                            # The entries from here that C can account (ASCII, closed by the next strict header).
                            sync()
                            (j, n_routine, wanted, chron.first, chron.last, latest, n_back, back_at, back_ts,
                             back_last) = skip(block, k - 1, end, needles, hour_base, writer_ids, chron.first,
                                               chron.last, backwards_us,
                                               *((chron.lead if recording else None, chron.lead_cap, first)
                                                 if lead_in_c else ()))
                            if recording:
                                chron.recording = recording = len(chron.lead) < chron.lead_cap
                            if n_back:
                                if chron.backwards is None:
                                    chron.backwards = [0, first + back_at, (back_last - back_ts) / 1e6]
                                    chron.first_back = (first + back_at, back_ts, back_last)
                                chron.backwards[0] += n_back
                            if j >= k:
                                routine_lines += n_routine
                                for at, ts, writer, n, level, logger, message in wanted:
                                    if settled_other(logger, message, block[at + 1] if n > 1 else None):
                                        routine_lines += n  # as classify would count it, with no LogEntry
                                        continue
                                    cont = block[at + 1:at + min(n, MAX_KEPT_CONTINUATION + 1)]
                                    if n > 1 and not wants(logger, message, cont):
                                        routine_lines += n
                                        continue
                                    line = block[at]
                                    on_seen(LogEntry(first + at, n, ts, line[1:24], level, logger, message, cont, line),
                                            writer)
                                if by_text and latest is not None and (last_stamp is None or latest > last_stamp):
                                    last_stamp = latest
                                k = j
                                cur = None
                                continue
                        cur = [i, text, m, None, 1, []]
                        continue
                kind, h, orphan = header_of(parse, i, text, cur is not None)
                if kind != "more":
                    if kind == "header":
                        if cur is not None:
                            close(cur)
                        quarantining = False
                        cur = [i, text, None, h, 1, []]
                        continue
                    if kind == "bad_stamp":
                        if cur is not None:
                            close(cur)
                            cur = None
                        quarantining = True
                    on_orphan(orphan)
                    continue
            if cur is None:
                on_orphan(stray(i, text, quarantining))
                continue
            cur[4] += 1
            if len(cur[5]) < MAX_KEPT_CONTINUATION:
                cur[5].append(text)
        yield
    if before_last_entry is not None:
        before_last_entry()
    if cur is not None:
        close(cur)
    sync()
    summary.other += routine_lines
