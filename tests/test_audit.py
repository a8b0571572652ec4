"""``audit`` on a generated multi-cluster tree and on the real logs.

Independent truths: the files on disk (what must be read, skipped, rewritten), the postmortem pipeline
run per cluster on the same files (the incident table must say what it says), and a fresh audit of
the same root (an incremental run must end in the same bytes, whatever the number of shards).
"""
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import REAL_LOGS, REAL_LOGS2
from forensics.audit.run import AuditOptions, run_audit
from forensics.audit.store import escape
from forensics.ingest import release, run_ingest
from forensics.pipeline import collect_events
from forensics.report.build import build_report
from forensics.sources import collect_inputs
from replay_engine.api import replay
from samplegen.corpus import AuditSpec, write_audit_tree

pytestmark = pytest.mark.spark

SPEC = AuditSpec(clusters=3, days=4, brokers=3, bytes_per_file=5000, seed=2, partitions=60, incidents_per_day=1.0)
TABLES = ("events", "partition_timeline", "incidents", "controller_changes", "broker_availability")


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def table_files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / "tables").rglob("*.parquet"))}


def incident_rows(out: Path, cluster: str) -> list[dict]:
    rows = []
    for f in sorted((out / "tables" / "incidents" / f"cluster={escape(cluster)}").glob("date=*/part-00000.parquet")):
        rows += pq.read_table(f).to_pylist()
    return rows


def comparable(incidents: list[dict]) -> list[tuple]:
    from forensics.audit.tables import _us

    out = []
    for i in incidents:
        start, end = i["start"], i["end"]
        if isinstance(start, str) or start is None:
            start, end = _us(start), _us(end)
        else:
            start = int(start.timestamp() * 1_000_000)
            end = None if end is None else int(end.timestamp() * 1_000_000)
        out.append((i["topic"], i["cause_kind"], i["count"], list(i["partitions"]), start, end, i["summary"]))
    return sorted(out)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A 3-cluster tree whose last day arrives only before the third run."""
    base = tmp_path_factory.mktemp("audit-tree")
    full = base / "full"
    write_audit_tree(SPEC, full)
    days = sorted({p.name for p in full.glob("cluster=*/date=*")})
    root = base / "root"
    shutil.copytree(full, root, ignore=lambda d, names: [n for n in names if n == days[-1]])
    return full, root, days[-1]


@pytest.fixture(scope="module")
def runs(spark, tree, tmp_path_factory):
    full, root, last = tree
    out = tmp_path_factory.mktemp("audit-out") / "inc"
    opts = AuditOptions(str(root), out, shards=3)
    first = run_audit(opts)
    events_before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (out / "tables" / "events").rglob("*.parquet")}
    tables_before = table_files(out)
    second = run_audit(opts)
    tables_second = table_files(out)
    for src in full.glob(f"cluster=*/{last}"):
        shutil.copytree(src, root / src.relative_to(full))
    third = run_audit(opts)
    return {"out": out, "first": first, "second": second, "third": third, "events_before": events_before,
            "tables_before": tables_before, "tables_second": tables_second, "root": root, "last": last}


def test_first_run_reads_every_file_and_writes_every_table(runs, tree):
    _, root, _ = tree
    s = runs["first"]
    n_first = s["files_processed"]
    assert n_first > 0 and s["files_skipped"] == 0 and s["files_removed"] == 0
    assert s["clusters"] == ["kafka-events", "kafka-logs", "kafka-payments"]
    for t in TABLES:
        assert any((runs["out"] / "tables" / t).glob("cluster=*/date=*/part-00000.parquet")), t
    for k in ("files_processed", "files_skipped", "incidents", "leaderless_partition_seconds"):
        assert k in s
    assert s["incidents"] == sum(st["incidents"] for st in s["by_cluster"].values()) > 0
    html = (runs["out"] / "audit.html").read_text()
    assert "Outages per day" in html and "replication factor 1" in html


def test_a_rerun_without_changes_reads_nothing_and_changes_nothing(runs):
    s = runs["second"]
    assert s["files_processed"] == 0 and s["files_skipped"] == runs["first"]["files_processed"]
    assert runs["tables_second"] == runs["tables_before"]


def test_a_new_day_is_the_only_thing_read_and_rewritten(runs, tree):
    full, _, last = tree
    s = runs["third"]
    assert s["files_processed"] == len([p for p in files_under(full) if f"/{last}/" in str(p)])
    assert s["files_skipped"] == runs["first"]["files_processed"]
    # the events of earlier days keep their very files: nothing there was rewritten
    for p, (ino, mtime) in runs["events_before"].items():
        if f"date={last[len('date='):]}" in str(p):
            continue
        assert p.exists() and (p.stat().st_ino, p.stat().st_mtime_ns) == (ino, mtime), p
    assert any((runs["out"] / "tables" / "events").glob(f"cluster=*/{last}/part-00000.parquet"))


def test_incremental_equals_a_fresh_run_whatever_the_shards(spark, runs, tmp_path_factory):
    fresh = tmp_path_factory.mktemp("audit-fresh") / "out"
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "1")  # the incremental runs used the session's 8
    try:
        s = run_audit(AuditOptions(str(runs["root"]), fresh, shards=1))
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    assert before != "1"
    assert table_files(fresh) == table_files(runs["out"])
    def findings(summary):  # how many shards ran is the run's setting, not a finding
        return {c: {k: v for k, v in st.items() if k != "shards"} for c, st in summary["by_cluster"].items()}

    assert findings(s) == findings(runs["third"])
    assert {st["shards"] for st in s["by_cluster"].values()} == {1}
    assert s["files_processed"] == runs["first"]["files_processed"] + runs["third"]["files_processed"]


def postmortem_incidents(spark, root: Path, workdir: Path) -> dict[str, list[dict]]:
    """What the postmortem pipeline (Spark ingest, replay, report) finds per cluster in the same files."""
    return postmortem_run(spark, root, workdir)[0]


def postmortem_run(spark, root: Path, workdir: Path) -> tuple[dict[str, list[dict]], dict]:
    """``postmortem_incidents`` and the ingest's summary (with the clusters it told apart)."""
    from forensics.audit.layout import assign_clusters
    from forensics.sources import Inputs

    inputs = collect_inputs([str(root)], workdir)
    inputs = Inputs(assign_clusters(inputs, str(root), None), inputs.problems)
    ing = run_ingest(spark, inputs)
    try:
        events = collect_events(ing)
    finally:
        release(ing)
    by_cluster: dict[str, list[dict]] = {}
    for res in replay(events):
        report = build_report([res], ing.summary_json, [e for e in events if e.cluster == res.cluster],
                              sources=[str(root)])
        by_cluster[res.cluster] = report["incidents"]
    return by_cluster, ing.summary_json


def test_incident_table_matches_postmortem_on_the_same_files(spark, runs, tmp_path):
    want = postmortem_incidents(spark, runs["root"], tmp_path / "x")
    assert sorted(want) == runs["third"]["clusters"]
    for cluster, incidents in want.items():
        got = [r for r in incident_rows(runs["out"], cluster) if r["outage"] and r["cause_kind"] != "under_min_isr"]
        assert got and comparable(got) == comparable(incidents), cluster


@pytest.mark.parametrize("clusters", [
    # ZooKeeper mode from logs alone (outages of RF=1 partitions) and KRaft 4.1 logs
    ("AndreasTraut__kafka_2.13-2.8.0", "GraphLogistics__kafka"),
    pytest.param(None, id="every-cluster", marks=pytest.mark.corpus)])
def test_audit_of_the_real_logs_matches_postmortem_per_cluster(spark, tmp_path, clusters):
    root = REAL_LOGS
    if clusters is not None:  # a root holding only these clusters' folders
        root = tmp_path / "root"
        for c in clusters:
            shutil.copytree(REAL_LOGS / c, root / c)
    out = tmp_path / "real"
    s = run_audit(AuditOptions(str(root), out, shards=3))
    want = postmortem_incidents(spark, root, tmp_path / "x")
    folders = sorted(p.name for p in root.iterdir() if p.is_dir())
    # a folder holding several clusters is replayed as postmortem replays it: each of them alone, by its own name
    assert set(s["clusters"]) == set(want)
    assert {s["by_cluster"][c]["folder"] for c in s["clusters"]} >= set(folders)
    assert s["files_processed"] == len(files_under(root))
    for name in want:
        got = [r for r in incident_rows(out, name) if r["outage"] and r["cause_kind"] != "under_min_isr"]
        assert comparable(got) == comparable(want[name]), name
    assert sum(len(v) for v in want.values()) == s["incidents"] > 0
    json.dumps(s)  # the summary is plain JSON


def test_audit_page_draws_in_chromium(runs, tmp_path):
    from browser import load, page_blob

    page = runs["out"] / "audit.html"
    blob = page_blob(page.read_text())
    days = next(f for f in blob["figures"] if f["div"] == "audit-days")
    per_day = sum(sum(tr["y"]) for tr in days["data"])
    assert per_day == runs["third"]["incidents"]  # every outage counted once, on its day
    loaded = load(page, tmp_path, screenshot=False)
    assert loaded.console == []
    assert f'data-drawn="{len(blob["figures"])}"' in loaded.dom and len(blob["figures"]) == 5


def test_a_cluster_whose_files_are_all_removed_leaves_the_tables(spark, tmp_path):
    """Its files gone from the root, a rerun replays a cluster with no events left: its timeline, incidents and
    state go (the replay's timeline write is the new truth for every cluster it was asked for, those with no
    rows too); the other cluster's tables keep their bytes."""
    spec = AuditSpec(clusters=2, days=2, brokers=3, bytes_per_file=4000, seed=5, partitions=20, incidents_per_day=1.0)
    root, out = tmp_path / "root", tmp_path / "out"
    write_audit_tree(spec, root)
    gone, kept = sorted(p.name.split("=", 1)[1] for p in root.glob("cluster=*"))
    opts = AuditOptions(str(root), out, shards=2)
    run_audit(opts)
    assert (out / "tables" / "partition_timeline" / f"cluster={gone}").is_dir()
    before = {k: v for k, v in table_files(out).items() if f"cluster={kept}" in k}
    shutil.rmtree(root / f"cluster={gone}")
    s = run_audit(opts)
    assert s["files_removed"] > 0
    after = table_files(out)
    assert not [k for k in after if f"cluster={gone}" in k]
    assert {k: v for k, v in after.items() if f"cluster={kept}" in k} == before
    assert not list((out / "clusters").glob(f"{gone}*"))


NOVA = REAL_LOGS2 / "NovaSeele__KafkaDemo"  # 3.6.0, brokers 0-2, 'Cluster ID = v22dySzFROGZtN_eOO8rRA'
TUSHAR = REAL_LOGS2 / "Tushar-Nagdive-Dev__kafka-code"  # 3.8.0, brokers 0-2, 'Cluster ID = ferJwTLsTEivjkl4i0_WEw'
CHASE = "chase-lewis__JIE7351"  # one laptop's ZooKeeper data made new again and again (tests/test_clusters.py)


@pytest.mark.parametrize("chase", [False, pytest.param(True, marks=pytest.mark.slow, id="with-chase-lewis")])
def test_a_folder_holding_several_clusters_is_replayed_as_postmortem_replays_it_across_runs(spark, tmp_path, chase):
    """A folder with two real clusters side by side (the same broker ids 0-2 in both, each naming its cluster id),
    and (opt-in: 8 clusters, 36,077 events) chase-lewis, a laptop whose logs name five cluster ids and whose
    controller epoch went back twice: the audit replays each cluster alone, by postmortem's names, with
    postmortem's incidents, and says what told them apart as postmortem says it. A rerun keeps it; once the folder
    holds one cluster again, the told-apart clusters' tables and states go and the folder is replayed under its
    own name."""
    root, out = tmp_path / "root", tmp_path / "out"
    shutil.copytree(NOVA, root / "incident" / "dev")
    shutil.copytree(TUSHAR, root / "incident" / "prod")
    if chase:
        shutil.copytree(REAL_LOGS / CHASE, root / CHASE)
    opts = AuditOptions(str(root), out, shards=2)
    s = run_audit(opts)
    want, summary = postmortem_run(spark, root, tmp_path / "x")
    assert s["clusters"] == sorted(want)
    assert [c for c in s["clusters"] if c.startswith("incident")] == ["incident [ferJwTLsTEivjkl4i0_WEw]",
                                                                      "incident [v22dySzFROGZtN_eOO8rRA]"]
    assert len([c for c in s["clusters"] if c.startswith(CHASE)]) == (8 if chase else 0)
    folders = [CHASE, "incident"] if chase else ["incident"]
    assert {s["by_cluster"][c]["folder"] for c in s["clusters"]} == set(folders)
    told = sorted(summary["clusters_told_apart"], key=lambda r: r["folder"])
    assert s["clusters_told_apart"] == json.loads(json.dumps(told))
    assert [r["folder"] for r in told] == folders
    for name in want:
        got = [r for r in incident_rows(out, name) if r["outage"] and r["cause_kind"] != "under_min_isr"]
        assert comparable(got) == comparable(want[name]), name

    tables = table_files(out)
    again = run_audit(opts)
    assert again["files_processed"] == 0 and table_files(out) == tables
    assert again["clusters_told_apart"] == s["clusters_told_apart"] and again["clusters"] == s["clusters"]

    shutil.rmtree(root / "incident" / "prod")
    third = run_audit(opts)
    want, _ = postmortem_run(spark, root, tmp_path / "y")
    assert third["clusters"] == sorted(want) and "incident" in want
    assert [r["folder"] for r in third["clusters_told_apart"]] == folders[:-1]
    assert not [k for k in table_files(out) if f"cluster={escape('incident [')}" in k]
    assert not list((out / "clusters").glob(f"{escape('incident [')}*"))
    for name in want:
        got = [r for r in incident_rows(out, name) if r["outage"] and r["cause_kind"] != "under_min_isr"]
        assert comparable(got) == comparable(want[name]), name
