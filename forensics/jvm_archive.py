"""A class-data archive for the driver's JVM (JDK AppCDS, JEP 350), so that Spark starts faster.

Starting Spark spends most of its seconds loading and verifying the same ~20,000 classes on every run.
``kafka-forensics warm-up`` runs one postmortem with ``-XX:ArchiveClassesAtExit`` and keeps the archive
the JVM writes when it exits; later driver JVMs map it with ``-XX:SharedArchiveFile`` and skip that work.
Measured on the bundled sample: postmortem 12.6 -> 9.2 s (benchmarks/journal/postmortem.md).

The archive is only an accelerator. It is keyed by what it depends on (the JDK and the class path), built
into a temporary name and renamed only after its JVM exited cleanly, and a JVM that cannot use it (a
JDK updated in place, another class path) says so on its ``cds`` log, which is silenced, and starts as
it would without. ``KAFKA_FORENSICS_JVM_ARCHIVE=0`` turns it off; ``KAFKA_FORENSICS_CACHE`` moves it
(default ``$XDG_CACHE_HOME/kafka-forensics``, else ``~/.cache/kafka-forensics``). Executors on a
cluster start their own JVMs and are not touched.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
from pathlib import Path

OFF_ENV = "KAFKA_FORENSICS_JVM_ARCHIVE"
CACHE_ENV = "KAFKA_FORENSICS_CACHE"
# Set by ``warm-up`` for its child only: the driver JVM writes its archive there on exit.
DUMP_ENV = "KAFKA_FORENSICS_JVM_ARCHIVE_DUMP"
PREFIX = "spark-driver-"
# The JVM's cds messages (a class it cannot archive, an archive it cannot map) go to stdout by default,
# which is the command's output.
QUIET = "-Xlog:cds*=off"


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-forensics"


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    java = Path(home) / "bin" / "java" if home else (Path(p) if (p := shutil.which("java")) else None)
    if java is None or not java.exists():
        return None
    return java.resolve()


def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return f"{path}:-"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


# What Spark's launcher adds to the driver's class path besides its jars (launcher AbstractCommandBuilder.buildClassPath).
CLASS_PATH_ENVS = ("SPARK_CONF_DIR", "HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_DIST_CLASSPATH", "SPARK_CLASSPATH")


def jars_dir() -> Path | None:
    try:
        import pyspark
    except ImportError:
        return None
    return (Path(pyspark.__file__).parent / "jars").resolve()


def archive_key() -> str | None:
    """What the archive depends on: the JVM build (its binary and libjvm) and the driver's class path: Spark's
    jars, where they are, and what the launcher adds. The JVM maps an archive only under the class path it was
    written with, and two installs of one Spark (two virtualenvs) differ only in where: with one key, either's
    `warm-up` replaced the other's archive with one its JVMs refuse ("shared class paths mismatch", silenced),
    and every start loaded Spark's classes again (the ingest's JVM on a 0.27 GB corpus: 10.4-12.5 CPU s, 6.1
    with its own archive; benchmarks/journal/ingest.md, 2026-11-29). None without Java or Spark."""
    java = _java()
    jars = jars_dir()
    if java is None or jars is None:
        return None
    import pyspark

    parts = [platform.machine(), pyspark.__version__, _stamp(java), str(jars)]
    parts += [f"{k}={os.environ.get(k, '')}" for k in CLASS_PATH_ENVS]
    parts += [_stamp(p) for p in sorted(java.parent.parent.glob("lib/server/libjvm.*"))]
    parts += sorted(f"{p.name}:{p.stat().st_size}" for p in jars.glob("*.jar")) if jars.is_dir() else ["no jars"]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def owner_file(archive: Path) -> Path:
    """Beside an archive: the jars folder of the install that wrote it (what `warm-up` may prune by)."""
    return archive.with_suffix(".owner")


def archive_path() -> Path | None:
    key = archive_key()
    return None if key is None else cache_dir() / f"{PREFIX}{key}.jsa"


def _usable_in_options(path: Path) -> bool:
    # Spark's launcher splits extraJavaOptions on blanks: a path with one would break the JVM's command line.
    return not any(c.isspace() for c in str(path))


def driver_options() -> str:
    """JVM options for the driver: write the archive (warm-up's child), map it (when built), or nothing."""
    if os.environ.get(OFF_ENV) == "0":
        return ""
    dump = os.environ.get(DUMP_ENV)
    if dump:
        return f"-XX:ArchiveClassesAtExit={dump} {QUIET}" if _usable_in_options(Path(dump)) else ""
    path = archive_path()
    if path is None or not path.is_file() or not _usable_in_options(path):
        return ""
    return f"-XX:SharedArchiveFile={path} {QUIET}"


def in_use() -> Path | None:
    """The archive the next driver JVM will map, if any (what the benchmarks report)."""
    path = archive_path()
    return path if driver_options().startswith("-XX:SharedArchiveFile") and path is not None else None
