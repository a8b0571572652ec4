"""The library entry point: events in, a :class:`ReplayResult` per cluster out. No Spark, no files."""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from parsers.schema import Event, iso_utc
from replay_engine.config import ConfigState, parse_version
from replay_engine.controller import ZkControllerReplay
from replay_engine.explain import Cause, World, explain
from replay_engine.from_events import ClusterContext, FactStream, build_facts
from replay_engine.judge import DIVERGED, Comparison, tally, unknown_reasons
from replay_engine.partition import Decision
from replay_engine.restarts import annotate as annotate_restarts, failed_starts, generated_ids
from replay_engine.shard_cut import shard_facts
from replay_engine.dataloss import estimate as estimate_loss
from replay_engine.skew import SkewEstimate, estimate_skew
from replay_engine.timeline import Episode, Interval, leaderless_episodes
from replay_engine.write_outages import UnderMinIsr, compute as compute_write_outages


@dataclass
class Leaderless:
    episode: Episode
    cause: Cause

    def to_json(self) -> dict[str, Any]:
        ep = self.episode
        return {
            "topic": ep.topic,
            "partition": ep.partition,
            "start": iso_utc(ep.start),
            "end": iso_utc(ep.end),
            "duration_s": None if ep.end is None else round((ep.end - ep.start) / 1e6, 3),
            "replicas": self.cause.details.get("replicas"),
            "isr_at_loss": self.cause.details.get("isr_at_loss"),
            "cause": self.cause.to_json(),
        }


@dataclass
class ReplayResult:
    cluster: str | None
    mode: str
    stream: FactStream
    intervals: list[Interval]
    leaderless: list[Leaderless]
    decisions: list[Decision]
    comparisons: list[Comparison]  # every record judged: agreed, diverged or unknown (with the reason)
    controller: ZkControllerReplay
    notes: list[str] = field(default_factory=list)
    skew: list[SkewEstimate] = field(default_factory=list)
    data_loss: list[dict[str, Any]] = field(default_factory=list)
    restarts: dict[str, Any] = field(default_factory=dict)  # failed starts and generated broker ids
    under_min_isr: list[UnderMinIsr] = field(default_factory=list)  # write outages with a live leader

    # ---------------------------------------------------------------- agreement

    def divergences(self) -> list[dict[str, Any]]:
        out = []
        for c in self.comparisons:
            if c.verdict == DIVERGED:
                out.append({"topic": c.tp[0], "partition": c.tp[1], "ts": iso_utc(c.ts), "recorded": c.recorded,
                            "replayed": c.replayed, "how": c.how,
                            "evidence": [c.record.to_json()] + [e.to_json() for e in c.evidence]})
        for d in self.decisions:
            if d.status == "unrecorded" and d.expected_record:
                out.append({"topic": d.tp[0], "partition": d.tp[1], "ts": iso_utc(d.ts), "recorded": None,
                            "replayed": d.after if d.after is not None else {"leader": -1, "failed": True},
                            "how": f"replayed {d.kind} ({d.strategy}) with no matching record",
                            "evidence": [d.trigger.to_json()]})
        out.sort(key=lambda x: (x["ts"] or "", x["topic"], x["partition"]))
        return out

    def agreement(self) -> dict[str, Any]:
        unrecorded = sum(1 for d in self.decisions if d.status == "unrecorded" and d.expected_record)
        t = tally(self.comparisons)
        compared = t["agreed"] + t["diverged"] + unrecorded
        agreed = t["agreed"]
        return {
            "compared": compared,
            "agreed": agreed,
            "ratio": round(agreed / compared, 6) if compared else None,
            "uncompared": t["unknown"],
            "evidence_gaps": t["evidence_gaps"],
            "divergences": self.divergences(),
        }

    def unknown_reasons(self) -> dict[str, int]:
        """Why records were left unjudged (the 'uncompared' of agreement()), by reason. Not yet in reports."""
        return unknown_reasons(self.comparisons)

    # ---------------------------------------------------------------- json

    def to_json(self) -> dict[str, Any]:
        ctrl = self.controller
        brokers = []
        for b in sorted(ctrl.periods):
            brokers.append({"broker": b, "periods": [
                {"state": p.state, "start": iso_utc(p.start), "end": iso_utc(p.end), "end_cause": p.end_cause,
                 "start_event": p.start_ref.to_json() if p.start_ref else None} for p in ctrl.periods[b]]})
        controllers = [{"controller": t.controller, "epoch": t.epoch, "start": iso_utc(t.start), "end": iso_utc(t.end),
                        "end_cause": t.end_cause, "start_event": t.start_ref.to_json() if t.start_ref else None,
                        "end_event": t.end_ref.to_json() if t.end_ref else None} for t in ctrl.tenures]
        unclean = self.data_loss or [d.to_json() for d in ctrl.unclean_elections]
        cfg = ctrl.config
        return {
            "cluster": self.cluster,
            "mode": self.mode,
            "window": {"start": iso_utc(self.stream.trace_start), "end": iso_utc(self.stream.trace_end)},
            "kafka_version": ".".join(map(str, cfg.version)) if cfg.version else None,
            "kafka_version_source": cfg.version_source,
            "decisions": len(self.decisions),
            "agreement": self.agreement(),
            "leaderless": [lp.to_json() for lp in self.leaderless],
            "under_min_isr": [o.to_json() for o in self.under_min_isr],
            "controllers": controllers,
            "brokers": brokers,
            "unclean_elections": unclean,
            "clock_skew": [s.to_json() for s in self.skew if s.significant],
            "failed_starts": self.restarts.get("failed_starts", []),
            "generated_broker_ids": self.restarts.get("generated_ids", []),
            "findings": ctrl.findings + [{"kind": "clock_skew", "text": s.text()} for s in self.skew if s.significant],
            "notes": self.notes,
        }

    def timeline_rows(self) -> list[dict[str, Any]]:
        rows = []
        for iv in self.intervals:
            row = iv.to_row()
            row["cluster"] = self.cluster
            rows.append(row)
        return rows


def _dedupe_metadata(events: list[Event]) -> list[Event]:
    """The same metadata record read from two copies (segment and checkpoint, two nodes) counts once."""
    seen: set[tuple] = set()
    out = []
    for e in events:
        if e.source_kind == "kraft_metadata":
            key = (e.source_pos, e.source_sub, e.event_type, e.topic, e.partition, e.subject_broker)
            if key in seen:
                continue
            seen.add(key)
        out.append(e)
    return out


@contextmanager
def _cycle_gc_paused():
    """A replay allocates millions of small objects (facts, refs, states, intervals) and frees almost none
    until it ends: the cyclic collector's full passes over them found nothing and took ~40% of the replay's
    time. Reference counting still frees what is dropped; the collector runs again afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def replay_kraft(events: list[Event], cluster: str | None) -> ReplayResult:
    with _cycle_gc_paused():
        return _replay_kraft(events, cluster)


def _replay_kraft(events: list[Event], cluster: str | None) -> ReplayResult:
    from replay_engine.from_events import Coverage
    from replay_engine.kraft import KraftReplay, kraft_order

    events = kraft_order(_dedupe_metadata(events))
    version = next(((e.detail or {}).get("version") for e in events if e.event_type == "kafka_version"), None)
    config = ConfigState(version=parse_version(version))
    if config.version is not None:
        config.version_source = f"logged 'Kafka version: {version}'"
    ctrl = KraftReplay(config)
    ctrl.run(events)
    ts = [e.ts for e in events if e.ts]
    stream = FactStream([], "kraft", Coverage(), version, min(ts) if ts else None, max(ts) if ts else None, None, [])
    if not ctrl.has_records:
        stream.notes.append("no __cluster_metadata log given: leader changes come from the broker logs and the "
                            "replay's own PartitionChangeBuilder decisions")
    intervals = ctrl.timeline.finish()
    recorded = (lambda _ts, _c, _k: True) if ctrl.has_records else None
    world = World(ctrl.periods, ctrl.tenures, ctrl.ar_history, ctrl.config_history, ctrl.failed_elections,
                  ctrl.evidence_by_broker, ctrl.evidence_by_tp, stream.trace_end, recorded, ctrl.unclean_elections)
    leaderless = [Leaderless(ep, explain(ep, world)) for ep in leaderless_episodes(intervals)]
    return ReplayResult(cluster, "kraft", stream, intervals, leaderless, ctrl.decisions, ctrl.comparisons,
                        ctrl, list(stream.notes), estimate_skew(events),
                        [estimate_loss(d, events) for d in ctrl.unclean_elections],
                        _restarts(events, leaderless, ctrl.ar_history),
                        compute_write_outages(intervals, world, ctrl.config, events))


def replay_cluster(events: Iterable[Event], cluster: str | None = None,
                   overrides: dict[str, str] | None = None,
                   topic_overrides: dict[str, dict[str, str]] | None = None,
                   keep_tp: Callable[[tuple[str, int]], bool] | None = None,
                   context: ClusterContext | None = None) -> ReplayResult:
    """Replay ONE cluster's events (all sources mixed; ordering is done here).

    ``keep_tp`` replays only the partitions it accepts, with every cluster-wide fact (a shard, see
    ``replay_engine.shard``); ZooKeeper mode only: a KRaft metadata log is replayed whole.
    """
    with _cycle_gc_paused():
        return _replay_cluster(events, cluster, overrides, topic_overrides, keep_tp, context)


def _replay_cluster(events, cluster, overrides, topic_overrides, keep_tp, context) -> ReplayResult:
    from replay_engine.kraft import is_kraft

    events = list(events)
    if is_kraft(events):
        if keep_tp is not None:
            raise ValueError("KRaft clusters are replayed whole, not by partition shard")
        return replay_kraft(events, cluster)
    stream = build_facts(events, context)
    if keep_tp is not None:
        stream.facts = shard_facts(stream.facts, keep_tp)
    config = ConfigState(version=parse_version(stream.kafka_version))
    if config.version is not None:
        config.version_source = stream.kafka_version_source or f"logged 'Kafka version: {stream.kafka_version}'"
    config.override_cluster = dict(overrides or {})
    config.override_topic = {t: dict(v) for t, v in (topic_overrides or {}).items()}
    ctrl = ZkControllerReplay(config, stream.coverage)
    if keep_tp is not None:
        ctrl.journal = []
    ctrl.run(stream.facts, stream.trace_end)
    intervals = ctrl.timeline.finish()
    if keep_tp is not None:
        intervals = [iv for iv in intervals if keep_tp((iv.topic, iv.partition))]
    world = World(ctrl.periods, ctrl.tenures, ctrl.ar_history, ctrl.config_history, ctrl.failed_elections,
                  ctrl.evidence_by_broker, ctrl.evidence_by_tp, stream.trace_end, stream.coverage.recorded,
                  ctrl.unclean_elections)
    leaderless = [Leaderless(ep, explain(ep, world)) for ep in leaderless_episodes(intervals)]
    return ReplayResult(cluster, stream.mode, stream, intervals, leaderless, ctrl.decisions, ctrl.comparisons,
                        ctrl, list(stream.notes), estimate_skew(events),
                        [estimate_loss(d, events) for d in ctrl.unclean_elections],
                        _restarts(events, leaderless, ctrl.ar_history),
                        compute_write_outages(intervals, world, ctrl.config, events))


def _restarts(events: list[Event], leaderless: list[Leaderless], ar_history) -> dict[str, Any]:
    """Failed start-ups, told in the outages they prolonged; brokers that came back under a generated id."""
    fails = failed_starts(events)
    annotate_restarts(leaderless, fails)
    return {"failed_starts": [f.to_json() for f in fails], "generated_ids": generated_ids(events, ar_history)}


def replay(events: Iterable[Event], overrides: dict[str, str] | None = None,
           topic_overrides: dict[str, dict[str, str]] | None = None) -> list[ReplayResult]:
    by_cluster: dict[str | None, list[Event]] = {}
    for ev in events:
        by_cluster.setdefault(ev.cluster, []).append(ev)
    return [replay_cluster(evs, c, overrides, topic_overrides)
            for c, evs in sorted(by_cluster.items(), key=lambda kv: kv[0] or "")]
