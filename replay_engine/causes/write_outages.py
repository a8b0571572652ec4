"""Under-min-ISR write outages: a partition with a live leader but fewer in-sync replicas than
``min.insync.replicas``, so ``acks=all`` produce requests are refused.

Kafka's rule (Partition.appendRecordsToLeader, 0.9+): a produce with acks=-1 to a leader whose ISR
is smaller than min.insync.replicas fails with NOT_ENOUGH_REPLICAS; one appended while the ISR was
large enough but shrank before the write was acknowledged waits in the produce purgatory and fails
with NOT_ENOUGH_REPLICAS_AFTER_APPEND, or with REQUEST_TIMED_OUT when request.timeout.ms (30 s) runs
out first. acks=0/1 writes are not affected, so this is a different outage from a leaderless one.

Pure: the replay's timeline intervals, broker periods and configuration history in, records out.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

from parsers.schema import Event, iso_utc
from replay_engine.common.config import MIN_ISR, Resolved
from replay_engine.common.facts import Ref
from replay_engine.common.timeline import Interval

# The client errors an acks=all producer sees while the ISR is too small.
REFUSED = frozenset({"NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"})
TIMED_OUT = frozenset({"REQUEST_TIMED_OUT", "TimeoutException", "record_expired"})
# A broker that went down this long before the ISR shrank is why the replica left it (the controller's
# or the leader's removal trails the failure by the session time-out at most).
_DOWN_BEFORE_US = 60 * 1_000_000
_CONTROLLED_BEFORE_US = 120 * 1_000_000


@dataclass
class Dropped:
    replica: int
    ts: int
    why: str  # broker_failed | controlled_shutdown | lagged | unknown
    text: str
    ref: Ref | None

    def to_json(self) -> dict[str, Any]:
        return {"replica": self.replica, "ts": iso_utc(self.ts), "why": self.why, "text": self.text,
                "evidence": self.ref.to_json() if self.ref else None}


@dataclass
class UnderMinIsr:
    topic: str
    partition: int
    start: int
    end: int | None
    leader: int | None
    isr: tuple[int, ...]  # the smallest ISR seen in the interval
    replicas: tuple[int, ...] | None
    min_isr: int
    min_isr_source: str
    intervals: list[Interval]
    dropped: list[Dropped] = field(default_factory=list)
    client_errors: list[Ref] = field(default_factory=list)
    error_counts: dict[str, int] = field(default_factory=dict)
    summary: str = ""

    @property
    def duration_us(self) -> int | None:
        return None if self.end is None else self.end - self.start

    def seconds(self, trace_end: int | None) -> float:
        end = self.end if self.end is not None else trace_end
        return 0.0 if end is None or end <= self.start else (end - self.start) / 1e6

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "start": iso_utc(self.start), "end": iso_utc(self.end),
                "duration_s": None if self.end is None else round((self.end - self.start) / 1e6, 3),
                "leader": self.leader, "isr": list(self.isr), "replicas": list(self.replicas) if self.replicas else None,
                "min_insync_replicas": self.min_isr, "min_insync_replicas_source": self.min_isr_source,
                "dropped": [d.to_json() for d in self.dropped], "client_errors": dict(sorted(self.error_counts.items())),
                "client_error_evidence": [r.to_json() for r in self.client_errors[:5]], "summary": self.summary,
                "opened_by": self.intervals[0].opened_by.to_json()}


Resolve = Callable[[str, int], Resolved]  # (topic, ts) -> min.insync.replicas as it stood


def _need(r: Resolved) -> tuple[int, str]:
    try:
        return max(int(str(r.value).strip()), 1), r.source
    except ValueError:
        return 1, f"{r.source} (unreadable {r.value!r}, taken as 1)"


def under_min_isr(intervals: list[Interval], resolve: Resolve) -> list[UnderMinIsr]:
    """Every run of a partition's intervals with a live leader and |ISR| < min.insync.replicas."""
    out: list[UnderMinIsr] = []
    run: list[Interval] = []  # the open run of one partition's short intervals
    need_of_run: tuple[int, str] = (1, "")
    # each setting read once: a resolver answers each (topic, configuration) with the same Resolved, which is kept
    # here with what it reads as (so its id names it while the loop runs)
    needs: dict[int, tuple[Resolved, tuple[int, str]]] = {}

    def close() -> None:
        first = run[0]
        smallest = min((tuple(r.view.isr) for r in run), key=len)  # the first of the smallest ISRs
        out.append(UnderMinIsr(first.topic, first.partition, first.start, run[-1].end, first.view.leader, smallest,
                               None, need_of_run[0], need_of_run[1], list(run)))

    for iv in intervals:  # sorted by partition, then start (TimelineBuilder.finish)
        v = iv.view
        short = False
        if v.isr is not None and v.leader is not None and v.leader >= 0 and not v.leaderless:
            # led, with an ISR: short of the setting in force (read only here: it counts for short intervals alone)
            r = resolve(iv.topic, iv.start)
            got = needs.get(id(r))
            if got is None:
                got = needs[id(r)] = (r, _need(r))
            need, source = got[1]
            short = len(v.isr) < need
        if short and run and (run[-1].topic, run[-1].partition) == (iv.topic, iv.partition) and run[-1].end == iv.start:
            run.append(iv)
            continue
        if run:
            close()
            run = []
        if short:
            run, need_of_run = [iv], (need, source)
    if run:
        close()
    return out


def explain_all(outages: list[UnderMinIsr], intervals: list[Interval], world, events: Iterable[Event],
                lag_setting: Callable[[str, int], Resolved] | None = None) -> None:
    """Fill each outage's replicas, cause chain (who left the ISR and why), client errors and summary."""
    before: dict[tuple[str, int, int], Interval] = {}
    prev: Interval | None = None
    for iv in intervals:
        if prev is not None and (prev.topic, prev.partition) == (iv.topic, iv.partition):
            before[(iv.topic, iv.partition, iv.start)] = prev
        prev = iv
    shutdowns: dict[int, list[Event]] = {}
    errors: dict[str, list[Event]] = {}
    for ev in events:
        if ev.event_type == "controlled_shutdown_requested" and ev.subject_broker is not None and ev.ts is not None:
            shutdowns.setdefault(ev.subject_broker, []).append(ev)
        elif ev.event_type == "client_error" and ev.topic is not None and ev.ts is not None:
            err = (ev.detail or {}).get("error")
            if err in REFUSED or err in TIMED_OUT:
                errors.setdefault(ev.topic, []).append(ev)
    for o in outages:
        p = before.get((o.topic, o.partition, o.start))
        if p is not None and p.view.isr is not None:
            for b in sorted(set(p.view.isr) - set(o.intervals[0].view.isr or ())):
                o.dropped.append(_why(b, o, world, shutdowns, lag_setting))
        _tie_errors(o, errors.get(o.topic, []))
        o.summary = _summary(o, p)


def _why(b: int, o: UnderMinIsr, world, shutdowns: dict[int, list[Event]], lag_setting) -> Dropped:
    ts = o.start
    opened = o.intervals[0].opened_by
    for ev in shutdowns.get(b, []):
        if ts - _CONTROLLED_BEFORE_US <= ev.ts <= ts:
            return Dropped(b, ts, "controlled_shutdown",
                           f"broker {b} began a controlled shutdown at {iso_utc(ev.ts)} and the controller removed it "
                           "from the ISR", Ref(ev.ts, ev.event_type, ev.source_file, ev.source_pos,
                                              (ev.raw or "")[:400], None, ev.broker_id))
    if world is not None:
        per = world.period_at(b, ts)
        if per is not None and per.state == "down" and per.start is not None and ts - per.start <= _DOWN_BEFORE_US:
            how = _how(world, per)
            return Dropped(b, ts, "broker_failed", f"broker {b} {how} at {iso_utc(per.start)}", per.start_ref)
        if per is not None and per.state == "down":
            return Dropped(b, ts, "broker_failed", f"broker {b} was down (since {iso_utc(per.start)})", per.start_ref)
    if opened.event == "isr_shrink":
        lag = ""
        if lag_setting is not None:
            r = lag_setting(o.topic, ts)
            lag = f" ({r.value} ms, {r.source})"
        return Dropped(b, ts, "lagged", f"replica {b} fell behind the leader for longer than "
                                        f"replica.lag.time.max.ms{lag}, and the leader shrank the ISR", opened)
    return Dropped(b, ts, "unknown", f"replica {b} left the ISR ({opened.event})", opened)


def _how(world, down) -> str:
    prev = None
    for q in world.periods.get(down.broker, []):
        if q is down:
            break
        prev = q
    cause = prev.end_cause if prev is not None else None
    return {"session_expired": "lost its ZooKeeper session", "expired": "lost its ZooKeeper session",
            "session_closed": "stopped", "closed": "stopped", "shutdown": "shut down",
            "controlled_shutdown": "shut down (controlled)", "controller_detected": "was declared dead by the controller",
            "fenced": "was fenced"}.get(cause or "", "went down")


def _tie_errors(o: UnderMinIsr, evs: list[Event]) -> None:
    hi = o.end if o.end is not None else 1 << 62
    for ev in evs:
        if ev.partition is not None and ev.partition != o.partition:
            continue
        err = (ev.detail or {}).get("error")
        # a refusal is only ever this outage; a time-out also counts once the request has waited for the ISR
        if o.start <= ev.ts <= hi + (30 * 1_000_000 if err in TIMED_OUT else 0):
            o.error_counts[err] = o.error_counts.get(err, 0) + 1
            if len(o.client_errors) < 20:
                o.client_errors.append(Ref(ev.ts, ev.event_type, ev.source_file, ev.source_pos, (ev.raw or "")[:400]))


def _summary(o: UnderMinIsr, prev: Interval | None) -> str:
    from replay_engine.causes.text import fmt_duration

    name = f"{o.topic}-{o.partition}"
    span = f"to {iso_utc(o.end)} ({fmt_duration(o.duration_us)})" if o.end is not None else "until the end of the evidence"
    head = (f"{name} refused acks=all writes from {iso_utc(o.start)} {span}: leader {o.leader} had ISR {list(o.isr)}, "
            f"fewer than min.insync.replicas={o.min_isr} ({o.min_isr_source})")
    if o.replicas is not None and len(o.replicas) < o.min_isr:
        why = f"its replication factor, {len(o.replicas)}, is below min.insync.replicas: it can never take acks=all"
    elif o.dropped:
        why = "; ".join(d.text for d in o.dropped)
        before = set(prev.view.isr or ()) if prev is not None else set()
        out = [r for r in (o.replicas or ()) if r not in before and r not in o.isr]
        if out:
            why += f" (replica{'s' if len(out) > 1 else ''} {', '.join(map(str, out))} had already left the ISR)"
    elif prev is None:
        why = "the ISR was already that small where the evidence starts"
    else:
        why = "which replica left is not in the evidence"
    tail = ""
    if o.error_counts:
        tail = "; producers saw " + ", ".join(f"{n} {e}" for e, n in sorted(o.error_counts.items()))
    return f"{head}: {why}{tail}."


def partition_seconds(outages: list[UnderMinIsr], trace_end: int | None) -> float:
    return sum(o.seconds(trace_end) for o in outages)


def resolver(world, fallback, key: str = MIN_ISR) -> Resolve:
    """(topic, ts) -> the setting (min.insync.replicas) from the configuration in force at ts (the replay's
    history), or from ``fallback`` (a ConfigState) without one. Memoised per (topic, configuration): a
    timeline has millions of intervals and the history a handful of entries."""
    hist = list(getattr(world, "config_history", None) or [])
    times = [t for t, _ in hist]
    cache: dict[tuple[str, int], Resolved] = {}

    def resolve(topic: str, ts: int) -> Resolved:
        i = max(bisect_right(times, ts) - 1, 0) if times else -1
        got = cache.get((topic, i))
        if got is None:
            got = cache[(topic, i)] = (hist[i][1] if i >= 0 else fallback).resolve(key, topic)
        return got
    return resolve


def compute(intervals: list[Interval], world, config, events: Iterable[Event]) -> list[UnderMinIsr]:
    """The under-min-ISR outages of a replay, explained."""
    from replay_engine.common.config import REPLICA_LAG

    outages = under_min_isr(intervals, resolver(world, config))
    if world is not None:  # the assignment each outage's partition had when it began
        outages = [replace(o, replicas=world.ar_at((o.topic, o.partition), o.start)) for o in outages]
    if outages:
        explain_all(outages, intervals, world, events, resolver(world, config, REPLICA_LAG))
    return outages
