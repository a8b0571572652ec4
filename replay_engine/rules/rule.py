"""A row of the rule table (:class:`Rule`) and how Kafka release ranges are written."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Version = tuple[int, int, int]


@dataclass(frozen=True)
class Rule:
    name: str  # what the row decides, in Kafka's words, unique within its decision
    decision: str  # the key the replay looks up: 'zk.<...>' or 'kraft.<...>'
    since: Version  # first release it holds for (inclusive)
    until: Version | None  # first release it no longer holds for (exclusive); None = current
    fn: Callable[..., Any]
    cite: tuple[str, str, str]  # (release tag, file, function) it was read from
    summary: str

    @property
    def mode(self) -> str:
        return self.decision.split(".", 1)[0]

    def holds_for(self, version: Version) -> bool:
        return self.since <= version and (self.until is None or version < self.until)

    @property
    def range_text(self) -> str:
        return range_text(self.since, self.until)


def vtext(v: Version) -> str:
    """'2.4', '2.4.1', '0.10.2' (0.x releases are named by three numbers)."""
    return f"{v[0]}.{v[1]}" if v[2] == 0 and v[0] > 0 else f"{v[0]}.{v[1]}.{v[2]}"


def range_text(since: Version, until: Version | None) -> str:
    if until is None:
        return f"{vtext(since)}+"
    last = _previous_release(until)
    return vtext(since) if last in (vtext(since), vtext(since) + ".x") else f"{vtext(since)}-{last}"


def _previous_release(until: Version) -> str:
    """'2.4' for until (2, 5, 0); '0.8.1.x' for (0, 8, 2): the last release line before ``until``."""
    major, minor, patch = until
    if until == (1, 0, 0):
        return "0.11.x"  # the last 0.x release line
    if patch:
        return f"{major}.{minor}.{patch - 1}" + (".x" if major == 0 else "")
    if minor:
        return f"{major}.{minor - 1}" + (".x" if major == 0 else "")
    return f"{major - 1}.x"
