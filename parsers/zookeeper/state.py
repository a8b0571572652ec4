"""The ZooKeeper tree at any zxid: a snapshot plus the txns after it, applied the way ZooKeeper does.

This mirrors ``DataTree.processTxn`` and ``FileTxnSnapLog.restore``: start from
the newest usable snapshot at or before the target zxid (or from the empty
tree a fresh server starts with), then apply every readable txn with
``snapshot zxid < zxid <= target`` in zxid order. Snapshots are fuzzy (they may
already hold some of those txns), so every operation is applied idempotently,
with ZooKeeper's own rules: a create of an existing node only moves the
parent's cversion/pzxid, a delete of a missing node only moves the parent's
pzxid, a multi with an ``error`` sub-txn changes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from parsers.zookeeper.jute import hex_id
from parsers.zookeeper.snapshot import OPEN_ACL_UNSAFE, Snapshot
from parsers.zookeeper.txnlog import Txn, TxnLogFile

CONTAINER_OWNER = -0x8000000000000000  # EphemeralType.CONTAINER_EPHEMERAL_OWNER (Long.MIN_VALUE)
_TTL_BASE = 0xFF << 56


def _is_session_owner(owner: int) -> bool:
    """Ephemeral owners that are sessions (not the container / TTL markers)."""
    u = owner & 0xFFFFFFFFFFFFFFFF
    return owner != 0 and owner != CONTAINER_OWNER and (u >> 56) != 0xFF


@dataclass
class ZNode:
    data: bytes | None
    acl: list[dict] | None
    czxid: int = 0
    mzxid: int = 0
    ctime: int = 0
    mtime: int = 0
    version: int = 0
    cversion: int = 0
    aversion: int = 0
    ephemeral_owner: int = 0
    pzxid: int = 0
    children: set[str] = field(default_factory=set)


@dataclass
class ZTree:
    nodes: dict[str, ZNode]  # "/" is the root
    sessions: dict[int, int]  # session id -> timeout ms
    zxid: int = 0  # last zxid applied (or the snapshot's)
    applied: int = 0  # txns applied after the starting point
    gaps: list[str] = field(default_factory=list)

    # -------------------------------------------------------------- construction

    @classmethod
    def empty(cls) -> "ZTree":
        """What a fresh ZooKeeper 3.5+ server holds before its first txn."""
        root, zk, quota = ZNode(b"", OPEN_ACL_UNSAFE), ZNode(b"", OPEN_ACL_UNSAFE), ZNode(b"", OPEN_ACL_UNSAFE)
        config = ZNode(b"", [{"perms": 1, "scheme": "world", "id": "anyone"}], aversion=-1)
        root.children, zk.children = {"zookeeper"}, {"quota", "config"}
        return cls({"/": root, "/zookeeper": zk, "/zookeeper/quota": quota, "/zookeeper/config": config}, {})

    @classmethod
    def from_snapshot(cls, snap: Snapshot, zxid: int) -> "ZTree":
        """``zxid``: the snapshot's zxid (3.9+ ``lastProcessedZxid`` when present, else the name's)."""
        nodes: dict[str, ZNode] = {}
        for n in snap.nodes:
            path = n.path or "/"
            nodes[path] = ZNode(n.data, snap.acl(n.acl_key), n.czxid, n.mzxid, n.ctime, n.mtime, n.version,
                                n.cversion, n.aversion, n.ephemeral_owner, n.pzxid)
            if n.path:
                parent = nodes.get(_parent(path))
                if parent is not None:
                    parent.children.add(_name(path))
        return cls(nodes, dict(snap.sessions), zxid=snap.last_processed_zxid or zxid)

    # -------------------------------------------------------------- txns

    def apply(self, txn: Txn) -> None:
        """One readable txn (``txn.problem`` is None)."""
        t = txn.type_code
        if t == -10:
            self.sessions[txn.session] = txn.record["timeOut"]
        elif t == -11:
            self.sessions.pop(txn.session, None)
            listed = [] if txn.record is None else list(txn.record.get("paths2Delete") or [])
            for p in listed:
                self._delete(p, txn.zxid)
            for p in sorted(p for p, n in self.nodes.items() if n.ephemeral_owner == txn.session):
                self._delete(p, txn.zxid)
        elif t == 14:
            if not txn.failed:
                for sub in txn.subs:
                    self._op(sub["type_code"], sub, txn)
        else:
            self._op(t, txn.record or {}, txn)
        if txn.zxid > self.zxid:
            self.zxid = txn.zxid
        self.applied += 1

    def _op(self, t: int, rec: dict, txn: Txn) -> None:
        if t in (1, 15):
            owner = txn.session if rec.get("ephemeral") else 0
            self._create(rec["path"], rec["data"], rec["acl"], owner, rec["parentCVersion"], txn, retry_adjust=t == 1)
        elif t == 19:
            self._create(rec["path"], rec["data"], rec["acl"], CONTAINER_OWNER, rec["parentCVersion"], txn)
        elif t == 21:
            self._create(rec["path"], rec["data"], rec["acl"], _TTL_BASE | rec["ttl"], rec["parentCVersion"], txn)
        elif t in (2, 20):
            self._delete(rec["path"], txn.zxid)
        elif t in (5, 16):
            n = self.nodes.get(rec["path"])
            if n is not None:
                n.data, n.mtime, n.mzxid, n.version = rec["data"], txn.time, txn.zxid, rec["version"]
        elif t == 7:
            n = self.nodes.get(rec["path"])
            if n is not None:
                n.aversion, n.acl = rec["version"], rec["acl"]
        # check (13) and error (-1) change nothing

    def _create(self, path: str, data, acl, owner: int, parent_cversion: int, txn: Txn, retry_adjust: bool = False) -> None:
        parent = self.nodes.get(_parent(path))
        if parent is None:
            return
        existing = self.nodes.get(path)
        if existing is not None:
            existing.acl = acl
            if retry_adjust:
                # Replaying a create that the fuzzy snapshot already holds: ZooKeeper
                # still brings the parent's cversion/pzxid up to this txn.
                cv = parent.cversion + 1 if parent_cversion == -1 else parent_cversion
                if cv > parent.cversion:
                    parent.cversion, parent.pzxid = cv, txn.zxid
            return
        cv = parent.cversion + 1 if parent_cversion == -1 else parent_cversion
        if cv > parent.cversion:
            parent.cversion, parent.pzxid = cv, txn.zxid
        parent.children.add(_name(path))
        self.nodes[path] = ZNode(data, acl, txn.zxid, txn.zxid, txn.time, txn.time, 0, 0, 0, owner, txn.zxid)

    def _delete(self, path: str, zxid: int) -> None:
        parent = self.nodes.get(_parent(path))
        if parent is None:
            return
        parent.children.discard(_name(path))
        if zxid > parent.pzxid:
            parent.pzxid = zxid
        self.nodes.pop(path, None)

    # -------------------------------------------------------------- views

    def node_json(self, path: str) -> dict:
        n = self.nodes[path]
        return {
            "path": path, "data": None if n.data is None else n.data.decode("utf-8", "replace"),
            "data_len": -1 if n.data is None else len(n.data), "czxid": hex_id(n.czxid), "mzxid": hex_id(n.mzxid),
            "pzxid": hex_id(n.pzxid), "ctime": n.ctime, "mtime": n.mtime, "version": n.version,
            "cversion": n.cversion, "aversion": n.aversion, "ephemeralOwner": hex_id(n.ephemeral_owner),
            "numChildren": len(n.children), "acl": n.acl,
        }

    def to_json(self) -> dict:
        """Sessions (with their ephemerals) and every node, sorted by path."""
        eph: dict[int, list[str]] = {}
        for p, n in self.nodes.items():
            if _is_session_owner(n.ephemeral_owner):
                eph.setdefault(n.ephemeral_owner, []).append(p)
        sessions = [{"id": hex_id(s), "timeout": t, "ephemerals": sorted(eph.get(s, []))}
                    for s, t in sorted(self.sessions.items())]
        return {"last_zxid": hex_id(self.zxid), "sessions": sessions,
                "nodes": [self.node_json(p) for p in sorted(self.nodes)]}


def _parent(path: str) -> str:
    p = path.rsplit("/", 1)[0]
    return p or "/"


def _name(path: str) -> str:
    return path.rsplit("/", 1)[1]


def ordered_txns(logs: Iterable[TxnLogFile]) -> list[Txn]:
    """Readable txns of several log files in zxid order; a zxid seen twice (ensemble copies,
    a rewritten log after a leader change) keeps its last occurrence in the given file order."""
    by_zxid: dict[int, Txn] = {}
    for log in logs:
        for t in log.good:
            by_zxid[t.zxid] = t
    return [by_zxid[z] for z in sorted(by_zxid)]


def state_at(snapshots: list[tuple[int, Snapshot]], logs: list[TxnLogFile], zxid: int | None = None) -> ZTree:
    """The tree after applying every txn up to ``zxid`` (default: the last one there is).

    ``snapshots``: (zxid from the file name, parsed snapshot). Snapshots that are
    incomplete or fail their checksum are passed over, as ZooKeeper does.
    """
    txns = ordered_txns(logs)
    target = zxid if zxid is not None else (txns[-1].zxid if txns else max((z for z, _ in snapshots), default=0))
    usable = [(z, s) for z, s in snapshots if s.complete and s.checksum_ok and (s.last_processed_zxid or z) <= target]
    if usable:
        z, snap = max(usable, key=lambda zs: zs[1].last_processed_zxid or zs[0])
        tree = ZTree.from_snapshot(snap, z)
    else:
        tree = ZTree.empty()
    start = tree.zxid
    expected = start + 1
    for t in txns:
        if t.zxid <= start or t.zxid > target:
            continue
        if t.zxid != expected and (t.zxid >> 32) == (expected >> 32):
            tree.gaps.append(f"txns {hex_id(expected)}..{hex_id(t.zxid - 1)} are missing from the logs given")
        tree.apply(t)
        expected = t.zxid + 1
    return tree
