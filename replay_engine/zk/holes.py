"""Transactions no file holds: holes in ZooKeeper's data.

ZooKeeper numbers every transaction (zxid = epoch << 32 | counter) one by one within an epoch, a new epoch's first
transaction being counter 1 (or 0), and names each txn log after its first zxid; a snapshot is named after the last
zxid it had applied. So the spans of the txn logs (``zk_txnlog_span``: first and last zxid of each file's readable
entries, several servers' copies merged) and the snapshots' zxids tell which transactions are in no file: a txn log
lost between two others, or a server's log that starts later than the snapshot before it. What ZooKeeper wrote
there is unknown to the replay: a hole is told at the first transaction after it.

A snapshot whose zxid is the last of a hole (FileTxnSnapLog takes one as the log rolls, so a lost txn log is often
followed by one) covers it: the tree it serialised is the state the lost transactions left, though not the path
they took (which broker went and came back, which elections were made). That hole is still a hole, one whose end
state is known (``Hole.snapshot``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from parsers.schema import Event

_COUNTER = (1 << 32) - 1


@dataclass(frozen=True)
class Hole:
    after: int  # last zxid held before the hole
    before: int  # first zxid held after it
    at: Event  # the span whose first transaction follows the hole
    snapshot: int | None = None  # the zxid of a snapshot stating the state at the hole's end, if one does


def _follows(prev_end: int, start: int) -> bool:
    """Is ``start`` the transaction right after ``prev_end`` (or a new epoch's first)?"""
    if start <= prev_end + 1:
        return True
    return (start >> 32) > (prev_end >> 32) and (start & _COUNTER) <= 1


def find_holes(spans: Iterable[Event], snapshot_zxids: Iterable[int]) -> list[Hole]:
    items: list[tuple[int, int, Event]] = []
    for ev in spans:
        d = ev.detail or {}
        if d.get("first_zxid") is not None and d.get("last_zxid") is not None:
            items.append((int(d["first_zxid"]), int(d["last_zxid"]), ev))
    if not items:
        return []
    snaps = sorted(set(snapshot_zxids))
    items.sort(key=lambda x: (x[0], x[1]))
    holes: list[Hole] = []
    end = None
    for start, stop, ev in items:
        if end is not None and not _follows(end, start):
            inside = [z for z in snaps if end < z < start]
            top = inside[-1] if inside else None
            if top is not None and _follows(top, start):
                holes.append(Hole(end, start, ev, snapshot=top))
            elif top is not None:
                # a snapshot part-way states the state there, and what follows it up to the next log is lost: a
                # covered hole, then one no file states
                holes.append(Hole(end, top + 1, ev, snapshot=top))
                holes.append(Hole(top, start, ev))
            else:
                holes.append(Hole(end, start, ev))
        end = stop if end is None else max(end, stop)
    return holes


@dataclass(frozen=True)
class EndState:
    """What a covering snapshot says of a hole's end: see ``facts.ZkHole``."""

    keep: frozenset
    assigned: frozenset
    members: frozenset
    anew: frozenset


def end_state(h: Hole, snap_events: Iterable[Event], zk_events: Iterable[Event]) -> EndState:
    """Read a covered hole's end from its snapshot's nodes (each event's zxid is its node's mzxid, or czxid for a
    registration).

    The snapshot is fuzzy (DataTree.serialize runs while transactions go on: a node may show a change past the
    snapshot's zxid, one whose txn the next log holds): a partition state modified after the hole began, before or
    after the snapshot's zxid, is not kept; a broker whose registration the snapshot lacks but whose next held
    transaction after the snapshot's zxid removes it was registered at that zxid."""
    keep, assigned, members, anew = set(), set(), set(), set()
    for ev in snap_events:
        if (ev.detail or {}).get("snapshot_zxid") != h.snapshot or ev.zxid is None:
            continue
        t = ev.event_type
        if t in ("partition_state_written", "partition_state_observed") and ev.topic is not None \
                and ev.partition is not None and ev.zxid <= h.after:
            keep.add((ev.topic, int(ev.partition)))
        elif t in ("topic_assignment_written", "topic_assignment_observed") and ev.topic is not None \
                and ev.zxid <= h.after:
            assigned.add(ev.topic)
        elif t in ("broker_registered", "broker_observed") and ev.subject_broker is not None \
                and (made := int((ev.detail or {}).get("czxid") or ev.zxid)) <= h.snapshot:
            members.add(int(ev.subject_broker))
            if made > h.after:
                anew.add(int(ev.subject_broker))
    nxt: dict[int, str] = {}
    for ev in sorted((e for e in zk_events if e.zxid is not None and e.zxid > h.snapshot
                      and e.event_type in ("broker_registered", "broker_deregistered")
                      and e.subject_broker is not None), key=lambda e: e.zxid):
        nxt.setdefault(int(ev.subject_broker), ev.event_type)
    members |= {b for b, t in nxt.items() if t == "broker_deregistered"}
    return EndState(frozenset(keep), frozenset(assigned), frozenset(members), frozenset(anew))
