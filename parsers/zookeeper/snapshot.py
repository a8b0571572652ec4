"""ZooKeeper snapshot files (``version-2/snapshot.<zxid hex>``, plain or ``.gz``), ZooKeeper 3.4 to 3.9.

Layout: header (``ZKSN``, version, dbid); the session table; the ACL cache;
every znode as ``(path, data, aclKey, StatPersisted)`` in depth-first order
until the path ``"/"`` (the root itself is written with the empty path); a
seal (Adler-32 of everything before it + ``"/"``); then, 3.6+, the zxid digest
and a second seal; then, 3.9+, ``lastProcessedZxid`` and a third seal.

Damage policy: node records carry no framing or checksum of their own, so
there is no safe way to find the next node after a bad one. Reading stops at
the first record that does not decode; the nodes before it are kept, the rest
of the file is one quarantined region. A seal whose checksum does not match is
reported (ZooKeeper would refuse the whole snapshot); the nodes are still
returned, flagged by ``Snapshot.checksum_ok``.

This module also renders a snapshot the way ``SnapshotFormatter -d`` prints it
(same node order: Java's HashSet iteration order, reproduced) and as the JSON
objects of the test oracle (``*.nodes.json``).
"""
from __future__ import annotations

import base64
import datetime as _dt
import zlib
from dataclasses import dataclass, field
from typing import Iterator

from parsers.common.textio import GZIP_MAGIC, ReadProblems, decompressed_chunks
from parsers.zookeeper.jute import JuteError, Reader, hex_id, read_acl_list

SNAP_MAGIC = 0x5A4B534E  # "ZKSN"
SNAPPY_MAGIC = b"\x82SNAPPY\x00"
OPEN_ACL_UNSAFE = [{"perms": 31, "scheme": "world", "id": "anyone"}]
# A snapshot bigger than this after decompression is refused (decompression bomb guard).
MAX_SNAPSHOT_BYTES = 8 << 30
_STAT_BYTES = 60
_SEAL_BYTES = 13  # long checksum + ustring "/"


@dataclass
class SnapNode:
    path: str
    data: bytes | None
    acl_key: int
    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    pzxid: int
    offset: int  # byte offset of the node record (its path) in the decompressed stream


@dataclass
class Seal:
    offset: int
    stored: int
    computed: int

    @property
    def ok(self) -> bool:
        return self.stored == self.computed


@dataclass
class Snapshot:
    magic: int | None = None
    version: int | None = None
    dbid: int | None = None
    sessions: list[tuple[int, int]] = field(default_factory=list)
    acl_cache: dict[int, list[dict]] = field(default_factory=dict)
    nodes: list[SnapNode] = field(default_factory=list)
    seals: list[Seal] = field(default_factory=list)
    digest: dict | None = None  # {"zxid", "digestVersion", "digest"}
    last_processed_zxid: int | None = None
    complete: bool = False  # the node list ended with the "/" terminator
    size: int = 0
    trailing_bytes: int = 0
    errors: list[str] = field(default_factory=list)  # each names a byte offset
    damaged_from: int | None = None  # offset where unreadable bytes start

    @property
    def checksum_ok(self) -> bool:
        return bool(self.seals) and all(s.ok for s in self.seals)

    def acl(self, key: int) -> list[dict] | None:
        if key == -1:
            return OPEN_ACL_UNSAFE
        return self.acl_cache.get(key)


def decompress(data: bytes, name: str = "") -> tuple[bytes, list[str]]:
    """The snapshot stream: gunzipped when gzip (ZooKeeper's own ``.gz`` or a wrapper)."""
    if data.startswith(SNAPPY_MAGIC) or name.endswith(".snappy"):
        return b"", ["unsupported compression: snappy-compressed snapshot (zookeeper.snapshot.compression.method="
                     "snappy); decompress it with ZooKeeper's tools first"]
    if not data.startswith(GZIP_MAGIC):
        return data, []
    problems = ReadProblems()
    out = b"".join(decompressed_chunks(data, problems, MAX_SNAPSHOT_BYTES))
    return out, list(problems.errors)


def read_snapshot(data: bytes) -> Snapshot:
    """Parse a decompressed snapshot. Never raises for bad bytes."""
    snap = Snapshot(size=len(data))
    r = Reader(data)
    try:
        snap.magic, snap.version, snap.dbid = r.read_int("magic"), r.read_int("version"), r.read_long("dbid")
        if snap.magic != SNAP_MAGIC:
            raise JuteError(0, f"wrong magic 0x{snap.magic & 0xFFFFFFFF:08x} (expected ZKSN)")
        count = r.read_int("session count")
        if count < 0 or count * 12 > r.remaining():
            raise JuteError(16, f"session count {count} cannot fit in the file")
        for _ in range(count):
            snap.sessions.append((r.read_long("session id"), r.read_int("session timeout")))
        acl_at = r.offset
        n_acls = r.read_int("ACL cache size")
        if n_acls < 0 or n_acls * 12 > r.remaining():
            raise JuteError(acl_at, f"ACL cache size {n_acls} cannot fit in the file")
        for _ in range(n_acls):
            key = r.read_long("ACL key")
            snap.acl_cache[key] = read_acl_list(r) or []
        while True:
            at = r.offset
            path = r.read_ustring("znode path")
            if path == "/":
                snap.complete = True
                break
            if path is None:
                raise JuteError(at, "null znode path")
            data_ = r.read_buffer("znode data")
            acl_key = r.read_long("znode ACL key")
            r._need(_STAT_BYTES, f"stat of {path or '/'}")
            snap.nodes.append(SnapNode(
                path, data_, acl_key, r.read_long(), r.read_long(), r.read_long(), r.read_long(),
                r.read_int(), r.read_int(), r.read_int(), r.read_long(), r.read_long(), at))
        _read_seal(snap, data, r)
        rest = r.remaining()
        # 3.6+ digest (20 bytes + seal) and 3.9+ lastProcessedZxid (8 bytes + seal); which ones are
        # present depends on server flags, so the remaining length decides.
        if rest in (20 + _SEAL_BYTES, 20 + 8 + 2 * _SEAL_BYTES):
            snap.digest = {"zxid": r.read_long(), "digestVersion": r.read_int(), "digest": r.read_long()}
            _read_seal(snap, data, r)
        if r.remaining() == 8 + _SEAL_BYTES:
            snap.last_processed_zxid = r.read_long()
            _read_seal(snap, data, r)
        snap.trailing_bytes = r.remaining()
        if snap.trailing_bytes:
            snap.errors.append(f"{snap.trailing_bytes} unexpected bytes after the snapshot at byte {r.offset}")
    except JuteError as exc:
        snap.errors.append(str(exc))
        snap.damaged_from = exc.offset
    return snap


def _read_seal(snap: Snapshot, data: bytes, r: Reader) -> None:
    at = r.offset
    computed = zlib.adler32(memoryview(data)[:at])
    stored = r.read_long("checksum")
    slash = r.read_ustring("seal path")
    if slash != "/":
        raise JuteError(at + 8, f"seal path is {slash!r}, expected '/'")
    seal = Seal(at, stored, computed)
    snap.seals.append(seal)
    if not seal.ok:
        snap.errors.append(f"snapshot checksum mismatch at byte {at} (stored {hex_id(stored)}, computed {hex_id(computed)})")


def name_zxid(name: str) -> int | None:
    """``snapshot.b4`` / ``log.13b.gz`` -> the hex zxid in the name."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    parts = base.split(".")
    if len(parts) >= 2:
        try:
            return int(parts[1], 16)
        except ValueError:
            return None
    return None


# ---------------------------------------------------------------- Java iteration order

def _java_string_hash(s: str) -> int:
    h = 0
    raw = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(raw), 2):
        h = (31 * h + ((raw[i] << 8) | raw[i + 1])) & 0xFFFFFFFF
    return h


def _java_long_hash(v: int) -> int:
    u = v & 0xFFFFFFFFFFFFFFFF
    return (u ^ (u >> 32)) & 0xFFFFFFFF


def java_hash_order(keys: list, hashcode, capacity: int) -> list:
    """Iteration order of a java.util.HashMap/HashSet after inserting ``keys`` in order.

    Buckets are visited in index order, each in insertion order; resizes keep
    that relative order. Exact unless a bucket grows past 8 entries in a table
    of 64 or more (Java then turns it into a tree), which needs names crafted to collide.
    """
    buckets: list[list] = [[] for _ in range(capacity)]
    size = 0

    def spread(k) -> int:
        h = hashcode(k)
        return h ^ (h >> 16)

    def resize(old: list[list]) -> list[list]:
        new: list[list] = [[] for _ in range(len(old) * 2)]
        for b in old:
            for k in b:
                new[spread(k) & (len(new) - 1)].append(k)
        return new

    for k in keys:
        b = buckets[spread(k) & (len(buckets) - 1)]
        b.append(k)
        if len(b) > 8 and len(buckets) < 64:
            buckets = resize(buckets)
        size += 1
        if size > len(buckets) * 3 // 4:
            buckets = resize(buckets)
    return [k for b in buckets for k in b]


# ---------------------------------------------------------------- rendering

def java_date(ms: int) -> str:
    """java.util.Date.toString() in UTC: ``Sun Nov 22 04:48:28 UTC 2026``."""
    try:
        d = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=ms)
    except OverflowError:
        return f"@{ms}ms"
    return d.strftime("%a %b %d %H:%M:%S UTC ") + str(d.year)


def _children(snap: Snapshot) -> dict[str, list[str]]:
    """Child names per path in snapshot order (that is the order ZooKeeper re-adds them)."""
    kids: dict[str, list[str]] = {}
    for n in snap.nodes:
        if n.path == "":
            continue
        parent, _, name = n.path.rpartition("/")
        kids.setdefault(parent, []).append(name)
    return kids


def dump_lines(snap: Snapshot, file_zxid: int | None) -> Iterator[str]:
    """SnapshotFormatter -d output, line by line."""
    by_path = {("/" if n.path == "" else n.path): n for n in snap.nodes}
    kids = _children(snap)
    yield f"ZNode Details (count={len(snap.nodes) + 1}):"
    last = [0]

    def walk(path: str) -> Iterator[str]:
        n = by_path.get(path)
        if n is None:
            return
        yield "----"
        yield path
        yield f"  cZxid = {_x(n.czxid)}"
        yield f"  ctime = {java_date(n.ctime)}"
        yield f"  mZxid = {_x(n.mzxid)}"
        yield f"  mtime = {java_date(n.mtime)}"
        yield f"  pZxid = {_x(n.pzxid)}"
        yield f"  cversion = {n.cversion}"
        yield f"  dataVersion = {n.version}"
        yield f"  aclVersion = {n.aversion}"
        yield f"  ephemeralOwner = {_x(n.ephemeral_owner)}"
        yield "  data = " + ("" if n.data is None else base64.b64encode(n.data).decode("ascii"))
        last[0] = max(last[0], n.mzxid, n.pzxid)
        key = "" if path == "/" else path
        for child in java_hash_order(kids.get(key, []), _java_string_hash, 8):
            yield from walk(("" if path == "/" else path) + "/" + child)

    # Nodes are reachable from the root only; a damaged snapshot may lack it.
    yield from walk("/")
    yield "----"
    yield "Session Details (sid, timeout, ephemeralCount):"
    owners: dict[int, int] = {}
    for n in snap.nodes:
        if n.ephemeral_owner and (n.ephemeral_owner >> 56) & 0xFF not in (0x80, 0xFF):  # TTL/container owners
            owners[n.ephemeral_owner] = owners.get(n.ephemeral_owner, 0) + 1
    timeouts = dict(snap.sessions)
    for sid in java_hash_order([s for s, _ in snap.sessions], _java_long_hash, 16):
        yield f"{_x(sid)}, {timeouts[sid]}, {owners.get(sid, 0)}"
    yield "----"
    yield f"Last zxid: {hex_id(max(file_zxid if file_zxid is not None else 0, last[0]))}"


def _x(v: int) -> str:
    return format(v & 0xFFFFFFFFFFFFFFFF, "#016x")


def node_json(snap: Snapshot, n: SnapNode, num_children: int) -> dict:
    """The node as the oracle's ``*.nodes.json`` objects."""
    text = None if n.data is None else n.data.decode("utf-8", "replace")
    obj = {
        "path": "/" if n.path == "" else n.path, "data": text, "data_len": -1 if n.data is None else len(n.data),
        "czxid": hex_id(n.czxid), "mzxid": hex_id(n.mzxid), "pzxid": hex_id(n.pzxid), "ctime": n.ctime,
        "mtime": n.mtime, "version": n.version, "cversion": n.cversion, "aversion": n.aversion,
        "ephemeralOwner": hex_id(n.ephemeral_owner), "numChildren": num_children, "acl": snap.acl(n.acl_key),
    }
    if n.data is not None and text.encode("utf-8") != n.data:
        obj["data_b64"] = base64.b64encode(n.data).decode("ascii")
    return obj


def nodes_json(snap: Snapshot) -> list[dict]:
    """Every node, sorted by path, with numChildren derived from the tree."""
    kids = _children(snap)
    out = [node_json(snap, n, len(kids.get(n.path, []))) for n in snap.nodes]
    return sorted(out, key=lambda o: o["path"])
