"""The incidents as ``watch`` tells them: each picture's outages compared with what was told, as notifications.

An incident is an outage of the report (``forensics.report.build``: a topic's partitions that lost their leader
together, with one cause), known by its cluster, topic and start. A picture that shows one not told yet opens it;
one whose partitions, cause, summary or end changed updates it; one that ends closes it (and one that the evidence
now explains otherwise is closed as withdrawn). Every notification carries the incident as the report tells it,
and what would end it while it is open (``to_end``). The schema is ``docs/live.md``'s.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from parsers.schema import iso_utc

SCHEMA = "kafka-forensics.incident/1"
# What of an incident, changed, is worth an update.
TOLD = ("partitions", "cause_kind", "summary", "end", "cause_brokers", "to_end")
RECENT = 20


def incident_id(inc: dict[str, Any]) -> str:
    return f"{inc.get('cluster')}/{inc['topic']}/{inc['start']}"


@dataclass
class Book:
    open: dict[str, dict[str, Any]] = field(default_factory=dict)
    closed: deque = field(default_factory=lambda: deque(maxlen=RECENT))
    seq: int = 0

    def update(self, incidents: list[dict[str, Any]], now: str) -> list[dict[str, Any]]:
        """The picture's incidents (each with ``to_end``) -> the notifications they make, in order."""
        out = []
        seen = set()
        for inc in incidents:
            key = incident_id(inc)
            seen.add(key)
            was = self.open.get(key)
            if was is None and any(c["id"] == key for c in self.closed):
                continue  # told closed already
            if was is None:
                out.append(self._tell("opened", key, inc, now))
            else:
                changed = [k for k in TOLD if was.get(k) != inc.get(k)]
                if changed:
                    out.append(self._tell("updated", key, inc, now, changed=changed))
            if inc.get("end") is not None:
                out.append(self._tell("closed", key, inc, now))
                self.open.pop(key, None)
                self.closed.appendleft({"id": key, **inc})
            else:
                self.open[key] = inc
        for key in sorted(set(self.open) - seen):
            inc = self.open.pop(key)
            out.append(self._tell("closed", key, inc, now, withdrawn=True))
            self.closed.appendleft({"id": key, **inc, "withdrawn": True})
        return out

    def _tell(self, event: str, key: str, inc: dict[str, Any], now: str, changed: list[str] | None = None,
              withdrawn: bool = False) -> dict[str, Any]:
        self.seq += 1
        note = {"schema": SCHEMA, "seq": self.seq, "event": f"incident_{event}", "at": now, "id": key,
                **{k: inc.get(k) for k in ("cluster", "topic", "cause_kind", "count", "partitions", "start", "end",
                                           "duration_s", "summary", "cause_brokers", "replicas", "isr_at_loss",
                                           "to_end", "unavailable_from")},
                "evidence": (inc.get("evidence") or [])[:5]}
        if changed:
            note["changed"] = changed
        if withdrawn:
            note["withdrawn"] = True
            note["summary"] = ("no longer shown: the evidence read since explains these partitions otherwise. "
                               + (inc.get("summary") or ""))
        return note


def to_end(inc: dict[str, Any], result, events: list) -> list[str]:
    """What would end an open incident, from the picture: the brokers to bring back, whether any other replica
    could lead without losing data, and what an unclean election would lose (the data-loss estimate)."""
    if inc.get("end") is not None:
        return []
    img = result.image
    up = {b for b, ps in img.periods.items() if ps and ps[-1].state == "up" and ps[-1].end is None}
    replicas = list(inc.get("replicas") or [])
    isr = list(inc.get("isr_at_loss") or [])
    causes = list(inc.get("cause_brokers") or [])
    out = []
    down = [b for b in (causes or isr or replicas) if b not in up]
    for b in down:
        since = img.periods[b][-1].start if b in img.periods and img.periods[b] else None
        out.append(f"restart broker {b}" + (f" (down since {iso_utc(since)})" if since else ""))
    others = [b for b in isr if b not in down and b in up]
    if isr and not others:
        out.append(f"its partitions have no other ISR member: only broker(s) {', '.join(map(str, isr))} can lead "
                   "them without losing acknowledged messages")
    candidates = [b for b in replicas if b in up and b not in isr]
    for b in candidates[:2]:
        out.append(_unclean(inc, b, isr, result, events))
    if not replicas and not out:
        out.append("the evidence does not show the partitions' replicas yet")
    return out


def _unclean(inc: dict[str, Any], broker: int, isr: list[int], result, events: list) -> str:
    """The data-loss estimate (``replay_engine.estimates.dataloss``) of an unclean election of ``broker`` now."""
    from replay_engine.estimates.dataloss import estimate
    from replay_engine.common.facts import Ref
    from replay_engine.common.partition import Decision

    tp = (inc["topic"], inc["partitions"][0])
    now = result.stream.trace_end or 0
    d = Decision(0, now, tp, "election", "unclean", Ref(now, "watch", None, None, "what if now"),
                 {"leader": -1, "isr": list(isr)}, {"leader": broker, "leader_epoch": None}, unclean=True)
    est = estimate(d, events)
    lost = est.get("lost_messages")
    what = (f"would lose about {lost:,} messages" if lost else "would lose none the logs show" if lost == 0 else
            "may lose acknowledged messages (the logs give no offsets to count them)")
    return (f"an unclean election of broker {broker} (kafka-leader-election.sh --election-type unclean) {what}, "
            f"by the data-loss estimate for {tp[0]}-{tp[1]}")
