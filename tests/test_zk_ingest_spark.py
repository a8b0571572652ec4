"""One ingest call in Spark over a ZooKeeper data dir, a gzipped real snapshot, a zkCli dump and broker logs."""
from __future__ import annotations

import pytest

from conftest import REAL_LOGS, ZK_REAL
from forensics.ingest import run_ingest
from forensics.sources import collect_inputs
from parsers.schema import event_from_row
from parsers.zookeeper.events import link_sessions

pytestmark = pytest.mark.spark

ZKCLI = """[zk: localhost:2181(CONNECTED) 0] get -s /brokers/topics/orders/partitions/0/state
{"controller_epoch":2,"leader":2,"version":1,"leader_epoch":2,"isr":[2,3]}
cZxid = 0x41
ctime = Sun Nov 22 04:48:40 UTC 2026
mZxid = 0x5f
mtime = Sun Nov 22 04:48:43 UTC 2026
pZxid = 0x41
cversion = 0
dataVersion = 2
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 74
numChildren = 0
"""


def test_zookeeper_sources_mixed_with_broker_logs(spark, tmp_path):
    dump = tmp_path / "zk-get.txt"
    dump.write_text(ZKCLI)
    zk_dir = ZK_REAL / "s2_controller_failover" / "version-2"
    mixed = REAL_LOGS / "vishnu1368__kafka_2.12-2.5.1"  # broker logs + a real gzipped snapshot
    inputs = collect_inputs([str(zk_dir), str(mixed), str(dump)], tmp_path / "work")
    result = run_ingest(spark, inputs, cluster="s2")
    kinds = {}
    for f in result.summary_json["files"]:
        assert f["lines"] == f["parsed"] + f["other"] + f["unrecognized"] + f["quarantined"], f["path"]
        kinds.setdefault(f["kind"], []).append(f["path"].rsplit("/", 1)[-1])
    assert sorted(kinds["zk_txnlog"]) == ["log.1", "log.45"]
    assert sorted(kinds["zk_snapshot"]) == ["snapshot.0", "snapshot.0.gz", "snapshot.43"]
    assert kinds["znode_dump"] == ["zk-get.txt"] and len(kinds["broker_log"]) == 6
    assert all(not f["errors"] for f in result.summary_json["files"] if f["kind"].startswith("zk"))

    by_kind = {r["source_kind"]: r["count"] for r in result.events.groupBy("source_kind").count().collect()}
    per_file = {}
    for f in result.summary_json["files"]:
        per_file[f["kind"]] = per_file.get(f["kind"], 0) + f["events"]
    assert by_kind == {k: v for k, v in per_file.items() if v}

    # The ZooKeeper facts are few: bring them to the driver and link them (ground truth of s2).
    rows = result.events.where("source_kind in ('zk_txnlog', 'zk_snapshot') and event_type != 'zk_txn'").collect()
    linked = link_sessions(event_from_row(r.asDict()) for r in rows if r["source_file"].find("vishnu") < 0)
    dead = [(e.subject_broker, e.zxid, e.detail["cause"]) for e in linked if e.event_type == "broker_deregistered"]
    assert dead == [(1, 0x59, "session_expired")]
    won = [(e.controller_id, e.zxid) for e in linked if e.event_type == "controller_znode_created"]
    assert won == [(1, 0x1A), (3, 0x5A)]
    obs = result.events.where("source_kind = 'znode_dump'").collect()
    assert [(r["topic"], r["partition"], r["leader"], list(r["isr"]), r["zxid"]) for r in obs] == [("orders", 0, 2, [2, 3], 0x5F)]
