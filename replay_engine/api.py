"""The library entry point: events in, a :class:`ReplayResult` per cluster out. No Spark, no files."""
from __future__ import annotations

from typing import Callable, Iterable

from parsers.common.gc_pause import cycle_gc_paused
from parsers.schema import Event
from replay_engine.common.config import ConfigState, parse_version
from replay_engine.zk.controller import ZkControllerReplay
from replay_engine.zk.from_events import ClusterContext, FactStream, build_facts
from replay_engine.result import Leaderless, ReplayResult, assemble
from replay_engine.common.roles import retire
from replay_engine.sharding.cut import shard_facts

__all__ = ["Leaderless", "ReplayResult", "kraft_result", "replay", "replay_cluster", "replay_kraft", "zk_result"]


def _broker_versions(events: list[Event], config: ConfigState) -> tuple[dict[int, str], list[str]]:
    """Each broker's own 'Kafka version:' (the last it logged), and a note when they differ (a rolling upgrade)."""
    out: dict[int, str] = {}
    for e in events:
        if e.event_type == "kafka_version" and e.broker_id is not None and (e.detail or {}).get("version"):
            out[e.broker_id] = str(e.detail["version"])
    notes = []
    if len(set(out.values())) > 1:
        each = ", ".join(f"broker {b} {v}" for b, v in sorted(out.items()))
        used = ".".join(map(str, config.version)) if config.version else "unknown"
        notes.append(f"brokers log different Kafka versions ({each}): a rolling upgrade; each decision is "
                     f"replayed with the rules of the acting controller's own version, or of {used} "
                     f"({config.version_source}) for a controller that logged none")
    return out, notes


def replay_kraft(events: list[Event], cluster: str | None, keep_tp: Callable[[tuple[str, int]], bool] | None = None,
                 kpass=None, context: ClusterContext | None = None) -> ReplayResult:
    """A KRaft cluster's replay; a shard of it with ``keep_tp``, phase 1's ``kpass`` (``replay_engine.kraft.split``)
    and the whole cluster's ``context`` (``kraft_pass.kraft_context``)."""
    with cycle_gc_paused():
        return _replay_kraft(events, cluster, keep_tp, kpass, context)


def _replay_kraft(events, cluster, keep_tp, kpass, context) -> ReplayResult:
    from replay_engine.kraft.replay import KraftReplay
    from replay_engine.kraft.facts import kraft_facts, prepared

    events, ctx = prepared(events, context)
    version = next(((e.detail or {}).get("version") for e in events if e.event_type == "kafka_version"), None)
    config = ConfigState(version=parse_version(version))
    if config.version is not None:
        config.version_source = f"logged 'Kafka version: {version}'"
    ctrl = KraftReplay(config)
    if keep_tp is not None:
        ctrl.journal = []
    ctrl.run(kraft_facts(events, config.version, kpass, ctx, keep_tp))
    return kraft_result(ctrl, events, cluster, version, ctx, keep_tp)


def kraft_result(ctrl, events: list[Event], cluster: str | None, version: str | None, ctx: ClusterContext,
                 keep_tp: Callable[[tuple[str, int]], bool] | None = None) -> ReplayResult:
    """The result of a KRaft replay that has taken its last fact (the end of ``replay_kraft``; ``watch`` ends
    each picture of its replay the same way). ``version``: as logged; ``ctx``: the cluster's context."""
    from replay_engine.zk.from_events import Coverage

    retire(ctrl)
    stream = FactStream([], "kraft", Coverage(), version, ctx.trace_start, ctx.trace_end, None, [])
    if not ctrl.has_records:
        stream.notes.append("no __cluster_metadata log given: leader changes come from the broker logs and the "
                            "replay's own PartitionChangeBuilder decisions")
    recorded = (lambda _ts, _c, _k: True) if ctrl.has_records else None
    versions, version_notes = _broker_versions(events, ctrl.config)
    return assemble(ctrl, stream, cluster=cluster, mode="kraft", recorded=recorded, events=events, keep_tp=keep_tp,
                    notes=list(stream.notes) + version_notes, broker_versions=versions)


def replay_cluster(events: Iterable[Event], cluster: str | None = None,
                   overrides: dict[str, str] | None = None,
                   topic_overrides: dict[str, dict[str, str]] | None = None,
                   keep_tp: Callable[[tuple[str, int]], bool] | None = None,
                   context: ClusterContext | None = None, kpass=None) -> ReplayResult:
    """Replay ONE cluster's events (all sources mixed; ordering is done here).

    ``keep_tp`` replays only the partitions it accepts, with every cluster-wide fact (a shard, see
    ``replay_engine.sharding.shard``); a KRaft cluster's shard needs phase 1's ``kpass`` too (``replay_engine.kraft.split``).
    """
    with cycle_gc_paused():
        return _replay_cluster(events, cluster, overrides, topic_overrides, keep_tp, context, kpass)


def _replay_cluster(events, cluster, overrides, topic_overrides, keep_tp, context, kpass=None) -> ReplayResult:
    from replay_engine.kraft.facts import is_kraft

    events = list(events)
    if is_kraft(events):
        if keep_tp is not None and kpass is None:
            raise ValueError("a KRaft cluster's shard needs phase 1 (replay_engine.kraft.split.phase1)")
        return _replay_kraft(events, cluster, keep_tp, kpass, context)
    ctrl, stream = zk_replay_of(events, context, overrides, topic_overrides)
    if keep_tp is not None:
        stream.facts = shard_facts(stream.facts, keep_tp)
        ctrl.journal = []
    ctrl.run(stream.facts, stream.trace_end)
    return zk_result(ctrl, stream, events, cluster, keep_tp)


def zk_result(ctrl: ZkControllerReplay, stream: FactStream, events: list[Event], cluster: str | None,
              keep_tp: Callable[[tuple[str, int]], bool] | None = None) -> ReplayResult:
    """The result of a ZooKeeper-mode replay after its ``finish`` (the end of ``replay_cluster``; ``watch`` ends
    each picture of its replay the same way)."""
    retire(ctrl)
    versions, version_notes = _broker_versions(events, ctrl.config)
    return assemble(ctrl, stream, cluster=cluster, mode=stream.mode, recorded=stream.coverage.recorded,
                    events=events, keep_tp=keep_tp, notes=list(stream.notes) + version_notes,
                    broker_versions=versions)


def zk_replay_of(events: list[Event], context: ClusterContext | None = None,
                 overrides: dict[str, str] | None = None,
                 topic_overrides: dict[str, dict[str, str]] | None = None,
                 paths: Iterable[str] | None = None) -> tuple[ZkControllerReplay, FactStream]:
    """A ZooKeeper-mode cluster's facts and the controller that will replay them, configured as the
    evidence says (the whole replay, a shard and phase 1 of a sharded replay start alike; ``paths``: as
    ``build_facts``)."""
    stream = build_facts(events, context, paths)
    config = ConfigState(version=parse_version(stream.kafka_version))
    if config.version is not None:
        config.version_source = stream.kafka_version_source or f"logged 'Kafka version: {stream.kafka_version}'"
    config.override_cluster = dict(overrides or {})
    config.override_topic = {t: dict(v) for t, v in (topic_overrides or {}).items()}
    return ZkControllerReplay(config, stream.coverage), stream


def replay(events: Iterable[Event], overrides: dict[str, str] | None = None,
           topic_overrides: dict[str, dict[str, str]] | None = None) -> list[ReplayResult]:
    by_cluster: dict[str | None, list[Event]] = {}
    for ev in events:
        by_cluster.setdefault(ev.cluster, []).append(ev)
    return [replay_cluster(evs, c, overrides, topic_overrides)
            for c, evs in sorted(by_cluster.items(), key=lambda kv: kv[0] or "")]
