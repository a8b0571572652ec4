"""How Scala 2.13 and Java collections print and iterate, as far as Kafka's output shows it.

Kafka builds znode JSON from a ``mutable.HashMap`` (iteration by bucket of the
spread Java hash, then by hash) and prints ``Set(1, 2)``, ``HashSet(...)``,
``List(...)`` in its log lines. Only the orders that a reader of the files can
see are reproduced; nothing here matters for correctness of the content.
"""
from __future__ import annotations

from typing import Iterable

from samplegen.zk.server import java_string_hash


def _spread(h: int) -> int:
    return (h ^ (h >> 16)) & 0xFFFFFFFF


def mutable_hashmap_order(keys: Iterable[str]) -> list[str]:
    """Iteration order of scala.collection.mutable.HashMap[String, _] (2.13): bucket, then hash."""
    keys = list(keys)
    cap = 16
    while len(keys) > cap * 0.75:
        cap *= 2
    return sorted(keys, key=lambda k: (_spread(java_string_hash(k)) & (cap - 1), _spread(java_string_hash(k))))


def int_hash_order(values: Iterable[int]) -> list[int]:
    """A stable, hash-like order for ints as Scala's immutable HashSet prints them (small ints: ascending)."""
    return sorted(values)


def scala_set(values: Iterable[int]) -> str:
    """``Set(1, 2)`` for up to 4 elements, ``HashSet(...)`` above (Scala 2.13 immutable sets)."""
    vals = int_hash_order(values)
    name = "Set" if len(vals) <= 4 else "HashSet"
    return f"{name}({', '.join(str(v) for v in vals)})"


def hash_set(values: Iterable) -> str:
    """``HashSet(...)`` as mutable/Java-converted sets print, whatever the size."""
    return f"HashSet({', '.join(str(v) for v in values)})"


def scala_list(values: Iterable[int]) -> str:
    return f"List({', '.join(str(v) for v in values)})"


def comma(values: Iterable) -> str:
    return ",".join(str(v) for v in values)
