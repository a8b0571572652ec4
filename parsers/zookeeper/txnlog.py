"""ZooKeeper transaction log files (``version-2/log.<first zxid hex>``), ZooKeeper 3.4 to 3.9.

Layout: a 16-byte header (``ZKLG``, version, dbid), then entries
``long adler32 | int len | len bytes (TxnHeader + record [+ TxnDigest]) | 'B'``,
then the zero-filled preallocated tail. Reading stops at the first entry of
length 0, as ZooKeeper does.

Damage policy (each case is one quarantined "record" with its byte offset):
- checksum mismatch with the end-of-record byte in place: the length prefix is
  trustworthy, the entry is quarantined and reading continues right after it;
- a length that cannot be (negative, past the end of the file, or no ``'B'``
  after it), garbage in the middle, or non-zero bytes after the zero tail:
  resynchronise by scanning forward for the next entry whose Adler-32 matches
  and which ends in ``'B'``; the skipped bytes are one damaged region. When no
  such entry exists, the rest of the file is one damaged region and reading stops;
- an entry the file ends inside: quarantined, reading stops.
The scan is linear (a regex finds candidates) and the checksum work it may do
is capped per file, so garbage cannot make it hang.

This module also renders a txn the way ZooKeeper's ``TxnLogToolkit --dump``
prints it, and as the JSON objects of the test oracle (``*.txns.jsonl``).
"""
from __future__ import annotations

import base64
import datetime as _dt
import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

from parsers.zookeeper.jute import JuteError, Reader, hex_id, read_acl_list

LOG_MAGIC = 0x5A4B4C47  # "ZKLG"
HEADER_BYTES = 16
ENTRY_OVERHEAD = 13  # long crc + int len + 'B'
TXN_HEADER_BYTES = 32
EOR = 0x42
# Checksum bytes a resynchronisation may hash per file before giving up.
RESYNC_BUDGET = 256 << 20

# ZooDefs.OpCode -> the name ZooKeeper's tools print (Request.op2String).
OPCODES: dict[int, str] = {
    0: "notification", 1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData", 6: "getACL",
    7: "setACL", 8: "getChildren", 9: "sync", 11: "ping", 12: "getChildren2", 13: "check", 14: "multi",
    15: "create2", 16: "reconfig", 17: "checkWatches", 18: "removeWatches", 19: "createContainer",
    20: "deleteContainer", 21: "createTtl", 22: "multiRead", 100: "auth", 101: "setWatches", 102: "sasl",
    103: "getEphemerals", 104: "getAllChildrenNumber", 105: "setWatches2", 106: "addWatch", 107: "whoAmI",
    -10: "createSession", -11: "closeSession", -1: "error",
}

# KeeperException.Code values that show up in ErrorTxn.
ERROR_NAMES: dict[int, str] = {
    0: "OK", -1: "SYSTEMERROR", -2: "RUNTIMEINCONSISTENCY", -3: "DATAINCONSISTENCY", -4: "CONNECTIONLOSS",
    -5: "MARSHALLINGERROR", -6: "UNIMPLEMENTED", -7: "OPERATIONTIMEOUT", -8: "BADARGUMENTS",
    -13: "NEWCONFIGNOQUORUM", -14: "RECONFIGINPROGRESS", -15: "UNKNOWNSESSION", -100: "APIERROR",
    -101: "NONODE", -102: "NOAUTH", -103: "BADVERSION", -108: "NOCHILDRENFOREPHEMERALS", -110: "NODEEXISTS",
    -111: "NOTEMPTY", -112: "SESSIONEXPIRED", -113: "INVALIDCALLBACK", -114: "INVALIDACL", -115: "AUTHFAILED",
    -118: "SESSIONMOVED", -119: "NOTREADONLY", -120: "EPHEMERALONLOCALSESSION", -121: "NOWATCHER",
    -122: "RECONFIGDISABLED", -123: "SESSIONCLOSEDREQUIRESASLAUTH", -124: "REQUESTTIMEOUT", -125: "QUOTAEXCEEDED",
    -127: "THROTTLEDOP",
}

CREATE_TYPES = frozenset({1, 15, 19, 21})
DELETE_TYPES = frozenset({2, 20})
SETDATA_TYPES = frozenset({5, 16})


def op_name(code: int) -> str:
    return OPCODES.get(code, f"unknown {code}")


# ---------------------------------------------------------------- record layouts (jute)
# Each returns the record's fields under ZooKeeper's own field names; ``data``
# stays bytes here and becomes text only when rendered.

def _create(r: Reader) -> dict:
    return {"path": r.read_ustring("path"), "data": r.read_buffer("data"), "acl": read_acl_list(r),
            "ephemeral": r.read_bool("ephemeral"), "parentCVersion": r.read_int("parentCVersion")}


def _create_v0(r: Reader) -> dict:
    # Logs from ZooKeeper before 3.3 have no parentCVersion; ZooKeeper then uses -1.
    return {"path": r.read_ustring("path"), "data": r.read_buffer("data"), "acl": read_acl_list(r),
            "ephemeral": r.read_bool("ephemeral"), "parentCVersion": -1}


def _create_container(r: Reader) -> dict:
    return {"path": r.read_ustring("path"), "data": r.read_buffer("data"), "acl": read_acl_list(r),
            "parentCVersion": r.read_int("parentCVersion")}


def _create_ttl(r: Reader) -> dict:
    return {"path": r.read_ustring("path"), "data": r.read_buffer("data"), "acl": read_acl_list(r),
            "parentCVersion": r.read_int("parentCVersion"), "ttl": r.read_long("ttl")}


def _delete(r: Reader) -> dict:
    return {"path": r.read_ustring("path")}


def _set_data(r: Reader) -> dict:
    return {"path": r.read_ustring("path"), "data": r.read_buffer("data"), "version": r.read_int("version")}


def _set_acl(r: Reader) -> dict:
    return {"path": r.read_ustring("path"), "acl": read_acl_list(r), "version": r.read_int("version")}


def _check(r: Reader) -> dict:
    return {"path": r.read_ustring("path"), "version": r.read_int("version")}


def _create_session(r: Reader) -> dict:
    return {"timeOut": r.read_int("timeOut")}


def _close_session(r: Reader) -> dict:
    return {"paths2Delete": r.read_vector(lambda x: x.read_ustring("path"), "paths2Delete", 4)}


def _no_body(r: Reader) -> None:
    return None


def _error(r: Reader) -> dict:
    return {"err": r.read_int("err")}


def _multi(r: Reader) -> dict:
    def one(x: Reader) -> dict:
        return {"type_code": x.read_int("sub-txn type"), "raw": x.read_buffer("sub-txn data") or b""}

    return {"txns": r.read_vector(one, "multi txns", 8) or []}


# Candidate layouts per top-level type, tried in order; the first that leaves
# exactly nothing or exactly a TxnDigest behind wins (ZooKeeper decides with
# configuration flags we do not have, so we decide by the bytes).
BODIES: dict[int, tuple[Callable[[Reader], Any], ...]] = {
    1: (_create, _create_v0), 15: (_create, _create_v0), 19: (_create_container,), 21: (_create_ttl,),
    2: (_delete,), 20: (_delete,), 5: (_set_data,), 16: (_set_data,), 7: (_set_acl,), 13: (_check,),
    -10: (_create_session,), -11: (_close_session, _no_body), -1: (_error,), 14: (_multi,),
}

# How DataTree decodes each sub-txn of a multi.
SUB_BODIES: dict[int, Callable[[Reader], dict]] = {
    1: _create, 15: _create, 19: _create_container, 21: _create_ttl, 2: _delete, 20: _delete,
    5: _set_data, 13: _check, -1: _error,
}
DIGEST_BYTES = 12


@dataclass
class Txn:
    """One log entry. ``problem`` set means it is quarantined: never applied, never turned into Kafka facts."""

    offset: int
    crc: int
    crc_ok: bool
    length: int
    session: int = 0
    cxid: int = 0
    zxid: int = 0
    time: int = 0
    type_code: int = 0
    record: dict | None = None
    digest: dict | None = None
    problem: str | None = None

    @property
    def type(self) -> str:
        return op_name(self.type_code)

    @property
    def subs(self) -> list[dict]:
        return (self.record or {}).get("txns") or [] if self.type_code == 14 else []

    @property
    def failed(self) -> bool:
        """An error txn, or a multi with an error sub-txn (ZooKeeper applied none of it)."""
        if self.type_code == -1:
            return True
        return any(s.get("type_code") == -1 for s in self.subs)


@dataclass
class Damage:
    """Bytes that hold no readable entry (counted as one quarantined record)."""

    offset: int
    end: int
    reason: str


@dataclass
class TxnLogFile:
    magic: int | None = None
    version: int | None = None
    dbid: int | None = None
    records: list[Txn | Damage] = field(default_factory=list)
    end_offset: int = 0
    end_reason: str = "eof"
    notes: list[str] = field(default_factory=list)

    @property
    def txns(self) -> list[Txn]:
        return [r for r in self.records if isinstance(r, Txn)]

    @property
    def good(self) -> list[Txn]:
        return [r for r in self.records if isinstance(r, Txn) and r.problem is None]


# ---------------------------------------------------------------- reading

def read_txnlog(data: bytes) -> TxnLogFile:
    """Parse a whole txn log (already decompressed). Never raises for bad bytes."""
    out = TxnLogFile()
    n = len(data)
    if n < HEADER_BYTES:
        out.records.append(Damage(0, n, f"file of {n} bytes is shorter than the 16-byte txn log header"))
        out.end_offset, out.end_reason = n, "truncated"
        return out
    hdr = Reader(data)
    out.magic, out.version, out.dbid = hdr.read_int(), hdr.read_int(), hdr.read_long()
    if out.magic != LOG_MAGIC:
        out.notes.append(f"wrong magic 0x{out.magic & 0xFFFFFFFF:08x} at byte 0 (expected ZKLG); reading entries anyway")
    budget = [RESYNC_BUDGET]
    pos = HEADER_BYTES
    while True:
        if pos >= n:
            out.end_offset, out.end_reason = n, "eof"
            return out
        if n - pos < 12:
            if data.count(0, pos) == n - pos:
                out.end_offset, out.end_reason = pos, "eof"
            else:
                out.records.append(Damage(pos, n, f"{n - pos} trailing bytes, too few for an entry header"))
                out.end_offset, out.end_reason = pos, "truncated"
            return out
        r = Reader(data, pos)
        crc, length = r.read_long(), r.read_int()
        if length == 0:
            if data.count(0, pos) == n - pos:
                out.end_offset, out.end_reason = pos, "zero_length_record"
                return out
            nxt = _resync(data, pos + 1, budget)
            if nxt is None:
                first = _first_nonzero(data, pos)
                out.records.append(Damage(first, n, "non-zero bytes after the end of valid data (no readable entry among them)"))
                out.end_offset, out.end_reason = pos, "zero_length_record"
                return out
            out.records.append(Damage(pos, nxt, "zero-filled or unreadable region inside the log"))
            pos = nxt
            continue
        end = pos + 12 + length
        if length < 0 or end >= n or data[end] != EOR:
            why = (f"impossible entry length {length}" if length < 0 else
                   f"entry length {length} runs past the end of the file" if end >= n else
                   f"entry of length {length} not followed by the end-of-record byte 'B' (partial or corrupt)")
            nxt = _resync(data, pos + 1, budget)
            if nxt is None:
                out.records.append(Damage(pos, n, why + "; no readable entry after it"))
                out.end_offset, out.end_reason = pos, "truncated" if end >= n and length > 0 else "corrupt"
                return out
            out.records.append(Damage(pos, nxt, why + f"; resynchronised at byte {nxt}"))
            pos = nxt
            continue
        body = memoryview(data)[pos + 12:end]
        computed = zlib.adler32(body)
        if crc != computed:
            # The length may be the damaged field and still land on a 'B' by chance: if a
            # sound entry starts inside the span it claims, the span is not an entry.
            inner = _resync(data, pos + 1, budget, limit=end)
            if inner is not None:
                out.records.append(Damage(pos, inner, f"entry with checksum mismatch and a length that overlaps "
                                                      f"the next entry; resynchronised at byte {inner}"))
                pos = inner
                continue
        txn = decode_entry(body, pos, crc, length, crc == computed)
        if crc != computed:
            txn.problem = f"checksum mismatch (stored 0x{crc & 0xFFFFFFFFFFFFFFFF:x}, computed 0x{computed:x})"
        out.records.append(txn)
        pos = end + 1


def decode_entry(body: memoryview | bytes, offset: int, crc: int, length: int, crc_ok: bool) -> Txn:
    """TxnHeader + record + optional digest of one entry (``offset`` = the entry's crc field)."""
    txn = Txn(offset=offset, crc=crc, crc_ok=crc_ok, length=length)
    r = Reader(body, base=offset + 12)
    try:
        txn.session, txn.cxid, txn.zxid = r.read_long("clientId"), r.read_int("cxid"), r.read_long("zxid")
        txn.time, txn.type_code = r.read_long("time"), r.read_int("type")
    except JuteError as exc:
        txn.problem = f"entry too short for a txn header ({exc})"
        return txn
    layouts = BODIES.get(txn.type_code)
    if layouts is None:
        txn.problem = f"unknown txn type {txn.type_code} (zxid {hex_id(txn.zxid)})"
        return txn
    start = r.pos
    first_error: str | None = None
    for layout in layouts:
        r.pos = start
        try:
            record = layout(r)
        except JuteError as exc:
            first_error = first_error or str(exc)
            continue
        left = r.remaining()
        if left not in (0, DIGEST_BYTES):
            first_error = first_error or f"{left} unexpected bytes after the {op_name(txn.type_code)} record at byte {r.offset}"
            continue
        if left == DIGEST_BYTES:
            txn.digest = {"version": r.read_int(), "treeDigest": r.read_long()}
        txn.record = record
        break
    else:
        txn.problem = f"{op_name(txn.type_code)} record does not decode: {first_error}"
        return txn
    if txn.type_code == 14:
        _decode_subs(txn, offset + 12 + start)
    return txn


def _decode_subs(txn: Txn, base: int) -> None:
    for sub in txn.record["txns"]:
        raw = sub.pop("raw")
        layout = SUB_BODIES.get(sub["type_code"])
        if layout is None:
            txn.problem = f"multi holds a sub-txn of unknown type {sub['type_code']}"
            sub["raw"] = raw
            continue
        r = Reader(raw, base=base)
        try:
            sub.update(layout(r))
        except JuteError as exc:
            txn.problem = f"multi sub-txn {op_name(sub['type_code'])} does not decode: {exc.reason}"
            sub["raw"] = raw
            continue
        if r.remaining():
            txn.problem = f"multi sub-txn {op_name(sub['type_code'])} has {r.remaining()} unexpected trailing bytes"
            sub["raw"] = raw


_CANDIDATE = re.compile(rb"(?=\x00\x00\x00\x00(?!\x00\x00\x00\x00)[\s\S]{4}(?!\x00\x00\x00\x00))")


def _resync(data: bytes, start: int, budget: list[int], limit: int | None = None) -> int | None:
    """Offset of the next entry in ``[start, limit)`` that proves itself (Adler-32 and 'B'), else None.

    A stored checksum is an Adler-32 in a long, so its high four bytes are zero;
    the regex finds those spots in linear time, the rest is checked here.
    """
    n = len(data)
    for m in _CANDIDATE.finditer(data, start, n if limit is None else min(n, limit + 12)):
        p = m.start()
        if limit is not None and p >= limit:
            return None
        if p + 12 + TXN_HEADER_BYTES >= n:
            return None
        length = int.from_bytes(data[p + 8:p + 12], "big", signed=True)
        end = p + 12 + length
        if length < TXN_HEADER_BYTES or end >= n or data[end] != EOR:
            continue
        if budget[0] < length:
            return None
        budget[0] -= length
        if zlib.adler32(memoryview(data)[p + 12:end]) == int.from_bytes(data[p:p + 8], "big"):
            return p
    return None


def _first_nonzero(data: bytes, start: int) -> int:
    m = re.compile(rb"[^\x00]").search(data, start)
    return m.start() if m else len(data)


# ---------------------------------------------------------------- rendering

def data_text(raw: bytes | None) -> str | None:
    """Znode data as text: UTF-8, with U+FFFD for bytes that are not (as Java's new String does)."""
    if raw is None:
        return None
    return raw.decode("utf-8", "replace")


def _json_record(rec: dict) -> dict:
    out: dict[str, Any] = {}
    for k, v in rec.items():
        if k == "data":
            out["data"] = data_text(v)
            out["data_len"] = -1 if v is None else len(v)
            if v is not None and out["data"].encode("utf-8") != v:
                out["data_b64"] = base64.b64encode(v).decode("ascii")
        elif k == "raw":
            out["raw_b64"] = base64.b64encode(v).decode("ascii")
        else:
            out[k] = v
    return out


def txn_json(txn: Txn) -> dict:
    """The txn as the oracle's ``*.txns.jsonl`` objects (ZooKeeper's field names; ids as hex text)."""
    obj: dict[str, Any] = {
        "offset": txn.offset, "crc": hex_id(txn.crc), "crc_ok": txn.crc_ok, "len": txn.length,
        "session": hex_id(txn.session), "cxid": txn.cxid, "zxid": hex_id(txn.zxid), "time": txn.time,
        "type": txn.type, "type_code": txn.type_code,
    }
    if txn.record is not None or txn.type_code == -11:
        if txn.type_code == 14:
            obj["txn"] = {"txns": [{"type": op_name(s["type_code"]), **_json_record(s)} for s in txn.record["txns"]]}
        else:
            obj["txn"] = None if txn.record is None else _json_record(txn.record)
    if txn.digest is not None:
        obj["digest"] = dict(txn.digest)
    if txn.problem:
        obj["error"] = txn.problem
    return obj


def damage_json(d: Damage) -> dict:
    return {"offset": d.offset, "end": d.end, "error": d.reason}


def java_short_datetime(ms: int) -> str:
    """DateFormat.getDateTimeInstance(SHORT, LONG) in en_US, UTC: ``11/22/26, 4:48:27 AM UTC``."""
    try:
        d = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=ms)
    except OverflowError:
        return f"@{ms}ms"
    hour = d.hour % 12 or 12
    return f"{d.month}/{d.day}/{d.year % 100:02d}, {hour}:{d.minute:02d}:{d.second:02d} {'AM' if d.hour < 12 else 'PM'} UTC"


def _csv_string(s: str | None) -> str:
    # jute's ToStringOutputArchive: a leading quote and a handful of escapes.
    if s is None:
        return ""
    return "'" + (s.replace("%", "%25").replace("\0", "%00").replace("\n", "%0A").replace("\r", "%0D")
                  .replace(",", "%2C").replace("}", "%7D"))


def _acl_list_text(acls: list[dict] | None) -> str:
    # java.util.List.toString over ACL records; ZooKeeper's own output puts a newline
    # before each ']' / ', ' (the record's trailer); we fold it so a txn stays one line.
    if acls is None:
        return "null"
    return "[" + ", ".join(f"{a['perms']},s{{{_csv_string(a['scheme'])},{_csv_string(a['id'])}}}" for a in acls) + "]"


def _data_text(raw: bytes | None) -> str:
    return "" if not raw else raw.decode("utf-8", "replace")


def _record_text(type_code: int, rec: dict | None) -> str:
    """What TxnLogToolkit prints after the op name, for one record."""
    if rec is None:
        return ""
    if type_code in (1, 15):
        return f"{rec['path']},{_data_text(rec['data'])},{_acl_list_text(rec['acl'])},{str(rec['ephemeral']).lower()},{rec['parentCVersion']}"
    if type_code == 19:
        return f"{rec['path']},{_data_text(rec['data'])},{_acl_list_text(rec['acl'])},{rec['parentCVersion']}"
    if type_code == 21:
        return f"{rec['path']},{_data_text(rec['data'])},{_acl_list_text(rec['acl'])},{rec['parentCVersion']},{rec['ttl']}"
    if type_code in SETDATA_TYPES:
        return f"{rec['path']},{_data_text(rec['data'])},{rec['version']}"
    # Everything else goes through jute's toString: fields comma-separated.
    if type_code in DELETE_TYPES:
        return _csv_string(rec["path"])
    if type_code == 13:
        return f"{_csv_string(rec['path'])},{rec['version']}"
    if type_code == 7:
        acls = rec["acl"] or []
        inner = ",".join(f"s{{{a['perms']},s{{{_csv_string(a['scheme'])},{_csv_string(a['id'])}}}}}" for a in acls)
        return f"{_csv_string(rec['path'])},v{{{inner}}},{rec['version']}"
    if type_code == -10:
        return str(rec["timeOut"])
    if type_code == -11:
        paths = rec["paths2Delete"] or []
        return "v{" + ",".join(_csv_string(p) for p in paths) + "}"
    if type_code == -1:
        return str(rec["err"])
    return ""


def dump_line(txn: Txn) -> str:
    """One line in TxnLogToolkit --dump layout. Multi sub-txns are shown decoded
    (``op:fields;op:fields``) where ZooKeeper 3.8 prints their raw jute bytes."""
    if txn.problem and txn.record is None and txn.type_code not in (-11,):
        return f"ERROR at byte {txn.offset} - {txn.problem}"
    if txn.type_code == 14:
        body = ";".join(f"{op_name(s['type_code'])}:{_record_text(s['type_code'], s) if 'raw' not in s else '#' + s['raw'].hex()}"
                        for s in txn.record["txns"])
    else:
        body = _record_text(txn.type_code, txn.record)
    line = (f"{java_short_datetime(txn.time)} session {hex_id(txn.session)} cxid {hex_id(txn.cxid)}"
            f" zxid {hex_id(txn.zxid)} {txn.type} {body}")
    if txn.problem:
        prefix = "CRC ERROR" if not txn.crc_ok else "ERROR"
        return f"{prefix} - {line}"
    return line


def header_line(log: TxnLogFile) -> str:
    return f"ZooKeeper Transactional Log File with dbid {log.dbid} txnlog format version {log.version}"


def dumps_json(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
