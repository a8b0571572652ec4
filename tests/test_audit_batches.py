"""What a replay task hands back to Spark comes in bounded record batches. PySpark sends a grouped Arrow UDF's
result as ``result.to_batches()`` (pyspark/worker.py: wrap_grouped_map_arrow_udf) and the JVM reads each batch
into off-heap buffers whole; a shard's timeline as one batch failed the 22-day, 100,000-partition audit
(benchmarks/journal/audit.md, "large audit")."""
import pyarrow as pa

from forensics.audit.distributed import BATCH_ROWS, OUT_ARROW, _rows_table


def test_a_shards_rows_leave_in_batches_of_at_most_batch_rows():
    n = 2 * BATCH_ROWS + 123
    rows = {"topic": [f"t-{i % 7}" for i in range(n)], "partition": list(range(n)), "_bucket": [1] * n}
    table = _rows_table(rows, n)
    batches = table.to_batches()
    assert [b.num_rows for b in batches] == [BATCH_ROWS, BATCH_ROWS, 123]
    assert table.schema == OUT_ARROW
    assert pa.Table.from_batches(batches).column("partition").to_pylist() == list(range(n))  # same rows, same order


def test_a_small_result_is_one_batch():
    table = _rows_table({"topic": ["t"], "partition": [0], "_bucket": [0]}, 1)
    assert [b.num_rows for b in table.to_batches()] == [1]
