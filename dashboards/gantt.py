"""Per-partition leader Gantt: one row per partition, colour = leader broker, hatched red = no leader,
a narrower crossed orange bar on top = a leader but ISR below min.insync.replicas (acks=all refused).

Bars are grouped into one trace per colour (one per leader broker, one for
"no leader", one for "leader unknown"), so the browser handles thousands of
bars as a handful of traces. The topic dropdown re-lists the y axis (the
category axis shows the chosen topic's rows only); the hover carries leader,
ISR, epochs, what opened the interval and, on red bars, the cause sentence.
"""
from __future__ import annotations

from typing import Any

from dashboards import safe
from dashboards.evidence import EvidenceIndex
from dashboards.lanes import known_brokers
from dashboards.model import Cite, ClusterView, Episode, Span, WriteOutage
from dashboards.rank import Selection
from dashboards.style import HATCH, NO_LEADER, UNKNOWN, WRITE_HATCH, WRITE_OUTAGE, base_layout, broker_colour
from dashboards.timefmt import axis_time, show_time
from replay_engine.causes.text import fmt_duration

NO_LEADER_TRACE = "no leader"
UNKNOWN_TRACE = "leader unknown"
WRITE_OUTAGE_TRACE = "leader, ISR below min.insync.replicas"
ROW_PX = 20
MAX_TOPIC_BUTTONS = 80


def row_label(topic: str, partition: int) -> str:
    """A partition's y-axis category (escaped: Plotly renders tick labels as HTML-ish)."""
    return safe.label(f"{topic}-{partition}")


def _height(rows: int) -> int:
    return 150 + ROW_PX * max(rows, 1)


def _hover(s: Span, ep: Episode | None, rf: int | None, hi: int, tz: str) -> str:
    name = row_label(s.topic, s.partition)
    if s.leader is None:
        who = "leader unknown"
    elif s.leader < 0:
        who = "no leader (-1)"
    elif s.leaderless:
        who = f"no working leader: leader {s.leader} is down"
    else:
        who = f"leader {s.leader}"
    isr = "?" if s.isr is None else "[" + ", ".join(map(str, s.isr)) + "]"
    lines = [f"<b>{name}</b> · {safe.label(who)}",
             f"ISR {isr}{f' of {rf} replicas' if rf else ''} · leader epoch "
             f"{s.leader_epoch if s.leader_epoch is not None else '?'} · controller epoch "
             f"{s.controller_epoch if s.controller_epoch is not None else '?'} · {safe.label(s.state)}",
             f"{show_time(s.start, tz)} → {show_time(s.end, tz) if s.end is not None else 'end of evidence'}"
             f" ({fmt_duration(None if s.end is None else s.end - s.start)})",
             f"opened by: {safe.label(s.opened_by.event)} at {safe.label(s.opened_by.where)}"]
    if s.leaderless:
        if ep is not None and ep.summary:
            lines.append(f"<b>cause ({safe.label(ep.kind)})</b>: " + safe.wrap_label(ep.summary, 110))
        else:
            lines.append("cause: not in this report")
        lines.append("<i>click for the evidence</i>")
    return "<br>".join(lines)


def _write_hover(w: WriteOutage, tz: str) -> str:
    isr = "[" + ", ".join(map(str, w.isr)) + "]"
    need = "?" if w.min_isr is None else w.min_isr
    src = f" ({safe.label(w.min_isr_source)})" if w.min_isr_source else ""
    lines = [f"<b>{row_label(w.topic, w.partition)}</b> · acks=all writes refused: leader "
             f"{w.leader if w.leader is not None else '?'}, ISR {isr} below min.insync.replicas={need}{src}",
             f"{show_time(w.start, tz)} → {show_time(w.end, tz) if w.end is not None else 'end of evidence'}"
             f" ({fmt_duration(None if w.end is None else w.end - w.start)})"]
    if w.opened_by is not None:
        lines.append(f"opened by: {safe.label(w.opened_by.event)} at {safe.label(w.opened_by.where)}")
    lines.append("<b>cause</b>: " + (safe.wrap_label(w.summary, 110) if w.summary else "not in this report"))
    return "<br>".join(lines)


def _trace(name: str, colour: str, pattern: bool) -> dict[str, Any]:
    marker: dict[str, Any] = {"color": colour, "line": {"width": 0}}
    if pattern:
        marker["pattern"] = HATCH
    return {"type": "bar", "orientation": "h", "name": name, "marker": marker, "y": [], "base": [], "x": [],
            "hovertext": [], "hoverinfo": "text", "customdata": [], "width": 0.8}


def gantt_figure(view: ClusterView, sel: Selection, idx: EvidenceIndex, tz: str, title: str) -> dict[str, Any]:
    hi = view.window[1]
    brokers = known_brokers(view)
    ep_of: dict[int, Episode] = {}
    drawn = set(sel.rows)
    for ep in view.episodes:
        if (ep.topic, ep.partition) in drawn:
            for s in ep.intervals:
                ep_of[id(s)] = ep
    traces: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    starts_x: list[str] = []
    starts_y: list[str] = []
    for tp in sel.rows:
        label = row_label(*tp)
        rf = view.rf.get(tp)
        for s in sel.spans[tp]:
            if s.leaderless:
                key, colour = NO_LEADER_TRACE, NO_LEADER
            elif s.leader is None:
                key, colour = UNKNOWN_TRACE, UNKNOWN
            else:
                key, colour = f"leader {s.leader}", broker_colour(s.leader, brokers)
            tr = traces.get(key)
            if tr is None:
                tr = traces[key] = _trace(key, colour, key == NO_LEADER_TRACE)
                order.append(key)
            end = hi if s.end is None else s.end
            ep = ep_of.get(id(s))
            tr["y"].append(label)
            tr["base"].append(axis_time(s.start, tz))
            tr["x"].append((max(end, s.start) - s.start) / 1000)
            tr["hovertext"].append(_hover(s, ep, rf, hi, tz))
            tr["customdata"].append([idx.cite_id(s.opened_by), idx.episode_id(ep)])
            if ep is not None and ep.intervals[0] is s:
                starts_x.append(axis_time(s.start, tz))
                starts_y.append(label)
    # legend order: leaders by broker id, then unknown, then no leader (drawn last = on top)
    def rank(k: str) -> tuple[int, int]:
        if k.startswith("leader ") and k != UNKNOWN_TRACE:
            return (0, int(k.split()[1]))
        return (1, 0) if k == UNKNOWN_TRACE else (2, 0)
    data = [traces[k] for k in sorted(order, key=rank)]
    writes = _trace(WRITE_OUTAGE_TRACE, WRITE_OUTAGE, False) | {"width": 0.45}
    writes["marker"]["pattern"] = WRITE_HATCH
    for w in view.write_outages:
        if (w.topic, w.partition) in drawn:
            end = hi if w.end is None else w.end
            writes["y"].append(row_label(w.topic, w.partition))
            writes["base"].append(axis_time(w.start, tz))
            writes["x"].append((max(end, w.start) - w.start) / 1000)
            writes["hovertext"].append(_write_hover(w, tz))
            cite = w.opened_by or Cite(w.start, "ISR below min.insync.replicas", "?", w.summary)
            writes["customdata"].append([idx.cite_id(cite), -1])
    if writes["y"]:
        # on top of the leader's bar, narrower: the leader's colour still shows who led
        data.insert(len(data) - (bool(data) and data[-1]["name"] == NO_LEADER_TRACE), writes)
    if starts_x:
        # short outages are thinner than a pixel on a day-long axis: a marker where each one starts
        data.append({"type": "scatter", "mode": "markers", "name": "outage start", "x": starts_x, "y": starts_y,
                     "marker": {"symbol": "triangle-right", "size": 8, "color": NO_LEADER}, "hoverinfo": "skip"})
    labels = [row_label(*tp) for tp in sel.rows]
    layout = base_layout(title, view.window, tz, _height(len(labels)))
    layout["yaxis"] = {"type": "category", "categoryorder": "array", "categoryarray": labels,
                       "range": [len(labels) - 0.5, -0.5], "autorange": False, "automargin": True,
                       "tickfont": {"size": 10}}
    layout["bargap"] = 0.2
    menu = topic_menu(sel, _height)
    if menu is not None:
        layout["updatemenus"] = [menu]
    return {"data": data, "layout": layout}


def topics_in_order(sel: Selection) -> list[str]:
    seen: list[str] = []
    for t, _ in sel.rows:
        if t not in seen:
            seen.append(t)
    return seen


def topic_menu(sel: Selection, height) -> dict[str, Any] | None:
    """A dropdown listing the drawn topics (most affected first): choosing one shows only its rows."""
    topics = topics_in_order(sel)
    if len(topics) < 2:
        return None
    all_labels = [row_label(*tp) for tp in sel.rows]
    buttons = [{"label": f"all topics ({len(topics)})", "method": "relayout",
                "args": [{"yaxis.categoryarray": all_labels, "yaxis.range": [len(all_labels) - 0.5, -0.5],
                          "height": height(len(all_labels))}]}]
    for t in topics[:MAX_TOPIC_BUTTONS]:
        labels = [row_label(*tp) for tp in sel.rows if tp[0] == t]
        buttons.append({"label": safe.label(t), "method": "relayout",
                        "args": [{"yaxis.categoryarray": labels, "yaxis.range": [len(labels) - 0.5, -0.5],
                                  "height": height(len(labels))}]})
    return {"type": "dropdown", "buttons": buttons, "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom",
            "pad": {"t": 0, "b": 4}, "showactive": True, "active": 0, "direction": "down"}
