"""``kafka-forensics postmortem``: the main job. A folder of logs in, the answer out."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from forensics.app import app
from forensics.commands.common import BROKER_MAP, CLUSTER, MASTER, QUIET, TZ, check_tz, default_cluster
from forensics.errors import UserError

FORMATS = ("text", "json", "md", "html")


@app.command("postmortem")
def postmortem_cmd(
    sources: list[str] = typer.Argument(..., help="What you collected: a folder with one sub-folder per broker, "
                                        "a tarball/zip of it, log files, a ZooKeeper data dir, zkCli dumps, a capture."),
    out: Path = typer.Option(None, "--out", "-o", help="Also write report.md, report.json, report.html, "
                             "replay.json and partition_timeline/ here."),
    since: str = typer.Option(None, "--since", help="Only look at events from this time (ISO-8601, in --tz)."),
    until: str = typer.Option(None, "--until", help="Only look at events up to this time (ISO-8601, in --tz)."),
    topic: list[str] = typer.Option(None, "--topic", help="Only report these topics (glob; repeatable)."),
    fmt: str = typer.Option("text", "--format", "-f", help="Terminal output: text, json, md or html."),
    tz: str = TZ,
    cluster: str = CLUSTER,
    broker_map: list[str] = BROKER_MAP,
    master: str = MASTER,
    quiet: bool = QUIET,
) -> int:
    """Explain every leaderless partition in the evidence, with the lines that prove it, and what would have prevented it.

    Exit code: 0 = analysed, no leaderless partition; 1 = analysed, leaderless partitions found;
    2 = usage or input error.

    Example: kafka-forensics postmortem sample_logs/rf1_broker_kill --out out/rf1
    """
    from forensics.pipeline import analyse, parse_time, write_timeline
    from forensics.progress import Progress
    from forensics.report.build import build_report
    from forensics.report.render import render_html, render_markdown, render_text
    from replay_engine.api import replay

    if fmt not in FORMATS:
        raise UserError(f"--format must be one of {', '.join(FORMATS)}")
    tz = check_tz(tz)
    t_since, t_until = parse_time(since, tz), parse_time(until, tz)
    if t_since is not None and t_until is not None and t_until < t_since:
        raise UserError("--until is before --since")
    progress = Progress(not quiet)
    analysis = analyse(sources, master=master, tz=tz, cluster=default_cluster(sources, cluster),
                       broker_map=broker_map, progress=progress, since=t_since, until=t_until)
    try:
        progress.say("replaying the controller")
        results = replay(analysis.events)
        report = build_report(results, analysis.ingest.summary_json, analysis.events, sources=sources,
                              topics=topic or None, tz=tz)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
            (out / "report.md").write_text(render_markdown(report, tz))
            (out / "report.html").write_text(_html(report, results, tz, render_html))
            (out / "replay.json").write_text(json.dumps(report["replay"], indent=2, ensure_ascii=False) + "\n")
            write_timeline([r for res in results for r in res.timeline_rows()], out / "partition_timeline")
            (out / "ingest_summary.json").write_text(json.dumps(analysis.ingest.summary_json, indent=2) + "\n")
            progress.say(f"wrote {out}/report.md, report.json, report.html")
    finally:
        analysis.close()
    if fmt == "text":
        print(render_text(report, tz), end="")
    elif fmt == "json":
        print(json.dumps(report, indent=2, ensure_ascii=False))
    elif fmt == "md":
        print(render_markdown(report, tz), end="")
    else:
        print(render_html(report, tz), end="")
    return 1 if report["incidents"] else 0


def _html(report, results, tz, plain):
    try:
        from dashboards.page import report_page
    except ImportError:
        return plain(report, tz)
    return report_page(report, results, tz)
