"""The replay kept between batches (``replay_engine.live``), fed a real incident's events in slices of time as
``watch`` feeds it, ends with the answer the whole replay gives on the same events (``replay_cluster``): the
same leaderless intervals, the same causes, the same verdicts. No Spark: the stream's tests are
``test_live_stream.py``."""
from __future__ import annotations

import pickle

import pytest

from conftest import sample_events
from replay_engine.api import replay_cluster
from replay_engine.live import LiveReplay, LiveSettings


def _order(e):
    return (e.ts or 0, e.source_file or "", e.source_pos or 0, e.source_sub)


def _answer(res) -> list[tuple]:
    return [(lp.episode.topic, lp.episode.partition, lp.episode.start, lp.episode.end, lp.cause.kind,
             lp.cause.summary) for lp in res.leaderless]


def _verdicts(res) -> dict:
    a = res.agreement()
    return {k: a[k] for k in ("compared", "agreed", "uncompared", "evidence_gaps")}


def _slices(events, step_us):
    """The events as ``watch`` hands them over: every slice of ``step_us`` of the cluster's time at once."""
    timed = sorted((e for e in events if e.ts is not None), key=_order)
    yield [e for e in events if e.ts is None]
    i = 0
    t = timed[0].ts
    while i < len(timed):
        t += step_us
        j = i
        while j < len(timed) and timed[j].ts < t:
            j += 1
        if j > i:
            yield timed[i:j]
        i = j


def _events(name):
    return sorted((e for e in sample_events(name) if e.event_type != "zk_txn"), key=_order)


@pytest.mark.parametrize("name", ["unclean_election", "restart_refused", "kraft_broker_fenced"])
def test_kept_replay_ends_with_the_whole_replays_answer(name):
    """ZooKeeper mode with ZooKeeper's log (unclean_election, restart_refused) and KRaft with a metadata log:
    settled a slice at a time, a picture after every slice, the last picture is the whole replay's answer."""
    events = _events(name)
    whole = replay_cluster(events, name)
    live = LiveReplay(name)
    for k, part in enumerate(_slices(events, 20_000_000)):
        live.add(part)
        if part:
            live.settle(part[-1].ts)
            if k % 3 == 0:
                live.picture()
    assert live.settled is not None  # it did settle on the way: not one replay at the end
    last = live.picture()
    assert _answer(last) == _answer(whole)
    assert _verdicts(last) == _verdicts(whole)
    assert len(last.intervals) == len(whole.intervals)


@pytest.mark.parametrize("name", ["unclean_election", "kraft_broker_fenced"])
def test_outage_longer_than_keep_is_told_from_the_line_it_began_with(name):
    """A --keep shorter than the outage: the kept replay forgets what ended before its cutoff while the outage is
    still being told; it keeps the lines the outage began with, so it is dated and explained as the whole replay
    does it, not from a later interval of it (forgetting from the cutoff alone: ledger-0 from 14:41:25.051 with
    'lost its registration' instead of broker 1's session expiry at 14:41:25.000; payments-1's broker 'went down'
    instead of 'was fenced by the controller'). Freezing and forgetting happen on the way (``forgotten``)."""
    events = _events(name)
    whole = replay_cluster(events, name)
    live = LiveReplay(name, LiveSettings(keep_us=10 * 60_000_000))
    for part in _slices(events, 30_000_000):
        live.add(part)
        if part:
            live.settle(part[-1].ts)
            live.picture()
    assert live.forgotten is not None
    assert _answer(live.picture()) == _answer(whole)


@pytest.mark.parametrize("folder,name", [("zk_real", "s5_churn"), ("real_logs", "Saurabh7064__kafka"),
                                         ("real_logs", "Aminoid__basic-sentiment-analysis")])
def test_kept_replay_of_a_real_cluster_ends_with_the_whole_replays_answer(folder, name):
    """A real ZooKeeper's transaction logs and snapshots of a churning cluster (s5_churn: kills, restarts,
    deletions, reassignments), and real clusters' broker logs alone (Kafka 2.4.1; Kafka 0.10.0.0, whose 6- and
    8-hour outages are explained by the controller's statement of the brokers it held live when they began,
    controller.log.2017-01-20-02.gz:22, long before the tail a picture re-reads): the same answer."""
    from conftest import SHARED
    from forensics.sources import parse_folder_in_process

    events = sorted((e for e in parse_folder_in_process(SHARED / folder, name) if e.event_type != "zk_txn"),
                    key=_order)
    whole = replay_cluster(events, name)
    live = LiveReplay(name, LiveSettings(keep_us=10**15))
    for k, part in enumerate(_slices(events, 300_000_000)):
        live.add(part)
        if part:
            live.settle(part[-1].ts)
            if k % 5 == 0:
                live.picture()
    last = live.picture()
    assert whole.leaderless and _answer(last) == _answer(whole)
    assert _verdicts(last) == _verdicts(whole)


def test_pickled_half_way_goes_on_to_the_same_answer():
    """What ``watch`` keeps across a restart: the kept replay pickled mid-way goes on as if never stopped."""
    name = "unclean_election"
    events = _events(name)
    parts = list(_slices(events, 10_000_000))
    live = LiveReplay(name)
    for k, part in enumerate(parts):
        if k == len(parts) // 2:
            live = pickle.loads(pickle.dumps(live))
        live.add(part)
        if part:
            live.settle(part[-1].ts)
    assert _answer(live.picture()) == _answer(replay_cluster(events, name))


def test_events_after_their_time_was_settled_are_said_and_stepped():
    """A broker whose lines arrive after the others' time was settled (a folder that appears late, a clock behind):
    its events are returned as late, and stepped all the same (its state-change records are judged)."""
    name = "unclean_election"
    events = _events(name)
    late_file = "kafka-broker-3/state-change.log"
    held = [e for e in events if e.source_file == late_file]
    assert held, "the sample's broker 3 writes a state-change log"
    live = LiveReplay(name, LiveSettings(settle_lag_us=1_000_000))
    for part in _slices([e for e in events if e.source_file != late_file], 10_000_000):
        live.add(part)
        if part:
            live.settle(part[-1].ts)
    late = live.add(held)
    assert late and {id(e) for e in late} <= {id(e) for e in held}
    live.settle(max(e.ts for e in events))
    judged = {c.record.source_file for c in live.picture().comparisons}
    assert late_file in judged


def test_txn_logs_read_as_they_grow_give_the_whole_replays_answer():
    """ZooKeeper's logs read as ZooKeeper writes them (each read restates the file's span of zxids): the kept replay
    takes the latest statement of each file's span, and ends as the replay of the whole files (s5_churn: 20 logs,
    20 snapshots)."""
    import random

    from conftest import ZK_REAL
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source
    from parsers.zookeeper.growing import GrowingTxnLog

    root = ZK_REAL / "s5_churn"
    events = []
    for p in sorted((root / "version-2").iterdir()):
        ctx = SourceContext(f"s5_churn/version-2/{p.name}", "s5_churn")
        data = p.read_bytes()
        if not p.name.startswith("log."):
            events += parse_source(data, ctx)[0]
            continue
        g, end, i, rnd = GrowingTxnLog(ctx), len(data.rstrip(b"\0")), 0, random.Random(p.name)
        while i < end:
            j = min(end, i + rnd.randint(200, 3000))
            events += g.feed(data[i:j])[0]
            i = j
    events = sorted((e for e in events if e.event_type != "zk_txn"), key=_order)
    whole_files = [e for e in events if e.event_type != "zk_txnlog_span"]
    spans = {}
    for e in events:
        if e.event_type == "zk_txnlog_span":
            spans[e.source_file] = e  # the last statement of each file's span is the whole file's
    whole = replay_cluster(sorted(whole_files + list(spans.values()), key=_order), "s5_churn")
    live = LiveReplay("s5_churn")
    for part in _slices(events, 5_000_000):
        live.add(part)
        if part:
            live.settle(part[-1].ts)
    assert whole.leaderless and _answer(live.picture()) == _answer(whole)
