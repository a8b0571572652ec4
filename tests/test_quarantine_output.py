"""The ingest command's ``quarantine/`` written by the driver with pyarrow (``ingest.quarantine_rows``,
``stage_output.write_quarantine``) holds what Spark's sort and write of the ``quarantine`` DataFrame holds: the same
rows in the same order, the same columns and types; past QUARANTINE_IN_DRIVER lines Spark still writes them."""
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import forensics.ingest as ingest
import parsers.common.accounting as accounting
from conftest import REAL_LOGS
from forensics import stage_output
from forensics.ingest import release, run_ingest, write_outputs
from forensics.stage_output import write_quarantine
from forensics.sources import collect_inputs

pytestmark = pytest.mark.spark

SNIPPETS = REAL_LOGS / "issue_snippets"  # lines quoted from issues: comment lines before any log header


def _read(folder: Path) -> pa.Table:
    """A Parquet folder's rows, part files in name order (as ingest_identity.py reads them)."""
    return pa.concat_tables([pq.read_table(p) for p in sorted(folder.glob("*.parquet"))])


def _schema(t: pa.Table) -> list[tuple]:
    return [(f.name, str(f.type), f.nullable) for f in t.schema]


def _ingest_both_ways(spark, tmp_path: Path, src: list[str], monkeypatch):
    inputs = collect_inputs(src, tmp_path / "work")
    result = run_ingest(spark, inputs, cluster="q")
    try:
        written = []
        monkeypatch.setattr(stage_output, "write_quarantine", lambda rows, out: written.append(len(rows)) or
                            write_quarantine(rows, out))
        write_outputs(result, tmp_path / "out")
        result.quarantine.write.mode("overwrite").parquet(str(tmp_path / "by_spark"))  # the path before this one
    finally:
        release(result)
    return written, _read(tmp_path / "out" / "quarantine"), _read(tmp_path / "by_spark")


def test_the_drivers_quarantine_is_sparks(spark, tmp_path, monkeypatch):
    written, mine, theirs = _ingest_both_ways(spark, tmp_path, [str(SNIPPETS)], monkeypatch)
    assert written == [mine.num_rows]  # written by the driver
    assert _schema(mine) == _schema(theirs)
    assert mine.to_pylist() == theirs.to_pylist()
    # independent: 01.log's first two lines are the snippet's comments, before any log header
    first = [r for r in mine.to_pylist() if r["source_file"].endswith("/01.log")]
    lines = (SNIPPETS / "01.log").read_text().splitlines()
    assert [(r["source_pos"], r["raw"]) for r in first] == [(1, lines[0]), (2, lines[1])]
    assert {r["category"] for r in first} == {"unrecognized"}


def test_past_the_bound_spark_writes_them(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "QUARANTINE_IN_DRIVER", 3)
    written, mine, theirs = _ingest_both_ways(spark, tmp_path, [str(SNIPPETS)], monkeypatch)
    assert written == []  # by Spark
    assert mine.num_rows > 3 and mine.to_pylist() == theirs.to_pylist()


def test_nothing_quarantined_is_an_empty_file_of_the_same_columns(spark, tmp_path, monkeypatch):
    d = tmp_path / "in"
    d.mkdir()
    (d / "server.log").write_text("[2021-01-01 00:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n")
    written, mine, theirs = _ingest_both_ways(spark, tmp_path, [str(d)], monkeypatch)
    assert written == [0] and mine.num_rows == theirs.num_rows == 0
    assert _schema(mine) == _schema(theirs)


def test_a_file_read_by_parts_keeps_its_first_lines(spark, tmp_path, monkeypatch):
    """A big file's parts each keep their lines; the file keeps its first KEEP_SAMPLES (run_ingest's window, in the
    driver, where the setting below reaches)."""
    import forensics.bigfiles as bigfiles

    monkeypatch.setattr(accounting, "KEEP_SAMPLES", 2)
    monkeypatch.setattr(bigfiles, "RANGE_BYTES", 1 << 10)  # the file below in several parts
    d = tmp_path / "in"
    d.mkdir()
    header = "[2021-01-01 00:{:02d}:{:02d},000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"
    # lines of NUL bytes (a text log's preallocated tail) are quarantined wherever they are: one every other line
    text = "".join("\x00" * 40 + "\n" + header.format(i // 60, i % 60) for i in range(200))
    (d / "server.log").write_text(text)
    written, mine, theirs = _ingest_both_ways(spark, tmp_path, [str(d)], monkeypatch)
    assert written == [2]
    assert mine.to_pylist() == theirs.to_pylist()
    assert [r["source_pos"] for r in mine.to_pylist()] == [1, 3]


def _jobs(spark, group: str, fn):
    """What ``fn`` returns, and how many Spark jobs it ran."""
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        got = fn()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return got, len(sc.statusTracker().getJobIdsForGroup(group))


def test_the_drivers_quarantine_is_read_in_one_job(spark, tmp_path, monkeypatch):
    """The files' counts of unrecognized and quarantined lines bound the rows the tasks kept: under
    QUARANTINE_IN_DRIVER they are read in one job (a limit's collect scans one partition, then four, then the
    rest), over it none is run."""
    import forensics.filetasks as filetasks

    monkeypatch.setattr(filetasks, "plan_tasks", lambda refs, *a, **k: [[r] for r in refs])  # a task per file
    result = run_ingest(spark, collect_inputs([str(SNIPPETS)], tmp_path / "work"), cluster="q")
    try:
        assert result.persisted.rdd.getNumPartitions() > 5
        kept = sum(s.unrecognized + s.quarantined for s in result.summaries)
        rows, jobs = _jobs(spark, "kf-quarantine-bounded", lambda: ingest.quarantine_rows(result.persisted, set(), kept))
        limited, limited_jobs = _jobs(spark, "kf-quarantine-limit", lambda: ingest.quarantine_rows(result.persisted, set()))
        assert rows == limited and len(rows) == kept  # issue_snippets: every such line kept (under KEEP_SAMPLES)
        assert jobs == 1 and limited_jobs > 1
        monkeypatch.setattr(ingest, "QUARANTINE_IN_DRIVER", kept - 1)
        assert _jobs(spark, "kf-quarantine-over", lambda: ingest.quarantine_rows(result.persisted, set(), kept)) == (None, 0)
    finally:
        release(result)


def test_the_parse_hands_its_quarantined_lines_over(spark, tmp_path, monkeypatch):
    """Under QUARANTINE_IN_DRIVER the parse's own collect brings the quarantined lines (forensics.quarantine_share):
    the write runs no job for them, only the events' write, and they are the rows the job of their own reads."""
    import forensics.filetasks as filetasks

    monkeypatch.setattr(filetasks, "plan_tasks", lambda refs, *a, **k: [[r] for r in refs])  # a task per file
    result = run_ingest(spark, collect_inputs([str(SNIPPETS)], tmp_path / "work"), cluster="q")
    try:
        kept = sum(s.unrecognized + s.quarantined for s in result.summaries)
        assert result.quarantined is not None and len(result.quarantined) == kept > 0
        by_job, jobs = _jobs(spark, "kf-quarantine-job", lambda: ingest.quarantine_rows(result.persisted, set(), kept))
        assert jobs == 1 and ingest.quarantine_rows(None, set(), kept, result.quarantined) == by_job
        _, write_jobs = _jobs(spark, "kf-quarantine-write", lambda: write_outputs(result, tmp_path / "out"))
        assert write_jobs == 1  # stage_output.write_events; none for the quarantine
    finally:
        release(result)
    # independent: 01.log's first two lines are the snippet's comments, before any log header
    mine = [r for r in _read(tmp_path / "out" / "quarantine").to_pylist() if r["source_file"].endswith("/01.log")]
    lines = (SNIPPETS / "01.log").read_text().splitlines()
    assert [(r["source_pos"], r["raw"]) for r in mine] == [(1, lines[0]), (2, lines[1])]


def test_a_task_past_its_share_leaves_them_to_the_cached_output(spark, tmp_path, monkeypatch):
    """A task with more quarantined lines than its share of QUARANTINE_IN_DRIVER hands over none of its rest: the
    driver reads them all from the cached output, and the folder holds what Spark's write holds."""
    import forensics.filetasks as filetasks
    from forensics.quarantine_share import REST

    monkeypatch.setattr(filetasks, "plan_tasks", lambda refs, *a, **k: [[r] for r in refs])
    inputs = collect_inputs([str(SNIPPETS)], tmp_path / "work")
    # every line within the bound, but the shares (the bound over the tasks) smaller than the largest file's lines
    counts = [s.unrecognized + s.quarantined for s in run_ingest(spark, inputs, cluster="q").summaries]
    monkeypatch.setattr(ingest, "QUARANTINE_IN_DRIVER", sum(counts))
    assert -(-sum(counts) // len(counts)) < max(counts)
    written, mine, theirs = _ingest_both_ways(spark, tmp_path, [str(SNIPPETS)], monkeypatch)
    assert written == [mine.num_rows] == [sum(counts)]  # still by the driver, after a job of their own
    assert mine.to_pylist() == theirs.to_pylist()
    result = run_ingest(spark, inputs, cluster="q")
    try:
        assert result.quarantined is None
        assert result.persisted.where(f"row_kind = '{REST}'").count() > 0
    finally:
        release(result)
