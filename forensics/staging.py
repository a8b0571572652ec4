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
Only the driver uses this module; the tasks write with ``forensics.ingest.stage_events``.

The staging folder lives under Spark's own temporary directory on the driver, one per ingest,
removed by ``forensics.ingest.release`` or, failing that, when this interpreter exits.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile

from parsers.schema import SPARK_DDL

SUFFIX = ".parquet"

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


def read(spark, path: str):
    """The staged events as a DataFrame of the canonical columns, or None when no task staged any."""
    if not any(n.endswith(SUFFIX) and not n.startswith((".", "_")) for n in os.listdir(path)):
        return None
    # Arrow's timestamps are proleptic Gregorian and a file not written by Spark says nothing about its
    # calendar: read the values as they are, whatever spark.sql.parquet.datetimeRebaseModeInRead says
    # (Spark 4's default agrees; a spark-defaults.conf may not, and EXCEPTION refuses a stamp before 1900).
    return spark.read.schema(SPARK_DDL).option("datetimeRebaseMode", "CORRECTED").parquet(path)


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
