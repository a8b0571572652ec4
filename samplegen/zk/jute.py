"""Jute, ZooKeeper's serialisation: big-endian, no tags, no padding.

Only what a txn log needs: the primitives, the ACL list and the txn records
(``zookeeper.jute``). Each ``*_txn`` function returns the record's bytes.
"""
from __future__ import annotations

import struct
from typing import Iterable

# OpCodes (ZooDefs.OpCode) that appear in txn logs.
CREATE = 1
DELETE = 2
SET_DATA = 5
CHECK = 13
MULTI = 14
CREATE2 = 15
CREATE_SESSION = -10
CLOSE_SESSION = -11
ERROR = -1

# KeeperException codes Kafka's traffic produces.
OK = 0
RUNTIME_INCONSISTENCY = -2
NONODE = -101
BADVERSION = -103
NODEEXISTS = -110

# world:anyone with all permissions (ZooDefs.Ids.OPEN_ACL_UNSAFE), what Kafka uses without zookeeper.set.acl.
OPEN_ACL_UNSAFE = ((31, "world", "anyone"),)

_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")


def int32(v: int) -> bytes:
    return _INT.pack(v)


def int64(v: int) -> bytes:
    # zxids, session ids and digests are unsigned in spirit; Java stores them in a signed long.
    if v >= 1 << 63:
        v -= 1 << 64
    return _LONG.pack(v)


def boolean(v: bool) -> bytes:
    return b"\x01" if v else b"\x00"


def ustring(s: str | None) -> bytes:
    if s is None:
        return int32(-1)
    b = s.encode("utf-8")
    return int32(len(b)) + b


def buffer(b: bytes | None) -> bytes:
    if b is None:
        return int32(-1)
    return int32(len(b)) + b


def acl_vector(acls: Iterable[tuple[int, str, str]]) -> bytes:
    acls = list(acls)
    out = [int32(len(acls))]
    for perms, scheme, ident in acls:
        out += [int32(perms), ustring(scheme), ustring(ident)]
    return b"".join(out)


def txn_header(client_id: int, cxid: int, zxid: int, time_ms: int, op: int) -> bytes:
    return int64(client_id) + int32(cxid) + int64(zxid) + int64(time_ms) + int32(op)


def create_txn(path: str, data: bytes | None, ephemeral: bool, parent_cversion: int,
               acl=OPEN_ACL_UNSAFE) -> bytes:
    return ustring(path) + buffer(data) + acl_vector(acl) + boolean(ephemeral) + int32(parent_cversion)


def delete_txn(path: str) -> bytes:
    return ustring(path)


def set_data_txn(path: str, data: bytes | None, version: int) -> bytes:
    return ustring(path) + buffer(data) + int32(version)


def check_version_txn(path: str, version: int) -> bytes:
    return ustring(path) + int32(version)


def create_session_txn(timeout_ms: int) -> bytes:
    return int32(timeout_ms)


def close_session_txn(paths: list[str]) -> bytes:
    return int32(len(paths)) + b"".join(ustring(p) for p in paths)


def error_txn(err: int) -> bytes:
    return int32(err)


def multi_txn(subs: list[tuple[int, bytes]]) -> bytes:
    """``MultiTxn``: a vector of ``Txn{int type, buffer data}``."""
    return int32(len(subs)) + b"".join(int32(op) + buffer(body) for op, body in subs)


def txn_digest(tree_digest: int, version: int = 2) -> bytes:
    return int32(version) + int64(tree_digest & 0xFFFFFFFFFFFFFFFF)
