"""Colours and the layout every timeline figure shares (same time axis, same look)."""
from __future__ import annotations

from typing import Any

from dashboards.timefmt import axis_time, zone_name

NO_LEADER = "#d62728"  # red is reserved for "no leader" / "no controller": no broker gets it
UNKNOWN = "#c7c7c7"
# a leader but ISR < min.insync.replicas: dark orange, crossed, so no broker's colour is mistaken for it
WRITE_OUTAGE = "#e6550d"
WRITE_HATCH = {"shape": "x", "fgcolor": "#ffffff", "bgcolor": WRITE_OUTAGE, "solidity": 0.2}
# Broker colours (leaders in the Gantt, controllers on the controller lane): no reds, no near-greys.
PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#bcbd22", "#e377c2", "#393b79",
           "#637939", "#7b4173", "#ff7f0e", "#3182bd", "#31a354", "#756bb1", "#636363")
BROKER_STATES = {  # lane colour, legend label
    "up": ("#74c476", "up"),
    "shutting_down": ("#fdae6b", "shutting down (controlled shutdown)"),
    "down": ("#525252", "down"),
    "fenced": ("#9e9ac8", "fenced"),
    "starting": ("#c7e9c0", "starting (registered, catching up)"),
}
# bgcolor must be given: with only fgcolor, Plotly draws the pattern on a transparent background
HATCH = {"shape": "/", "fgcolor": "#ffffff", "bgcolor": NO_LEADER, "solidity": 0.3}


def broker_colour(broker: int, brokers: list[int]) -> str:
    i = brokers.index(broker) if broker in brokers else broker
    return PALETTE[i % len(PALETTE)]


def time_axis(window: tuple[int, int], tz: str) -> dict[str, Any]:
    return {"type": "date", "range": [axis_time(window[0], tz), axis_time(window[1], tz)], "autorange": False,
            "title": {"text": f"time ({zone_name(tz)})"}, "showgrid": True, "gridcolor": "#eee",
            "showspikes": True, "spikemode": "across", "spikethickness": 1, "spikecolor": "#888"}


def base_layout(title: str, window: tuple[int, int], tz: str, height: int) -> dict[str, Any]:
    """``title`` must already be a Plotly-safe label."""
    return {"title": {"text": title, "x": 0.01, "xanchor": "left", "xref": "container", "y": 1, "yref": "container",
                      "yanchor": "top", "pad": {"t": 8}, "font": {"size": 15}},
            "height": height, "margin": {"l": 170, "r": 30, "t": 64, "b": 45},
            "xaxis": time_axis(window, tz), "hovermode": "closest", "plot_bgcolor": "#fff",
            "paper_bgcolor": "#fff", "font": {"family": "system-ui, sans-serif", "size": 12},
            "legend": {"orientation": "h", "y": 1, "yanchor": "bottom", "x": 1, "xanchor": "right"},
            "barmode": "overlay"}
