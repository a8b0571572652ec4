"""Several clusters in one folder, told apart in the audit as ``postmortem`` tells them
(``forensics.pipeline.split_clusters``: ``replay_engine.folders.clusters.tell_clusters``, the one implementation).

The driver never holds the events. A folder-cluster is told apart only when its start-up lines may show several
(``may_hold_several``, asked of its ``cluster_identity`` and ``broker_startup`` rows alone). For those, one Spark
task per folder runs ``tell_clusters`` over a narrow projection of its rows (the columns it reads; the text of a line
cut to what a citation shows; a detail only where it reads one), without the copies of a log entry that
``postmortem`` drops first (``drop_log_copies``: found here by a window over the copy key). The task returns a
small mapping: per file, ranges of rows in the file's order (``ROW_KEY``) -> the cluster they belong to (a copy goes
with the entry it repeats; rows no evidence places get none), and what told them apart. The mapping is applied to
the events by a broadcast range join, no Python per row; rows it names no cluster for are left out of every replay,
as ``postmortem`` leaves them out, and the record's findings count them with their file and position.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.compute as pc

from replay_engine.folders.parts import CLUE
from replay_engine.folders.clusters import CLUE_TYPES, Told, may_hold_several, tell_clusters

# The order of a file's rows the ranges are cut in, each column with the value that stands for a null (a row's
# (position, entry) is one line's; the rest tells apart the events one line gave).
ROW_KEY = (("source_pos", 0), ("source_sub", 0), ("event_type", ""), ("topic", ""), ("partition", -1),
           ("subject_broker", -1))
# Events whose detail ``tell_clusters`` reads (replay_engine.folders.parts); of the others only an incarnation id
DETAIL_TYPES = (CLUE, "broker_startup", "broker_registered", "broker_fatal_error", "kraft_leader_change")
# What a citation shows of a line (replay_engine.folders.clusters._cite)
CITED_CHARS = 300
_KEY_TYPES = {"source_pos": pa.int64(), "source_sub": pa.int32(), "event_type": pa.string(), "topic": pa.string(),
              "partition": pa.int32(), "subject_broker": pa.int32()}
MAPPING = pa.schema([pa.field("base", pa.string()), pa.field("file", pa.string())]
                    + [pa.field(f"{end}_{k}", _KEY_TYPES[k]) for end in ("lo", "hi") for k, _ in ROW_KEY]
                    + [pa.field("name", pa.string()), pa.field("told", pa.string())])


@dataclass
class Split:
    events: Any  # the events DataFrame, each row under the cluster it belongs to (rows placed nowhere left out)
    told: list[dict[str, Any]] = field(default_factory=list)  # per folder told apart: Told.record
    names: dict[str, list[str]] = field(default_factory=dict)  # folder -> the clusters it holds


def candidates(events, clusters: Iterable[str]) -> list[str]:
    """The folder-clusters whose start-up lines may show several clusters (a few rows per process start)."""
    from pyspark.sql import functions as F

    from parsers.schema import event_from_row

    rows = (events.where(F.col("cluster").isin(*sorted(clusters)) & F.col("event_type").isin(*CLUE_TYPES))
            .select("cluster", "event_type", "detail", "source_file", "subject_broker").toArrow().to_pylist())
    by: dict[str, list] = {}
    for r in rows:
        by.setdefault(r["cluster"], []).append(event_from_row(r))
    return sorted(c for c, evs in by.items() if may_hold_several(evs))


def tell_input(events, clusters: list[str]):
    """The rows ``tell_clusters`` reads of these folder-clusters, narrow, with each copy of a log entry marked and
    pointing at the entry it repeats (``forensics.pipeline.drop_log_copies``: the same broker, time, text, entry and
    event type in another file; the entry kept is the first by file, then position)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    ev = events.where(F.col("cluster").isin(*clusters) & (F.col("event_type") != "zk_txn"))
    copyable = ((F.col("source_kind") == "broker_log") & F.col("broker_id").isNotNull() & F.col("raw").isNotNull()
                & F.col("source_file").isNotNull())
    w = Window.partitionBy("cluster", "broker_id", "ts", "raw", F.coalesce("source_sub", F.lit(0)), "event_type")
    first = F.min(F.struct(F.col("source_file").alias("f"), F.coalesce("source_pos", F.lit(0)).alias("p"),
                           F.coalesce("source_sub", F.lit(0)).alias("s"))).over(w)
    ev = ev.withColumn("_first", F.when(copyable, first))
    detail = F.when(F.col("event_type").isin(*DETAIL_TYPES) | F.col("detail").contains('"incarnation_id"'),
                    F.col("detail"))
    return ev.select(
        "cluster", "event_type", F.unix_micros("ts").alias("ts"), "source_kind", "source_file", "source_pos",
        "source_sub", "broker_id", "subject_broker", "controller_epoch", "topic", "partition",
        detail.alias("detail"), F.substring(F.substring_index("raw", "\n", 1), 1, CITED_CHARS).alias("raw"),
        F.when(F.col("_first.f") != F.col("source_file"), F.col("_first")).alias("_copy_of"))


def _row_key(r: dict[str, Any]) -> tuple:
    return tuple(null if r[k] is None else r[k] for k, null in ROW_KEY)


def ranges(rows: list[dict[str, Any]], names: list[str | None]) -> list[tuple[str, tuple, tuple, str]]:
    """(file, first row key, last row key, cluster) of each run of a file's rows (in ``ROW_KEY`` order) that belong
    to one cluster; rows that belong to none make no range."""
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["source_file"] or "", _row_key(rows[i])))
    out: list[tuple[str, tuple, tuple, str]] = []
    run = None  # [file, lo, hi, name]
    for i in order:
        f, k, n = rows[i]["source_file"] or "", _row_key(rows[i]), names[i]
        if run is not None and (run[0], run[2]) == (f, k):
            continue  # rows no key tells apart go with the first of them (a range must not overlap the next)
        if run is not None and run[0] == f and run[3] == n:
            run[2] = k
            continue
        if run is not None and run[3] is not None:
            out.append(tuple(run))
        run = [f, k, k, n]
    if run is not None and run[3] is not None:
        out.append(tuple(run))
    return out


def tell_table(table: pa.Table) -> pa.Table:
    """One folder-cluster's rows (``tell_input``) -> its mapping (``MAPPING``): ranges of rows -> cluster, and a row
    (no file) holding what told them apart. No row when the evidence holds one cluster."""
    from forensics.pipeline import replay_order
    from parsers.schema import Event, load_detail

    rows = table.to_pylist()
    base = rows[0]["cluster"]
    events, at = [], []
    for i, r in enumerate(rows):
        if r["_copy_of"] is None:
            d = r["detail"]
            events.append(Event(r["event_type"], cluster=base, ts=r["ts"], source_kind=r["source_kind"],
                                source_file=r["source_file"], source_pos=r["source_pos"],
                                source_sub=r["source_sub"] or 0, broker_id=r["broker_id"],
                                subject_broker=r["subject_broker"], controller_epoch=r["controller_epoch"],
                                topic=r["topic"], partition=r["partition"], detail=load_detail(d) if d else None,
                                raw=r["raw"]))
            at.append(i)
    # postmortem's order (forensics.pipeline.collect_events), ties by the rest of the row's key
    order = sorted(range(len(events)), key=lambda j: (replay_order(events[j]), _row_key(rows[at[j]])))
    told: Told = tell_clusters([events[j] for j in order], base)
    if not told.clusters:
        return pa.Table.from_pylist([], schema=MAPPING)
    names: list[str | None] = [None] * len(rows)
    kept: dict[tuple, str | None] = {}
    for j, name in zip(order, told.names):
        r = rows[at[j]]
        names[at[j]] = name
        kept.setdefault((r["source_file"], r["source_pos"] or 0, r["source_sub"] or 0, r["event_type"]), name)
    for i, r in enumerate(rows):
        c = r["_copy_of"]
        if c is not None:  # a copy goes where the entry it repeats went
            names[i] = kept.get((c["f"], c["p"], c["s"], r["event_type"]))
    out = [{"base": base, "file": None, "name": None, "told": json.dumps(told.record(base), sort_keys=True)}]
    for f, lo, hi, name in ranges(rows, names):
        row = {"base": base, "file": f, "name": name, "told": None}
        for (k, _), a, b in zip(ROW_KEY, lo, hi):
            row[f"lo_{k}"], row[f"hi_{k}"] = a, b
        out.append(row)
    return pa.Table.from_pylist(out, schema=MAPPING)


def _key(cols) -> Any:
    from pyspark.sql import functions as F

    return F.struct(*[F.coalesce(c, F.lit(null)).alias(k) for c, (k, null) in zip(cols, ROW_KEY)])


def split_clusters(spark, events, clusters: Iterable[str]) -> Split:
    """``events`` (folder-clusters ``clusters``, and maybe others) with each folder that holds several clusters
    told apart as ``postmortem`` tells them; the rest unchanged."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    from forensics.audit.streamed_groups import apply_in_groups

    todo = candidates(events, clusters)
    if not todo:
        return Split(events)
    got = apply_in_groups(tell_input(events, todo), ("cluster",), tell_table, MAPPING, len(todo)).toArrow()
    told = sorted((json.loads(t) for t in got.column("told").to_pylist() if t is not None),
                  key=lambda r: r["folder"])
    split = [r["folder"] for r in told]
    if not split:
        return Split(events)
    ranged = got.filter(pc.is_valid(got.column("file"))).to_pylist()
    mapping = spark.createDataFrame([tuple(r[n] for n in MAPPING.names) for r in ranged], from_arrow_schema(MAPPING))
    ev = events.where(F.col("cluster").isin(*split) & (F.col("event_type") != "zk_txn"))
    m = F.broadcast(mapping.drop("told"))
    key = _key([ev[k] for k, _ in ROW_KEY])
    on = ((ev["cluster"] == m["base"]) & (F.coalesce(ev["source_file"], F.lit("")) == m["file"])
          & (key >= _key([m[f"lo_{k}"] for k, _ in ROW_KEY])) & (key <= _key([m[f"hi_{k}"] for k, _ in ROW_KEY])))
    renamed = ev.join(m, on, "inner").select(*[m["name"].alias(c) if c == "cluster" else ev[c] for c in events.columns])
    rest = events.where(~F.col("cluster").isin(*split))
    return Split(rest.unionByName(renamed), told, {r["folder"]: [c["name"] for c in r["clusters"]] for r in told})
