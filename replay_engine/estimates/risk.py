"""Pre-mortem: from a known state, what would each broker (pair, rack) failure do to the partitions?

For a failure set F, a partition is hit only if F touches its replicas, and the
outcome is what the cluster's own controller does, by the rule table's rows for
its mode and release (:class:`Controller`): in ZooKeeper mode the offline
election over the survivors (``zk.election.offline``: the ISR's order before
0.8.2, unclean election the default before 0.11) and the OfflineReplica ISR
write for followers (``zk.offline_replica.isr``); in KRaft mode each failed
broker fenced in turn (``handleBrokerFenced``: the broker leaves the target ISR,
then ``kraft.election``, with Eligible Leader Replicas from 3.7). Outcomes:
leaderless (no eligible replica), elected uncleanly (data loss possible), or
below min.insync.replicas (acks=all producers fail) after the ISR shrinks.
Pairs are scored from single-broker effects plus a correction for the
partitions holding both brokers, so the enumeration costs O(partitions x RF^2)
rather than O(pairs x partitions).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Iterable, Sequence

from replay_engine import rules as R
from replay_engine.rules.rule import Version

TP = tuple[str, int]


@dataclass(frozen=True)
class Controller:
    """Whose rules a failure is replayed with: the cluster's mode ('zk' or 'kraft') and Kafka release (None: not in
    the evidence, the table's default), and whether KRaft's eligible.leader.replicas.version feature is on."""

    mode: str
    version: Version | None
    elr_enabled: bool = False

    @property
    def rule_set(self) -> str:
        return R.rule_set_name(self.mode, self.version)


@dataclass(frozen=True)
class PartitionState:
    tp: TP
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    unclean: bool
    min_isr: int
    elr: tuple[int, ...] = ()  # KRaft (KIP-966): eligible leader replicas, and the last known ones
    last_known_elr: tuple[int, ...] = ()


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


def partition_outcome(p: PartitionState, failed: frozenset[int], live: frozenset[int], ctl: Controller) -> Impact:
    """What losing ``failed`` does to one partition (the others alive), as ``ctl``'s controller decides it."""
    out = Impact()
    if not failed & set(p.replicas):
        return out
    if ctl.mode == "kraft":
        leader, isr, unclean = _fenced(p, failed, live, ctl)
    else:
        leader, isr, unclean = _failed_zk(p, failed, live, ctl.version)
    if leader < 0:
        out.leaderless = 1
        _topic(out, p, "leaderless")
        return out
    if leader != p.leader:
        out.leaders_moved = 1
    if unclean:
        out.unclean = 1
        _topic(out, p, "unclean")
    if len(isr) < p.min_isr:
        out.under_min_isr = 1
        _topic(out, p, "under_min_isr")
    return out


def _failed_zk(p: PartitionState, failed: frozenset[int], live: frozenset[int],
               version: Version | None) -> tuple[int, tuple[int, ...], bool]:
    """onBrokerFailure: partitions the failed brokers led (or already leaderless) get the offline election over the
    survivors; in the others each failed replica leaves the ISR by the OfflineReplica write."""
    if p.leader in failed or p.leader < 0:
        res = R.decide("zk.election.offline", version, p.replicas, p.isr, live - failed, p.unclean)
        return (-1, p.isr, False) if res is None else (res.leader, res.isr, res.unclean)
    leader, isr = p.leader, p.isr
    for b in sorted(failed & set(isr)):
        leader, isr = R.decide("zk.offline_replica.isr", version, leader, isr, b, p.unclean)
    return leader, tuple(isr), False


def _fenced(p: PartitionState, failed: frozenset[int], live: frozenset[int],
            ctl: Controller) -> tuple[int, tuple[int, ...], bool]:
    """Each failed broker fenced in turn (lowest id first; each is an event of its own): handleBrokerFenced runs
    PartitionChangeBuilder over the partitions whose ISR holds it, with it out of the target ISR and never an
    acceptable leader (3.9.0-rc3 ReplicationControlManager.generateLeaderAndIsrUpdates)."""
    v, on = ctl.version, ctl.elr_enabled
    leader, isr, elr, unclean = p.leader, p.isr, p.elr, False
    acceptable = set(live)
    for b in sorted(failed):
        acceptable.discard(b)
        if b not in isr:
            continue
        target = tuple(x for x in isr if x != b)  # Replicas.copyWithout(partition.isr, brokerToRemove)
        target_elr = R.decide("kraft.elr.target", v, isr, target, elr, p.min_isr, on)
        res = R.decide("kraft.election", v, p.replicas, target, leader, frozenset(acceptable), p.unclean,
                       target_elr, on, p.last_known_elr)
        if res.how == "elr":  # the ELR member elected becomes the sole ISR member (tryElection)
            isr, elr = res.isr, tuple(x for x in target_elr if x != res.leader)
        elif res.how == "unclean":
            isr, elr, unclean = res.isr, target_elr, True
        else:  # an empty target ISR is written only with ELR; the last member stays otherwise
            isr, elr = R.decide("kraft.isr_shrink", v, isr, {b}, on), target_elr
        leader = res.leader
    return leader, tuple(isr), unclean


def _topic(imp: Impact, p: PartitionState, key: str) -> None:
    d = imp.topics.setdefault(p.tp[0], {"leaderless": 0, "unclean": 0, "under_min_isr": 0})
    d[key] += 1


def single_failures(parts: Sequence[PartitionState], live: frozenset[int], ctl: Controller) -> dict[int, Impact]:
    out = {b: Impact() for b in sorted(live)}
    for p in parts:
        for b in p.replicas:
            if b in out:
                out[b].add(partition_outcome(p, frozenset({b}), live, ctl))
    return out


def pair_failures(parts: Sequence[PartitionState], live: frozenset[int], ctl: Controller,
                  singles: dict[int, Impact] | None = None,
                  first: Iterable[int] | None = None) -> dict[tuple[int, int], Impact]:
    """Every pair of live brokers (optionally only pairs whose smaller id is in ``first``: a Spark task's share)."""
    singles = singles if singles is not None else single_failures(parts, live, ctl)
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
            imp.add(partition_outcome(p, frozenset({a}), live, ctl), -1)
            imp.add(partition_outcome(p, frozenset({b}), live, ctl), -1)
            imp.add(partition_outcome(p, frozenset({a, b}), live, ctl))
        out[(a, b)] = imp
    return out


def rack_failures(parts: Sequence[PartitionState], live: frozenset[int], racks: dict[int, str],
                  ctl: Controller) -> dict[str, Impact]:
    by_rack: dict[str, set[int]] = {}
    for b in live:
        if b in racks:
            by_rack.setdefault(racks[b], set()).add(b)
    out = {}
    for rack in sorted(by_rack):
        failed = frozenset(by_rack[rack])
        imp = Impact()
        for p in parts:
            imp.add(partition_outcome(p, failed, live, ctl))
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
    from replay_engine.common.config import MIN_ISR, as_bool

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
                                    as_bool(cfg.unclean_enabled(tp[0]).value), min_isr,
                                    tuple(p.elr or ()), tuple(p.last_known_elr or ())))
    if guessed:
        notes.append(f"{guessed} partition(s) have no assignment in the evidence: their ISR and leader stand in "
                     "for it (their other replicas, if any, are not counted)")
    return parts, img.live, notes


def controller_of(res) -> Controller:
    """The controller of a replayed cluster: its mode, the Kafka release its evidence states, and (KRaft) whether
    Eligible Leader Replicas are in use."""
    img = res.image
    return Controller("kraft" if res.mode == "kraft" else "zk", img.config.version, img.elr_enabled)
