"""How much an unclean election lost: the old leader's log end offset minus the new leader's.

The new leader's log end offset at the election is what it logged on becoming
leader ("starts at leader epoch E from offset X"); the old leader's is what it
logged when it came back as a follower of that epoch, before truncating
("Follower t-p starts at leader epoch E from offset X"), or, failing that, the
last end offset the logs gave for it (an ISR shrink line: a lower bound).
Without offsets in the evidence the loss is "possible", never invented.
"""
from __future__ import annotations

import bisect
import itertools
from typing import Any

from parsers.schema import Event, iso_utc
from replay_engine.zk.from_events import ref_of
from replay_engine.common.partition import Decision


def _after(events: list[Event], tp, broker: int, ts: int, types: tuple[str, ...], epoch: int | None) -> Event | None:
    for e in events:
        if e.event_type in types and e.broker_id == broker and e.topic == tp[0] and e.partition == tp[1] \
                and e.ts is not None and e.ts >= ts and (e.detail or {}).get("offset") is not None \
                and (epoch is None or e.leader_epoch is None or e.leader_epoch >= epoch):
            return e
    return None


def _shrink_before(events: list[Event], tp, broker: int, ts: int) -> tuple[int, Event] | None:
    """The last end offset an ISR-shrink line gave for ``broker``'s replica before ``ts``."""
    best = None
    for e in events:
        if e.event_type != "isr_shrink" or e.topic != tp[0] or e.partition != tp[1] or e.ts is None or e.ts > ts:
            continue
        d = e.detail or {}
        if e.broker_id == broker and d.get("leader_end_offset") is not None:
            best = (int(d["leader_end_offset"]), e)
        off = (d.get("out_of_sync_end_offsets") or {}).get(str(broker))
        if off is not None:
            best = (int(off), e)
    return best


def _log_end(events: list[Event], tp, broker: int | None, ts: int, become: str, epoch, evidence: list,
             basis: list[str], said_after: str, said_before: str,
             by_writer: dict[tuple, _Offsets] | None = None) -> int | None:
    """A broker's log end offset around the election: what it logged on taking its new role, else what the
    leader recorded when it left the ISR before; its evidence and the sentence saying which, appended."""
    if broker is None:
        return None
    if by_writer is None:
        e = _after(events, tp, broker, ts, (become,), epoch)
    else:
        own = by_writer.get((tp[0], tp[1], become, broker))
        e = None if own is None else own.after(ts, epoch)
    if e is not None:
        offset, ev, said = int(e.detail["offset"]), e, said_after
    else:
        s = _shrink_before(events, tp, broker, ts)
        if s is None:
            return None
        (offset, ev), said = s, said_before
    evidence.append(ref_of(ev))
    basis.append(said.format(b=broker, o=offset))
    return offset


class _Offsets:
    """One broker's lines of one type about one partition that give an offset, in order, for ``_after`` asked of
    them again and again (each unclean election of the partition asks twice): ``reach[i]``, the latest time among
    the first i + 1 lines, is sorted, so the first line at or after a time is found by bisection, whatever order
    the lines' times are in."""

    __slots__ = ("lines", "reach")

    def __init__(self, lines: list[Event]):
        self.lines = [e for e in lines if e.ts is not None and (e.detail or {}).get("offset") is not None]
        self.reach = list(itertools.accumulate((e.ts for e in self.lines), max))

    def after(self, ts: int, epoch: int | None) -> Event | None:
        """``_after`` over these lines."""
        lines = self.lines
        for i in range(bisect.bisect_left(self.reach, ts), len(lines)):
            e = lines[i]
            if e.ts >= ts and (epoch is None or e.leader_epoch is None or e.leader_epoch >= epoch):
                return e
        return None


# the lines an estimate reads: the new leader's and the old leader's offsets, and ISR shrinks' end offsets
_READ = frozenset({"become_leader", "become_follower", "isr_shrink"})


def estimates(decisions: list[Decision], events: list[Event]) -> list[dict[str, Any]]:
    """``estimate`` of each unclean election, each over its own partition's lines, indexed once (in their order):
    a scan of every event per election was 80% of a KRaft replay with thousands of them. A partition's ISR
    shrinks are all ``_shrink_before`` reads of it; a writer's lines of its new role, all ``_after`` reads."""
    shrinks: dict[tuple, list[Event]] = {}
    by_writer: dict[tuple, list[Event]] = {}  # (topic, partition, type, broker) -> its lines, in order
    if decisions:
        for e in events:
            if e.event_type in _READ and e.topic is not None:
                if e.event_type == "isr_shrink":
                    shrinks.setdefault((e.topic, e.partition), []).append(e)
                else:
                    by_writer.setdefault((e.topic, e.partition, e.event_type, e.broker_id), []).append(e)
    offsets = {key: _Offsets(lines) for key, lines in by_writer.items()}
    return [_estimate(d, shrinks.get(tuple(d.tp), []), offsets) for d in decisions]


def estimate(d: Decision, events: list[Event]) -> dict[str, Any]:
    """The loss of the unclean election ``d``, from ``events`` (its partition's lines suffice)."""
    return _estimate(d, events, None)


def _estimate(d: Decision, events: list[Event], by_writer: dict[tuple, _Offsets] | None) -> dict[str, Any]:
    """``by_writer``: the lines of ``events`` that give an offset by (topic, partition, type, broker), where
    ``estimates`` indexed them."""
    tp = d.tp
    old_isr = list(d.before.get("isr") or [])
    old = d.before.get("leader")
    if old is None or old < 0:
        old = old_isr[0] if old_isr else None
    new = (d.after or {}).get("leader")
    epoch = (d.after or {}).get("leader_epoch")
    evidence = [d.trigger] + ([d.record] if d.record else [])
    basis = []
    new_leo = _log_end(events, tp, new, d.ts, "become_leader", epoch, evidence, basis,
                       "broker {b} became leader at offset {o}", "broker {b} was at offset {o} when it left the ISR",
                       by_writer)
    old_leo = _log_end(events, tp, old, d.ts, "become_follower", epoch, evidence, basis,
                       "broker {b} came back with its log ending at offset {o}",
                       "broker {b} had written up to offset {o} (at least)", by_writer)
    lost = old_leo - new_leo if old_leo is not None and new_leo is not None and old_leo > new_leo else (
        0 if old_leo is not None and new_leo is not None else None)
    out = {
        "topic": tp[0], "partition": tp[1], "ts": iso_utc(d.ts), "old_leader": old, "new_leader": new,
        "isr_before": old_isr, "old_leader_log_end_offset": old_leo, "new_leader_log_end_offset": new_leo,
        "lost_messages": lost, "possible_data_loss": lost is None or lost > 0,
        "evidence": [r.to_json() for r in evidence if r is not None],
    }
    if lost:
        out["lost_offsets"] = {"from": new_leo, "to_exclusive": old_leo}
        out["text"] = (f"{tp[0]}-{tp[1]}: broker {new} was elected leader although not in the ISR {old_isr}; offsets "
                       f"{new_leo}..{old_leo - 1} ({lost:,} messages) existed only on broker {old} and were lost "
                       f"({'; '.join(basis)}).")
    elif lost == 0:
        out["text"] = f"{tp[0]}-{tp[1]}: broker {new} was elected uncleanly but had every offset broker {old} had."
    else:
        out["text"] = (f"{tp[0]}-{tp[1]}: broker {new} was elected leader although not in the ISR {old_isr}: messages "
                       f"acknowledged by the old ISR may be lost (the evidence gives no offsets to count them).")
    return out
