"""The HTML document: plotly.js inline, the figures as a JSON island, the page script; and its size bound.

Deterministic: ids come from the caller (derived from positions), nothing
reads a clock or a random source, so the same figures give the same bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from dashboards import safe
from dashboards.assets import CSS, SCRIPT, plotly_js

# The promise: a page stays under this, whatever the cluster (plotly.js alone is ~4.8 MB of it).
MAX_PAGE_BYTES = 15_000_000
MIN_ROWS = 10


@dataclass
class Page:
    """What a page is made of before it is serialised."""

    title: str
    body: list[str] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    cites: dict[str, list[list[Any]]] = field(default_factory=dict)
    windows: dict[str, list[str]] = field(default_factory=dict)

    def figure(self, div: str, group: str, kind: str, section: str, fig: dict[str, Any]) -> str:
        """Register a figure (drawn into ``div``; its time axis linked with the rest of ``group``)."""
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


def fit(build: Callable[[int, bool], Page], max_rows: int, limit: int = MAX_PAGE_BYTES) -> str:
    """Build with ``max_rows`` Gantt rows; while the page is over ``limit`` bytes, halve the rows.

    Rows carry almost all of a page's weight (bars, hovers, cited lines), so this bounds the size
    whatever the trace (a day of ISR flapping can give a partition thousands of intervals).
    ``build(rows, cut)``: ``cut`` says the rows were reduced for size, for the page to say so."""
    rows = max_rows
    while True:
        page = build(rows, rows < max_rows).html()
        if rows <= MIN_ROWS or len(page.encode("utf-8")) <= limit:
            return page
        rows = max(MIN_ROWS, rows // 2)
