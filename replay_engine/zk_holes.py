"""Transactions no file holds: holes in ZooKeeper's data.

ZooKeeper numbers every transaction (zxid = epoch << 32 | counter) one by one within an epoch, a new epoch's first
transaction being counter 1 (or 0), and names each txn log after its first zxid; a snapshot is named after the last
zxid it had applied. So the spans of the txn logs (``zk_txnlog_span``: first and last zxid of each file's readable
entries, several servers' copies merged) and the snapshots' zxids tell which transactions are in no file: a txn log
lost between two others, or a server's log that starts later than the snapshot before it. What ZooKeeper wrote
there is unknown to the replay: a hole is told at the first transaction after it.
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


def _follows(prev_end: int, start: int) -> bool:
    """Is ``start`` the transaction right after ``prev_end`` (or a new epoch's first)?"""
    if start <= prev_end + 1:
        return True
    return (start >> 32) > (prev_end >> 32) and (start & _COUNTER) <= 1


def find_holes(spans: Iterable[Event], snapshot_zxids: Iterable[int]) -> list[Hole]:
    items: list[tuple[int, int, Event | None]] = []
    for ev in spans:
        d = ev.detail or {}
        if d.get("first_zxid") is not None and d.get("last_zxid") is not None:
            items.append((int(d["first_zxid"]), int(d["last_zxid"]), ev))
    if not items:
        return []
    items += [(z, z, None) for z in snapshot_zxids]  # a snapshot states everything up to its zxid
    items.sort(key=lambda x: (x[0], x[1], x[2] is not None))
    holes: list[Hole] = []
    end = None
    for start, stop, ev in items:
        if end is not None and ev is not None and not _follows(end, start):
            holes.append(Hole(end, start, ev))
        end = stop if end is None else max(end, stop)
    return holes
