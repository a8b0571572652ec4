"""Kafka's controller semantics, version by version: the rule table the replay decides through.

Every version-dependent decision of the replay is a small pure function (as Kafka's own
``PartitionLeaderElectionAlgorithms`` are), held in a :class:`Rule` row with the range of Kafka
releases it holds for and the tag, file and function of Kafka's source it was read from. The table is
data: ``rule_for(decision, version)`` picks the row; the modules beside this one hold the functions and
rows, grouped by topic. ``docs/semantics.md`` is generated from the table (``python -m
replay_engine.rules.doc``).

Version ranges are half-open: ``since <= version < until`` (``until`` None = still current). A
version no range holds, or no version at all, falls back to a documented default (:func:`resolve` says
which and why): an unknown version takes :data:`DEFAULT_ZK` / :data:`DEFAULT_KRAFT` (the newest
release the table reads, what the replay assumed before it had a table); a version newer than every
range takes the newest row, an older one the oldest.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from replay_engine.rules import kraft, zk_config, zk_controller, zk_elections, zk_isr, zk_lines
from replay_engine.rules.rule import Rule, Version, range_text, vtext

__all__ = ["Rule", "Version", "range_text", "vtext"]

# What an unknown version is replayed as (config.py assumed 3.x defaults before the table existed).
DEFAULT_ZK: Version = (3, 9, 0)
DEFAULT_KRAFT: Version = (4, 0, 0)


@dataclass(frozen=True)
class Resolution:
    rule: Rule
    version: Version | None  # the version asked about
    fallback: str | None  # None when the version lies in the row's range; else why this row was taken


def _load() -> tuple[Rule, ...]:
    rows: list[Rule] = []
    for m in (zk_controller, zk_elections, zk_isr, zk_config, zk_lines, kraft):
        rows.extend(m.RULES)
    return tuple(rows)


TABLE: tuple[Rule, ...] = _load()
_BY_DECISION: dict[str, list[Rule]] = {}
for _r in TABLE:
    _BY_DECISION.setdefault(_r.decision, []).append(_r)
for _rows in _BY_DECISION.values():
    _rows.sort(key=lambda r: r.since)


def decisions() -> list[str]:
    return sorted(_BY_DECISION)


# (decision, version) -> its Resolution: the table is fixed at import, and the replay asks the same few pairs tens
# of thousands of times per cluster (every election, ISR write and ELR step)
_RESOLVED: dict[tuple[str, Version | None], Resolution] = {}


def resolve(decision: str, version: Version | None) -> Resolution:
    """The row holding ``decision`` for ``version``, and, when none holds exactly, the fallback taken."""
    key = (decision, version)
    try:
        res = _RESOLVED.get(key)
    except TypeError:  # a version given as a list: not kept
        return _resolve(decision, version)
    if res is None:
        res = _RESOLVED[key] = _resolve(decision, version)
    return res


def _resolve(decision: str, version: Version | None) -> Resolution:
    rows = _BY_DECISION.get(decision)
    if not rows:
        raise KeyError(f"no rule for decision {decision!r}")
    if version is None:
        default = DEFAULT_KRAFT if decision.startswith("kraft.") else DEFAULT_ZK
        r = resolve(decision, default).rule
        return Resolution(r, None, f"version unknown: replayed as Kafka {vtext(default)} ({r.range_text} rule)")
    for r in rows:
        if r.holds_for(version):
            return Resolution(r, version, None)
    if version < rows[0].since:
        r = rows[0]
        return Resolution(r, version, f"Kafka {vtext(version)} is older than every range: the oldest row "
                                      f"({r.range_text}) is used")
    r = rows[-1]
    return Resolution(r, version, f"Kafka {vtext(version)} lies outside every range: the newest row "
                                  f"({r.range_text}) is used")


def rule_for(decision: str, version: Version | None) -> Rule:
    return resolve(decision, version).rule


def decide(decision: str, version: Version | None, *args: Any, **kwargs: Any) -> Any:
    """``rule_for(decision, version).fn(*args, **kwargs)``: the one-line form the replay's call sites use."""
    res = _RESOLVED.get((decision, version)) if version.__class__ is not list else None
    return (res or resolve(decision, version)).rule.fn(*args, **kwargs)


def departure(c: Any, decision: str, version: Version | None, how: str | None) -> dict[str, Any]:
    """A diverged comparison ``c`` (judge.Comparison) as a ``rule_departure`` finding: the row of ``decision`` the
    recorded decision departed from, for the release that wrote the evidence, with the tag, file and function it was
    read from; ``how``: what the replay's side says it applied. Both modes' findings (judge.zk_departure_findings,
    kraft.evidence.departure_findings)."""
    rule = rule_for(decision, version)
    tag, path, fn = rule.cite
    return {"kind": "rule_departure", "ts": c.ts, "topic": c.tp[0], "partition": c.tp[1], "rule": decision,
            "rule_name": rule.name, "cite": f"{tag} {path} {fn}", "recorded": c.recorded, "replayed": c.replayed,
            "text": f"{c.tp[0]}-{c.tp[1]}: the controller recorded {c.recorded} where {rule.name} ({fn}, {tag}) "
                    f"gives {c.replayed} ({how})",
            "evidence": [c.record.to_json()]}


def rules_in_force(mode: str, version: Version | None) -> list[Resolution]:
    """One row per decision of ``mode`` ('zk' or 'kraft'), as the replay of that version uses them."""
    return [resolve(d, version) for d in decisions() if d.startswith(mode + ".")]


def rule_set_name(mode: str, version: Version | None) -> str:
    """'zk 2.4-2.7' (the widest range of releases every row in force agrees on), 'zk (version unknown: 3.9)'."""
    if version is None:
        default = DEFAULT_KRAFT if mode == "kraft" else DEFAULT_ZK
        return f"{mode} (version unknown: rules of {vtext(default)})"
    in_force = rules_in_force(mode, version)
    rows = [res.rule for res in in_force]
    since = max(r.since for r in rows)
    ends = [r.until for r in rows if r.until is not None]
    until = min(ends) if ends else None
    name = f"{mode} {range_text(since, until)}"
    if any(res.fallback for res in in_force):
        name += f" (Kafka {vtext(version)} lies outside some ranges: nearest rows used)"
    return name


def describe(mode: str, version: Version | None) -> dict[str, Any]:
    """What replay.json says about the rules used: the set's name and every row in force."""
    out = []
    for res in rules_in_force(mode, version):
        r = res.rule
        row = {"decision": r.decision, "rule": r.name, "range": r.range_text,
               "cite": {"tag": r.cite[0], "file": r.cite[1], "function": r.cite[2]}}
        if res.fallback:
            row["fallback"] = res.fallback
        out.append(row)
    return {"rule_set": rule_set_name(mode, version), "rules": out}


def check_table(rows: Iterable[Rule] = TABLE) -> list[str]:
    """Gaps and overlaps between the rows of each decision (the table test asserts there are none)."""
    problems = []
    by: dict[str, list[Rule]] = {}
    for r in rows:
        by.setdefault(r.decision, []).append(r)
    for d, rs in by.items():
        rs = sorted(rs, key=lambda r: r.since)
        for a, b in zip(rs, rs[1:]):
            if a.until is None or a.until != b.since:
                problems.append(f"{d}: {a.name} ({a.range_text}) and {b.name} ({b.range_text}) do not meet")
        if rs[-1].until is not None:
            problems.append(f"{d}: no row holds after {rs[-1].range_text}")
        if len({r.name for r in rs}) != len(rs):
            problems.append(f"{d}: two rows share a name")
    return problems
