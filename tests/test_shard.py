"""A cluster's replay split by partition (as the audit runs it on executors) equals the whole replay.

Independent truth: the whole-cluster replay of the same events, on every bundled sample, every real
ZooKeeper scenario and every real log set (ZooKeeper mode and KRaft), at 1, 2 and 7 shards; from logs
alone the shards read only the records phase 1 kept (``replay_engine.sharding.cluster_pass``; for KRaft the
lines ``replay_engine.kraft.split`` foresaw), and the split must hold (no fallback to a whole replay)
for the equality to say anything.

The default run holds the equality on a few data sets that between them take every path (ZooKeeper data, logs
alone with phase 1's hints, KRaft with and without a metadata log, lines showing a leader active); the rest of the
corpus is the opt-in tier (marker ``corpus``, run by .ci/run).
"""
import dataclasses
import functools
import json
from pathlib import Path

import pytest
from conftest import REAL_LOGS, SAMPLES, ZK_REAL, real_cluster_events, replayed_cluster

from forensics.pipeline import replay_order
from forensics.sources import collect_inputs
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from replay_engine.sharding.cluster_pass import cluster_pass, phase1_events, replayed_pass, streamed_pass
from replay_engine.zk.from_events import cluster_context
from replay_engine.kraft.facts import is_kraft
from replay_engine.kraft.context import kraft_context, phase1_needs
from replay_engine.kraft.split import line_key
from replay_engine.kraft.split import phase1 as kraft_phase1
from replay_engine.sharding.shard import (
    RECORD_EVENT_TYPES,
    ShardsDisagree,
    merge,
    next_round,
    replay_kraft_shard,
    replay_shard,
    replay_shard_after_pass,
    replay_sharded,
    routes,
    topic_stats,
)

DATASETS = ([SAMPLES / s for s in ("rf1_broker_kill", "controller_failover", "unclean_election")]
            + sorted(p for p in ZK_REAL.iterdir() if p.is_dir())
            + sorted(p for p in REAL_LOGS.iterdir() if p.is_dir()))
# In the default run: a sample with ZooKeeper data and an unclean election, a real ZooKeeper capture, ZooKeeper-mode
# logs alone whose records change the controller's live set (phase 1 keeps hints), controlled shutdowns that several
# shards infer at the same instant (Yehor: merge keeps one), KRaft logs alone with a line showing a leader active
# (Ammar: kraft_split's cross-partition case) and KRaft with its metadata log (Niloufar).
EVERY_PATH = {"unclean_election", "s2_controller_failover", "AndreasTraut__kafka_2.13-2.8.0", "YehorYehorychev__Kafka",
              "Ammar777782439__kafka_2.13-4.0.0", "Niloufar1171__LDI-POC"}


def datasets(roots):
    return [pytest.param(p, id=p.name, marks=() if p.name in EVERY_PATH else pytest.mark.corpus) for p in roots]


@functools.cache
def _parsed(root: Path) -> tuple:
    return tuple(_load(root))


def load(root: Path):
    """The events of one dataset, parsed once per session (replays do not change them)."""
    if root.parent == REAL_LOGS:
        return real_cluster_events(root.name)
    return list(_parsed(root))


@functools.cache
def _replayed(root: Path):
    return replay_cluster(load(root), root.name)


def whole_replay(root: Path):
    return replayed_cluster(root.name) if root.parent == REAL_LOGS else _replayed(root)


def _load(root: Path):
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


@pytest.mark.parametrize("buckets", [1, 2, 7])
@pytest.mark.parametrize("root", datasets(DATASETS))
def test_sharded_replay_equals_the_whole(root, buckets):
    events = load(root)
    whole = whole_replay(root)
    merged = replay_sharded(events, root.name, buckets)  # ShardsDisagree (a fallback) fails the test
    assert merged.shards == buckets
    assert rows(merged.intervals) == rows(whole.intervals)
    assert [lp.to_json() for lp in merged.leaderless] == [lp.to_json() for lp in whole.leaderless]
    ag = whole.agreement()
    assert {k: merged.agreement[k] for k in ag} == ag
    assert by_json(merged.findings) == by_json(whole.image.findings)
    assert by_json(merged.data_loss) == by_json(whole.data_loss)
    assert [(t.controller, t.epoch, t.start) for t in merged.tenures] == [
        (t.controller, t.epoch, t.start) for t in whole.image.tenures]
    whole_topics = topic_stats(whole.intervals, whole.history.ar_history, whole.stream.trace_end)
    assert merged.topics == whole_topics  # microseconds summed as integers: the same in any split
    periods = {b: [(p.state, p.start, p.end, p.end_cause) for p in ps] for b, ps in merged.periods.items()}
    assert periods == {b: [(p.state, p.start, p.end, p.end_cause) for p in ps] for b, ps in whole.image.periods.items()}
    assert sorted(merged.write_outages, key=lambda w: json.dumps(w, sort_keys=True)) == sorted(
        (o.to_json() for o in whole.under_min_isr), key=lambda w: json.dumps(w, sort_keys=True))


@pytest.mark.parametrize("buckets", [2, 7])
@pytest.mark.parametrize("root", datasets(DATASETS))
def test_shards_that_run_phase_1_themselves_equal_the_whole(root, buckets):
    # As the executors run it from logs alone: every shard gets every controller record, runs phase 1 over
    # them and the cluster-wide events, and replays of the other partitions' records only those it kept.
    events = load(root)
    ctx = cluster_context(events)
    if is_kraft(events) or ctx.zk:
        pytest.skip("this phase 1 runs only for ZooKeeper-mode clusters split from logs alone (KRaft's: below)")
    per = [[] for _ in range(buckets)]
    for ev in sorted(events, key=replay_order):
        for b in routes(ev, buckets, hints=True):
            per[b].append(ev)
    outs = [replay_shard_after_pass(per[b], root.name, b, buckets, ctx) for b in range(buckets)]
    merged = merge(outs)  # each shard's journal against the phase 1 it ran; ShardsDisagree fails the test
    whole = whole_replay(root)
    assert len({o.phase1_journal for o in outs}) == 1
    assert outs[0].phase1_journal == cluster_pass(phase1_events(events), ctx).journal
    assert rows(merged.intervals) == rows(whole.intervals)
    assert [lp.to_json() for lp in merged.leaderless] == [lp.to_json() for lp in whole.leaderless]
    ag = whole.agreement()
    assert {k: merged.agreement[k] for k in ag} == ag
    assert by_json(merged.findings) == by_json(whole.image.findings)
    assert merged.topics == topic_stats(whole.intervals, whole.history.ar_history, whole.stream.trace_end)


@pytest.mark.parametrize("root", datasets(DATASETS))
def test_phase_1_streamed_is_the_pass_replayed_and_skips_only_what_changes_nothing(root):
    # Phase 1 streams the records and builds the facts only of those that may change something
    # (``streamed_pass``); the plain pass builds and replays every record. (1) Same journal, kept hints and
    # counts, over the whole cluster and over a shard's input as the executors order it. (2) ``inert`` foresees
    # ``infer_from_record`` from the event alone; held to it record by record in the plain pass, every record it
    # calls inert leaves the controller, its epoch and live set unchanged and is not one whose effect depends on
    # shutdowns a shard may know of.
    from replay_engine.common import facts as F
    from replay_engine.api import zk_replay_of
    from replay_engine.sharding.cluster_pass import _cluster_view, depends_on_shutdowns, inert
    from replay_engine.zk.from_events import record_kind
    from replay_engine.sharding.cut import shard_facts

    events = load(root)
    ctx = cluster_context(events)
    if is_kraft(events) or ctx.zk:
        pytest.skip("phase 1 of records runs only for ZooKeeper-mode clusters from logs alone")
    for evs in (phase1_events(events), phase1_events(sorted(events, key=replay_order))):
        streamed = streamed_pass(evs, ctx)
        assert streamed is not None  # none of these has a record on a cluster-wide fact's line
        assert streamed == replayed_pass(evs, ctx)

    evs = phase1_events(events)
    records = [e for e in evs if e.event_type in RECORD_EVENT_TYPES and record_kind(e) is not None]
    by_line = {}
    for e in records:
        by_line.setdefault((e.source_file, e.source_pos, e.event_type), e)
    ctrl, stream = zk_replay_of(evs, ctx)
    seen = []

    def hint(f):
        ev = by_line[(f.ref.source_file, f.ref.source_pos, f.ref.event)]
        foreseen = ctrl.failover_waiting is None and inert(ctrl, ev, record_kind(ev))
        before, fragile = _cluster_view(ctrl), depends_on_shutdowns(ctrl, f.record)
        ctrl.record_handlers.infer_from_record(f.record)
        if foreseen:
            assert not fragile and _cluster_view(ctrl) == before, f.ref.cite()
        seen.append(foreseen)

    ctrl.router.replace(F.RecordHint, hint)
    ctrl.run(shard_facts(stream.facts, lambda _tp: False), stream.trace_end)
    assert len(seen) == len(records)


def test_a_record_on_a_cluster_wide_line_sends_phase_1_the_plain_way():
    # Where a record and a cluster-wide fact share a line, ``build_facts`` orders their facts as the events came;
    # the streamed pass cannot place the record by its line alone, declines, and the plain pass is the result.
    root = REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0"
    events = [dataclasses.replace(e) for e in load(root)]
    ctx = cluster_context(events)
    wide = next(e for e in events if e.event_type == "broker_registered" and e.topic is None)
    record = next(e for e in events if e.event_type in RECORD_EVENT_TYPES and e.topic is not None)
    record.ts, record.broker_id, record.source_file, record.source_pos = (wide.ts, wide.broker_id, wide.source_file,
                                                                          wide.source_pos)
    evs = phase1_events(events)
    assert streamed_pass(evs, ctx) is None
    assert cluster_pass(evs, ctx) == replayed_pass(evs, ctx)


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


def test_phase1_keeps_few_records_and_without_them_the_shards_disagree():
    # Phase 1 ships only the records that could change who the controller is or whom it holds alive.
    # Leaving out even those makes the shards' cluster-wide histories differ, and merging refuses:
    # the journals are what makes a wrong reduction visible.
    root = REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0"
    events = load(root)
    ctx = cluster_context(events)
    cp = cluster_pass(phase1_events(events), ctx)
    records = sum(1 for e in events if e.event_type in RECORD_EVENT_TYPES)
    assert cp.records == records
    assert 0 < len(cp.hints) < records / 10
    per = [[], [], []]
    for ev in events:
        for b in routes(ev, 3, dataclasses.replace(cp, hints=frozenset())):
            per[b].append(ev)
    with pytest.raises(ShardsDisagree):
        merge([replay_shard(per[b], root.name, b, 3, ctx) for b in range(3)], cp.journal)


def _kraft_log_sets() -> list[Path]:
    """The log sets MANIFEST.tsv says are KRaft mode."""
    import csv

    manifest = REAL_LOGS / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    with open(manifest, newline="", encoding="utf-8") as fh:
        return [REAL_LOGS / d for d in sorted({r["dir"] for r in csv.DictReader(fh, delimiter="\t") if r["mode"] == "kraft"})]


KRAFT = _kraft_log_sets()


@pytest.mark.corpus
def test_the_kraft_clusters_of_the_corpus_are_split():
    # the equality tests above mean something for KRaft only if there are KRaft clusters (as the manifest says,
    # and as the replay finds), with and without a metadata log, and some whose lines alone show a leader active
    # (the cross-partition case of a KRaft split)
    assert len(KRAFT) >= 3 and all(is_kraft(load(p)) for p in KRAFT)
    assert any(any(e.source_kind == "kraft_metadata" for e in load(p)) for p in KRAFT)
    assert any(whole_replay(p).inferred for p in KRAFT)


@pytest.mark.parametrize("root", datasets(KRAFT))
def test_kraft_phase_1_needs_only_what_it_is_sent(root):
    # The audit sends phase 1's task only the events ``phase1_needs`` (cluster-wide ones, the metadata log, the
    # "Replayed" lines, the leaders' lines), with the whole cluster's context: it must settle the same as over
    # every event of the cluster (start-up bursts, rolled-back records, where the records begin, the lines).
    events = load(root)
    ctx = kraft_context(events)
    sent = [e for e in sorted(events, key=replay_order) if phase1_needs(e)]
    assert kraft_phase1(sent, ctx) == kraft_phase1(events, ctx)


def test_a_kraft_shard_given_the_wrong_lines_is_refused():
    # The lines the shards apply as showing a leader active must be the ones their own shards find: one left out
    # (or one too many) changes the brokers' liveness in the other shards, and merging refuses, naming the lines
    # the shards found instead (right up to the first wrong one: kraft_split).
    root = next(p for p in KRAFT if whole_replay(p).inferred)
    events = load(root)
    ctx = kraft_context(events)
    right = frozenset(whole_replay(root).inferred)
    # a leader's line that shows nothing in the whole replay (its leader was acceptable already, or the
    # partition had gone past its epoch)
    quiet = next(k for e in events if e.event_type == "become_leader" and (k := line_key(e)) not in right)
    for wrong in (right - {sorted(right)[0]}, right | {quiet}):
        kp = next_round(kraft_phase1(events, ctx), wrong)
        per = [[] for _ in range(2)]
        for ev in events:
            for b in routes(ev, 2, kp):
                per[b].append(ev)
        with pytest.raises(ShardsDisagree) as exc:
            merge([replay_kraft_shard(per[b], root.name, b, 2, ctx, kp) for b in range(2)])
        assert exc.value.found is not None and exc.value.found != wrong


def test_a_kraft_shard_without_phase_1_is_refused():
    root = KRAFT[0]
    with pytest.raises(ValueError, match="phase 1"):
        replay_cluster(load(root), root.name, keep_tp=lambda tp: True)
