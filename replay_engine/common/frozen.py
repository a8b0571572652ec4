"""A dict that refuses writes: the read-only mappings of the cluster image and its history.

A ``dict`` subclass rather than ``types.MappingProxyType``: lookups stay C-speed, it
pickles (shard outputs cross Spark executors) and serialises to JSON as a dict.
"""
from __future__ import annotations

from typing import Any, NoReturn


class FrozenMap(dict):
    __slots__ = ()

    def _refuse(self, *_args: Any, **_kw: Any) -> NoReturn:
        raise TypeError("a FrozenMap is read-only: build a new one instead")

    __setitem__ = __delitem__ = _refuse  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __reduce__(self):
        return (FrozenMap, (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenMap({dict.__repr__(self)})"


EMPTY = FrozenMap()
