"""The stream's source: what the followed files have newly written, as Spark Structured Streaming micro-batches.

A Python data source (Spark 4's ``DataSourceStreamReader``). Its offset is, per logical file of the tailer
(``forensics.live.files``), how far it may be read, whether it is quiet and whether more is written than that
(a backlog read in steps): ``{"f": {lid: [position, quiet, behind]}, "n": [notes]}``. Spark logs each batch's offsets in the query's checkpoint before running it and its commit after,
so the checkpoint is the record of what was read: after a ``kill -9`` the query runs the batch it had begun again
with the same offsets, and goes on from there. A batch's rows are the bytes of each file between the batch's start
and end offsets (read by a few tasks, from the file where it is now: renamed, gzipped), in rows of at most
ROW_BYTES, and the tailer's notes (a file deleted before it was read, one that shrank or was replaced).
"""
from __future__ import annotations

import json
import os

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

SCHEMA = ("lid string, display string, framing string, start long, `end` long, quiet int, behind int, data binary, "
          "note string")
NAME = "kafka_forensics_tail"
ROW_BYTES = 1 << 16
TASKS = 2  # tasks a batch is read by at most
SMALL_BATCH = 4 << 20  # a batch of fewer bytes is read by one task


class Ranges(InputPartition):
    """The ranges one task reads (a batch's ranges are shared out among a few tasks: a task per file would cost
    a Python worker's round trip each)."""

    def __init__(self, ranges: list):
        self.ranges = ranges


class Range:
    """One file's new bytes in one batch (or the batch's notes, ``notes`` set)."""

    def __init__(self, lid: str, display: str, path: str, gz: bool, framing: str, start: int, end: int, quiet: int,
                 notes: list | None = None, ident: tuple = (None, None, ""), behind: int = 0):
        self.lid, self.display, self.path, self.gz, self.framing = lid, display, path, gz, framing
        self.start, self.end, self.quiet, self.notes, self.behind = start, end, quiet, notes, behind
        self.ident = ident  # (dev, inode, fingerprint): the file wherever it went since it was looked at


class TailSource(DataSource):
    """Options: ``roots`` (JSON list of [path, display root]), ``table`` (where the tailer keeps its files),
    ``quiet`` (seconds a file must be unchanged to be quiet)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema):
        return TailReader(self.options)


class TailReader(DataSourceStreamReader):
    def __init__(self, options):
        from forensics.live.files import Table

        roots = [tuple(r) for r in json.loads(options["roots"])]
        self.table_path = options["table"]
        self.table = Table.load(self.table_path, roots)
        self.table.roots = roots
        self.table.quiet_s = float(options.get("quiet", "2"))

    def initialOffset(self) -> dict:
        return {"f": {}, "n": []}

    def latestOffset(self) -> dict:
        files = self.table.advance()
        notes = self.table.take_notes()
        self.table.save(self.table_path)
        return {"f": files, "n": notes}

    def partitions(self, start: dict, end: dict):
        out = []
        was = (start or {}).get("f", {})
        for lid, (pos, quiet, behind) in sorted(end.get("f", {}).items(), key=lambda kv: int(kv[0][1:])):
            before, was_quiet, was_behind = was.get(lid, [0, 0, 0])
            if pos == before and (quiet, behind) == (was_quiet, was_behind):
                continue
            f = self.table.files.get(lid)
            if f is None:
                continue
            out.append(Range(lid, f.display, f.path, f.gz, f.framing, before, pos, quiet, behind=behind,
                             ident=(f.dev, f.ino, f.head[:256])))
        for lid, (pos, *_) in sorted(was.items(), key=lambda kv: int(kv[0][1:])):
            if lid not in end.get("f", {}):  # gone (deleted, or replaced): nothing more will come
                f = self.table.files.get(lid)
                out.append(Range(lid, f.display if f else lid, f.path if f else "", bool(f and f.gz),
                                 f.framing if f else "text", pos, pos, 1))
        if end.get("n"):
            out.append(Range("", "", "", False, "", 0, 0, 0, list(end["n"])))
        return _share(out)

    def read(self, partition: Ranges):
        for r in partition.ranges:
            yield from _read(r)

    def commit(self, end: dict) -> None:
        pass


def _share(ranges: list[Range]) -> list[Ranges]:
    """At most TASKS tasks, a batch's bytes shared out evenly; one when they are few."""
    total = sum(r.end - r.start for r in ranges)
    n = 1 if total < SMALL_BATCH else min(TASKS, len(ranges))
    if not ranges:
        return []
    parts: list[list[Range]] = [[] for _ in range(n)]
    load = [0] * n
    for r in sorted(ranges, key=lambda r: -(r.end - r.start)):
        k = load.index(min(load))
        parts[k].append(r)
        load[k] += r.end - r.start
    return [Ranges(sorted(p, key=lambda r: (int(r.lid[1:]) if r.lid[1:].isdigit() else 0, r.start))) for p in parts if p]


def _read(partition: Range):
    from forensics.live.files import read_range

    if partition.notes is not None:
        for n in partition.notes:
            yield (n["lid"], n["display"], "", int(n["pos"]), int(n["pos"]), 0, 0, None, n["text"])
        return
    p = partition
    if p.start == p.end:
        yield (p.lid, p.display, p.framing, p.start, p.end, p.quiet, p.behind, None, None)
        return
    try:
        data = read_range(p.path, p.gz, p.start, p.end, *p.ident)
    except OSError as exc:
        yield (p.lid, p.display, p.framing, p.start, p.end, p.quiet, p.behind, None,
               f"could not be read from byte {p.start:,} ({exc.strerror or exc}): those bytes are skipped")
        return
    note = None
    if len(data) < p.end - p.start:
        note = f"ended at byte {p.start + len(data):,} before byte {p.end:,} (deleted or cut while read)"
    # rows of ROW_BYTES at most: a batch of a big folder is many modest rows, not a few huge values
    for k in range(0, max(len(data), 1), ROW_BYTES):
        last = k + ROW_BYTES >= len(data)
        yield (p.lid, p.display, p.framing, p.start + k, p.start + min(len(data), k + ROW_BYTES),
               p.quiet if last else 0, p.behind, data[k:k + ROW_BYTES], note if last else None)


def register(spark) -> None:
    spark.dataSource.register(TailSource)


def reader_options(roots: list[tuple[str, str]], live_dir: str, quiet_s: float) -> dict[str, str]:
    return {"roots": json.dumps(roots), "table": os.path.join(live_dir, "files.json"), "quiet": str(quiet_s)}
