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

from typing import Callable

from parsers.accounting import Chronology, FileSummary
from parsers.log4j_layout import (MAX_KEPT_CONTINUATION, BadTimestamp, KafkaDefaultLayout, Layout, LocalClock,
                                  LogEntry, Orphan)
from parsers.rules import RuleSet
from parsers.templates.writer import writer_id


def scan(
    lines: list[str],
    stop: int,
    layout: Layout,
    clock: LocalClock,
    rules: RuleSet,
    summary: FileSummary,
    chron: Chronology,
    on_orphan: Callable[[Orphan], None],
    on_entry: Callable[[LogEntry], None],
    is_binary: Callable[[str], bool] | None,
    before_last_entry: Callable[[], None] | None = None,
) -> None:
    """Group ``lines[:stop]`` (line numbers are index + 1) into entries as ``iter_entries`` does.

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
    screens: dict[str | None, tuple] = {}
    routine_lines = 0
    # open entry: [line_no, text, ts, stamp, level, logger, message, n_lines, continuation, fast]
    cur: list | None = None
    quarantining = False

    def close(e: list) -> None:
        nonlocal routine_lines
        if e[9]:
            # RuleSet.classify's needle screen: no rule's needles in it, no rule would try its regex
            message, cont = e[6], e[8]
            screen = screens.get(e[5])
            if screen is None:
                screen = screens[e[5]] = rules._screen(e[5])
            for first, rest, rule in screen:
                if first in message and (not rest or all(n in message for n in rest)):
                    break
                if rule.thrown and cont and first in cont[0] and all(n in cont[0] for n in rest):
                    break
            else:
                ts = e[2]
                last = chron.last
                if last is not None and ts >= last:
                    chron.last = ts
                else:
                    see(ts, e[0])
                w = writer_of(message)
                if w is not None:
                    writer_ids[w] += 1
                routine_lines += e[7]
                return
        on_entry(LogEntry(e[0], e[7], e[2], e[3], e[4], e[5], e[6], e[8], e[1]))

    for i in range(stop):
        text = lines[i]
        if is_binary is not None and is_binary(text):
            on_orphan(Orphan(i + 1, text, "quarantined", "binary data in a text log"))
            continue
        m = match(text)
        if m is not None:
            ymdh, mm, ss, ms, level, message, logger = m.groups()
            try:
                ts = hour_base(ymdh) + int(mm) * 60_000_000 + int(ss) * 1_000_000 + int(ms) * 1000
            except BadTimestamp:
                m = None  # month 13: the layout's parser says so, below
            else:
                if cur is not None:
                    close(cur)
                quarantining = False
                cur = [i + 1, text, ts, text[1:24], level, logger, message, 1, [], True]
                continue
        try:
            h = parse(text)
        except BadTimestamp as exc:
            if cur is not None:
                close(cur)
                cur = None
            quarantining = True
            on_orphan(Orphan(i + 1, text, "quarantined", f"impossible timestamp: {exc}"))
            continue
        except (ValueError, IndexError) as exc:
            h = None
            if cur is None:
                on_orphan(Orphan(i + 1, text, "unrecognized", f"malformed header: {exc}"))
                continue
        if h is not None:
            if cur is not None:
                close(cur)
            quarantining = False
            cur = [i + 1, text, h.ts, h.ts_raw, h.level, h.logger, h.message, 1, [], False]
            continue
        if cur is not None:
            cur[7] += 1
            if len(cur[8]) < MAX_KEPT_CONTINUATION:
                cur[8].append(text)
        elif quarantining:
            on_orphan(Orphan(i + 1, text, "quarantined", "continuation of a quarantined entry"))
        else:
            on_orphan(Orphan(i + 1, text, "unrecognized", "no log header before this line"))
    if before_last_entry is not None:
        before_last_entry()
    if cur is not None:
        close(cur)
    summary.other += routine_lines
