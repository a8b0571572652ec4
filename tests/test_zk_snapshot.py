"""The snapshot reader against ZooKeeper's own decoding (SnapshotFormatter, FileSnap) of every snapshot."""
from __future__ import annotations

import gzip
import json

import pytest

from parsers.zookeeper.snapshot import decompress, dump_lines, java_hash_order, name_zxid, nodes_json, read_snapshot
from parsers.zookeeper.snapshot import _java_string_hash
from zk_oracle import REAL_LOG_SNAPSHOTS, SNAPSHOT_FILES, oracle

IDS = [f"{p.parent.parent.name}/{p.name}" for p in SNAPSHOT_FILES]


@pytest.mark.parametrize("snap", SNAPSHOT_FILES, ids=IDS)
def test_every_node_matches_zookeepers_own_decoding(snap):
    expected = json.loads(oracle(snap, ".nodes.json").read_text())
    parsed = read_snapshot(snap.read_bytes())
    assert parsed.errors == [] and parsed.complete and parsed.checksum_ok
    assert nodes_json(parsed) == expected["nodes"]
    assert [s.stored & 0xFFFFFFFF for s in parsed.seals] == [
        int(expected[k]["stored"], 16) for k in ("checksum", "checksum2") if k in expected]
    sessions = {int(s["id"], 16): s["timeout"] for s in expected["sessions"]}
    assert dict(parsed.sessions) == sessions
    if "zxid" in expected["digest"]:
        assert parsed.digest == {"zxid": int(expected["digest"]["zxid"], 16),
                                 "digestVersion": expected["digest"]["digestVersion"],
                                 "digest": expected["digest"]["digest"]}


@pytest.mark.parametrize("snap", SNAPSHOT_FILES, ids=IDS)
def test_dump_text_matches_snapshotformatter_line_by_line(snap):
    expected = oracle(snap, ".dump.txt").read_text().splitlines()
    parsed = read_snapshot(snap.read_bytes())
    assert list(dump_lines(parsed, name_zxid(snap.name))) == expected


@pytest.mark.parametrize("snap", REAL_LOG_SNAPSHOTS, ids=[p.name for p in REAL_LOG_SNAPSHOTS])
def test_real_kafka_cluster_snapshots_parse_without_error(snap):
    raw, problems = decompress(snap.read_bytes(), snap.name)
    parsed = read_snapshot(raw)
    assert problems == [] and parsed.errors == []
    assert parsed.complete and parsed.checksum_ok
    paths = {n.path for n in parsed.nodes}
    # every snapshot holds the root and ZooKeeper's own subtree; later ones a Kafka cluster's
    assert {"", "/zookeeper", "/zookeeper/quota"} <= paths
    if len(parsed.nodes) > 10:
        assert "/brokers/ids" in paths and "/controller_epoch" in paths


def test_native_gz_and_wrapper_gz_read_the_same():
    snap = SNAPSHOT_FILES[-1]
    raw, problems = decompress(gzip.compress(snap.read_bytes()), snap.name + ".gz")
    assert problems == [] and nodes_json(read_snapshot(raw)) == nodes_json(read_snapshot(snap.read_bytes()))


def test_snappy_is_refused_with_a_clear_message():
    raw, problems = decompress(b"\x82SNAPPY\x00" + b"\x00" * 40, "snapshot.1a.snappy")
    assert raw == b"" and "unsupported compression" in problems[0]


def test_java_hashset_order_handles_resizes():
    # Worked by hand from java.util.HashMap: capacity 8, "a".."i" hash to 97..105;
    # the 7th insert resizes to 16, so buckets are 97&15=1 .. 105&15=9, visited in index order.
    names = ["i", "b", "h", "a", "c", "g", "d", "f", "e"]
    assert java_hash_order(names, _java_string_hash, 8) == list("abcdefghi")
    # "Aa" and "BB" share String.hashCode 2112: same bucket, insertion order kept.
    assert java_hash_order(["BB", "Aa"], _java_string_hash, 8) == ["BB", "Aa"]
