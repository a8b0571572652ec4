"""Events from the JVM to Python workers (``mapInArrow``): Spark 4's default batch limits against the sessions'.

Spark 4.0 stops an Arrow batch to Python at 256 MB (``spark.sql.execution.arrow.maxBytesPerBatch``,
SPARK-51316) by asking its ArrowWriter for the batch's size after every row. With list columns (the
events' ``isr`` and ``replicas``) that call walks the batch written so far, so a batch of n rows costs
n squared. ``forensics/spark.py`` sets the byte limit to Int.MaxValue (Spark's "none": the size is not
asked then) and bounds batches by rows (``ARROW_BATCH_ROWS``). Measured here on an events table (an
audit's ``tables/events`` or an ingest's ``events``), in one session: the rows phase 1 reads (cluster-wide
events and controller records), cached on one partition, then one task streaming them to a Python function
that counts them, under each setting in turn. The baseline is Spark's default in the same run.

    python benchmarks/arrow_batch_bench.py --events OUT/tables/events [--runs 3] [--record]
"""
from __future__ import annotations

import argparse
import time

from _common import machine, med, now_utc, record, runs_text

SECTION = "## Arrow batches to Python (Spark 4's per-row byte check)"
SETTINGS = [  # (label, maxBytesPerBatch, maxRecordsPerBatch (None: the session's), lists sent as text)
    ("Spark 4 default (256 MB checked per row, 10,000 rows)", "256m", "10000", False),
    ("no byte check, 10,000 rows", str(2**31 - 1), "10000", False),
    ("sessions' setting (no byte check, ARROW_BATCH_ROWS rows)", None, None, False),
    ("byte check kept, lists as text (isr, replicas joined)", "256m", "10000", True),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", required=True, help="a Parquet events table (audit tables/events, ingest events)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--record", action="store_true", help="append the result to its section of benchmarks/journal/")
    args = ap.parse_args()

    import pyarrow as pa
    from pyspark.sql import functions as F

    from forensics.spark import ARROW_BATCH_ROWS, get_spark
    from replay_engine.sharding.cluster_pass import RECORD_EVENT_TYPES

    spark = get_spark("local[2]")
    ev = spark.read.parquet(args.events)
    sel = ev.where(F.col("topic").isNull() | F.col("partition").isNull()
                   | F.col("event_type").isin(*RECORD_EVENT_TYPES))
    sel = sel.repartition(1).persist()
    rows = sel.count()
    as_text = sel.withColumn("isr", F.concat_ws(",", F.col("isr").cast("array<string>"))) \
                 .withColumn("replicas", F.concat_ws(",", F.col("replicas").cast("array<string>")))

    def count(batches):
        n = k = 0
        for b in batches:
            n, k = n + b.num_rows, k + 1
        yield pa.RecordBatch.from_pydict({"rows": [n], "batches": [k]})

    ours = (spark.conf.get("spark.sql.execution.arrow.maxBytesPerBatch"),
            spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch"))
    lines, base = [], None
    for label, max_bytes, max_rows, lists_as_text in SETTINGS:
        spark.conf.set("spark.sql.execution.arrow.maxBytesPerBatch", max_bytes or ours[0])
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", max_rows or ours[1])
        df = as_text if lists_as_text else sel
        walls = []
        for _ in range(args.runs):
            t = time.perf_counter()
            got = df.mapInArrow(count, "rows long, batches long").collect()[0]
            walls.append(time.perf_counter() - t)
            assert got["rows"] == rows, (got, rows)
        m = med(walls)
        base = base or m
        lines.append(f"  - {label}: median {m:.2f}s ({runs_text(walls, '{:.2f}')}), {got['batches']:,} batches: "
                     f"**{base / m:.1f}x** the default's speed")
    spark.conf.set("spark.sql.execution.arrow.maxBytesPerBatch", ours[0])
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", ours[1])
    head = (f"- {now_utc()}, {machine()}. {rows:,} events (cluster-wide events and controller records of "
            f"`{args.events}`), one task, `local[2]`; ARROW_BATCH_ROWS = {ARROW_BATCH_ROWS:,}.")
    text = "\n".join([head, *lines, "  Command: `.venv/bin/python benchmarks/arrow_batch_bench.py --events EVENTS "
                      f"--runs {args.runs}{' --record' if args.record else ''}`"])
    print(text)
    if args.record:
        record(SECTION, text)


if __name__ == "__main__":
    main()
