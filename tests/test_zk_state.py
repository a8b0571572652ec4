"""The tree at any zxid, against ZooKeeper's own FileTxnSnapLog.restore() of each zk_real data dir."""
from __future__ import annotations

import json

import pytest

from conftest import ZK_REAL
from parsers.zookeeper.snapshot import name_zxid, read_snapshot
from parsers.zookeeper.state import ZTree, state_at
from parsers.zookeeper.txnlog import read_txnlog
from zk_oracle import SCENARIOS


def _load(name):
    d = ZK_REAL / name / "version-2"
    snaps = [(name_zxid(p.name), read_snapshot(p.read_bytes())) for p in sorted(d.glob("snapshot.*"))]
    logs = [read_txnlog(p.read_bytes()) for p in sorted(d.glob("log.*"), key=lambda p: name_zxid(p.name))]
    return snaps, logs


@pytest.mark.parametrize("name", SCENARIOS)
def test_latest_snapshot_plus_logs_is_zookeepers_restored_tree(name):
    expected = json.loads((ZK_REAL / name / "oracle" / "replayed_final_tree.json").read_text())
    snaps, logs = _load(name)
    tree = state_at(snaps, logs)
    got = tree.to_json()
    assert got["last_zxid"] == expected["restored_last_zxid"]
    assert tree.applied == expected["replayed_txns_after_snapshot"]
    assert got["sessions"] == sorted(expected["sessions"], key=lambda s: int(s["id"], 16))
    assert got["nodes"] == expected["nodes"]
    assert tree.gaps == []


@pytest.mark.parametrize("name", SCENARIOS)
def test_replay_from_the_first_snapshot_reaches_the_same_tree(name):
    # Every txn replayed over the empty snapshot.0 must agree with ZooKeeper's restore too,
    # fuzzy-snapshot rules included (the snapshots in between are skipped).
    expected = json.loads((ZK_REAL / name / "oracle" / "replayed_final_tree.json").read_text())
    snaps, logs = _load(name)
    first = [s for s in snaps if s[0] == 0]
    assert state_at(first, logs).to_json()["nodes"] == expected["nodes"]
    assert state_at([], logs).to_json()["nodes"] == expected["nodes"]  # a fresh server's tree


def test_state_at_an_earlier_zxid_matches_that_snapshot_where_it_is_not_fuzzy():
    # s1 snapshot.36's content is exactly the state after 0x37 (its digest zxid).
    snaps, logs = _load("s1_single_replica_kill")
    snap36 = dict(snaps)[0x36]
    from parsers.zookeeper.snapshot import nodes_json
    tree = state_at([s for s in snaps if s[0] == 0], logs, zxid=snap36.digest["zxid"])
    assert tree.to_json()["nodes"] == nodes_json(snap36)


def test_failed_multi_changes_nothing():
    snaps, logs = _load("s2_controller_failover")
    txns = {t.zxid: t for log in logs for t in log.good}
    failed = txns[0x5B]
    assert failed.failed
    tree = ZTree.empty()
    before = json.dumps(tree.to_json(), sort_keys=True)
    tree.apply(failed)
    after = tree.to_json()
    after["last_zxid"] = "0x0"
    assert json.dumps(after, sort_keys=True) == before


def test_log_order_and_ensemble_copies_do_not_matter():
    # Logs given in lexical order (log.1, log.152, log.1f?, log.203, ..., log.aa ...) and twice over,
    # as from two servers of an ensemble: zxids chain numerically and repeats count once.
    expected = json.loads((ZK_REAL / "s5_churn" / "oracle" / "replayed_final_tree.json").read_text())
    d = ZK_REAL / "s5_churn" / "version-2"
    lexical = [read_txnlog(p.read_bytes()) for p in sorted(d.glob("log.*"), key=lambda p: p.name)]
    snaps = [(name_zxid(p.name), read_snapshot(p.read_bytes())) for p in d.glob("snapshot.*")]
    tree = state_at(snaps, lexical + lexical[::-1])
    assert tree.to_json()["nodes"] == expected["nodes"] and tree.gaps == []


def test_a_missing_log_is_reported_as_a_gap():
    snaps, logs = _load("s1_single_replica_kill")
    first = [s for s in snaps if s[0] == 0]
    tree = state_at(first, [logs[0], logs[2], logs[3]])  # log.38 (0x38..0x6a) lost
    assert tree.gaps == ["txns 0x38..0x6a are missing from the logs given"]
