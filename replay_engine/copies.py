"""Log lines given twice: the same file collected two ways (a bundle and its extracted copy, a node's log directory
and its container's stream, two collection runs whose files overlap).

A broker writes each line once; the same line in two files is one event seen twice, and replaying it twice would
make the controller decide twice (the second time from the state the first left). A copy is an event of another
file with the same writer, time, kind, partition, subject and line text as one already kept; lines within one file
are never merged (a broker may log the same text twice in a millisecond). Files are taken in name order, so the copy
kept is the same whatever order the events came in.
"""
from __future__ import annotations

from collections.abc import Iterable

from parsers.schema import Event

_LOG_KINDS = ("broker_log", "client_log", None)


def _key(ev: Event) -> tuple:
    return (ev.broker_id, ev.ts, ev.event_type, ev.topic, ev.partition, ev.subject_broker, ev.source_sub, ev.raw)


def drop_copies(events: Iterable[Event]) -> tuple[list[Event], str | None]:
    """(the events without cross-file copies of log lines, a note naming what was dropped, or None)."""
    events = list(events)
    logs = [e for e in events if e.source_kind in _LOG_KINDS and e.ts is not None and e.raw]
    if len({e.source_file for e in logs}) < 2:
        return events, None
    first: dict[tuple, str | None] = {}
    dropped: dict[tuple[str | None, str | None], int] = {}
    copies: set[int] = set()
    for ev in sorted(logs, key=lambda e: (e.source_file or "", e.source_pos or 0, e.source_sub or 0)):
        k = _key(ev)
        kept_in = first.setdefault(k, ev.source_file)
        if kept_in != ev.source_file:
            copies.add(id(ev))
            pair = (ev.source_file, kept_in)
            dropped[pair] = dropped.get(pair, 0) + 1
    if not copies:
        return events, None
    kept = [e for e in events if id(e) not in copies]
    pairs = sorted(dropped.items())
    shown = "; ".join(f"{n} in {a} (kept in {b})" for (a, b), n in pairs[:5])
    more = f"; and {len(pairs) - 5} more file pairs" if len(pairs) > 5 else ""
    return kept, (f"{len(copies)} log events were copies of lines in other files (same broker, time and text), "
                  f"each replayed once: {shown}{more}")
