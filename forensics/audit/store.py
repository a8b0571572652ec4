"""The audit's Parquet tables: ``DIR/tables/<table>/cluster=<c>/date=<d>/part-00000.parquet``.

One file per (cluster, date) directory, rows in a fixed order, a fixed name: the same inputs give
the same bytes whatever the Spark parallelism. A directory is replaced whole (written to
``DIR/_staging`` first, then moved in), so a re-run touches only the days that changed and a
reader never sees half a day. Directory names escape values the way Spark and Hive do, so
``spark.read.parquet(DIR/tables/events)`` reads them back.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from forensics.audit.streamed_groups import apply_in_groups

PART_FILE = "part-00000.parquet"
# What a table keeps in each file's footer, told from the file's rows (the events: forensics.audit.plan_groups)
Footer = Callable[[pa.Table], dict]
_WRITTEN = pa.schema([pa.field("cluster", pa.string()), pa.field("date", pa.string()), pa.field("path", pa.string())])
UNKNOWN_DATE = "unknown"  # events without a time (a znode dump's state) keep a partition of their own
# The characters Hive/Spark escape in partition directory names (ExternalCatalogUtils.escapePathName).
_ESCAPE = set(chr(c) for c in range(0x01, 0x20)) | set('"#%\'*/:=?\\\x7f{[]^')


def dated(df, column: str):
    """``df`` with the ``date`` its rows are kept under: the UTC day of ``column``, or UNKNOWN_DATE."""
    from pyspark.sql import functions as F

    return df.withColumn("date", F.coalesce(F.date_format(column, "yyyy-MM-dd"), F.lit(UNKNOWN_DATE)))


def escape(value: str) -> str:
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPE else ch for ch in value)


def unescape(name: str) -> str:
    out, i = [], 0
    while i < len(name):
        if name[i] == "%" and i + 2 < len(name):
            try:
                out.append(chr(int(name[i + 1:i + 3], 16)))
                i += 3
                continue
            except ValueError:
                pass
        out.append(name[i])
        i += 1
    return "".join(out)


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(1 << 20), fb.read(1 << 20)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def _group_writer(stage: str, data_schema: pa.Schema, sort_keys: list[str], footer: Footer | None = None):
    """The executor side of ``Store.write_spark``: one (cluster, date) group -> one sorted Parquet file."""

    def write(table: pa.Table) -> pa.Table:
        c, d = table.column("cluster")[0].as_py(), table.column("date")[0].as_py()
        meta = footer(table) if footer is not None else None
        table = table.sort_by([(k, "ascending") for k in sort_keys]).select(data_schema.names).cast(data_schema)
        if meta:
            table = table.replace_schema_metadata(meta)
        path = Path(stage) / f"cluster={escape(c)}" / f"date={escape(d)}" / PART_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path, compression="zstd")
        return pa.table({"cluster": [c], "date": [d], "path": [str(path)]}, schema=_WRITTEN)

    return write


def _footer(path: Path) -> pq.FileMetaData | None:
    try:
        return pq.read_metadata(path)
    except (OSError, pa.ArrowException):
        return None


class Store:
    def __init__(self, out: Path):
        self.out = out
        self.root = out / "tables"
        self.staging = out / "_staging"

    def table(self, name: str) -> Path:
        return self.root / name

    def partition_dir(self, name: str, cluster: str, date: str) -> Path:
        return self.table(name) / f"cluster={escape(cluster)}" / f"date={escape(date)}"

    def partitions(self, name: str) -> set[tuple[str, str]]:
        found = set()
        base = self.table(name)
        if not base.exists():
            return found
        for cdir in base.iterdir():
            if not cdir.is_dir() or not cdir.name.startswith("cluster="):
                continue
            for ddir in cdir.iterdir():
                if ddir.is_dir() and ddir.name.startswith("date=") and (ddir / PART_FILE).exists():
                    found.add((unescape(cdir.name[len("cluster="):]), unescape(ddir.name[len("date="):])))
        return found

    def has(self, name: str) -> bool:
        return bool(self.partitions(name))

    def _drop(self, name: str, parts: Iterable[tuple[str, str]]) -> None:
        for c, d in parts:
            shutil.rmtree(self.partition_dir(name, c, d), ignore_errors=True)
        base = self.table(name)
        if base.exists():
            for cdir in list(base.iterdir()):
                if cdir.is_dir() and not any(cdir.iterdir()):
                    cdir.rmdir()

    def _install(self, name: str, c: str, d: str, src: Path) -> None:
        dest = self.partition_dir(name, c, d)
        if _same_bytes(src, dest / PART_FILE):
            src.unlink()  # unchanged: the day keeps its file (and its mtime), as an incremental run should
            return
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.iterdir():
            old.unlink() if old.is_file() else shutil.rmtree(old)
        os.replace(src, dest / PART_FILE)

    def write_spark(self, df, name: str, sort_keys: list[str], replace: set[tuple[str, str]] | None = None,
                    replace_clusters: set[str] | None = None, footer: Footer | None = None) -> set[tuple[str, str]]:
        """Write ``df`` (with ``cluster`` and ``date`` columns) as whole partitions (``footer``: metadata
        each file keeps, told from its rows).

        Each (cluster, date) group is sorted and written by one executor task with pyarrow: Spark's own
        Parquet writer lists column encodings in a JVM hash order, so its bytes differ from run to run.
        Partitions written replace their old selves; ``replace`` / ``replace_clusters`` name what this
        write is the new truth for, so their partitions that got no rows are removed."""
        from pyspark.sql.pandas.types import to_arrow_schema

        stage = self.staging / name
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True, exist_ok=True)
        data_schema = to_arrow_schema(df.drop("cluster", "date").schema)
        # streamed: a busy cluster's day is more rows than one off-heap Arrow batch holds (streamed_groups)
        partitions = int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))
        done = apply_in_groups(df, ("cluster", "date"), _group_writer(str(stage), data_schema, list(sort_keys), footer),
                               _WRITTEN, partitions).collect()
        written: set[tuple[str, str]] = set()
        for r in sorted(done, key=lambda r: (r["cluster"], r["date"])):
            self._install(name, r["cluster"], r["date"], Path(r["path"]))
            written.add((r["cluster"], r["date"]))
        shutil.rmtree(stage, ignore_errors=True)
        stale = set(replace or ()) - written
        if replace_clusters:
            stale |= {p for p in self.partitions(name) if p[0] in replace_clusters and p not in written}
        self._drop(name, stale)
        return written

    def files(self, name: str, clusters: Iterable[str]) -> dict[str, list[Path]]:
        """Each listed cluster's files of the table, by cluster, in date order."""
        out: dict[str, list[Path]] = {}
        for c in sorted(set(clusters)):
            cdir = self.table(name) / f"cluster={escape(c)}"
            out[c] = sorted(cdir.glob(f"date=*/{PART_FILE}")) if cdir.is_dir() else []
        return out

    def footers(self, name: str, clusters: Iterable[str]) -> dict[str, list[pq.FileMetaData | None]]:
        """Each listed cluster's files' Parquet footers, by cluster (None for a file whose footer is unreadable:
        reading its rows will say why)."""
        return {c: [_footer(f) for f in files] for c, files in self.files(name, clusters).items()}

    def write_arrow(self, rows: list[dict], schema: pa.Schema, name: str, sort_key, replace_clusters: set[str]) -> None:
        """A small table written by the driver, partition by partition (``rows`` carry cluster and date)."""
        by_part: dict[tuple[str, str], list[dict]] = {}
        for r in rows:
            by_part.setdefault((r["cluster"], r["date"]), []).append(r)
        stage = self.staging / name
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True, exist_ok=True)
        data_fields = [f for f in schema if f.name not in ("cluster", "date")]
        for i, ((c, d), rs) in enumerate(sorted(by_part.items())):
            rs.sort(key=sort_key)
            table = pa.Table.from_arrays([pa.array([r.get(f.name) for r in rs], type=f.type) for f in data_fields],
                                         schema=pa.schema(data_fields))
            tmp = stage / f"{i}.parquet"
            pq.write_table(table, tmp, compression="zstd")
            self._install(name, c, d, tmp)
        shutil.rmtree(stage, ignore_errors=True)
        self._drop(name, {p for p in self.partitions(name) if p[0] in replace_clusters and p not in by_part})
