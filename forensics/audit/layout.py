"""Which cluster and which day each file under the audit root belongs to.

Accepted layouts (documented in docs/audit.md):

- Hive style anywhere in the path: ``cluster=NAME/date=YYYY-MM-DD/broker=N/server.log.gz``;
- one folder per cluster: ``ROOT/NAME/...`` (whatever is below: per-broker folders, hourly
  rotations spanning months);
- a single cluster's folder: ``ROOT/broker-1/...`` or files directly in ROOT (the cluster is
  named by ``--cluster`` or ROOT's own name).

The day of a file comes from ``date=`` or a rotation suffix (``server.log.2026-03-01-14``);
it only decides what ``--since``/``--until`` may skip without reading. Events carry
their own time and land in the day they happened.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import PurePosixPath

from forensics.sources import FileRef, Inputs, broker_hint_from_path, cluster_hint_from_path

_DATE_KV = re.compile(r"date=(\d{4}-\d\d-\d\d)")
_ROTATION_DAY = re.compile(r"\.(\d{4}-\d\d-\d\d)(?:-\d\d)?(?:\.gz)?$")


def file_day(display: str) -> str | None:
    m = _DATE_KV.search(display)
    if m:
        return m.group(1)
    m = _ROTATION_DAY.search(display)
    return m.group(1) if m else None


def _relative_parts(display: str, root_display: str) -> tuple[str, ...]:
    if display.startswith(root_display):
        rel = display[len(root_display):]
    else:
        # a remote listing names files with the filesystem's own spelling of the root (hdfs://nn:8020/...)
        from urllib.parse import urlparse

        rp = urlparse(root_display).path.rstrip("/")
        i = display.find(rp + "/") if rp else -1
        rel = display[i + len(rp):] if i >= 0 else display
    return PurePosixPath(rel.lstrip("/").replace("!/", "/")).parts


def per_cluster_folders(files: list[FileRef], root_display: str) -> bool:
    """Is ROOT a folder of clusters (rather than one cluster's brokers)?"""
    firsts = set()
    for f in files:
        parts = _relative_parts(f.display, root_display)
        if len(parts) > 1:
            firsts.add(parts[0])
    if not firsts:
        return False
    # broker folders (broker-1, kafka2, broker=3) mean ROOT is one cluster
    return not any(broker_hint_from_path(f"{d}/x") is not None for d in firsts)


def assign_clusters(inputs: Inputs, root_display: str, cluster: str | None) -> list[FileRef]:
    """Each file with its cluster: ``cluster=`` in its path, else --cluster, else its top folder."""
    default = cluster or PurePosixPath(root_display.rstrip("/")).name or "cluster"
    by_folder = cluster is None and per_cluster_folders(inputs.files, root_display)
    out = []
    for f in inputs.files:
        name = cluster_hint_from_path(f.display)
        if name is None:
            parts = _relative_parts(f.display, root_display)
            name = parts[0] if by_folder and len(parts) > 1 else default
        out.append(dataclasses.replace(f, cluster_hint=name))
    return out


def in_days(day: str | None, since_day: str | None, until_day: str | None) -> bool:
    if day is None:
        return True
    return (since_day is None or day >= since_day) and (until_day is None or day <= until_day)


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def is_remote(root: str) -> bool:
    return bool(_SCHEME.match(root)) and not root.startswith("file://")


def list_remote(spark, root: str) -> Inputs:
    """Files under a URI Spark can read (hdfs://, s3a://, ...): listed by Spark itself, contents not read."""
    from pyspark.sql import functions as F

    try:
        rows = (spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(root)
                .select("path", "length", F.unix_timestamp("modificationTime").alias("mtime")).collect())
    except Exception as exc:  # noqa: BLE001 - Hadoop's errors: no such path, no credentials, unknown scheme
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        from forensics.errors import UserError

        raise UserError(f"{root}: cannot list it with Spark: {first}") from None
    files = []
    for r in sorted(rows, key=lambda r: r["path"]):
        if PurePosixPath(r["path"]).name.startswith("."):
            continue
        files.append(FileRef(r["path"], r["path"], broker_hint_from_path(r["path"]), cluster_hint_from_path(r["path"]),
                             int(r["length"]), int(r["mtime"])))
    return Inputs(files)
