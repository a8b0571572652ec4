"""``kafka-forensics dashboard``: the incident as one self-contained, interactive HTML file."""
from __future__ import annotations

from pathlib import Path

import typer

from forensics.app import app
from forensics.commands.common import BROKER_MAP, CLUSTER, MASTER, QUIET, check_tz, default_cluster
from forensics.errors import UserError


def _has_files(path: Path) -> bool:
    return any(p.is_file() for p in path.rglob("*"))


@app.command("dashboard")
def dashboard_cmd(
    sources: list[str] = typer.Argument(..., help="A report directory written by 'postmortem --out' or 'replay --out' "
                                        "(no re-ingest), or the evidence itself: log folders, archives, files, "
                                        "ZooKeeper data dirs, captures."),
    out: Path = typer.Option(Path("incident.html"), "--out", "-o", help="The HTML file to write."),
    tz: str = typer.Option(None, "--tz", help="Time zone the brokers logged in, and the one the page shows "
                           "(default UTC; for a report directory, the zone its report was made with)."),
    max_partitions: int = typer.Option(500, "--max-partitions", help="Partitions drawn in the leader chart "
                                       "(the most affected first; the rest are summarised)."),
    cluster: str = CLUSTER,
    broker_map: list[str] = BROKER_MAP,
    master: str = MASTER,
    quiet: bool = QUIET,
) -> int:
    """Write one HTML file (works offline, open it by double-click): broker and controller lanes, leaderless and
    under-replicated counts, a leader Gantt per partition, ISR heatmap and the evidence behind every outage,
    all on one linked time axis.

    Example: kafka-forensics dashboard out/rf1_broker_kill --out incident.html
    """
    from dashboards.load import ReportDirError, is_report_dir, load_report_dir

    if max_partitions < 1:
        raise UserError("--max-partitions must be at least 1")
    first = Path(sources[0])
    if len(sources) == 1 and is_report_dir(first):
        try:
            docs, rows, report = load_report_dir(first)
        except ReportDirError as exc:
            raise UserError(str(exc)) from None
        zone = check_tz(tz or ((report or {}).get("inputs") or {}).get("time_zone") or "UTC")
        from dashboards.page import dashboard_page

        html = dashboard_page(docs, rows, zone, report=report, max_rows=max_partitions)
    else:
        for s in sources:
            p = Path(s)
            if p.is_dir() and not _has_files(p):
                raise UserError(f"{s}: empty folder (neither a report directory with replay.json and "
                                "partition_timeline/, nor evidence to analyse)")
        html = _from_sources(sources, check_tz(tz or "UTC"), cluster, broker_map, master, quiet, max_partitions)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    if not quiet:
        print(f"wrote {out} ({len(html.encode('utf-8')) / 1e6:.1f} MB)")
    return 0


def _from_sources(sources, tz, cluster, broker_map, master, quiet, max_rows) -> str:
    """Analyse and replay, then the same page postmortem writes as report.html."""
    from dashboards.page import dashboard_page
    from forensics.pipeline import analyse
    from forensics.progress import Progress
    from forensics.report.build import build_report
    from replay_engine.api import replay

    progress = Progress(not quiet)
    analysis = analyse(sources, master=master, tz=tz, cluster=default_cluster(sources, cluster),
                       broker_map=broker_map, progress=progress)
    try:
        progress.say("replaying the controller")
        results = replay(analysis.events)
        report = build_report(results, analysis.ingest.summary_json, analysis.events, sources=sources, tz=tz)
    finally:
        analysis.close()
    from dashboards.model import replay_docs

    rows = [r for res in results for r in res.timeline_rows()]
    return dashboard_page(replay_docs(report["replay"]), rows, tz, report=report, max_rows=max_rows)
