"""A ZooKeeper server as far as its txn log can tell: the data tree, sessions, zxids.

Every write a client makes is validated the way PrepRequestProcessor does it
(a failed write still takes a zxid and is logged as an ``error`` txn; a failed
``multi`` keeps its ops, the failing one becomes ``error <code>`` and the rest
``error -2``), then applied the way DataTree.processTxn does it, and appended to
the txn log. The 3.6+ tree digest (DigestCalculator: CRC32 over path, data and
stat, summed over all nodes) is kept up to date so every txn carries the digest
a real server would write.

Paths here are absolute server paths; a Kafka chroot is the caller's business.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import Sequence

from samplegen.zk import jute
from samplegen.zk.txnlog import TxnLogFile

_MASK64 = (1 << 64) - 1


@dataclass
class Node:
    data: bytes | None
    czxid: int = 0
    mzxid: int = 0
    pzxid: int = 0
    ctime: int = 0
    mtime: int = 0
    version: int = 0
    cversion: int = 0
    aversion: int = 0
    owner: int = 0  # ephemeralOwner (session id), 0 = persistent
    children: set[str] = field(default_factory=set)


def node_digest(path: str, node: Node) -> int:
    """DigestCalculator.calculateDigest (digest version 2)."""
    if path.startswith("/zookeeper/"):
        return 0
    stat = struct.pack(
        ">qqqqqiiiq", node.czxid, node.mzxid, node.pzxid, node.ctime, node.mtime,
        node.version, node.cversion, node.aversion, node.owner,
    )
    crc = zlib.crc32(path.encode("utf-8"))
    if node.data is not None:
        crc = zlib.crc32(node.data, crc)
    return zlib.crc32(stat, crc)


def java_string_hash(s: str) -> int:
    """String.hashCode(): over UTF-16 code units, 32-bit wrap-around."""
    b = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(b), 2):
        h = (31 * h + (b[i] << 8 | b[i + 1])) & 0xFFFFFFFF
    return h


def java_hashset_order(items: Sequence[str]) -> list[str]:
    """Iteration order of a java.util.HashSet<String> filled in ``items`` order.

    Bucket = spread hash & (capacity - 1); within a bucket, insertion order.
    ZooKeeper lists a session's ephemerals in this order in closeSession.
    """
    cap = 16
    while len(items) > cap * 0.75:
        cap *= 2

    def bucket(s: str) -> int:
        h = java_string_hash(s)
        return (h ^ (h >> 16)) & (cap - 1)

    return [s for _, _, s in sorted((bucket(s), i, s) for i, s in enumerate(items))]


@dataclass
class Op:
    """One operation of a ``multi`` (or a plain write)."""

    kind: str  # 'create', 'delete', 'setData', 'check'
    path: str
    data: bytes | None = None
    version: int = -1  # expected version (-1 = any) for delete/setData/check
    ephemeral: bool = False


@dataclass
class Session:
    sid: int
    timeout_ms: int
    cxid: int = 0
    ephemerals: list[str] = field(default_factory=list)
    open: bool = True

    def next_cxid(self) -> int:
        self.cxid += 1
        return self.cxid


@dataclass
class TxnRecord:
    """What was logged, kept readable for scenario bookkeeping and tests."""

    zxid: int
    time_ms: int
    session: int
    cxid: int
    op: int
    err: int = 0  # 0, or the KeeperException code of a failed write
    paths: tuple[str, ...] = ()


class ZkServer:
    def __init__(self, *, epoch: int = 1, server_id: int = 1, session_seed: int = 0x17B4C2A1D3,
                 digest: bool = True, prealloc: int = 64 * 1024):
        self.nodes: dict[str, Node] = {
            "": Node(b"", children={"zookeeper"}),
            "/zookeeper": Node(b"", children={"config", "quota"}),
            "/zookeeper/config": Node(b"", aversion=-1),
            "/zookeeper/quota": Node(b""),
        }
        self.tree_digest = sum(node_digest(p, n) for p, n in self.nodes.items()) & _MASK64
        self.next_zxid = (epoch << 32) | 1
        # ZooKeeperServer.initializeNextSessionId: server id in the top byte, a clock below.
        self._next_sid = ((session_seed << 24) & _MASK64) >> 8 | (server_id << 56)
        self.sessions: dict[int, Session] = {}
        self.digest = digest
        self.log = TxnLogFile(prealloc)
        self.records: list[TxnRecord] = []

    # --- reads (no txn) ----------------------------------------------------------------------
    def exists(self, path: str) -> bool:
        return path in self.nodes

    def get(self, path: str) -> Node | None:
        return self.nodes.get(path)

    def children(self, path: str) -> list[str]:
        node = self.nodes.get(path)
        return sorted(node.children) if node else []

    # --- sessions -----------------------------------------------------------------------------
    def create_session(self, time_ms: int, timeout_ms: int) -> Session:
        s = Session(self._next_sid, timeout_ms)
        self._next_sid += 1
        self.sessions[s.sid] = s
        self._log(time_ms, s.sid, 0, jute.CREATE_SESSION, jute.create_session_txn(timeout_ms))
        return s

    def close_session(self, time_ms: int, session: Session, *, expired: bool) -> list[str]:
        """Expired: the server closes it (cxid 0). Otherwise the client asked (its next cxid)."""
        cxid = 0 if expired else session.next_cxid()
        paths = java_hashset_order(session.ephemerals)
        zxid = self._take_zxid()
        for p in paths:
            self._apply_delete(p, zxid)
        session.open = False
        session.ephemerals = []
        self._write(zxid, time_ms, session.sid, cxid, jute.CLOSE_SESSION, jute.close_session_txn(paths), paths=tuple(paths))
        return paths

    # --- writes -------------------------------------------------------------------------------
    def create(self, time_ms: int, session: Session, path: str, data: bytes | None = None, *,
               ephemeral: bool = False, sequential: bool = False) -> tuple[int, str]:
        """A plain create from Kafka's client (logged as create2). Returns (rc, actual path)."""
        cxid = session.next_cxid()
        if sequential:
            path = self._sequential_name(path)
        rc = self._check_create(path, {})
        if rc:
            self._log_error(time_ms, session.sid, cxid, rc, path)
            return rc, path
        zxid = self._take_zxid()
        pcv = self.nodes[_parent(path)].cversion + 1
        self._apply_create(path, data, ephemeral and session.sid, pcv, zxid, time_ms, session)
        self._write(zxid, time_ms, session.sid, cxid, jute.CREATE2, jute.create_txn(path, data, ephemeral, pcv),
                    paths=(path,))
        return 0, path

    def set_data(self, time_ms: int, session: Session, path: str, data: bytes | None, version: int = -1) -> int:
        return self.multi(time_ms, session, [Op("setData", path, data, version)], plain=True)

    def delete(self, time_ms: int, session: Session, path: str, version: int = -1) -> int:
        return self.multi(time_ms, session, [Op("delete", path, None, version)], plain=True)

    def multi(self, time_ms: int, session: Session, ops: list[Op], *, plain: bool = False) -> int:
        """Validate all ops against the tree plus the effects of the ops before them, then apply or fail.

        ``plain=True`` logs a single op as itself (setData / delete) instead of a multi.
        """
        cxid = session.next_cxid()
        pending: dict[str, Node | None] = {}
        subs: list[tuple[int, bytes]] = []
        failed = 0
        for op in ops:
            if failed:
                subs.append((jute.ERROR, jute.error_txn(jute.RUNTIME_INCONSISTENCY)))
                continue
            rc, sub = self._prep(op, pending)
            if rc:
                failed = rc
                subs.append((jute.ERROR, jute.error_txn(rc)))
            else:
                subs.append(sub)
        paths = tuple(op.path for op in ops)
        if plain:
            if failed:
                self._log_error(time_ms, session.sid, cxid, failed, ops[0].path)
                return failed
            zxid = self._take_zxid()
            self._apply_op(ops[0], subs[0], zxid, time_ms, session)
            self._write(zxid, time_ms, session.sid, cxid, subs[0][0], subs[0][1], paths=paths)
            return 0
        zxid = self._take_zxid()
        if not failed:
            for op, sub in zip(ops, subs):
                self._apply_op(op, sub, zxid, time_ms, session)
        self._write(zxid, time_ms, session.sid, cxid, jute.MULTI, jute.multi_txn(subs), err=failed, paths=paths)
        return failed

    # --- validation (PrepRequestProcessor) -------------------------------------------------------
    def _view(self, path: str, pending: dict[str, Node | None]) -> Node | None:
        return pending[path] if path in pending else self.nodes.get(path)

    def _check_create(self, path: str, pending: dict[str, Node | None]) -> int:
        parent = self._view(_parent(path), pending)
        if parent is None:
            return jute.NONODE
        if self._view(path, pending) is not None:
            return jute.NODEEXISTS
        return 0

    def _prep(self, op: Op, pending: dict[str, Node | None]) -> tuple[int, tuple[int, bytes]]:
        if op.kind == "create":
            rc = self._check_create(op.path, pending)
            if rc:
                return rc, (0, b"")
            parent_path = _parent(op.path)
            parent = self._view(parent_path, pending)
            pcv = parent.cversion + 1
            pending[parent_path] = Node(parent.data, version=parent.version, cversion=pcv)
            pending[op.path] = Node(op.data)
            return 0, (jute.CREATE, jute.create_txn(op.path, op.data, op.ephemeral, pcv))
        node = self._view(op.path, pending)
        if node is None:
            return jute.NONODE, (0, b"")
        if op.version != -1 and op.version != node.version:
            return jute.BADVERSION, (0, b"")
        if op.kind == "setData":
            pending[op.path] = Node(op.data, version=node.version + 1, cversion=node.cversion)
            return 0, (jute.SET_DATA, jute.set_data_txn(op.path, op.data, node.version + 1))
        if op.kind == "check":
            return 0, (jute.CHECK, jute.check_version_txn(op.path, node.version + 1))
        if op.kind == "delete":
            if node.children:
                return -111, (0, b"")  # NOTEMPTY
            pending[op.path] = None
            return 0, (jute.DELETE, jute.delete_txn(op.path))
        raise ValueError(f"unknown op {op.kind}")

    # --- application (DataTree.processTxn) -----------------------------------------------------
    def _apply_op(self, op: Op, sub: tuple[int, bytes], zxid: int, time_ms: int, session: Session) -> None:
        if op.kind == "create":
            pcv = self.nodes[_parent(op.path)].cversion + 1
            self._apply_create(op.path, op.data, op.ephemeral and session.sid, pcv, zxid, time_ms, session)
        elif op.kind == "setData":
            self._apply_set_data(op.path, op.data, self.nodes[op.path].version + 1, zxid, time_ms)
        elif op.kind == "delete":
            self._apply_delete(op.path, zxid)

    def _change(self, path: str, node: Node, fn) -> None:
        self.tree_digest -= node_digest(path, node)
        fn(node)
        self.tree_digest = (self.tree_digest + node_digest(path, node)) & _MASK64

    def _apply_create(self, path: str, data: bytes | None, owner, parent_cversion: int, zxid: int,
                      time_ms: int, session: Session | None) -> None:
        parent_path, name = _split(path)
        parent = self.nodes[parent_path]

        def bump(p: Node) -> None:
            p.children.add(name)
            if parent_cversion > p.cversion:
                p.cversion = parent_cversion
                p.pzxid = zxid

        self._change(parent_path, parent, bump)
        node = Node(data, zxid, zxid, zxid, time_ms, time_ms, 0, 0, 0, owner or 0)
        self.nodes[path] = node
        self.tree_digest = (self.tree_digest + node_digest(path, node)) & _MASK64
        if owner and session is not None:
            session.ephemerals.append(path)

    def _apply_set_data(self, path: str, data: bytes | None, version: int, zxid: int, time_ms: int) -> None:
        def upd(n: Node) -> None:
            n.data, n.version, n.mzxid, n.mtime = data, version, zxid, time_ms

        self._change(path, self.nodes[path], upd)

    def _apply_delete(self, path: str, zxid: int) -> None:
        parent_path, name = _split(path)

        def drop(p: Node) -> None:
            p.children.discard(name)
            if zxid > p.pzxid:
                p.pzxid = zxid

        self._change(parent_path, self.nodes[parent_path], drop)
        node = self.nodes.pop(path)
        self.tree_digest = (self.tree_digest - node_digest(path, node)) & _MASK64
        if node.owner and node.owner in self.sessions:
            eph = self.sessions[node.owner].ephemerals
            if path in eph:
                eph.remove(path)

    # --- the log --------------------------------------------------------------------------------
    def _sequential_name(self, prefix: str) -> str:
        parent = self.nodes.get(_parent(prefix))
        return f"{prefix}{(parent.cversion if parent else 0):010d}"

    def _take_zxid(self) -> int:
        z = self.next_zxid
        self.next_zxid += 1
        return z

    def _log_error(self, time_ms: int, sid: int, cxid: int, err: int, path: str) -> None:
        zxid = self._take_zxid()
        self._write(zxid, time_ms, sid, cxid, jute.ERROR, jute.error_txn(err), err=err, paths=(path,))

    def _log(self, time_ms: int, sid: int, cxid: int, op: int, body: bytes) -> int:
        zxid = self._take_zxid()
        self._write(zxid, time_ms, sid, cxid, op, body)
        return zxid

    def _write(self, zxid: int, time_ms: int, sid: int, cxid: int, op: int, body: bytes, *, err: int = 0,
               paths: tuple[str, ...] = ()) -> None:
        entry = jute.txn_header(sid, cxid, zxid, time_ms, op) + body
        # ZooKeeper 3.6+ appends the tree digest to every txn except error txns.
        if self.digest and op != jute.ERROR:
            entry += jute.txn_digest(self.tree_digest)
        self.log.append(zxid, entry)
        self.records.append(TxnRecord(zxid, time_ms, sid, cxid, op, err, paths))


def _parent(path: str) -> str:
    return path[: path.rfind("/")]


def _split(path: str) -> tuple[str, str]:
    i = path.rfind("/")
    return path[:i], path[i + 1:]
