"""The self-contained HTML page: plotly.js inline, the figures as a JSON island, a little script.

Entry points:
- :func:`report_page` — ``report.html`` of ``postmortem`` (the report's findings + the dashboards);
- :func:`dashboard_page` — the same from replay documents and timeline rows (a report directory);
- :func:`whatif_page` — two replays of the same trace side by side on one time axis.

Pages are deterministic: element ids derive from the cluster's position, no
clock or random value is used, and the same inputs give the same bytes.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from dashboards import safe
from dashboards.assets import CSS, SCRIPT, plotly_js
from dashboards.counts import count_axes, counts_figure, counts_traces
from dashboards.evidence import evidence_table, index_episodes, rest_summary
from dashboards.gantt import gantt_figure
from dashboards.heatmap import heatmap_figure
from dashboards.lanes import lanes_figure
from dashboards.model import ClusterView, cluster_view, replay_docs
from dashboards.rank import MAX_ROWS, joint_rows, select_rows
from dashboards.style import base_layout
from dashboards.timefmt import axis_time, show_time, zone_name


@contextmanager
def _quiet_gc() -> Iterator[None]:
    """Building a page allocates millions of small objects next to a replay of millions more; Python's
    cyclic GC would re-scan the replay again and again (half the build time at 50,000 partitions).
    Nothing built here forms reference cycles, so collection can wait until the page is done."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass
class Page:
    """What a page is made of before it is serialised."""

    title: str
    body: list[str] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    cites: dict[str, list[list[Any]]] = field(default_factory=dict)
    windows: dict[str, list[str]] = field(default_factory=dict)

    def figure(self, div: str, group: str, kind: str, section: str, fig: dict[str, Any]) -> str:
        self.figures.append({"div": div, "group": group, "kind": kind, "section": section,
                             "data": fig["data"], "layout": fig["layout"]})
        return f"<div id='{div}' class='fig {kind}'></div>"

    def html(self) -> str:
        blob = {"figures": self.figures, "cites": self.cites, "windows": self.windows}
        return "".join([
            "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>",
            "<meta name='viewport' content='width=device-width, initial-scale=1'>",
            f"<title>{safe.text(self.title)}</title><style>{CSS}</style>\n",
            "<script>", plotly_js(), "</script>\n</head><body>\n",
            f"<h1>{safe.text(self.title)}</h1>\n<p id='kf-status' class='note'>Drawing the charts…</p>\n",
            "\n".join(self.body),
            "\n<script type='application/json' id='kf-data'>", safe.script_json(blob), "</script>\n",
            "<script>", SCRIPT, "</script>\n</body></html>\n",
        ])


def _heading(view: ClusterView, tz: str) -> str:
    lo, hi = view.window
    return f"{show_time(lo, tz)} → {show_time(hi, tz)} ({zone_name(tz)})"


def _cluster_name(view: ClusterView) -> str:
    return str(view.name) if view.name is not None else "cluster"


def _timeline_blocks(page: Page, view: ClusterView, tz: str, prefix: str, group: str, label: str,
                     rows: list[tuple[str, int]] | None, max_rows: int, counts: bool = True) -> dict[str, str]:
    """The HTML pieces of one replay (lanes, counts, Gantt, heatmap, evidence); figures go into ``page``."""
    sel = select_rows(view, max_rows=max_rows, rows=rows)
    idx = index_episodes(view, sel, prefix)
    name = safe.label(label)
    blocks = {
        "lanes": page.figure(f"{prefix}-lanes", group, "lanes", prefix,
                             lanes_figure(view, tz, f"{name}: brokers and controller")),
        "gantt": page.figure(f"{prefix}-gantt", group, "gantt", prefix,
                             gantt_figure(view, sel, idx, tz, f"{name}: leader per partition "
                                          "(colour = leader broker, hatched red = no leader)")),
        "heat": page.figure(f"{prefix}-heat", group, "heatmap", prefix,
                            heatmap_figure(view, sel, tz, f"{name}: ISR size per partition")),
    }
    if counts:
        blocks["counts"] = page.figure(f"{prefix}-counts", group, "counts", prefix, counts_figure(
            view, tz, f"{name}: partitions without a leader / under-replicated"))
    page.cites[prefix] = idx.cites_json(tz)
    note = [f"{len(sel.rows):,} of {len(view.partitions):,} partitions drawn, "
            f"the most affected first; {sel.affected:,} partition(s) had no leader at some point."]
    if sel.hidden:
        note.append(f"{sel.hidden:,} partition(s) are not drawn ({sel.hidden_affected:,} of them affected: "
                    "summarised under the evidence).")
    blocks["gantt_note"] = f"<p class='note'>{safe.text(' '.join(note))} Click a bar to see the events behind it.</p>"
    blocks["selected"] = (f"<div id='{prefix}-selected' class='selected'>Click a bar of the leader chart: the "
                          "events behind it show here.</div>")
    blocks["evidence"] = (f"<div class='evidence-box'>{evidence_table(idx, view, tz, group)}</div>"
                          f"{rest_summary(view, sel, tz)}")
    notes = list(view.notes)
    blocks["notes"] = "".join(f"<p class='note'>{safe.text(n)}</p>" for n in notes)
    return blocks


def _cluster_section(page: Page, view: ClusterView, tz: str, n: int, max_rows: int) -> None:
    prefix = f"c{n}"
    page.windows[prefix] = [axis_time(view.window[0], tz), axis_time(view.window[1], tz)]
    b = _timeline_blocks(page, view, tz, prefix, prefix, _cluster_name(view), None, max_rows)
    page.body.append(
        f"<section id='{prefix}'><h2>Cluster {safe.text(_cluster_name(view))}</h2>"
        f"<p class='note'>Evidence window {safe.text(_heading(view, tz))}. Zoom or pan any chart: the others follow; "
        f"double-click to reset.</p>{b['notes']}"
        f"{b['lanes']}{b['counts']}<h3>Leader per partition</h3>{b['gantt_note']}"
        f"<div class='gantt-box'>{b['gantt']}</div>{b['selected']}{b['heat']}"
        f"<h3>Evidence behind each leaderless interval</h3>{b['evidence']}</section>")


def _report_header(report: dict[str, Any], tz: str) -> str:
    e = safe.text
    s = report.get("summary") or {}
    parts = [f"<p><b>{e(s.get('headline', ''))}</b></p>"]
    incidents = report.get("incidents") or []
    if incidents:
        # a long list would push the charts off the first screen: folded beyond a handful
        parts.append(f"<details{' open' if len(incidents) <= 6 else ''}><summary><b>{len(incidents)} incident(s)"
                     "</b></summary><ol class='incidents'>")
        for inc in incidents:
            parts.append(f"<li><span class='kind'>{e(inc.get('cause_kind'))}</span> {e(inc.get('summary'))}</li>")
        parts.append("</ol></details>")
    remedies = report.get("remedies") or []
    if remedies:
        parts.append(f"<details{' open' if len(incidents) <= 6 else ''}><summary><b>What would have prevented it"
                     "</b></summary><ul>")
        parts.extend(f"<li>{e(r.get('text'))}</li>" for r in remedies)
        parts.append("</ul></details>")
    findings = [f for f in report.get("findings") or [] if f.get("text")]
    if findings:
        parts.append("<details><summary>Findings</summary><ul>")
        parts.extend(f"<li>{e(f.get('kind'))}: {e(f.get('text'))}</li>" for f in findings[:200])
        parts.append("</ul></details>")
    ag = s.get("agreement") or {}
    if ag.get("compared"):
        parts.append(f"<p class='note'>Replay check: {ag.get('agreed'):,}/{ag.get('compared'):,} recorded controller "
                     "decisions match the replay.</p>")
    return "".join(parts)


def dashboard_page(docs: list[dict[str, Any]], rows: list[dict[str, Any]], tz: str = "UTC",
                   report: dict[str, Any] | None = None, max_rows: int = MAX_ROWS) -> str:
    """A page from replay documents (replay.json's, one per cluster) and partition_timeline rows."""
    with _quiet_gc():
        return _dashboard_page(docs, rows, tz, report, max_rows)


def _dashboard_page(docs, rows, tz, report, max_rows, results=None) -> str:
    requests = {r.cluster: shutdown_requests(r) for r in results or []}
    views = [cluster_view(d, rows if len(docs) == 1 else [r for r in rows if r.get("cluster") == d.get("cluster")],
                          requests.get(d.get("cluster"), ()))
             for d in docs]
    names = ", ".join(_cluster_name(v) for v in views)
    page = Page(f"Postmortem: {names}" if report is not None else f"Replay: {names}")
    if report is not None:
        page.body.append(_report_header(report, tz))
    for n, view in enumerate(views):
        _cluster_section(page, view, tz, n, max_rows)
    return page.html()


def _rows(results: Iterable[Any]) -> list[dict[str, Any]]:
    return [r for res in results for r in res.timeline_rows()]


def shutdown_requests(res: Any) -> list[tuple[int, int]]:
    """(broker, time) of every controlled-shutdown request in a replay's input: the controller's
    'Shutting down broker N' and the broker's own 'Beginning controlled shutdown'."""
    from replay_engine import facts as F

    out = []
    for f in res.stream.facts:
        if isinstance(f, F.ControlledShutdownRequest):
            out.append((f.broker, f.ts))
        elif isinstance(f, F.Evidence) and f.kind == "controlled_shutdown_requested" and f.broker is not None:
            out.append((f.broker, f.ts))
    return out


def report_page(report: dict[str, Any], results: list[Any], tz: str = "UTC") -> str:
    """report.html: the postmortem report's conclusions above the interactive timeline of each cluster."""
    with _quiet_gc():
        return _dashboard_page(replay_docs(report["replay"]), _rows(results), tz, report, MAX_ROWS, results)


def results_page(results: list[Any], tz: str = "UTC", max_rows: int = MAX_ROWS) -> str:
    """A page straight from ReplayResults (what ``replay`` knows, without a report)."""
    with _quiet_gc():
        return _dashboard_page([r.to_json() for r in results], _rows(results), tz, None, max_rows, results)


# ----------------------------------------------------------------------------------------- what-if


def _whatif_header(doc: Any) -> str:
    """Generic: shows what a what-if document says about itself (verdict, changes, notes) if it says it."""
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


def whatif_page(baseline_results: list[Any], variant_results: list[Any], whatif_doc: Any = None,
                tz: str = "UTC", labels: tuple[str, str] = ("baseline", "variant"),
                max_rows: int = MAX_ROWS) -> str:
    """Two labelled replays of the same evidence, side by side on one linked time axis per cluster.

    Clusters are paired by name. Each pair gets one counts chart with both replays (the second
    dashed), then both replays' lanes, Gantt (same partitions, same order) and evidence in two columns.
    """
    with _quiet_gc():
        return _whatif_page(baseline_results, variant_results, whatif_doc, tz, labels, max_rows)


def _whatif_page(baseline_results, variant_results, whatif_doc, tz, labels, max_rows) -> str:
    base = {r.cluster: r for r in baseline_results}
    var = {r.cluster: r for r in variant_results}
    names = sorted(set(base) | set(var), key=lambda c: "" if c is None else str(c))
    page = Page(f"What-if: {labels[0]} vs {labels[1]}")
    page.body.append(_whatif_header(whatif_doc or {}))
    for n, name in enumerate(names):
        sides = []
        for tag, lab, res in (("b", labels[0], base.get(name)), ("v", labels[1], var.get(name))):
            if res is not None:
                sides.append((f"w{n}{tag}", lab, cluster_view(res.to_json(), res.timeline_rows(),
                                                              shutdown_requests(res))))
        group = f"w{n}"
        lo = min(v.window[0] for _, _, v in sides)
        hi = max(v.window[1] for _, _, v in sides)
        for _, _, v in sides:
            v.window = (lo, hi)  # one time axis for both replays
        page.windows[group] = [axis_time(lo, tz), axis_time(hi, tz)]
        rows = joint_rows([v for _, _, v in sides], max_rows=max_rows)
        first = sides[0][2]
        counts = {"data": [t for i, (_, lab, v) in enumerate(sides)
                           for t in counts_traces(v, tz, lab, dash="dot" if i else None)],
                  "layout": base_layout("partitions without a leader / under-replicated, "
                                        f"{safe.label(labels[0])} (solid) and {safe.label(labels[1])} (dotted)",
                                        (lo, hi), tz, 280)}
        count_axes(counts["layout"], (max(max(t["y"]) for t in counts["data"] if t.get("yaxis") != "y2"),
                                      max(max(t["y"]) for t in counts["data"] if t.get("yaxis") == "y2")))
        blocks = [(prefix, lab, _timeline_blocks(page, v, tz, prefix, group, lab, rows, max_rows,
                                                    counts=False))
                  for prefix, lab, v in sides]
        cols = lambda key: "<div class='cols'>" + "".join(f"<div>{b[key]}</div>" for _, _, b in blocks) + "</div>"  # noqa: E731
        page.body.append(
            f"<section id='{group}'><h2>Cluster {safe.text(_cluster_name(first))}</h2>"
            f"<p class='note'>{safe.text(_heading(first, tz))}. Zoom or pan any chart: the others follow.</p>"
            + page.figure(f"{group}-counts", group, "counts", group, counts)
            + cols("lanes") + "<h3>Leader per partition</h3>" + cols("gantt_note")
            + "<div class='cols'>" + "".join(f"<div><div class='gantt-box'>{b['gantt']}</div>{b['selected']}</div>"
                                             for _, _, b in blocks) + "</div>"
            + cols("heat") + "<h3>Evidence behind each leaderless interval</h3>"
            + "<div class='cols'>" + "".join(f"<div><h3>{safe.text(lab)}</h3>{b['evidence']}</div>"
                                             for _, lab, b in blocks) + "</div></section>")
    return page.html()
