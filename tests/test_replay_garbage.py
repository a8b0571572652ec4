"""A finished replay leaves nothing for Python's cyclic collector: its state (events' facts, partition
states, timeline, comparisons; ~620,000 objects in a shard of the 2 GB bench) is freed by reference
counting as soon as it is dropped, not by a full pass of the collector over all of it (0.4 s a shard).

Truth: ``gc.collect()``'s own count of the unreachable objects it found, with the collector held off
during the replay as every caller holds it off.
"""
import gc

import pytest
from conftest import REAL_LOGS, SAMPLES
from test_shard import load

from forensics.pipeline import replay_order
from replay_engine.api import replay_cluster
from replay_engine.sharding.cluster_pass import cluster_pass, phase1_events
from replay_engine.zk.from_events import cluster_context
from replay_engine.kraft.facts import is_kraft
from replay_engine.sharding.shard import replay_shard_after_pass, routes

ROOTS = [REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0", SAMPLES / "rf1_broker_kill", SAMPLES / "kraft_broker_fenced"]


def _cycles_left(run) -> int:
    gc.collect()
    gc.disable()
    try:
        run()
        return gc.collect()
    finally:
        gc.enable()


@pytest.mark.parametrize("root", ROOTS, ids=lambda p: p.name)
def test_the_whole_replay_is_freed_by_reference_counting(root):
    events = sorted(load(root), key=replay_order)
    assert events
    assert _cycles_left(lambda: replay_cluster(events, root.name)) == 0


def test_phase_1_and_a_shard_are_freed_by_reference_counting():
    root = ROOTS[0]
    events = load(root)
    ctx = cluster_context(events)
    assert not is_kraft(events) and not ctx.zk  # logs alone: the shard runs phase 1 itself
    shard = [e for e in sorted(events, key=replay_order) if 0 in routes(e, 2, hints=True)]
    assert _cycles_left(lambda: cluster_pass(phase1_events(events), ctx)) == 0
    assert _cycles_left(lambda: replay_shard_after_pass(shard, root.name, 0, 2, ctx)) == 0
