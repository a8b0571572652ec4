"""``kafka-forensics audit``: every outage in months of logs from many clusters, ranked and trended."""
from __future__ import annotations

import re
from pathlib import Path

import typer

from forensics.app import app
from forensics.commands.common import MASTER, QUIET, TZ, check_tz
from forensics.errors import UserError

_DAY = re.compile(r"^\d{4}-\d\d-\d\d$")


def _day(value: str | None, flag: str) -> str | None:
    if value is None:
        return None
    if not _DAY.match(value):
        raise UserError(f"{flag} expects a day as YYYY-MM-DD, got {value!r}")
    return value


@app.command("audit")
def audit_cmd(
    root: str = typer.Argument(..., help="A tree of collected logs and ZooKeeper data: cluster=NAME/date=DAY/"
                               "broker=N/... , one folder per cluster, or one cluster's broker folders."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder: Parquet tables, audit_summary.json, "
                             "audit.html, and the manifest that makes the next run incremental."),
    since: str = typer.Option(None, "--since", help="Only read files of this day (YYYY-MM-DD) and later."),
    until: str = typer.Option(None, "--until", help="Only read files up to this day (YYYY-MM-DD)."),
    cluster: str = typer.Option(None, "--cluster", help="Name every file's cluster this (when ROOT is one cluster)."),
    shards: int = typer.Option(None, "--shards", min=1, help="Partition shards for the replay of a cluster "
                               "bigger than one core's share of the run's events; smaller clusters are replayed "
                               "whole (default: the Spark default parallelism, at least 2; raised so that no "
                               "shard gets more than 200,000 events)."),
    tz: str = TZ,
    master: str = MASTER,
    quiet: bool = QUIET,
) -> int:
    """Find, rank and trend every leaderless interval in a large log archive, on any Spark master.

    Re-runs read only new or changed files (see DIR/manifest.json) and rewrite only the days they touch.

    Example: kafka-forensics audit /archive/kafka-logs --out audit-out --master spark://host:7077
    """
    from forensics.audit.run import AuditOptions, run_audit
    from forensics.progress import Progress

    tz = check_tz(tz)
    s, u = _day(since, "--since"), _day(until, "--until")
    if s and u and u < s:
        raise UserError("--until is before --since")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    summary = run_audit(AuditOptions(root, out, master, s, u, cluster, shards, tz), Progress(not quiet))
    print(f"{len(summary['clusters'])} cluster(s), {summary['incidents']} outage(s), "
          f"{summary['leaderless_partition_seconds_total'] / 3600:,.2f} leaderless partition-hours; "
          f"{summary['files_processed']} file(s) read, {summary['files_skipped']} unchanged -> {out}/audit.html")
    return 0
