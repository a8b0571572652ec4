"""The one-file shape (issue 48): a big broker log read by ranges, each range's events staged by its own task
(``forensics.staged_parts``), what the ranges leave to each other settled on the driver and the output parts
written from the staged row groups (``forensics.stage_output``), gives the events and the summary that the same
file read whole gives, and the range tasks run as cheaply as a whole file's task.

Real Kafka lines (``../shared/real_logs``, read in place): rotated server logs of one broker and a 0.10
controller log, joined out of time order as a rotated series concatenated into one ``server.log`` is (the
text goes back in time at every join). The pipeline is the ``ingest`` command's on a local master, run here in
one process as its tasks run it (``benchmarks/ingest_profile.py``'s worker side).
"""
from __future__ import annotations

import gc
import gzip
import itertools
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import REAL_LOGS

# One broker's rotated server logs, not in time order (2024-07-29 20h, 07-18 19h with partition assignment dumps,
# 07-29 12h with a stack trace), then a 0.10 controller log (2017) whose elections take their epoch from a later line.
JOINED = ("NikhilDighe9975__kafka_setup/logs/server.log.2024-07-29-20.gz",
          "NikhilDighe9975__kafka_setup/logs/server.log.2024-07-18-19.gz",
          "NikhilDighe9975__kafka_setup/logs/server.log.2024-07-29-12.gz",
          "Aminoid__basic-sentiment-analysis/kafka_2.11-0.10.0.0/logs/controller.log.2017-01-19-10.gz")


@pytest.fixture(scope="module")
def joined(tmp_path_factory) -> Path:
    parts = [gzip.decompress((REAL_LOGS / name).read_bytes()) for name in JOINED]
    folder = tmp_path_factory.mktemp("one-file") / "broker-1"
    folder.mkdir()
    (folder / "server.log").write_bytes(b"".join(p if p.endswith(b"\n") else p + b"\n" for p in parts))
    return folder


def ingest_in_process(folder: Path, work: Path, range_bytes: int, watch=None,
                      rows_per_part: int = 5000) -> tuple[list[dict], list[dict], dict]:
    """(events as written, sorted; the summaries; what the write read) of ``folder``, read by ranges of
    ``range_bytes`` (a big number: whole), written as output parts of ``rows_per_part`` rows. ``watch(name)``
    is called inside each range task's reading."""
    from forensics import bigfiles, stage_output, staged_parts
    from forensics.filetasks import make_task_fn, plan_tasks
    from forensics.ingest import OUT_ARROW, _BATCH_ROWS, dir_broker_ids, make_local_parse_fn
    from forensics.sources import collect_inputs
    from parsers.common.accounting import FileSummary

    stage_dir = work / "staged"
    stage_dir.mkdir(parents=True)
    inputs = collect_inputs([str(folder)], work / "inputs")
    whole, big = bigfiles.plan_big_files(inputs.files, range_bytes=range_bytes)
    rows: list[dict] = []
    if whole:
        tasks = plan_tasks(whole, 2, 128 << 20, 512 << 10)
        run = make_task_fn(tasks, make_local_parse_fn("UTC", "c", (), str(stage_dir)))
        for i in range(len(tasks)):
            for b in run(iter([pa.record_batch([pa.array([i], pa.int64())], names=["id"])])):
                rows += b.to_pylist()
    if big.rows:
        part_fn = staged_parts.make_staged_part_fn("UTC", "c", OUT_ARROW, _BATCH_ROWS, big.surveys, str(stage_dir))
        names = [n.split()[0] for n in bigfiles.RANGE_DDL.split(", ")]
        real = staged_parts.read_part

        def watched(*args, **kwargs):
            watch("read_part")
            yield from real(*args, **kwargs)

        with pytest.MonkeyPatch.context() as mp:
            if watch is not None:
                mp.setattr(staged_parts, "read_part", watched)
            for row in big.rows:
                for b in part_fn(iter([pa.RecordBatch.from_pylist([dict(zip(names, row))])])):
                    rows += b.to_pylist()
    parts = [(r["source_file"], r["source_pos"], r["detail"]) for r in rows if r["row_kind"] == "part"]
    summaries = [FileSummary.from_json(json.loads(r["detail"])) for r in rows if r["row_kind"] == "summary"]
    big_summaries = bigfiles.merge_file_parts(big, parts, "c")
    fixups = stage_output.Fixups()
    fixups.brokers, fixups.events = staged_parts.settle_big_files(big, parts, big_summaries)
    fixups.fill = dir_broker_ids(summaries + big_summaries)
    descriptors = [json.loads(r["detail"]) for r in rows if r["row_kind"] == "staged"]
    plan = stage_output.plan_parts(descriptors, rows_per_part)
    per_file = {f: fixups.for_file(f) for f in {d["file"] for d in descriptors} if fixups.any_for(f)}
    out = work / "events"
    out.mkdir()
    staged_rows = sum(d["rows"] for d in descriptors)
    read = sum(pq.ParquetFile(path).metadata.row_group(g).num_rows
               for _lo, _hi, reads in plan for path, _f, groups, *_cut in reads for g in groups)
    written = sum(stage_output.write_part(i, part, per_file, str(out)) for i, part in enumerate(plan))
    assert written == staged_rows
    events = pq.read_table(sorted(out.glob("part-*.parquet"))).to_pylist() if written else []
    return events, [s.to_json() for s in sorted(summaries + big_summaries, key=lambda s: s.path)], \
        {"staged": staged_rows, "read": read, "parts": len(plan), "ranges": len(big.rows)}


def test_ranges_of_a_joined_file_stage_what_the_whole_file_gives_with_the_collector_paused(joined, tmp_path):
    """By ~200 KB ranges (cut inside entries, across the joins) as by the whole file: the same events, in the same
    order, and the same summary. Each range task reads with Python's cycle collector held off, as a whole file's
    task does (``ingest.file_batches``): its passes over the range's live events found nothing and cost a sixth
    of the task; it runs again after the range."""
    whole, whole_summaries, _ = ingest_in_process(joined, tmp_path / "whole", 1 << 40)
    seen = []
    was = gc.isenabled()
    parts, part_summaries, got = ingest_in_process(joined, tmp_path / "parts", 200_000,
                                                   watch=lambda name: seen.append(gc.isenabled()))
    assert got["ranges"] > 10 and seen and not any(seen)
    assert gc.isenabled() == was
    assert len(whole) > 100 and {e["event_type"] for e in whole} >= {"controller_elected"}
    assert parts == whole
    assert part_summaries == whole_summaries


# State-change logs of four clusters (0.10 .. 2.x, 2017 .. 2020) and a 4.0 controller log (2025), joined a block at a
# time, as the logs of several brokers or clusters are when joined in turn: every ~40 KB the time jumps by years.
INTERLEAVED = ("chase-lewis__JIE7351/logs/state-change.log.2017-11-26-17.gz",
               "zhanglong318__kafka/kafka_2.11-1.0.0/logs/state-change.log.2018-04-13-21.gz",
               "Saurabh7064__kafka/logs/state-change.log.2020-04-11-21.gz",
               "Ammar777782439__kafka_2.13-4.0.0/logs/controller.log.gz")
_ENTRY_START = re.compile(rb"\n(?=\[\d{4}-\d\d-\d\d \d\d:\d\d)")


@pytest.fixture(scope="module")
def interleaved(tmp_path_factory) -> Path:
    streams = []
    for name in INTERLEAVED:
        text = gzip.decompress((REAL_LOGS / name).read_bytes())
        text = text if text.endswith(b"\n") else text + b"\n"
        cuts = [0]
        for m in _ENTRY_START.finditer(text):
            if m.end() - cuts[-1] >= 40_000:
                cuts.append(m.end())
        streams.append([text[a:b] for a, b in zip(cuts, [*cuts[1:], len(text)])])
    blocks = [b for turn in itertools.zip_longest(*streams) for b in turn if b]
    folder = tmp_path_factory.mktemp("interleaved") / "broker-0"
    folder.mkdir()
    (folder / "server.log").write_bytes(b"".join(blocks))
    assert len(blocks) > 30
    return folder


def test_ranges_of_a_file_out_of_time_order_are_staged_for_the_parts_to_read_little(interleaved, tmp_path, monkeypatch):
    """A range of a file whose text goes back in time at every join is staged in time order: an output part
    reads the row groups whose time reaches into its own (``stage_output.plan_parts``), so row groups of
    consecutive events, each spanning years, made every part read nearly every row (issue 48's 2 GB one-file
    shape: the 22 parts read 2.3x the staged rows). Row groups and parts are made small here so that a
    1.5 MB file has many of each; the events are those of the file read whole."""
    from forensics import stage_writer

    monkeypatch.setattr(stage_writer, "GROUP_ROWS", 32)
    monkeypatch.setattr(stage_writer, "SAMPLE_EVERY", 8)
    whole, whole_summaries, _ = ingest_in_process(interleaved, tmp_path / "whole", 1 << 40, rows_per_part=1200)
    parts, part_summaries, got = ingest_in_process(interleaved, tmp_path / "parts", 500_000, rows_per_part=1200)
    assert got["ranges"] >= 5 and got["parts"] >= 4 and got["staged"] == len(whole) > 5000
    assert parts == whole
    assert part_summaries == whole_summaries
    assert got["read"] <= 1.3 * got["staged"], got
