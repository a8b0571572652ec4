"""The cluster as a replay left it, frozen, and its history: what was true at time T.

Kafka's controller publishes a ``MetadataImage`` (``metadata/src/main/java/org/apache/kafka/image/``):
immutable topic, cluster and configuration images that readers hold while the controller
moves on. :class:`ClusterImage` is that for a replay: partitions, brokers, controllers,
the configuration in force and what the replay found, all read-only. Readers outside the
engine (what-if, risk, reports, dashboards) get the image and the :class:`ClusterHistory`,
never the live replay object.

The history is not a snapshot per event: it is derived from what the replay records
anyway (the partition timeline, AR changes, configuration changes, broker periods,
controller tenures), and :meth:`ClusterHistory.at` assembles the image of any instant
from those on demand.

Only this module reads the replay objects' attributes (ZooKeeper-mode and KRaft replays
name them alike); ``replay_engine.result`` builds results from what it returns.
"""
from __future__ import annotations

import dataclasses
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, NamedTuple

from replay_engine.common.config import ConfigImage
from replay_engine.common.facts import TP, Ref
from replay_engine.common.frozen import FrozenMap
from replay_engine.common.judge import tally
from replay_engine.common.partition import BrokerPeriod, Decision, Tenure
from replay_engine.protocol import Replay
from replay_engine.common.timeline import Interval


class PartitionImage(NamedTuple):
    """One partition as the controller knew it. A tuple so that images of 100,000s of partitions
    cost little to build; immutable like the rest of the image."""

    tp: TP
    replicas: tuple[int, ...] | None  # AR in order; None = not known from the trace
    leader: int | None  # -1 = none; None = not known
    isr: tuple[int, ...] | None
    leader_epoch: int | None
    zk_version: int | None
    controller_epoch: int | None
    state: str
    deleting: bool = False
    reassign_target: tuple[int, ...] | None = None
    elr: tuple[int, ...] | None = None  # KRaft (KIP-966): eligible leader replicas
    last_known_elr: tuple[int, ...] | None = None


@dataclass(frozen=True, eq=False)
class ClusterImage:
    partitions: Mapping[TP, PartitionImage]
    live: frozenset[int]  # the brokers the controller counted alive
    known_brokers: frozenset[int]
    controller: int | None
    controller_epoch: int | None
    config: ConfigImage  # the configuration in force; every value resolves with its source
    periods: Mapping[int, tuple[BrokerPeriod, ...]]  # broker -> its up/down periods, in order
    tenures: tuple[Tenure, ...]
    findings: tuple[dict[str, Any], ...]
    unclean_elections: tuple[Decision, ...]
    epoch_gaps: int = 0
    # topic -> its deletions (ZooKeeper mode): the record that began each, and when it ended (None: still under way)
    deletions: Mapping[str, tuple[tuple[Ref, int | None], ...]] = FrozenMap()
    deletion_halts: Mapping[str, tuple[tuple[Ref, str | None], ...]] = FrozenMap()  # topic -> each hold, with why
    elr_enabled: bool = False  # KRaft: eligible.leader.replicas.version >= 1 (KIP-966)

    @property
    def kafka_version(self) -> str | None:
        v = self.config.version
        return ".".join(map(str, v)) if v else None


@dataclass(frozen=True, eq=False)
class ClusterHistory:
    """How the cluster got to its final image; ask :meth:`at` for any instant."""

    final: ClusterImage
    intervals: tuple[Interval, ...]  # the partition timeline, sorted by partition then start
    ar_history: Mapping[TP, tuple[tuple[int, tuple[int, ...]], ...]]  # AR changes, in order
    config_history: tuple[tuple[int, ConfigImage], ...]  # the configuration after each change
    failed_elections: Mapping[TP, tuple[Ref, ...]]

    # ---------------------------------------------------------------- per partition

    @cached_property
    def _by_tp(self) -> dict[TP, tuple[list[int], list[Interval]]]:
        out: dict[TP, tuple[list[int], list[Interval]]] = {}
        for iv in self.intervals:
            starts, ivs = out.setdefault((iv.topic, iv.partition), ([], []))
            starts.append(iv.start)
            ivs.append(iv)
        return out

    def interval_at(self, tp: TP, ts: int) -> Interval | None:
        """The timeline interval of ``tp`` in force at ``ts`` (None before its first or after its last)."""
        got = self._by_tp.get(tp)
        if got is None:
            return None
        starts, ivs = got
        i = bisect_right(starts, ts) - 1
        if i < 0:
            return None
        iv = ivs[i]
        return iv if iv.end is None or ts < iv.end else None

    def ar_at(self, tp: TP, ts: int) -> tuple[int, ...] | None:
        return _value_at(self.ar_history.get(tp, ()), ts)

    def config_at(self, ts: int) -> ConfigImage | None:
        return _value_at(self.config_history, ts)

    def partition_at(self, tp: TP, ts: int) -> PartitionImage | None:
        """The partition as the timeline shows it at ``ts`` (leader, ISR, epochs, state; AR from its changes).
        The timeline shows what the cluster recorded or observed: zkVersion is not part of it."""
        iv = self.interval_at(tp, ts)
        if iv is None:
            return None
        v = iv.view
        return PartitionImage(tp, self.ar_at(tp, ts), v.leader, v.isr, v.leader_epoch, None, v.controller_epoch,
                              v.state)

    # ---------------------------------------------------------------- the whole cluster

    def at(self, ts: int) -> ClusterImage:
        """The cluster image at ``ts``: partitions from the timeline, brokers and controllers from their
        periods and tenures as known by then, the configuration then in force, what was found by then."""
        final = self.final
        parts = {}
        for tp in self._by_tp:
            p = self.partition_at(tp, ts)
            if p is not None:
                parts[tp] = p
        periods = {b: tuple(_cut(p, ts) for p in ps if p.start is not None and p.start <= ts)
                   for b, ps in final.periods.items()}
        periods = {b: ps for b, ps in periods.items() if ps}
        tenures = tuple(_cut(t, ts) for t in final.tenures if t.start <= ts)
        current = next((t for t in reversed(tenures) if t.end is None), None)
        return ClusterImage(
            FrozenMap(parts), frozenset(b for b, ps in periods.items() if ps[-1].state == "up"),
            frozenset(periods), current.controller if current else None, current.epoch if current else None,
            self.config_at(ts) or final.config, FrozenMap(periods), tenures,
            tuple(f for f in final.findings if f.get("ts") is None or f["ts"] <= ts),
            tuple(d for d in final.unclean_elections if d.ts <= ts), elr_enabled=final.elr_enabled)


def _value_at(history, ts: int):
    """The value of a (ts, value) history in force at ``ts`` (the first one before any change)."""
    if not history:
        return None
    i = bisect_right([t for t, _ in history], ts)
    return history[max(i - 1, 0)][1]


def _cut(x, ts: int):
    """A period or tenure as known at ``ts``: one that ends later is still open then."""
    if x.end is not None and x.end > ts:
        return dataclasses.replace(x, end=None, end_ref=None, end_cause=None)
    return x


# -------------------------------------------------------------------- from a finished replay


def image_of(replay: Replay) -> ClusterImage:
    """The final image of a finished ``ZkControllerReplay`` or ``KraftReplay``."""
    elr = replay.elr
    parts = {}
    for tp, p in replay.parts.items():
        e = elr.get(tp)
        parts[tp] = PartitionImage(tp, p.replicas, p.leader, p.isr, p.leader_epoch, p.zk_version, p.controller_epoch,
                                   p.state, p.deleting, p.reassign_target,
                                   e[0] if e else None, e[1] if e else None)
    # periods and tenures are frozen: the image holds the replay's own
    periods = {b: tuple(ps) for b, ps in replay.periods.items()}
    tenures = tuple(replay.tenures)
    return ClusterImage(FrozenMap(parts), frozenset(replay.live), frozenset(replay.known_brokers),
                        replay.controller, replay.controller_epoch,
                        replay.config.image(), FrozenMap(periods), tenures, tuple(replay.findings),
                        tuple(replay.unclean_elections), tally(replay.comparisons)["evidence_gaps"],
                        FrozenMap({t: tuple(s) for t, s in replay.deletions.items()}),
                        FrozenMap({t: tuple(h) for t, h in replay.deletion_halts.items()}),
                        bool(replay.elr_enabled))


def history_of(replay: Replay, final: ClusterImage, intervals: list[Interval]) -> ClusterHistory:
    return ClusterHistory(final, tuple(intervals),
                          FrozenMap({tp: tuple(h) for tp, h in replay.ar_history.items()}),
                          tuple(replay.config_history),
                          FrozenMap({tp: tuple(rs) for tp, rs in replay.failed_elections.items()}))
