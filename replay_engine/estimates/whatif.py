"""What-if: the same trace under changed configs, topology or operations, and what that changes.

Both sides are replayed counterfactually (``CounterfactualMode``): the
controller's decisions are the replay's own, because the real cluster's
records describe only what happened. Inputs the trace cannot show directly
but the record-following replay inferred (controlled shutdowns) are carried
over to both sides, so the baseline is the trace as it happened. The change
is the only difference between the two sides.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from parsers.schema import Event, iso_utc
from replay_engine.common import facts as F
from replay_engine import rules as R
from replay_engine.api import Leaderless, ReplayResult, replay_cluster
from replay_engine.common.frozen import EMPTY
from replay_engine.result import assemble
from replay_engine.estimates.assignment import extend_replication
from replay_engine.common.config import (MIN_ISR, REPLICA_LAG, UNCLEAN, ZK_SESSION_TIMEOUT, BROKER_SESSION_TIMEOUT,
                                  CONTROLLED_SHUTDOWN, ConfigImage, ConfigState, as_bool, parse_version)
from replay_engine.zk.controller import ZkControllerReplay
from replay_engine.estimates.crash import CRASH_CAUSES, LastLines, kill_time, session_timeouts
from replay_engine.estimates.dataloss import estimates as estimate_losses
from replay_engine.zk.from_events import build_facts
from replay_engine.zk.modes import CounterfactualMode
from replay_engine.common.roles import retire
from replay_engine.causes.write_outages import partition_seconds, resolver, under_min_isr

ELR_FEATURE = "eligible.leader.replicas.version"  # a KRaft feature level (KIP-966), set like a setting here
SETTABLE = {UNCLEAN, MIN_ISR, "auto.leader.rebalance.enable", REPLICA_LAG, ZK_SESSION_TIMEOUT, BROKER_SESSION_TIMEOUT,
            CONTROLLED_SHUTDOWN, "leader.imbalance.per.broker.percentage", "leader.imbalance.check.interval.seconds",
            ELR_FEATURE}
MS = 1_000


@dataclass
class Change:
    kind: str  # config, topic_config, replication_factor, assignment, controlled_shutdown, kill, reassign_away,
    #            restart_order
    key: str | None = None
    value: Any = None
    topic: str | None = None
    broker: int | None = None

    def describe(self) -> str:
        if self.kind == "config":
            return f"{self.key}={self.value} (cluster-wide)"
        if self.kind == "topic_config":
            return f"{self.key}={self.value} for topic {self.topic}"
        if self.kind == "replication_factor":
            return f"replication factor {self.value} for topic {self.topic} (Kafka's assignment algorithm)"
        if self.kind == "assignment":
            return f"explicit assignment for {len(self.value)} partition(s)"
        if self.kind == "controlled_shutdown":
            return f"broker {self.broker} stopped with a controlled shutdown instead of kill -9"
        if self.kind == "kill":
            return f"broker {self.broker} killed (kill -9) instead of a controlled shutdown"
        if self.kind == "reassign_away":
            return f"partitions reassigned away from broker {self.broker} before it stopped"
        if self.kind == "restart_order":
            return f"brokers restarted in the order {', '.join(map(str, self.value))}"
        return self.kind

    def to_json(self) -> dict[str, Any]:
        d = {k: v for k, v in dataclasses.asdict(self).items() if v is not None}
        if self.kind == "assignment":
            d["value"] = [{"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in sorted(self.value.items())]
        d["description"] = self.describe()
        return d


class ChangeError(ValueError):
    pass


def parse_changes(sets: list[str] | None, ops: list[str] | None, assignment: dict | None = None) -> list[Change]:
    out: list[Change] = []
    for item in sets or []:
        if "=" not in item:
            raise ChangeError(f"--set expects KEY=VALUE or topic:NAME.KEY=VALUE, got {item!r}")
        lhs, _, value = item.partition("=")
        lhs, value = lhs.strip(), value.strip()
        if lhs.startswith("topic:"):
            rest = lhs[len("topic:"):]
            for key in sorted(SETTABLE | {"replication.factor"}, key=len, reverse=True):
                if rest.endswith("." + key):
                    topic = rest[: -len(key) - 1]
                    if key == "replication.factor":
                        try:
                            out.append(Change("replication_factor", key, int(value), topic=topic))
                        except ValueError:
                            raise ChangeError(f"{item!r}: replication.factor must be a number") from None
                    else:
                        out.append(Change("topic_config", key, value, topic=topic))
                    break
            else:
                raise ChangeError(f"{item!r}: unknown topic setting (known: replication.factor, "
                                  f"{', '.join(sorted(SETTABLE))})")
        elif lhs in SETTABLE:
            out.append(Change("config", lhs, value))
        else:
            raise ChangeError(f"{item!r}: {lhs} is not a setting what-if can change (known: "
                              f"{', '.join(sorted(SETTABLE))}, topic:NAME.replication.factor)")
    for op in ops or []:
        name, _, arg = op.partition(":")
        try:
            if name in ("controlled-shutdown", "kill", "reassign-away"):
                kind = {"controlled-shutdown": "controlled_shutdown", "kill": "kill", "reassign-away": "reassign_away"}[name]
                out.append(Change(kind, broker=int(arg)))
            elif name == "restart-order":
                out.append(Change("restart_order", value=[int(x) for x in arg.split(",") if x.strip()]))
            else:
                raise ChangeError(f"--op {op!r}: unknown operation (controlled-shutdown:N, kill:N, reassign-away:N, "
                                  "restart-order:A,B,C)")
        except ValueError as exc:
            if isinstance(exc, ChangeError):
                raise
            raise ChangeError(f"--op {op!r}: expected a broker id") from None
    if assignment:
        parts = assignment.get("partitions") if isinstance(assignment, dict) else None
        if not isinstance(parts, list):
            raise ChangeError("assignment file: expected {\"partitions\": [{\"topic\", \"partition\", \"replicas\"}]}")
        asg = {(p["topic"], int(p["partition"])): tuple(int(r) for r in p["replicas"]) for p in parts}
        out.append(Change("assignment", value=asg))
    if not out:
        raise ChangeError("nothing to change: give --set KEY=VALUE and/or --op ...")
    return out


# ------------------------------------------------------------------------------------------- transforms


def _brokers_and_racks(events: list[Event], facts: list[F.Fact]) -> tuple[list[int], dict[int, str]]:
    brokers: set[int] = set()
    racks: dict[int, str] = {}
    for f in facts:
        if isinstance(f, (F.BrokerUp, F.BrokerDown)) and f.broker >= 0:
            brokers.add(f.broker)
        if isinstance(f, F.LiveSet):
            brokers |= set(f.brokers)
    for ev in events:
        d = ev.detail or {}
        if ev.event_type in ("broker_registered", "broker_observed") and ev.subject_broker is not None and d.get("rack"):
            racks[ev.subject_broker] = str(d["rack"])
        if ev.event_type == "broker_config" and ev.subject_broker is not None:
            r = (d.get("config") or {}).get("broker.rack")
            if r and r != "null":
                racks[ev.subject_broker] = str(r)
    return sorted(brokers), racks


def _assignments(facts: list[F.Fact]) -> dict[str, dict[int, tuple[int, ...]]]:
    out: dict[str, dict[int, tuple[int, ...]]] = {}
    for f in facts:
        if isinstance(f, F.TopicAssignment):
            for p, ar in f.assignment.items():
                if ar:
                    out.setdefault(f.topic, {})[p] = tuple(ar)
        elif isinstance(f, F.RecordedState) and f.replicas:
            out.setdefault(f.tp[0], {}).setdefault(f.tp[1], tuple(f.replicas))
        elif isinstance(f, (F.RecordedState, F.ObservedState)) and f.isr:
            # AR unknown: the ISR (and leader) is the best lower bound of the assignment the trace gives
            cur = out.setdefault(f.tp[0], {})
            if f.tp[1] not in cur:
                lead = [f.leader] if f.leader is not None and f.leader >= 0 else []
                cur[f.tp[1]] = tuple(dict.fromkeys(lead + list(f.isr)))
    return out


@dataclass
class Plan:
    facts: list[F.Fact]
    overrides: dict[str, str] = field(default_factory=dict)
    topic_overrides: dict[str, dict[str, str]] = field(default_factory=dict)
    rewrite: dict[F.TP, tuple[int, ...]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _resort(facts: list[F.Fact]) -> list[F.Fact]:
    for i, f in enumerate(facts):
        f.order = (f.ts, f.order[1] if len(f.order) > 1 else 2, f.order[2] if len(f.order) > 2 else i)
    return sorted(facts, key=lambda f: (f.ts, f.order[1], f.order[2]))


def plan_variant(base: list[F.Fact], events: list[Event], changes: list[Change], config: ConfigImage) -> Plan:
    facts = [copy.copy(f) for f in base]
    plan = Plan(facts)
    brokers, racks = _brokers_and_racks(events, facts)
    timeouts = session_timeouts(events)
    default_timeout = config.int_value(ZK_SESSION_TIMEOUT) * MS
    for ch in changes:
        if ch.kind == "config":
            plan.overrides[ch.key] = str(ch.value)
            if ch.key == ZK_SESSION_TIMEOUT:
                _shift_expiries(plan, timeouts, default_timeout, int(float(ch.value)) * MS)
            elif ch.key == REPLICA_LAG:
                old = config.int_value(REPLICA_LAG) * MS
                _shift_isr_shrinks(plan, int(float(ch.value)) * MS - old)
            elif ch.key == CONTROLLED_SHUTDOWN and not as_bool(str(ch.value)):
                n = sum(1 for f in plan.facts if isinstance(f, F.ControlledShutdownRequest))
                plan.facts = [f for f in plan.facts if not isinstance(f, F.ControlledShutdownRequest)]
                plan.notes.append(f"controlled.shutdown.enable=false: {n} controlled shutdown(s) become plain stops")
        elif ch.kind == "topic_config":
            plan.topic_overrides.setdefault(ch.topic, {})[ch.key] = str(ch.value)
        elif ch.kind == "replication_factor":
            asg = _assignments(plan.facts).get(ch.topic)
            if not asg:
                raise ChangeError(f"topic {ch.topic} does not appear in the trace")
            try:
                new = extend_replication(asg, brokers, int(ch.value), racks or None)
            except ValueError as exc:
                raise ChangeError(str(exc)) from None
            for p, ar in new.items():
                plan.rewrite[(ch.topic, p)] = ar
            plan.notes.append(f"{ch.topic}: {len(new)} partition(s) re-assigned with replication factor {ch.value} "
                              f"over brokers {brokers}{' (rack-aware)' if racks else ''}; their followers are "
                              "assumed in sync")
        elif ch.kind == "assignment":
            plan.rewrite.update(ch.value)
        elif ch.kind == "controlled_shutdown":
            _kill_to_controlled(plan, events, ch.broker, timeouts.get(ch.broker, default_timeout))
        elif ch.kind == "kill":
            _controlled_to_kill(plan, ch.broker, timeouts.get(ch.broker, default_timeout))
        elif ch.kind == "reassign_away":
            _reassign_away(plan, events, ch.broker, timeouts.get(ch.broker, default_timeout))
        elif ch.kind == "restart_order":
            _restart_order(plan, ch.value)
    plan.facts = _resort(plan.facts)
    return plan


def _crash_downs(plan: Plan, broker: int) -> list[F.BrokerDown]:
    return [f for f in plan.facts if isinstance(f, F.BrokerDown) and f.broker == broker
            and f.cause in ("session_expired", "expired", "controller_detected", "deleted")]


def _kill_time(events: list[Event] | LastLines, down: F.BrokerDown, broker: int, timeout: int) -> int:
    last = events if isinstance(events, LastLines) else LastLines(events)
    return kill_time(down.ts, timeout, last.before(broker, down.ts))


def _kill_to_controlled(plan: Plan, events: list[Event], broker: int, timeout: int) -> None:
    downs = _crash_downs(plan, broker)
    if not downs:
        raise ChangeError(f"broker {broker} was not killed or crashed in the trace (no session expiry)")
    plan.facts = [f for f in plan.facts if not (isinstance(f, F.BrokerStopped) and f.broker == broker)]
    for d in downs:
        t = _kill_time(events, d, broker, timeout)
        ref = F.Ref(t, "whatif_controlled_shutdown", None, None,
                    f"what-if: broker {broker} asks the controller for a controlled shutdown")
        plan.facts.append(F.ControlledShutdownRequest(t, ref, broker=broker))
        d.ts, d.cause = t + 1, "session_closed"
        d.ref = F.Ref(t + 1, "whatif_clean_stop", None, None, f"what-if: broker {broker} closes its session cleanly")
    plan.notes.append(f"broker {broker}: kill -9 at an estimated {iso_utc(_kill_time(events, downs[0], broker, timeout))} "
                      f"(session expiry minus its {timeout // MS} ms timeout) becomes a controlled shutdown")


def _controlled_to_kill(plan: Plan, broker: int, timeout: int) -> None:
    reqs = [f for f in plan.facts if isinstance(f, F.ControlledShutdownRequest) and f.broker == broker]
    if not reqs:
        raise ChangeError(f"broker {broker} made no controlled shutdown in the trace")
    plan.facts = [f for f in plan.facts if not (isinstance(f, F.ControlledShutdownRequest) and f.broker == broker)]
    for r in reqs:
        nxt = next((f for f in sorted(plan.facts, key=lambda x: x.ts) if isinstance(f, F.BrokerDown)
                    and f.broker == broker and f.ts >= r.ts), None)
        plan.facts.append(F.BrokerStopped(r.ts, F.Ref(r.ts, "whatif_kill", None, None,
                                                      f"what-if: broker {broker} killed with kill -9"), broker=broker))
        if nxt is not None:
            nxt.ts, nxt.cause = r.ts + timeout, "session_expired"
            nxt.ref = F.Ref(nxt.ts, "whatif_session_expired", None, None,
                            f"what-if: broker {broker} killed at {iso_utc(r.ts)}; its session expires "
                            f"{timeout // MS} ms later")


def _reassign_away(plan: Plan, events: list[Event], broker: int, timeout: int) -> None:
    stops = [f for f in plan.facts if isinstance(f, (F.BrokerDown, F.ControlledShutdownRequest)) and f.broker == broker]
    if not stops:
        raise ChangeError(f"broker {broker} never stopped in the trace")
    first = min(stops, key=lambda f: f.ts)
    t = first.ts
    if isinstance(first, F.BrokerDown) and first.cause in ("session_expired", "expired", "controller_detected"):
        t = _kill_time(events, first, broker, timeout)
    ref = F.Ref(t - 1, "whatif_reassign_away", None, None,
                f"what-if: kafka-reassign-partitions moves every replica off broker {broker} first")
    plan.facts.append(F.ReassignAway(t - 1, ref, broker=broker))


def _shift_expiries(plan: Plan, timeouts: dict[int, int], default: int, new: int) -> None:
    n = 0
    for f in plan.facts:
        if isinstance(f, F.BrokerDown) and f.cause in ("session_expired", "expired"):
            f.ts += new - timeouts.get(f.broker, default)
            n += 1
    plan.notes.append(f"{n} session expiry(ies) moved to kill time + {new // MS} ms")


def _shift_isr_shrinks(plan: Plan, delta: int) -> None:
    prev: dict[F.TP, tuple[int, ...]] = {}
    for f in sorted(plan.facts, key=lambda x: x.ts):
        if isinstance(f, F.LeaderIsrChange):
            old = prev.get(f.tp)
            if old is not None and len(f.isr) < len(old):
                f.ts = max(f.ts + delta, 0)
            prev[f.tp] = f.isr
    plan.notes.append(f"ISR shrinks moved by {delta / 1e6:+.1f} s (replica.lag.time.max.ms)")


def _restart_order(plan: Plan, order: list[int]) -> None:
    restarts = []
    downs = sorted((f for f in plan.facts if isinstance(f, F.BrokerDown)), key=lambda f: f.ts)
    for d in downs:
        up = next((f for f in sorted(plan.facts, key=lambda x: x.ts) if isinstance(f, F.BrokerUp)
                   and f.broker == d.broker and f.ts > d.ts), None)
        if up is not None:
            restarts.append((d, up))
    if sorted(order) != sorted(d.broker for d, _ in restarts[: len(order)]):
        raise ChangeError(f"restart-order: the trace's first {len(order)} restart(s) are of brokers "
                          f"{[d.broker for d, _ in restarts[:len(order)]]}")
    slots = [(d.ts, u.ts) for d, u in restarts[: len(order)]]
    for (t_down, t_up), b in zip(slots, order):
        d, u = next((d, u) for d, u in restarts if d.broker == b)
        d.ts, u.ts = t_down, t_up


# ------------------------------------------------------------------------------------------- sides


def run_side(events: list[Event], facts: list[F.Fact], stream, overrides=None, topic_overrides=None,
             rewrite=None, cluster=None) -> ReplayResult:
    config = ConfigState(version=parse_version(stream.kafka_version))
    config.override_cluster = dict(overrides or {})
    config.override_topic = {t: dict(v) for t, v in (topic_overrides or {}).items()}
    ctrl = ZkControllerReplay(config, None, CounterfactualMode(dict(rewrite or {})))
    ctrl.run(facts, stream.trace_end)
    retire(ctrl)
    # counterfactual: nothing is recorded, and a side also counts the time a killed leader still looked alive
    return assemble(ctrl, stream, cluster=cluster, mode="whatif", recorded=None, unavailable=True)


def _crash_stops(facts: list[F.Fact], events: list[Event], timeouts: dict[int, int], default: int) -> list[F.Fact]:
    """A crashed broker stops serving at its (estimated) kill time, before ZooKeeper notices."""
    out = []
    last = LastLines(events)
    for f in facts:
        if isinstance(f, F.BrokerDown) and f.cause in CRASH_CAUSES:
            t = _kill_time(last, f, f.broker, timeouts.get(f.broker, default))
            if t < f.ts:
                ref = F.Ref(t, "estimated_kill_time", None, None,
                            f"broker {f.broker} stops serving (estimated: its session expiry minus the session "
                            "timeout, or its last log line if later)")
                out.append(F.BrokerStopped(t, ref, broker=f.broker))
    return out


def _inferred_inputs(recorded: ReplayResult) -> list[F.Fact]:
    out = []
    for f in recorded.image.findings:
        if f["kind"] == "inferred_controlled_shutdown":
            ref = F.Ref(f["ts"], "inferred_controlled_shutdown", None, None, f["text"])
            out.append(F.ControlledShutdownRequest(f["ts"] - 1, ref, broker=f["broker"]))
    return out


def _real(lps: list[Leaderless]) -> list[Leaderless]:
    """Outages with a duration: in a counterfactual replay an election at the very instant of a loss is none."""
    return [lp for lp in lps if lp.episode.end is None or lp.episode.end > lp.episode.start]


def metrics(res: ReplayResult, events: list[Event], horizon: int | None = None) -> dict[str, Any]:
    end = horizon if horizon is not None else res.stream.trace_end
    secs = 0
    parts = set()
    for lp in _real(res.leaderless):
        ep = lp.episode
        if _span(ep.start, ep.end, end) > 0:
            secs += _span(ep.start, ep.end, end)
            parts.add((ep.topic, ep.partition))
    unavail = 0
    for ep in res.unavailable:
        unavail += _span(ep.start, ep.end, end)
    img = res.image
    cfg = img.config
    # the same computation as the report's under-min-ISR section (replay_engine/causes/write_outages.py)
    under = partition_seconds(under_min_isr(res.intervals, resolver(res.history, cfg)), end)
    unclean = estimate_losses(list(img.unclean_elections), events)
    loss = [u for u in unclean if u["possible_data_loss"]]
    leaders: dict[int, int] = {}
    for p in img.partitions.values():
        if p.leader is not None and p.leader >= 0 and p.leader in img.live:
            leaders[p.leader] = leaders.get(p.leader, 0) + 1
    exposed = 0
    for e in events:
        if e.event_type != "client_error" or e.ts is None:
            continue
        for lp in _real(res.leaderless):
            ep = lp.episode
            if e.topic == ep.topic and (e.partition is None or e.partition == ep.partition) and \
                    ep.start <= e.ts <= (ep.end or 1 << 62):
                exposed += int((e.detail or {}).get("records") or 1)
                break
    return {
        "leaderless_partition_seconds": round(secs / 1e6, 3),
        "leaderless_partitions": len(parts),
        "unavailable_partition_seconds": round(unavail / 1e6, 3),
        "unclean_elections": len(unclean),
        "possible_data_loss": len(loss),
        "messages_lost_at_least": sum(u["lost_messages"] or 0 for u in loss),
        "under_min_isr_partition_seconds": round(under, 3),
        # no acks=all write possible: no leader, or a leader with too small an ISR (disjoint: see write_outages)
        "write_unavailable_partition_seconds": round(secs / 1e6 + under, 3),
        "client_messages_exposed": exposed,
        "leaders_per_broker_at_end": {str(b): n for b, n in sorted(leaders.items())},
        "leadership_skew_at_end": (max(leaders.values()) - min(leaders.values())) if leaders else 0,
        "unclean_election_list": unclean,
    }


def _per_partition(res: ReplayResult) -> dict[F.TP, list[Leaderless]]:
    out: dict[F.TP, list[Leaderless]] = {}
    for lp in _real(res.leaderless):
        out.setdefault((lp.episode.topic, lp.episode.partition), []).append(lp)
    return out


def _span(start: int, end: int | None, horizon: int | None) -> int:
    stop = end if end is not None else (horizon if horizon is not None else start)
    if horizon is not None:
        stop = min(stop, horizon)
    return max(stop - start, 0)


def _secs(lps: list[Leaderless], end: int | None) -> int:
    return sum(_span(lp.episode.start, lp.episode.end, end) for lp in lps)


def _unavailable(res: ReplayResult, horizon: int | None) -> dict[F.TP, int]:
    out: dict[F.TP, int] = {}
    for ep in res.unavailable:
        tp = (ep.topic, ep.partition)
        out[tp] = out.get(tp, 0) + _span(ep.start, ep.end, horizon)
    return out


def changed_partitions(base: ReplayResult, var: ReplayResult, horizon: int | None) -> list[dict[str, Any]]:
    b, v = _per_partition(base), _per_partition(var)
    ab, av = _unavailable(base, horizon), _unavailable(var, horizon)
    ub = {d.tp for d in base.image.unclean_elections}
    uv = {d.tp for d in var.image.unclean_elections}
    out = []
    for tp in sorted(set(b) | set(v) | set(ab) | set(av) | ub | uv):
        sb, sv = _secs(b.get(tp, []), horizon), _secs(v.get(tp, []), horizon)
        xb, xv = ab.get(tp, 0), av.get(tp, 0)
        if abs(sb - sv) <= MS and abs(xb - xv) <= MS and (tp in ub) == (tp in uv):
            continue
        out.append({
            "topic": tp[0], "partition": tp[1],
            "baseline": {"leaderless_seconds": round(sb / 1e6, 3), "unavailable_seconds": round(xb / 1e6, 3),
                         "unclean_election": tp in ub, "episodes": [_ep_json(x) for x in b.get(tp, [])]},
            "variant": {"leaderless_seconds": round(sv / 1e6, 3), "unavailable_seconds": round(xv / 1e6, 3),
                        "unclean_election": tp in uv, "episodes": [_ep_json(x, chain=True) for x in v.get(tp, [])]},
        })
    return out


def _ep_json(lp: Leaderless, chain: bool = False) -> dict[str, Any]:
    d = {"start": iso_utc(lp.episode.start), "end": iso_utc(lp.episode.end), "cause": lp.cause.kind,
         "summary": lp.cause.summary}
    if chain:
        d["chain"] = [r.to_json() for r in lp.cause.chain]
    return d


@dataclass
class WhatIf:
    changes: list[Change]
    recorded: ReplayResult
    baseline: ReplayResult
    variant: ReplayResult
    events: list[Event]
    notes: list[str]
    horizon: int | None = None

    def to_json(self) -> dict[str, Any]:
        bm, vm = metrics(self.baseline, self.events, self.horizon), metrics(self.variant, self.events, self.horizon)
        delta = {k: round(vm[k] - bm[k], 3) for k in ("leaderless_partition_seconds", "leaderless_partitions",
                                                      "unavailable_partition_seconds",
                                                      "unclean_elections", "possible_data_loss",
                                                      "under_min_isr_partition_seconds",
                                                      "write_unavailable_partition_seconds", "client_messages_exposed")}
        return {
            "cluster": self.baseline.cluster,
            "changes": [c.to_json() for c in self.changes],
            "baseline": bm,
            "variant": vm,
            "delta": delta,
            "verdict": verdict(self.changes, bm, vm, self.baseline, self.variant),
            "horizon": iso_utc(self.horizon),
            "changed_partitions": changed_partitions(self.baseline, self.variant, self.horizon),
            "notes": self.notes,
        }


def verdict(changes: list[Change], bm: dict, vm: dict, base: ReplayResult, var: ReplayResult) -> str:
    what = "; ".join(c.describe() for c in changes)
    d = vm["leaderless_partition_seconds"] - bm["leaderless_partition_seconds"]
    du = vm["unavailable_partition_seconds"] - bm["unavailable_partition_seconds"]
    if abs(d) < 0.001 and abs(du) < 0.001 and vm["unclean_elections"] == bm["unclean_elections"]:
        why = ""
        kinds = {lp.cause.kind for lp in _real(var.leaderless)}
        if "all_replicas_offline" in kinds and any(c.key == UNCLEAN for c in changes):
            why = " Unclean election could not help: the partitions had no other replica to elect."
        return f"With {what}: nothing would have changed ({bm['leaderless_partition_seconds']:,.1f} leaderless " \
               f"partition-seconds either way).{why}"
    parts = [f"leaderless partition-seconds {bm['leaderless_partition_seconds']:,.1f} -> "
             f"{vm['leaderless_partition_seconds']:,.1f}",
             f"leaderless partitions {bm['leaderless_partitions']} -> {vm['leaderless_partitions']}"]
    if abs(du - d) >= 0.001:
        parts.append(f"unavailable partition-seconds (counting the time a killed leader still looked alive) "
                     f"{bm['unavailable_partition_seconds']:,.1f} -> {vm['unavailable_partition_seconds']:,.1f}")
    if vm["unclean_elections"] != bm["unclean_elections"]:
        parts.append(f"unclean elections (possible data loss) {bm['unclean_elections']} -> {vm['unclean_elections']}")
    return f"With {what}: " + ", ".join(parts) + "."


def whatif(events: list[Event], changes: list[Change], cluster: str | None = None) -> WhatIf:
    events = list(events)
    recorded = replay_cluster(events, cluster)
    if recorded.mode == "kraft":
        return _kraft(events, changes, cluster, recorded)
    if any(c.key == ELR_FEATURE for c in changes):
        raise ChangeError(f"{ELR_FEATURE} is a KRaft feature (KIP-966); the cluster is in ZooKeeper mode")
    stream = build_facts(events)
    inferred = _inferred_inputs(recorded)
    cfg = dataclasses.replace(recorded.image.config, override_cluster=EMPTY, override_topic=EMPTY)
    timeouts = session_timeouts(events)
    stops = _crash_stops(stream.facts, events, timeouts, cfg.int_value(ZK_SESSION_TIMEOUT) * MS)
    base_facts = _resort([copy.copy(f) for f in stream.facts] + inferred + stops)
    plan = plan_variant(base_facts, events, changes, cfg)
    baseline = run_side(events, [copy.copy(f) for f in base_facts], stream, cluster=cluster)
    variant = run_side(events, plan.facts, stream, plan.overrides, plan.topic_overrides, plan.rewrite, cluster=cluster)
    notes = list(plan.notes)
    if inferred:
        notes.append(f"{len(inferred)} controlled shutdown(s) inferred from the record are part of both sides")
    if stops:
        notes.append(f"{len(stops)} crashed broker(s) taken as dead from their estimated kill time (session expiry "
                     "minus the session timeout, or their last log line if later) on both sides")
    # Both sides are measured over the time the evidence covers; what a change pushes past it is not counted.
    horizon = stream.trace_end
    late = sum(1 for f in plan.facts if horizon is not None and f.ts > horizon and not isinstance(f, F.Evidence))
    if late:
        notes.append(f"{late} input(s) of the variant fall after the end of the evidence ({iso_utc(horizon)}) "
                     "and are not counted")
    return WhatIf(changes, recorded, baseline, variant, events, notes, horizon)


def _kraft(events: list[Event], changes: list[Change], cluster: str | None, recorded: ReplayResult) -> WhatIf:
    """Both sides KRaft replays deciding for themselves with the cluster's release's rules (``kraft_whatif``)."""
    from replay_engine.kraft import whatif as KW

    cfg = dataclasses.replace(recorded.image.config, override_cluster=EMPTY, override_topic=EMPTY)
    version = recorded.stream.kafka_version
    facts, stream, ctx = KW.side_facts(events, cfg.version)
    brokers = sorted(recorded.image.known_brokers)
    config = ConfigState(version=cfg.version)
    stops = KW.kills(facts, events, config)
    base = list(facts)
    for s in stops:
        KW._insert(base, s)
    try:
        var_facts, overrides, topic_overrides, variant, notes = KW.plan(base, events, changes, config, brokers)
    except KW.KraftChangeError as exc:
        raise ChangeError(str(exc)) from None
    baseline = KW.run_side(events, [copy.copy(f) for f in base], stream, ctx, version, cluster=cluster)
    var = KW.run_side(events, var_facts, stream, ctx, version, overrides, topic_overrides, variant, cluster=cluster)
    notes = [f"KRaft: both sides decide every partition change with {R.rule_set_name('kraft', cfg.version)} "
             "(PartitionChangeBuilder through the rule table, docs/semantics.md)"] + notes
    if stops:
        notes.append(f"{len(stops)} broker(s) fenced by a session timeout taken as dead from their estimated kill (the "
                     "fence less broker.session.timeout.ms, or their last log line if later) on both sides")
    horizon = ctx.trace_end
    late = sum(1 for f in var_facts if horizon is not None and f.ts > horizon and not isinstance(f, F.Evidence))
    if late:
        notes.append(f"{late} input(s) of the variant fall after the end of the evidence ({iso_utc(horizon)}) "
                     "and are not counted")
    return WhatIf(changes, recorded, baseline, var, events, notes, horizon)
