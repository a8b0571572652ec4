"""Per-file accounting: every line or record is parsed, other, unrecognized or quarantined.

Invariant for every file: ``lines == parsed + other + unrecognized + quarantined``
(for binary sources a "line" is a record: a txn, a znode, a metadata record).
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# How many quarantined/unrecognized lines are kept verbatim per file (all are counted).
KEEP_SAMPLES = 1000


@dataclass
class Quarantined:
    source_file: str
    source_pos: int
    category: str  # 'unrecognized' or 'quarantined'
    reason: str
    raw: str


@dataclass
class FileSummary:
    path: str
    kind: str
    broker_id: int | None = None
    cluster: str | None = None
    bytes: int = 0
    lines: int = 0
    parsed: int = 0
    other: int = 0
    unrecognized: int = 0
    quarantined: int = 0
    events: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    first_ts: int | None = None
    last_ts: int | None = None
    event_counts: Counter = field(default_factory=Counter)
    writer_ids: Counter = field(default_factory=Counter)  # broker ids seen as writers of lines
    kafka_version: str | None = None
    samples: list[Quarantined] = field(default_factory=list)
    # A container/collector stream: one entry per source in it (parsers.container_streams.demux)
    streams: list[dict[str, Any]] = field(default_factory=list)

    def count(self, category: str, n: int = 1) -> None:
        setattr(self, category, getattr(self, category) + n)

    def sample(self, q: Quarantined) -> None:
        if len(self.samples) < KEEP_SAMPLES:
            self.samples.append(q)

    def see_ts(self, ts: int | None) -> None:
        if ts is None:
            return
        if self.first_ts is None or ts < self.first_ts:
            self.first_ts = ts
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts

    def absorb_counts(self, sub: "FileSummary") -> None:
        """Add one source's own summary (a stream's broker log) to this one: line accounting, time span, writers,
        the first Kafka version stated. Samples, events and messages are the caller's (positions differ)."""
        for k in ("parsed", "other", "unrecognized", "quarantined"):
            self.count(k, getattr(sub, k))
        self.lines += sub.lines
        self.see_ts(sub.first_ts)
        self.see_ts(sub.last_ts)
        self.writer_ids.update(sub.writer_ids)
        if self.kafka_version is None:
            self.kafka_version = sub.kafka_version

    def balanced(self) -> bool:
        return self.lines == self.parsed + self.other + self.unrecognized + self.quarantined

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "broker_id": self.broker_id,
            "cluster": self.cluster,
            "bytes": self.bytes,
            "lines": self.lines,
            "parsed": self.parsed,
            "other": self.other,
            "unrecognized": self.unrecognized,
            "quarantined": self.quarantined,
            "events": self.events,
            "errors": list(self.errors),
            "notes": list(self.notes),
            "first_ts": self.first_ts,
            "last_ts": self.last_ts,
            "event_counts": dict(sorted(self.event_counts.items())),
            "writer_ids": {str(k): v for k, v in sorted(self.writer_ids.items())},
            "kafka_version": self.kafka_version,
            **({"streams": [dict(x) for x in self.streams]} if self.streams else {}),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "FileSummary":
        s = cls(path=obj["path"], kind=obj["kind"])
        for k in ("broker_id", "cluster", "bytes", "lines", "parsed", "other", "unrecognized", "quarantined",
                  "events", "first_ts", "last_ts", "kafka_version"):
            setattr(s, k, obj.get(k))
        s.errors = list(obj.get("errors") or [])
        s.notes = list(obj.get("notes") or [])
        s.event_counts = Counter(obj.get("event_counts") or {})
        s.writer_ids = Counter({int(k): v for k, v in (obj.get("writer_ids") or {}).items()})
        s.streams = [dict(x) for x in obj.get("streams") or []]
        return s

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)


class Chronology:
    """A log file's time line as its entries arrive: earliest and latest stamp, and entries
    dated more than ``backwards_us`` before the latest one above them (a clock stepped back,
    files joined out of order).

    A reader of one range of a file does not know the latest stamp above its range: with
    ``lead_cap`` it keeps the stamps of its first entries that were not behind its own latest
    one (``lead``), so ``merge_chronologies`` can judge them against the ranges before it.
    """

    __slots__ = ("backwards_us", "first", "last", "backwards", "first_back", "lead", "lead_cap", "recording")

    def __init__(self, backwards_us: int, lead_cap: int = 0):
        self.backwards_us = backwards_us
        self.first: int | None = None
        self.last: int | None = None  # the latest stamp so far: what "before" is measured from
        self.backwards: list | None = None  # [count, first line, seconds back]
        self.first_back: tuple[int, int, int] | None = None  # (line, stamp, latest stamp above it) of the first
        self.lead: list[tuple[int, int]] | None = [] if lead_cap else None  # (stamp, line)
        self.lead_cap = lead_cap
        self.recording = lead_cap > 0

    def _record(self, ts: int, line_no: int) -> None:
        self.lead.append((ts, line_no))
        if len(self.lead) >= self.lead_cap:
            self.recording = False

    def see(self, ts: int, line_no: int) -> None:
        last = self.last
        if last is None:
            self.first = self.last = ts
            if self.recording:
                self._record(ts, line_no)
            return
        if ts >= last:
            self.last = ts  # the usual case; first cannot move
            if self.recording:
                self._record(ts, line_no)
            return
        if ts < self.first:
            self.first = ts
        if ts < last - self.backwards_us:
            if self.backwards is None:
                self.backwards = [0, line_no, (last - ts) / 1e6]
                self.first_back = (line_no, ts, last)
            self.backwards[0] += 1
        elif self.recording:
            self._record(ts, line_no)

    def to_json(self) -> dict[str, Any]:
        return {"first": self.first, "last": self.last, "backwards": self.backwards,
                "first_back": self.first_back, "lead": self.lead, "full": not self.recording and self.lead_cap > 0}


def merge_chronologies(parts: list[dict[str, Any]], backwards_us: int) -> tuple[int | None, int | None, list | None, bool]:
    """The chronologies of a file's ranges, in file order -> (first, last, backwards, exact) of the whole file.

    An entry of one range is behind the latest stamp above it when it is behind its own range's
    latest or the latest of the ranges before. The second is judged here from the range's lead;
    past a full lead the count can only be short (``exact`` False).
    """
    first = last = None
    count = 0
    first_line = secs = None
    exact = True
    for part in parts:
        if part["first"] is None:
            continue
        above = last  # the latest stamp of the ranges before
        extra = 0
        extra_first = None
        if above is not None:
            m = above
            for ts, line in part["lead"] or ():
                if ts < m - backwards_us:
                    extra += 1
                    if extra_first is None:
                        extra_first = (line, (m - ts) / 1e6)
                elif ts > m:
                    m = ts
            if part["full"] and m == above:
                exact = False
        own = part["backwards"]
        if own is not None:
            line, ts, own_last = part["first_back"]
            cand = (line, (max(own_last, above if above is not None else own_last) - ts) / 1e6)
            if extra_first is None or cand[0] < extra_first[0]:
                extra_first = cand
        if extra_first is not None and first_line is None:
            first_line, secs = extra_first
        count += extra + (own[0] if own is not None else 0)
        first = part["first"] if first is None else min(first, part["first"])
        last = part["last"] if last is None else max(last, part["last"])
    return first, last, ([count, first_line, secs] if count else None), exact
