"""The incident as one self-contained HTML page (works offline, opened by double-click).

Entry points:
- :func:`report_page` — ``report.html`` of ``postmortem``: the report's conclusions above the charts;
- :func:`dashboard_page` — the same from replay documents and timeline rows (a report directory):
  for the same replay it gives the same bytes as :func:`report_page`;
- :func:`results_page` — straight from ReplayResults, without a report;
- :func:`whatif_page` — two replays of the same trace side by side on one time axis.

Every page stays under ``document.MAX_PAGE_BYTES``.
"""
from __future__ import annotations

from typing import Any, Iterable

from dashboards.document import Page, fit
from dashboards.model import ClusterView, cluster_view, replay_docs
from dashboards.rank import MAX_ROWS
from dashboards.sections import cluster_name, cluster_section, report_header
from dashboards.whatif import whatif_header, whatif_section
from parsers.common.gc_pause import cycle_gc_paused


def dashboard_page(docs: list[dict[str, Any]], rows: list[dict[str, Any]], tz: str = "UTC",
                   report: dict[str, Any] | None = None, max_rows: int = MAX_ROWS) -> str:
    """A page from replay documents (replay.json's, one per cluster) and partition_timeline rows."""
    with cycle_gc_paused():
        return _page(_views(docs, rows, None), tz, report, max_rows)


def report_page(report: dict[str, Any], results: list[Any], tz: str = "UTC") -> str:
    """report.html: the postmortem report's conclusions above the interactive timeline of each cluster."""
    with cycle_gc_paused():
        return _page(_views(replay_docs(report["replay"]), _rows(results), results), tz, report, MAX_ROWS)


def results_page(results: list[Any], tz: str = "UTC", max_rows: int = MAX_ROWS) -> str:
    """A page straight from ReplayResults (what ``replay`` knows, without a report)."""
    with cycle_gc_paused():
        return _page(_views([r.to_json() for r in results], _rows(results), results), tz, None, max_rows)


def whatif_page(baseline_results: list[Any], variant_results: list[Any], whatif_doc: Any = None,
                tz: str = "UTC", labels: tuple[str, str] = ("baseline", "variant"),
                max_rows: int = MAX_ROWS) -> str:
    """Two labelled replays of the same evidence, side by side on one linked time axis per cluster
    (clusters paired by name); ``whatif_doc``: what the run says about itself (verdict, changes...)."""
    with cycle_gc_paused():
        base = {r.cluster: r for r in baseline_results}
        var = {r.cluster: r for r in variant_results}
        names = sorted(set(base) | set(var), key=lambda c: "" if c is None else str(c))
        pairs = []
        for name in names:
            pairs.append([(lab, _view(res)) for lab, res in ((labels[0], base.get(name)), (labels[1], var.get(name)))
                          if res is not None])

        def build(rows: int, cut: bool) -> Page:
            page = Page(f"What-if: {labels[0]} vs {labels[1]}")
            page.body.append(whatif_header(whatif_doc or {}))
            for n, sides in enumerate(pairs):
                whatif_section(page, n, sides, labels, tz, rows, cut)
            return page

        return fit(build, max_rows)


def _page(views: list[ClusterView], tz: str, report: dict[str, Any] | None, max_rows: int) -> str:
    names = ", ".join(cluster_name(v) for v in views)

    def build(rows: int, cut: bool) -> Page:
        page = Page(f"Postmortem: {names}" if report is not None else f"Replay: {names}")
        if report is not None:
            page.body.append(report_header(report))
        for n, view in enumerate(views):
            cluster_section(page, view, tz, n, rows, cut)
        return page

    return fit(build, max_rows)


def _views(docs: list[dict[str, Any]], rows: list[dict[str, Any]], results: list[Any] | None) -> list[ClusterView]:
    requests = {r.cluster: shutdown_requests(r) for r in results or []}
    return [cluster_view(d, rows if len(docs) == 1 else [r for r in rows if r.get("cluster") == d.get("cluster")],
                         requests.get(d.get("cluster"), ())) for d in docs]


def _view(res: Any) -> ClusterView:
    return cluster_view(res.to_json(), res.timeline_rows(), shutdown_requests(res))


def _rows(results: Iterable[Any]) -> list[dict[str, Any]]:
    return [r for res in results for r in res.timeline_rows()]


def shutdown_requests(res: Any) -> list[tuple[int, int]]:
    """(broker, time) of every controlled-shutdown request in a replay's input: the controller's
    'Shutting down broker N' and the broker's own 'Beginning controlled shutdown'."""
    from replay_engine.common import facts as F

    out = []
    for f in res.stream.facts:
        if isinstance(f, F.ControlledShutdownRequest):
            out.append((f.broker, f.ts))
        elif isinstance(f, F.Evidence) and f.kind == "controlled_shutdown_requested" and f.broker is not None:
            out.append((f.broker, f.ts))
    return out
