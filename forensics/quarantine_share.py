"""A parse task's quarantined lines handed to the driver by the parse's own collect, up to the task's share.

The ``ingest`` command writes few quarantined lines itself (``ingest.QUARANTINE_IN_DRIVER``). Read by a job of
their own over the cached parse output, they cost a Spark job after the parse for a few rows: its planning, its
generated code and a task per parse partition (0.37-0.42 JVM CPU s and 0.5-0.6 s of wall on a 49 MB corpus of
8 partitions, load 8-11; benchmarks/journal/ingest.md, 2026-11-29). Here each task keeps the label
``quarantine`` on its first ``share`` lines and gives the rest the label ``REST``, with one ``MORE`` row saying
so; the parse's collect takes the ``quarantine`` and ``MORE`` rows with the summaries. The shares add up to
about QUARANTINE_IN_DRIVER, so the driver never holds more rows than the job it replaces read; where a task had
more than its share (a ``MORE`` row), the driver reads them from the cached output as before, both labels
together (``KINDS``).
"""
from __future__ import annotations

from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

QUARANTINE = "quarantine"
REST = "quarantine_rest"  # a task's quarantined lines past its share: read by Spark only
MORE = "quarantine_more"  # one row of a task that had lines past its share
KINDS = (QUARANTINE, REST)  # every quarantined line, whichever label it has


def share_of(total: int, tasks: int) -> int:
    """Each of ``tasks`` tasks' share of ``total`` rows (rounded up: the shares add up to less than
    total + tasks)."""
    return -(-total // max(1, tasks))


def within_share(fn: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
                 share: int) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """``fn`` (a parse task's ``mapInArrow`` function, whose batches carry ``row_kind``) with its quarantined
    lines past the first ``share`` labelled ``REST``, and a ``MORE`` row after the first batch that had any."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        left, told = share, False
        for batch in fn(batches):
            at = batch.schema.get_field_index("row_kind")
            mine = pc.fill_null(pc.equal(batch.column(at), QUARANTINE), False)
            n = pc.sum(mine).as_py() or 0
            if n <= left:
                left -= n
                yield batch
                continue
            kinds = batch.column(at).to_pylist()
            for i in pc.indices_nonzero(mine).to_pylist()[left:]:
                kinds[i] = REST
            left = 0
            yield batch.set_column(at, batch.schema.field(at), pa.array(kinds, pa.string()))
            if not told:
                told = True
                yield pa.RecordBatch.from_pylist([{"row_kind": MORE, "source_sub": 0}], schema=batch.schema)

    return run


def in_hand(rows: list) -> list[dict] | None:
    """The quarantined lines among the parse's collected rows (in their order), or None when a task had more
    than its share (the rest are only in the cached output)."""
    if any(r["row_kind"] == MORE for r in rows):
        return None
    return [{k: r[k] for k in ("source_file", "source_pos", "source_sub", "event_type", "detail", "raw")}
            for r in rows if r["row_kind"] == QUARANTINE]
