"""Local files read by tasks of even work (forensics.filetasks) against the reference, Spark's binaryFile.

Independent truth: the reference path itself (binaryFile hands each file's bytes to the same
parser) and, for the plan, each gzip file's real decompressed size.
"""
import gzip
import shutil
from datetime import datetime, timezone

import pyarrow.parquet as pq
import pytest
from conftest import REAL_LOGS

from forensics import filetasks, ingest
from forensics.sources import FileRef, collect_inputs

# Three clusters of the real corpus: gzip-rotated 2.8 logs holding the corpus's quarantined run of NUL
# bytes, 0.10 plain-text logs in another layout, and the issue excerpts with their unrecognised preambles.
CLUSTERS = ("AndreasTraut__kafka_2.13-2.8.0", "andreinedelciu__kafka-brokers-public", "issue_snippets")


def test_text_size_of_a_gzip_file_is_its_decompressed_size(tmp_path):
    for p in sorted((REAL_LOGS / CLUSTERS[0]).rglob("*.gz"))[:20]:
        ref = FileRef(str(p), str(p), size=p.stat().st_size)
        assert filetasks.text_size(ref) == len(gzip.decompress(p.read_bytes())), p
    plain = tmp_path / "server.log"
    plain.write_bytes(b"x" * 100)
    assert filetasks.text_size(FileRef(str(plain), "server.log", size=100)) == 100


def test_plan_puts_every_file_in_one_task_and_evens_the_work():
    refs = [FileRef(f"/l/{i}", f"f{i}", size=s) for i, s in enumerate([40, 40, 35, 20, 10, 5, 5, 3, 1, 1, 1])]
    tasks = filetasks.plan_tasks(refs, min_tasks=4, max_task_bytes=1000, open_cost=1, weight=lambda r: r.size)
    assert sorted(r.display for t in tasks for r in t) == sorted(r.display for r in refs)
    loads = [sum(r.size for r in t) for t in tasks]
    assert len(tasks) == 4 and loads == sorted(loads, reverse=True)
    # LPT's bound: no task over the mean plus the largest file
    assert max(loads) <= sum(r.size for r in refs) / len(tasks) + 40
    # Spark's settings bound the tasks as they bound its file partitions
    one_each = filetasks.plan_tasks(refs, min_tasks=1, max_task_bytes=1, open_cost=1, weight=lambda r: r.size)
    assert sorted(len(t) for t in one_each) == [1] * len(refs)
    assert len(filetasks.plan_tasks(refs, min_tasks=1, max_task_bytes=1 << 30, weight=lambda r: r.size)) == 1
    assert len(filetasks.plan_tasks(refs, min_tasks=1, max_task_bytes=50, open_cost=1, weight=lambda r: r.size)) == 4


@pytest.mark.spark
def test_tasks_reading_local_files_write_what_binaryfile_gives(spark, tmp_path, monkeypatch):
    src = tmp_path / "in"
    for c in CLUSTERS:
        shutil.copytree(REAL_LOGS / c, src / c)
    (src / "empty.log").write_bytes(b"")
    outs = []
    for local in (False, True):
        monkeypatch.setattr(ingest, "LOCAL_TASKS", local)
        inputs = collect_inputs([str(src)], tmp_path / f"work-{local}")
        result = ingest.run_ingest(spark, inputs, cluster="c")
        out = tmp_path / f"out-{local}"
        ingest.write_outputs(result, out)
        ingest.release(result)
        outs.append(out)
    ref, fast = outs
    assert (ref / "ingest_summary.json").read_text() == (fast / "ingest_summary.json").read_text()
    for table in ("events", "quarantine"):
        a, b = pq.read_table(ref / table).to_pylist(), pq.read_table(fast / table).to_pylist()
        assert a == b and a


def test_event_batch_holds_what_the_row_dicts_held():
    """The column-wise batch against Event.as_row (the row-dict path it replaced), on real events,
    a raw text over RAW_LIMIT included."""
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source
    from parsers.schema import RAW_LIMIT

    events = []
    for p in sorted((REAL_LOGS / CLUSTERS[1]).rglob("*.gz")):
        events += parse_source(p.read_bytes(), SourceContext(path=p.name, cluster="c"))[0]
    events[0].raw = "x" * (RAW_LIMIT + 5)
    assert len(events) > 100 and any(ev.detail for ev in events) and any(ev.isr for ev in events)
    rows = ingest._event_batch(events).to_pylist()
    want = [ev.as_row() | {"row_kind": "event"} for ev in events]
    for r in want:  # Arrow hands timestamps back as datetimes
        r["ts"] = r["ts"] and datetime.fromtimestamp(r["ts"] / 1e6, timezone.utc)
    assert rows == want
