"""``kafka-forensics ingest``: files -> canonical events (Parquet) + accounting."""
from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from forensics.app import app
from forensics.commands.common import BROKER_MAP, CLUSTER, MASTER, QUIET, TZ, check_tz, default_cluster, start_spark


@app.command("ingest")
def ingest_cmd(
    sources: list[str] = typer.Argument(..., help="Log folders, archives, files, globs, ZooKeeper data dirs."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder: events/, quarantine/, ingest_summary.json."),
    tz: str = TZ,
    cluster: str = CLUSTER,
    broker_map: list[str] = BROKER_MAP,
    master: str = MASTER,
    quiet: bool = QUIET,
) -> int:
    """Parse everything into the canonical event schema.

    Example: kafka-forensics ingest ./incident-logs/ zk-data/ --out ./ingested
    """
    from forensics.ingest import events_stay_in_python, import_planning_modules, release, run_ingest, write_outputs
    from forensics.progress import Progress
    from forensics.sources import cleanup, collect_inputs

    tz = check_tz(tz)
    progress = Progress(not quiet)
    work = Path(tempfile.mkdtemp(prefix="kf-extract-"))
    try:
        inputs = collect_inputs(sources, work, broker_map)
        for p in inputs.problems:
            progress.say(f"input: {p}")
        spark = start_spark(master, rows_in_python=events_stay_in_python(inputs), preload=import_planning_modules)
        result = run_ingest(spark, inputs, tz=tz, cluster=default_cluster(sources, cluster), progress=progress)
        try:
            write_outputs(result, out)
        finally:
            release(result)
    finally:
        cleanup(work)
    t = result.summary_json["totals"]
    print(f"{t['files']} file(s), {t['lines']:,} lines/records, {t['events']:,} events -> {out}")
    return 0
