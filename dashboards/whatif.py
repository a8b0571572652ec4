"""Two labelled replays of the same evidence, side by side on one linked time axis (what-if pages).

Generic on purpose: any two lists of ReplayResult (paired by cluster name) and
any JSON-able document describing the run; whatever the document says about
itself (verdict, changes, metric deltas, notes) is shown, escaped.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from dashboards import safe
from dashboards.counts import count_axes, counts_traces
from dashboards.document import Page
from dashboards.model import ClusterView
from dashboards.rank import joint_rows
from dashboards.sections import cluster_name, heading, timeline_blocks
from dashboards.style import base_layout
from dashboards.timefmt import axis_time


def whatif_header(doc: Any) -> str:
    e = safe.text
    docs = doc.get("clusters") if isinstance(doc, dict) and isinstance(doc.get("clusters"), list) else [doc]
    parts = []
    for d in docs:
        if not isinstance(d, dict):
            continue
        if d.get("verdict"):
            parts.append(f"<p><b>{e(d['verdict'])}</b></p>")
        changes = d.get("changes") or []
        if changes:
            parts.append("<p>Changes in the variant:</p><ul>")
            for c in changes:
                parts.append(f"<li>{e(c.get('description') if isinstance(c, dict) else c)}</li>")
            parts.append("</ul>")
        delta = d.get("delta")
        if isinstance(delta, dict) and delta:
            parts.append("<table class='rest'><tr><th>metric</th><th>baseline</th><th>variant</th><th>change</th></tr>")
            for k in sorted(delta):
                b = (d.get("baseline") or {}).get(k)
                v = (d.get("variant") or {}).get(k)
                parts.append(f"<tr><td>{e(k)}</td><td>{e(b)}</td><td>{e(v)}</td><td>{e(delta[k])}</td></tr>")
            parts.append("</table>")
        parts.extend(f"<p class='note'>{e(n)}</p>" for n in d.get("notes") or [])
    return "".join(parts)


def whatif_section(page: Page, n: int, sides: list[tuple[str, ClusterView]], labels: tuple[str, str], tz: str,
                   max_rows: int, cut: bool) -> None:
    """One cluster: a counts chart with both replays (the second dotted), then lanes, Gantt (same rows,
    same order), heatmap and evidence of each in two columns, all on one time axis."""
    group = f"w{n}"
    lo = min(v.window[0] for _, v in sides)
    hi = max(v.window[1] for _, v in sides)
    sides = [(lab, replace(v, window=(lo, hi))) for lab, v in sides]  # one time axis for both replays
    page.windows[group] = [axis_time(lo, tz), axis_time(hi, tz)]
    rows = joint_rows([v for _, v in sides], max_rows=max_rows)
    data = [t for i, (lab, v) in enumerate(sides) for t in counts_traces(v, tz, lab, dash="dot" if i else None)]
    counts = {"data": data, "layout": base_layout(
        f"partitions without a leader / under-replicated, {safe.label(labels[0])} (solid) and "
        f"{safe.label(labels[1])} (dotted)", (lo, hi), tz, 280)}
    count_axes(counts["layout"], (max((max(t["y"]) for t in data if t.get("yaxis") != "y2"), default=1),
                                  max((max(t["y"]) for t in data if t.get("yaxis") == "y2"), default=1)))
    tag = "bv"
    blocks = [(lab, timeline_blocks(page, v, tz, f"{group}{tag[i]}", group, lab, rows, max_rows, cut, counts=False))
              for i, (lab, v) in enumerate(sides)]

    def cols(render) -> str:
        return "<div class='cols'>" + "".join(f"<div>{render(lab, b)}</div>" for lab, b in blocks) + "</div>"

    first = sides[0][1]
    page.body.append(
        f"<section id='{group}'><h2>Cluster {safe.text(cluster_name(first))}</h2>"
        f"<p class='note'>{safe.text(heading(first, tz))}. Zoom or pan any chart: the others follow.</p>"
        + page.figure(f"{group}-counts", group, "counts", group, counts)
        + cols(lambda lab, b: b["lanes"]) + "<h3>Leader per partition</h3>" + cols(lambda lab, b: b["gantt_note"])
        + cols(lambda lab, b: f"<div class='gantt-box'>{b['gantt']}</div>{b['selected']}")
        + cols(lambda lab, b: b["heat"]) + "<h3>Evidence behind each leaderless interval</h3>"
        + cols(lambda lab, b: f"<h3>{safe.text(lab)}</h3>{b['evidence']}") + "</section>")
