"""Partitions without a leader, and under-replicated partitions, over time (step lines)."""
from __future__ import annotations

from typing import Any

from dashboards import safe
from dashboards.model import ClusterView
from dashboards.series import Steps, leaderless_intervals, step_counts, under_replicated_intervals
from dashboards.style import NO_LEADER, base_layout
from dashboards.timefmt import axis_time, show_time
from replay_engine.causes.text import fmt_duration

MAX_POINTS = 4000
UNDER_REPLICATED = "#ff7f0e"
ACKS_ALL_REFUSED = "#9467bd"


def count_series(view: ClusterView, max_points: int = MAX_POINTS) -> tuple[Steps, Steps]:
    lo, hi = view.window
    return (step_counts(leaderless_intervals(view), lo, hi, max_points),
            step_counts(under_replicated_intervals(view), lo, hi, max_points))


def _line(name: str, steps: Steps, hi: int, tz: str, colour: str, **extra) -> dict[str, Any]:
    """``name`` is a Plotly-safe label already."""
    # the last value holds until the end of the window: repeat it there so the step reaches the edge
    times = steps.times + [hi]
    values = steps.values + [steps.values[-1]]
    what = "at most " if steps.bin_us else ""
    hover = [f"<b>{name}</b>: {what}{v}<br>from {show_time(t, tz)}" for t, v in zip(times, values)]
    return {"type": "scatter", "mode": "lines", "name": name, "x": [axis_time(t, tz) for t in times],
            "y": values, "line": {"shape": "hv", "color": colour, "width": 2}, "hovertext": hover,
            "hoverinfo": "text", **extra}


def counts_traces(view: ClusterView, tz: str, label: str = "", max_points: int = MAX_POINTS,
                  dash: str | None = None, series: tuple[Steps, Steps] | None = None) -> list[dict[str, Any]]:
    down, under = series or count_series(view, max_points)
    hi = view.window[1]
    prefix = f"{safe.label(label)}: " if label else ""
    fill = {} if dash else {"fill": "tozeroy", "fillcolor": "rgba(214,39,40,0.15)"}
    traces = [_line(f"{prefix}no leader (offline)", down, hi, tz, NO_LEADER, **fill),
              _line(f"{prefix}under-replicated (ISR below replica count), right axis", under, hi, tz,
                    UNDER_REPLICATED, yaxis="y2")]
    if dash:  # the second replay of a what-if page: same colours, dashed
        for t in traces:
            t["line"]["dash"] = dash
    if view.write_outages:
        # the replay's under-min-ISR intervals (replay_engine/causes/write_outages.py), drawn beside the leaderless count
        lo = view.window[0]
        refused = step_counts([(w.start, w.end) for w in view.write_outages], lo, hi, max_points)
        line = _line(f"{prefix}acks=all refused (ISR below min.insync.replicas)", refused, hi, tz, ACKS_ALL_REFUSED)
        if dash:
            line["line"]["dash"] = dash
        traces.insert(1, line)
    if view.unclean:
        traces.append({"type": "scatter", "mode": "markers", "name": f"{prefix}unclean election",
                       "x": [axis_time(ts, tz) for ts, _, _, _ in view.unclean], "y": [0] * len(view.unclean),
                       "marker": {"symbol": "triangle-up", "size": 11, "color": "#000"},
                       "hovertext": [f"<b>unclean election</b>: {safe.label(t)}-{p} → leader {ldr}<br>"
                                     f"{show_time(ts, tz)} (possible data loss)" for ts, t, p, ldr in view.unclean],
                       "hoverinfo": "text"})
    return traces


def binning_note(series: tuple[Steps, Steps], max_points: int = MAX_POINTS) -> str | None:
    widths = [s.bin_us for s in series if s.bin_us]
    if not widths:
        return None
    return (f"counts are per {fmt_duration(max(widths))} bin, each showing the largest count in the bin "
            f"(more than {max_points:,} changes)")


def _int_axis(peak: int) -> dict[str, Any]:
    # partition counts are whole numbers: ticks at 1, 2, 5, 10, 20, 50 ... steps, never at 0.25
    step = next(m * 10 ** e for e in range(12) for m in (1, 2, 5) if peak <= 6 * m * 10 ** e)
    return {"tick0": 0, "dtick": step, "range": [0, round(max(peak, 1) * 1.08, 2)]}


def count_axes(layout: dict[str, Any], peaks: tuple[int, int] = (1, 1)) -> None:
    """Leaderless partitions on the left axis, under-replicated on the right: a broker's restart makes
    thousands of partitions under-replicated, which must not flatten a few dozen leaderless ones."""
    layout["yaxis"] = {"title": {"text": "without a leader", "font": {"color": NO_LEADER}}, "fixedrange": True,
                       "gridcolor": "#eee", **_int_axis(peaks[0])}
    layout["yaxis2"] = {"title": {"text": "under-replicated", "font": {"color": UNDER_REPLICATED}},
                        "fixedrange": True, "overlaying": "y", "side": "right", "showgrid": False,
                        **_int_axis(peaks[1])}
    layout["margin"] = {**layout["margin"], "r": 70}


def counts_figure(view: ClusterView, tz: str, title: str, max_points: int = MAX_POINTS) -> dict[str, Any]:
    series = count_series(view, max_points)
    layout = base_layout(title, view.window, tz, 260)
    data = counts_traces(view, tz, max_points=max_points, series=series)
    left = max((max(t["y"]) for t in data if t.get("yaxis") != "y2" and t.get("mode") == "lines"), default=1)
    count_axes(layout, (left, max(series[1].values)))
    note = binning_note(series, max_points)
    if note:
        layout["annotations"] = [{"text": safe.label(note), "xref": "paper", "yref": "paper", "x": 0, "y": 1,
                                  "xanchor": "left", "yanchor": "bottom", "showarrow": False,
                                  "font": {"size": 10, "color": "#666"}}]
    return {"data": data, "layout": layout}
