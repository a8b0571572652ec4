"""What a finished replay offers its readers: the one shape the ZooKeeper-mode and the KRaft replay both have.

``image.image_of`` freezes a finished replay into the cluster image, ``image.history_of`` into its history, and
``result.assemble`` ends every replay the same way (both modes, the two sides of a what-if): they read these names
and nothing else, with no ``getattr`` guessing which replay it is. ``ZkControllerReplay`` (``controller``) and
``KraftReplay`` (``kraft``) meet it; ``tests/test_protocol.py`` holds them to it. A name one mode does not keep is
still there, empty (ZooKeeper mode has no ELR, KIP-966; KRaft no topic-deletion queue, and its controller is the
quorum's, in its tenures).
"""
from __future__ import annotations

from typing import AbstractSet, Any, Mapping, Protocol, Sequence, runtime_checkable

from replay_engine.common.brokers import StateLog
from replay_engine.common.config import ConfigImage, ConfigState
from replay_engine.common.facts import TP, Ref
from replay_engine.common.judge import Comparison
from replay_engine.common.partition import BrokerPeriod, Decision, PState, Tenure
from replay_engine.common.timeline import TimelineBuilder


@runtime_checkable
class Replay(Protocol):
    # partitions, as the replay's store holds them (written only by replay_engine.common.apply)
    parts: Mapping[TP, PState]
    ar_history: Mapping[TP, Sequence[tuple[int, tuple[int, ...]]]]  # AR changes, in order
    failed_elections: Mapping[TP, Sequence[Ref]]
    # brokers (written only by replay_engine.common.brokers: BrokerStates, KRaft's KraftBrokerStates)
    brokers: StateLog  # every broker's state over time, each change with its provenance; what every decision reads
    live: AbstractSet[int]  # the brokers the controller counted alive at the end
    known_brokers: AbstractSet[int]
    periods: Mapping[int, Sequence[BrokerPeriod]]
    # the controller
    controller: int | None  # ZooKeeper mode's acting controller at the end (KRaft: None; its leaders are tenures)
    controller_epoch: int | None
    tenures: Sequence[Tenure]
    # KRaft's eligible leader replicas (KIP-966): partition -> (ELR, last known ELR); ZooKeeper mode: none
    elr: Mapping[TP, tuple[tuple[int, ...], tuple[int, ...]]]
    elr_enabled: bool
    # ZooKeeper mode's topic deletions (KRaft: none): topic -> (the record that began one, when it ended)
    deletions: Mapping[str, Sequence[tuple[Ref, int | None]]]
    deletion_halts: Mapping[str, Sequence[tuple[Ref, str | None]]]
    config: ConfigState
    config_history: Sequence[tuple[int, ConfigImage]]
    # what the replay decided, judged and found
    decisions: Sequence[Decision]
    comparisons: Sequence[Comparison]
    unclean_elections: Sequence[Decision]
    findings: Sequence[dict[str, Any]]
    timeline: TimelineBuilder
    journal: list[tuple] | None  # shard mode: the cluster-wide states it went through
    inferred: Sequence[tuple]  # KRaft shard mode: lines of its own partitions that showed a leader active
