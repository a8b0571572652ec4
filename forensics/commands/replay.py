"""``kafka-forensics replay``: re-run the controller; partition_timeline (Parquet) + replay.json."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from forensics.app import app
from forensics.commands.common import BROKER_MAP, CLUSTER, MASTER, QUIET, TZ, check_tz, default_cluster
from forensics.errors import UserError


@app.command("replay")
def replay_cmd(
    sources: list[str] = typer.Argument(..., help="Log folders, archives, files, ZooKeeper data dirs, captures."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder: partition_timeline/, replay.json."),
    set_: list[str] = typer.Option(None, "--set", help="Override a config for the replay: KEY=VALUE or "
                                   "topic:NAME.KEY=VALUE (repeatable)."),
    tz: str = TZ,
    cluster: str = CLUSTER,
    broker_map: list[str] = BROKER_MAP,
    master: str = MASTER,
    quiet: bool = QUIET,
) -> int:
    """Re-run the controller's decisions over the trace and reconstruct every partition's leader/ISR timeline.

    Example: kafka-forensics replay sample_logs/rf1_broker_kill --out ./replayed
    """
    from forensics.pipeline import analyse, write_timeline
    from forensics.progress import Progress
    from replay_engine.api import replay
    from replay_engine.common.config import parse_overrides

    tz = check_tz(tz)
    try:
        overrides, topic_overrides = parse_overrides(set_)
    except ValueError as exc:
        raise UserError(f"--set: {exc}") from None
    progress = Progress(not quiet)
    analysis = analyse(sources, master=master, tz=tz, cluster=default_cluster(sources, cluster),
                       broker_map=broker_map, progress=progress)
    try:
        results = replay(analysis.events, overrides, topic_overrides)
    finally:
        analysis.close()
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for res in results for r in res.timeline_rows()]
    write_timeline(rows, out / "partition_timeline")
    docs = [res.to_json() for res in results]
    doc = docs[0] if len(docs) == 1 else {"clusters": docs}
    told = analysis.ingest.summary_json.get("clusters_told_apart")
    if told:
        doc["several_clusters"] = told
    (out / "replay.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    for t in told or []:
        print(t["statement"])
        for f in t["findings"]:
            print(f"  {f['text']}")
    for res in results:
        ag = res.agreement()
        ratio = f"{ag['ratio']:.2%}" if ag["ratio"] is not None else "n/a"
        print(f"cluster {res.cluster}: {len(res.decisions)} decisions replayed, agreement {ag['agreed']}/"
              f"{ag['compared']} ({ratio}), {len(res.leaderless)} leaderless interval(s) -> {out}")
    return 0
