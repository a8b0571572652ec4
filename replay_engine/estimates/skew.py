"""Clock skew between brokers (and ZooKeeper), measured from events that must be causally ordered.

If a cause is logged at time Ty by clock y and its effect at Tx by clock x,
then in true time cause <= effect, so ``offset_x - offset_y <= Tx - Ty``.
Every such pair bounds the skew from one side; pairs in both directions bound
it from both. Pairs used (all from the contract in docs/events.md):
- a broker registers itself (its own log) -> the controller sees it
  ("Newly added brokers"); ZooKeeper's create of /brokers/ids/N (txn time)
  -> the broker's own "Registered broker ... czxid" line;
- the controller's election write ("Changed partition ... leaderEpoch=E") ->
  the new leader's "starts at leader epoch E" / LeaderAndIsr received;
- ZooKeeper's /controller create -> the controller's "successfully elected".
Skew is reported, not corrected: corrected times would be guesses.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from parsers.schema import Event

ZK_CLOCK = "zookeeper"
# Below this, ordering noise (log buffering, thread scheduling) is not worth reporting.
REPORT_THRESHOLD_US = 1_000_000


@dataclass
class Bound:
    """offset(x) - offset(y) <= value, from the pair cause@y -> effect@x."""

    value: int
    cause: Event
    effect: Event


@dataclass
class SkewEstimate:
    clock_a: str
    clock_b: str
    low_us: int | None  # offset(a) - offset(b) >= low
    high_us: int | None  # offset(a) - offset(b) <= high
    pairs: int
    evidence: list[Event] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def ms(v):
            return None if v is None else round(v / 1000, 1)

        return {"clock_a": self.clock_a, "clock_b": self.clock_b, "offset_ms_at_least": ms(self.low_us),
                "offset_ms_at_most": ms(self.high_us), "pairs": self.pairs, "text": self.text(),
                "evidence": [{"source_file": e.source_file, "source_pos": e.source_pos, "event": e.event_type}
                             for e in self.evidence[:4]]}

    def text(self) -> str:
        if self.low_us is not None and self.low_us > 0:
            return (f"{self.clock_a}'s clock runs at least {self.low_us / 1e6:.1f} s ahead of {self.clock_b}'s "
                    f"(from {self.pairs} causally ordered event pair(s))")
        if self.high_us is not None and self.high_us < 0:
            return (f"{self.clock_a}'s clock runs at least {-self.high_us / 1e6:.1f} s behind {self.clock_b}'s "
                    f"(from {self.pairs} causally ordered event pair(s))")
        return f"no skew beyond the measurement between {self.clock_a} and {self.clock_b}"

    @property
    def significant(self) -> bool:
        return (self.low_us is not None and self.low_us > REPORT_THRESHOLD_US) or (
            self.high_us is not None and self.high_us < -REPORT_THRESHOLD_US)


def _clock(ev: Event) -> str | None:
    if ev.source_kind in ("zk_txnlog", "zk_snapshot"):
        return ZK_CLOCK
    if ev.source_kind == "broker_log" and ev.broker_id is not None:
        return f"broker {ev.broker_id}"
    return None


def _pairs(events: list[Event]) -> Iterable[tuple[Event, Event]]:
    """(cause, effect) pairs, each logged by a known clock."""
    self_reg: dict[int, list[Event]] = {}
    zk_reg: dict[int, Event] = {}
    zk_ctrl: dict[int, list[Event]] = {}
    writes: dict[tuple, Event] = {}
    for ev in events:
        d = ev.detail or {}
        t = ev.event_type
        if t == "broker_registered" and ev.subject_broker is not None:
            via = d.get("via")
            if via == "broker_self":
                self_reg.setdefault(ev.subject_broker, []).append(ev)
            elif via == "zk_create" and ev.zxid is not None:
                zk_reg[ev.zxid] = ev
        elif t == "controller_znode_created" and ev.controller_id is not None:
            zk_ctrl.setdefault(ev.controller_id, []).append(ev)
        elif t == "partition_state_change" and ev.to_state == "OnlinePartition" and ev.leader_epoch is not None \
                and ev.topic is not None:
            writes[(ev.topic, ev.partition, ev.leader_epoch)] = ev
    for ev in events:
        d = ev.detail or {}
        t = ev.event_type
        if t == "broker_registered" and d.get("via") == "controller_broker_change" and ev.subject_broker is not None:
            # the most recent self-registration of that broker before the controller saw it (by its own log)
            cands = [c for c in self_reg.get(ev.subject_broker, []) if c.ts is not None and ev.ts is not None]
            before = [c for c in cands if abs(c.ts - ev.ts) < 600_000_000]
            if before:
                yield min(before, key=lambda c: abs(c.ts - ev.ts)), ev
        elif t == "broker_registered" and d.get("via") == "broker_self" and d.get("broker_epoch") is not None:
            z = d.get("broker_epoch")
            try:
                z = int(z, 16) if isinstance(z, str) and z.startswith("0x") else int(z)
            except (TypeError, ValueError):
                continue
            if z in zk_reg:
                yield zk_reg[z], ev
        elif t == "controller_elected" and ev.source_kind == "broker_log" and ev.controller_id is not None:
            for c in zk_ctrl.get(ev.controller_id, []):
                if c.ts is not None and ev.ts is not None and abs(c.ts - ev.ts) < 600_000_000:
                    yield c, ev
                    break
        elif t in ("become_leader", "leader_and_isr_received") and ev.leader_epoch is not None and ev.topic is not None:
            w = writes.get((ev.topic, ev.partition, ev.leader_epoch))
            if w is not None:
                yield w, ev


def estimate_skew(events: list[Event]) -> list[SkewEstimate]:
    bounds: dict[tuple[str, str], list[Bound]] = {}
    for cause, effect in _pairs(events):
        cx, cy = _clock(effect), _clock(cause)
        if cx is None or cy is None or cx == cy or cause.ts is None or effect.ts is None:
            continue
        bounds.setdefault((cx, cy), []).append(Bound(effect.ts - cause.ts, cause, effect))
    out = []
    for a, b in sorted({tuple(sorted(k)) for k in bounds}):
        ab = bounds.get((a, b), [])  # offset(a) - offset(b) <= v
        ba = bounds.get((b, a), [])  # offset(b) - offset(a) <= v  ->  offset(a) - offset(b) >= -v
        high = min((x.value for x in ab), default=None)
        low = max((-x.value for x in ba), default=None)
        ev = []
        if ab:
            m = min(ab, key=lambda x: x.value)
            ev += [m.cause, m.effect]
        if ba:
            m = min(ba, key=lambda x: x.value)
            ev += [m.cause, m.effect]
        out.append(SkewEstimate(a, b, low, high, len(ab) + len(ba), ev))
    return out
