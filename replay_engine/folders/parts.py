"""The parts of a folder's evidence that belong to one cluster each, and the cluster each part names.

A part is what goes to one cluster whole: one broker's run in one folder's logs (its lines in time order, across
``server.log``, ``controller.log`` and the rest, cut where the cluster it names changes), or one folder of files
that are not logs (a metadata log's ``__cluster_metadata-0/``, a ZooKeeper ``version-2/``). A part names its
cluster by a ``cluster_identity`` event of its own, by the ``meta.properties`` of its folder (or of an enclosing
one), by a KRaft broker incarnation a log line placed in a cluster, or by a ZooKeeper chroot that only one cluster
id was seen with (``replay_engine.folders.clusters`` places the parts that name none).
"""
from __future__ import annotations

import bisect
import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field

from parsers.schema import Event, iso_utc

CLUE = "cluster_identity"
LOG_KINDS = ("broker_log", "client_log")
# What a broker logs while it starts, before the line that names its cluster: the configuration dump, the
# start-up line, the ZooKeeper session (0.10.1.0 KafkaServer.startup: initZk, then getOrGenerateClusterId), the
# Raft quorum's first transitions (3.5.0 KafkaRaftServer.startup: the controller's RaftManager starts before the
# QuorumController that logs the cluster id, the broker's before BrokerLifecycleManager.start).
START_UP = frozenset({"broker_config", "broker_startup", "zk_session_established", "zk_disconnected", "kafka_version",
                      CLUE, "kraft_quorum_epoch", "kraft_leader_change", "kraft_snapshot_load"})


@dataclass
class Part:
    unit: tuple  # ("log", folder, writer broker) or ("dir", folder, None)
    members: list[int]  # indexes of its events
    start: int | None
    end: int | None
    broker: int | None
    ids: dict[str, int] = field(default_factory=dict)  # cluster id -> the event that names it first
    chroots: dict[str, int] = field(default_factory=dict)  # ZooKeeper chroot -> the event that names it first
    key: str | None = None  # 'id:X', 'chroot:/x', 'unnamed:N'
    told_by: str | None = None  # why a part that names no cluster was given one (or could not be)

    def where(self) -> str:
        who = (f"broker {self.broker}'s lines" if self.broker is not None
               else "lines naming no broker" if self.unit[0] == "log" else "the files")
        return f"{who} in {self.unit[1] or '.'}/ ({iso_utc(self.start)} to {iso_utc(self.end)})"


def label(e: Event) -> str | None:
    """'id:X' or 'chroot:/x' for a cluster_identity event."""
    if e.event_type != CLUE:
        return None
    d = e.detail or {}
    if d.get("cluster_id"):
        return "id:" + d["cluster_id"]
    if d.get("zk_chroot"):
        return "chroot:" + d["zk_chroot"]
    return None


def event_times(events: list[Event]) -> list[int | None]:
    """Each event's time; an event without one takes that of the event before it in its file."""
    out = [e.ts for e in events]
    files = {e.source_file for e in events if e.ts is None}
    for f in files:
        order = sorted((i for i, e in enumerate(events) if e.source_file == f),
                       key=lambda i: (events[i].source_pos or 0, events[i].source_sub))
        last = next((events[i].ts for i in order if events[i].ts is not None), None)
        for i in order:
            last = events[i].ts if events[i].ts is not None else last
            out[i] = last
    return out


def writers(events: list[Event]) -> list[int | None]:
    """The broker that wrote each log line. Brokers sharing one file (a shared ``logs/`` folder) do not name
    themselves while they start (0.10.1-2.x ``starting``, ``Cluster ID = X``): such a line is the broker's that
    its process's start-up names (the configuration dump's ``broker.id``, a prefixed start-up line, else the
    ``started`` or ``Registered broker N`` line that ends that start-up), one start-up being the lines from its
    configuration dump or ``starting`` line on."""
    out = [_own(e) for e in events]
    by_file: dict[str | None, list[int]] = defaultdict(list)
    for i, e in enumerate(events):
        if e.source_kind in LOG_KINDS:
            by_file[e.source_file].append(i)
    for order in by_file.values():
        order.sort(key=lambda i: (events[i].source_pos or 0, events[i].source_sub))
        start = 0
        for k in range(len(order) + 1):
            e = events[order[k]] if k < len(order) else None
            burst = order[start:k]
            if e is not None and e.event_type in START_UP and not (
                    _process_start(e) and any(events[j].event_type == "broker_startup" for j in burst)):
                continue
            # a ``started`` line ends the start-up of the broker it names, which may be another process of the
            # folder that began earlier (0.10.1-2.x KafkaServer.startup logs it last): the lines that name the
            # process as it starts (its configuration dump's broker.id) tell whose start-up this is first
            known = next((out[j] for j in burst if out[j] is not None and not _started(events[j])),
                         next((out[j] for j in burst if out[j] is not None), None))
            if known is None and any(_process_start(events[j]) for j in burst):
                known = _started_as(order, k, events)
            for j in burst:
                if out[j] is None:
                    out[j] = known
            start = k if e is not None and e.event_type in START_UP else k + 1
    return out


def _started_as(order: list[int], k: int, events: list[Event]) -> int | None:
    """The broker a start-up's end names: its ``started`` or self-registration line, before the next start-up."""
    for i in order[k:]:
        e = events[i]
        if _process_start(e):
            return None
        if e.subject_broker is not None and (
                (e.event_type == "broker_startup" and (e.detail or {}).get("phase") == "started")
                or (e.event_type == "broker_registered" and (e.detail or {}).get("via") == "broker_self")):
            return e.subject_broker
    return None


def _own(e: Event) -> int | None:
    if e.broker_id is not None or e.source_kind not in LOG_KINDS:
        return e.broker_id
    # a broker's configuration dump and start-up lines are about itself
    return e.subject_broker if e.event_type in ("broker_config", "broker_startup", CLUE) else None


def _process_start(e: Event) -> bool:
    return e.event_type == "broker_startup" and (e.detail or {}).get("phase") == "starting"


def parts_of(events: list[Event], times: list[int | None]) -> list[Part]:
    who = writers(events)
    labs = _labels(events)
    units: dict[tuple, list[int]] = defaultdict(list)
    starts_in: dict[str, list[int]] = defaultdict(list)  # folder -> its processes' start-up lines
    for i, e in enumerate(events):
        folder = posixpath.dirname(e.source_file or "")
        units[("log", folder, who[i]) if e.source_kind in LOG_KINDS else ("dir", folder, None)].append(i)
        if e.source_kind in LOG_KINDS and _process_start(e):
            starts_in[folder].append(i)
    parts = []
    for unit in sorted(units, key=lambda u: (u[0], u[1], -1 if u[2] is None else u[2])):
        order = sorted(units[unit], key=lambda i: (times[i] or 0, events[i].source_file or "",
                                                   events[i].source_pos or 0, events[i].source_sub))
        if unit[0] == "dir":
            runs = [order]
        elif unit[2] is None:
            # lines that name no broker may come from any process in the folder: those from a start-up that names
            # a cluster to the next start-up in the folder go with it, the others one by one (replay_engine.folders.clusters)
            starts = sorted({times[i] for i in starts_in[unit[1]] if times[i] is not None})
            at = [times[i] or 0 for i in order]
            cuts = sorted({bisect.bisect_left(at, t) for t in starts})
            bounds = [0] + [k for k in cuts if 0 < k < len(order)] + [len(order)]
            runs = [order[a:b] for a, b in zip(bounds, bounds[1:])]
            runs = [r for r in runs if any(labs[i] for i in r)] + [[i for r in runs if not any(labs[j] for j in r)
                                                                     for i in r]]
        else:
            runs = _runs(order, events, labs)
        for run in (r for r in runs if r):
            ts = [times[i] for i in run if times[i] is not None]
            p = Part(unit, run, min(ts, default=None), max(ts, default=None), unit[2])
            for i in run:
                lab = labs[i]
                if lab and lab.startswith("id:"):
                    p.ids.setdefault(lab[3:], i)
                elif lab:
                    p.chroots.setdefault(lab[7:], i)
            parts.append(p)
    return parts


_STORED = re.compile(r"doesn't match stored clusterId Some\((\S+?)\)")


def _labels(events: list[Event]) -> list[str | None]:
    """Each event's ``label``, but for a start-up refused because ZooKeeper's /cluster/id is not the one in the
    broker's meta.properties (2.4.0 ``KafkaServer.startup`` logs ``Cluster ID = X``, then throws
    InconsistentClusterIdException "The Cluster ID X doesn't match stored clusterId Some(Y) in meta.properties"):
    that process belongs to its log directories' cluster Y and never joined X."""
    labs = [label(e) for e in events]
    by_file: dict[str | None, list[int]] = defaultdict(list)
    for i, e in enumerate(events):
        if e.source_kind in LOG_KINDS and (labs[i] or e.event_type == "broker_fatal_error"):
            by_file[e.source_file].append(i)
    for order in by_file.values():
        order.sort(key=lambda i: (events[i].source_pos or 0, events[i].source_sub))
        for a, b in zip(order, order[1:]):
            d = events[b].detail or {}
            m = _STORED.search(d.get("message") or "") if d.get("cause") == "inconsistent_cluster_id" else None
            if m and labs[a] == "id:" + (events[a].detail or {}).get("cluster_id", "") and \
                    f"Cluster ID {events[a].detail['cluster_id']} " in d.get("message", ""):
                labs[a] = "id:" + m.group(1)
    return labs


def _runs(order: list[int], events: list[Event], labs: list[str | None]) -> list[list[int]]:
    """One folder's lines of one broker, in time order, cut where the cluster they name changes. The cut is at
    the start-up of the process that names the new cluster: the start-up lines before its naming line go with it,
    not with the process before (which ended with a shutdown, or with lines a start-up does not write)."""
    kind = "id:" if any((labs[i] or "").startswith("id:") for i in order) else "chroot:"
    cuts = [0]
    current = None
    for k, i in enumerate(order):
        lab = labs[i]
        if not lab or not lab.startswith(kind) or lab == current:
            continue
        j = k
        while j > cuts[-1] and _starting(events[order[j - 1]], labs[order[j - 1]], lab):
            j -= 1
        if j > cuts[-1]:
            cuts.append(j)
        current = lab
    bounds = cuts + [len(order)]
    return [piece for a, b in zip(bounds, bounds[1:]) for piece in _epoch_runs(order[a:b], events)]


def won_epoch(e: Event) -> int | None:
    """The controller epoch a controller election won: each ZooKeeper-mode election writes the next epoch to
    /controller_epoch with a conditional write (0.10.1.0 ``KafkaController.incrementControllerEpoch``), each KRaft
    election starts the next quorum epoch; so within one cluster's history an epoch is won once."""
    if e.controller_epoch is None:
        return None
    if e.event_type == "controller_elected" or (
            e.event_type == "kraft_leader_change" and (e.detail or {}).get("via") == "became_active"):
        return e.controller_epoch
    return None


def _epoch_runs(run: list[int], events: list[Event]) -> list[list[int]]:
    """A run cut where the controller epoch its broker wins goes back (or is won again after a restart): ZooKeeper's
    data, or the metadata log, was new. The cut is at the restart before that election (the process's start-up,
    else the ZooKeeper session it opened), else at the election."""
    out, start, top, since = [], 0, None, None
    for k, i in enumerate(run):
        e = events[i]
        if _process_start(e) or (since is None and e.event_type == "zk_session_established"):
            since = k
        won = won_epoch(e)
        if won is None:
            continue
        if top is not None and (won < top or (won == top and since is not None)):
            cut = since if since is not None and since > start else k
            if cut > start:
                out.append(run[start:cut])
                start = cut
            top = won
        else:
            top = won if top is None else max(top, won)
        since = None
    out.append(run[start:])
    return out


def _starting(e: Event, other: str | None, lab: str) -> bool:
    """Whether ``e`` (naming ``other``) may be part of the start-up that names ``lab`` (a line naming another
    cluster is not)."""
    if e.event_type not in START_UP:
        return False
    return other is None or other == lab or other.split(":", 1)[0] != lab.split(":", 1)[0]


def name_parts(parts: list[Part], events: list[Event]) -> None:
    """Set each part's ``key`` where the evidence names its cluster: its own id; the ``meta.properties`` of its
    folder (or an enclosing one) for files that are not logs; a KRaft broker incarnation that a log line placed in
    a cluster (a metadata log's RegisterBrokerRecord carries the incarnation id BrokerLifecycleManager logs, 2.8.0
    ``BrokerLifecycleManager.start``); where brokers name different ZooKeeper chroots, a chroot seen with one
    cluster id only, or with none."""
    dir_ids: dict[str, set[str]] = defaultdict(set)
    incarnations: dict[str, str] = {}
    chroot_ids: dict[str, set[str]] = defaultdict(set)
    for p in parts:
        for cid, i in p.ids.items():
            d = events[i].detail or {}
            if d.get("via") == "meta_properties":
                dir_ids[p.unit[1]].add(cid)
            if d.get("incarnation_id"):
                incarnations[d["incarnation_id"]] = cid
        for c in p.chroots:
            chroot_ids[c].update(p.ids)
    if len(chroot_ids) < 2:
        chroot_ids.clear()  # one chroot for every broker tells nothing apart
    for p in parts:
        ids = set(p.ids)
        if p.unit[0] == "dir":
            if not ids:
                ids = _enclosing(dir_ids, p.unit[1])
            ids |= {incarnations[inc] for inc in ((events[i].detail or {}).get("incarnation_id") for i in p.members
                                                  if events[i].event_type != CLUE) if inc in incarnations}
        if len(ids) == 1:
            p.key = "id:" + next(iter(ids))
        elif len(ids) > 1:
            p.told_by = "names clusters " + " and ".join(sorted(ids))
        elif len(p.chroots) == 1 and chroot_ids:
            c = next(iter(p.chroots))
            seen = chroot_ids[c]
            if len(seen) == 1:
                p.key = "id:" + next(iter(seen))
            elif not seen:
                p.key = "chroot:" + c


def _enclosing(dir_ids: dict[str, set[str]], folder: str) -> set[str]:
    while True:
        if folder in dir_ids:
            return set(dir_ids[folder])
        if not folder:
            return set()
        folder = posixpath.dirname(folder)


def twice_at_once(events: list[Event]) -> list[tuple[int, int]]:
    """Pairs of ``started`` lines (event indexes) of one broker id in two folders whose processes then ran at the same
    time: a broker id is registered once at a time in a cluster (0.10.1.0 ``ZkUtils.registerBrokerInZk`` fails on
    an existing /brokers/ids/N; a KRaft controller refuses a second live incarnation), so two such processes are
    two clusters. A process runs from its ``started`` line to its last line before its folder's next start-up of
    that broker; two lines started at the same instant are one process collected twice, not two."""
    folders: dict[int, set[str]] = defaultdict(set)
    for e in events:
        if _started(e) and e.subject_broker is not None:
            folders[e.subject_broker].add(posixpath.dirname(e.source_file or ""))
    if all(len(f) < 2 for f in folders.values()):
        return []
    times, who = event_times(events), writers(events)
    units: dict[tuple, list[int]] = defaultdict(list)
    for i, e in enumerate(events):
        if e.source_kind in LOG_KINDS and who[i] in folders and len(folders[who[i]]) > 1:
            units[(posixpath.dirname(e.source_file or ""), who[i])].append(i)
    lives: dict[int, list[tuple[str, int, int, int]]] = defaultdict(list)  # broker -> (folder, started, from, to)
    for (folder, broker), members in sorted(units.items()):
        members.sort(key=lambda i: (times[i] or 0, events[i].source_file or "", events[i].source_pos or 0))
        life = None
        for i in members + [-1]:
            e = events[i] if i >= 0 else None
            if e is None or _process_start(e) or _started(e):
                if life is not None:
                    lives[broker].append(life)
                life = (folder, i, times[i], times[i]) if e is not None and _started(e) and times[i] else None
            elif life is not None and times[i] is not None and e.event_type not in START_UP:
                life = (life[0], life[1], life[2], max(life[3], times[i]))
    out = []
    for broker, ls in sorted(lives.items()):
        for a in ls:
            for b in ls:
                if a[0] < b[0] and a[2] != b[2] and a[2] <= b[3] and b[2] <= a[3]:
                    out.append((a[1], b[1]))
    return out


def _started(e: Event) -> bool:
    return e.event_type == "broker_startup" and (e.detail or {}).get("phase") == "started"
