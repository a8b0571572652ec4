"""Local files read by tasks of even work (forensics.filetasks) against the reference, Spark's binaryFile.

Independent truth: the reference path itself (binaryFile hands each file's bytes to the same
parser) and, for the plan, each gzip file's real decompressed size.
"""
import gzip
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import REAL_LOGS

from forensics import filetasks, ingest, staging
from forensics.sources import FileRef, collect_inputs
from parsers.schema import FIELD_NAMES

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


def test_plan_puts_every_file_in_one_task_heaviest_first_within_sparks_bounds():
    refs = [FileRef(f"/l/{i}", f"f{i}", size=s) for i, s in enumerate([40, 40, 35, 20, 10, 5, 5, 3, 1, 1, 1])]
    tasks = filetasks.plan_tasks(refs, min_tasks=4, max_task_bytes=1000, open_cost=1, weight=lambda r: r.size)
    assert sorted(r.display for t in tasks for r in t) == sorted(r.display for r in refs)
    loads = [sum(r.size for r in t) for t in tasks]
    assert len(tasks) >= 4 and loads == sorted(loads, reverse=True)
    # enough tasks for min_tasks: none over the total / min_tasks unless it is one file
    assert all(load <= -(-161 // 4) or len(t) == 1 for load, t in zip(loads, tasks))
    # Spark's settings bound the tasks as they bound its file partitions
    one_each = filetasks.plan_tasks(refs, min_tasks=1, max_task_bytes=1, open_cost=1, weight=lambda r: r.size)
    assert sorted(len(t) for t in one_each) == [1] * len(refs)
    assert len(filetasks.plan_tasks(refs, min_tasks=1, max_task_bytes=1 << 30, weight=lambda r: r.size)) == 1
    capped = filetasks.plan_tasks(refs, min_tasks=1, max_task_bytes=50, open_cost=1, weight=lambda r: r.size)
    assert len(capped) >= 4 and all(sum(r.size for r in t) <= 50 for t in capped)
    # one task asked for (spark.sql.files.minPartitionNum 1, no size bound): one, whatever the cores
    assert len(filetasks.plan_tasks(refs, min_tasks=1, max_task_bytes=1 << 30, open_cost=1, weight=lambda r: r.size,
                                    slots=2)) == 1


def _finish_times(tasks, slots, cost):
    """When each core finishes: Spark launches a stage's tasks in index order, each on the first core free."""
    free = [0] * slots
    for t in tasks:
        i = free.index(min(free))
        free[i] += sum(cost(r) for r in t)
    return sorted(free)


@pytest.mark.parametrize("slots", [2, 3, 4])
def test_the_cores_finish_within_one_file_of_each_other(slots):
    """The 2 GB rotated corpus of issue 48 (benchmarks/real_corpus.py: 86 files of ~40 MB of text, some shorter
    at the end of a cluster's share) in tasks of Spark's default 128 MB: tasks of even size left one core idle
    while the 15th ran alone. The last tasks are small, so no core waits longer than the larger of one file and
    a quarter task for the others."""
    import random

    rng = random.Random(48)
    sizes = [40 << 20] * 70 + [rng.randrange(1 << 20, 40 << 20) for _ in range(16)]
    refs = [FileRef(f"/l/{i}", f"f{i:03d}", size=s) for i, s in enumerate(sizes)]
    split = 128 << 20
    tasks = filetasks.plan_tasks(refs, min_tasks=slots * filetasks.TASKS_PER_CORE, max_task_bytes=split,
                                 open_cost=512 << 10, weight=lambda r: r.size, slots=slots)
    assert sorted(r.display for t in tasks for r in t) == sorted(r.display for r in refs)
    finish = _finish_times(tasks, slots, lambda r: r.size)
    assert finish[-1] - finish[0] <= max(40 << 20, split // filetasks.TASKS_PER_CORE)
    # and for any mix of sizes (a core idles at most the last task it did not get: a small one)
    for seed in range(20):
        rng = random.Random(seed)
        sizes = [rng.choice([rng.randrange(1, 1 << 20), rng.randrange(1, 60 << 20)]) for _ in range(rng.randrange(5, 200))]
        refs = [FileRef(f"/l/{i}", f"f{i:03d}", size=s) for i, s in enumerate(sizes)]
        tasks = filetasks.plan_tasks(refs, min_tasks=slots * filetasks.TASKS_PER_CORE, max_task_bytes=split,
                                     open_cost=512 << 10, weight=lambda r: r.size, slots=slots)
        finish = _finish_times(tasks, slots, lambda r: r.size)
        assert finish[-1] - finish[0] <= max(max(sizes), split // filetasks.TASKS_PER_CORE), seed


@pytest.mark.spark
def test_tasks_reading_local_files_write_what_binaryfile_gives(spark, tmp_path, monkeypatch):
    """binaryFile (the reference), tasks reading local files with their events on the Arrow path, and the
    same tasks staging their events as Parquet (forensics.staging): the same summary, events and quarantine,
    in Spark (values and types) and in the written Parquet."""
    src = tmp_path / "in"
    for c in CLUSTERS:
        shutil.copytree(REAL_LOGS / c, src / c)
    (src / "empty.log").write_bytes(b"")
    outs, in_spark, schemas = [], [], []
    for name, local, staged in (("binaryfile", False, False), ("arrow", True, False), ("staged", True, True)):
        monkeypatch.setattr(ingest, "LOCAL_TASKS", local)
        monkeypatch.setattr(ingest, "STAGE_EVENTS", staged)
        inputs = collect_inputs([str(src)], tmp_path / f"work-{name}")
        result = ingest.run_ingest(spark, inputs, cluster="c")
        kinds = {r["row_kind"] for r in result.persisted.select("row_kind").distinct().collect()}
        if staged:
            # the path under test was taken: events in the staging folder, none through the cached Arrow rows
            folder = Path(result.staging)
            assert folder.is_dir() and len(list(folder.glob("part-*.parquet"))) > 3
            assert "event" not in kinds and "summary" in kinds
        else:
            assert result.staging is None and "event" in kinds
        schemas.append(result.events.schema)
        in_spark.append(result.events.orderBy(*ingest.SORT_KEYS).collect())
        out = tmp_path / f"out-{name}"
        ingest.write_outputs(result, out)
        ingest.release(result)
        if staged:
            assert not folder.exists() and result.staging is None
        outs.append(out)
    ref = outs[0]
    assert [f.name for f in schemas[0].fields] == list(FIELD_NAMES)
    for other, rows, schema in zip(outs[1:], in_spark[1:], schemas[1:]):
        assert schema == schemas[0]
        assert rows == in_spark[0] and any(r["ts"] for r in rows)
        assert (ref / "ingest_summary.json").read_text() == (other / "ingest_summary.json").read_text()
        for table in ("events", "quarantine"):
            a, b = pq.read_table(ref / table), pq.read_table(other / table)
            assert a.schema == b.schema
            assert a.to_pylist() == b.to_pylist() and a.num_rows


@pytest.mark.spark
def test_staged_parquet_reads_back_as_the_arrow_path_gives(spark, tmp_path):
    """Every column of events staged by stage_events and read by Spark against the same events handed to
    Spark through mapInArrow, stamps from before 1900 and after 2262 (nanoseconds' end) and nulls included."""
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    events = []
    for p in sorted((REAL_LOGS / CLUSTERS[1]).rglob("*.gz")):
        events += parse_source(p.read_bytes(), SourceContext(path=p.name, cluster="c"))[0]
    assert len(events) > 100 and any(ev.isr for ev in events) and any(ev.detail for ev in events)
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    for ev, year in zip(events, (1, 1000, 1582, 1899, 2300, 9999)):
        ev.ts = (datetime(year, 3, 4, 5, 6, 7, 890123, tzinfo=timezone.utc) - epoch) // timedelta(microseconds=1)
    events[6].ts = None
    folder = tmp_path / "staged"
    folder.mkdir()
    ingest.stage_events(events[:3], str(folder / staging.staged_name(0, 0)))
    ingest.stage_events(events[3:], str(folder / staging.staged_name(1, 0)))
    ingest.stage_events([], str(folder / staging.staged_name(2, 0)))
    assert sorted(x.name for x in folder.iterdir()) == [staging.staged_name(0, 0), staging.staged_name(1, 0)]

    def arrow_path(batches):
        for _ in batches:
            for i in range(0, len(events), 50):
                yield ingest._event_batch(events[i:i + 50])

    want_df = spark.range(1, numPartitions=1).mapInArrow(arrow_path, ingest.OUT_DDL).drop("row_kind")
    got_df = staging.read(spark, str(folder))
    assert got_df.schema == want_df.schema
    key = ("source_file", "source_pos", "source_sub", "event_type", "ts")
    # a session set to refuse pre-1900 stamps in files of unknown calendar (Spark 3's default) reads them all the same
    rebase = "spark.sql.parquet.datetimeRebaseModeInRead"
    saved = spark.conf.get(rebase)
    spark.conf.set(rebase, "EXCEPTION")
    try:
        want, got = want_df.orderBy(*key).collect(), got_df.orderBy(*key).collect()
    finally:
        spark.conf.set(rebase, saved)
    assert len(got) == len(events) and got == want
    assert {r["ts"].year for r in got if r["ts"]} >= {1, 1000, 1582, 1899, 2300, 9999}
    # and through Spark's own writer, as write_outputs writes them
    for name, df in (("want", want_df), ("got", got_df)):
        df.orderBy(*key).write.parquet(str(tmp_path / name))
    assert pq.read_table(tmp_path / "want").to_pylist() == pq.read_table(tmp_path / "got").to_pylist()


def test_only_a_local_master_stages():
    for m in ("local", "local[2]", "local[*]", "local[4,2]"):
        assert staging.shares_filesystem(m), m
    for m in (None, "", "local-cluster[2,1,1024]", "yarn", "spark://h:7077", "k8s://https://h:443", "mesos://h:5050",
              "locally"):
        assert not staging.shares_filesystem(m), m


@pytest.mark.spark
def test_a_split_size_that_would_cut_staged_files_into_byte_tasks_keeps_the_arrow_path(spark, tmp_path):
    """Spark reads files in splits of spark.sql.files.maxPartitionBytes, read options or not: at 1 byte (as
    test_determinism sets it to get one input file per task) a staged file of N bytes became N read tasks."""
    src = tmp_path / "in"
    shutil.copytree(REAL_LOGS / CLUSTERS[1], src)  # 16 files: each staged file would be thousands of 1-byte tasks
    saved = spark.conf.get("spark.sql.files.maxPartitionBytes", None)
    try:
        got = {}
        for size in ("1", str(staging.MIN_SPLIT_BYTES)):
            spark.conf.set("spark.sql.files.maxPartitionBytes", size)
            result = ingest.run_ingest(spark, collect_inputs([str(src)], tmp_path / f"w{size}"), cluster="c")
            if size == "1" and result.staging is not None:  # (collecting would take one task per byte)
                ingest.release(result)
                pytest.fail("events were staged with 1-byte splits")
            got[size] = (result.staging is not None, result.events.rdd.getNumPartitions(),
                         sorted(map(tuple, result.events.orderBy(*ingest.SORT_KEYS).collect())))
            ingest.release(result)
    finally:
        if saved is None:
            spark.conf.unset("spark.sql.files.maxPartitionBytes")
        else:
            spark.conf.set("spark.sql.files.maxPartitionBytes", saved)
    (staged_1, parts_1, rows_1), (staged_m, _, rows_m) = got["1"], got[str(staging.MIN_SPLIT_BYTES)]
    assert not staged_1 and staged_m
    assert parts_1 < 100  # the Arrow path's tasks, not one per byte of Parquet
    assert rows_1 == rows_m and rows_1


def test_a_staging_folder_never_released_goes_at_exit(tmp_path):
    """In a fresh interpreter (no Spark: the folder falls back on the temporary directory), as when a
    command fails between run_ingest and release."""
    code = ("import sys; from forensics import staging\n"
            "p = staging.new_dir(None)\n"
            "open(p + '/' + staging.staged_name(0, 0), 'w').write('x')\n"
            "print(p)\n")
    env = dict(os.environ, TMPDIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    folder = Path(out.stdout.strip())
    assert folder.parent == tmp_path and folder.name.startswith("kf-staged-events-")
    assert not folder.exists() and list(tmp_path.iterdir()) == []


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
