"""A cluster's replay split by partition (as the audit runs it on executors) equals the whole replay.

Independent truth: the whole-cluster replay of the same events, on every bundled sample, every real
ZooKeeper scenario and every real ZooKeeper-mode log set, with several shard counts.
"""
import json
from pathlib import Path

import pytest

from conftest import REAL_LOGS, SAMPLES, ZK_REAL
from forensics.sources import collect_inputs
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from replay_engine.from_events import cluster_context
from replay_engine.kraft_facts import is_kraft
from replay_engine.shard import ShardsDisagree, merge, replay_shard, replay_sharded, routes, topic_stats

DATASETS = ([SAMPLES / s for s in ("rf1_broker_kill", "controller_failover", "unclean_election")]
            + sorted(p for p in ZK_REAL.iterdir() if p.is_dir())
            + sorted(p for p in REAL_LOGS.iterdir() if p.is_dir()))


def load(root: Path):
    inputs = collect_inputs([str(root)], Path("/nonexistent-extract-dir"))
    events = []
    for f in inputs.files:
        with open(f.read_path, "rb") as fh:
            evs, _ = parse_source(fh.read(), SourceContext(f.display, cluster=root.name, broker_hint=f.broker_hint))
        events += [e for e in evs if e.event_type != "zk_txn"]
    return events


def rows(intervals):
    return [json.dumps(iv.to_row(), sort_keys=True, default=str) for iv in intervals]


def by_json(items):
    return sorted(json.dumps(x, sort_keys=True, default=str) for x in items)


@pytest.mark.parametrize("root", DATASETS, ids=lambda p: p.name)
def test_sharded_replay_equals_the_whole(root):
    events = load(root)
    if is_kraft(events):
        with pytest.raises(ValueError):  # a metadata log is one ordered stream: replayed whole
            replay_sharded(events, root.name, 2)
        return
    whole = replay_cluster(events, root.name)
    buckets = 2 + DATASETS.index(root) % 6  # 2..7 shards across the datasets
    merged = replay_sharded(events, root.name, buckets)
    assert rows(merged.intervals) == rows(whole.intervals)
    assert [lp.to_json() for lp in merged.leaderless] == [lp.to_json() for lp in whole.leaderless]
    ag = whole.agreement()
    assert {k: merged.agreement[k] for k in ag} == ag
    assert by_json(merged.findings) == by_json(whole.image.findings)
    assert by_json(merged.data_loss) == by_json(whole.data_loss)
    assert [(t.controller, t.epoch, t.start) for t in merged.tenures] == [
        (t.controller, t.epoch, t.start) for t in whole.image.tenures]
    whole_topics = topic_stats(whole.intervals, whole.history.ar_history, whole.stream.trace_end)
    assert set(merged.topics) == set(whole_topics)
    for t, st in whole_topics.items():
        assert merged.topics[t] == pytest.approx(st), t
    periods = {b: [(p.state, p.start, p.end, p.end_cause) for p in ps] for b, ps in merged.periods.items()}
    assert periods == {b: [(p.state, p.start, p.end, p.end_cause) for p in ps] for b, ps in whole.image.periods.items()}


def test_shards_without_each_others_records_disagree_and_say_so():
    # From logs alone, which brokers the controller believed alive comes from its records of every partition;
    # shards that do not read each other's records go through different cluster states, and merging refuses.
    root = REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0"
    events = load(root)
    ctx = cluster_context(events)
    assert not ctx.zk
    per = [[], [], []]
    for ev in events:
        for b in routes(ev, 3, hints=False):
            per[b].append(ev)
    with pytest.raises(ShardsDisagree):
        merge([replay_shard(per[b], root.name, b, 3, ctx) for b in range(3)])
