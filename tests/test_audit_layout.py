"""Which cluster and day each file under an audit root belongs to, and the incremental plan."""
import os
from pathlib import Path

import pytest

from conftest import REAL_LOGS
from forensics.audit.layout import assign_clusters, file_day, in_days, list_remote
from forensics.audit.manifest import Manifest
from forensics.sources import collect_inputs


def touch(root: Path, rel: str, text: str = "x\n") -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def clusters_of(root: Path, cluster=None) -> dict[str, str]:
    inputs = collect_inputs([str(root)], root / ".extract")
    return {f.display[len(str(root)) + 1:]: f.cluster_hint for f in assign_clusters(inputs, str(root), cluster)}


def test_hive_style_folder_per_cluster_and_single_cluster_layouts(tmp_path):
    hive = tmp_path / "hive"
    touch(hive, "cluster=prod-a/date=2026-03-01/broker=3/server.log.gz")
    touch(hive, "cluster=prod-b/date=2026-03-02/broker=1/controller.log")
    assert clusters_of(hive) == {"cluster=prod-a/date=2026-03-01/broker=3/server.log.gz": "prod-a",
                                 "cluster=prod-b/date=2026-03-02/broker=1/controller.log": "prod-b"}
    per = tmp_path / "archive"
    touch(per, "payments/broker-1/server.log.2026-03-01-14")
    touch(per, "search/kafka2/server.log")
    touch(per, "README.txt")
    assert clusters_of(per) == {"payments/broker-1/server.log.2026-03-01-14": "payments",
                                "search/kafka2/server.log": "search", "README.txt": "archive"}
    one = tmp_path / "prod-c"
    touch(one, "broker-1/server.log")
    touch(one, "broker-2/server.log")
    assert set(clusters_of(one).values()) == {"prod-c"}
    assert set(clusters_of(one, "named").values()) == {"named"}


def test_days_from_paths_and_the_since_until_window():
    assert file_day("x/cluster=a/date=2026-03-01/broker=3/server.log.gz") == "2026-03-01"
    assert file_day("logs/server.log.2021-04-28-10.gz") == "2021-04-28"
    assert file_day("logs/controller.log.2016-09-14") == "2016-09-14"
    assert file_day("logs/server.log") is None
    assert in_days("2026-03-01", "2026-03-01", "2026-03-01") and not in_days("2026-02-28", "2026-03-01", None)
    assert in_days(None, "2026-03-01", "2026-03-02")  # no day in the name: read, its events say when


def test_manifest_plan_new_changed_unchanged_removed(tmp_path):
    root = tmp_path / "r"
    touch(root, "cluster=a/date=2026-03-01/broker=1/server.log", "one\n")
    touch(root, "cluster=a/date=2026-03-02/broker=1/server.log", "two\n")
    files = assign_clusters(collect_inputs([str(root)], tmp_path / "x"), str(root), None)
    m = Manifest()
    plan = m.plan(files, lambda e: True)
    assert len(plan.process) == 2 and not plan.skip
    for f in files:
        m.record(f, [("a", f.display.split("date=")[1][:10])], {"kind": "broker_log"})
    m.save(tmp_path / "manifest.json")
    m = Manifest.load(tmp_path / "manifest.json")
    assert len(m.plan(files, lambda e: True).skip) == 2
    # same size, new mtime, same head: a copy, not new work
    p = root / "cluster=a/date=2026-03-01/broker=1/server.log"
    os.utime(p, (1, 1))
    files = assign_clusters(collect_inputs([str(root)], tmp_path / "x"), str(root), None)
    assert len(m.plan(files, lambda e: True).skip) == 2
    # same size, different bytes, new mtime: changed
    p.write_text("ONE\n")
    os.utime(p, (2, 2))
    files = assign_clusters(collect_inputs([str(root)], tmp_path / "x"), str(root), None)
    plan = m.plan(files, lambda e: True)
    assert [f.display for f in plan.process] == [str(p)] and plan.changed == [str(p)]
    assert m.partitions_of(str(p)) == [("a", "2026-03-01")]
    # gone: removed only when in this run's scope
    (root / "cluster=a/date=2026-03-02/broker=1/server.log").unlink()
    files = assign_clusters(collect_inputs([str(root)], tmp_path / "x"), str(root), None)
    assert m.plan(files, lambda e: True).removed == [str(root / "cluster=a/date=2026-03-02/broker=1/server.log")]
    assert m.plan(files, lambda e: False).removed == []


@pytest.mark.spark
def test_spark_lists_a_uri_root_without_reading_it(spark):
    name = "JacksonFarley__Kafka-Data-Centric-Project"
    got = list_remote(spark, (REAL_LOGS / name).as_uri())
    want = sorted(p for p in (REAL_LOGS / name).rglob("*") if p.is_file() and not p.name.startswith("."))
    assert [Path(f.read_path.replace("file:", "", 1)).name for f in got.files] == [p.name for p in want]
    assert [f.size for f in got.files] == [p.stat().st_size for p in want]
    assert all(f.mtime == int(p.stat().st_mtime) for f, p in zip(got.files, want))
    assigned = assign_clusters(got, REAL_LOGS.as_uri(), None)
    assert {f.cluster_hint for f in assigned} == {name}
