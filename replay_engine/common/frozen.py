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


def quick_init(cls: type) -> type:
    """A frozen dataclass whose ``__init__`` writes its fields in one step. The ``__init__`` that
    ``dataclass(frozen=True)`` generates sets each field through ``object.__setattr__`` (~0.25 us a field): for the
    facts' provenance, the KRaft builder's records and the explainer's cases, made tens of thousands of times a
    replay, that was a tenth of it. Same signature, defaults (a default factory called where the argument is left
    out, as dataclass does) and instance as the generated one; a class with ``__post_init__``, init-only or
    keyword-only fields or slots is refused (it keeps dataclass's, and a change of the class cannot pass
    unnoticed). Apply it above ``@dataclass(frozen=True)``."""
    import dataclasses

    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" in cls.__dict__ or hasattr(cls, "__post_init__"):
        raise TypeError(f"quick_init: {cls.__name__} is not a frozen dataclass without slots and __post_init__")
    fields = dataclasses.fields(cls)
    if any(not f.init or f.kw_only for f in fields):
        raise TypeError(f"quick_init: {cls.__name__} has a field quick_init does not write as dataclass would")
    env: dict[str, Any] = {"_FACTORY": _FACTORY}
    args, lines = [], []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            env[f"_d_{f.name}"] = f.default
            args.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_f_{f.name}"] = f.default_factory
            args.append(f"{f.name}=_FACTORY")
            lines.append(f"    if {f.name} is _FACTORY:\n        {f.name} = _f_{f.name}()\n")
        else:
            args.append(f.name)
    body = ", ".join(f"{f.name!r}: {f.name}" for f in fields)
    ns: dict[str, Any] = {}
    exec(f"def __init__(self, {', '.join(args)}):\n{''.join(lines)}    self.__dict__.update({{{body}}})\n", env, ns)
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    cls.__init__ = init
    return cls


class _Factory:
    """The default of a field with a default factory (dataclass's own sentinel is private)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()
