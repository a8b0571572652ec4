"""Broker lanes and the controller lane: who was up, shutting down, down or fenced; who was controller.

Every band is a horizontal bar from its start to its end (``base`` = start,
``x`` = length in ms, Plotly's way of drawing a Gantt on a date axis); a band
still open when the evidence ends runs to the end of the window.
"""
from __future__ import annotations

from typing import Any

from dashboards import safe
from dashboards.model import Band, ClusterView
from dashboards.style import BROKER_STATES, HATCH, NO_LEADER, UNKNOWN, base_layout, broker_colour
from dashboards.timefmt import axis_time, show_time
from replay_engine.causes.text import fmt_duration

CONTROLLER_LANE = "controller"


def broker_lane(b: int) -> str:
    return f"broker {b}"


def known_brokers(view: ClusterView) -> list[int]:
    bs = {b.lane for b in view.brokers} | {t.lane for t in view.tenures}
    bs |= {s.leader for s in view.spans if s.leader is not None and s.leader >= 0}
    return sorted(bs)


def _bar_trace(name: str, colour: str, bands: list[tuple[str, int, int, str]], tz: str, **extra) -> dict[str, Any]:
    return {"type": "bar", "orientation": "h", "name": name, "marker": {"color": colour, "line": {"width": 0}},
            "y": [lane for lane, _, _, _ in bands],
            "base": [axis_time(a, tz) for _, a, _, _ in bands],
            "x": [(b - a) / 1000 for _, a, b, _ in bands],
            "hovertext": [h for _, _, _, h in bands], "hoverinfo": "text", "width": 0.7, **extra}


def _band_hover(title: str, band: Band, end: int, tz: str) -> str:
    lines = [f"<b>{safe.label(title)}</b>",
             f"{show_time(band.start, tz)} → {show_time(end, tz) if band.end is not None else 'end of evidence'}"
             f" ({fmt_duration(None if band.end is None else band.end - band.start)})"]
    if band.began_by:
        lines.append(f"began: {safe.label(band.began_by)}")
    if band.cause:
        lines.append(f"ended by: {safe.label(band.cause)}")
    if band.cite is not None:
        lines.append(f"began with: {safe.label(band.cite.event)} at {safe.label(band.cite.where)}")
    return "<br>".join(lines)


def lanes_figure(view: ClusterView, tz: str, title: str) -> dict[str, Any]:
    hi = view.window[1]
    brokers = known_brokers(view)
    traces: list[dict[str, Any]] = []
    by_state: dict[str, list[tuple[str, int, int, str]]] = {}
    for band in view.brokers:
        end = hi if band.end is None else band.end
        label = BROKER_STATES.get(band.state, (UNKNOWN, band.state))[1]
        by_state.setdefault(band.state, []).append(
            (broker_lane(band.lane), band.start, end, _band_hover(f"broker {band.lane}: {label}", band, end, tz)))
    order = list(BROKER_STATES) + sorted(set(by_state) - set(BROKER_STATES))
    for state in order:
        if state in by_state:
            colour, label = BROKER_STATES.get(state, (UNKNOWN, state))
            traces.append(_bar_trace(safe.label(label), colour, by_state[state], tz, legendgroup="brokers"))
    by_ctrl: dict[int, list[tuple[str, int, int, str]]] = {}
    texts: dict[int, list[str]] = {}
    for t in view.tenures:
        end = hi if t.end is None else t.end
        head = f"controller: broker {t.lane}, epoch {t.epoch if t.epoch is not None else '?'}"
        by_ctrl.setdefault(t.lane, []).append((CONTROLLER_LANE, t.start, end, _band_hover(head, t, end, tz)))
        texts.setdefault(t.lane, []).append(f"b{t.lane} e{t.epoch if t.epoch is not None else '?'}")
    for c in sorted(by_ctrl):
        traces.append(_bar_trace(f"controller broker {c}", broker_colour(c, brokers), by_ctrl[c], tz,
                                 text=texts[c], textposition="inside", insidetextanchor="middle",
                                 textfont={"color": "#fff", "size": 10}, legendgroup="controllers",
                                 showlegend=False))
    if view.controller_gaps:
        gaps = [(CONTROLLER_LANE, a, b, f"<b>no active controller</b><br>{show_time(a, tz)} → {show_time(b, tz)}"
                 f" ({fmt_duration(b - a)})") for a, b in view.controller_gaps]
        traces.append(_bar_trace("no controller", NO_LEADER, gaps, tz, legendgroup="controllers")
                      | {"marker": {"color": NO_LEADER, "pattern": HATCH, "line": {"width": 0}}})
    if view.expiries:
        def expiry_hover(e: Band) -> str:
            cite = f"<br>{safe.label(e.cite.event)} at {safe.label(e.cite.where)}" if e.cite else ""
            return f"<b>broker {e.lane}: ZooKeeper session expired</b><br>{show_time(e.start, tz)}{cite}"
        traces.append({"type": "scatter", "mode": "markers", "name": "session expired",
                       "x": [axis_time(e.start, tz) for e in view.expiries],
                       "y": [broker_lane(e.lane) for e in view.expiries],
                       "marker": {"symbol": "x-thin", "size": 12, "line": {"width": 2, "color": NO_LEADER},
                                  "color": NO_LEADER},
                       "hovertext": [expiry_hover(e) for e in view.expiries], "hoverinfo": "text"})
    lanes = [CONTROLLER_LANE] + [broker_lane(b) for b in brokers]
    layout = base_layout(title, view.window, tz, 90 + 28 * len(lanes))
    layout["yaxis"] = {"type": "category", "categoryorder": "array", "categoryarray": lanes,
                       "range": [len(lanes) - 0.5, -0.5], "autorange": False, "fixedrange": True}
    return {"data": traces, "layout": layout}
