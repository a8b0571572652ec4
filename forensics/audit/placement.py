"""One Spark task per group: keys that Spark's hash partitioning places one to a partition.

``df.repartition(n, col)`` puts a row in partition ``pmod(murmur3(col, seed 42), n)``
(Spark's ``HashPartitioning.partitionIdExpression``). Hashing the group keys themselves lets two
of n groups meet in one partition and leaves others empty: the 90-day audit ran its 34 shards as
the 8 tasks of ``spark.sql.shuffle.partitions``, one of them last and alone on a core, and on a
cluster with more cores than that the extra cores had nothing to do. Here group i of n gets an
integer key whose hash falls in partition i, so n groups make n tasks of one group each (light
groups, such as the shards of many small clusters, are packed together first: ``pack``).
"""
from __future__ import annotations

SEED = 42  # org.apache.spark.sql.catalyst.expressions.Murmur3Hash's default, which HashPartitioning uses
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def hash_int(value: int, seed: int = SEED) -> int:
    """Spark's hash of an IntegerType value (org.apache.spark.unsafe.hash.Murmur3_x86_32.hashInt), signed."""
    k1 = (value & _M32) * 0xCC9E2D51 & _M32
    k1 = _rotl(k1, 15) * 0x1B873593 & _M32
    h1 = (seed & _M32) ^ k1
    h1 = (_rotl(h1, 13) * 5 + 0xE6546B64) & _M32
    h1 ^= 4  # fmix with the input's length in bytes
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _M32
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _M32
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def partition_keys(n: int) -> list[int]:
    """For each partition i of n, the smallest non-negative integer that ``repartition(n, key)`` sends there."""
    keys: list[int | None] = [None] * n
    left, v = n, 0
    while left:
        i = hash_int(v) % n  # Python's % of a positive n is Spark's pmod
        if keys[i] is None:
            keys[i] = v
            left -= 1
        v += 1
    return keys  # type: ignore[return-value]


def _group_text(cols):
    from pyspark.sql import functions as F

    return F.concat_ws("\x01", *[F.coalesce(F.col(c).cast("string"), F.lit("\x02")) for c in cols])


def _text(values) -> str:
    return "\x01".join("\x02" if v is None else str(v) for v in values)


def pack(weights: list[int], least: int) -> tuple[list[int], int]:
    """The task of each group and the task count: a group weighing ``least`` or more gets a task of its own;
    smaller ones share tasks, heaviest first, each task filled until it holds ``least``. (Thousands of tiny
    clusters' shards as a task each would cost more in task launches than their replays.)"""
    task_of = [0] * len(weights)
    n, fill, held = 0, -1, least
    for i in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        if weights[i] >= least:
            task_of[i], n = n, n + 1
            continue
        if held >= least:
            fill, held, n = n, 0, n + 1
        task_of[i] = fill
        held += weights[i]
    return task_of, n


def task_key(cols: tuple[str, ...], groups: list[tuple], weights: list[int] | None = None, least: int = 0):
    """An integer column and a task count n: ``repartition(n, key)`` puts the rows of each of ``groups``
    (values of ``cols``) in its task's partition, alone or packed with light ones (``pack``; without
    ``weights`` each alone). Rows of a group not listed get a null key and share a partition: only the
    balance depends on the list, never which rows meet."""
    from pyspark.sql import functions as F

    task_of, n = pack(weights if weights is not None else [least] * len(groups), least)
    n = max(1, n)
    keys = partition_keys(n)
    if not groups:
        return F.lit(None).cast("int"), n
    # Spark looks a map's key up by a scan of its keys, row by row: so one entry per first value (a cluster),
    # holding the keys of its shards 0, 1, ... in order, rather than an entry per group keyed by joined text
    firsts: dict = {}
    for g, t in zip(groups, task_of):
        firsts.setdefault(g[0], {})[tuple(g[1:])] = keys[t]
    if None not in firsts:  # a null is no map key: then the joined-text form below, which marks it
        if len(cols) == 1:
            pairs = [x for v, ks in firsts.items() for x in (F.lit(v), F.lit(ks[()]))]
            return F.try_element_at(F.create_map(*pairs), F.col(cols[0])).cast("int"), n
        if len(cols) == 2 and all(sorted(ks) == [(i,) for i in range(len(ks))] for ks in firsts.values()):
            pairs = [x for v, ks in firsts.items()
                     for x in (F.lit(v), F.array(*[F.lit(ks[(i,)]) for i in range(len(ks))]))]
            row = F.try_element_at(F.create_map(*pairs), F.col(cols[0]))
            return F.try_element_at(row, F.col(cols[1]).cast("int") + 1).cast("int"), n
    pairs = [x for g, t in zip(groups, task_of) for x in (F.lit(_text(g)), F.lit(keys[t]))]
    return F.try_element_at(F.create_map(*pairs), _group_text(cols)).cast("int"), n


def one_task_per_group(df, cols: tuple[str, ...], groups: list[tuple], name: str = "_task",
                       weights: list[int] | None = None, least: int = 0):
    """``df`` with the column ``name`` of ``task_key``, repartitioned by it: a partition per task."""
    key, n = task_key(cols, groups, weights, least)
    return df.withColumn(name, key).repartition(n, name)
