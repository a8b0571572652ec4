"""What ZooKeeper transactions and snapshot nodes mean for Kafka: raw txns -> schema events.

Dispatch entry points: :func:`parse_txnlog_file`, :func:`parse_snapshot_file`.
Cross-file facts are resolved afterwards by :func:`link_sessions`.

Rules (the contract is docs/events.md, ZooKeeper section):
- every readable txn becomes a ``zk_txn`` event; a failed txn (``error``, or a
  multi with an ``error`` sub-txn, which ZooKeeper applies none of) adds only
  ``zk_write_failed``, never a state event;
- a successful txn is reduced to its net effect per path (a multi that creates
  ``/brokers/ids/1`` with null data and fills it with setData is one
  registration), and each Kafka znode touched becomes one event;
- a snapshot node becomes the same event its last write made, dated by the
  node's own stat (``mzxid``/``mtime``; ``czxid``/``ctime`` for creations such
  as broker registrations), with ``detail.via = "zk_snapshot"``: a txn and a
  snapshot node for the same write share ``(zxid, event_type, detail.path)``
  and :func:`link_sessions` keeps one of them.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from parsers.common.accounting import FileSummary, Quarantined
from parsers.common.context import SourceContext
from parsers.common.textio import GZIP_MAGIC, ReadProblems, decompressed_chunks
from parsers.schema import Event, iso_utc
from parsers.zookeeper.jute import hex_id
from parsers.zookeeper.snapshot import SnapNode, Snapshot, decompress, name_zxid, read_snapshot
from parsers.zookeeper.txnlog import (CREATE_TYPES, DELETE_TYPES, ERROR_NAMES, SETDATA_TYPES, Damage, Txn,
                                      data_text, dump_line, op_name, read_txnlog)

MAX_LOG_BYTES = 8 << 30
MAX_ERRORS = 50  # messages kept per file; every problem is still counted and sampled

# Kafka's znodes, below an optional chroot. The chroot group is lazy so the
# shortest prefix wins: "/brokers/topics/controller" is a topic, not a chroot.
_KAFKA_PATH = re.compile(
    r"^(?P<chroot>(?:/[^/]+)*?)(?:"
    r"/brokers/ids/(?P<broker>-?\d+)"
    r"|/brokers/topics/(?P<state_topic>[^/]+)/partitions/(?P<partition>\d+)/state"
    r"|/brokers/topics/(?P<topic>[^/]+)"
    r"|(?P<controller>/controller)"
    r"|(?P<controller_epoch>/controller_epoch)"
    r"|/config/topics/(?P<config_topic>[^/]+)"
    r"|/config/brokers/(?P<config_broker>[^/]+)"
    r"|(?P<reassign>/admin/reassign_partitions)"
    r"|(?P<preferred>/admin/preferred_replica_election)"
    r"|/admin/delete_topics/(?P<delete_topic>[^/]+)"
    r"|/isr_change_notification/(?P<isr_change>isr_change_\d+)"
    r"|/log_dir_event_notification/(?P<log_dir_event>log_dir_event_\d+)"
    r"|(?P<cluster_id>/cluster/id)"
    r")$"
)


@dataclass(frozen=True)
class KafkaPath:
    kind: str  # broker, partition_state, topic, controller, controller_epoch, topic_config, broker_config,
    #            reassign, preferred, delete_topic, isr_change, log_dir_event, cluster_id
    chroot: str
    name: str | None = None  # topic / broker id text / notification node
    partition: int | None = None


def kafka_path(path: str | None) -> KafkaPath | None:
    """Which Kafka znode a ZooKeeper path is (None: not one Kafka's controller cares about)."""
    if not path:
        return None
    m = _KAFKA_PATH.match(path)
    if not m:
        return None
    g = m.groupdict()
    chroot = g["chroot"] or ""
    if g["broker"] is not None:
        return KafkaPath("broker", chroot, g["broker"])
    if g["state_topic"] is not None:
        return KafkaPath("partition_state", chroot, g["state_topic"], int(g["partition"]))
    for kind in ("topic", "config_topic", "config_broker", "delete_topic", "isr_change", "log_dir_event"):
        if g[kind] is not None:
            return KafkaPath({"config_topic": "topic_config", "config_broker": "broker_config"}.get(kind, kind), chroot, g[kind])
    for kind in ("controller", "controller_epoch", "reassign", "preferred", "cluster_id"):
        if g[kind] is not None:
            return KafkaPath(kind, chroot)
    return None


class PayloadError(ValueError):
    """A Kafka znode whose data is not what Kafka writes there."""


def _json(data: bytes | None, what: str) -> Any:
    if data is None:
        raise PayloadError(f"{what} has null data")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PayloadError(f"{what} holds data that is not JSON ({exc}): {data[:80]!r}") from None


def _obj(data: bytes | None, what: str) -> dict:
    v = _json(data, what)
    if not isinstance(v, dict):
        raise PayloadError(f"{what} holds JSON that is not an object: {data[:80]!r}")
    return v


def _int(v: Any) -> int | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _ints(v: Any) -> list[int] | None:
    if not isinstance(v, list):
        return None
    out = [_int(x) for x in v]
    return None if any(x is None for x in out) else out


def _assignment(v: Any) -> dict[str, list[int]]:
    if not isinstance(v, dict):
        return {}
    return {str(k): _ints(r) or [] for k, r in v.items()}


def _partitions(v: Any) -> list[dict]:
    out = []
    for p in v if isinstance(v, list) else []:
        if isinstance(p, dict) and "topic" in p:
            item = {"topic": str(p["topic"]), "partition": _int(p.get("partition"))}
            if "replicas" in p:
                item["replicas"] = _ints(p["replicas"])
            out.append(item)
    return out


@dataclass
class Write:
    """The net effect of one txn on one path."""

    path: str
    created: bool = False
    deleted: bool = False
    data: bytes | None = None
    has_data: bool = False
    version: int | None = None  # node version after the txn
    ephemeral: bool = False


def net_writes(ops: list[dict]) -> list[Write]:
    """Reduce the ops of one successful txn to one Write per path, in first-touch order."""
    out: dict[str, Write] = {}
    for op in ops:
        t, path = op["type_code"], op.get("path")
        if path is None:
            continue
        w = out.get(path)
        if t in CREATE_TYPES:
            out[path] = Write(path, created=True, data=op.get("data"), has_data=True, version=0,
                              ephemeral=bool(op.get("ephemeral")))
        elif t in SETDATA_TYPES:
            if w is None or w.deleted:
                w = out[path] = Write(path)
            w.data, w.has_data, w.version = op.get("data"), True, op.get("version")
        elif t in DELETE_TYPES:
            if w is None:
                w = out[path] = Write(path)
            w.deleted = True
    return list(out.values())


# ---------------------------------------------------------------- Kafka events of one write

# Times a timestamp column can hold (years 1..9999); a damaged stat can say anything.
_MIN_MS, _MAX_MS = -62_135_596_800_000, 253_402_300_799_999


def micros(ms: int | None) -> int | None:
    """Epoch ms -> µs, or None when the value cannot be a date."""
    if ms is None or not _MIN_MS <= ms <= _MAX_MS:
        return None
    return ms * 1000


@dataclass
class Stamp:
    """Provenance and time shared by the events of one txn or snapshot node."""

    ctx: SourceContext
    kind: str
    pos: int
    zxid: int
    ts_ms: int
    session: int | None
    raw: str
    via: str | None = None  # "zk_snapshot" for snapshot nodes
    extra: dict = field(default_factory=dict)

    def event(self, event_type: str, sub: int, detail: dict | None = None, **cols) -> Event:
        d = dict(self.extra)
        if self.via:
            d["via"] = self.via
        d.update(detail or {})
        kw: dict[str, Any] = {"session_id": self.session}
        kw.update(cols)
        ts = micros(self.ts_ms)
        if ts is None:
            d["bad_time_ms"] = self.ts_ms
        return Event(event_type=event_type, cluster=self.ctx.cluster, ts=ts,
                     ts_raw=iso_utc(ts), source_kind=self.kind, source_file=self.ctx.path,
                     source_pos=self.pos, source_sub=sub, zxid=self.zxid, detail=d or None, raw=self.raw, **kw)


def write_events(w: Write, kp: KafkaPath, st: Stamp, sub: int, conditional: bool, owner: dict) -> list[Event]:
    """Events for one net write to a Kafka znode. ``owner`` tracks ephemeral owners within the file."""
    base = {"path": w.path}
    if kp.chroot:
        base["chroot"] = kp.chroot
    what = w.path
    k = kp.kind
    if w.deleted:
        if k == "broker":
            sess, epoch = owner.pop(w.path, (None, None))
            return [st.event("broker_deregistered", sub, {**base, "cause": "deleted", "broker_epoch": epoch},
                             subject_broker=_int(kp.name), **({"session_id": sess} if sess is not None else {}))]
        if k == "controller":
            prev = owner.pop(w.path, (None, None, None))
            return [st.event("controller_znode_deleted", sub, {**base, "cause": "deleted"}, controller_id=prev[2])]
        if k == "topic":
            return [st.event("topic_deleted", sub, {**base, "via": "zk_delete"}, topic=kp.name)]
        return []
    if not w.has_data:
        return []
    if k == "broker":
        if not w.created:
            return []  # a broker updating its own registration (e.g. new endpoints): only the zk_txn
        reg = _obj(w.data, what) if w.data is not None else {}
        owner[w.path] = (st.session, st.zxid)
        d = {**base, "via": "zk_create", "broker_epoch": st.zxid, "endpoints": reg.get("endpoints"),
             "host": reg.get("host"), "port": reg.get("port"), "rack": reg.get("rack"), "version": reg.get("version")}
        return [st.event("broker_registered", sub, {k2: v for k2, v in d.items() if v is not None}, subject_broker=_int(kp.name))]
    if k == "controller":
        c = _obj(w.data, what)
        cid = _int(c.get("brokerid"))
        if w.created:
            owner[w.path] = (st.session, st.zxid, cid)
        d = {**base, "timestamp": c.get("timestamp"), "created": w.created}
        if "kraftControllerEpoch" in c:
            d["kraft_controller_epoch"] = c["kraftControllerEpoch"]
        return [st.event("controller_znode_created", sub, d, controller_id=cid)]
    if k == "controller_epoch":
        epoch = _int(_json(w.data, what))
        if epoch is None:
            raise PayloadError(f"{what} holds {w.data[:40]!r}, not a controller epoch number")
        return [st.event("controller_epoch_set", sub, base, controller_epoch=epoch, zk_version=w.version)]
    if k == "partition_state":
        s = _obj(w.data, what)
        d = {**base, "created": w.created, "conditional": conditional,
             "writer": "controller" if conditional else ("unknown" if st.via else "leader")}
        if "leader_recovery_state" in s:
            d["leader_recovery_state"] = s["leader_recovery_state"]
        return [st.event("partition_state_written", sub, d, topic=kp.name, partition=kp.partition,
                         leader=_int(s.get("leader")), isr=_ints(s.get("isr")), leader_epoch=_int(s.get("leader_epoch")),
                         controller_epoch=_int(s.get("controller_epoch")), zk_version=w.version)]
    if k == "topic":
        t = _obj(w.data, what)
        d = {**base, "assignment": _assignment(t.get("partitions")), "adding": _assignment(t.get("adding_replicas")),
             "removing": _assignment(t.get("removing_replicas")), "created": w.created}
        if t.get("topic_id"):
            d["topic_id"] = t["topic_id"]
        return [st.event("topic_assignment_written", sub, d, topic=kp.name)]
    if k in ("topic_config", "broker_config"):
        c = _obj(w.data, what)
        cfg = c.get("config") if isinstance(c.get("config"), dict) else {}
        d = {**base, "config": {str(a): (None if b is None else str(b)) for a, b in cfg.items()}, "created": w.created}
        if k == "topic_config":
            return [st.event("topic_config_written", sub, d, topic=kp.name)]
        d["entity"] = kp.name
        return [st.event("broker_config_written", sub, d, subject_broker=_int(kp.name))]
    if k in ("reassign", "preferred"):
        if w.data is None:
            return []
        r = _obj(w.data, what)
        typ = "reassignment_requested" if k == "reassign" else "preferred_election_requested"
        return [st.event(typ, sub, {**base, "partitions": _partitions(r.get("partitions"))})]
    if k == "delete_topic":
        return [st.event("topic_deletion_requested", sub, base, topic=kp.name)] if w.created else []
    if k == "isr_change":
        if not w.created:
            return []
        n = _obj(w.data, what)
        return [st.event("isr_change_notification", sub, {**base, "partitions": _partitions(n.get("partitions"))})]
    if k == "cluster_id":
        return [st.event("cluster_identity", sub, {**base, "cluster_id": cluster_id_of(w.data, what), "via": "zk_znode"})]
    if k == "log_dir_event":
        if not w.created:
            return []
        n = _obj(w.data, what)
        return [st.event("log_dir_event", sub, {**base, "event": n.get("event")}, subject_broker=_int(n.get("broker")))]
    return []


def cluster_id_of(data: bytes | None, what: str) -> str:
    """The id in ``/cluster/id``: ``{"version":"1","id":"X"}`` (0.10.1.0 ``ZkUtils.ClusterId.toJson``)."""
    cid = _obj(data, what).get("id")
    if not isinstance(cid, str) or not cid:
        raise PayloadError(f"{what} holds no cluster id")
    return cid


# ---------------------------------------------------------------- txn logs

@dataclass
class FileState:
    """What one file has shown so far: owners of Kafka ephemerals (path -> facts)."""

    owner: dict = field(default_factory=dict)


def txn_detail(txn: Txn) -> dict:
    d: dict[str, Any] = {"type": txn.type, "cxid": txn.cxid}
    if txn.type_code == 14:
        d["txns"] = [{"type": op_name(s["type_code"]), **_plain(s)} for s in txn.subs]
    elif txn.record is not None:
        d.update(_plain(txn.record))
    if txn.digest is not None:
        d["digest"] = txn.digest.get("treeDigest")
    return d


def _plain(rec: dict) -> dict:
    out = {}
    for k, v in rec.items():
        if k in ("acl", "type_code", "raw"):
            continue
        out[k] = data_text(v) if k == "data" else v
    return out


def txn_events(txn: Txn, ctx: SourceContext, state: FileState) -> tuple[list[Event], list[str]]:
    """Events of one readable txn, and the Kafka payload problems met (the txn is kept either way)."""
    st = Stamp(ctx, "zk_txnlog", txn.offset, txn.zxid, txn.time, txn.session, dump_line(txn))
    events = [st.event("zk_txn", 0, txn_detail(txn))]
    problems: list[str] = []
    sub = 1
    t = txn.type_code
    if txn.failed:
        errs = [s.get("err") for s in txn.subs if s.get("type_code") == -1] if t == 14 else [txn.record["err"]]
        err = next((e for e in errs if e not in (0, -2)), errs[0] if errs else None)
        paths = [s["path"] for s in txn.subs if s.get("path")]
        cols: dict[str, Any] = {}
        for p in paths:
            kp = kafka_path(p)
            if kp and kp.kind == "partition_state":
                cols = {"topic": kp.name, "partition": kp.partition}
        events.append(st.event("zk_write_failed", sub, {"err": err, "err_name": ERROR_NAMES.get(err, str(err)),
                                                        "paths": paths, "op": txn.type}, **cols))
        return events, problems
    if t == -10:
        events.append(st.event("zk_session_created", sub, {"timeout_ms": txn.record["timeOut"]}))
        return events, problems
    if t == -11:
        paths = None if txn.record is None else list(txn.record.get("paths2Delete") or [])
        cause = "expired" if txn.cxid == 0 else "closed"
        events.append(st.event("zk_session_closed", sub, {"cause": cause, "paths_deleted": paths}))
        sub += 1
        if paths is None:  # <= 3.5: no body; ZooKeeper deletes every ephemeral the session owns
            paths = [p for p, o in state.owner.items() if o[0] == txn.session]
        for p in paths:
            kp = kafka_path(p)
            if kp is None:
                continue
            d = {"path": p, "cause": "session_" + cause}
            if kp.chroot:
                d["chroot"] = kp.chroot
            if kp.kind == "broker":
                _, epoch = state.owner.pop(p, (None, None))
                if epoch is not None:
                    d["broker_epoch"] = epoch
                events.append(st.event("broker_deregistered", sub, d, subject_broker=_int(kp.name)))
                sub += 1
            elif kp.kind == "controller":
                prev = state.owner.pop(p, (None, None, None))
                events.append(st.event("controller_znode_deleted", sub, d, controller_id=prev[2]))
                sub += 1
        return events, problems
    ops = txn.subs if t == 14 else [{"type_code": t, **(txn.record or {})}]
    conditional = t == 14 and any(s["type_code"] == 13 and str(s.get("path", "")).endswith("/controller_epoch")
                                  for s in txn.subs)
    for w in net_writes(ops):
        kp = kafka_path(w.path)
        if kp is None:
            continue
        try:
            evs = write_events(w, kp, st, sub, conditional, state.owner)
        except PayloadError as exc:
            problems.append(f"byte {txn.offset} (zxid {hex_id(txn.zxid)}): {exc}")
            continue
        events.extend(evs)
        sub += len(evs)
    return events, problems


def _payload(data: bytes, summary: FileSummary) -> bytes:
    if not data.startswith(GZIP_MAGIC):
        return data
    problems = ReadProblems()
    out = b"".join(decompressed_chunks(data, problems, MAX_LOG_BYTES))
    summary.errors.extend(problems.errors)
    return out


def _error(summary: FileSummary, message: str) -> None:
    if len(summary.errors) < MAX_ERRORS:
        summary.errors.append(message)
    elif len(summary.errors) == MAX_ERRORS:
        summary.errors.append("more problems in this file: see the quarantine samples")


def parse_txnlog_file(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    """A txn log -> events; one accounting "line" per entry or damaged region."""
    log = read_txnlog(_payload(data, summary))
    for note in log.notes:
        _error(summary, note)
    events = txnlog_events(log.records, ctx, summary, FileState())
    summary.notes.append(f"txn log: {len(log.txns)} entries, valid data ends at byte {log.end_offset} ({log.end_reason})")
    span = _span_event(log, ctx)
    if span is not None:
        events.append(span)
    _finish(events, summary)
    return events


def txnlog_events(records: list, ctx: SourceContext, summary: FileSummary, state: FileState) -> list[Event]:
    """The events of a txn log's entries (and the accounting of its damage), in file order; ``state`` carries what
    the entries before them showed (a log read as it grows: ``parsers.zookeeper.growing``)."""
    events: list[Event] = []
    for rec in records:
        summary.lines += 1
        if isinstance(rec, Damage):
            summary.count("quarantined")
            _error(summary, f"bytes {rec.offset}-{rec.end}: {rec.reason}")
            summary.sample(Quarantined(ctx.path, rec.offset, "quarantined", rec.reason, f"{rec.end - rec.offset} bytes"))
            continue
        if rec.problem:
            summary.count("quarantined")
            _error(summary, f"byte {rec.offset} (zxid {hex_id(rec.zxid)}): {rec.problem}; entry skipped")
            summary.sample(Quarantined(ctx.path, rec.offset, "quarantined", rec.problem, dump_line(rec)[:2000]))
            continue
        evs, problems = txn_events(rec, ctx, state)
        events.extend(evs)
        if problems:
            # The raw txn stays (zk_txn); its Kafka meaning could not be taken.
            summary.count("quarantined")
            for p in problems:
                _error(summary, p)
            summary.sample(Quarantined(ctx.path, rec.offset, "quarantined", "; ".join(problems), dump_line(rec)[:2000]))
        else:
            summary.count("parsed")
    return events


def _span_event(log, ctx: SourceContext) -> Event | None:
    """The zxids the file's readable entries cover (ZooKeeper numbers a server's transactions one by one within an
    epoch, and names a txn log after its first): the replay finds the transactions no file holds from the spans."""
    good = log.good
    if not good:
        return None
    return span_event(good[0], good[-1], len(good), ctx)


def span_event(first: Txn, last: Txn, entries: int, ctx: SourceContext) -> Event:
    """The statement of a txn log's span, from its first and last readable entries."""
    st = Stamp(ctx, "zk_txnlog", first.offset, first.zxid, first.time, None, f"txn log span {hex_id(first.zxid)}-"
               f"{hex_id(last.zxid)} ({entries} entries)")
    ev = st.event("zk_txnlog_span", _SPAN_SUB, {"first_zxid": first.zxid, "last_zxid": last.zxid,
                                                 "entries": entries, "last_ts_ms": last.time})
    ev.zxid = None  # a statement about the file, not a transaction's event
    return ev


_SPAN_SUB = 1 << 20  # after every sub-event of the first entry


def _finish(events: list[Event], summary: FileSummary) -> None:
    for ev in events:
        summary.event_counts[ev.event_type] += 1
        summary.see_ts(ev.ts)
    summary.events = len(events)


# ---------------------------------------------------------------- snapshots

def node_events(snap: Snapshot, n: SnapNode, ctx: SourceContext, snap_zxid: int | None,
                timeouts: dict[int, int]) -> list[Event]:
    """The Kafka fact a snapshot node holds, dated by the write that made it (see module doc)."""
    kp = kafka_path(n.path)
    if kp is None:
        return []
    # Creation-type facts happen at czxid; data-type facts at the last data write.
    at_create = kp.kind in ("broker", "controller", "delete_topic", "isr_change", "log_dir_event")
    zxid, ts = (n.czxid, n.ctime) if at_create else (n.mzxid, n.mtime)
    owner = n.ephemeral_owner or None
    extra: dict[str, Any] = {"snapshot_zxid": snap_zxid, "czxid": n.czxid, "mzxid": n.mzxid}
    if owner and owner in timeouts:
        extra["session_timeout_ms"] = timeouts[owner]
    st = Stamp(ctx, "zk_snapshot", n.offset, zxid, ts, owner, f"{n.path or '/'} = {data_text(n.data)}",
               via="zk_snapshot", extra=extra)
    w = Write(n.path, created=n.czxid == n.mzxid or at_create, data=n.data, has_data=True, version=n.version,
              ephemeral=bool(owner))
    return write_events(w, kp, st, 0, False, {})


def parse_snapshot_file(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    """A snapshot -> events; one accounting "line" per znode and per session entry."""
    raw, problems = decompress(data, ctx.path)
    for p in problems:
        _error(summary, p)
    if not raw and problems:
        summary.lines += 1
        summary.count("quarantined")
        return []
    snap = read_snapshot(raw)
    for e in snap.errors:
        _error(summary, e)
    snap_zxid = name_zxid(ctx.path)
    timeouts = dict(snap.sessions)
    events: list[Event] = []
    summary.lines += len(snap.sessions)
    summary.count("other", len(snap.sessions))
    for n in snap.nodes:
        summary.lines += 1
        try:
            evs = node_events(snap, n, ctx, snap_zxid, timeouts)
        except PayloadError as exc:
            summary.count("quarantined")
            _error(summary, f"byte {n.offset} (mzxid {hex_id(n.mzxid)}): {exc}")
            summary.sample(Quarantined(ctx.path, n.offset, "quarantined", str(exc), f"{n.path} = {data_text(n.data)}"[:2000]))
            continue
        summary.count("parsed" if evs else "other")
        events.extend(evs)
    if snap.damaged_from is not None:
        summary.lines += 1
        summary.count("quarantined")
        summary.sample(Quarantined(ctx.path, snap.damaged_from, "quarantined", "unreadable snapshot data; rest of file not read",
                                   f"{len(raw) - snap.damaged_from} bytes"))
    summary.notes.append(f"snapshot: {len(snap.nodes)} znodes, {len(snap.sessions)} sessions"
                         + ("" if snap.checksum_ok else "; checksum does not match (ZooKeeper would refuse it)"))
    _finish(events, summary)
    return events


# ---------------------------------------------------------------- across files

ZK_SOURCE_KINDS = ("zk_txnlog", "zk_snapshot")
_KIND_RANK = {"zk_txnlog": 0, "zk_snapshot": 1}


def _key(ev: Event) -> tuple:
    d = ev.detail or {}
    if ev.event_type == "zk_txnlog_span":  # one per file: every server's copy counts
        return (None, ev.event_type, ev.source_file, ev.source_pos)
    return (ev.zxid, ev.event_type, d.get("path"), ev.subject_broker, ev.topic, ev.partition)


def link_sessions(events: Iterable[Event]) -> list[Event]:
    """One cluster's ZooKeeper events -> de-duplicated, in zxid order, with cross-file facts filled in.

    - The same fact seen in several files (ensemble copies, a snapshot and the
      log it overlaps, two snapshots) is kept once: the txn log's copy first,
      then the file that sorts first.
    - ``broker_deregistered`` / ``controller_znode_deleted`` get the session,
      broker epoch and previous controller when an earlier file knew them.
    - A closeSession without body (ZooKeeper <= 3.5) deregisters every Kafka
      ephemeral its session had registered, wherever the registration was seen.
    Events that are not from ZooKeeper sources are returned unchanged, after.
    Inputs are not modified.
    """
    zk: list[Event] = []
    rest: list[Event] = []
    for ev in events:
        (zk if ev.source_kind in ZK_SOURCE_KINDS else rest).append(ev)
    best: dict[tuple, Event] = {}
    for ev in zk:
        k = _key(ev)
        cur = best.get(k)
        if cur is None or _rank(ev) < _rank(cur):
            best[k] = ev
    ordered = sorted(best.values(), key=lambda e: (e.zxid if e.zxid is not None else -1, _KIND_RANK.get(e.source_kind, 2),
                                                    e.source_file or "", e.source_pos or 0, e.source_sub))
    out: list[Event] = []
    eph: dict[str, tuple] = {}  # live Kafka ephemeral path -> (session, broker_epoch or controller id)
    controller: tuple | None = None  # (controller id, session, path)
    done: set[tuple] = set()  # (zxid, path) already deregistered
    i = 0
    while i < len(ordered):
        ev = ordered[i]
        d = ev.detail or {}
        path = d.get("path")
        t = ev.event_type
        if t == "broker_registered" and path:
            eph[path] = (ev.session_id, d.get("broker_epoch"))
        elif t == "controller_znode_created" and path and d.get("created", True):
            eph[path] = (ev.session_id, ev.controller_id)
            controller = (ev.controller_id, ev.session_id, path)
        elif t == "broker_deregistered" and path:
            sess, epoch = eph.pop(path, (None, None))
            done.add((ev.zxid, path))
            fill = {}
            if ev.session_id is None and sess is not None:
                fill["session_id"] = sess
            if d.get("broker_epoch") is None and epoch is not None:
                fill["detail"] = {**d, "broker_epoch": epoch}
            if fill:
                ev = replace(ev, **fill)
        elif t == "controller_znode_deleted":
            done.add((ev.zxid, path))
            eph.pop(path, None)
            if ev.controller_id is None and controller is not None:
                ev = replace(ev, controller_id=controller[0])
            controller = None
        out.append(ev)
        if t == "zk_session_closed":
            out.extend(_implied_deletions(ev, eph, done, controller))
            if controller is not None and controller[1] == ev.session_id and (ev.zxid, controller[2]) in done:
                controller = None
        i += 1
    return out + rest


def _implied_deletions(close: Event, eph: dict, done: set, controller: tuple | None) -> list[Event]:
    """Deregistrations a closeSession caused that no file stated (no-body closeSession)."""
    d = close.detail or {}
    if d.get("paths_deleted") is not None:
        return []
    cause = "session_" + (d.get("cause") or "closed")
    out = []
    sub = close.source_sub + 100  # after whatever the parser put at this position
    for path in sorted(p for p, o in eph.items() if o[0] == close.session_id):
        if (close.zxid, path) in done:
            continue
        kp = kafka_path(path)
        info = eph.pop(path)
        done.add((close.zxid, path))
        base = {"path": path, "cause": cause, "inferred": True}
        if kp and kp.chroot:
            base["chroot"] = kp.chroot
        if kp and kp.kind == "broker":
            out.append(replace(close, event_type="broker_deregistered", source_sub=sub, subject_broker=_int(kp.name),
                               detail={**base, "broker_epoch": info[1]}))
        elif kp and kp.kind == "controller":
            out.append(replace(close, event_type="controller_znode_deleted", source_sub=sub, controller_id=info[1],
                               detail=base))
        sub += 1
    return out


def _rank(ev: Event) -> tuple:
    return (_KIND_RANK.get(ev.source_kind, 2), ev.source_file or "", ev.source_pos or 0, ev.source_sub)
