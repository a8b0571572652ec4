"""The audit job: root -> new/changed files -> events table (only the affected days rewritten)
-> replay of the affected clusters on the executors -> derived tables, audit_summary.json, audit.html.

Output directory::

    DIR/manifest.json            what has been processed (see manifest.py)
    DIR/tables/<table>/cluster=<c>/date=<d>/part-00000.parquet
        events, partition_timeline, incidents, controller_changes, broker_availability
    DIR/clusters/<c>.json        each cluster's replay summary (kept for clusters a re-run does not touch)
    DIR/audit_summary.json, DIR/audit.html
"""
from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forensics.errors import UserError
from forensics.progress import Progress
from forensics.sources import Inputs, collect_inputs

from forensics.audit.cluster_split import split_clusters
from forensics.audit.layout import assign_clusters, file_day, in_days, is_remote, list_remote
from forensics.audit.manifest import Manifest
from forensics.audit.store import UNKNOWN_DATE, Store, dated

EVENT_SORT = ["ts", "source_file", "source_pos", "source_sub", "event_type", "topic", "partition", "subject_broker"]
TIMELINE_SORT = ["topic", "partition", "start", "end"]


@dataclass
class AuditOptions:
    root: str
    out: Path
    master: str | None = None
    since: str | None = None  # YYYY-MM-DD, inclusive
    until: str | None = None
    cluster: str | None = None
    shards: int | None = None
    tz: str = "UTC"


def events_table_schema() -> str:
    """The events table as Spark reads it back: the canonical fields and the directories' date (no job to
    infer a schema from the files' footers)."""
    from parsers.schema import SPARK_DDL

    return SPARK_DDL + ", `date` string"


def _state_path(out: Path, cluster: str) -> Path:
    from forensics.audit.store import escape

    return out / "clusters" / f"{escape(cluster)}.json"


def _load_states(out: Path) -> dict[str, dict[str, Any]]:
    states = {}
    d = out / "clusters"
    if d.exists():
        for f in sorted(d.glob("*.json")):
            try:
                st = json.loads(f.read_text())
            except (OSError, ValueError):
                continue
            states[st["cluster"]] = st
    return states


def _told_path(out: Path, folder: str) -> Path:
    from forensics.audit.store import escape

    return out / "clusters_told_apart" / f"{escape(folder)}.json"


def _write_told(out: Path, folders: list[str], told: list[dict[str, Any]]) -> None:
    """What told apart the clusters of each folder replayed (kept between runs, as the states are)."""
    records = {r["folder"]: r for r in told}
    for f in folders:
        path = _told_path(out, f)
        if f in records:
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(records[f], indent=1, sort_keys=True) + "\n")
        else:
            path.unlink(missing_ok=True)


def _load_told(out: Path) -> list[dict[str, Any]]:
    d = out / "clusters_told_apart"
    return [json.loads(f.read_text()) for f in sorted(d.glob("*.json"))] if d.exists() else []


def run_audit(opts: AuditOptions, progress: Progress | None = None) -> dict[str, Any]:
    from pyspark.sql import functions as F

    from forensics.audit import plan_groups
    from forensics.audit import tables as T
    from forensics.audit.distributed import replay_on_executors
    from forensics.audit.summary import audit_page, build_summary
    from forensics.commands.common import start_spark
    from forensics.ingest import run_ingest

    progress = progress or Progress(False)
    out = opts.out
    out.mkdir(parents=True, exist_ok=True)
    store = Store(out)
    manifest = Manifest.load(out / "manifest.json")
    work = Path(tempfile.mkdtemp(prefix="kf-audit-"))
    ingest = None
    try:
        spark = None
        if is_remote(opts.root):
            spark = start_spark(opts.master)
            inputs = list_remote(spark, opts.root)
        else:
            inputs = collect_inputs([opts.root], work / "extract")
        root_display = opts.root.rstrip("/") or opts.root
        files = [f for f in assign_clusters(inputs, root_display, opts.cluster)
                 if in_days(file_day(f.display), opts.since, opts.until)]

        def in_scope(entry: dict[str, Any]) -> bool:
            days = [d for _, d in entry.get("partitions", [])]
            return not days or any(in_days(None if d == UNKNOWN_DATE else d, opts.since, opts.until) for d in days)

        plan = manifest.plan(files, in_scope)
        progress.say(f"audit: {len(files)} file(s) under {opts.root}: {len(plan.process)} new or changed, "
                     f"{len(plan.skip)} unchanged, {len(plan.removed)} gone")
        if not files and not manifest.files:
            raise UserError(f"{opts.root}: no files to audit" +
                            (f" ({'; '.join(inputs.problems)})" if inputs.problems else ""))
        spark = spark or start_spark(opts.master)
        shards = opts.shards or max(2, spark.sparkContext.defaultParallelism)

        affected: set[tuple[str, str]] = set()
        run = {"files_processed": len(plan.process), "files_skipped": len(plan.skip), "files_removed": len(plan.removed),
               "files_with_errors": 0, "lines": 0, "events": 0, "unrecognized": 0, "quarantined": 0,
               "input_problems": list(inputs.problems), "days_rewritten": 0, "clusters_replayed": []}
        new_events = None
        file_parts: dict[str, list[tuple[str, str]]] = {}
        summaries: dict[str, dict[str, Any]] = {}
        if plan.process:
            ingest = run_ingest(spark, Inputs(plan.process, list(inputs.problems)), tz=opts.tz, progress=progress)
            for f in ingest.summary_json["files"]:
                summaries[f["path"]] = f
            t = ingest.summary_json["totals"]
            for k in ("lines", "events", "unrecognized", "quarantined", "files_with_errors"):
                run[k] = t[k]
            if ingest.events is not None:
                new_events = dated(ingest.events, "ts")
                for r in new_events.groupBy("source_file", "cluster", "date").count().collect():
                    file_parts.setdefault(r["source_file"], []).append((r["cluster"], r["date"]))
                    affected.add((r["cluster"], r["date"]))
        stale = set(plan.changed) | set(plan.removed)
        for disp in stale:
            affected.update(manifest.partitions_of(disp))

        if affected:
            progress.say(f"events: rewriting {len(affected)} (cluster, day) partition(s)")
            parts = spark.createDataFrame(sorted(affected), "cluster string, date string")
            combined = new_events.select(*[c for c in new_events.columns]) if new_events is not None else None
            if store.has("events"):
                old = (spark.read.schema(events_table_schema()).parquet(str(store.table("events")))
                       .join(F.broadcast(parts), ["cluster", "date"], "left_semi"))
                if stale:
                    old = old.where(~F.col("source_file").isin(*sorted(stale)))
                old = old.select(*(combined.columns if combined is not None else old.columns))
                # the new rows go to staging first: the old ones are read from the directories being replaced
                combined = old if combined is None else combined.unionByName(old)
            if combined is not None:
                store.write_spark(combined, "events", EVENT_SORT, replace=affected, footer=plan_groups.footer)
            run["days_rewritten"] = len(affected)
        clusters = sorted({c for c, _ in affected})  # the folder-clusters of the events table
        if clusters:
            events = (spark.read.schema(events_table_schema()).parquet(str(store.table("events")))
                      .where(F.col("cluster").isin(*clusters)))
            # a folder holding several clusters: each replayed alone, as postmortem does; the events table keeps
            # the folder's name, the replay's tables and states the told-apart clusters' (and their folder)
            split = split_clusters(spark, events, clusters)
            events = split.events
            for told in split.told:
                progress.say(f"audit: {told['statement']}")
            folder_of = {c: c for c in clusters} | {n: f for f, ns in split.names.items() for n in ns}
            names = sorted(folder_of)
            before = {c for c, st in _load_states(out).items() if st.get("folder", c) in folder_of.values()}
            every = set(names) | before
            written: list[frozenset] = []

            def write_timeline(timeline, replayed: frozenset) -> None:
                # the first write is the new truth for every cluster of the run, those left with no events too
                store.write_spark(dated(timeline, "start"), "partition_timeline", TIMELINE_SORT,
                                  replace_clusters=set(replayed) if written else every | replayed)
                written.append(replayed)

            whole = sorted(set(clusters) - set(split.names))
            groups = plan_groups.stored_groups(store, whole)
            if groups is not None and split.names:  # the stored groups count a folder's rows under its name
                told_names = sorted(n for ns in split.names.values() for n in ns)
                groups += plan_groups.spark_groups(events.where(F.col("cluster").isin(*told_names)))
            # the events read are those files' rows, so the shard tasks may read the files themselves
            dist = replay_on_executors(spark, events, shards, progress, groups, sink=write_timeline,
                                       files=store.files("events", whole) if groups is not None else None,
                                       whole_below_share=True)
            inc, ctl, brk = [], [], []
            (out / "clusters").mkdir(exist_ok=True)
            for c in sorted(every):
                m = dist.merged.get(c)
                if m is None:  # every event of the cluster was removed, or its folder is told apart otherwise now
                    _state_path(out, c).unlink(missing_ok=True)
                    continue
                inc += T.incident_rows(m)
                ctl += T.controller_rows(m)
                brk += T.broker_rows(m)
                st = T.cluster_state(m, dist.replayed_whole.get(c)) | {"folder": folder_of[c]}
                _state_path(out, c).write_text(json.dumps(st, indent=1, sort_keys=True) + "\n")
            _write_told(out, clusters, split.told)
            done = every
            store.write_arrow(inc, T.INCIDENTS, "incidents", lambda r: (r["start"] or 0, r["topic"], r["cause_kind"]),
                              done)
            store.write_arrow(ctl, T.CONTROLLER_CHANGES, "controller_changes", lambda r: (r["start"] or 0,), done)
            store.write_arrow(brk, T.BROKER_AVAILABILITY, "broker_availability",
                              lambda r: (r["broker"], r["start"] or 0), done)
            run["clusters_replayed"] = names
        if ingest is not None:
            from forensics.ingest import release

            release(ingest)
        for f in plan.process:
            manifest.record(f, file_parts.get(f.display, []), summaries.get(f.display, {}))
        for disp in plan.removed:
            manifest.forget(disp)
        manifest.save(out / "manifest.json")
        summary = build_summary(_load_states(out), run, _load_told(out))
        (out / "audit_summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
        (out / "audit.html").write_text(audit_page(summary))
        progress.say(f"wrote {out}/audit_summary.json, audit.html and tables/")
        return summary
    finally:
        if ingest is not None:
            from forensics.ingest import release

            release(ingest)  # again on success (a no-op); on a failure the cache and staged events go now
        shutil.rmtree(work, ignore_errors=True)
