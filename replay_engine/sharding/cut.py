"""A shard's facts: every cluster-wide fact, and of the partition facts only its own.

Facts that name many partitions (a topic's assignment, a replica-offline list, a preferred
election or reassignment request) are cut down to the shard's partitions; a controller record
of another shard's partition stays as a hint that touches only cluster-wide state (see
``replay_engine.sharding.shard`` for why that split is exact). Below both the replay (``api``) and the
sharding around it (``shard``), so neither imports the other to use it.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

from replay_engine.common import facts as F

TP = tuple[str, int]


def _cut(mapping: dict, topic: str, keep: Callable[[TP], bool]) -> dict:
    return {p: v for p, v in mapping.items() if keep((topic, p))}


def shard_facts(facts: Iterable[F.Fact], keep: Callable[[TP], bool]) -> list[F.Fact]:
    out: list[F.Fact] = []
    for f in facts:
        tp = getattr(f, "tp", None)
        if tp is not None:
            if keep(tp):
                out.append(f)
            elif isinstance(f, (F.RecordedState, F.RecordedFailedElection)):
                out.append(F.RecordHint(f.ts, f.ref, f.order, record=f))
            continue
        if isinstance(f, F.TopicAssignment):
            assignment = _cut(f.assignment, f.topic, keep)
            if assignment or not f.assignment:
                out.append(dataclasses.replace(f, assignment=assignment, adding=_cut(f.adding, f.topic, keep),
                                               removing=_cut(f.removing, f.topic, keep)))
        elif isinstance(f, (F.ReplicasOffline, F.ReplicasOnline)):
            tps = tuple(t for t in f.tps if keep(t))
            if tps or not f.tps:
                out.append(dataclasses.replace(f, tps=tps))
        elif isinstance(f, F.PreferredElectionRequest) and f.tps is not None:
            tps = tuple(t for t in f.tps if keep(t))
            if tps or not f.tps:
                out.append(dataclasses.replace(f, tps=tps))
        elif isinstance(f, F.ReassignmentRequest):
            targets = {t: v for t, v in f.targets.items() if keep(t)}
            if targets or not f.targets:
                out.append(dataclasses.replace(f, targets=targets))
        else:
            out.append(f)
    return out
