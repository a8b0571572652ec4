"""forensics.audit.placement: Spark itself is the truth. Its ``hash()`` of an int column and the partition
``repartition(n, col)`` puts each row in (``spark_partition_id``) must be what the module predicts."""
import pytest

from forensics.audit.placement import hash_int, pack, partition_keys


def test_keys_fill_every_partition_once():
    for n in (1, 2, 3, 8, 34, 100):
        keys = partition_keys(n)
        assert len(set(keys)) == n
        assert sorted(hash_int(k) % n for k in keys) == list(range(n))


@pytest.mark.spark
def test_hash_is_sparks(spark):
    from pyspark.sql import functions as F

    values = [0, 1, 2, 7, 42, 1000, 65_535, 2**31 - 1, -1, -(2**31), 123_456_789]
    rows = (spark.createDataFrame([(v,) for v in values], "v int")
            .select("v", F.hash("v").alias("h")).collect())
    assert {r["v"]: r["h"] for r in rows} == {v: hash_int(v) for v in values}


@pytest.mark.spark
@pytest.mark.parametrize("clusters,shards", [(1, 34), pytest.param(3, 2, marks=pytest.mark.slow), (5, 3)])
def test_each_shard_alone_in_its_partition(spark, clusters, shards):
    # the replay's form: clusters with shards 0 .. k-1 (a per-cluster array of keys), plus phase 1's (cluster alone)
    from pyspark.sql import functions as F

    from forensics.audit.placement import one_task_per_group

    groups = [(f"c{c}", b) for c in range(clusters) for b in range(shards)]
    df = spark.createDataFrame([(c, b, j) for c, b in groups for j in range(3)], "cluster string, b int, j int")
    for cols, want in ((("cluster", "b"), groups), (("cluster",), sorted({(c,) for c, _ in groups}))):
        placed = one_task_per_group(df, cols, want)
        assert placed.rdd.getNumPartitions() == len(want)
        got = placed.select(*cols, F.spark_partition_id().alias("p")).distinct().collect()
        assert sorted((tuple(r[c] for c in cols), r["p"]) for r in got) == sorted(zip(want, range(len(want))))


@pytest.mark.spark
@pytest.mark.parametrize("n", [2, pytest.param(5, marks=pytest.mark.slow), 34])
def test_each_group_alone_in_its_partition(spark, n):
    from pyspark.sql import functions as F

    from forensics.audit.placement import one_task_per_group

    groups = [(f"cluster-{i % 3}", i) for i in range(n)]
    rows = [(c, b, j) for c, b in groups for j in range(4)] + [("other", 0, 0)]
    df = spark.createDataFrame(rows, "cluster string, b int, j int")
    placed = one_task_per_group(df, ("cluster", "b"), groups)
    assert placed.rdd.getNumPartitions() == n
    got = placed.select("cluster", "b", F.spark_partition_id().alias("p")).distinct().collect()
    where = {(r["cluster"], r["b"]): r["p"] for r in got}
    assert [where[g] for g in groups] == list(range(n))
    assert ("other", 0) in where  # a group not listed still goes somewhere, never lost


def test_heavy_groups_alone_light_ones_packed_until_a_task_holds_enough():
    task_of, n = pack([50, 5, 7, 60, 3, 9, 2], least=10)
    assert n == 4
    assert len({task_of[0], task_of[3]}) == 2  # the heavy ones alone
    assert all(task_of[i] not in (task_of[0], task_of[3]) for i in (1, 2, 4, 5, 6))
    # light ones heaviest first: 9 + 7 reaches 10, then 5 + 3 + 2 (the last task may stay light)
    assert task_of[5] == task_of[2] and task_of[1] == task_of[4] == task_of[6] and task_of[5] != task_of[1]
    assert pack([10, 10, 10], least=10) == ([0, 1, 2], 3)
    assert pack([1] * 5, least=0) == ([0, 1, 2, 3, 4], 5)  # nothing to pack: a task each
    assert pack([], least=10) == ([], 0)
