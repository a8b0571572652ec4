"""A controller's dump of every partition's assignment gives one event per partition: the reader may hand them
on as one EventRun (parsers.schema) to a writer of columns (the ingest's staged files). Independent truth: the
same file read with every event an Event of its own (the reader as it was), on real controller logs that hold
such dumps ("preferred replicas by broker Map(...)", "topics not in preferred replica Map(...)") in 0.9, 0.10,
2.3 and 3.4."""
from __future__ import annotations

import pyarrow.compute as pc
import pytest
from conftest import REAL_LOGS, REAL_LOGS2

from forensics.stage_writer import ARROW_SCHEMA, event_batch, event_batches
from parsers.broker_logs.templates import controller
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import RAW_LIMIT, EventRun, Packed, count_events, expand_runs

FILES = (
    "danisharora__helloworld/kafka_2.11-0.9.0.0/logs/controller.log.2016-11-21-14.gz",
    "pmitra43__kafka_load_generator/kafka_2.11-0.10.2.0/logs/controller.log.2017-06-26-13.gz",
    "Raghavendralacharya__kafka-node/kafka_2.12-2.3.0/logs/controller.log.2019-08-29-21.gz",
    "franklinzhao__kafka-nodejs-setup/kafka_2.13-3.4.0/logs/controller.log.gz",
)


# Controllers that also log "All leaders = ..." (doControlledShutdown, TRACE) and their partition state machine's
# start ("Started partition state machine with initial state -> ..."): runs of three shapes in one file (2.2, 0.10).
MIXED = (
    "Eniyanilavan__Kafka/logs/controller.log.2019-07-05-23.gz",
    "Aminoid__basic-sentiment-analysis/kafka_2.11-0.10.0.0/logs/controller.log.2017-01-19-10.gz",
)


def _read(name: str, runs: bool, compiled: bool = True, data: bytes | None = None):
    """The file's events, runs kept or expanded; the assignment dumps read by the compiled reader (its runs'
    columns Packed) or by the Python loop (lists)."""
    if data is None:
        data = ((REAL_LOGS if name in MIXED else REAL_LOGS2) / name).read_bytes()
    old = controller.COMPILED
    controller.COMPILED = compiled
    try:
        return parse_source(data, SourceContext(name, "c", None, event_runs=runs))
    finally:
        controller.COMPILED = old


def _packed(events) -> int:
    return sum(type(col) is Packed for ev in events if type(ev) is EventRun for col in ev.columns)


@pytest.mark.parametrize("name", FILES + MIXED)
def test_runs_are_the_events_read_one_by_one(name):
    want, want_summary = _read(name, False)
    got, got_summary = _read(name, True)
    runs = [ev for ev in got if type(ev) is EventRun]
    assert runs and not any(type(ev) is EventRun for ev in want)
    assert sum(map(len, runs)) > (40 if name in FILES else 20)
    if name in MIXED:
        assert len({run.fields for run in runs}) >= 2
    assert got_summary.to_json() == want_summary.to_json()
    assert count_events(got) == len(want) == want_summary.events
    assert [ev.as_row() for ev in expand_runs(got)] == [ev.as_row() for ev in want]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("name", FILES[2:] + MIXED)
def test_runs_written_as_columns_are_the_rows_of_their_events(name, compiled):
    want, _ = _read(name, False)
    got, _ = _read(name, True, compiled)
    assert (_packed(got) > 0) == compiled
    extra = {"x": list(range(len(got)))}  # a value per item, repeated over a run's events
    key = [("source_pos", "ascending"), ("source_sub", "ascending")]
    batches = event_batches(got, ARROW_SCHEMA)
    assert len(batches) == 1 + len({ev.fields for ev in got if type(ev) is EventRun})  # plain events, runs by shape
    rows = pc.take(_table(batches), pc.sort_indices(_table(batches), sort_keys=key)).to_pylist()
    assert rows == event_batch(want, ARROW_SCHEMA).to_pylist()
    import pyarrow as pa

    schema = ARROW_SCHEMA.append(pa.field("x", pa.int64()))
    with_x = sorted((r["source_pos"], r["source_sub"], r["x"]) for r in _table(event_batches(got, schema, extra)).to_pylist())
    expected = sorted((e.source_pos, e.source_sub, i) for i, ev in enumerate(got)
                      for e in (ev.events() if type(ev) is EventRun else [ev]))
    assert with_x == expected and len(with_x) == len(want)


def _table(batches):
    import pyarrow as pa

    return pa.Table.from_batches(batches)


def test_a_staged_file_reads_back_as_its_batches_without_statistics(tmp_path):
    """A real controller log (2.3: dumps as runs, plain events) staged by StageWriter: read back, the same rows in
    row groups of at most GROUP_ROWS; no column statistics were written (nothing reads them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from forensics.stage_writer import GROUP_ROWS, StageWriter

    got, _ = _read(FILES[2], True)
    writer = StageWriter(str(tmp_path / "x.parquet"), FILES[2])
    writer.write(got)
    desc = writer.close()
    pf = pq.ParquetFile(desc["path"])
    assert pf.read().to_pylist() == pa.Table.from_batches(event_batches(got, ARROW_SCHEMA)).to_pylist()
    assert [g["rows"] for g in desc["groups"]] == [pf.metadata.row_group(i).num_rows for i in range(pf.num_row_groups)]
    assert max(g["rows"] for g in desc["groups"]) <= GROUP_ROWS
    meta = pf.metadata.row_group(0)
    assert not any(meta.column(i).is_stats_set for i in range(meta.num_columns))


def test_packed_and_listed_runs_of_one_shape_in_one_batch():
    """Runs of one shape in one batch, some read compiled (Packed columns, each run's text and list offsets from
    its own start) and some by the Python loop (lists): the rows of their events, in order."""
    name = FILES[2]
    want, _ = _read(name, False)
    packed, _ = _read(name, True, True)
    listed, _ = _read(name, True, False)
    mixed = [p if i % 3 else q for i, (p, q) in enumerate(zip(packed, listed))]
    assert _packed(mixed) and _packed(mixed) < _packed(packed)
    for events in (packed, mixed):
        key = [("source_pos", "ascending"), ("source_sub", "ascending")]
        table = _table(event_batches(events, ARROW_SCHEMA))
        assert pc.take(table, pc.sort_indices(table, sort_keys=key)).to_pylist() == event_batch(want).to_pylist()


# Raghavendralacharya__kafka-node/kafka_2.12-2.3.0/logs/controller.log.2019-08-29-21.gz:49 (2.3.0, DEBUG "Preferred
# replicas by broker Map(2 -> Map(testKafka1-1 -> Vector(2, 0, 1), ...": one event per partition, each raw the
# line's head and its item).
_LINE49 = FILES[2]


def test_a_packed_raw_past_the_limit_is_cut_as_an_events_raw():
    """A dump item whose raw text passes RAW_LIMIT (a topic name of that length; Kafka allows 249 characters, but
    the reader takes what the line says): its event's raw is cut in the staged batch as Event.as_row cuts it."""
    import gzip

    lines = gzip.decompress((REAL_LOGS2 / _LINE49).read_bytes()).split(b"\n")
    line = lines[48]
    assert b"Preferred replicas by broker Map(2 -> Map(testKafka1-1 -> Vector(2, 0, 1)" in line
    data = line.replace(b"testKafka1-1 ->", b"t" * RAW_LIMIT + b"-1 ->", 1) + b"\n"
    want, _ = _read(_LINE49, False, data=data)
    got, _ = _read(_LINE49, True, True, data=data)
    assert _packed(got) and len(want) > 10
    long_raw = [ev.raw for ev in want if ev.partition == 1 and ev.topic == "t" * RAW_LIMIT]
    assert len(long_raw) == 1 and len(long_raw[0]) > RAW_LIMIT
    rows = _table(event_batches(got, ARROW_SCHEMA)).to_pylist()
    assert sorted(rows, key=lambda r: r["source_sub"]) == event_batch(want).to_pylist()
    assert any(r["raw"].endswith(" chars cut]") for r in rows)


def test_packed_columns_iterate_as_lists():
    """A Packed column gives the values a list column holds (the reader that expands runs reads them so),
    UTF-8 text by its byte offsets included; and Arrow reads the same from its buffers."""
    import pyarrow as pa
    from array import array

    text = Packed("text", "tö-0ab".encode(), array("i", [5, 7]).tobytes())
    ints = Packed("ints", array("i", [1, 2, 3]).tobytes(), array("i", [2, 2, 3]).tobytes())
    nums = Packed("int", array("i", [7, -1, 2147483647]).tobytes())
    assert (list(text), list(ints), list(nums)) == (["tö-0", "ab"], [[1, 2], [], [3]], [7, -1, 2147483647])
    assert list(map(len, (text, ints, nums))) == [2, 3, 3]
    from forensics.stage_writer import _own_column

    for cols, f in (([text, text], pa.field("topic", pa.string())), ([ints, ints], pa.field("isr", pa.list_(pa.int32()))),
                    ([nums, nums], pa.field("partition", pa.int32()))):
        assert _own_column(cols, f).to_pylist() == list(cols[0]) * 2


# A state-change log (1.0: LeaderAndIsr and UpdateMetadata per partition, ISR lists), a KRaft server log (4.0:
# fifteen event types, few ISRs) and the two controllers of MIXED: most columns null in some batches.
PLAIN = ("chase-lewis__JIE7351/logs/state-change.log.2017-11-25-16.gz", "Ammar777782439__kafka_2.13-4.0.0/logs/server.log.gz")


@pytest.mark.parametrize("name", PLAIN + MIXED)
def test_a_batch_of_events_is_their_rows_one_by_one(name):
    """event_batch (a column at a time) holds each event's Event.as_row (parsers.schema.events_to_arrow, a row at
    a time), in order, with a part's extra columns a value per event; also in slices where a column is all null."""
    import pyarrow as pa

    from forensics.stage_writer import PART_COLUMNS
    from parsers.schema import events_to_arrow

    events, _ = parse_source((REAL_LOGS / name).read_bytes(), SourceContext(name, "c", None))
    assert len(events) > 20 and len({ev.event_type for ev in events}) >= 4
    for part in (events, events[:7], events[-3:]):
        assert event_batch(part).equals(events_to_arrow(part))
    schema = pa.schema(list(ARROW_SCHEMA) + list(PART_COLUMNS))
    extra = {"_attr": [i % 3 for i in range(len(events))], "_src": list(range(len(events)))}
    got = event_batch(events, schema, extra)
    assert got.select(ARROW_SCHEMA.names).equals(events_to_arrow(events))
    assert got.column("_attr").to_pylist() == extra["_attr"] and got.column("_src").to_pylist() == extra["_src"]
