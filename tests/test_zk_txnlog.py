"""The txn log reader against ZooKeeper's own decoding of every real log in zk_real."""
from __future__ import annotations

import struct
import zlib

import pytest

from parsers.zookeeper.txnlog import dump_line, header_line, read_txnlog, txn_json
from zk_oracle import LOG_FILES, oracle_dump_txn_lines, oracle_txns

IDS = [f"{p.parent.parent.name}/{p.name}" for p in LOG_FILES]


@pytest.mark.parametrize("log", LOG_FILES, ids=IDS)
def test_every_txn_matches_zookeepers_own_decoding(log):
    header, expected, end = oracle_txns(log)
    parsed = read_txnlog(log.read_bytes())
    assert (parsed.magic, parsed.version, parsed.dbid) == (int(header["magic"], 16), header["version"], header["dbid"])
    assert [txn_json(t) for t in parsed.records] == expected
    assert (parsed.end_reason, parsed.end_offset) == (end["end"], end["offset"])
    assert len(parsed.txns) == end["txn_count"]


@pytest.mark.parametrize("log", LOG_FILES, ids=IDS)
def test_dump_text_matches_txnlogtoolkit_line_by_line(log):
    header, lines, trailer = oracle_dump_txn_lines(log)
    parsed = read_txnlog(log.read_bytes())
    assert header_line(parsed) == header
    assert trailer == f"EOF reached after {len(parsed.txns)} txns."
    assert len(lines) == len(parsed.txns)
    for expected, txn in zip(lines, parsed.txns):
        mine = dump_line(txn)
        if txn.type == "multi":
            # ZooKeeper 3.8 prints a multi's sub-records as raw jute bytes; we print them
            # decoded (compared field by field against the .jsonl above). The rest must agree.
            assert mine.split(" multi ")[0] == expected.split(" multi ")[0]
        else:
            assert mine == expected


def _entry(zxid: int, type_code: int, body: bytes, session: int = 0x10, cxid: int = 1, time: int = 1_700_000_000_000) -> bytes:
    payload = struct.pack(">qiqqi", session, cxid, zxid, time, type_code) + body
    return struct.pack(">qi", zlib.adler32(payload), len(payload)) + payload + b"B"


def _ustr(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">i", len(b)) + b


def test_pre_36_records_without_digest_and_closesession_without_body():
    # ZooKeeper 3.4/3.5 wrote no TxnDigest and an empty closeSession; hand-built entries of that shape.
    acl = struct.pack(">i", 1) + struct.pack(">i", 31) + _ustr("world") + _ustr("anyone")
    create = _ustr("/brokers/ids/1") + struct.pack(">i", 2) + b"{}" + acl + b"\x01" + struct.pack(">i", 3)
    create_v0 = _ustr("/old") + struct.pack(">i", -1) + acl + b"\x00"
    data = (struct.pack(">iiq", 0x5A4B4C47, 2, 0) + _entry(1, -10, struct.pack(">i", 6000))
            + _entry(2, 1, create) + _entry(3, 1, create_v0) + _entry(4, -11, b"") + b"\0" * 64)
    log = read_txnlog(data)
    assert [t.problem for t in log.txns] == [None] * 4
    assert [t.type for t in log.txns] == ["createSession", "create", "create", "closeSession"]
    assert log.txns[1].record["ephemeral"] is True and log.txns[1].record["parentCVersion"] == 3
    assert log.txns[2].record == {"path": "/old", "data": None, "acl": [{"perms": 31, "scheme": "world", "id": "anyone"}],
                                  "ephemeral": False, "parentCVersion": -1}
    assert log.txns[3].record is None and all(t.digest is None for t in log.txns)
    assert txn_json(log.txns[3])["txn"] is None
    assert log.end_reason == "zero_length_record"


def test_other_record_types_decode_with_their_own_layout():
    acl = struct.pack(">i", 1) + struct.pack(">i", 31) + _ustr("world") + _ustr("anyone")
    digest = struct.pack(">iq", 2, 12345)
    entries = [
        _entry(1, 19, _ustr("/c") + struct.pack(">i", -1) + acl + struct.pack(">i", 1) + digest),  # createContainer
        _entry(2, 21, _ustr("/t") + struct.pack(">i", 0) + acl + struct.pack(">iq", 2, 60000) + digest),  # createTTL
        _entry(3, 20, _ustr("/c") + digest),  # deleteContainer
        _entry(4, 7, _ustr("/t") + acl + struct.pack(">i", 1) + digest),  # setACL
        _entry(5, 16, _ustr("/zookeeper/config") + struct.pack(">i", 3) + b"a=b" + struct.pack(">i", 4) + digest),  # reconfig
    ]
    log = read_txnlog(struct.pack(">iiq", 0x5A4B4C47, 2, 0) + b"".join(entries))
    t = log.txns
    assert [x.type for x in t] == ["createContainer", "createTtl", "deleteContainer", "setACL", "reconfig"]
    assert all(x.problem is None and x.digest == {"version": 2, "treeDigest": 12345} for x in t)
    assert t[1].record["ttl"] == 60000 and t[0].record["parentCVersion"] == 1
    assert dump_line(t[3]).endswith("setACL '/t,v{s{31,s{'world,'anyone}}},1")
    assert dump_line(t[4]).endswith("reconfig /zookeeper/config,a=b,4")
    assert log.end_reason == "eof"
