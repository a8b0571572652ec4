"""forensics.audit.streamed_groups: a group's rows gathered from the sorted batches mapInArrow streams,
whether a group spans batches or several groups share one (what groupBy/applyInArrow would hand over)."""
import pyarrow as pa
import pytest

from forensics.audit.streamed_groups import apply_in_groups, apply_in_tasks, group_tables, split_groups


def _batches(rows, size):
    t = pa.table({"c": [r[0] for r in rows], "b": [r[1] for r in rows], "v": [r[2] for r in rows]})
    return t.to_batches(max_chunksize=size)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 100])
def test_groups_are_gathered_across_and_within_batches(size):
    rows = [("a", 0, 1), ("a", 0, 2), ("a", 1, 3), ("b", 0, 4), ("b", 0, 5), ("b", 0, 6), ("c", None, 7)]
    got = [(k, t.column("v").to_pylist()) for k, t in group_tables(iter(_batches(rows, size)), ("c", "b"))]
    assert got == [(("a", 0), [1, 2]), (("a", 1), [3]), (("b", 0), [4, 5, 6]), (("c", None), [7])]


@pytest.mark.parametrize("size", [1, 2, 4])
def test_a_null_key_is_a_group_of_its_own(size):
    # only the null differs between neighbours: (x, null) then (x, 1); Spark sorts nulls first
    rows = [("x", None, 1), ("x", None, 2), ("x", 1, 3), ("y", None, 4)]
    got = [(k, t.column("v").to_pylist()) for k, t in group_tables(iter(_batches(rows, size)), ("c", "b"))]
    assert got == [(("x", None), [1, 2]), (("x", 1), [3]), (("y", None), [4])]


def test_no_batches_no_groups():
    assert list(group_tables(iter([]), ("c",))) == []


def test_unsorted_rows_split_by_their_keys_nulls_included():
    rows = [("b", 0, 1), ("a", None, 2), ("b", 0, 3), ("a", 1, 4), (None, None, 5), ("a", None, 6), ("b", 1, 7)]
    t = _batches(rows, 100)[0]
    got = [(k, g.column("v").to_pylist()) for k, g in split_groups(pa.Table.from_batches([t]), ("c", "b"))]
    want: dict = {}
    for c, b, v in rows:  # grouped by Python's own tuple equality, in first-seen order within a group
        want.setdefault((c, b), []).append(v)
    assert sorted(got, key=repr) == sorted(want.items(), key=repr)
    assert [k for k, _ in got] == [(None, None), ("a", None), ("a", 1), ("b", 0), ("b", 1)]  # nulls first
    assert split_groups(pa.Table.from_batches([t]).slice(0, 0), ("c", "b")) == []


@pytest.mark.spark
def test_same_groups_as_apply_in_arrow(spark):
    """Against Spark's own groupBy().applyInArrow on the same rows, batches of 3 rows (every group spans several)."""
    from pyspark.sql import functions as F

    df = spark.range(200).select((F.col("id") % 7).cast("string").alias("k"), F.col("id").alias("v"))
    schema = pa.schema([pa.field("k", pa.string()), pa.field("n", pa.int64()), pa.field("s", pa.int64())])

    def fn(t):
        return pa.table({"k": [t.column("k")[0].as_py()], "n": [t.num_rows],
                         "s": [sum(t.column("v").to_pylist())]}, schema=schema)

    before = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "3")
    try:
        got = sorted(tuple(r) for r in apply_in_groups(df, ("k",), fn, schema, 2).collect())
        # already partitioned by the key (two groups to a task here): each task splits its rows unsorted
        tasks = sorted(tuple(r) for r in apply_in_tasks(df.repartition(3, "k"), ("k",), fn, schema).collect())
    finally:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", before)
    want = sorted(tuple(r) for r in df.groupBy("k").applyInArrow(fn, "k string, n long, s long").collect())
    assert got == want and len(got) == 7
    assert tasks == want


@pytest.mark.spark
def test_audit_store_writes_each_day_whole_when_its_rows_span_batches(spark, tmp_path):
    """``Store.write_spark`` streams a (cluster, date) group's rows in batches (here of 5 rows); each file
    must still hold exactly its group's rows, sorted, as pyarrow sorts them."""
    import pyarrow.parquet as pq

    from forensics.audit.store import Store

    rows = [(c, d, (i * 7919) % 101, f"line {i}") for i, (c, d) in enumerate(
        [("a", "2024-01-01")] * 23 + [("a", "2024-01-02")] * 4 + [("b", "2024-01-01")] * 17)]
    df = spark.createDataFrame(rows, "cluster string, date string, pos long, text string")
    before = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "5")
    try:
        written = Store(tmp_path).write_spark(df, "t", ["pos", "text"])
    finally:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", before)
    assert written == {("a", "2024-01-01"), ("a", "2024-01-02"), ("b", "2024-01-01")}
    for c, d in written:
        got = pq.read_table(Store(tmp_path).partition_dir("t", c, d) / "part-00000.parquet").to_pylist()
        want = sorted(({"pos": p, "text": t} for cc, dd, p, t in rows if (cc, dd) == (c, d)),
                      key=lambda r: (r["pos"], r["text"]))
        assert got == want


@pytest.mark.spark
def test_rows_reach_python_in_batches_bounded_by_rows_not_bytes(spark):
    """The sessions switch off Spark 4's byte cap on Arrow batches to Python (its per-row size check cost a
    batch's rows squared with list columns, as the events' isr and replicas: forensics/spark.py), so the row
    cap is what bounds a batch. Int.MaxValue is the value Spark's BatchedPythonArrowInput.writeSizedBatch
    reads as "no byte limit"; every row still arrives, in batches of at most ARROW_BATCH_ROWS."""
    from pyspark.sql import functions as F

    from forensics.spark import ARROW_BATCH_ROWS

    assert spark.conf.get("spark.sql.execution.arrow.maxBytesPerBatch").rstrip("b") == str(2**31 - 1)
    assert int(spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")) == ARROW_BATCH_ROWS
    n = 2 * ARROW_BATCH_ROWS + 517
    df = spark.range(n).select(F.col("id"), F.array(F.col("id").cast("int"), F.lit(7)).alias("isr"))

    def sizes(batches):
        for b in batches:
            yield pa.RecordBatch.from_pydict({"rows": [b.num_rows], "isr_sum": [sum(x[0] for x in
                                                                                  b.column("isr").to_pylist())]})

    got = df.repartition(1).mapInArrow(sizes, "rows long, isr_sum long").collect()
    assert sum(r["rows"] for r in got) == n and sum(r["isr_sum"] for r in got) == n * (n - 1) // 2
    assert max(r["rows"] for r in got) <= ARROW_BATCH_ROWS and len(got) >= 3
