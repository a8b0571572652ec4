"""Which partitions get a Gantt row, in which order: the most affected first, within a budget.

Affected = had no leader at some point. Rows are ranked by write-unavailable
time: leaderless time plus the time a leader refused acks=all writes (ISR below
min.insync.replicas); an outage still open at the end of the evidence counts
until then. Then by number of outages; the rest follow by under-replicated time. The budget caps
rows and bars so a page stays small and responsive however big the cluster.
"""
from __future__ import annotations

from dataclasses import dataclass

from dashboards.model import ClusterView, Span

MAX_ROWS = 500
MAX_BARS = 20_000


@dataclass
class Selection:
    rows: list[tuple[str, int]]  # drawn, in display order (top first)
    spans: dict[tuple[str, int], list[Span]]  # every partition's spans (drawn or not)
    affected: int  # partitions with an outage, in all
    hidden: int  # partitions not drawn
    hidden_affected: int  # of which affected


def _score(spans: list[Span], hi: int, rf: int | None) -> tuple[int, int, int]:
    down = outages = under = 0
    prev_down = False
    for s in spans:
        length = (hi if s.end is None else s.end) - s.start
        if s.leaderless:
            down += length
            if not prev_down:
                outages += 1
        elif rf is not None and s.isr is not None and len(s.isr) < rf:
            under += length
        prev_down = s.leaderless
    return down, outages, under


def rank_keys(view: ClusterView) -> dict[tuple[str, int], tuple]:
    """Sort key per partition (smaller = drawn higher)."""
    by_tp = _by_tp(view)
    hi = view.window[1]
    keys = {}
    refused: dict[tuple[str, int], int] = {}
    for w in view.write_outages:
        tp = (w.topic, w.partition)
        refused[tp] = refused.get(tp, 0) + (hi if w.end is None else w.end) - w.start
    for tp, spans in by_tp.items():
        down, outages, under = _score(spans, hi, view.rf.get(tp))
        # writes refused either way (no leader, or acks=all with ISR < min.insync.replicas): a 14-minute
        # refusal outranks a failover of a few milliseconds; mere under-replication comes after both
        blocked = down + refused.get(tp, 0)
        keys[tp] = (0 if blocked else 1, -blocked, -outages, -under, tp)
    return keys


def _by_tp(view: ClusterView) -> dict[tuple[str, int], list[Span]]:
    by_tp: dict[tuple[str, int], list[Span]] = {}
    for s in view.spans:
        by_tp.setdefault(s.tp, []).append(s)
    return by_tp


def _take(ranked: list[tuple[str, int]], bars_of, max_rows: int, max_bars: int) -> list[tuple[str, int]]:
    rows: list[tuple[str, int]] = []
    bars = 0
    for tp in ranked:
        n = bars_of(tp)
        if len(rows) >= max_rows or (rows and bars + n > max_bars):
            break
        rows.append(tp)
        bars += n
    return rows


def joint_rows(views: list[ClusterView], max_rows: int = MAX_ROWS, max_bars: int = MAX_BARS
               ) -> list[tuple[str, int]]:
    """One row order for replays shown side by side: each partition ranked by its worst side."""
    best: dict[tuple[str, int], tuple] = {}
    counts: dict[tuple[str, int], int] = {}
    for v in views:
        for tp, k in rank_keys(v).items():
            best[tp] = min(best.get(tp, k), k)
        for s in v.spans:
            counts[s.tp] = counts.get(s.tp, 0) + 1
    ranked = sorted(best, key=lambda tp: best[tp])
    return _take(ranked, lambda tp: counts[tp], max_rows, max_bars)


def select_rows(view: ClusterView, max_rows: int = MAX_ROWS, max_bars: int = MAX_BARS,
                rows: list[tuple[str, int]] | None = None) -> Selection:
    """The drawn partitions: the best ranked within the budget, or exactly ``rows`` when given."""
    by_tp = _by_tp(view)
    keys = rank_keys(view)
    if rows is None:
        ranked = sorted(by_tp, key=lambda tp: keys[tp])
        rows = _take(ranked, lambda tp: len(by_tp[tp]), max_rows, max_bars)
    for tp in rows:
        by_tp.setdefault(tp, [])
    drawn = set(rows)
    affected = [tp for tp, spans in by_tp.items() if any(s.leaderless for s in spans)]
    hidden_aff = sum(1 for tp in affected if tp not in drawn)
    return Selection(list(rows), by_tp, len(affected), len(keys) - len(drawn & set(keys)), hidden_aff)
