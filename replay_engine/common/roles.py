"""Routing a fact to its handler by the role its class declares (``facts.py``), for both replays.

A replay hands the router one table per role, each mapping fact types to the handler its mode chose:

- *input*: something happened to the controller; the handler decides (``decide.py``, the election rules) and
  applies (``apply.py``);
- *record*: a decision the real controller left behind; the handler judges the replay's own decision against it
  (``judge.py``) and then follows it, or, in a counterfactual run, only seeds what the replay does not know;
- *observation*: the state as somebody saw it; the handler adopts it;
- *evidence*: not acted on; the handler indexes it for the explanations.

A type handled under a role its class does not declare is refused when the router is built, and a fact with no
handler for its (role, type) stops the run with both names: a new fact type cannot be dropped silently.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

ROLES = ("input", "record", "observation", "evidence")

Handler = Callable[[Any], None]


class UnroutedFact(LookupError):
    """A fact whose (role, type) the replay has no handler for."""


class Router:
    """A replay's handlers by role and fact type. They are the replay's own bound methods, so a replay holding
    its router is a reference cycle: all its state (~620,000 objects in a shard of the 2 GB bench) would wait
    for a full pass of the cyclic collector (~0.4 s a shard) instead of being freed by reference counting.
    Whoever runs a replay for the last time drops its router (``retire``)."""

    __slots__ = ("tables",)

    def __init__(self, inputs: Mapping[type, Handler], records: Mapping[type, Handler],
                 observations: Mapping[type, Handler], evidence: Mapping[type, Handler]):
        tables = {"input": dict(inputs), "record": dict(records), "observation": dict(observations),
                  "evidence": dict(evidence)}
        for role, table in tables.items():
            for cls in table:
                if getattr(cls, "role", None) != role:
                    raise ValueError(f"{cls.__name__} is declared a {getattr(cls, 'role', None)!r} fact but is "
                                     f"handled as {role!r}")
        self.tables: dict[str, dict[type, Handler]] = tables

    def replace(self, cls: type, handler: Handler) -> None:
        """Hand ``cls`` to another handler of the same role (a pass that reads only part of what a fact says)."""
        table = self.tables[cls.role]
        if cls not in table:
            raise ValueError(f"{cls.__name__} has no {cls.role!r} handler to replace")
        table[cls] = handler

    def by_type(self) -> dict[type, Handler]:
        """Each fact type's handler, whatever its role (a type has one role, so one handler): what ``route`` finds
        through ``tables``, for a loop that routes many facts. Taken again after a ``replace``."""
        return {cls: handler for table in self.tables.values() for cls, handler in table.items()}

    def handles(self, cls: type) -> bool:
        return cls in self.tables.get(getattr(cls, "role", None), {})

    def route(self, fact: Any) -> None:
        try:
            handler = self.tables[fact.role][type(fact)]
        except KeyError:
            raise UnroutedFact(f"no {fact.role!r} handler for {type(fact).__name__} "
                               f"({fact.ref.cite() if getattr(fact, 'ref', None) else 'no source'})") from None
        handler(fact)


def retire(replay) -> None:
    """``replay`` will run no more: its router goes, and with it the cycle through its handlers (``Router``)."""
    replay.router = None
