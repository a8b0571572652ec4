"""The one place that builds a SparkSession.

Default master is ``local[*]``; ``--master`` wins, then ``spark-submit``'s own master when
``spark-submit`` launched us, then ``$SPARK_MASTER``, then ``spark.master`` from
``$SPARK_CONF_DIR/spark-defaults.conf``. Other ``SPARK_*``
settings are Spark's own and pass through. The session time zone is UTC so
timestamps never depend on the machine.
"""
from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path

from forensics.jvm_archive import driver_options
from forensics.staging import shares_filesystem


def _defaults_conf_sets(key: str) -> bool:
    """Does ``$SPARK_CONF_DIR/spark-defaults.conf`` set ``key``?"""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if not conf_dir:
        return False
    f = Path(conf_dir) / "spark-defaults.conf"
    try:
        return any(line.split()[:1] == [key] for line in f.read_text().splitlines())
    except OSError:
        return False


def resolve_master(master: str | None) -> str | None:
    if master:
        return master
    # spark-submit (YARN, Kubernetes) starts the JVM first and hands its gateway to Python through this
    # variable (pyspark/java_gateway.py: launch_gateway); its --master is in that JVM's conf, and an
    # explicit builder.master() would override it.
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        return None
    if os.environ.get("SPARK_MASTER"):
        return os.environ["SPARK_MASTER"]
    if _defaults_conf_sets("spark.master"):
        return None  # let Spark read it
    return "local[*]"


def _memory_set_elsewhere() -> bool:
    submit = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    return ("--driver-memory" in submit or "spark.driver.memory" in submit or bool(os.environ.get("SPARK_DRIVER_MEMORY"))
            or _defaults_conf_sets("spark.driver.memory"))


def local_driver_memory(master: str | None) -> str | None:
    """The JVM heap of a local master, which is driver and executors at once. Spark's default (1g) did not hold
    90 days of a 100,000-partition cluster (the shards' cached output and the shuffle's sort buffers: OutOfMemoryError
    at 1 GB); a quarter of the machine's memory, 1 to 8 GB, leaves the rest to the Python workers. $KAFKA_FORENSICS_DRIVER_MEMORY
    is taken as given; otherwise only for a local master not under spark-submit (its JVM is already running) whose
    memory nothing else set (spark-submit's --driver-memory, $SPARK_DRIVER_MEMORY, spark-defaults.conf)."""
    if os.environ.get("KAFKA_FORENSICS_DRIVER_MEMORY"):
        return os.environ["KAFKA_FORENSICS_DRIVER_MEMORY"]
    if not (master or "").startswith("local") or os.environ.get("PYSPARK_GATEWAY_PORT") or _memory_set_elsewhere():
        return None
    try:
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):
        return None
    return f"{max(1024, min(8192, total_mb // 4))}m"


def driver_jit_options(master: str | None, rows_in_python: bool = False) -> str:
    """The driver JVM's JIT: C1 only for a cluster master (standalone, YARN, Kubernetes), and for a local master
    whose caller says the rows stay in Python (``rows_in_python``: the ``ingest`` command over local files, whose
    tasks stage their events and write them with pyarrow, ``forensics.stage_output``). A cluster master's driver
    plans a few dozen queries and gathers small results; HotSpot's C2 compiler threads still spent 0.56-0.66 CPU s
    of each replay compiling Spark's analyser and planner in the fifth and sixth runs (benchmarks/journal/replay.md,
    standalone pair). A local ingest's JVM schedules tasks and reads back small rows, yet its C2 threads compiled
    for 10 of its 21.5 CPU s on a 280 MB rotated corpus (C1 only: JIT 1.9, JVM 12.8 CPU s; benchmarks/journal/
    ingest.md). Any other local master is left alone: its JVM is the executors too, and their per-row code needs
    C2."""
    if not master:
        return ""
    if not master.startswith("local") or (rows_in_python and shares_filesystem(master)):
        return "-XX:TieredStopAtLevel=1"
    return ""


def spark_type(schema):
    """An Arrow schema (``pyarrow.Schema``) as Spark's StructType, built in Python, for ``mapInArrow``. Given as a DDL
    string, a type is parsed by the JVM's SQL parser, whose first parse in a session is cold: the parse output's
    type 0.08-0.12 JVM CPU s once the session state is built (0.18-0.21 before), its StructType's JSON 0.01-0.02
    (benchmarks/journal/ingest.md, 2026-11-29)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


# Rows per Arrow batch between the JVM and Python workers (see get_spark: no byte limit, so a row limit).
ARROW_BATCH_ROWS = 1_000


def get_spark(master: str | None = None, app_name: str = "kafka-forensics", rows_in_python: bool = False):
    """Reuse the active session if there is one (tests share a single session). ``rows_in_python``: the caller's
    rows stay out of the JVM (``driver_jit_options``); it only matters to a JVM this call starts."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    log4j = resources.files("forensics").joinpath("resources/log4j2.properties")
    builder = SparkSession.builder.appName(app_name)
    m = resolve_master(master)
    if m:
        builder = builder.master(m)
    memory = local_driver_memory(m)
    if memory:
        builder = builder.config("spark.driver.memory", memory)
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j} -Dlog4j.configurationFile=file:{log4j}"
    # the driver maps the class archive that `warm-up` built, if any (forensics.jvm_archive)
    driver_opts = " ".join(x for x in (java_opts, driver_options(), driver_jit_options(m, rows_in_python)) if x)
    builder = (
        builder.config("spark.sql.session.timeZone", "UTC")
        # Parquet timestamps as int64 microseconds (the legacy INT96 reads back as nanoseconds elsewhere)
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.ui.enabled", os.environ.get("KAFKA_FORENSICS_SPARK_UI", "false"))
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", driver_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        # Spark 4.0 caps the Arrow batches it feeds to Python at 256 MB (SPARK-51316) by asking its ArrowWriter
        # for the batch's size after every row; with list columns (isr, replicas) that call walks the batch so
        # far, so a batch costs its rows squared: 1.4 M events through mapInArrow took 20 JVM CPU s against 2.5
        # without it (benchmarks/journal/ingest.md, Arrow batches). Int.MaxValue is Spark's own "no byte limit"
        # (BatchedPythonArrowInput.writeSizedBatch skips the size then), and batches are bounded by rows instead:
        # 1,000 events, each holding at most RAW_LIMIT of text and the details of one entry.
        .config("spark.sql.execution.arrow.maxBytesPerBatch", str(2**31 - 1))
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(ARROW_BATCH_ROWS))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.shuffle.partitions", os.environ.get("KAFKA_FORENSICS_SHUFFLE_PARTITIONS", "8"))
        .config("spark.sql.files.openCostInBytes", str(512 * 1024))
        # We pass explicit file lists: listing them with a Spark job costs seconds and buys nothing.
        .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "1000000")
        .config("spark.python.worker.reuse", "true")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
