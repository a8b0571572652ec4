"""Events staged as Parquet by the tasks that parsed them, for a Spark master on this machine.

Handing a whole file's events back through ``mapInArrow`` makes the JVM convert every row and
cache it before anything reads it. When the driver and the executors share one filesystem (a
``local`` master), a task can write its files' events as Parquet itself and return only the small
rows (quarantined lines, summaries); Spark then reads the staged files as it reads any Parquet,
only when asked. On the real-format corpus (430 MB, local[2]) the ingest stage's JVM CPU fell from
~11 to ~6 s in a fresh session (3.4 -> 1.4 s warm); the sort and write of the events then read the
staged files twice (range sampling, then the shuffle) and give ~2 s of that back. Any other master
keeps the Arrow path, and so do ``KAFKA_FORENSICS_STAGE_EVENTS=0`` (``forensics.ingest.STAGE_EVENTS``) and a
``spark.sql.files.maxPartitionBytes`` below ``MIN_SPLIT_BYTES`` (``split_fits``).
Only the driver uses this module; the tasks write with ``forensics.stage_writer`` (whole files, the parts
of big files, sorted exports), and ``forensics.stage_output`` writes the ``ingest`` command's events from
the staged files without Spark's sort.

The staging folder lives under Spark's own temporary directory on the driver, one per ingest,
removed by ``forensics.ingest.release`` or, failing that, when this interpreter exits.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile

from parsers.schema import FIELD_NAMES, SPARK_DDL, dump_detail

SUFFIX = ".parquet"
# The columns the staged events of a file read by parts carry until the driver settles them (forensics.stage_writer).
PART_DDL = ", `_attr` tinyint, `_src` int"

_LOCAL_MASTER = re.compile(r"local(\[[^\]]*\])?")
_live: set[str] = set()


def shares_filesystem(master: str | None) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local[N,F]``: executors are threads of the driver's JVM.
    (``local-cluster`` and every cluster manager may run executors elsewhere.)"""
    return bool(master) and _LOCAL_MASTER.fullmatch(master) is not None


# Spark reads the staged files in splits of spark.sql.files.maxPartitionBytes, whatever the read's
# options: a split far below a file's size makes one read task per split, nearly all of them empty
# (1 byte, as a test sets it to get one input file per task, made 168,363 tasks of a 168 kB file).
MIN_SPLIT_BYTES = 1 << 20


def split_fits(max_partition_bytes: int) -> bool:
    """Whether staged files read back in splits of this size make a sane number of tasks."""
    return max_partition_bytes >= MIN_SPLIT_BYTES


def staged_name(task: int, index: int) -> str:
    """The file of the ``index``-th file of task ``task``: fixed by the plan, so a retried task
    overwrites its own attempt's file instead of adding one."""
    return f"part-{task:05d}-{index:05d}{SUFFIX}"


def new_dir(spark) -> str:
    """A fresh staging folder under the driver's Spark temporary directory (Spark removes that one
    at JVM exit too), or under the system's temporary directory when Spark has none to give."""
    try:
        parent = spark.sparkContext._jvm.org.apache.spark.SparkFiles.getRootDirectory()
    except Exception:  # noqa: BLE001 - any failure to ask the JVM: fall back on the driver's own tmp
        parent = None
    if not parent or not os.path.isdir(parent):
        parent = tempfile.gettempdir()
    path = tempfile.mkdtemp(prefix="kf-staged-events-", dir=parent)
    _live.add(path)
    return path


def read(spark, path: str, fixups=None):
    """The staged events as a DataFrame of the canonical columns, or None when no task staged any; with
    ``fixups`` (``forensics.stage_output.Fixups``), the events of files read by parts attributed to their
    file's broker and settled across their parts, as ``stage_output.apply_fixups`` does (the folder's
    broker, ``fixups.fill``, is left to the caller, which gives it to every event alike)."""
    from pyspark.sql import functions as F

    if not any(n.endswith(SUFFIX) and not n.startswith((".", "_")) for n in os.listdir(path)):
        return None
    # Arrow's timestamps are proleptic Gregorian and a file not written by Spark says nothing about its
    # calendar: read the values as they are, whatever spark.sql.parquet.datetimeRebaseModeInRead says
    # (Spark 4's default agrees; a spark-defaults.conf may not, and EXCEPTION refuses a stamp before 1900).
    df = spark.read.schema(SPARK_DDL + PART_DDL).option("datetimeRebaseMode", "CORRECTED").parquet(path)
    brokers = [] if fixups is None else [
        (f, i, b) for f, got in sorted(fixups.brokers.items())
        for i, b in (enumerate(got) if isinstance(got, list) else [(0, got)]) if b is not None]
    if brokers:
        bdf = spark.createDataFrame(brokers, "_bfile string, _bsrc int, _broker int")
        df = df.join(F.broadcast(bdf), (F.col("source_file") == F.col("_bfile"))
                     & (F.coalesce(F.col("_src"), F.lit(0)) == F.col("_bsrc")), "left")
        attr = F.coalesce(F.col("_attr"), F.lit(0))
        has = F.col("_broker").isNotNull()
        df = df.withColumn("broker_id", F.when((attr >= 1) & has, F.col("_broker")).otherwise(F.col("broker_id"))) \
            .withColumn("subject_broker", F.when((attr == 2) & has, F.col("_broker")).otherwise(F.col("subject_broker")))
    changes = [] if fixups is None else [
        (f, pos, sub, vals.get("event_type"), vals.get("subject_broker"), vals.get("controller_epoch"),
         dump_detail(vals["detail"]) if "detail" in vals else None,
         "event_type" in vals, "subject_broker" in vals, "controller_epoch" in vals, "detail" in vals)
        for f, by_event in sorted(fixups.events.items()) for (pos, sub), vals in sorted(by_event.items())]
    if changes:
        cdf = spark.createDataFrame(changes, "_cfile string, _cpos bigint, _csub int, _c_event_type string, "
                                             "_c_subject_broker int, _c_controller_epoch int, _c_detail string, "
                                             "_s_event_type boolean, _s_subject_broker boolean, "
                                             "_s_controller_epoch boolean, _s_detail boolean")
        df = df.join(F.broadcast(cdf), (F.col("source_file") == F.col("_cfile")) & (F.col("source_pos") == F.col("_cpos"))
                     & (F.col("source_sub") == F.col("_csub")), "left")
        for name in ("event_type", "subject_broker", "controller_epoch", "detail"):
            df = df.withColumn(name, F.when(F.coalesce(F.col(f"_s_{name}"), F.lit(False)), F.col(f"_c_{name}"))
                               .otherwise(F.col(name)))
    return df.select(*FIELD_NAMES)


def remove(path: str | None) -> None:
    if path is None:
        return
    shutil.rmtree(path, ignore_errors=True)
    _live.discard(path)


@atexit.register
def _remove_left_over() -> None:
    for path in sorted(_live):
        shutil.rmtree(path, ignore_errors=True)
    _live.clear()
