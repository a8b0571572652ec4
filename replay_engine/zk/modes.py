"""The three ways the ZooKeeper-mode replay runs, as small strategy objects instead of flags.

- :class:`ZkRecordsMode`: ZooKeeper's transaction log is in the evidence. The replay decides at every
  trigger; the controller's own writes are judged against those decisions and then followed.
- :class:`LogsOnlyMode`: broker logs only. A new controller's view (live brokers, partition states) is
  logged a few lines after its election, so decisions taken at trigger time would rest on stale
  knowledge: where the controller's state-change log covers the time, its records are judged at the
  point they were made and the replay decides only where nothing was recorded. Records also tell what
  the logs left out (which controller acted, who it believed alive), and a record may come after hours
  the evidence does not cover.
- :class:`CounterfactualMode` (what-if): the cluster's records and observations only seed partitions the
  replay knows nothing about; every later decision is the replay's, applied when taken, and the
  controller's timers (auto leader rebalance) fire. ``rewrite`` replaces the assignment of partitions (a
  what-if topology).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from replay_engine.common import facts as F
from replay_engine.zk.from_events import Coverage


@dataclass(frozen=True)
class ZkRecordsMode:
    name = "zk_records"
    follows_records = True  # records and observations set the state; decisions are judged against them
    fires_timers = False  # the record says when the real timers fired
    defers_to_records = False  # decide at every trigger
    infers_from_records = False  # ZooKeeper holds the inputs
    evidence_gaps = False  # ZooKeeper's log has no hours missing inside its window

    def coverage(self, given: Coverage | None) -> Coverage:
        return given if given is not None else Coverage()

    def assignment(self, tp: F.TP, ar: tuple[int, ...]) -> tuple[int, ...]:
        return ar


@dataclass(frozen=True)
class LogsOnlyMode(ZkRecordsMode):
    name = "logs_only"
    defers_to_records = True  # where the state-change log covers, the record says what was decided
    infers_from_records = True
    evidence_gaps = True


@dataclass(frozen=True)
class CounterfactualMode(ZkRecordsMode):
    rewrite: dict[F.TP, tuple[int, ...]] = field(default_factory=dict)
    name = "counterfactual"
    follows_records = False
    fires_timers = True

    def coverage(self, given: Coverage | None) -> Coverage:
        return Coverage()  # nothing is "recorded": every decision is applied when taken

    def assignment(self, tp: F.TP, ar: tuple[int, ...]) -> tuple[int, ...]:
        return self.rewrite.get(tp, ar)


def mode_for(coverage: Coverage | None) -> ZkRecordsMode:
    """Following the records: with ZooKeeper's log when the evidence holds it, else from the logs."""
    return ZkRecordsMode() if coverage is not None and coverage.zk else LogsOnlyMode()
