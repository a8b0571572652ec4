"""How a replay task's small result (its pickled ``ShardOutput``: episodes, tenures, journals) reaches the
driver: through a Spark accumulator, beside the timeline rows the task returns, so that the one action
consuming the timeline (a count, the audit's write) is also the one that runs the shards.

Returned as a row instead, it made the timeline a cached table read twice: a job collecting the result rows
and another consuming the timeline, 0.4-0.5 s of a 2 GB bench replay on the 2-worker standalone cluster
outside its shard tasks (benchmarks/journal/replay.md).

Spark applies a task's accumulator updates once per successful attempt; a stage run again (a lost shuffle
file, a speculative copy) may send a shard's result twice. Shard outputs are deterministic, so ``received``
keeps one per (cluster, shard).
"""
from __future__ import annotations

from typing import Any

from pyspark.accumulators import AccumulatorParam


class _Appended(AccumulatorParam):
    """A list that each task's updates extend."""

    def zero(self, value: list) -> list:
        return []

    def addInPlace(self, value1: list, value2: list) -> list:
        value1.extend(value2)
        return value1


def channel(spark) -> Any:
    """A fresh accumulator for one replay's results (created on the driver, captured by the task function)."""
    return spark.sparkContext.accumulator([], _Appended())


def send(acc, cluster: str, bucket: int, payload: bytes, wide: bool) -> None:
    """In a task: this shard's pickled output; ``wide``: its input held cluster-wide events."""
    acc.add([(cluster, bucket, payload, wide)])


def received(acc) -> dict[tuple[str, int], tuple[bytes, bool]]:
    """On the driver, after the action: each (cluster, shard)'s payload and ``wide`` flag, one per shard. The
    accumulator is emptied (PySpark's registry keeps it for the life of the session)."""
    out: dict[tuple[str, int], tuple[bytes, bool]] = {}
    for cluster, bucket, payload, wide in acc.value:
        out.setdefault((cluster, bucket), (payload, wide))
    acc.value = []
    return out


def missing(buckets: dict[str, int], got: dict[tuple[str, int], tuple[bytes, bool]]) -> dict[str, list[int]]:
    """The shards whose result is missing, by cluster, from ``buckets`` (each cluster's shard count): all of a
    cluster's when none came back; else, when a shard held cluster-wide events (every shard gets a copy of
    them, so every shard had rows), those not back. A shard given only its partitions' events may have had
    none, and then no task ran it."""
    back: dict[str, set[int]] = {}
    wide: set[str] = set()
    for (cluster, bucket), (_, held_wide) in got.items():
        back.setdefault(cluster, set()).add(bucket)
        if held_wide:
            wide.add(cluster)
    out: dict[str, list[int]] = {}
    for cluster, k in sorted(buckets.items()):
        mine = back.get(cluster, set())
        lost = [b for b in range(k) if b not in mine] if cluster in wide or not mine else []
        if lost:
            out[cluster] = lost
    return out
