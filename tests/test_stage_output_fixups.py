"""The values the driver settled for a few events of a file read by ranges (``stage_output.apply_fixups``), set on a
staged table as the write reads it (text columns as Arrow dictionaries): every other row and column as it was, the
settled rows with exactly the settled values, whether a value is already in the column's dictionary, new, or null.
The rows are a real 2.3 controller log's events, staged and read back as the write does."""
from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REAL_LOGS2

from forensics.stage_output import apply_fixups, set_rows
from forensics.stage_writer import DICT_COLUMNS, StageWriter
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import FIELD_NAMES, dump_detail

NAME = "Raghavendralacharya__kafka-node/kafka_2.12-2.3.0/logs/controller.log.2019-08-29-21.gz"


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> pa.Table:
    events = parse_source((REAL_LOGS2 / NAME).read_bytes(), SourceContext(NAME, "a", None, event_runs=True))[0]
    path = str(tmp_path_factory.mktemp("staged") / "part-00000.parquet")
    writer = StageWriter(path, NAME)
    writer.write(events)
    writer.close()
    table = pq.ParquetFile(path, read_dictionary=DICT_COLUMNS).read(columns=list(FIELD_NAMES))
    assert table.num_rows > 50 and pa.types.is_dictionary(table.schema.field("event_type").type)
    return table


def _settled(table: pa.Table, seed: int) -> tuple[list, dict]:
    """Settled values for a few rows: one of each kind a column can get."""
    rnd = random.Random(seed)
    rows = sorted(rnd.sample(range(table.num_rows), 6))
    present = table["event_type"][rows[0]].as_py()
    choices = {
        "event_type": [present, "controller_failover_settled", None],
        "detail": [{"reason": "settled across parts", "n": seed}, None, {"epoch": 7}],
        "subject_broker": [3, None, 1001],
        "controller_epoch": [12, None, 0],
    }
    events, want = [], {}
    for i in rows:
        vals = {name: rnd.choice(options) for name, options in choices.items() if rnd.random() < 0.7}
        key = (table["source_pos"][i].as_py(), table["source_sub"][i].as_py())
        events.append([key[0], key[1], vals])
        want[i] = vals
    return events, want


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_settled_values_land_on_their_rows_and_nothing_else_moves(staged, seed):
    events, want = _settled(staged, seed)
    got = apply_fixups(staged, {"broker": None, "fill": None, "events": events}).to_pylist()
    before = staged.to_pylist()
    assert len(got) == len(before)
    for i, (old, new) in enumerate(zip(before, got)):
        expect = dict(old)
        for name, v in want.get(i, {}).items():
            expect[name] = dump_detail(v) if name == "detail" else v
        assert new == expect, i


def test_a_dictionary_column_keeps_its_dictionary_and_adds_only_what_it_lacks():
    col = pa.chunked_array([pa.array(["a", "b", None, "c", "a"]).dictionary_encode()])
    got = set_rows(col, [0, 2, 4], ["z", "b", None])
    assert got.to_pylist() == ["z", "b", "b", "c", None]
    assert got.dictionary.to_pylist() == ["a", "b", "c", "z"]


def test_a_plain_column_takes_its_values_and_nulls():
    col = pa.chunked_array([pa.array([1, None, 3, 4], pa.int32()), pa.array([5], pa.int32())])
    got = set_rows(col, [1, 2, 4], [7, None, 9])
    assert got.to_pylist() == [1, 7, None, 4, 9] and got.type == pa.int32()
