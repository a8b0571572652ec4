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
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import EventRun, count_events, expand_runs

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


def _read(name: str, runs: bool):
    data = ((REAL_LOGS if name in MIXED else REAL_LOGS2) / name).read_bytes()
    return parse_source(data, SourceContext(name, "c", None, event_runs=runs))


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


@pytest.mark.parametrize("name", FILES[2:] + MIXED)
def test_runs_written_as_columns_are_the_rows_of_their_events(name):
    want, _ = _read(name, False)
    got, _ = _read(name, True)
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
