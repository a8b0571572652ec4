"""ISR size heatmap: the Gantt's partitions (same order) x time bins, the smallest ISR in each bin."""
from __future__ import annotations

from typing import Any

from dashboards import safe
from dashboards.gantt import row_label, topics_in_order, MAX_TOPIC_BUTTONS
from dashboards.model import ClusterView
from dashboards.rank import Selection
from dashboards.series import isr_bins
from dashboards.style import base_layout
from dashboards.timefmt import axis_time
from replay_engine.causes.text import fmt_duration

MAX_BINS = 240
ROW_PX = 12


def _height(rows: int) -> int:
    return 150 + ROW_PX * max(rows, 1)


def heatmap_figure(view: ClusterView, sel: Selection, tz: str, title: str, nbins: int = MAX_BINS) -> dict[str, Any]:
    lo, hi = view.window
    centers, z = isr_bins([sel.spans[tp] for tp in sel.rows], lo, hi, nbins)
    x = [axis_time(c, tz) for c in centers]
    labels = [row_label(*tp) for tp in sel.rows]
    width = (centers[1] - centers[0]) if len(centers) > 1 else hi - lo
    top = max([v for row in z for v in row if v is not None] + [max(view.rf.values(), default=1), 1])
    # 0 (no ISR at all) is red; 1..largest go from light to dark blue
    scale = [[0, "#d62728"], [1 / top, "#c6dbef"], [1, "#08519c"]] if top > 1 else [[0, "#d62728"], [1, "#08519c"]]
    trace = {"type": "heatmap", "name": "ISR size", "x": x, "y": labels, "z": z, "zmin": 0, "zmax": top,
             "colorscale": scale,
             "colorbar": {"title": {"text": "min ISR"}, "thickness": 12, "lenmode": "pixels", "len": 140, "y": 1,
                          "yanchor": "top"},
             "xgap": 0, "ygap": 1, "hoverongaps": False,
             "hovertemplate": "<b>%{y}</b><br>%{x}: smallest ISR %{z}<extra></extra>"}
    layout = base_layout(f"{title} <span style='font-size:11px;color:#666'>(bins of {fmt_duration(width)})</span>",
                         view.window, tz, _height(len(labels)))
    layout["yaxis"] = {"type": "category", "autorange": "reversed", "automargin": True, "tickfont": {"size": 9}}
    topics = topics_in_order(sel)
    if len(topics) > 1:
        # rows of one topic: the same data cut down (a restyle), so the cells stay aligned with their labels
        buttons = [{"label": f"all topics ({len(topics)})", "method": "update",
                    "args": [{"y": [labels], "z": [z]}, {"height": _height(len(labels))}]}]
        for t in topics[:MAX_TOPIC_BUTTONS]:
            keep = [i for i, tp in enumerate(sel.rows) if tp[0] == t]
            buttons.append({"label": safe.label(t), "method": "update",
                            "args": [{"y": [[labels[i] for i in keep]], "z": [[z[i] for i in keep]]},
                                     {"height": _height(len(keep))}]})
        layout["updatemenus"] = [{"type": "dropdown", "buttons": buttons, "x": 0, "xanchor": "left", "y": 1.0,
                                  "yanchor": "bottom", "pad": {"t": 0, "b": 4}, "active": 0}]
    return {"data": [trace], "layout": layout}
