"""The controller's knowledge of one partition, and of one decision it made about it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replay_engine.common.facts import TP, Ref
from replay_engine.common.frozen import quick_init

UNKNOWN = "Unknown"


@dataclass
class PState:
    tp: TP
    replicas: tuple[int, ...] | None = None  # AR, in order; None = not known from the trace
    leader: int | None = None  # -1 = none; None = not known
    isr: tuple[int, ...] | None = None
    leader_epoch: int | None = None
    zk_version: int | None = None
    controller_epoch: int | None = None
    state: str = UNKNOWN
    deleting: bool = False
    reassign_target: tuple[int, ...] | None = None
    init_failed: bool = False  # NewPartition whose replicas were all offline
    recorded_zk_version: int | None = None  # as last written by the controller (not as a broker saw it)
    # False: AR's members come from a line that lists them as a set (a broker's before 0.11), so their order, which
    # elections follow, is not known
    replicas_ordered: bool = True

    def snapshot(self) -> dict[str, Any]:
        snap = {
            "leader": self.leader,
            "isr": list(self.isr) if self.isr is not None else None,
            "leader_epoch": self.leader_epoch,
            "zk_version": self.zk_version,
            "controller_epoch": self.controller_epoch,
            "replicas": list(self.replicas) if self.replicas is not None else None,
            "state": self.state,
        }
        if self.replicas is not None and not self.replicas_ordered:
            snap["replicas_ordered"] = False  # said only where it is so: AR's members known, not their order
        return snap

    @property
    def candidates(self) -> tuple[int, ...] | None:
        """The assignment to iterate in elections: AR, or the ISR when AR is unknown (better than nothing)."""
        if self.replicas is not None:
            return self.replicas
        return self.isr


@dataclass
class Decision:
    """One decision of the replayed controller (or of the real one, re-derived point-wise)."""

    seq: int
    ts: int
    tp: TP
    kind: str  # election, election_failed, isr_removal, new_partition, new_partition_failed
    strategy: str | None
    trigger: Ref
    before: dict[str, Any]
    after: dict[str, Any] | None
    unclean: bool = False
    status: str = "pending"  # pending -> agreed | diverged | unrecorded | applied
    record: Ref | None = None
    note: str | None = None
    expected_record: bool = True
    change: Any = field(default=None, repr=False, compare=False)  # what it does to the partition (apply.Change)

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "topic": self.tp[0],
            "partition": self.tp[1],
            "kind": self.kind,
            "strategy": self.strategy,
            "unclean": self.unclean,
            "status": self.status,
            "before": self.before,
            "after": self.after,
            "trigger": self.trigger.to_json(),
            "record": self.record.to_json() if self.record else None,
            "note": self.note,
        }


@quick_init
@dataclass(frozen=True)
class BrokerPeriod:
    """A broker's up or down period: the replay's and the image's alike (a replay that ends or amends one replaces it,
    ``dataclasses.replace``, so an image holds the replay's periods as they were)."""

    broker: int
    start: int | None
    end: int | None = None
    start_ref: Ref | None = None
    end_ref: Ref | None = None
    end_cause: str | None = None
    state: str = "up"  # up, down (periods alternate)
    evidence: tuple[Ref, ...] = ()


@quick_init
@dataclass(frozen=True)
class Tenure:
    """A controller's tenure: the replay's and the image's alike (ended by replacing it, as a period)."""

    controller: int
    epoch: int | None
    start: int
    end: int | None = None
    start_ref: Ref | None = None
    end_ref: Ref | None = None
    end_cause: str | None = None
