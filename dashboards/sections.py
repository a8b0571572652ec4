"""The HTML sections of a page: one replay's charts and evidence, and the report's conclusions."""
from __future__ import annotations

from typing import Any

from dashboards import safe
from dashboards.counts import counts_figure
from dashboards.document import MAX_PAGE_BYTES, Page
from dashboards.evidence import evidence_table, index_episodes, rest_summary
from dashboards.gantt import gantt_figure
from dashboards.heatmap import heatmap_figure
from dashboards.lanes import lanes_figure
from dashboards.model import ClusterView
from dashboards.rank import select_rows
from dashboards.timefmt import axis_time, show_time, zone_name


def heading(view: ClusterView, tz: str) -> str:
    lo, hi = view.window
    return f"{show_time(lo, tz)} → {show_time(hi, tz)} ({zone_name(tz)})"


def cluster_name(view: ClusterView) -> str:
    return str(view.name) if view.name is not None else "cluster"


def timeline_blocks(page: Page, view: ClusterView, tz: str, prefix: str, group: str, label: str,
                    rows: list[tuple[str, int]] | None, max_rows: int, cut: bool = False,
                    counts: bool = True) -> dict[str, str]:
    """The HTML pieces of one replay (lanes, counts, Gantt, heatmap, evidence); figures go into ``page``.

    ``rows``: the Gantt's partitions when the caller chose them (side-by-side replays), else the most
    affected up to ``max_rows``; ``cut``: ``max_rows`` was lowered to keep the page small."""
    sel = select_rows(view, max_rows=max_rows, rows=rows)
    idx = index_episodes(view, sel, prefix)
    name = safe.label(label)
    blocks = {
        "lanes": page.figure(f"{prefix}-lanes", group, "lanes", prefix,
                             lanes_figure(view, tz, f"{name}: brokers and controller")),
        "gantt": page.figure(f"{prefix}-gantt", group, "gantt", prefix,
                             gantt_figure(view, sel, idx, tz, f"{name}: leader per partition")),
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
    if cut:
        note.append(f"(Rows limited to {max_rows:,} to keep this file under {MAX_PAGE_BYTES / 1e6:.0f} MB.)")
    blocks["gantt_note"] = ("<p class='note'>Colour = leader broker, hatched red = no leader, narrow crossed orange = a leader "
                            "but ISR below min.insync.replicas (acks=all writes refused). "
                            f"{safe.text(' '.join(note))} Click a bar to see the events behind it.</p>")
    blocks["selected"] = (f"<div id='{prefix}-selected' class='selected'>Click a bar of the leader chart: the "
                          "events behind it show here.</div>")
    blocks["evidence"] = (f"<div class='evidence-box'>{evidence_table(idx, view, tz, group)}</div>"
                          f"{rest_summary(view, sel, tz)}")
    blocks["notes"] = "".join(f"<p class='note'>{safe.text(n)}</p>" for n in view.notes)
    return blocks


def cluster_section(page: Page, view: ClusterView, tz: str, n: int, max_rows: int, cut: bool) -> None:
    prefix = f"c{n}"
    page.windows[prefix] = [axis_time(view.window[0], tz), axis_time(view.window[1], tz)]
    b = timeline_blocks(page, view, tz, prefix, prefix, cluster_name(view), None, max_rows, cut)
    page.body.append(
        f"<section id='{prefix}'><h2>Cluster {safe.text(cluster_name(view))}</h2>"
        f"<p class='note'>Evidence window {safe.text(heading(view, tz))}. Zoom or pan any chart: the others follow; "
        f"double-click to reset.</p>{b['notes']}"
        f"{b['lanes']}{b['counts']}<h3>Leader per partition</h3>{b['gantt_note']}"
        f"<div class='gantt-box'>{b['gantt']}</div>{b['selected']}{b['heat']}"
        f"<h3>Evidence behind each leaderless interval</h3>{b['evidence']}</section>")


def report_header(report: dict[str, Any]) -> str:
    """The postmortem's conclusions (headline, incidents, remedies, findings) above the charts."""
    e = safe.text
    s = report.get("summary") or {}
    parts = [f"<p><b>{e(s.get('headline', ''))}</b></p>"]
    incidents = report.get("incidents") or []
    opened = " open" if len(incidents) <= 6 else ""  # a long list would push the charts off the first screen
    if incidents:
        parts.append(f"<details{opened}><summary><b>{len(incidents)} incident(s)</b></summary><ol class='incidents'>")
        for inc in incidents:
            parts.append(f"<li><span class='kind'>{e(inc.get('cause_kind'))}</span> {e(inc.get('summary'))}</li>")
        parts.append("</ol></details>")
    remedies = report.get("remedies") or []
    if remedies:
        parts.append(f"<details{opened}><summary><b>What would have prevented it</b></summary><ul>")
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
