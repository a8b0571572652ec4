"""Ingest through Spark on real broker logs: accounting holds, events come back whole."""
import gzip
import json

import pytest

from conftest import REAL_LOGS
from forensics.ingest import run_ingest, write_outputs
from forensics.sources import collect_inputs

pytestmark = pytest.mark.spark


def test_ingest_real_cluster_accounts_for_every_line(spark, tmp_path):
    src = REAL_LOGS / "Artificial-Ridiculous__kafka"
    inputs = collect_inputs([str(src)], tmp_path / "work")
    result = run_ingest(spark, inputs, cluster="ar")
    write_outputs(result, tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "ingest_summary.json").read_text())
    assert len(summary["files"]) == len(list(src.rglob("*.gz")))
    for f in summary["files"]:
        assert f["lines"] == f["parsed"] + f["other"] + f["unrecognized"] + f["quarantined"], f["path"]
        # independent count: the physical lines of the file itself
        with gzip.open(f["path"]) as fh:
            assert f["lines"] == fh.read().count(b"\n"), f["path"]
    events = spark.read.parquet(str(tmp_path / "out" / "events"))
    assert events.count() == summary["totals"]["events"] > 0
    by_type = {r["event_type"]: r["count"] for r in events.groupBy("event_type").count().collect()}
    assert by_type == summary["event_counts"]


def test_ingest_reports_unreadable_and_foreign_files_and_goes_on(spark, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    (d / "server.log").write_text("[2021-01-01 00:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n")
    (d / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4)
    (d / "broken.log.gz").write_bytes(gzip.compress(b"[2021-01-01 00:00:00,000] INFO x (a.b)\n" * 100)[:60])
    inputs = collect_inputs([str(d)], tmp_path / "work")
    result = run_ingest(spark, inputs, cluster="t")
    files = {f["path"].rsplit("/", 1)[1]: f for f in result.summary_json["files"]}
    assert "binary file of unknown format" in files["photo.jpg"]["errors"][0]
    assert any("truncated" in e for e in files["broken.log.gz"]["errors"])
    assert files["server.log"]["lines"] == 1 and not files["server.log"]["errors"]
