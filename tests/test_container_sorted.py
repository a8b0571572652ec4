"""An export that must be put in time order (Elasticsearch/OpenSearch ECS, logcli newest first) read by
sorted runs in bounded memory gives what the whole read gives: every event field, the file summary with
its per-source streams, the quarantined lines.

The truth is ``parse_container_stream`` over the same bytes (tests/test_container_streams.py holds that
against the bundled incident's hand-derived expected.json). The bundled rf1_broker_kill incident is
written by samplegen.containers as an ECS export (as an index returns it, and shuffled) and as logcli's
default output (newest first), then damaged (tests/test_container_ranges._damaged: CRLF line ends, a
Latin-1 byte, a record no collector writes, a cut last line); also logcli --output=raw of one pod (newest
first), a gzip copy, and a source whose one line is the cut last line. Runs of a few hundred lines, so that many
runs are merged, and a FAN_IN of 4, so that runs are merged into longer ones first.
"""
from __future__ import annotations

import json
import os
import random

import pytest
from test_container_ranges import SAMPLE, _ctx, _damaged, _same, _whole

from parsers.container_streams import sorted_runs
from samplegen import containers as C


def _sorted(path, tmp_dir, run_lines=300, chunk_lines=50):
    return sorted_runs.read_sorted(str(path), path.stat().st_size, False, _ctx(path), run_lines, str(tmp_dir),
                                   chunk_lines)


def _shuffled(path):
    lines = path.read_text().split("\n")[:-1]
    random.Random(16).shuffle(lines)
    path.write_text("\n".join(lines) + "\n")
    return path


WRITERS = {
    "ecs_hits": lambda o: C.write_ecs(SAMPLE, o, module=False, hits=True),
    "ecs_kafka_module_shuffled": lambda o: _shuffled(C.write_ecs(SAMPLE, o, module=True, hits=False)),
    "loki_default": lambda o: C.write_loki(SAMPLE, o, jsonl=False),
    "loki_jsonl": lambda o: C.write_loki(SAMPLE, o, jsonl=True),
    "loki_raw": lambda o: max(C.write_loki_raw(SAMPLE, o), key=lambda p: p.stat().st_size),
}


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("exports")
    out = {}
    for name, write in WRITERS.items():
        path = write(root / name)
        damaged = path.with_name("damaged-" + path.name)
        damaged.write_bytes(_damaged(path.read_bytes()))
        out[name] = (path, damaged)
    return out


@pytest.mark.parametrize("fmt", sorted(WRITERS))
@pytest.mark.parametrize("damage", [pytest.param(False, marks=pytest.mark.slow), True])  # undamaged: opt-in tier
def test_sorted_runs_give_the_whole_read(exports, fmt, damage, tmp_path, monkeypatch):
    monkeypatch.setattr(sorted_runs, "FAN_IN", 4)
    path = exports[fmt][damage]
    whole = _whole(path)
    events, s = _sorted(path, tmp_path)
    assert len(events) > 1000 and s.lines == s.parsed + s.other + s.unrecognized + s.quarantined
    _same(whole, (events, s))
    ids = {x["name"]: x["broker_id"] for x in s.streams if x["kafka"]}
    if fmt != "loki_raw":  # one pod's lines
        assert sorted(ids.values()) == [1, 2, 3]  # the sample's folders kafka-broker-N hold broker N's files
    if damage:
        assert s.quarantined >= 1 and any(str(q.source_pos) for q in s.samples)
    if fmt.startswith("loki"):
        assert sum(n.endswith("read oldest first") for n in s.notes) == (1 if fmt == "loki_raw" else 3)
    assert os.listdir(tmp_path) == [], "runs are removed"


def test_many_runs_are_merged(exports, tmp_path, monkeypatch):
    """Runs of 7 lines: hundreds of runs, merged FAN_IN at a time, read back in parts of 5 lines."""
    monkeypatch.setattr(sorted_runs, "FAN_IN", 3)
    path = exports["ecs_kafka_module_shuffled"][1]
    written = []
    real = sorted_runs._write_run
    monkeypatch.setattr(sorted_runs, "_write_run", lambda *a: written.append(1) or real(*a))
    events, s = _sorted(path, tmp_path, run_lines=7, chunk_lines=5)
    assert len(written) > 500
    _same(_whole(path), (events, s))


def test_gzip_export(exports, tmp_path):
    import gzip

    path = tmp_path / "logcli.txt.gz"
    path.write_bytes(gzip.compress(exports["loki_default"][1].read_bytes()))
    (tmp_path / "runs").mkdir()
    events, s = sorted_runs.read_sorted(str(path), path.stat().st_size, True, _ctx(path), 300,
                                        str(tmp_path / "runs"), 50)
    _same(_whole(path), (events, s))


def test_source_whose_one_line_is_cut(tmp_path):
    """The last line, cut short, is the only line of its source: quarantined, and the source still listed."""
    a = [f'2021-08-16T09:00:{59 - i:02d}Z {{pod="kafka-0"}} [2021-08-16 09:00:{59 - i:02d},000] INFO [KafkaServer '
         f'id=0] step {i} (kafka.server.KafkaServer)' for i in range(30)]
    b = '2021-08-16T09:00:00Z {pod="kafka-1"} [2021-08-16 09:00:00,000] INFO [KafkaServer id=1] sta'
    path = tmp_path / "logcli.txt"
    path.write_text("\n".join(a + [b]))
    (tmp_path / "runs").mkdir()
    events, s = _sorted(path, tmp_path / "runs", run_lines=4, chunk_lines=3)
    _same(_whole(path), (events, s))
    assert [x["name"] for x in s.streams] == ["kafka-0", "kafka-1"] and [q.source_pos for q in s.samples] == [31]


def test_damaged_export_lines(exports, tmp_path):
    """A line that is not JSON and a last document cut short: quarantined with file and line, the rest read."""
    src = exports["ecs_hits"][0]
    lines = src.read_text().split("\n")[:-1]
    at = len(lines) // 2
    lines.insert(at, "not json at all {")
    path = tmp_path / "export.ndjson"
    path.write_text("\n".join(lines)[:-30])
    (tmp_path / "runs").mkdir()
    events, s = _sorted(path, tmp_path / "runs", run_lines=100)
    _same(_whole(path), (events, s))
    where = sorted(q.source_pos for q in s.samples)
    assert where == [at + 1, len(lines)]
    assert s.quarantined == 2 and s.lines == s.parsed + s.other + s.unrecognized + s.quarantined
    json.dumps(s.to_json())


@pytest.mark.spark
def test_ingest_by_sorted_runs_writes_what_the_whole_read_gives(spark, exports, tmp_path, monkeypatch):
    """Through Spark: a shuffled ECS export and logcli's newest-first output, damaged, read whole, then as
    big files (a threshold of 60 KB) by sorted runs of 500 lines in a folder of our own: the same
    ingest_summary.json, events and quarantined lines, and the folder left empty."""
    import shutil

    import pyarrow.parquet as pq

    from forensics import bigfiles
    from forensics.ingest import release, run_ingest, write_outputs
    from forensics.sources import collect_inputs

    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(exports["ecs_kafka_module_shuffled"][1], src / "filebeat-export.ndjson")
    shutil.copy(exports["loki_default"][1], src / "logcli.txt")
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.setenv(sorted_runs.TMP_ENV, str(runs))
    monkeypatch.setattr(sorted_runs, "RUN_LINES", 500)
    outs = []
    for name, range_bytes in (("whole", 1 << 40), ("sorted", 60_000)):
        monkeypatch.setattr(bigfiles, "RANGE_BYTES", range_bytes)
        inputs = collect_inputs([str(src)], tmp_path / f"work-{name}")
        big = bigfiles.plan_big_files(inputs.files)[1]
        assert len(big.sorted) == (0 if name == "whole" else 2) and not big.rows
        result = run_ingest(spark, inputs, cluster="c")
        write_outputs(result, tmp_path / name)
        release(result)
        outs.append(tmp_path / name)
    whole, by_runs = outs
    assert (whole / "ingest_summary.json").read_text() == (by_runs / "ingest_summary.json").read_text()
    for table in ("events", "quarantine"):
        a, b = pq.read_table(whole / table).to_pylist(), pq.read_table(by_runs / table).to_pylist()
        assert a == b and a
    assert os.listdir(runs) == []
