"""forensics.quarantine_share: a task's quarantined lines past its share are relabelled, and a row says so."""
import pyarrow as pa

from forensics.ingest import OUT_ARROW, _rows_to_batch
from forensics.quarantine_share import MORE, QUARANTINE, REST, in_hand, share_of, within_share


def _batch(kinds):
    return _rows_to_batch([{"row_kind": k, "source_file": "f", "source_pos": i, "source_sub": 0, "raw": f"line {i}"}
                           for i, k in enumerate(kinds)])


def _run(fn_batches, share):
    out = list(within_share(lambda batches: iter(fn_batches), share)(iter([])))
    return [r for b in out for r in b.to_pylist()], out


def test_within_its_share_a_task_is_unchanged():
    batches = [_batch([QUARANTINE, QUARANTINE, "summary"]), _batch([QUARANTINE, "summary"])]
    rows, out = _run(batches, 3)
    assert out == batches and [r["row_kind"] for r in rows] == [QUARANTINE, QUARANTINE, "summary", QUARANTINE,
                                                                  "summary"]


def test_past_its_share_the_rest_is_relabelled_and_one_row_says_so():
    rows, out = _run([_batch([QUARANTINE, "summary", QUARANTINE]), _batch(["event", QUARANTINE, QUARANTINE])], 1)
    assert [(r["row_kind"], r["source_pos"]) for r in rows] == [
        (QUARANTINE, 0), ("summary", 1), (REST, 2), (MORE, None), ("event", 0), (REST, 1), (REST, 2)]
    assert all(b.schema == OUT_ARROW for b in out)
    assert in_hand(rows) is None
    # none past the share: the quarantined rows, in order, with the columns quarantine_rows reads
    rows, _ = _run([_batch([QUARANTINE, "summary", QUARANTINE])], 2)
    assert [(r["source_pos"], r["raw"]) for r in in_hand(rows)] == [(0, "line 0"), (2, "line 2")]


def test_the_shares_add_up_to_the_bound_and_less_than_a_row_a_task_more():
    for total, tasks in ((5000, 21), (5000, 1), (3, 8), (0, 4)):
        s = share_of(total, tasks)
        assert total <= s * tasks < total + tasks or (total == 0 and s == 0)
    assert pa.types.is_string(OUT_ARROW.field("row_kind").type)
