"""Read-only capture of a live ZooKeeper-mode Kafka cluster: a snapshot of the
Kafka znodes, and optionally a trace of every change seen through watches.

The output layout is fixed in ``docs/capture-layout.md`` (read back by
``parsers/zookeeper/znode_dump.py``).

Read-only by construction: everything below talks to ZooKeeper through
:class:`ReadOnlyZk`, which has no write method, and which also refuses, before
anything reaches the wire, any request that is not a read (so not even kazoo
internals or a future edit can slip a write through). No kazoo recipe is used:
they create znodes.

Reads are pipelined: ZooKeeper answers the requests of one connection in
order, so a window of outstanding ``get_async`` / ``get_children_async``
results can be consumed first-in first-out without any callback thread.
"""
from __future__ import annotations

import base64
import json
import logging
import math
import os
import queue
import re
import signal
import ssl
import threading
import time
import warnings
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import quote

from forensics.errors import UserError

# --- what a capture reads ---------------------------------------------------------------------

# Kafka's znodes (ZooKeeper mode), below the chroot. Subtrees are read whole.
# /config/users and /config/clients are left out on purpose: they may hold SCRAM credentials.
ROOTS: tuple[str, ...] = (
    "/controller",
    "/controller_epoch",
    "/brokers",
    "/admin",
    "/isr_change_notification",
    "/log_dir_event_notification",
    "/config/topics",
    "/config/brokers",
    "/config/changes",
    "/cluster",
)

# Znodes Kafka never gives children. A watch needs no child watch on them (unless they have
# children after all); every other znode gets one even while empty, so that a first child is seen.
_LEAF = re.compile(
    r"^/(controller|controller_epoch|brokers/seqid|brokers/ids/[^/]+|brokers/topics/[^/]+/partitions/[^/]+/state"
    r"|config/(topics|brokers|changes)/[^/]+|admin/(delete_topics/[^/]+|reassign_partitions|preferred_replica_election)"
    r"|isr_change_notification/[^/]+|log_dir_event_notification/[^/]+|cluster/id)$"
)

FORMAT = "kafka-forensics-capture"
FORMAT_VERSION = 1
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_WINDOW = 1000


def is_leaf(path: str) -> bool:
    return _LEAF.match(path) is not None


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# --- options (pure) ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ZkTarget:
    hosts: str  # "h1:2181,h2:2181"
    chroot: str | None  # "/kafka" or None

    @property
    def connect_string(self) -> str:
        return self.hosts + (self.chroot or "")

    def show(self, path: str) -> str:
        """A path as it is on the server (with the chroot), for messages."""
        return (self.chroot or "") + path if path != "/" else (self.chroot or "/")


@dataclass(frozen=True)
class TlsFiles:
    ca: str | None
    cert: str | None
    key: str | None


@dataclass(frozen=True)
class CaptureOptions:
    target: ZkTarget
    out: Path
    auth: tuple[str, str] | None = None  # (scheme, credential); never written anywhere
    tls: TlsFiles | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    watch_s: float | None = None  # None: snapshot only; math.inf: until Ctrl-C
    window: int = DEFAULT_WINDOW


_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d+))?$")


def parse_zk(spec: str) -> ZkTarget:
    """``HOST[:PORT][,HOST[:PORT]...][/chroot]`` (ZooKeeper's connect string)."""
    spec = (spec or "").strip()
    slash = spec.find("/")
    hosts, chroot = (spec, None) if slash < 0 else (spec[:slash], spec[slash:])
    entries = [h.strip() for h in hosts.split(",")]
    if not hosts or any(not h for h in entries):
        raise UserError("--zk: expected HOST:PORT[,HOST:PORT...][/chroot], e.g. zk1:2181,zk2:2181/kafka")
    for h in entries:
        m = _HOST.match(h)
        if not m:
            raise UserError(f"--zk: {h!r} is not HOST or HOST:PORT")
        if m.group(2) is not None and not 0 < int(m.group(2)) < 65536:
            raise UserError(f"--zk: port {m.group(2)} is out of range")
    if chroot is not None:
        chroot = chroot.rstrip("/")
        if chroot and any(not c for c in chroot.split("/")[1:]):
            raise UserError(f"--zk: chroot {chroot!r} has an empty path component")
    return ZkTarget(",".join(entries), chroot or None)


def parse_auth(spec: str, origin: str = "--auth") -> tuple[str, str]:
    """``SCHEME:CREDENTIAL`` such as ``digest:user:password``. Messages never echo the credential."""
    scheme, sep, cred = (spec or "").strip().partition(":")
    if not sep or not scheme or not cred or not re.fullmatch(r"[A-Za-z0-9_-]+", scheme):
        raise UserError(f"{origin}: expected SCHEME:CREDENTIAL, e.g. digest:USER:PASSWORD")
    if scheme == "digest" and ":" not in cred:
        raise UserError(f"{origin}: digest credentials are USER:PASSWORD")
    return scheme, cred


def read_auth_file(path: str) -> tuple[str, str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--auth-file: cannot read {path}: {type(exc).__name__}") from None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if len(lines) != 1:
        raise UserError(f"--auth-file {path}: expected one line SCHEME:CREDENTIAL")
    return parse_auth(lines[0], origin=f"--auth-file {path}")


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$")


def parse_duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``10m``, ``2h``; ``forever`` means until Ctrl-C."""
    t = (text or "").strip().lower()
    if t in ("forever", "inf", "ctrl-c"):
        return math.inf
    m = _DURATION.match(t)
    if not m or float(m.group(1)) <= 0:
        raise UserError(f"--watch: {text!r} is not a duration (e.g. 90s, 10m, 2h, forever)")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600}[m.group(2)]


def check_tls(tls: TlsFiles) -> None:
    """Load the PEM files once here, so a bad file is named instead of ending in a connect time-out."""
    for opt, path in (("--ca", tls.ca), ("--cert", tls.cert), ("--key", tls.key)):
        if path is not None and not Path(path).is_file():
            raise UserError(f"{opt}: no such file: {path}")
    if (tls.cert is None) != (tls.key is None):
        raise UserError("--cert and --key go together (client certificate and its private key)")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        if tls.ca:
            ctx.load_verify_locations(tls.ca)
    except (ssl.SSLError, OSError) as exc:
        raise UserError(f"--ca {tls.ca}: not a usable PEM CA file ({exc.__class__.__name__})") from None
    try:
        if tls.cert:
            ctx.load_cert_chain(tls.cert, tls.key)
    except (ssl.SSLError, OSError) as exc:
        raise UserError(
            f"--cert {tls.cert} / --key {tls.key}: cannot load the pair ({exc.__class__.__name__}; "
            "an encrypted key is not supported)"
        ) from None


# --- the layout (pure) ------------------------------------------------------------------------

_SAFE = re.compile(r"^[A-Za-z0-9._-]+$")


def encode_component(name: str) -> str:
    return name if _SAFE.match(name) else quote(name, safe="")


def znode_file(path: str) -> str:
    """``/brokers/ids/1`` -> ``znodes/brokers/ids/1.json`` (relative to the capture folder)."""
    parts = [encode_component(p) for p in path.strip("/").split("/")]
    return "znodes/" + "/".join(parts) + ".json"


def plan_files(paths: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """Where each znode goes, and the ones that cannot be stored because a file and a
    folder would share a name (znode ``x.json`` with children beside a znode ``x``)."""
    files = {p: znode_file(p) for p in paths}
    dirs = {f.rsplit("/", i)[0] for f in files.values() for i in range(1, f.count("/"))}
    clashes = sorted(p for p, f in files.items() if f in dirs)
    for p in clashes:
        del files[p]
    return files, [f"{p}: not stored, its file name {znode_file(p)} is also a folder" for p in clashes]


STAT_FIELDS = ("czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion",
               "ephemeralOwner", "pzxid", "dataLength", "numChildren")


def stat_dict(stat) -> dict:
    return {k: int(getattr(stat, k)) for k in STAT_FIELDS}


def data_fields(data: bytes | None) -> dict:
    """``data`` as UTF-8 text (``None`` for a null znode); otherwise base64 in ``data_b64``."""
    if data is None:
        return {"data": None, "data_b64": None}
    try:
        return {"data": data.decode("utf-8"), "data_b64": None}
    except UnicodeDecodeError:
        return {"data": None, "data_b64": base64.b64encode(data).decode("ascii")}


@dataclass(frozen=True)
class Node:
    data: bytes | None
    stat: dict

    def record(self, path: str) -> dict:
        return {"path": path, **data_fields(self.data), "stat": self.stat}


def count_kafka(nodes: dict[str, Node]) -> dict[str, int]:
    def n(rx: str) -> int:
        r = re.compile(rx)
        return sum(1 for p in nodes if r.match(p))

    return {
        "brokers": n(r"^/brokers/ids/[^/]+$"),
        "topics": n(r"^/brokers/topics/[^/]+$"),
        "partitions": n(r"^/brokers/topics/[^/]+/partitions/[^/]+/state$"),
        "controller": int("/controller" in nodes),
    }


def diff_nodes(old: dict[str, Node], new: dict[str, Node]) -> list[dict]:
    """Trace lines that take ``old`` to ``new`` (after a gap): deletions first, then
    creations and changes in zxid order. A znode re-created in between is deleted + created."""
    lines: list[dict] = [{"kind": "deleted", "path": p} for p in sorted(old.keys() - new.keys())]
    for p in sorted(new, key=lambda p: (new[p].stat["mzxid"], p)):
        o, n = old.get(p), new[p]
        if o is None:
            lines.append({"kind": "created", **n.record(p)})
        elif o.stat["czxid"] != n.stat["czxid"]:
            lines += [{"kind": "deleted", "path": p}, {"kind": "created", **n.record(p)}]
        elif o.stat["mzxid"] != n.stat["mzxid"]:
            lines.append({"kind": "changed", **n.record(p)})
    return lines


def manifest(opts: CaptureOptions, session: "SessionLog", started_ms: int, finished_ms: int,
             znodes: int, errors: list[str], watch: dict | None = None) -> dict:
    """Connection facts only: credentials and TLS key material are never part of it."""
    m = {
        "format": FORMAT, "version": FORMAT_VERSION,
        "zk": opts.target.hosts, "chroot": opts.target.chroot,
        "server": session.servers[0] if session.servers else None,
        "session_id": session.sessions[0] if session.sessions else None,
        "sessions": list(session.sessions), "tls": opts.tls is not None,
        "started_ms": started_ms, "finished_ms": finished_ms,
        "znodes": znodes, "errors": errors,
    }
    if watch is not None:
        m["watch"] = watch
    return m


# --- the only door to ZooKeeper ---------------------------------------------------------------

class ReadOnlyViolation(RuntimeError):
    """Something tried to send a ZooKeeper request that is not a read."""


class _LastWarning(logging.Handler):
    """Keeps kazoo's last warning (for the error message) instead of printing it."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.last: str | None = None

    def emit(self, record):
        try:
            self.last = record.getMessage()
        except Exception:  # noqa: BLE001 - a log record must never break the capture
            pass


_kazoo_log = logging.getLogger("forensics.capture.kazoo")
_kazoo_log.propagate = False
_kazoo_log.setLevel(logging.WARNING)
_last_warning = _LastWarning()
_kazoo_log.addHandler(_last_warning)


@dataclass
class SessionLog:
    """Sessions and servers used, in order (filled from kazoo's connection thread)."""

    sessions: list[str] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)


def _guard_reads(call: Callable, allowed: frozenset) -> Callable:
    def read_only_call(request, async_object):
        if getattr(request, "type", None) not in allowed:
            raise ReadOnlyViolation(f"capture is read-only: refused a {type(request).__name__} request")
        return call(request, async_object)

    return read_only_call


class ReadOnlyZk:
    """Reads, watches and connection state of one kazoo client, and nothing else."""

    def __init__(self, client, target: ZkTarget):
        from kazoo.protocol.serialization import Exists, GetChildren, GetChildren2, GetData

        self._client = client
        self.target = target
        # Every API request of kazoo goes through _call; only reads may pass.
        client._call = _guard_reads(client._call, frozenset(r.type for r in (Exists, GetData, GetChildren, GetChildren2)))
        self.log = SessionLog()
        self.states: "queue.Queue[tuple]" = queue.Queue()
        client.add_listener(self._on_state)

    # kazoo calls this from its connection thread: record, never block.
    def _on_state(self, state) -> None:
        if state == "CONNECTED":
            sid = self._client._session_id
            if sid is not None and f"0x{sid:x}" not in self.log.sessions:
                self.log.sessions.append(f"0x{sid:x}")
                try:
                    host, port = self._client._connection._socket.getpeername()[:2]
                    self.log.servers.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
                except Exception:  # noqa: BLE001 - the server's address is nice to have, not needed
                    self.log.servers.append(None)
        self.states.put((str(state), now_ms()))

    @property
    def connected(self) -> bool:
        return self._client.connected

    def wait_connected(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not self._client.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        return self._client.connected

    def get(self, path: str, watch=None):
        return self._client.get_async(path, watch=watch)

    def children(self, path: str, watch=None):
        return self._client.get_children_async(path, watch=watch, include_data=True)

    def exists(self, path: str, watch=None):
        return self._client.exists_async(path, watch=watch)

    def close(self) -> None:
        """Ends the session (the server logs closeSession, which removes no znode of ours: we made none)."""
        try:
            self._client.stop()
        finally:
            self._client.close()


def connect(opts: CaptureOptions) -> ReadOnlyZk:
    from kazoo.client import KazooClient
    from kazoo.exceptions import KazooException
    from kazoo.retry import KazooRetry

    kwargs = dict(
        hosts=opts.target.connect_string,
        timeout=max(opts.timeout_s, 1.0),  # session timeout; the server bounds it
        connection_retry=KazooRetry(max_tries=-1, delay=0.1, backoff=1.5, max_delay=2.0),
        logger=_kazoo_log,
        randomize_hosts=False,  # the first reachable server in the order given: reproducible
        read_only=True,  # a server that lost its quorum still serves reads: fine for forensics
    )
    if opts.auth:
        kwargs["auth_data"] = [opts.auth]
    if opts.tls:
        kwargs.update(use_ssl=True, ca=opts.tls.ca, certfile=opts.tls.cert, keyfile=opts.tls.key, verify_certs=True)
    try:
        client = KazooClient(**kwargs)
    except (ValueError, TypeError) as exc:
        raise UserError(f"--zk {opts.target.hosts}: {exc}") from None
    zk = ReadOnlyZk(client, opts.target)
    _last_warning.last = None
    where = opts.target.hosts
    client.start_async().wait(opts.timeout_s)
    if not client.connected:
        why = f" (last error: {_last_warning.last})" if _last_warning.last else ""
        zk.close()
        if client.client_state == "AUTH_FAILED":
            raise UserError(f"ZooKeeper {where} refused the --auth credentials (AUTH_FAILED)")
        raise UserError(f"cannot connect to ZooKeeper {where} within {opts.timeout_s:g}s{why}")
    # The first read comes after the auth packet on the wire: it proves auth and the chroot.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            root = zk.exists("/").get(timeout=opts.timeout_s)
    except Exception as exc:  # noqa: BLE001 - any failure here is the user's setup, said in one line
        zk.close()
        if type(exc).__name__ == "AuthFailedError" or client.client_state == "AUTH_FAILED":
            raise UserError(f"ZooKeeper {where} refused the --auth credentials (AUTH_FAILED)") from None
        if isinstance(exc, KazooException) or "Timeout" in type(exc).__name__:
            raise UserError(f"ZooKeeper {where} did not answer a first read: {type(exc).__name__}") from None
        raise
    if root is None:
        zk.close()
        raise UserError(f"chroot {opts.target.chroot} does not exist on ZooKeeper {where} (wrong --zk chroot?)")
    return zk


# --- pipelined reads --------------------------------------------------------------------------

def _conn_error(exc: BaseException) -> bool:
    from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, SessionExpiredError

    return isinstance(exc, (ConnectionLoss, SessionExpiredError, ConnectionClosedError)) or "Timeout" in type(exc).__name__


@dataclass(frozen=True)
class Watchers:
    data: Callable
    child: Callable


def pipeline(zk: ReadOnlyZk, ops: Iterable[tuple], handle: Callable, *, window: int, timeout_s: float,
             watch: Watchers | None) -> list[tuple]:
    """Sends ``(op, path, *ctx)`` requests (op: get, children, exists), at most ``window``
    outstanding, and calls ``handle(op, value_or_exception)`` for each in order; ``handle``
    returns follow-up ops. Returns the ops lost to a connection problem (the caller decides)."""
    pending = deque(ops)
    inflight: deque = deque()
    lost: list[tuple] = []
    send = {"get": zk.get, "children": zk.children, "exists": zk.exists}
    while pending or inflight:
        while pending and len(inflight) < window and not lost:
            op = pending.popleft()
            w = None if watch is None else (watch.child if op[0] == "children" else watch.data)
            inflight.append((op, send[op[0]](op[1], watch=w)))
        if not inflight:
            break
        op, res = inflight.popleft()
        try:
            value = res.get(timeout=timeout_s)
        except Exception as exc:  # noqa: BLE001 - sorted out right here
            if _conn_error(exc):
                lost.append(op)
                continue
            value = exc
        pending.extend(handle(op, value))
    lost.extend(pending)
    return lost


@dataclass
class ReadResult:
    nodes: dict[str, Node] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    missing_roots: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)


class TreeReader:
    """Every znode below some roots, with data and stat. With ``watch`` it also arms a data
    watch on each znode, a child watch on each possible parent and an exists watch on a
    missing root, all in the same request that reads them (so no change falls in between)."""

    def __init__(self, zk: ReadOnlyZk, roots: Iterable[str], *, window: int, timeout_s: float,
                 watch: Watchers | None = None, say: Callable[[str], None] | None = None):
        self.zk, self.roots = zk, tuple(roots)
        self.window, self.timeout_s, self.watch, self.say = window, timeout_s, watch, say
        self.result = ReadResult()

    def run(self, ops: Iterable[tuple] | None = None) -> list[tuple]:
        """Reads (from the roots, or from ``ops`` lost earlier); returns the ops lost this time."""
        start = [("get", p) for p in self.roots] if ops is None else list(ops)
        return pipeline(self.zk, start, self._handle, window=self.window, timeout_s=self.timeout_s, watch=self.watch)

    def _handle(self, op: tuple, value) -> list[tuple]:
        from kazoo.exceptions import NoAuthError, NoNodeError

        kind, path, r = op[0], op[1], self.result
        if isinstance(value, NoAuthError):
            raise UserError(f"not allowed to read {self.zk.target.show(path)} (NoAuth: its ACL needs other --auth credentials)")
        if isinstance(value, NoNodeError):
            if kind == "get" and path in self.roots:
                r.missing_roots.add(path)
                return [("exists", path)] if self.watch else []
            r.errors.append(f"{path}: NoNodeError (deleted during capture)")
            return []
        if isinstance(value, BaseException):
            r.errors.append(f"{path}: {type(value).__name__} ({kind})")
            return []
        if kind == "exists":
            return [] if value is None else [("get", path)]
        if kind == "get":
            data, stat = value
            r.nodes[path] = Node(data, stat_dict(stat))
            if self.say and len(r.nodes) % 20000 == 0:
                self.say(f"{len(r.nodes):,} znodes read")
            return [("children", path)] if stat.numChildren > 0 or (self.watch and not is_leaf(path)) else []
        kids = sorted(value[0])
        r.children[path] = kids
        return [("get", f"{path}/{k}") for k in kids]


def snapshot(zk: ReadOnlyZk, opts: CaptureOptions, watch: Watchers | None = None,
             say: Callable[[str], None] | None = None, max_rounds: int = 5) -> ReadResult:
    """Reads :data:`ROOTS`, riding out short connection losses (what was in flight is re-read)."""
    reader = TreeReader(zk, ROOTS, window=opts.window, timeout_s=opts.timeout_s, watch=watch, say=say)
    lost = reader.run()
    rounds = 0
    while lost:
        rounds += 1
        if rounds > max_rounds or not zk.wait_connected(opts.timeout_s):
            raise UserError(
                f"lost the connection to ZooKeeper {opts.target.hosts} during the snapshot "
                f"after {len(reader.result.nodes):,} znodes, and could not finish it"
            )
        lost = reader.run(lost)
    return reader.result


# --- the watch trace --------------------------------------------------------------------------

class Trace:
    """``watch.jsonl``: one line per change, flushed as soon as written."""

    def __init__(self, path: Path):
        self._f = open(path, "a", encoding="utf-8")
        self.seq = 0
        self.changes = 0
        self.gaps: list[dict] = []

    def write(self, line: dict, observed_ms: int) -> None:
        self.seq += 1
        self._f.write(json.dumps({"seq": self.seq, "observed_ms": observed_ms, **line}, ensure_ascii=False) + "\n")
        self._f.flush()
        if line["kind"] == "gap":
            self.gaps.append({k: line[k] for k in ("from_ms", "to_ms", "reason")})
        else:
            self.changes += 1

    def close(self) -> None:
        self._f.close()


class Watch:
    """Keeps watches on everything the snapshot read and writes each change to a :class:`Trace`.

    ZooKeeper watches fire once and carry no data: each notification is answered by re-reading
    the znode (re-arming the watch in the same request), and a line is written only if its
    zxid moved, so several changes between a notification and its re-read show as one.
    kazoo drops every watch when the connection drops; then the trace gets a ``gap`` line and
    everything is re-read and compared with what was known.
    """

    def __init__(self, zk: ReadOnlyZk, opts: CaptureOptions):
        self.zk, self.opts = zk, opts
        self.events = zk.states  # one queue: state changes and notifications stay in order
        self.watchers = Watchers(self._on_data, self._on_child)
        self.known: dict[str, Node] = {}
        self.kids: dict[str, list[str]] = {}
        self.gap: list | None = None  # [from_ms, reason] while disconnected
        self.errors: list[str] = []
        self.trace: Trace | None = None

    # kazoo's callback thread: record and return.
    def _on_data(self, ev) -> None:
        if ev.type != "NONE":
            self.events.put(("data", ev.type, ev.path, now_ms()))

    def _on_child(self, ev) -> None:
        if ev.type == "CHILD":  # a DELETED here is also delivered to the znode's data watch
            self.events.put(("child", ev.type, ev.path, now_ms()))

    def run(self, snap: ReadResult, trace: Trace, duration_s: float, stop: threading.Event) -> str:
        self.known, self.kids, self.trace = dict(snap.nodes), dict(snap.children), trace
        deadline = time.monotonic() + duration_s
        ended = "duration"
        while True:
            if stop.is_set():
                ended = "interrupted"
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                first = self.events.get(timeout=min(0.25, remaining))
            except queue.Empty:
                continue
            self.handle([first, *self._drain()])
        self.handle(self._drain())  # what was already seen is still written
        if self.gap is not None:
            self._write_gap(now_ms(), self.gap[1] + "; the capture ended before it came back")
        return ended

    def _drain(self) -> list[tuple]:
        items = []
        while True:
            try:
                items.append(self.events.get_nowait())
            except queue.Empty:
                return items

    def handle(self, items: list[tuple]) -> None:
        seg: list[tuple] = []
        for it in items:
            if it[0] in ("data", "child"):
                seg.append(it)
                continue
            self._reread(seg)
            seg = []
            self._state(it[0], it[1])
        self._reread(seg)

    def _state(self, state: str, ms: int) -> None:
        if state == "SUSPENDED" and self.gap is None:
            self.gap = [ms, "connection lost"]
        elif state == "LOST":
            self.gap = [self.gap[0] if self.gap else ms, "session lost (expired or closed); a new session was opened"]
        elif state == "CONNECTED" and self.gap is not None:
            self._resync(ms)

    def _write_gap(self, to_ms: int, reason: str) -> None:
        self.trace.write({"kind": "gap", "from_ms": self.gap[0], "to_ms": to_ms, "reason": reason}, observed_ms=now_ms())
        self.gap = None

    def _resync(self, to_ms: int, tries: int = 3) -> None:
        for _ in range(tries):
            reader = TreeReader(self.zk, ROOTS, window=self.opts.window, timeout_s=self.opts.timeout_s, watch=self.watchers)
            if not reader.run():
                break
            if not self.zk.connected:
                return  # dropped again: the next CONNECTED resyncs
        else:
            self.events.put(("CONNECTED", to_ms))  # connected but too slow: try again, the gap stays open
            return
        ms = now_ms()
        self._write_gap(to_ms, self.gap[1])
        for line in diff_nodes(self.known, reader.result.nodes):
            self.trace.write(line, observed_ms=ms)
        self.known, self.kids = dict(reader.result.nodes), dict(reader.result.children)
        self.errors += reader.result.errors

    def _reread(self, seg: list[tuple]) -> None:
        if not seg or self.gap is not None:
            return  # nothing, or disconnected: the resync after the gap reports the outcome
        removed: set[str] = set()
        ops = [("get" if kind == "data" else "children", path, ms) for kind, _t, path, ms in seg]
        handle = lambda op, value: self._on_reread(op, value, removed)  # noqa: E731
        for _ in range(3):
            ops = pipeline(self.zk, ops, handle, window=self.opts.window, timeout_s=self.opts.timeout_s,
                           watch=self.watchers)
            if not ops or not self.zk.connected:
                break
        if ops:
            # Reads that never came back: what they would have shown is not lost, it is re-read
            # after a gap (a lost connection queues its own state change; a slow one gets this).
            self.gap = [seg[0][3], "connection lost or reads timed out"]
            if self.zk.connected:
                self.events.put(("CONNECTED", now_ms()))
        for path in sorted(p for p in removed if p in self.known):
            # ZooKeeper notifies a znode's deletion before its parent's child change, so this only
            # catches a deletion whose own notification never came; it is reported all the same.
            self._deleted(path, seg[-1][3])

    def _deleted(self, path: str, ms: int) -> None:
        for p in sorted((q for q in self.known if q == path or q.startswith(path + "/")), reverse=True):
            del self.known[p]
            self.kids.pop(p, None)
            self.trace.write({"kind": "deleted", "path": p}, observed_ms=ms)

    def _on_reread(self, op: tuple, value, removed: set[str]) -> list[tuple]:
        from kazoo.exceptions import NoNodeError

        kind, path, ms = op[0], op[1], op[2]
        if isinstance(value, NoNodeError):
            if kind == "get":
                if path in self.known:
                    self._deleted(path, ms)
                if path in ROOTS:
                    return [("exists", path, ms)]  # /controller comes back: see it
            return []
        if isinstance(value, BaseException):
            self.errors.append(f"{path}: {type(value).__name__} ({kind}, during --watch)")
            return []
        if kind == "exists":
            return [] if value is None else [("get", path, ms)]
        if kind == "get":
            node = Node(value[0], stat_dict(value[1]))
            old = self.known.get(path)
            new_here = old is None or old.stat["czxid"] != node.stat["czxid"]
            if old is not None and new_here:
                self._deleted(path, ms)
            self.known[path] = node
            if new_here:
                self.trace.write({"kind": "created", **node.record(path)}, observed_ms=ms)
                if node.stat["numChildren"] > 0 or not is_leaf(path):
                    return [("children", path, ms)]
            elif old.stat["mzxid"] != node.stat["mzxid"]:
                self.trace.write({"kind": "changed", **node.record(path)}, observed_ms=ms)
            return []
        kids, stat = sorted(value[0]), stat_dict(value[1])
        old_kids = self.kids.get(path)
        self.kids[path] = kids
        if old_kids is not None and old_kids != kids:
            self.trace.write({"kind": "children", "path": path, "children": kids, "stat": stat}, observed_ms=ms)
            removed.update(f"{path}/{k}" for k in set(old_kids) - set(kids))
        return [("get", f"{path}/{k}", ms) for k in kids if f"{path}/{k}" not in self.known]


# --- the run ----------------------------------------------------------------------------------

@dataclass
class CaptureResult:
    out: Path
    manifest: dict
    counts: dict


def _prepare_out(out: Path) -> bool:
    """Creates ``out`` (True if it did); refuses a file or a non-empty folder: a capture never mixes with another."""
    if out.exists():
        if not out.is_dir():
            raise UserError(f"--out {out}: exists and is not a folder")
        if any(out.iterdir()):
            raise UserError(f"--out {out}: folder is not empty (give a new one)")
        return False
    try:
        out.mkdir(parents=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create it ({exc.strerror or exc})") from None
    return True


def _write_json(path: Path, obj: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_znodes(out: Path, nodes: dict[str, Node]) -> tuple[int, list[str]]:
    """One JSON file per znode; returns how many were written and the ones that could not be."""
    files, errors = plan_files(nodes)
    made: set[Path] = set()
    for path in sorted(files):
        f = out / files[path]
        if f.parent not in made:
            f.parent.mkdir(parents=True, exist_ok=True)
            made.add(f.parent)
        f.write_text(json.dumps(nodes[path].record(path), ensure_ascii=False) + "\n", encoding="utf-8")
    return len(files), errors


def _empty_message(zk: ReadOnlyZk, opts: CaptureOptions) -> str:
    where = f"{opts.target.show('/')} on ZooKeeper {opts.target.hosts}"
    msg = f"no Kafka cluster under {where}: no broker, topic or controller znodes"
    if opts.target.chroot is None:
        try:  # a common slip: Kafka lives under a chroot that --zk did not name
            tops = zk.children("/").get(timeout=opts.timeout_s)[0]
            hits = [t for t in sorted(tops) if zk.exists(f"/{t}/brokers").get(timeout=opts.timeout_s) is not None]
        except Exception:  # noqa: BLE001 - only a hint
            hits = []
        if hits:
            return msg + f"; Kafka znodes are under /{hits[0]}: did you mean --zk {opts.target.hosts}/{hits[0]}?"
    return msg + " (empty cluster, or wrong chroot?)"


class _SigintStops:
    """While active, the first Ctrl-C sets ``stop`` (the watch ends cleanly); a second one interrupts."""

    def __init__(self, stop: threading.Event):
        self.stop, self.prev = stop, None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.prev = signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, signum, frame):
        if self.stop.is_set():
            raise KeyboardInterrupt
        self.stop.set()

    def __exit__(self, *exc):
        if self.prev is not None:
            signal.signal(signal.SIGINT, self.prev)


def run_capture(opts: CaptureOptions, say: Callable[[str], None] | None = None,
                stop: threading.Event | None = None) -> CaptureResult:
    say = say or (lambda msg: None)
    stop = stop or threading.Event()
    created = _prepare_out(opts.out)
    wrote = False
    try:
        started = now_ms()
        zk = connect(opts)
        watch = Watch(zk, opts) if opts.watch_s else None
        try:
            snap = snapshot(zk, opts, watch=watch.watchers if watch else None, say=say)
            counts = count_kafka(snap.nodes)
            if not (counts["brokers"] or counts["topics"] or counts["controller"]):
                raise UserError(_empty_message(zk, opts))
            wrote = True
            written, unstored = write_znodes(opts.out, snap.nodes)
            errors = snap.errors + unstored
            m = manifest(opts, zk.log, started, now_ms(), written, errors)
            _write_json(opts.out / "manifest.json", m)
            say(f"snapshot: {len(snap.nodes):,} znodes ({counts['brokers']} brokers, {counts['topics']} topics, "
                f"{counts['partitions']:,} partitions) from {m['server']}, session {m['session_id']}")
            if watch:
                trace = Trace(opts.out / "watch.jsonl")
                t0 = time.monotonic()
                say("watching" + ("" if math.isinf(opts.watch_s) else f" for {opts.watch_s:g}s") + " (Ctrl-C ends it cleanly)")
                try:
                    with _SigintStops(stop):
                        ended = watch.run(snap, trace, opts.watch_s, stop)
                finally:
                    trace.close()
                m = manifest(opts, zk.log, started, now_ms(), m["znodes"], errors + watch.errors, watch={
                    "duration_s": None if math.isinf(opts.watch_s) else opts.watch_s,
                    "watched_s": round(time.monotonic() - t0, 3), "ended_by": ended,
                    "changes": trace.changes, "gaps": trace.gaps,
                })
                _write_json(opts.out / "manifest.json", m)
        finally:
            zk.close()
    except OSError as exc:  # a full disk, a folder made read-only meanwhile: the user's to fix
        if created and not wrote:
            _remove_empty(opts.out)
        raise UserError(f"--out {opts.out}: cannot write ({exc.strerror or exc}: {exc.filename or ''})") from None
    except BaseException:
        if created and not wrote:
            _remove_empty(opts.out)
        raise
    return CaptureResult(opts.out, m, counts)


def _remove_empty(out: Path) -> None:
    try:
        out.rmdir()
    except OSError:
        pass
