"""Server-side aggregation: partition counts over time as bounded step series, ISR sizes binned.

A day of a 50,000-partition cluster has hundreds of thousands of state
changes; a browser should get a few thousand points. Counts stay exact while
they fit in the point budget; past it, each bin carries the *largest* count
seen in it, so an outage is never averaged away.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from dashboards.model import ClusterView, Span


@dataclass(frozen=True)
class Steps:
    """A step function: value[i] holds from times[i] until times[i+1] (the last until the window's end)."""

    times: list[int]
    values: list[int]
    bin_us: int | None  # None = exact; else each step is the maximum over a bin this wide

    def at(self, t: int) -> int:
        from bisect import bisect_right

        i = bisect_right(self.times, t) - 1
        return self.values[i] if i >= 0 else 0


def step_counts(intervals: Iterable[tuple[int, int | None]], lo: int, hi: int, max_points: int = 4000) -> Steps:
    """How many of the half-open intervals [start, end) cover each instant of [lo, hi]; end None = still
    open when the evidence ends (so it counts at ``hi`` too)."""
    delta: dict[int, int] = {}
    for a, b in intervals:
        a = max(a, lo)
        if a > hi or (b is not None and b <= a):
            continue
        delta[a] = delta.get(a, 0) + 1
        if b is not None and b <= hi:
            delta[b] = delta.get(b, 0) - 1
    times = [lo]
    values = [0]
    n = 0
    for t in sorted(delta):
        n += delta[t]
        if t == times[-1]:
            values[-1] = n
        elif n != values[-1]:
            times.append(t)
            values.append(n)
    if len(times) <= max_points:
        return Steps(times, values, None)
    return _bin_max(times, values, lo, hi, max_points)


def _bin_max(times: list[int], values: list[int], lo: int, hi: int, nbins: int) -> Steps:
    width = max(1, -(-(hi - lo) // nbins))
    out_t: list[int] = []
    out_v: list[int] = []
    i = 0
    cur = values[0]
    for k in range(nbins):
        b0, b1 = lo + k * width, lo + (k + 1) * width
        if b0 >= hi:
            break
        # the value carried into the bin holds at its start, unless a change happens exactly there
        peak = cur if i >= len(times) or times[i] > b0 else None
        while i < len(times) and times[i] < b1:
            if times[i] >= b0:
                peak = values[i] if peak is None else max(peak, values[i])
            cur = values[i]
            i += 1
        if not out_v or out_v[-1] != peak:
            out_t.append(b0)
            out_v.append(peak)
    return Steps(out_t, out_v, width)


def _end(s: Span, hi: int) -> int:
    return hi if s.end is None else s.end


def leaderless_intervals(view: ClusterView) -> list[tuple[int, int | None]]:
    return [(s.start, s.end) for s in view.spans if s.leaderless]


def under_replicated_intervals(view: ClusterView) -> list[tuple[int, int | None]]:
    """Led partitions whose ISR is smaller than their replica count (Kafka's UnderReplicatedPartitions
    counts on leaders, so a partition without a leader is counted as leaderless instead)."""
    out = []
    for s in view.spans:
        rf = view.rf.get(s.tp)
        if s.leaderless or s.isr is None or rf is None or s.leader is None or s.leader < 0:
            continue
        if len(s.isr) < rf:
            out.append((s.start, s.end))
    return out


def isr_bins(rows: list[list[Span]], lo: int, hi: int, nbins: int) -> tuple[list[int], list[list[int | None]]]:
    """Per row, per time bin, the smallest ISR size that held during the bin (None: nothing known).

    Returns the bins' centres and the matrix. The smallest, not the mean: a bin in which the ISR
    dropped to 1 shows 1."""
    width = max(1, -(-(hi - lo) // nbins))
    nb = min(nbins, -(-(hi - lo) // width))
    centers = [lo + k * width + width // 2 for k in range(nb)]
    z: list[list[int | None]] = []
    for spans in rows:
        line: list[int | None] = [None] * nb
        for s in spans:
            if s.isr is None:
                continue
            end = _end(s, hi)
            k0 = max(0, (s.start - lo) // width)
            k1 = min(nb - 1, (max(end - 1, s.start) - lo) // width)
            size = len(s.isr)
            for k in range(k0, k1 + 1):
                cur = line[k]
                if cur is None or size < cur:
                    line[k] = size
        z.append(line)
    return centers, z
