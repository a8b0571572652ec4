"""What-if for a KRaft cluster: the same trace, both sides replayed by a KRaft controller that decides for itself
(``kraft_counterfactual``: PartitionChangeBuilder through ``rules.decide`` for the cluster's release), the change the
only difference between them.

Changes a KRaft what-if makes (``plan``):

- configuration (``unclean.leader.election.enable``, ``min.insync.replicas``, cluster-wide or per topic): read by
  generateLeaderAndIsrUpdates (``Election.UNCLEAN``) and maybePopulateTargetElr (min ISR);
- ``eligible.leader.replicas.version`` = 0 / 1: Eligible Leader Replicas off or on from the start (KIP-966, 3.7+);
- a topic's replication factor: its partitions reassigned by Kafka's placement over the brokers seen, followers
  taken in sync (``assignment.extend_replication``);
- ``controlled-shutdown:N``: each session-timeout fence of N (a kill) done as a controlled shutdown at the kill (the
  fence less broker.session.timeout.ms, or N's last line if later): enterControlledShutdown, then the fence of
  its shutdown granted (3.9.0-rc3 ReplicationControlManager.handleBrokerInControlledShutdown, BrokerHeartbeatManager
  SHUTDOWN_NOW);
- ``kill:N``: each controlled shutdown of N done as a kill: N stops serving then, and the controller fences it only
  when its session times out, broker.session.timeout.ms later (BrokerHeartbeatManager.hasValidSession).

On both sides a broker a session timeout fenced stops serving at its estimated kill, not at the fence: the time its
leaderships still looked served is counted as unavailable.
"""
from __future__ import annotations

import bisect
import copy
from dataclasses import replace
from typing import Any

from parsers.schema import Event, iso_utc
from replay_engine.common import facts as F
from replay_engine.estimates.assignment import extend_replication
from replay_engine.common.config import BROKER_SESSION_TIMEOUT, MIN_ISR, UNCLEAN, ConfigState, parse_version
from replay_engine.estimates.crash import LastLines, kill_time
from replay_engine.zk.from_events import Coverage, FactStream
from replay_engine.kraft.counterfactual import KraftVariant
from replay_engine.kraft.facts import KraftStream, kraft_facts, prepared
from replay_engine.result import assemble
from replay_engine.common.roles import retire

ELR = "eligible.leader.replicas.version"
SETTABLE = frozenset({UNCLEAN, MIN_ISR, ELR})  # what a KRaft controller's decisions read
MS = 1_000


class KraftChangeError(ValueError):
    """A change this KRaft what-if cannot make (raised as whatif.ChangeError by the caller)."""


def side_facts(events: list[Event], version) -> tuple[list[F.Fact], KraftStream, Any]:
    """The trace's KRaft facts (one cluster's events), and what the whole cluster's events say besides."""
    evs, ctx = prepared(events)
    stream = kraft_facts(evs, version, ctx=ctx)
    return stream.facts, stream, ctx


def _insert(facts: list[F.Fact], fact: F.Fact) -> None:
    """``fact`` after every fact at or before its time (the trace's order kept)."""
    i = bisect.bisect_right([f.ts for f in facts], fact.ts)
    facts.insert(i, fact)


def _timeout(config: ConfigState) -> int:
    return config.int_value(BROKER_SESSION_TIMEOUT) * MS


def kills(facts: list[F.Fact], events: list[Event], config: ConfigState) -> list[F.BrokerStopped]:
    """A broker a session timeout fenced ("Fencing broker N because its session has timed out") stopped serving at
    its kill: the fence less broker.session.timeout.ms (BrokerHeartbeatManager.hasValidSession), or its last line if
    later."""
    last, timeout, out = LastLines(events), _timeout(config), []
    for f in facts:
        if isinstance(f, F.BrokerDown) and f.cause == "heartbeat_timeout":
            t = kill_time(f.ts, timeout, last.before(f.broker, f.ts - 1))
            if t < f.ts:
                out.append(F.BrokerStopped(t, F.Ref(t, "estimated_kill_time", None, None,
                                                    f"broker {f.broker} stops serving (estimated: its fence less "
                                                    f"broker.session.timeout.ms, or its last log line if later)"),
                                           broker=f.broker))
    return out


def plan(facts: list[F.Fact], events: list[Event], changes: list, config: ConfigState,
         brokers: list[int]) -> tuple[list[F.Fact], dict[str, str], dict[str, dict[str, str]], KraftVariant, list[str]]:
    """The variant's facts, configuration overrides (cluster, per topic), what else it changes, and notes."""
    facts = [copy.copy(f) for f in facts]
    overrides: dict[str, str] = {}
    topic_overrides: dict[str, dict[str, str]] = {}
    rewrite: dict[F.TP, tuple[int, ...]] = {}
    elr = None
    notes: list[str] = []
    for ch in changes:
        if ch.kind in ("config", "topic_config") and ch.key not in SETTABLE:
            raise KraftChangeError(f"{ch.key} is not read by a KRaft controller's decisions (KRaft what-if sets: "
                                   f"{', '.join(sorted(SETTABLE))}, topic:NAME.replication.factor)")
        if ch.kind == "config" and ch.key == ELR:
            elr = str(ch.value).strip() not in ("0", "false")
        elif ch.kind == "config":
            overrides[ch.key] = str(ch.value)
        elif ch.kind == "topic_config":
            topic_overrides.setdefault(ch.topic, {})[ch.key] = str(ch.value)
        elif ch.kind == "replication_factor":
            asg = _assignments(facts).get(ch.topic)
            if not asg:
                raise KraftChangeError(f"topic {ch.topic} does not appear in the trace")
            try:
                new = extend_replication(asg, brokers, int(ch.value), None)
            except ValueError as exc:
                raise KraftChangeError(str(exc)) from None
            rewrite.update({(ch.topic, p): ar for p, ar in new.items()})
            notes.append(f"{ch.topic}: {len(new)} partition(s) re-assigned with replication factor {ch.value} over "
                         f"brokers {brokers}; their followers are assumed in sync")
        elif ch.kind == "controlled_shutdown":
            facts = _kill_to_controlled(facts, events, ch.broker, config, notes)
        elif ch.kind == "kill":
            facts = _controlled_to_kill(facts, ch.broker, config, notes)
        else:
            raise KraftChangeError(f"{ch.describe()}: not modelled for a KRaft cluster yet (KRaft what-if: --set "
                                   f"{', '.join(sorted(SETTABLE))}, topic:NAME.replication.factor, --op "
                                   "controlled-shutdown:N, --op kill:N)")
    return facts, overrides, topic_overrides, KraftVariant(rewrite, elr), notes


def _assignments(facts: list[F.Fact]) -> dict[str, dict[int, tuple[int, ...]]]:
    out: dict[str, dict[int, tuple[int, ...]]] = {}
    for f in facts:
        replicas = getattr(f, "replicas", None)
        if isinstance(f, (F.PartitionRegistration, F.PartitionChange, F.ObservedState)) and replicas:
            out.setdefault(f.tp[0], {})[f.tp[1]] = tuple(replicas)
    return out


def _kill_to_controlled(facts: list[F.Fact], events: list[Event], broker: int, config: ConfigState,
                        notes: list[str]) -> list[F.Fact]:
    fences = [f for f in facts if isinstance(f, F.BrokerDown) and f.broker == broker and f.cause == "heartbeat_timeout"]
    if not fences:
        raise KraftChangeError(f"broker {broker} was not fenced by a session timeout in the trace (no kill to "
                               "replace)")
    last = LastLines(events)
    for d in fences:
        t = kill_time(d.ts, _timeout(config), last.before(broker, d.ts - 1))
        ask = F.Ref(t, "whatif_controlled_shutdown", None, None,
                    f"what-if: broker {broker} asks the controller for a controlled shutdown")
        _insert(facts, F.ControlledShutdownRequest(t, ask, broker=broker))
        done = F.Ref(t + 1, "whatif_shutdown_granted", None, None,
                     f"what-if: broker {broker}'s shutdown granted (SHUTDOWN_NOW), it is fenced")
        _insert(facts, F.BrokerDown(t + 1, done, broker=broker, cause="fenced", view="controller"))
        notes.append(f"broker {broker}: the kill before its fence at {iso_utc(d.ts)} (estimated {iso_utc(t)}) becomes "
                     "a controlled shutdown")
    return facts


def _controlled_to_kill(facts: list[F.Fact], broker: int, config: ConfigState, notes: list[str]) -> list[F.Fact]:
    asks = [f for f in facts if isinstance(f, F.ControlledShutdownRequest) and f.broker == broker]
    if not asks:
        raise KraftChangeError(f"broker {broker} made no controlled shutdown in the trace")
    out = [f for f in facts if not (isinstance(f, F.ControlledShutdownRequest) and f.broker == broker)]
    timeout = _timeout(config)
    for a in asks:
        nxt = next((f for f in out if isinstance(f, F.BrokerDown) and f.broker == broker and f.ts >= a.ts), None)
        _insert(out, F.BrokerStopped(a.ts, F.Ref(a.ts, "whatif_kill", None, None,
                                                 f"what-if: broker {broker} killed with kill -9"), broker=broker))
        if nxt is not None:
            out.remove(nxt)
            t = a.ts + timeout
            _insert(out, replace(nxt, ts=t, cause="heartbeat_timeout", ref=F.Ref(
                t, "whatif_session_timed_out", None, None, f"what-if: broker {broker} killed at {iso_utc(a.ts)}; the "
                f"controller fences it when its session times out, {timeout // MS} ms later")))
    notes.append(f"broker {broker}: {len(asks)} controlled shutdown(s) become kills; each is fenced "
                 f"{timeout // MS} ms later (broker.session.timeout.ms)")
    return out


def run_side(events: list[Event], facts: list[F.Fact], stream: KraftStream, ctx, version: str | None,
             overrides: dict[str, str] | None = None, topic_overrides: dict[str, dict[str, str]] | None = None,
             variant: KraftVariant = KraftVariant(), cluster: str | None = None):
    """One side: a KRaft replay deciding every partition change itself over ``facts``."""
    from replay_engine.kraft.replay import KraftReplay

    config = ConfigState(version=parse_version(version))
    config.override_cluster = dict(overrides or {})
    config.override_topic = {t: dict(v) for t, v in (topic_overrides or {}).items()}
    ctrl = KraftReplay(config, variant=variant)
    ctrl.run(replace(stream, facts=facts))
    retire(ctrl)
    side = FactStream([], "kraft", Coverage(), version, ctx.trace_start, ctx.trace_end, None, [])
    return assemble(ctrl, side, cluster=cluster, mode="whatif", recorded=None, unavailable=True)
