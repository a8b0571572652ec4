"""A replay's result, and the one function that assembles it from a finished replay.

Every replay (ZooKeeper mode, KRaft, the two sides of a what-if) ends the same way:
close the timeline, freeze the cluster image and its history, explain each leaderless
episode from them. :func:`assemble` is that ending; the result keeps the image and the
history, not the replay object.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from parsers.schema import Event, iso_utc
from replay_engine import rules as R
from replay_engine.common import facts as F
from replay_engine.estimates.dataloss import estimates as estimate_losses
from replay_engine.causes.explain import Cause, World, explain
from replay_engine.zk.from_events import FactStream
from replay_engine.image import ClusterHistory, ClusterImage, history_of, image_of
from replay_engine.common.judge import DIVERGED, Comparison, tally, unknown_reasons
from replay_engine.common.partition import Decision
from replay_engine.protocol import Replay
from replay_engine.causes.restarts import annotate as annotate_restarts, failed_starts, generated_ids, with_unserved
from replay_engine.estimates.skew import SkewEstimate, estimate_skew
from replay_engine.common.timeline import Episode, Interval, leaderless_episodes
from replay_engine.causes.write_outages import UnderMinIsr, compute as compute_write_outages


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


@dataclass(frozen=True)
class ReplayResult:
    """Read-only: a consumer that needs another figure computes it (what-if's sides were once patched)."""

    cluster: str | None
    mode: str
    stream: FactStream
    intervals: list[Interval]
    leaderless: list[Leaderless]
    decisions: list[Decision]
    comparisons: list[Comparison]  # every record judged: agreed, diverged or unknown (with the reason)
    image: ClusterImage  # the cluster at the end of the replay
    history: ClusterHistory  # how it got there: ``history.at(ts)`` is the image at ts
    notes: list[str] = field(default_factory=list)
    skew: list[SkewEstimate] = field(default_factory=list)
    data_loss: list[dict[str, Any]] = field(default_factory=list)
    # Episodes without a serving leader (leaderless, or led by a killed broker ZooKeeper still lists):
    # counted by what-if's counterfactual sides only.
    unavailable: list[Episode] = field(default_factory=list)
    journal: tuple | None = None  # shard mode: the cluster-wide states the replay went through
    broker_versions: dict[int, str] = field(default_factory=dict)  # each broker's own logged 'Kafka version:'
    restarts: dict[str, Any] = field(default_factory=dict)  # failed starts and generated broker ids
    under_min_isr: list[UnderMinIsr] = field(default_factory=list)  # write outages with a live leader
    # KRaft shard mode: lines of its own partitions that showed a leader active (replay_engine.kraft.split)
    inferred: tuple = ()

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
            "uncompared_reasons": self.unknown_reasons(),
            "divergences": self.divergences(),
        }

    def unknown_reasons(self) -> dict[str, int]:
        """Why records were left unjudged (the 'uncompared' of agreement(), evidence gaps included), by reason."""
        return unknown_reasons(self.comparisons)

    # ---------------------------------------------------------------- json

    def to_json(self) -> dict[str, Any]:
        img = self.image
        brokers = []
        for b in sorted(img.periods):
            brokers.append({"broker": b, "periods": [
                {"state": p.state, "start": iso_utc(p.start), "end": iso_utc(p.end), "end_cause": p.end_cause,
                 "start_event": p.start_ref.to_json() if p.start_ref else None} for p in img.periods[b]]})
        controllers = [{"controller": t.controller, "epoch": t.epoch, "start": iso_utc(t.start), "end": iso_utc(t.end),
                        "end_cause": t.end_cause, "start_event": t.start_ref.to_json() if t.start_ref else None,
                        "end_event": t.end_ref.to_json() if t.end_ref else None} for t in img.tenures]
        unclean = self.data_loss or [d.to_json() for d in img.unclean_elections]
        return {
            "cluster": self.cluster,
            "mode": self.mode,
            "window": {"start": iso_utc(self.stream.trace_start), "end": iso_utc(self.stream.trace_end)},
            "kafka_version": img.kafka_version,
            "kafka_version_source": img.config.version_source,
            "broker_versions": {str(b): v for b, v in sorted(self.broker_versions.items())},
            **R.describe("kraft" if self.mode == "kraft" else "zk", img.config.version),  # rule_set, rules in force
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
            "findings": list(img.findings) + [{"kind": "clock_skew", "text": s.text()}
                                              for s in self.skew if s.significant],
            "notes": self.notes,
        }

    def timeline_rows(self) -> list[dict[str, Any]]:
        rows = []
        for iv in self.intervals:
            row = iv.to_row()
            row["cluster"] = self.cluster
            rows.append(row)
        return rows


def world_of(image: ClusterImage, history: ClusterHistory, trace_end: int | None,
             recorded: Callable[[int, int | None, str], bool] | None, mode: str | None = None,
             facts: Sequence[F.Fact] = ()) -> World:
    """What the explainer may consult, from the image, its history and the stream's facts (the controllers' stated
    views of live brokers)."""
    views = tuple((f.ts, f.controller, f.brokers, f.ref) for f in facts if isinstance(f, F.LiveSet))
    # the replicas a controller marked offline on a failed log directory, and those it brought back online
    dirs = tuple((f.ts, f.broker, frozenset(f.tps), isinstance(f, F.ReplicasOffline), f.ref) for f in facts
                 if isinstance(f, F.ReplicasOnline) or isinstance(f, F.ReplicasOffline) and f.cause == "log_dir")
    return World(image.periods, image.tenures, history.ar_history, history.config_history, history.failed_elections,
                 trace_end, recorded, image.unclean_elections, mode, image.deletions, image.deletion_halts, views, dirs)


def assemble(replay: Replay, stream: FactStream, *, cluster: str | None, mode: str,
             recorded: Callable[[int, int | None, str], bool] | None, events: list[Event] | None = None,
             keep_tp: Callable[[tuple[str, int]], bool] | None = None, notes: list[str] | None = None,
             unavailable: bool = False, broker_versions: dict[int, str] | None = None) -> ReplayResult:
    """The result of a finished replay (``ZkControllerReplay`` or ``KraftReplay``, after ``run``).

    ``recorded`` tells the explainer whether a decision would have left a record (None: nothing is
    recorded, as in a counterfactual side). With ``events``, clock skew and the data an unclean election
    lost are estimated from them. ``keep_tp`` keeps a shard's own partitions of the timeline.
    ``unavailable`` also lists the episodes without a serving leader (what-if's sides)."""
    intervals = replay.timeline.finish()
    if keep_tp is not None:
        intervals = [iv for iv in intervals if keep_tp((iv.topic, iv.partition))]
    image = image_of(replay)
    history = history_of(replay, image, intervals)
    world = world_of(image, history, stream.trace_end, recorded, mode, stream.facts)
    leaderless = [Leaderless(ep, explain(ep, world)) for ep in leaderless_episodes(intervals)]
    restarts, under = {}, []
    if events is not None:  # the evidence's own failed starts and write outages (not a counterfactual side's)
        restarts = _restarts(events, leaderless, history.ar_history, intervals)
        under = compute_write_outages(intervals, world, image.config, events)
    return ReplayResult(
        cluster, mode, stream, intervals, leaderless, replay.decisions, replay.comparisons,
        image, history, list(notes or []),
        estimate_skew(events) if events is not None else [],
        estimate_losses(list(image.unclean_elections), events) if events is not None else [],
        leaderless_episodes(intervals, unavailable=True) if unavailable else [],
        tuple(replay.journal) if replay.journal is not None else None,
        dict(broker_versions or {}), restarts, under, tuple(replay.inferred))


def _restarts(events: list[Event], leaderless: list[Leaderless], ar_history, intervals: list[Interval]) -> dict[str, Any]:
    """Failed start-ups, told in the outages they prolonged; fatal stops, with the partitions they left without a
    serving leader; brokers that came back under a generated id."""
    fails = with_unserved(failed_starts(events), intervals)
    annotate_restarts(leaderless, fails)
    return {"failed_starts": [f.to_json() for f in fails], "generated_ids": generated_ids(events, ar_history)}
