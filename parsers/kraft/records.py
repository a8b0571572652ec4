"""KRaft metadata records: the value frame, the flexible body with its tagged fields, and the
control records (LeaderChangeMessage, snapshot header/footer, KRaft version, voters).

A metadata record's value is ``uvarint frameVersion (1)``, ``uvarint apiKey``, ``uvarint
version``, then the body laid out by :mod:`parsers.kraft.record_schema`. Decoded fields come back as
a dict keyed like Kafka's own JSON (``partitionId``, ``isr``...), uuids as Kafka prints them
(url-safe base64), so records read from binary and from ``kafka-dump-log.sh`` text are alike.
"""
from __future__ import annotations

import base64
import json
import struct
from dataclasses import dataclass, field
from typing import Any, Iterator

from parsers.kraft.kafka_batches import (CONTROL_TYPES, Batch, BatchHeader, Damage, FormatError, Record, read_batches,
                                         read_uvarint)
from parsers.kraft.record_schema import (CONTROL, END_TXN_MARKER_FORMAT, METADATA, Field, RecordSchema, metadata_name,
                                         upper_snake)

FRAME_VERSION = 1


@dataclass(frozen=True)
class MetadataRecord:
    name: str  # PartitionChangeRecord, LeaderChangeMessage, ...
    version: int
    fields: dict[str, Any] | None  # None when the body could not be decoded (see ``undecoded``)
    api_key: int | None = None
    control_type: int | None = None
    unknown_tags: dict[int, str] = field(default_factory=dict)  # tag -> hex of bytes we have no grammar for
    undecoded: str | None = None

    @property
    def is_control(self) -> bool:
        return self.control_type is not None

    @property
    def type_name(self) -> str:
        """As kafka-dump-log names it: PARTITION_CHANGE_RECORD, or the control type (LEADER_CHANGE)."""
        if self.control_type is not None:
            return CONTROL_TYPES.get(self.control_type, f"UNKNOWN({self.control_type})")
        return upper_snake(self.name)


class RecordDecodeError(FormatError):
    pass


# ---------------------------------------------------------------------------- primitive reads

_FIXED = {
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "int32": struct.Struct(">i"),
    "int64": struct.Struct(">q"),
    "uint16": struct.Struct(">H"),
    "float64": struct.Struct(">d"),
}


def uuid_text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def uuid_bytes(text: str) -> bytes:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a Kafka uuid: {text!r}")
    return raw


class _Reader:
    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: bytes, pos: int, end: int):
        self.buf, self.pos, self.end = buf, pos, end

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise RecordDecodeError(f"needs {n} bytes but only {self.end - self.pos} remain", self.pos)
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return bytes(out)

    def uvarint(self) -> int:
        value, self.pos = read_uvarint(self.buf, self.pos, self.end)
        return value

    def length(self, what: str) -> int | None:
        """Compact length: uvarint(n + 1), 0 = null."""
        n = self.uvarint() - 1
        # Every item takes at least one byte, so a count beyond the bytes left is damage.
        if n > self.end - self.pos:
            raise RecordDecodeError(f"{what} of impossible length {n}", self.pos)
        return None if n < 0 else n

    def primitive(self, type_: str) -> Any:
        fixed = _FIXED.get(type_)
        if fixed is not None:
            pos = self.pos
            if pos + fixed.size > self.end:
                raise RecordDecodeError(f"needs {fixed.size} bytes but only {self.end - pos} remain", pos)
            self.pos = pos + fixed.size
            return fixed.unpack_from(self.buf, pos)[0]
        if type_ == "bool":
            return self.take(1) != b"\x00"
        if type_ == "uuid":
            return uuid_text(self.take(16))
        if type_ == "string":
            n = self.length("string")
            if n is None:
                return None
            raw = self.take(n)
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                raise RecordDecodeError("string is not valid UTF-8", self.pos - n) from None
        if type_ == "bytes":
            n = self.length("bytes")
            return None if n is None else self.take(n)
        raise RecordDecodeError(f"no reader for type {type_}", self.pos)


# ---------------------------------------------------------------------------- bodies

def _read_value(r: _Reader, fld: Field, version: int) -> Any:
    t = fld.type
    if t == "{}":
        return _read_struct(r, fld.fields, version)[0]
    if t.startswith("[]"):
        n = r.length(f"array {fld.name}")
        if n is None:
            if not fld.nullable_in(version):
                raise RecordDecodeError(f"{fld.name} is null but not nullable in version {version}", r.pos)
            return None
        item = t[2:]
        if item:
            return [r.primitive(item) for _ in range(n)]
        return [_read_struct(r, fld.fields, version)[0] for _ in range(n)]
    value = r.primitive(t)
    if value is None and not fld.nullable_in(version):
        raise RecordDecodeError(f"{fld.name} is null but not nullable in version {version}", r.pos)
    return value


def _plan(fields: tuple[Field, ...], version: int) -> tuple[tuple[Field, ...], dict[int, Field], tuple[str, ...]]:
    """Fixed fields, tagged fields by tag, and the key order of a struct at one version (cached:
    the schemas are module constants, so their identity is a stable key)."""
    key = (id(fields), version)
    plan = _PLANS.get(key)
    if plan is None:
        present = [f for f in fields if f.present_in(version)]
        plan = (tuple(f for f in present if f.tag is None), {f.tag: f for f in present if f.tag is not None},
                tuple(f.key for f in present))
        _PLANS[key] = plan
    return plan


_PLANS: dict[tuple[int, int], tuple[tuple[Field, ...], dict[int, Field], tuple[str, ...]]] = {}


def _read_struct(r: _Reader, fields: tuple[Field, ...], version: int) -> tuple[dict[str, Any], dict[int, str]]:
    fixed, tagged, order = _plan(fields, version)
    out: dict[str, Any] = {}
    for fld in fixed:
        out[fld.key] = _read_value(r, fld, version)
    unknown: dict[int, str] = {}
    n_tags = r.uvarint()
    if not n_tags:
        return out, unknown
    last = -1
    for _ in range(n_tags):
        tag = r.uvarint()
        size = r.uvarint()
        if tag <= last:
            raise RecordDecodeError(f"tagged fields out of order (tag {tag} after {last})", r.pos)
        last = tag
        fld = tagged.get(tag)
        if fld is None:
            unknown[tag] = r.take(size).hex()
            continue
        if r.pos + size > r.end:
            raise RecordDecodeError(f"tagged field {fld.name} runs past the record", r.pos)
        sub = _Reader(r.buf, r.pos, r.pos + size)
        out[fld.key] = _read_value(sub, fld, version)
        if sub.pos != sub.end:
            raise RecordDecodeError(f"tagged field {fld.name}: {sub.end - sub.pos} unread bytes", sub.pos)
        r.pos += size
    # Kafka's field order: tagged fields sit among the others in the schema.
    return {k: out[k] for k in order if k in out}, unknown


def decode_body(schema: RecordSchema, version: int, buf: bytes, pos: int = 0, end: int | None = None
                ) -> tuple[dict[str, Any], dict[int, str]]:
    """Fields of one record body; raises RecordDecodeError when the bytes do not fit the grammar."""
    r = _Reader(buf, pos, len(buf) if end is None else end)
    fields, unknown = _read_struct(r, schema.fields, version)
    if r.pos != r.end:
        raise RecordDecodeError(f"{r.end - r.pos} bytes left after the {schema.name} v{version} body", r.pos)
    return fields, unknown


def decode_metadata_value(value: bytes | None) -> MetadataRecord:
    """A metadata record from its record value (the frame and the body)."""
    if value is None:
        raise RecordDecodeError("metadata record without a value", 0)
    frame, pos = read_uvarint(value, 0)
    if frame != FRAME_VERSION:
        raise RecordDecodeError(f"unsupported metadata frame version {frame} (expected {FRAME_VERSION})", 0)
    api_key, pos = read_uvarint(value, pos)
    version, pos = read_uvarint(value, pos)
    name = metadata_name(api_key)
    schema = METADATA.get(api_key)
    if schema is None:
        return MetadataRecord(name, version, None, api_key=api_key, undecoded=f"unknown apiKey {api_key}")
    if version > schema.max_version:
        why = f"{name} v{version} is newer than this tool knows (up to v{schema.max_version})"
        return MetadataRecord(name, version, None, api_key=api_key, undecoded=why)
    fields, unknown = decode_body(schema, version, value, pos)
    return MetadataRecord(name, version, fields, api_key=api_key, unknown_tags=unknown)


def decode_control(key: bytes | None, value: bytes | None) -> MetadataRecord:
    """A control record: key = int16 version, int16 type; value = that type's message body."""
    if key is None or len(key) < 4:
        raise RecordDecodeError("control record key shorter than 4 bytes", 0)
    _key_version, ctype = struct.unpack_from(">hh", key, 0)
    type_name = CONTROL_TYPES.get(ctype, f"UNKNOWN({ctype})")
    if ctype in (0, 1):
        if value is None or len(value) < 6:
            raise RecordDecodeError(f"{type_name} marker value shorter than 6 bytes", 0)
        version, coordinator_epoch = struct.unpack_from(END_TXN_MARKER_FORMAT, value, 0)
        fields = {"controlType": type_name, "coordinatorEpoch": coordinator_epoch}
        return MetadataRecord("EndTransactionMarker", version, fields, control_type=ctype)
    schema = CONTROL.get(ctype)
    if schema is None:
        return MetadataRecord(type_name, 0, None, control_type=ctype, undecoded=f"unknown control type {ctype}")
    if value is None:
        raise RecordDecodeError(f"{type_name} control record without a value", 0)
    # Kafka reads control bodies at the one schema version it has for them (all 0 so far);
    # the message's own "Version" field is data, not the layout.
    version = schema.max_version
    fields, unknown = decode_body(schema, version, value)
    return MetadataRecord(schema.name, version, fields, control_type=ctype, unknown_tags=unknown)


# ---------------------------------------------------------------------------- a whole log

@dataclass(frozen=True)
class LogRecord:
    """One record of a metadata log with where it sits, decoded or with the reason it was not."""

    batch: BatchHeader
    record: Record
    decoded: MetadataRecord | None
    error: str | None = None  # why ``decoded`` is None


def read_metadata_log(data: bytes) -> Iterator[LogRecord | Damage]:
    """Every record of a ``__cluster_metadata`` segment or snapshot, and the damage met."""
    for item in read_batches(data):
        if isinstance(item, Damage):
            yield item
            continue
        yield from batch_records(item)
        if item.damage is not None:
            yield item.damage


def batch_records(batch: Batch) -> Iterator[LogRecord]:
    """The records of one batch, each decoded or with the reason it could not be."""
    h = batch.header
    for rec in batch.records:
        try:
            decoded = decode_control(rec.key, rec.value) if h.is_control else decode_metadata_value(rec.value)
        except FormatError as exc:
            yield LogRecord(h, rec, None, f"{exc} (at byte {exc.pos} of the record value)")
            continue
        yield LogRecord(h, rec, decoded)


# ---------------------------------------------------------------------------- rendering

def jsonable(value: Any) -> Any:
    """Decoded fields as JSON-ready values (bytes as base64, like Kafka's JSON converters)."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def _b64(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON")


def payload_json(rec: MetadataRecord) -> str:
    """The ``payload:`` text of kafka-dump-log: {"type": ..., "version": n, "data": {...}}."""
    body: dict[str, Any] = {"type": rec.type_name, "version": rec.version, "data": rec.fields}
    if rec.undecoded:
        body["undecoded"] = rec.undecoded
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, default=_b64)
