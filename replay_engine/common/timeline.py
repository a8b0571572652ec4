"""Per-partition timeline: consecutive intervals of (leader, ISR, epochs, state, leader alive?).

A partition is *leaderless* in an interval when its leader is -1, or its
leader's broker is not alive (between that broker's death and the next
election the partition has no working leader even though the state znode
still names the dead broker), or it is offline/being deleted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Iterable, TypeVar

from parsers.schema import iso_utc
from replay_engine.common.facts import TP, Ref
from replay_engine.common.frozen import quick_init

T = TypeVar("T")


def timeline_arrow_schema():
    """The partition_timeline table: one row per interval (``Interval.to_row`` plus the cluster)."""
    import pyarrow as pa

    return pa.schema([
        ("cluster", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
        ("start", pa.timestamp("us", tz="UTC")), ("end", pa.timestamp("us", tz="UTC")),
        ("leader", pa.int32()), ("isr", pa.list_(pa.int32())), ("leader_epoch", pa.int32()),
        ("controller_epoch", pa.int32()), ("state", pa.string()), ("leader_alive", pa.bool_()),
        # False: the leader's process had died while ZooKeeper still listed it (a halt), so nothing served
        ("leader_serving", pa.bool_()), ("leaderless", pa.bool_()), ("basis", pa.string()), ("opened_by_event", pa.string()),
        ("opened_by_file", pa.string()), ("opened_by_pos", pa.int64()), ("opened_by_text", pa.string()),
    ])


@quick_init
@dataclass(frozen=True)
class View:
    leader: int | None
    isr: tuple[int, ...] | None
    leader_epoch: int | None
    controller_epoch: int | None
    state: str
    leader_alive: bool | None  # the leader's broker is registered (None when the leader is unknown)
    leader_serving: bool | None = None  # False: registered but its process is dead (what-if kill -9 window)

    @property
    def leaderless(self) -> bool:
        """No live leader as the cluster saw it (leader -1, or its broker deregistered, or offline)."""
        if self.state == "OfflinePartition":
            # Kafka's OfflinePartition (PartitionStateMachine, 0.8 .. 3.9): "the leader for the partition dies" or the
            # topic is being deleted; no leader serves it even when the replay does not know which one it had.
            return True
        if self.state == "NonExistentPartition" and self.leader is not None:
            return True
        if self.leader == -1:
            return True
        return self.leader is not None and self.leader_alive is False

    @property
    def unavailable(self) -> bool:
        """Leaderless, or led by a broker whose process is already dead while ZooKeeper still lists it."""
        return self.leaderless or self.leader_serving is False


@dataclass
class Interval:
    topic: str
    partition: int
    start: int
    end: int | None  # None = still so when the evidence ends
    view: View
    opened_by: Ref
    basis: str  # 'recorded', 'replayed', 'observed', 'liveness'

    def to_row(self) -> dict[str, Any]:
        v = self.view
        return {
            "topic": self.topic,
            "partition": self.partition,
            "start": self.start,
            "end": self.end,
            "leader": v.leader,
            "isr": list(v.isr) if v.isr is not None else None,
            "leader_epoch": v.leader_epoch,
            "controller_epoch": v.controller_epoch,
            "state": v.state,
            "leader_alive": v.leader_alive,
            "leader_serving": v.leader_serving,
            "leaderless": v.leaderless,
            "basis": self.basis,
            "opened_by_event": self.opened_by.event,
            "opened_by_file": self.opened_by.source_file,
            "opened_by_pos": self.opened_by.source_pos,
            "opened_by_text": self.opened_by.text,
        }

    def describe(self) -> str:
        v = self.view
        return f"{self.topic}-{self.partition} {iso_utc(self.start)}..{iso_utc(self.end)} leader={v.leader} isr={v.isr}"


@dataclass
class TimelineBuilder:
    closed: list[Interval] = field(default_factory=list)
    open: dict[TP, Interval] = field(default_factory=dict)

    def update(self, tp: TP, ts: int, view: View, ref: Ref, basis: str) -> None:
        cur = self.open.get(tp)
        if cur is not None:
            if cur.view == view:
                return
            if ts < cur.start:
                ts = cur.start  # facts from a skewed clock never reopen the past
            cur.end = ts
            if cur.end > cur.start:  # two changes at one instant are one change, not an outage
                self.closed.append(cur)
        self.open[tp] = Interval(tp[0], tp[1], ts, None, view, ref, basis)

    def update_fields(self, tp: TP, ts: int, ref: Ref, basis: str, leader: int | None, isr: tuple[int, ...] | None,
                      leader_epoch: int | None, controller_epoch: int | None, state: str, leader_alive: bool | None,
                      leader_serving: bool | None = None) -> None:
        """``update`` with a view given by its fields, made only where it differs from the open interval's (a replay
        shows each partition at every step, and half its steps change nothing shown)."""
        cur = self.open.get(tp)
        if cur is not None:
            v = cur.view
            if (v.leader, v.isr, v.leader_epoch, v.controller_epoch, v.state, v.leader_alive, v.leader_serving) == (
                    leader, isr, leader_epoch, controller_epoch, state, leader_alive, leader_serving):
                return
        self.update(tp, ts, View(leader, isr, leader_epoch, controller_epoch, state, leader_alive, leader_serving), ref,
                    basis)

    def retime(self, tp: TP, ts: int) -> None:
        """The partition's latest change, which the replay took itself, happened at ``ts`` as a record of it says: the
        interval before it lasts until then."""
        cur = self.open.get(tp)
        if cur is None or cur.basis != "replayed" or ts <= cur.start:
            return
        for iv in reversed(self.closed):
            if (iv.topic, iv.partition) == tp:
                if iv.end == cur.start:
                    iv.end = ts
                break
        cur.start = ts

    def withdraw(self, tp: TP, ts: int) -> None:
        """The change the replay took itself at ``ts`` did not happen (a later line states the state before it): the
        interval it opened is dropped and the leaderless one before it goes on."""
        cur = self.open.get(tp)
        if cur is None or cur.basis != "replayed" or cur.start != ts:
            return
        for i in range(len(self.closed) - 1, -1, -1):
            iv = self.closed[i]
            if (iv.topic, iv.partition) == tp:
                if iv.end == cur.start and iv.view.leaderless:  # an outage the change was to end goes on
                    del self.closed[i]
                    iv.end = None
                    self.open[tp] = iv
                return

    def finish(self) -> list[Interval]:
        out = self.closed + list(self.open.values())
        self.open = {}
        out.sort(key=lambda i: (i.topic, i.partition, i.start, i.end if i.end is not None else 1 << 62))
        return out


@dataclass
class Episode(Generic[T]):
    """Consecutive leaderless items of one partition's timeline, merged by ``outage_runs``: one outage of that
    partition. The replay's are of its intervals; the dashboards' (``dashboards.model.Episode``) of the timeline rows
    it reads back, with what the replay said of each."""

    topic: str
    partition: int
    start: int
    end: int | None
    intervals: list[T]
    closed_by: Ref | None = None  # what gave the partition a leader again

    @classmethod
    def of_run(cls, run: list[T], closed_by: Ref | None = None):
        """The episode of one run of ``outage_runs``: from its first item's start to its last one's end."""
        return cls(run[0].topic, run[0].partition, run[0].start, run[-1].end, run, closed_by)

    @property
    def duration_us(self) -> int | None:
        return None if self.end is None else self.end - self.start


def outage_runs(items: Iterable[T], out: Callable[[T], bool]) -> list[tuple[list[T], T | None]]:
    """Runs of touching ``out`` items of one partition (``items`` sorted by partition, then start; each has
    topic, partition, start, end), each with the item that ended it when that one touches it (else None):
    one outage per run. The replay's episodes and the dashboards' are both cut by this rule."""
    runs: list[tuple[list[T], T | None]] = []
    cur: list[T] = []

    def touches(a, b) -> bool:
        return (a.topic, a.partition) == (b.topic, b.partition) and a.end == b.start

    for it in items:
        if not out(it):
            if cur:
                runs.append((cur, it if touches(cur[-1], it) else None))
                cur = []
            continue
        if cur and not touches(cur[-1], it):
            runs.append((cur, None))
            cur = []
        cur.append(it)
    if cur:
        runs.append((cur, None))
    return runs


def leaderless_episodes(intervals: list[Interval], unavailable: bool = False) -> list[Episode]:
    def out(iv: Interval) -> bool:
        return iv.view.unavailable if unavailable else iv.view.leaderless

    return [Episode.of_run(run, closer.opened_by if closer is not None else None)
            for run, closer in outage_runs(intervals, out)]
