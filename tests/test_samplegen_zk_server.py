"""The ZooKeeper writer against real ZooKeeper 3.8 files (shared/zk_real).

Each real txn is re-issued through our server model as the client request
that produced it (create, setData, multi ...); the entry bytes we log (header,
record, parentCVersion, versions, closeSession's ephemeral list in Java HashSet
order, the 3.6+ tree digest) and their Adler32 must equal the real file's, txn
for txn. ZooKeeper's own decoding (oracle/*.txns.jsonl) supplies the requests.
"""
from __future__ import annotations

import json
import struct
import zlib

import pytest

from samplegen.zk import jute
from samplegen.zk.server import Op, ZkServer, java_hashset_order
from tests.conftest import ZK_REAL

SCENARIOS = sorted(p.name for p in ZK_REAL.iterdir() if (p / "version-2").is_dir())


def real_entries(path):
    """(offset, checksum, entry bytes) of a real txn log, read independently of our writer."""
    data = path.read_bytes()
    assert data[:4] == b"ZKLG"
    pos, out = 16, []
    while pos + 12 <= len(data):
        crc, n = struct.unpack_from(">qi", data, pos)
        if n == 0:
            break
        entry = data[pos + 12: pos + 12 + n]
        assert data[pos + 12 + n] == 0x42
        out.append((pos, crc, entry))
        pos += 12 + n + 1
    return out


def oracle_txns(scenario):
    rows = []
    for f in sorted((ZK_REAL / scenario / "oracle").glob("log.*.txns.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if "zxid" in r:
                rows.append((f.name.split(".txns")[0], r))
    rows.sort(key=lambda x: int(x[1]["zxid"], 16))
    # Logs overlap only across a restart; these runs have none, but keep the first occurrence.
    seen, out = set(), []
    for name, r in rows:
        if r["zxid"] not in seen:
            seen.add(r["zxid"])
            out.append((name, r))
    return out


def _data(d):
    return None if d is None else d.encode("utf-8")


def _failing_op(err):
    """An op that fails with ``err`` (the log keeps only the code, not what failed)."""
    return {
        jute.NODEEXISTS: Op("create", "/zookeeper"),
        jute.NONODE: Op("create", "/no-such-parent/x"),
        jute.BADVERSION: Op("setData", "/zookeeper", b"", 123456),
    }[err]


def _sub_op(t):
    kind = t["type"]
    if kind == "create":
        return Op("create", t["path"], _data(t["data"]), ephemeral=t["ephemeral"])
    if kind == "setData":
        return Op("setData", t["path"], _data(t["data"]), -1)
    if kind == "check":
        return Op("check", t["path"], None, t["version"] - 1)  # logged as expected + 1
    if kind == "delete":
        return Op("delete", t["path"])
    raise AssertionError(kind)


def reissue(server, sessions, r):
    sid = int(r["session"], 16)
    kind, t = r["type"], r["txn"]
    if kind == "createSession":
        server._next_sid = sid
        sessions[sid] = server.create_session(r["time"], t["timeOut"])
        return
    s = sessions[sid]
    s.cxid = r["cxid"] - 1  # reads between writes use up cxids; take the real one
    if kind == "closeSession":
        expired = r["cxid"] == 0
        if not expired:
            s.cxid = r["cxid"] - 1
        server.close_session(r["time"], s, expired=expired)
    elif kind == "create2":
        server.create(r["time"], s, t["path"], _data(t["data"]), ephemeral=t["ephemeral"])
    elif kind == "setData":
        server.set_data(r["time"], s, t["path"], _data(t["data"]))
    elif kind == "delete":
        server.delete(r["time"], s, t["path"])
    elif kind == "error":
        op = _failing_op(t["err"])
        if op.kind == "create":
            server.create(r["time"], s, op.path, op.data)
        else:
            server.set_data(r["time"], s, op.path, op.data, op.version)
    elif kind == "multi":
        ops, failed = [], False
        for sub in t["txns"]:
            if sub["type"] == "error":
                if not failed:
                    ops.append(_failing_op(sub["err"]))
                    failed = True
                else:
                    ops.append(Op("check", "/"))
            else:
                ops.append(_sub_op(sub))
        server.multi(r["time"], s, ops)
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_our_entries_equal_zookeepers_bytes(scenario):
    txns = oracle_txns(scenario)
    assert txns, scenario
    first = int(txns[0][1]["zxid"], 16)
    server = ZkServer(epoch=first >> 32)
    server.next_zxid = first
    sessions = {}
    real = {}
    for f in sorted((ZK_REAL / scenario / "version-2").glob("log.*")):
        for off, crc, entry in real_entries(f):
            zxid = struct.unpack_from(">q", entry, 12)[0]
            real.setdefault(zxid, (f.name, off, crc, entry))
    start = 0
    for name, r in txns:
        reissue(server, sessions, r)
        body = bytes(server.log.body)
        # Each of our entries: long crc, int len, entry, 'B'.
        pos = 16 if start == 0 else start
        crc, n = struct.unpack_from(">qi", body, pos)
        mine = body[pos + 12: pos + 12 + n]
        start = pos + 12 + n + 1
        zxid = int(r["zxid"], 16)
        fname, off, real_crc, real_entry = real[zxid]
        assert mine == real_entry, f"{scenario} {fname}@{off} zxid {r['zxid']} {r['type']}: entry bytes differ"
        assert crc == real_crc == zlib.adler32(real_entry)


def test_hashset_order_matches_a_real_closesession():
    # s2: the controller's session closed with both of its ephemerals, in this order.
    assert java_hashset_order(["/brokers/ids/1", "/controller"]) == ["/controller", "/brokers/ids/1"]
