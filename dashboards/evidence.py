"""The evidence behind each leaderless interval, as an HTML table the Gantt's bars point into.

Each listed outage is a ``<tbody id="{prefix}-ep-{i}">``: its cause sentence and
the chain of events (time, file:line or zxid, the line itself). A Gantt bar's
customdata is ``[cite index, outage index]``; the page script copies the
clicked outage's rows (or the one event that opened a non-red bar) into the
"selected" panel. Everything here is escaped text; the script only copies
nodes and sets ``textContent``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dashboards import safe
from dashboards.model import Cite, ClusterView, Episode
from dashboards.rank import Selection
from dashboards.timefmt import axis_time, show_time
from replay_engine.causes.text import fmt_duration

MAX_EPISODES = 2000
MAX_TEXT = 400


@dataclass
class EvidenceIndex:
    prefix: str  # element-id prefix of this replay's section (derived, so pages are deterministic)
    episodes: list[Episode] = field(default_factory=list)
    by_episode: dict[tuple[str, int, int], int] = field(default_factory=dict)
    cites: list[Cite] = field(default_factory=list)
    by_cite: dict[Cite, int] = field(default_factory=dict)
    unlisted: int = 0

    def episode_id(self, ep: Episode | None) -> int:
        if ep is None:
            return -1
        return self.by_episode.get((ep.topic, ep.partition, ep.start), -1)

    def cite_id(self, c: Cite) -> int:
        i = self.by_cite.get(c)
        if i is None:
            i = self.by_cite[c] = len(self.cites)
            self.cites.append(c)
        return i

    def cites_json(self, tz: str) -> list[list[Any]]:
        return [[show_time(c.ts, tz), c.event, c.where, _clip(c.text)] for c in self.cites]


def _clip(s: str) -> str:
    return s if len(s) <= MAX_TEXT else s[:MAX_TEXT] + " …"


def index_episodes(view: ClusterView, sel: Selection, prefix: str) -> EvidenceIndex:
    """The outages of the drawn partitions, in the Gantt's order (then by time), up to MAX_EPISODES."""
    idx = EvidenceIndex(prefix)
    order = {tp: i for i, tp in enumerate(sel.rows)}
    eps = sorted((ep for ep in view.episodes if (ep.topic, ep.partition) in order),
                 key=lambda e: (order[(e.topic, e.partition)], e.start))
    for ep in eps[:MAX_EPISODES]:
        idx.by_episode[(ep.topic, ep.partition, ep.start)] = len(idx.episodes)
        idx.episodes.append(ep)
    idx.unlisted = len(view.episodes) - len(idx.episodes)
    return idx


def _cite_row(c: Cite, tz: str) -> str:
    return (f"<tr><td class='t'>{safe.text(show_time(c.ts, tz))}</td><td><code>{safe.text(c.where)}</code></td>"
            f"<td>{safe.text(c.event)}</td><td><code>{safe.text(_clip(c.text))}</code></td></tr>")


def evidence_table(idx: EvidenceIndex, view: ClusterView, tz: str, group: str) -> str:
    """``group``: the figures a click on an outage's heading zooms."""
    e = safe.text
    hi = view.window[1]
    parts = [f"<table class='evidence' id='{idx.prefix}-evidence'><thead><tr><th>time</th><th>where</th>"
             "<th>event</th><th>text</th></tr></thead>"]
    for i, ep in enumerate(idx.episodes):
        end = hi if ep.end is None else ep.end
        pad = max((end - ep.start) // 10, 500_000)
        head = (f"{ep.topic}-{ep.partition}: no leader {show_time(ep.start, tz)} → "
                f"{show_time(ep.end, tz) if ep.end is not None else 'end of evidence'} "
                f"({fmt_duration(None if ep.end is None else ep.end - ep.start)})")
        parts.append(f"<tbody id='{idx.prefix}-ep-{i}' class='ep' data-group='{e(group)}' "
                     f"data-x0='{e(axis_time(ep.start - pad, tz))}' data-x1='{e(axis_time(end + pad, tz))}'>")
        kind = ep.kind or "cause not in this report"
        parts.append(f"<tr class='head'><td colspan='4'><b>{e(head)}</b> <span class='kind'>{e(kind)}</span><br>"
                     f"{e(ep.summary or '')}</td></tr>")
        for c in ep.chain:
            parts.append(_cite_row(c, tz))
        parts.append("</tbody>")
    parts.append("</table>")
    if not idx.episodes:
        return "<p class='note'>No partition was without a leader in this replay.</p>"
    if idx.unlisted:
        parts.append(f"<p class='note'>{idx.unlisted:,} more outage(s) of partitions not drawn above are not "
                     "listed; see the summary below and replay.json.</p>")
    return "".join(parts)


def rest_summary(view: ClusterView, sel: Selection, tz: str, max_rows: int = 200) -> str:
    """The outages of the partitions without a Gantt row, grouped by topic and cause."""
    drawn = set(sel.rows)
    hi = view.window[1]
    groups: dict[tuple[str, str], list[Episode]] = {}
    for ep in view.episodes:
        if (ep.topic, ep.partition) not in drawn:
            groups.setdefault((ep.topic, ep.kind or "?"), []).append(ep)
    if not groups:
        return ""
    e = safe.text
    ranked = sorted(groups.items(), key=lambda kv: (-sum((hi if x.end is None else x.end) - x.start for x in kv[1]),
                                                     kv[0]))
    parts = [f"<h3>The {sel.hidden_affected:,} affected partition(s) without a Gantt row</h3>",
             "<table class='rest'><thead><tr><th>topic</th><th>cause</th><th>partitions</th><th>outages</th>"
             "<th>partition-seconds</th><th>first outage</th><th>last recovery</th></tr></thead><tbody>"]
    for (topic, kind), eps in ranked[:max_rows]:
        secs = sum((hi if x.end is None else x.end) - x.start for x in eps) / 1e6
        last = None if any(x.end is None for x in eps) else max(x.end for x in eps)  # type: ignore[type-var]
        parts.append(f"<tr><td>{e(topic)}</td><td>{e(kind)}</td><td>{len({x.partition for x in eps}):,}</td>"
                     f"<td>{len(eps):,}</td><td>{secs:,.1f}</td><td>{e(show_time(min(x.start for x in eps), tz))}</td>"
                     f"<td>{e(show_time(last, tz) if last is not None else 'still down at the end')}</td></tr>")
    parts.append("</tbody></table>")
    if len(ranked) > max_rows:
        parts.append(f"<p class='note'>{len(ranked) - max_rows:,} more topic/cause groups not shown.</p>")
    return "".join(parts)
