"""The replay on Spark executors (routing by Spark expressions, phase 1 in every shard, shards, merge)
equals the one-process replay of the same events, and splits logs-only clusters without falling back.

Independent truth: ``replay_cluster`` over the same events in one process, on real ZooKeeper-mode
log sets whose controller records change the controller's live set (so the phase 1 that every shard
runs keeps hints, and each shard must replay exactly those of the other partitions' records).
"""

import pyarrow as pa
import pytest
from conftest import REAL_LOGS
from test_shard import load

from forensics.audit.distributed import replay_on_executors
from forensics.pipeline import drop_log_copies, replay_order
from parsers.schema import events_to_arrow
from replay_engine.api import replay_cluster

pytestmark = pytest.mark.spark

CLUSTERS = ("AndreasTraut__kafka_2.13-2.8.0", "YehorYehorychev__Kafka", "CodingCookieRookie__CS3219_TASKD",
            "Eniyanilavan__Kafka")


def ordered(events):
    events = sorted(events, key=replay_order)
    return drop_log_copies(events)[0]  # as every executor task does


# phase 1 in every shard (in one process: tests/test_shard.py) and phase 1's rows streamed in small batches
# (tests/test_streamed_groups.py) through Spark are the opt-in tier's
@pytest.mark.parametrize("phase1_in_shards,batch", [pytest.param(True, None, marks=pytest.mark.slow), (False, None),
                                                    pytest.param(False, 37, marks=pytest.mark.slow)],
                         ids=["phase1-in-every-shard", "phase1-task", "phase1-task-streamed-in-small-batches"])
def test_executors_split_logs_only_clusters_as_the_whole_replay(spark, monkeypatch, phase1_in_shards, batch):
    # Phase 1 runs in every shard while their input stays small, else once as a task of its own whose kept
    # records the router sends to every shard: both must give the whole replay. Phase 1's task reads its
    # cluster's rows streamed in batches (forensics.audit.streamed_groups); with batches of 37 rows every
    # cluster spans many of them.
    import forensics.audit.distributed as dist_mod

    monkeypatch.setattr(dist_mod, "phase1_fits", lambda *_: phase1_in_shards)  # decided on the driver
    if batch is not None:
        before = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(batch))
    try:
        _split_equals_whole(spark, phase1_in_shards)
    finally:
        if batch is not None:
            spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", before)


def _split_equals_whole(spark, phase1_in_shards):
    events = [e for c in CLUSTERS for e in load(REAL_LOGS / c)]
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    dist = replay_on_executors(spark, df, 3)
    try:
        assert dist.replayed_whole == {}  # every cluster split, none replayed whole after disagreeing
        rows = dist.timeline.collect()
        for c in CLUSTERS:
            whole = replay_cluster(ordered(e for e in events if e.cluster == c), c)
            m = dist.merged[c]
            assert_split_equals_whole(m, whole, [r for r in rows if r["cluster"] == c], 3)
            assert {b: [(p.state, p.start, p.end) for p in ps] for b, ps in m.periods.items()} == {
                b: [(p.state, p.start, p.end) for p in ps] for b, ps in whole.image.periods.items()}
        cpu = dist.task_cpu
        assert all(len(cpu[c]["shards"]) == 3 for c in CLUSTERS)
        # these clusters are small (hundreds of events): their 12 shards share one task
        _tasks_of_shards(dist.outputs[0], {c: 3 for c in CLUSTERS}, len(CLUSTERS) * 3, 1)
        if phase1_in_shards:  # every shard ran phase 1 itself, before its own partitions
            assert all(s > 0 for c in CLUSTERS for s in cpu[c]["phase1"])
            assert all(cpu[c]["phase1_task"] == 0 for c in CLUSTERS)
        else:
            assert all(cpu[c]["phase1_task"] > 0 and not any(cpu[c]["phase1"]) for c in CLUSTERS)
    finally:
        dist.release()


def assert_split_equals_whole(m, whole, rows, shards):
    """A cluster's merged shards (``m``, from ``shards`` shards; ``rows`` its timeline rows) against its replay in one
    process: the same partitions' intervals, leaderless episodes, controller tenures and agreement counts."""
    assert m.shards == shards
    assert sorted((r["topic"], r["partition"]) for r in rows) == sorted(
        (iv.topic, iv.partition) for iv in whole.intervals)
    assert [lp.to_json() for lp in m.leaderless] == [lp.to_json() for lp in whole.leaderless]
    assert [(t.controller, t.epoch, t.start) for t in m.tenures] == [
        (t.controller, t.epoch, t.start) for t in whole.image.tenures]
    ag = whole.agreement()
    assert {k: m.agreement[k] for k in ag} == ag


def _tasks_of_shards(out, plans, shards, tasks):
    """The replay's output has a partition per task, each shard's rows in one of them; with ``tasks == shards``
    every shard had a task of its own (shards hashed into the session's shuffle partitions could share one).
    A row's shard is its partition's by Kafka's partition name (``replay_engine.sharding.shard.bucket_of``)."""
    from pyspark.sql import functions as F

    from replay_engine.sharding.shard import bucket_of

    assert out.rdd.getNumPartitions() == tasks
    rows = out.select("cluster", "topic", "partition", F.spark_partition_id().alias("p")).distinct().collect()
    where = {(r["cluster"], bucket_of(r["topic"], r["partition"], plans[r["cluster"]]), r["p"]) for r in rows}
    assert len(where) == shards and len({(c, b) for c, b, _ in where}) == shards
    assert len({p for _, _, p in where}) == tasks


def test_phase1_runs_in_the_shards_only_while_their_input_stays_within_the_cap():
    from forensics.audit.distributed import MAX_SHARD_EVENTS, phase1_fits

    assert phase1_fits(287_465, 98_440, 2)  # the benchmark corpus: 143,733 + 49,220 per shard
    assert not phase1_fits(1_690_000, 575_000, 9)  # 22 days of it: the records alone exceed a shard's cap
    assert phase1_fits(2 * MAX_SHARD_EVENTS, 0, 2) and not phase1_fits(2 * MAX_SHARD_EVENTS, 2, 2)


def test_more_shards_than_asked_come_in_whole_waves_over_the_executors():
    from forensics.audit.distributed import MAX_SHARD_EVENTS, shard_count

    assert shard_count(287_465, 2) == 2 and shard_count(10, 3) == 3
    assert shard_count(2 * MAX_SHARD_EVENTS + 1, 2) == 4  # not 3: two executors would wait on the third
    assert shard_count(4 * MAX_SHARD_EVENTS + 1, 3) == 6
    for n in (1, 150_000, 575_000, 1_690_000):
        for k in (1, 2, 7):
            got = shard_count(n, k)
            assert got % k == 0 and -(-n // got) <= MAX_SHARD_EVENTS and (got == k or -(-n // (got - k)) > MAX_SHARD_EVENTS)


def test_a_small_kraft_cluster_is_replayed_whole_without_phase_1(spark):
    # phase 1 is a task of its own for KRaft: a cluster whose shards would be lighter than a task's weight
    # (MIN_TASK_EVENTS) is one task, whole, without it (GraphLogistics: 108 events)
    from forensics.audit.distributed import cluster_plans

    c = "GraphLogistics__kafka"
    events = load(REAL_LOGS / c)
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    plan = cluster_plans(spark, df, 2)[c]
    assert plan.kraft and plan.whole and plan.buckets == 1 and not plan.phase1_job


def test_phase1_runs_only_for_clusters_split_from_logs_alone():
    # One shard, ZooKeeper's log or a whole replay need no phase 1, whether or not the records would fit.
    from forensics.audit.distributed import ClusterPlan
    from replay_engine.zk.from_events import ClusterContext

    logs, zk = ClusterContext(), ClusterContext(zk=True)
    assert ClusterPlan(2, logs, False, False, records_fit=True).phase1_in_shards
    assert ClusterPlan(2, logs, False, False, records_fit=False).phase1_job
    for plan in (ClusterPlan(1, logs, False, False, records_fit=True), ClusterPlan(2, zk, False, False, records_fit=True),
                 ClusterPlan(1, logs, True, True, records_fit=True), ClusterPlan(2, zk, False, False)):
        assert not plan.phase1_in_shards and not plan.phase1_job


def test_a_cluster_with_more_events_than_its_shards_hold_gets_more_shards(spark, monkeypatch):
    """Each shard's events reach its task as one Arrow batch, so a big cluster is split into more shards than
    asked (forensics.audit.distributed.MAX_SHARD_EVENTS); the result is still the whole replay's."""
    import forensics.audit.distributed as dist_mod

    c = "AndreasTraut__kafka_2.13-2.8.0"
    events = load(REAL_LOGS / c)
    cap = len(events) // 5
    monkeypatch.setattr(dist_mod, "MAX_SHARD_EVENTS", cap)  # the plan is made on the driver
    monkeypatch.setattr(dist_mod, "MIN_TASK_EVENTS", 1)  # every shard heavy enough for a task of its own
    expected = 2 * -(-len(events) // (2 * cap))  # a whole number of waves over the 2 shards asked
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    dist = replay_on_executors(spark, df, 2)
    try:
        m = dist.merged[c]
        assert m.shards == expected >= 5 and dist.replayed_whole == {}
        whole = replay_cluster(ordered(events), c)
        assert [lp.to_json() for lp in m.leaderless] == [lp.to_json() for lp in whole.leaderless]
        assert sorted((r["topic"], r["partition"]) for r in dist.timeline.collect()) == sorted(
            (iv.topic, iv.partition) for iv in whole.intervals)
        assert len(dist.task_cpu[c]["shards"]) == expected
        _tasks_of_shards(dist.outputs[0], {c: expected}, expected, expected)
    finally:
        dist.release()


@pytest.mark.slow  # BetrajJ's 31,000 events through Spark; the fallback alone: the shards-disagree test below
def test_a_cluster_replayed_whole_is_streamed_and_equals_the_one_process_replay(spark, monkeypatch):
    """A cluster whose split does not hold is replayed whole, its rows reaching the task streamed in batches
    (forensics.audit.streamed_groups), here of 37 rows, beside a split logs-only cluster: a KRaft cluster
    allowed one round where its lines need more (replay_engine.kraft.split)."""
    import forensics.audit.distributed as dist_mod

    kraft, logs = "BetrajJ__kafka-kraft", "AndreasTraut__kafka_2.13-2.8.0"
    events = load(REAL_LOGS / kraft) + load(REAL_LOGS / logs)
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    monkeypatch.setattr(dist_mod, "KRAFT_ROUNDS", 1)
    monkeypatch.setattr(dist_mod, "KRAFT_LINES_TO_SPLIT", 1000)  # split, though phase 1 foresaw lines
    monkeypatch.setattr(dist_mod, "MIN_TASK_EVENTS", 1)  # and though it is small
    before = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "37")
    try:
        dist = replay_on_executors(spark, df, 2)
        try:
            assert set(dist.replayed_whole) == {kraft} and dist.merged[logs].shards == 2
            assert dist.merged[kraft].shards == 1 and "showing a leader active" in dist.replayed_whole[kraft]
            rows = dist.timeline.collect()
            for c in (kraft, logs):
                whole = replay_cluster(ordered(e for e in events if e.cluster == c), c)
                assert sum(e.cluster == c for e in events) > 37
                assert [lp.to_json() for lp in dist.merged[c].leaderless] == [lp.to_json() for lp in whole.leaderless]
                assert sorted((r["topic"], r["partition"], str(r["leader"])) for r in rows if r["cluster"] == c) == sorted(
                    (iv.topic, iv.partition, str(iv.view.leader)) for iv in whole.intervals)
                assert {k: dist.merged[c].agreement[k] for k in whole.agreement()} == whole.agreement()
        finally:
            dist.release()
    finally:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", before)


def test_the_timeline_consumer_runs_the_shards_once_and_its_rows_are_the_whole_replays(spark):
    """With a sink (the audit's write, the bench's count) the shards run in the sink's own action: called
    once, with every cluster, and the shard outputs come back beside the rows (forensics.audit.shard_results)."""
    events = [e for c in CLUSTERS[:2] for e in load(REAL_LOGS / c)]
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    calls = []

    def sink(timeline, clusters):
        calls.append((clusters, sorted((r["cluster"], r["topic"], r["partition"]) for r in timeline.collect())))

    dist = replay_on_executors(spark, df, 2, sink=sink)
    assert dist.timeline is None and dist.replayed_whole == {}
    assert [c for c, _ in calls] == [frozenset(CLUSTERS[:2])]
    rows = calls[0][1]
    for c in CLUSTERS[:2]:
        whole = replay_cluster(ordered(e for e in events if e.cluster == c), c)
        assert [(t, p) for cc, t, p in rows if cc == c] == sorted((iv.topic, iv.partition) for iv in whole.intervals)
        assert dist.merged[c].shards == 2
        assert [lp.to_json() for lp in dist.merged[c].leaderless] == [lp.to_json() for lp in whole.leaderless]


def test_the_audit_cuts_only_a_cluster_bigger_than_a_cores_share_and_replays_the_others_whole(spark):
    """As the audit asks (``whole_below_share``): of a big and a small cluster on 2 cores, the big one (more than
    half the events) is cut in 2 shards, the small one replayed whole as one shard, and each equals its replay in
    one process, with no fallback."""
    big, small = CLUSTERS[0], CLUSTERS[2]
    events = [e for c in (big, small) for e in load(REAL_LOGS / c)]
    n = {c: sum(e.cluster == c for e in events) for c in (big, small)}
    assert n[big] * 2 > len(events) > n[small] * 2  # the fixture's shape: one cluster over a core's share
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    dist = replay_on_executors(spark, df, 2, whole_below_share=True)
    try:
        assert dist.replayed_whole == {}
        rows = dist.timeline.collect()
        for c, shards in ((big, 2), (small, 1)):
            whole = replay_cluster(ordered(e for e in events if e.cluster == c), c)
            assert_split_equals_whole(dist.merged[c], whole, [r for r in rows if r["cluster"] == c], shards)
        assert len(dist.task_cpu[big]["shards"]) == 2 and len(dist.task_cpu[small]["shards"]) == 1
        assert not any(dist.task_cpu[small]["phase1"])  # whole: no phase 1 to repeat
    finally:
        dist.release()


def test_a_consumer_that_reads_part_of_the_timeline_fails_instead_of_merging_fewer_shards(spark, monkeypatch):
    import forensics.audit.distributed as dist_mod

    monkeypatch.setattr(dist_mod, "MIN_TASK_EVENTS", 1)  # a task per shard: the first task is one shard
    c = CLUSTERS[0]
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(load(REAL_LOGS / c))]))
    with pytest.raises(RuntimeError, match=f"no result came back from shard\\(s\\) {c}: "):
        replay_on_executors(spark, df, 3, sink=lambda timeline, clusters: timeline.limit(1).collect())


def test_a_cluster_whose_shards_disagree_is_replayed_whole_and_its_rows_replace_the_split_ones(spark, monkeypatch):
    """The fallback: shards whose cluster-wide histories differ (made to here) send the cluster to one task;
    the consumer gets its rows again, and the kept timeline holds them once, as the whole replay has them."""
    import forensics.audit.distributed as dist_mod
    from replay_engine.sharding.shard import ShardsDisagree

    real_merge = dist_mod.merge
    bad = CLUSTERS[1]

    def merge(outputs, expect=None):
        if outputs[0].cluster == bad and len(outputs) > 1:
            raise ShardsDisagree("made to differ")
        return real_merge(outputs, expect)

    monkeypatch.setattr(dist_mod, "merge", merge)
    events = [e for c in CLUSTERS[:2] for e in load(REAL_LOGS / c)]
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    dist = replay_on_executors(spark, df, 2)
    try:
        assert set(dist.replayed_whole) == {bad} and "made to differ" in dist.replayed_whole[bad]
        assert dist.merged[bad].shards == 1 and dist.merged[CLUSTERS[0]].shards == 2
        rows = dist.timeline.collect()
        for c in CLUSTERS[:2]:
            whole = replay_cluster(ordered(e for e in events if e.cluster == c), c)
            assert sorted((r["topic"], r["partition"], str(r["leader"])) for r in rows if r["cluster"] == c) == sorted(
                (iv.topic, iv.partition, str(iv.view.leader)) for iv in whole.intervals)
    finally:
        dist.release()


KRAFT_CLUSTERS = ("Ammar777782439__kafka_2.13-4.0.0", "BetrajJ__kafka-kraft", "Niloufar1171__LDI-POC",
                  "GraphLogistics__kafka")
FORESEEN = KRAFT_CLUSTERS[:2]  # phase 1 foresees lines showing a leader active: Ammar's 1, BetrajJ's 25


# BetrajJ (31,000 events; the one whose split takes several rounds) is the opt-in tier's
@pytest.mark.parametrize("lines_to_split,clusters", [
    (0, tuple(c for c in KRAFT_CLUSTERS if c != "BetrajJ__kafka-kraft")),
    pytest.param(0, KRAFT_CLUSTERS, marks=pytest.mark.slow), pytest.param(1000, KRAFT_CLUSTERS, marks=pytest.mark.slow)])
def test_executors_split_kraft_clusters_as_the_whole_replay(spark, monkeypatch, lines_to_split, clusters):
    # KRaft clusters shard as ZooKeeper-mode ones do: phase 1 (replay_engine.kraft.split) as a task of its own,
    # then the shards. By default a cluster whose phase 1 foresees lines showing a leader active (from logs alone:
    # Ammar's 1, BetrajJ's 25) is replayed whole; allowed to split, BetrajJ's takes more rounds (3 shards), none
    # falls back. Independent truth: the one-process replay of each cluster, and the one-process context
    # (kraft_context) for what the driver's aggregates fold.
    import forensics.audit.distributed as dist_mod
    from forensics.audit.distributed import cluster_plans, kraft_phase1_rows
    from replay_engine.kraft.context import kraft_context, phase1_needs

    monkeypatch.setattr(dist_mod, "KRAFT_LINES_TO_SPLIT", lines_to_split)
    monkeypatch.setattr(dist_mod, "MIN_TASK_EVENTS", 1)  # these clusters are small: split them all the same
    events = [e for c in clusters for e in load(REAL_LOGS / c)]
    df = spark.createDataFrame(pa.Table.from_batches([events_to_arrow(events)]))
    plans = cluster_plans(spark, df, 3)
    for c in clusters:
        assert plans[c].kraft_split
        assert plans[c].context == kraft_context(ordered(e for e in events if e.cluster == c))
    # phase 1's task gets the rows replay_engine.kraft.context.phase1_needs names, no fewer, no more
    key = ("cluster", "source_file", "source_pos", "source_sub", "event_type")
    sent = sorted(tuple(r[k] for k in key) for r in df.where(kraft_phase1_rows()).select(*key).collect())
    assert sent == sorted((e.cluster, e.source_file, e.source_pos, e.source_sub, e.event_type)
                          for e in events if phase1_needs(e))
    dist = replay_on_executors(spark, df, 3)
    try:
        foresaw = set(FORESEEN) & set(clusters) if lines_to_split == 0 else set()
        assert set(dist.replayed_whole) == foresaw
        assert all("phase 1 foresaw" in dist.replayed_whole[c] for c in foresaw)
        if lines_to_split:
            assert dist.kraft_rounds[KRAFT_CLUSTERS[0]] == 1 and dist.kraft_rounds[KRAFT_CLUSTERS[1]] > 1
        rows = dist.timeline.collect()
        for c in clusters:
            whole = replay_cluster(ordered(e for e in events if e.cluster == c), c)
            m = dist.merged[c]
            assert m.shards == (1 if c in foresaw else 3)
            got = sorted((r["topic"], r["partition"], r["leader"] if r["leader"] is not None else -9,
                          r["leader_epoch"] if r["leader_epoch"] is not None else -9) for r in rows if r["cluster"] == c)
            assert got == sorted((iv.topic, iv.partition, iv.view.leader if iv.view.leader is not None else -9,
                                  iv.view.leader_epoch if iv.view.leader_epoch is not None else -9)
                                 for iv in whole.intervals)
            assert [lp.to_json() for lp in m.leaderless] == [lp.to_json() for lp in whole.leaderless]
            assert {b: [(p.state, p.start, p.end) for p in ps] for b, ps in m.periods.items()} == {
                b: [(p.state, p.start, p.end) for p in ps] for b, ps in whole.image.periods.items()}
            assert [(t.controller, t.epoch, t.start) for t in m.tenures] == [
                (t.controller, t.epoch, t.start) for t in whole.image.tenures]
            ag = whole.agreement()
            assert {k: m.agreement[k] for k in ag} == ag
            assert dist.task_cpu[c]["phase1_task"] > 0
    finally:
        dist.release()
