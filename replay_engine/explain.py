"""Why a partition had no leader: a cause kind, one plain sentence, and the chain of evidence.

Works on what the replay left (episodes, broker periods, controller tenures,
failed elections, configuration as it stood) and adds nothing it cannot
cite: every sentence is built from facts whose references go into ``chain``.
"""
from __future__ import annotations

import re

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from parsers.schema import iso_utc
from replay_engine.config import ConfigImage, Resolved, as_bool
from replay_engine.facts import TP, Ref
from replay_engine.image import PeriodImage, TenureImage
from replay_engine.timeline import Episode

ALL_REPLICAS_OFFLINE = "all_replicas_offline"
NO_LIVE_ISR = "no_live_isr_unclean_disabled"
NO_LIVE_ISR_UNKNOWN_AR = "no_live_isr"
NO_CONTROLLER = "no_controller"
CONTROLLER_DID_NOT_ACT = "controller_did_not_act"
LEADER_FAILOVER = "leader_failover"
DELETED = "partition_deleted"
REASSIGNING = "partition_reassigning"
UNKNOWN = "unknown"
UNCLEAN_ELECTION = "unclean_election"

# A re-election within this long after the leader's loss is Kafka working as designed.
FAILOVER_GRACE_US = 30 * 1_000_000


@dataclass
class Cause:
    kind: str
    summary: str
    chain: list[Ref] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def reason(self) -> str:
        """The summary without its '<partition> had no leader from .. to ..' opening."""
        head, sep, tail = self.summary.partition(": ")
        return tail if sep else self.summary

    def reason_for_many(self) -> str:
        """The reason worded for a group of partitions sharing it."""
        r = self.reason
        for a, b in (("its only replica", "their only replica"), ("its ISR", "their ISR"), ("its leader", "their leader"),
                     ("its other replicas", "their other replicas"), ("the partition's", "the partitions'")):
            r = r.replace(a, b)
        return r

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "summary": self.summary, "chain": [r.to_json() for r in self.chain],
                **({"details": self.details} if self.details else {})}


def fmt_duration(us: int | None) -> str:
    if us is None:
        return "until the end of the evidence"
    s = us / 1e6
    if s < 1:
        return f"{us / 1000:.0f} ms"
    if s < 60:
        return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m}m{sec:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m{sec:02d}s"


def fmt_ts(ts: int | None) -> str:
    return iso_utc(ts) or "?"


@dataclass
class World:
    """Everything the explainer may consult, as the replay left it (``replay_engine.result.world_of``
    takes it from the cluster image and its history)."""

    periods: Mapping[int, Sequence[PeriodImage]]
    tenures: Sequence[TenureImage]
    ar_history: Mapping[TP, Sequence[tuple[int, tuple[int, ...]]]]
    config_history: Sequence[tuple[int, ConfigImage]]
    failed_elections: Mapping[TP, Sequence[Ref]]
    trace_end: int | None
    recorded: Any = None  # (ts, controller, kind) -> would the controller's decision have left a record?
    unclean: Sequence = ()  # the unclean elections (Decision) of the replay

    def alive(self, b: int, ts: int) -> bool | None:
        ps = self.periods.get(b)
        if not ps:
            return None
        state = None
        for p in ps:
            if p.start is not None and p.start <= ts:
                state = p.state == "up"
            else:
                break
        return state

    def period_at(self, b: int, ts: int) -> PeriodImage | None:
        cur = None
        for p in self.periods.get(b, []):
            if p.start is not None and p.start <= ts:
                cur = p
        return cur

    def ar_at(self, tp: TP, ts: int) -> tuple[int, ...] | None:
        hist = self.ar_history.get(tp)
        if not hist:
            return None
        i = bisect_right([t for t, _ in hist], ts)
        return hist[max(i - 1, 0)][1]

    def config_at(self, ts: int) -> ConfigImage | None:
        if not self.config_history:
            return None
        i = bisect_right([t for t, _ in self.config_history], ts)
        return self.config_history[max(i - 1, 0)][1]

    def controller_at(self, ts: int) -> TenureImage | None:
        for t in self.tenures:
            if t.start <= ts and (t.end is None or ts < t.end):
                return t
        return None


def _names(bs) -> str:
    bs = list(bs)
    if len(bs) == 1:
        return f"broker {bs[0]}"
    return "brokers " + ", ".join(str(b) for b in bs)


def _down_phrase(world: World, b: int, ts: int) -> tuple[str, Ref | None]:
    """'was stopped at T' / 'lost its ZooKeeper session at T', citing the event."""
    p = world.period_at(b, ts)
    if p is None or p.state != "down":
        return f"was not running at {fmt_ts(ts)}", None
    how = {
        "session_expired": "lost its ZooKeeper session (expired)",
        "expired": "lost its ZooKeeper session (expired)",
        "session_closed": "closed its ZooKeeper session (clean stop)",
        "closed": "closed its ZooKeeper session (clean stop)",
        "shutdown": "shut down",
        "controller_detected": "was declared dead by the controller",
        "fenced": "was fenced by the controller",
        "deleted": "lost its registration",
        "bounced": "restarted",
        "controlled_shutdown": "began a controlled shutdown",
        "unregistered": "was unregistered",
    }
    cause = _how_down(world, p)
    if cause is None and p.start_ref is not None:  # no up-period before it in the evidence: the event says how
        cause = _CAUSE_OF_EVENT.get(p.start_ref.event)
    return f"{how.get(cause or '', 'went down')} at {fmt_ts(p.start)}", p.start_ref


_CAUSE_OF_EVENT = {"broker_failed": "controller_detected", "broker_deregistered": "deleted",
                   "zk_session_expired": "session_expired", "broker_shutdown_completed": "shutdown",
                   "broker_fenced": "fenced"}


def _how_down(world: World, down: PeriodImage) -> str | None:
    """How the up-period before a down-period ended (session expired, clean stop...)."""
    prev = None
    for q in world.periods.get(down.broker, []):
        if q is down:
            break
        prev = q
    return prev.end_cause if prev is not None and prev.end_cause else None


def explain(ep: Episode, world: World, leaderless_refs: list[Ref] | None = None) -> Cause:
    tp = (ep.topic, ep.partition)
    first = ep.intervals[0]
    v = first.view
    isr = list(v.isr) if v.isr is not None else None
    ar = world.ar_at(tp, ep.start)
    leader = v.leader
    chain: list[Ref] = [first.opened_by]
    end_txt = f"to {fmt_ts(ep.end)} ({fmt_duration(ep.duration_us)})" if ep.end is not None else \
        f"until the end of the evidence at {fmt_ts(world.trace_end)}"
    name = f"{ep.topic}-{ep.partition}"
    opener = f"{name} had no leader from {fmt_ts(ep.start)} {end_txt}"
    details: dict[str, Any] = {"replicas": list(ar) if ar else None, "isr_at_loss": isr, "leader_before": leader}

    failed = [r for r in world.failed_elections.get(tp, []) if r.ts is not None and ep.start <= r.ts <= (ep.end or 1 << 62)]
    chain.extend(failed[:3])
    # state changes during the outage (e.g. the "leader -1" write), at most a few
    chain.extend(i.opened_by for i in ep.intervals[1:4])
    closer_ref = None

    if any(i.view.state == "NonExistentPartition" for i in ep.intervals) or first.view.state == "OfflinePartition" \
            and first.opened_by.event in ("topic_deletion_requested",):
        return Cause(DELETED, f"{opener}: topic {ep.topic} was being deleted.", _dedupe(chain), details)

    cfg = world.config_at(ep.start)
    unclean: Resolved | None = cfg.unclean_enabled(ep.topic) if cfg is not None else None
    if unclean is not None:
        details["unclean_leader_election_enable"] = unclean.value
        details["unclean_source"] = unclean.source

    members = list(ar) if ar else (isr or [])
    alive = {b: world.alive(b, ep.start) for b in members}
    when = {b: ep.start for b in members}
    if failed:
        # A failed election proves the controller saw no live candidate: a replica whose own log says it went
        # down moments later was already leaving (its session closed before its last line was written).
        for b in members:
            if alive[b]:
                t = _down_soon_after(world, b, ep.start)
                if t is not None:
                    alive[b], when[b] = False, t
    down = [b for b in members if alive[b] is False]
    up = [b for b in members if alive[b]]
    for b in down:
        _, r = _down_phrase(world, b, when.get(b, ep.start))
        if r is not None:
            chain.append(r)

    tenure = world.controller_at(ep.start)
    if ep.end is not None:
        nxt = _ended_by(ep)
        if nxt is not None:
            closer_ref = nxt
    if ar is not None and not up and members:
        kind = ALL_REPLICAS_OFFLINE
        if len(ar) == 1:
            b = ar[0]
            phrase, _ = _down_phrase(world, b, when.get(b, ep.start))
            summary = (f"{opener}: replication factor 1 and its only replica, broker {b}, {phrase}; "
                       "unclean election could not help: there was no other replica.")
        else:
            summary = (f"{opener}: all {len(ar)} replicas ({_names(ar)}) were down "
                       f"({'; '.join(f'{b} ' + _down_phrase(world, b, when.get(b, ep.start))[0] for b in ar)}); no replica "
                       "could take over.")
        details["cause_brokers"] = list(ar)
    elif ar is None and isr and all(alive.get(b) is False for b in isr):
        kind = NO_LIVE_ISR_UNKNOWN_AR
        summary = (f"{opener}: every ISR member ({_names(isr)}) was down "
                   f"({'; '.join(f'{b} ' + _down_phrase(world, b, when.get(b, ep.start))[0] for b in isr)}); "
                   "the trace does not show the partition's other replicas, if it had any.")
        details["cause_brokers"] = list(isr)
    elif ar is None and isr is None and failed:
        # Logs that start mid-life show neither replicas nor ISR; a failed election still says it: the controller
        # found no live in-sync replica (and, unclean off, would not go further).
        kind = NO_LIVE_ISR_UNKNOWN_AR
        strategy = _STRATEGY.search(failed[0].text or "")
        how = f" under {strategy.group(1)}" if strategy else ""
        gone = _recently_down(world, ep.start)
        after = (f"right after {'; '.join(f'broker {b} ' + _down_phrase(world, b, ep.start)[0] for b in gone)}, "
                 if gone else "")
        summary = (f"{opener}: {after}the controller's election failed{how}: no in-sync replica was alive. The "
                   "partition's replicas and ISR are not in the evidence (it starts after the partition was created)"
                   + ("." if gone else ", nor which brokers were down."))
        details["cause_brokers"] = list(gone)
    elif ep.end is not None and (uc := _unclean_at(world, tp, ep.end)) is not None:
        kind = UNCLEAN_ELECTION
        new = (uc.after or {}).get("leader")
        src = f" ({unclean.source})" if unclean is not None else ""
        summary = (f"{opener}: no ISR member was alive (ISR {isr}); unclean.leader.election.enable was true{src}, "
                   f"so the controller elected broker {new}, which was not in sync: messages only the old ISR had "
                   "may be lost.")
        chain.append(uc.record or uc.trigger)
        details["unclean_leader"] = new
    elif isr is not None and not any(alive.get(b) for b in isr) and up:
        off = unclean is not None and not as_bool(unclean.value)
        kind = NO_LIVE_ISR if off else UNKNOWN
        isr_dead = ", ".join(f"{b} {_down_phrase(world, b, when.get(b, ep.start))[0]}" for b in isr)
        if off:
            if unclean is not None and unclean.evidence is not None:
                chain.append(unclean.evidence)
            summary = (f"{opener}: no ISR member was alive (ISR {isr}: broker {isr_dead}); "
                       f"{_names(up)} {'was' if len(up) == 1 else 'were'} alive but out of sync, and "
                       f"unclean.leader.election.enable was false ({unclean.source}), so the controller kept "
                       "leader -1 rather than elect a replica that might lack data.")
        else:
            summary = (f"{opener}: no ISR member was alive (ISR {isr}); {_names(up)} could have been elected "
                       "uncleanly but was not.")
        details["cause_brokers"] = list(isr)
    elif tenure is None:
        kind = NO_CONTROLLER
        lead = f"its leader, broker {leader}, " if leader is not None and leader >= 0 else "it "
        nxt_ctrl = next((t for t in world.tenures if t.start >= ep.start), None)
        after = (f"; the next controller, broker {nxt_ctrl.controller} (epoch {nxt_ctrl.epoch}), took over at "
                 f"{fmt_ts(nxt_ctrl.start)}") if nxt_ctrl else ""
        if nxt_ctrl is not None and nxt_ctrl.start_ref is not None:
            chain.append(nxt_ctrl.start_ref)
        summary = f"{opener}: {lead}was lost while the cluster had no active controller{after}."
    else:
        eligible = [b for b in (isr or []) if alive.get(b)]
        if ep.end is not None and ep.duration_us is not None and ep.duration_us <= FAILOVER_GRACE_US:
            kind = LEADER_FAILOVER
            if leader is not None and leader >= 0:
                lost = f"its leader, broker {leader}, {_down_phrase(world, leader, ep.start)[0]}"
            else:
                lost = "the controller wrote leader -1 for it"
            summary = (f"{opener}: {lost}, and controller {tenure.controller} "
                       f"elected a new leader from the ISR {fmt_duration(ep.duration_us)} later.")
        elif ep.end is not None and isr and (back := _rejoined(world, isr, ep.end)) \
                and not any(alive.get(b) and b not in back for b in isr):
            # The partition got its leader back the moment an in-sync replica rejoined: that replica was what
            # it lacked, whatever the replay knew of it before (logs that start mid-life, a start-up view).
            kind = NO_LIVE_ISR_UNKNOWN_AR
            summary = (f"{opener}: its in-sync replica{'s' if len(isr) > 1 else ''} ({_names(isr)}) "
                       f"{'were' if len(isr) > 1 else 'was'} not live for controller {tenure.controller}; it got a "
                       f"leader again when {_names(back)} rejoined at {fmt_ts(ep.end)}.")
            details["cause_brokers"] = list(back)
        elif eligible and _watched(world, tenure.controller, ep):
            kind = CONTROLLER_DID_NOT_ACT
            summary = (f"{opener}: {_names(eligible)} {'was' if len(eligible) == 1 else 'were'} alive and in the "
                       f"ISR and controller {tenure.controller} was active, yet no election is recorded for "
                       f"{fmt_duration(ep.duration_us)}: the controller did not act (a divergence to investigate).")
        elif eligible:
            kind = UNKNOWN
            summary = (f"{opener}: {_names(eligible)} {'was' if len(eligible) == 1 else 'were'} alive and in the ISR, "
                       f"but the controller's own log for that time is not in the evidence, so whether it acted "
                       "cannot be told.")
        else:
            kind = UNKNOWN
            summary = f"{opener}: the trace does not show enough (replicas or ISR unknown) to say why."
    if details.get("cause_brokers"):
        details["cause_broker_downs"] = _downs(world, details["cause_brokers"], ep.start)
    if closer_ref is not None:
        chain.append(closer_ref)
    if leaderless_refs:
        chain.extend(leaderless_refs)
    return Cause(kind, summary, _dedupe(chain), details)


def _downs(world: World, brokers: list[int], ts: int) -> list[dict[str, Any]]:
    """When and how each broker went down (the start of its down period at ``ts``)."""
    out = []
    for b in brokers:
        p = world.period_at(b, ts)
        if p is None or p.state != "down" or p.start is None:
            continue
        out.append({"broker": b, "ts": p.start, "how": _how_down(world, p)})
    return out


_STRATEGY = re.compile(r"under strategy (\w+(?:\((?:true|false)\))?)")
# A failed election this soon after a broker went down is the controller reacting to it.
RECENT_DOWN_US = 60 * 1_000_000


LEAVING_US = 10 * 1_000_000
REJOIN_US = 1_000_000


def _rejoined(world: World, brokers, ts: int) -> list[int]:
    """Brokers (of ``brokers``) whose up-period began just before ``ts``."""
    out = []
    for b in brokers:
        for p in world.periods.get(b, []):
            if p.state == "up" and p.start is not None and ts - REJOIN_US <= p.start <= ts:
                out.append(b)
                break
    return out


def _down_soon_after(world: World, b: int, ts: int) -> int | None:
    """When broker ``b`` went down within LEAVING_US after ``ts`` (the start of that down period), if it did."""
    for p in world.periods.get(b, []):
        if p.state == "down" and p.start is not None and ts < p.start <= ts + LEAVING_US:
            return p.start
    return None


def _recently_down(world: World, ts: int) -> list[int]:
    out = []
    for b, periods in sorted(world.periods.items()):
        p = world.period_at(b, ts)
        if p is not None and p.state == "down" and p.start is not None and 0 <= ts - p.start <= RECENT_DOWN_US:
            out.append(b)
    return out


def _unclean_at(world: World, tp: TP, ts: int):
    for d in world.unclean:
        if d.tp == tp and abs((d.record.ts if d.record and d.record.ts else d.ts) - ts) <= 1_000 \
                or d.tp == tp and abs(d.ts - ts) <= 1_000:
            return d
    return None


def _watched(world: World, controller: int, ep: Episode) -> bool:
    """Was the controller's decision log in the evidence well after the loss (so silence means inaction)?"""
    if world.recorded is None:
        return True
    probe = ep.start + FAILOVER_GRACE_US
    return bool(world.recorded(probe, controller, "election"))


def _ended_by(ep: Episode) -> Ref | None:
    return ep.closed_by


def _dedupe(refs: list[Ref]) -> list[Ref]:
    seen = set()
    out = []
    for r in refs:
        key = (r.source_file, r.source_pos, r.event, r.zxid)
        if key in seen:
            continue
        seen.add(key)
        out.append(r)
    out.sort(key=lambda r: (r.ts if r.ts is not None else 0, r.source_file or "", r.source_pos or 0))
    return out
