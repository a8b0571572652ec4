"""Pre-mortem: from a known state, what would each broker (pair, rack) failure do to the partitions?

For a failure set F, a partition is hit only if F touches its replicas, and the
outcome is the controller's own offline election over the survivors:
leaderless (no eligible replica), elected uncleanly (data loss possible),
or below min.insync.replicas (acks=all producers fail) after the ISR shrinks.
Pairs are scored from single-broker effects plus a correction for the
partitions holding both brokers, so the enumeration costs O(partitions x RF^2)
rather than O(pairs x partitions).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Iterable, Sequence

from replay_engine.elections import offline_partition_leader

TP = tuple[str, int]


@dataclass(frozen=True)
class PartitionState:
    tp: TP
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    unclean: bool
    min_isr: int


@dataclass
class Impact:
    leaderless: int = 0
    unclean: int = 0
    under_min_isr: int = 0
    leaders_moved: int = 0
    topics: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, other: "Impact", sign: int = 1) -> None:
        self.leaderless += sign * other.leaderless
        self.unclean += sign * other.unclean
        self.under_min_isr += sign * other.under_min_isr
        self.leaders_moved += sign * other.leaders_moved
        for t, d in other.topics.items():
            mine = self.topics.setdefault(t, {"leaderless": 0, "unclean": 0, "under_min_isr": 0})
            for k in mine:
                mine[k] += sign * d.get(k, 0)
            if not any(mine.values()):
                del self.topics[t]

    def key(self) -> tuple:
        return (self.leaderless, self.unclean, self.under_min_isr, self.leaders_moved)


def partition_outcome(p: PartitionState, failed: frozenset[int], live: frozenset[int]) -> Impact:
    """What losing ``failed`` does to one partition (the others alive)."""
    out = Impact()
    if not failed & set(p.replicas):
        return out
    survivors = live - failed
    isr = p.isr
    if p.leader in failed or p.leader < 0:
        res = offline_partition_leader(p.replicas, isr, survivors, p.unclean)
        if res is None:
            out.leaderless = 1
            _topic(out, p, "leaderless")
            return out
        out.leaders_moved = 1
        isr = res.isr
        if res.unclean:
            out.unclean = 1
            _topic(out, p, "unclean")
    else:
        shrunk = tuple(r for r in isr if r not in failed)
        isr = shrunk if shrunk else isr
    if len(isr) < p.min_isr:
        out.under_min_isr = 1
        _topic(out, p, "under_min_isr")
    return out


def _topic(imp: Impact, p: PartitionState, key: str) -> None:
    d = imp.topics.setdefault(p.tp[0], {"leaderless": 0, "unclean": 0, "under_min_isr": 0})
    d[key] += 1


def single_failures(parts: Sequence[PartitionState], live: frozenset[int]) -> dict[int, Impact]:
    out = {b: Impact() for b in sorted(live)}
    for p in parts:
        for b in p.replicas:
            if b in out:
                out[b].add(partition_outcome(p, frozenset({b}), live))
    return out


def pair_failures(parts: Sequence[PartitionState], live: frozenset[int],
                  singles: dict[int, Impact] | None = None,
                  first: Iterable[int] | None = None) -> dict[tuple[int, int], Impact]:
    """Every pair of live brokers (optionally only pairs whose smaller id is in ``first``: a Spark task's share)."""
    singles = singles if singles is not None else single_failures(parts, live)
    co: dict[tuple[int, int], list[PartitionState]] = {}
    for p in parts:
        reps = sorted(set(p.replicas) & live)
        for a, b in combinations(reps, 2):
            co.setdefault((a, b), []).append(p)
    wanted = set(first) if first is not None else None
    out: dict[tuple[int, int], Impact] = {}
    brokers = sorted(live)
    for a, b in combinations(brokers, 2):
        if wanted is not None and a not in wanted:
            continue
        imp = Impact()
        imp.add(singles[a])
        imp.add(singles[b])
        for p in co.get((a, b), ()):
            imp.add(partition_outcome(p, frozenset({a}), live), -1)
            imp.add(partition_outcome(p, frozenset({b}), live), -1)
            imp.add(partition_outcome(p, frozenset({a, b}), live))
        out[(a, b)] = imp
    return out


def rack_failures(parts: Sequence[PartitionState], live: frozenset[int], racks: dict[int, str]) -> dict[str, Impact]:
    by_rack: dict[str, set[int]] = {}
    for b in live:
        if b in racks:
            by_rack.setdefault(racks[b], set()).add(b)
    out = {}
    for rack in sorted(by_rack):
        failed = frozenset(by_rack[rack])
        imp = Impact()
        for p in parts:
            imp.add(partition_outcome(p, failed, live))
        out[rack] = imp
    return out


def impact_json(label: str, members: list[int], imp: Impact) -> dict[str, Any]:
    return {"failure": label, "brokers": members, "leaderless_partitions": imp.leaderless,
            "unclean_elections": imp.unclean, "under_min_isr_partitions": imp.under_min_isr,
            # both kinds of write outage: no leader at all, or a leader refusing acks=all (disjoint counts)
            "write_unavailable_partitions": imp.leaderless + imp.under_min_isr,
            "leaders_moved": imp.leaders_moved,
            "by_topic": {t: d for t, d in sorted(imp.topics.items())}}


def rank(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Worst first: the most partitions that could not take acks=all writes (leaderless or under min ISR), then
    the leaderless ones among them (no write at all), unclean elections, leaders moved."""
    return sorted(items, key=lambda d: (-d["leaderless_partitions"] - d["under_min_isr_partitions"],
                                        -d["leaderless_partitions"], -d["unclean_elections"],
                                        -d["under_min_isr_partitions"], -d["leaders_moved"], d["failure"]))


def states_from_replay(res) -> tuple[list[PartitionState], frozenset[int], list[str]]:
    """The replay's final image -> partition states (AR unknown: the ISR and leader stand in for it)."""
    from replay_engine.config import MIN_ISR, as_bool

    img = res.image
    cfg = img.config
    notes: list[str] = []
    parts: list[PartitionState] = []
    guessed = 0
    for tp in sorted(img.partitions):
        p = img.partitions[tp]
        if p.deleting or p.isr is None or p.leader is None:
            continue
        reps = p.replicas
        if reps is None:
            reps = tuple(dict.fromkeys(([p.leader] if p.leader >= 0 else []) + list(p.isr)))
            guessed += 1
        try:
            min_isr = int(cfg.resolve(MIN_ISR, tp[0]).value)
        except ValueError:
            min_isr = 1
        parts.append(PartitionState(tp, tuple(reps), tuple(p.isr), p.leader,
                                    as_bool(cfg.unclean_enabled(tp[0]).value), min_isr))
    if guessed:
        notes.append(f"{guessed} partition(s) have no assignment in the evidence: their ISR and leader stand in "
                     "for it (their other replicas, if any, are not counted)")
    return parts, img.live, notes
