"""The text of ``kafka-dump-log.sh --cluster-metadata-decoder`` (Kafka 3.x/4.x ``DumpLogSegments``):
its grammar, read into the same events as the binary log, and written by ``kraft-dump``.

What the tool prints (see binary-formats.md §6)::

    Dumping /var/lib/kafka/meta/__cluster_metadata-0/00000000000000000000.log
    Log starting offset: 0                         (or "Snapshot end offset: N, epoch: E")
    baseOffset: 0 lastOffset: 0 count: 1 ... partitionLeaderEpoch: 1 ... isControl: true ... position: 0 CreateTime: 1700000000000 size: 80 ...
    | offset: 0 CreateTime: 1700000000000 keySize: 4 valueSize: 11 sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)
    | offset: 1 CreateTime: ... payload: {"type":"REGISTER_BROKER_RECORD","version":3,"data":{...}}

Kafka prints no body for LEADER_CHANGE, so its leader stays unknown when read from Kafka's
text; ``kraft-dump`` appends `` LeaderChange: {json}`` (and the like for KRaft version and
voters) which this reader takes when present. With ``--skip-record-metadata`` the record lines
are just `` payload: {...}``; their offsets are counted from the batch's base offset.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator

from parsers.common.accounting import FileSummary, Quarantined
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems, decode_line, iter_raw_lines
from parsers.kraft.events import Where, finish, record_event, snapshot_id, stamp
from parsers.kraft.kafka_batches import BatchHeader, Record
from parsers.kraft.record_schema import BY_TYPE_NAME, CONTROL
from parsers.kraft.records import MetadataRecord, jsonable, payload_json
from parsers.schema import Event

_PAIR = re.compile(r"(\w+): (\S+)")
_RECORD = re.compile(
    r"^\|\s*offset: (?P<offset>-?\d+) (?P<tstype>CreateTime|LogAppendTime|NoTimestampType): (?P<ts>-?\d+)"
    r" keySize: (?P<ks>-?\d+) valueSize: (?P<vs>-?\d+)(?: sequence: -?\d+ headerKeys: \[[^\]]*\])?(?P<rest>.*)$"
)
_CONTROL = re.compile(r"^ controlType: (?P<name>\w+)\((?P<id>-?\d+)\)(?: (?P<label>\w+): (?P<json>\{.*\}))?\s*$")
_SNAPSHOT_MARK = re.compile(r"^ (?P<label>SnapshotHeader|SnapshotFooter) (?P<json>\{.*\})\s*$")
_TXN_MARKER = re.compile(r"^ endTxnMarker: (?P<type>\w+) coordinatorEpoch: (?P<epoch>-?\d+)\s*$")
_ERROR = re.compile(r"^Error at (?P<offset>-?\d+), skipping\. ?(?P<msg>.*)$")
_SNAPSHOT_LINE = re.compile(r"^Snapshot end offset: (?P<offset>\d+), epoch: (?P<epoch>\d+)\s*$")
_INVALID_TAIL = re.compile(r"^Found (?P<n>\d+) invalid bytes at the end of (?P<file>.+)$")

# The labels kraft-dump writes after "controlType: X(n)" (Kafka writes Snapshot* without controlType).
CONTROL_LABELS = {2: "LeaderChange", 3: "SnapshotHeader", 4: "SnapshotFooter", 5: "KRaftVersion", 6: "KRaftVoters"}


class _Batch:
    def __init__(self, pairs: dict[str, str]):
        self.base_offset = int(pairs["baseOffset"])
        self.epoch = _int(pairs.get("partitionLeaderEpoch"))
        self.is_control = pairs.get("isControl") == "true"
        self.position = _int(pairs.get("position"))
        ts = pairs.get("CreateTime", pairs.get("LogAppendTime"))
        self.ts = _int(ts)
        self.valid = pairs.get("isvalid", "true") == "true"
        self.next_offset = self.base_offset


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _from_payload(text: str) -> MetadataRecord:
    """A record from ``{"type": "PARTITION_CHANGE_RECORD", "version": n, "data": {...}}``."""
    obj = json.loads(text)
    if not isinstance(obj, dict) or "type" not in obj or not isinstance(obj.get("data", {}), dict):
        raise ValueError("payload is not a metadata record object")
    type_name = str(obj["type"])
    version = int(obj.get("version", 0))
    schema = BY_TYPE_NAME.get(type_name)
    if schema is None:
        return MetadataRecord(type_name, version, None, undecoded=f"record type {type_name} unknown to this tool")
    return MetadataRecord(schema.name, version, obj.get("data") or {}, api_key=schema.api_key)


def _control(ctype: int, type_name: str, body: str | None) -> MetadataRecord:
    schema = CONTROL.get(ctype)
    name = schema.name if schema else type_name
    if body is None:
        return MetadataRecord(name, 0, None, control_type=ctype, undecoded="kafka-dump-log prints no body for it")
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("control record body is not a JSON object")
    return MetadataRecord(name, 0, data, control_type=ctype)


def _rest_record(rest: str) -> MetadataRecord | None:
    """The record a line's tail describes; None when the tail holds no record."""
    rest = rest.rstrip()
    if rest.startswith(" payload: "):
        payload = rest[len(" payload: "):]
        err = _ERROR.match(payload)
        if err:
            raise ValueError(f"kafka-dump-log could not decode it: {err.group('msg')}")
        return _from_payload(payload)
    m = _CONTROL.match(rest)
    if m:
        ctype = int(m.group("id"))
        return _control(ctype, m.group("name"), m.group("json"))
    m = _SNAPSHOT_MARK.match(rest)
    if m:
        ctype = 3 if m.group("label") == "SnapshotHeader" else 4
        return _control(ctype, m.group("label"), m.group("json"))
    m = _TXN_MARKER.match(rest)
    if m:
        ctype = 0 if m.group("type") == "ABORT" else 1
        fields = {"controlType": m.group("type"), "coordinatorEpoch": int(m.group("epoch"))}
        return MetadataRecord("EndTransactionMarker", 0, fields, control_type=ctype)
    return None


def _lines(data: bytes, problems: ReadProblems) -> Iterator[tuple[int, str]]:
    for n, raw in enumerate(iter_raw_lines(data, problems), 1):
        yield n, decode_line(raw, n, problems)


def parse_dump_text(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    problems = ReadProblems()
    events: list[Event] = []
    batch: _Batch | None = None
    snap: tuple[int, int] | None = snapshot_id(ctx.path)
    last_ts: int | None = None
    index = 0

    def reject(line_no: int, text: str, category: str, why: str) -> None:
        summary.count(category)
        summary.sample(Quarantined(ctx.path, line_no, category, why, text[:2000]))

    for line_no, text in _lines(data, problems):
        summary.lines += 1
        if text.startswith("baseOffset: "):
            pairs = dict(_PAIR.findall(text))
            if "baseOffset" not in pairs or _int(pairs["baseOffset"]) is None:
                reject(line_no, text, "unrecognized", "batch line without a base offset")
                continue
            batch = _Batch(pairs)
            if not batch.valid:
                summary.errors.append(f"{ctx.path}: line {line_no}: kafka-dump-log marked the batch at offset "
                                      f"{batch.base_offset} invalid (isvalid: false); its records are read as printed")
            summary.other += 1
            continue
        m = _RECORD.match(text)
        is_bare = text.startswith(" payload: ")
        if m or is_bare:
            if batch is None:
                reject(line_no, text, "unrecognized", "record line before any batch line")
                continue
            if m:
                offset, ts, rest = int(m.group("offset")), int(m.group("ts")), m.group("rest")
            else:
                offset, ts, rest = batch.next_offset, batch.ts, text
            batch.next_offset = offset + 1
            try:
                rec = _rest_record(rest)
            except ValueError as exc:
                reject(line_no, text, "quarantined", f"line {line_no}, offset {offset}: {exc}")
                summary.errors.append(f"{ctx.path}: line {line_no} (offset {offset}): {exc}")
                continue
            if rec is None:
                if batch.is_control or not rest.strip():
                    summary.other += 1  # record metadata only (a control record Kafka does not describe)
                else:
                    reject(line_no, text, "unrecognized", "record line with a tail this tool does not know")
                continue
            if rec.control_type == 3 and rec.fields:
                last_ts = rec.fields.get("lastContainedLogTimestamp")
            at = Where(ts, batch.epoch, None, {"line": line_no, "batch_base_offset": batch.base_offset})
            if batch.position is not None:
                at.extra["batch_byte_pos"] = batch.position
            pos, sub = offset, 0
            if snap is not None:
                at.extra["snapshot"] = {"end_offset": snap[0], "epoch": snap[1]}
                at.extra["snapshot_offset"] = offset
                at.ts_ms = last_ts if last_ts is not None else ts
                pos, sub = snap[0] - 1, index
            index += 1
            events.append(stamp(record_event(rec), rec, at, ctx, pos, sub))
            summary.parsed += 1
            continue
        if text.startswith("Dumping "):
            snap = snapshot_id(text[len("Dumping "):].strip())
            batch, last_ts = None, None
            summary.other += 1
            continue
        sm = _SNAPSHOT_LINE.match(text)
        if sm:
            snap = (int(sm.group("offset")), int(sm.group("epoch")))
            summary.other += 1
            continue
        if text.startswith("KRaft bootstrap snapshot"):
            snap = (0, 0)
            summary.other += 1
            continue
        tail = _INVALID_TAIL.match(text)
        if tail:
            summary.errors.append(f"{ctx.path}: line {line_no}: kafka-dump-log found {tail.group('n')} invalid bytes "
                                  f"at the end of {tail.group('file')} (records there are lost)")
            summary.other += 1
            continue
        if text.startswith("Log starting offset: ") or not text.strip():
            summary.other += 1
            continue
        reject(line_no, text, "unrecognized", "not a line kafka-dump-log --cluster-metadata-decoder prints")
    summary.errors.extend(f"{ctx.path}: {e}" for e in problems.errors)
    return finish(events, summary)


# ---------------------------------------------------------------------------- writing (kraft-dump)

def batch_line(h: BatchHeader, crc_valid: bool = True) -> str:
    horizon = f"OptionalLong[{h.base_timestamp}]" if h.has_delete_horizon else "OptionalLong.empty"
    return (
        f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.records_count} baseSequence: {h.base_sequence}"
        f" lastSequence: {h.last_sequence} producerId: {h.producer_id} producerEpoch: {h.producer_epoch}"
        f" partitionLeaderEpoch: {h.partition_leader_epoch} isTransactional: {str(h.is_transactional).lower()}"
        f" isControl: {str(h.is_control).lower()} deleteHorizonMs: {horizon} position: {h.pos}"
        f" {h.timestamp_type}: {h.max_timestamp} size: {h.size} magic: {h.magic}"
        f" compresscodec: {h.compression_name} crc: {h.crc} isvalid: {str(crc_valid).lower()}"
    )


def record_line(h: BatchHeader, rec: Record, decoded: MetadataRecord | None, error: str | None) -> str:
    keysize = -1 if rec.key is None else len(rec.key)
    valuesize = -1 if rec.value is None else len(rec.value)
    head = (f"| offset: {rec.offset} {h.timestamp_type}: {rec.timestamp} keySize: {keysize} valueSize: {valuesize}"
            f" sequence: {rec.sequence} headerKeys: [{','.join(x.key for x in rec.headers)}]")
    if error is not None or decoded is None:
        return f"{head} payload: Error at {rec.offset}, skipping. {error}"
    if decoded.control_type is None:
        return f"{head} payload: {payload_json(decoded)}"
    if decoded.control_type in (0, 1):
        f = decoded.fields or {}
        return f"{head} endTxnMarker: {f.get('controlType')} coordinatorEpoch: {f.get('coordinatorEpoch')}"
    body = json.dumps(jsonable(decoded.fields), separators=(",", ":")) if decoded.fields is not None else None
    if decoded.control_type in (3, 4) and body is not None:
        return f"{head} {CONTROL_LABELS[decoded.control_type]} {body}"
    line = f"{head} controlType: {decoded.type_name}({decoded.control_type})"
    label = CONTROL_LABELS.get(decoded.control_type)
    if body is not None and label:
        line += f" {label}: {body}"
    return line


def record_json(h: BatchHeader, rec: Record, decoded: MetadataRecord | None, error: str | None) -> dict[str, Any]:
    """One ``kraft-dump --json`` object."""
    out: dict[str, Any] = {
        "offset": rec.offset,
        "batch_base_offset": h.base_offset,
        "append_time": rec.timestamp,
        "leader_epoch": h.partition_leader_epoch,
        "control": h.is_control,
    }
    if rec.pos is not None:
        out["byte_pos"] = rec.pos
    if decoded is None:
        out["type"] = None
        out["error"] = error
        return out
    out["type"] = decoded.type_name
    out["record"] = decoded.name
    out["version"] = decoded.version
    out["data"] = jsonable(decoded.fields)
    if decoded.undecoded:
        out["undecoded"] = decoded.undecoded
    if decoded.unknown_tags:
        out["unknown_tags"] = {str(k): v for k, v in decoded.unknown_tags.items()}
    return out
