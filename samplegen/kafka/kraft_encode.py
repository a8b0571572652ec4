"""Write KRaft metadata logs the way Kafka does: record values, records, batches (CRC-32C,
optional compression) and whole segments or snapshots.

The sample generator and the tests use it to make KRaft traces; the reader in
:mod:`parsers.kraft.records` must read back exactly what this writes. Field values are given
as decoded dicts (``{"partitionId": 0, "topicId": "<base64>", "leader": -1}``); a missing
fixed field takes the schema default, and a tagged field is written only when present and
different from its default, as Kafka does.
"""
from __future__ import annotations

import gzip
import struct
from dataclasses import dataclass, field
from typing import Any, Iterable

from parsers.kraft.kafka_batches import (
    CRC_START,
    HEADER_SIZE,
    LOG_OVERHEAD,
    XERIAL_MAGIC,
    _HEADER,
    crc32c,
    uvarint_bytes,
    varint_bytes,
)
from parsers.kraft.record_schema import BY_NAME, CONTROL, END_TXN_MARKER_FORMAT, Field, RecordSchema
from parsers.kraft.records import FRAME_VERSION, uuid_bytes

CONTROL_TYPE_IDS = {"ABORT": 0, "COMMIT": 1, "LEADER_CHANGE": 2, "SNAPSHOT_HEADER": 3, "SNAPSHOT_FOOTER": 4,
                    "KRAFT_VERSION": 5, "KRAFT_VOTERS": 6}
COMPRESSION_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

_FIXED = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H", "float64": ">d"}


# ---------------------------------------------------------------------------- bodies

def _compact_len(n: int | None) -> bytes:
    return uvarint_bytes(0 if n is None else n + 1)


def _primitive(type_: str, value: Any) -> bytes:
    fmt = _FIXED.get(type_)
    if fmt is not None:
        return struct.pack(fmt, value)
    if type_ == "bool":
        return b"\x01" if value else b"\x00"
    if type_ == "uuid":
        return uuid_bytes(value)
    if type_ == "string":
        if value is None:
            return _compact_len(None)
        raw = value.encode("utf-8")
        return _compact_len(len(raw)) + raw
    if type_ == "bytes":
        if value is None:
            return _compact_len(None)
        return _compact_len(len(value)) + bytes(value)
    raise ValueError(f"no writer for type {type_}")


def _value(fld: Field, value: Any, version: int) -> bytes:
    t = fld.type
    if t == "{}":
        return _struct(fld.fields, value or {}, version)
    if t.startswith("[]"):
        if value is None:
            if not fld.nullable_in(version):
                raise ValueError(f"{fld.name} cannot be null in version {version}")
            return _compact_len(None)
        item = t[2:]
        parts = [_compact_len(len(value))]
        if item:
            parts += [_primitive(item, v) for v in value]
        else:
            parts += [_struct(fld.fields, v, version) for v in value]
        return b"".join(parts)
    if value is None and not fld.nullable_in(version):
        raise ValueError(f"{fld.name} cannot be null in version {version}")
    return _primitive(t, value)


def _struct(fields: tuple[Field, ...], values: dict[str, Any], version: int) -> bytes:
    known = {fld.key for fld in fields}
    stray = set(values) - known
    if stray:
        raise ValueError(f"unknown field(s) {sorted(stray)}")
    out = []
    tagged = []
    for fld in fields:
        if not fld.present_in(version):
            if fld.key in values and values[fld.key] != fld.default_value():
                raise ValueError(f"{fld.name} does not exist in version {version}")
            continue
        if fld.tag is not None:
            if fld.key in values and values[fld.key] != fld.default_value():
                tagged.append((fld.tag, _value(fld, values[fld.key], version)))
            continue
        out.append(_value(fld, values.get(fld.key, fld.default_value()), version))
    out.append(uvarint_bytes(len(tagged)))
    for tag, raw in sorted(tagged):
        out.append(uvarint_bytes(tag) + uvarint_bytes(len(raw)) + raw)
    return b"".join(out)


def encode_body(schema: RecordSchema, version: int, values: dict[str, Any]) -> bytes:
    if not 0 <= version <= schema.max_version:
        raise ValueError(f"{schema.name} has no version {version}")
    return _struct(schema.fields, values, version)


def encode_metadata_value(name: str, version: int, values: dict[str, Any]) -> bytes:
    """A metadata record value: frame version, apiKey, version, body."""
    schema = BY_NAME[name]
    head = uvarint_bytes(FRAME_VERSION) + uvarint_bytes(schema.api_key) + uvarint_bytes(version)
    return head + encode_body(schema, version, values)


def encode_control(control_type: str, values: dict[str, Any]) -> tuple[bytes, bytes]:
    """(key, value) of a control record; ``values`` are the message fields (LeaderChangeMessage...)."""
    ctype = CONTROL_TYPE_IDS[control_type]
    key = struct.pack(">hh", 0, ctype)
    if ctype in (0, 1):
        return key, struct.pack(END_TXN_MARKER_FORMAT, 0, values.get("coordinatorEpoch", 0))
    schema = CONTROL[ctype]
    return key, encode_body(schema, schema.max_version, values)


# ---------------------------------------------------------------------------- records and batches

@dataclass
class RecordSpec:
    key: bytes | None
    value: bytes | None
    timestamp_delta: int = 0
    headers: tuple[tuple[str, bytes | None], ...] = ()


def encode_record(offset_delta: int, spec: RecordSpec) -> bytes:
    body = [b"\x00", varint_bytes(spec.timestamp_delta), varint_bytes(offset_delta)]
    for blob in (spec.key, spec.value):
        body.append(varint_bytes(-1) if blob is None else varint_bytes(len(blob)) + blob)
    body.append(varint_bytes(len(spec.headers)))
    for hkey, hval in spec.headers:
        raw = hkey.encode("utf-8")
        body.append(varint_bytes(len(raw)) + raw)
        body.append(varint_bytes(-1) if hval is None else varint_bytes(len(hval)) + hval)
    joined = b"".join(body)
    return varint_bytes(len(joined)) + joined


def compress(codec: str, raw: bytes) -> bytes:
    if codec == "none":
        return raw
    if codec == "gzip":
        return gzip.compress(raw, mtime=0)
    import cramjam  # the optional codecs are written only by tests and samples that ask for them

    if codec == "snappy":
        block = bytes(cramjam.snappy.compress_raw(raw))
        # xerial stream framing, as Kafka's Java producer writes it
        return XERIAL_MAGIC + struct.pack(">ii", 1, 1) + struct.pack(">i", len(block)) + block
    if codec == "lz4":
        return bytes(cramjam.lz4.compress(raw))
    if codec == "zstd":
        return bytes(cramjam.zstd.compress(raw))
    raise ValueError(f"unknown compression {codec}")


def encode_batch(
    base_offset: int,
    records: list[RecordSpec],
    *,
    epoch: int,
    timestamp: int,
    control: bool = False,
    compression: str = "none",
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
) -> bytes:
    """One record batch v2. ``timestamp`` (ms) is the batch base timestamp (KRaft: append time)."""
    payload = compress(compression, b"".join(encode_record(i, r) for i, r in enumerate(records)))
    attributes = COMPRESSION_IDS[compression] | (0x20 if control else 0)
    max_ts = timestamp + max((r.timestamp_delta for r in records), default=0)
    length = HEADER_SIZE - LOG_OVERHEAD + len(payload)
    header = bytearray(_HEADER.pack(
        base_offset, length, epoch, 2, 0, attributes, max(len(records) - 1, 0), timestamp, max_ts,
        producer_id, producer_epoch, base_sequence, len(records),
    ))
    body = bytes(header[CRC_START:]) + payload
    struct.pack_into(">I", header, 17, crc32c(body))
    return bytes(header[:CRC_START]) + body


# ---------------------------------------------------------------------------- whole logs

@dataclass
class MetadataBatch:
    """A batch to write: metadata records (name, version, fields) or one control record."""

    epoch: int
    timestamp: int
    records: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    control: tuple[str, dict[str, Any]] | None = None  # (LEADER_CHANGE, {...})
    compression: str = "none"


def leader_change(epoch: int, timestamp: int, leader: int, voters: Iterable[int],
                  granting: Iterable[int] | None = None) -> MetadataBatch:
    voters = list(voters)
    values = {"version": 0, "leaderId": leader, "voters": [{"voterId": v} for v in voters],
              "grantingVoters": [{"voterId": v} for v in (voters if granting is None else granting)]}
    return MetadataBatch(epoch, timestamp, control=("LEADER_CHANGE", values))


def encode_log(batches: Iterable[MetadataBatch], base_offset: int = 0) -> bytes:
    """A segment (or snapshot) with consecutive offsets from ``base_offset``."""
    out = []
    offset = base_offset
    for b in batches:
        if b.control is not None:
            key, value = encode_control(*b.control)
            specs = [RecordSpec(key, value)]
        else:
            specs = [RecordSpec(None, encode_metadata_value(n, v, f)) for n, v, f in b.records]
        out.append(encode_batch(offset, specs, epoch=b.epoch, timestamp=b.timestamp, control=b.control is not None,
                                compression=b.compression))
        offset += len(specs)
    return b"".join(out)


def encode_snapshot(records: list[tuple[str, int, dict[str, Any]]], *, epoch: int, timestamp: int,
                    last_contained_timestamp: int, batch_size: int = 200) -> bytes:
    """A ``.checkpoint`` file: header control batch, metadata batches, footer control batch."""
    batches = [MetadataBatch(epoch, timestamp, control=("SNAPSHOT_HEADER", {
        "version": 0, "lastContainedLogTimestamp": last_contained_timestamp}))]
    for i in range(0, len(records), batch_size):
        batches.append(MetadataBatch(epoch, timestamp, records=records[i : i + batch_size]))
    batches.append(MetadataBatch(epoch, timestamp, control=("SNAPSHOT_FOOTER", {"version": 0})))
    return encode_log(batches)
