"""Several clusters in one folder, told apart by what the evidence says of itself.

A folder may hold more than one Kafka cluster: a folder per environment (dev and prod with the same broker ids),
docker-compose stacks run on different days (a new cluster id each time a volume is recreated), a laptop whose
ZooKeeper data or KRaft storage was formatted again and again. Replayed as one, their histories mix: one cluster's
partitions are taken for the other's, a broker runs twice at once, an epoch goes back. Kafka names a cluster by
its id and says it (``cluster_identity`` events): in a broker's log while it starts (``Cluster ID = X``, KRaft's
``Creating new QuorumController with clusterId X`` and ``Incarnation I of broker N in cluster X``), in ZooKeeper's
``/cluster/id`` znode, in a log directory's ``meta.properties``; before cluster ids (0.10.1) the ZooKeeper chroot a
broker's configuration names tells clusters sharing an ensemble apart.

``replay_engine.folders.parts`` cuts the evidence into parts and reads the cluster each names. A part that names
none goes to the one cluster whose evidence covers its time (less those where its broker id was then running from
other files: a broker id runs once at a time in a cluster); where several do, it is left out of every replay and a
finding names them. One that runs when no cluster's evidence does goes with the cluster next to it in time whose
controller epochs it continues; where the controller epoch went back between them (ZooKeeper's data, or the
metadata log, was new: 0.10.1.0 ``KafkaController`` increments ``/controller_epoch``, a new KRaft quorum starts at
epoch 1), it is a cluster of its own whose id the evidence does not hold.
"""
from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from parsers.schema import Event, iso_utc
from replay_engine.folders.parts import CLUE, Part, event_times, label, name_parts, parts_of, twice_at_once, won_epoch

# Events whose controller_epoch column is the acting controller's (or, KRaft, the metadata quorum's) epoch.
EPOCH_EVENTS = frozenset({"controller_elected", "controller_startup_state", "partition_state_change",
                          "replica_state_change", "partition_leader_isr_written", "leader_and_isr_received",
                          "kraft_leader_change", "controller_epoch_set"})


@dataclass
class Cluster:
    name: str
    label: str  # 'cluster id X', 'ZooKeeper chroot /x', 'a cluster the evidence does not name'
    first: int | None
    last: int | None
    brokers: list[int]
    events: int
    evidence: list[dict[str, Any]]  # the lines that name it, the first of each kind
    attributed: list[str]  # parts that name no cluster, given to it, and why

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "first": iso_utc(self.first), "last": iso_utc(self.last),
                "brokers": self.brokers, "events": self.events, "evidence": self.evidence,
                "attributed": self.attributed}

    def sentence(self) -> str:
        ev = self.evidence[0] if self.evidence else None
        named = f", named at {ev['source_file']}:{ev['source_pos']}" if ev else ""
        return (f"{self.name} ({self.label}{named}; broker(s) {', '.join(map(str, self.brokers)) or 'none'}; "
                f"{iso_utc(self.first)} to {iso_utc(self.last)}; {self.events:,} events)")


@dataclass
class Told:
    names: list[str | None]  # each event's cluster (None: left out of every replay, a finding says why)
    clusters: list[Cluster]  # empty when the evidence names one cluster, or none
    findings: list[dict[str, Any]]

    def record(self, folder: str | None) -> dict[str, Any]:
        """What told them apart, as the summaries keep it (``clusters_told_apart``)."""
        return {"folder": folder, "statement": self.statement(folder), "clusters": [c.to_json() for c in self.clusters],
                "findings": self.findings}

    def statement(self, folder: str | None) -> str | None:
        if len(self.clusters) < 2:
            return None
        return (f"{folder or 'the evidence'} holds {len(self.clusters)} clusters, each replayed alone: "
                + "; ".join(c.sentence() for c in self.clusters))


def tell_clusters(events: list[Event], base: str | None) -> Told:
    """Which cluster each event belongs to, for events given as one cluster named ``base``."""
    plain = Told([base] * len(events), [], [])
    if not may_hold_several(events):
        return plain
    named = names_several(events)
    twice = [] if named else twice_at_once(events)
    if not named and not twice:
        return plain
    times = event_times(events)
    parts = parts_of(events, times)
    name_parts(parts, events)
    proof = _by_folder(parts, twice, events) if twice else {}
    if len({p.key for p in parts} - {None}) < 2:
        return plain
    parts, findings = _place(parts, events, times)
    keys = sorted({p.key for p in parts if p.key is not None},
                  key=lambda k: (min(p.start or 0 for p in parts if p.key == k), k))
    clusters = [_describe(k, [p for p in parts if p.key == k], events, base, proof.get(k, [])) for k in keys]
    name_of = {k: c.name for k, c in zip(keys, clusters)}
    names: list[str | None] = [None] * len(events)
    for p in parts:
        for i in p.members:
            names[i] = name_of.get(p.key) if p.key is not None else None
    return Told(names, clusters, findings)


# The only events ``may_hold_several`` reads: a caller holding many may ask it of these alone.
CLUE_TYPES = (CLUE, "broker_startup")


def names_several(events: list[Event]) -> bool:
    """Whether the events name more than one cluster id, or more than one ZooKeeper chroot."""
    labels = {label(e) for e in events} - {None}
    return any(len({x for x in labels if x.startswith(kind)}) > 1 for kind in ("id:", "chroot:"))


def may_hold_several(events: list[Event]) -> bool:
    """Whether ``tell_clusters`` may find more than one cluster in these events: they name several (``names_several``),
    or one broker id started in two folders (the condition for ``twice_at_once`` to find any). It reads only
    ``CLUE_TYPES`` events."""
    if names_several(events):
        return True
    folders: dict[int, set[str]] = defaultdict(set)
    for e in events:
        if e.event_type == "broker_startup" and (e.detail or {}).get("phase") == "started" and \
                e.subject_broker is not None:
            folders[e.subject_broker].add(posixpath.dirname(e.source_file or ""))
    return any(len(f) > 1 for f in folders.values())


def _by_folder(parts: list[Part], twice: list[tuple[int, int]], events: list[Event]) -> dict[str, list[dict]]:
    """Clusters no line names, told apart by a broker id that ran in two folders at once: each folder (at the first
    level where the two differ) that holds such a process is a cluster; what lies elsewhere is placed by time.
    Returns, per cluster, the ``started`` lines that prove it."""
    def comps(i: int) -> list[str]:
        return posixpath.dirname(events[i].source_file or "").split("/")

    level = min(next(k for k, (x, y) in enumerate(zip(comps(a) + [""], comps(b) + [""])) if x != y) for a, b in twice)
    proof: dict[str, list[dict]] = defaultdict(list)
    for a, b in twice:
        for i in (a, b):
            key = "folder:" + "/".join(comps(i)[:level + 1])
            if _cite(events[i]) not in proof[key]:
                proof[key].append(_cite(events[i]))
    for p in parts:
        key = "folder:" + "/".join(p.unit[1].split("/")[:level + 1])
        if key in proof and len(p.unit[1].split("/")) > level:
            p.key = key  # (a single cluster id some of them name does not tell them apart)
    return dict(proof)


def _overlaps(p: Part, q: Part) -> bool:
    return p.start is not None and q.start is not None and p.start <= q.end and q.start <= p.end


def _place(parts: list[Part], events: list[Event], times: list[int | None]) -> tuple[list[Part], list[dict]]:
    placed = [p for p in parts if p.key is not None]
    unnamed = sorted((p for p in parts if p.key is None), key=lambda p: (p.start or 0, p.unit[1], str(p.unit[2])))
    left: dict[tuple, list[Part]] = defaultdict(list)
    guessed: list[Part] = []
    fresh = 0
    for p in unnamed:
        # lines that name no broker may come from any process of the folder: each goes by its own time
        pieces = ([Part(p.unit, [i], times[i], times[i], None) for i in p.members]
                  if p.unit[0] == "log" and p.broker is None and not p.told_by else [p])
        while pieces:
            q = pieces.pop(0)
            cands = _candidates(q, placed, events)
            if len(cands) > 1 and not q.told_by and q.broker is not None:
                split = _by_cover(q, placed, times)
                if split:
                    pieces[:0] = split
                    continue
            if len(cands) == 1 and not q.told_by:
                q.key, q.told_by = cands[0], "names no cluster; the only one whose evidence covers that time"
            elif not cands and not q.told_by and q.start is not None and (q.broker is not None or q.unit[0] == "dir"):
                fresh = _next_to(q, placed, events, fresh)
                if q.told_by and q.told_by.startswith("nothing"):
                    guessed.append(q)
            if q.key is not None:
                placed.append(q)
            else:
                left[(q.unit, tuple(cands), q.told_by or "names no cluster")].append(q)
    findings = [_left_out(unit, cands, why, ps, events) for (unit, cands, why), ps in left.items()]
    findings += [{"kind": "cluster_not_told", "count": len(q.members),
                  "text": f"{len(q.members):,} events of {q.where()} name no cluster, and {q.told_by}",
                  "evidence": [_cite(events[q.members[0]])]} for q in guessed]
    return placed, findings


def _by_cover(p: Part, placed: list[Part], times: list[int | None]) -> list[Part]:
    """A broker's lines naming no cluster that fall, one stretch after another, in the times of different clusters,
    each stretch in one cluster's alone: one piece per stretch (empty when some line falls in no cluster's time, or in
    several). A broker process joins one cluster, read once as it starts (2.8.0 KafkaServer.startup:
    getOrGenerateClusterId), so such stretches are different processes' even where the restart between them is in no
    line."""
    spans: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for q in placed:
        if q.start is not None and q.end is not None:
            spans[q.key].append((q.start, q.end))
    runs: list[tuple[str, list[int]]] = []
    for i in sorted(p.members, key=lambda i: times[i] or 0):
        t = times[i]
        cover = [k for k, ss in spans.items() if t is not None and any(a <= t <= b for a, b in ss)]
        if len(cover) != 1:
            return []
        if runs and runs[-1][0] == cover[0]:
            runs[-1][1].append(i)
        else:
            runs.append((cover[0], [i]))
    if len(runs) < 2:
        return []
    return [Part(p.unit, members, min(times[i] for i in members), max(times[i] for i in members), p.broker)
            for _, members in runs]


def _candidates(p: Part, placed: list[Part], events: list[Event]) -> list[str]:
    """The clusters whose evidence covers ``p``'s time, less those where its broker id then ran from other files
    (0.10.1.0 ``ZkUtils.registerBrokerInZk`` refuses a second /brokers/ids/N; a KRaft controller a second live
    incarnation) and those whose controller elections its own do not fit in."""
    out = []
    for k in sorted({q.key for q in placed}):
        mine = [q for q in placed if q.key == k]
        if not any(_overlaps(p, q) for q in mine):
            continue
        if p.broker is not None and any(q.broker == p.broker and q.unit != p.unit and _overlaps(p, q) for q in mine):
            continue
        if _fits(p.members, [i for q in mine for i in q.members], events) is False:
            continue
        out.append(k)
    return out


def _next_to(p: Part, placed: list[Part], events: list[Event], fresh: int) -> int:
    """A part outside every cluster's time: with the cluster next to it (its own folder's first) whose controller
    elections (else the controller epochs its lines carry) it continues; a cluster of its own where they went
    back. Returns the count of such clusters."""
    same = [q for q in placed if q.unit == p.unit] or placed
    near = min(same, key=lambda q: (_gap(p, q), q.key))
    theirs = [i for q in placed if q.key == near.key for i in q.members]
    fits = _fits(p.members, theirs, events)
    mine, its = _epochs(theirs, events), _epochs(p.members, events)
    shown = _show(near.key)
    if fits is None and mine is not None and its is not None:
        fits = (its[1] <= mine[0]) if (p.end or 0) <= (near.start or 0) else (mine[1] <= its[0])
        how = f"the controller epochs of its lines ({its[0]}..{its[1]}) and {shown}'s ({mine[0]}..{mine[1]})"
    else:
        how = (f"the controller epochs won in it ({_won(p.members, events)}) and in {shown} "
               f"({_won(theirs, events)})")
    if fits is None:
        p.key = near.key
        p.told_by = (f"nothing in the evidence tells whether they belong to {shown}, the cluster next to them in "
                     "time: replayed with it")
    elif fits:
        p.key = near.key
        p.told_by = f"names no cluster; no cluster's evidence covers that time, and {how} follow on"
    else:
        fresh += 1
        p.key = f"unnamed:{fresh}"
        p.told_by = (f"names no cluster; {how} do not follow on: the controller epoch went back, so ZooKeeper's "
                     "data (or the metadata log) was new")
    return fresh


def _history(members: list[int], events: list[Event]) -> list[tuple[int, int]]:
    """(time, epoch) of the controller elections won in these events, each epoch once (its first line)."""
    first: dict[int, int] = {}
    for i in members:
        w = won_epoch(events[i])
        if w is not None and events[i].ts is not None and (w not in first or events[i].ts < first[w]):
            first[w] = events[i].ts
    return sorted((t, w) for w, t in first.items())


def _fits(a: list[int], b: list[int], events: list[Event]) -> bool | None:
    """Whether two sets of events can be one cluster's history as the controller elections in them tell: ordered
    by time, each election wins a higher epoch than every one before it (``won_epoch``). None: one side holds no
    election."""
    ha, hb = _history(a, events), _history(b, events)
    if not ha or not hb:
        return None
    epochs = [w for _, w in sorted(ha + hb)]
    return all(x < y for x, y in zip(epochs, epochs[1:]))


def _won(members: list[int], events: list[Event]) -> str:
    return ", ".join(str(w) for _, w in _history(members, events)) or "none"


def _gap(p: Part, q: Part) -> int:
    if q.start is None:
        return 1 << 62
    return 0 if _overlaps(p, q) else min(abs(p.start - q.end), abs(q.start - p.end))


def _epochs(members: list[int], events: list[Event]) -> tuple[int, int] | None:
    got = [events[i].controller_epoch for i in members
           if events[i].event_type in EPOCH_EVENTS and events[i].controller_epoch is not None]
    return (min(got), max(got)) if got else None


def _left_out(unit: tuple, cands: tuple, why: str, ps: list[Part], events: list[Event]) -> dict[str, Any]:
    members = sorted(i for q in ps for i in q.members)
    span = Part(unit, members, min((q.start for q in ps if q.start is not None), default=None),
                max((q.end for q in ps if q.end is not None), default=None), unit[2])
    could = " or ".join(_show(k) for k in cands) if cands else "none of the clusters the evidence names"
    return {"kind": "cluster_not_told", "count": len(members),
            "text": f"{len(members):,} events of {span.where()} {why}, and could belong to {could}: left out of "
                    "every replay",
            "evidence": [_cite(events[members[0]])]}


def _show(key: str) -> str:
    kind, _, value = key.partition(":")
    return {"id": f"cluster id {value}", "chroot": f"ZooKeeper chroot {value}", "folder": f"the cluster of {value}/"}.get(
        kind, f"unnamed cluster {value}")


def _cite(e: Event) -> dict[str, Any]:
    return {"ts": iso_utc(e.ts), "source_file": e.source_file, "source_pos": e.source_pos,
            "text": (e.raw or "").split("\n", 1)[0][:300]}


def _describe(key: str, mine: list[Part], events: list[Event], base: str | None, proof: list[dict]) -> Cluster:
    kind, _, value = key.partition(":")
    tag = {"id": value, "chroot": f"chroot {value}", "folder": value}.get(kind, f"unnamed {value}")
    clues = sorted((i for p in mine for i in (p.ids if kind == "id" else p.chroots).values()
                    if label(events[i]) == key),
                   key=lambda i: (events[i].ts or 0, events[i].source_file or "", events[i].source_pos or 0))
    seen, evidence = set(), []
    for i in clues:
        via = (events[i].detail or {}).get("via")
        if via not in seen:
            seen.add(via)
            evidence.append(_cite(events[i]))
    brokers = {p.broker for p in mine if p.broker is not None}
    brokers |= {events[i].subject_broker for i in clues if events[i].subject_broker is not None}
    told: dict[tuple, list[Part]] = defaultdict(list)
    for p in mine:
        if p.told_by:
            told[(p.unit, p.told_by)].append(p)
    attributed = []
    for (unit, why), ps in told.items():
        n = sum(len(p.members) for p in ps)
        span = Part(unit, [], min((p.start for p in ps if p.start is not None), default=None),
                    max((p.end for p in ps if p.end is not None), default=None), unit[2])
        attributed.append(f"{n:,} events of {span.where()}: {why}")
    label_text = {"unnamed": "a cluster the evidence does not name",
                  "folder": f"the folder {value}/: a broker id ran in it and in another folder at once"}.get(
        kind, _show(key))
    evidence += proof
    return Cluster(f"{base} [{tag}]" if base else tag, label_text,
                   min((p.start for p in mine if p.start is not None), default=None),
                   max((p.end for p in mine if p.end is not None), default=None),
                   sorted(brokers), sum(len(p.members) for p in mine), evidence, attributed)
