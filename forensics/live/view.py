"""The terminal view of ``watch`` (rich): the incidents open now and those closed recently, each with its cause in
one line and what would end it, the latest warnings, and how far the following is. Redrawn at most once a second
(``watch`` calls ``render`` from its loop)."""
from __future__ import annotations

from typing import Any

from forensics.report.render import show_ts

MAX_SUMMARY = 220


def _one_line(text: str | None) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= MAX_SUMMARY else t[:MAX_SUMMARY - 1] + "…"


def render(status: dict[str, Any], open_incidents: list[dict[str, Any]], closed: list[dict[str, Any]],
           notes: list[str], tz: str):
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    head = Text(f"kafka-forensics watch: {status.get('sources')}  ", style="bold")
    head.append(f"files {status.get('files', 0)}, lines {status.get('lines', 0):,}, "
                f"settled to {show_ts(status.get('settled'), tz)}, evidence to {show_ts(status.get('evidence_end'), tz)}"
                f" ({tz}), batch {status.get('batch', -1)} in {status.get('batch_s', 0):.1f} s", style="dim")
    t = Table(title=f"Open now: {len(open_incidents)} incident(s)", expand=True, show_lines=True)
    for col, kw in (("partitions", {"ratio": 2}), ("since", {"ratio": 2}), ("cause", {"ratio": 6}),
                    ("what would end it", {"ratio": 4})):
        t.add_column(col, **kw)
    for inc in open_incidents:
        parts = inc.get("partitions") or []
        shown = ", ".join(map(str, parts[:8])) + (f" … ({len(parts)})" if len(parts) > 8 else "")
        t.add_row(Text(f"{inc['topic']}\n{shown}", style="bold red"), show_ts(inc.get("start"), tz),
                  _one_line(inc.get("summary")), "\n".join(f"• {x}" for x in inc.get("to_end") or []))
    c = Table(title="Closed recently", expand=True)
    for col in ("partitions", "from", "to", "cause"):
        c.add_column(col)
    for inc in closed[:8]:
        parts = inc.get("partitions") or []
        c.add_row(f"{inc['topic']} ({len(parts)})", show_ts(inc.get("start"), tz),
                  "withdrawn" if inc.get("withdrawn") else show_ts(inc.get("end"), tz), _one_line(inc.get("summary")))
    warn = Text("\n".join(notes[-6:]) or "no warnings", style="yellow" if notes else "dim")
    return Group(head, t, c, Panel(warn, title="warnings", border_style="yellow"))
