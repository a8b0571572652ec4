"""KRaft metadata -> canonical events (the dispatch entry point for ``kraft_metadata`` files).

``parse_metadata_file`` reads ``__cluster_metadata-0`` segments (``*.log``) and snapshots
(``*.checkpoint``); :mod:`parsers.kraft.dump_text` reads what ``kafka-dump-log.sh
--cluster-metadata-decoder`` printed. Both turn :class:`MetadataRecord` values into the events
of the KRaft table in ``docs/events.md`` through :func:`record_event`, so a record means the
same whichever way it arrived.

Positions: ``source_pos`` is the record's offset in the metadata log. Snapshot records have
no log offset of their own; they stand for the state just before the snapshot's end offset,
so they get ``source_pos = end offset - 1`` and their index in the snapshot as ``source_sub``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from parsers.common.accounting import FileSummary, Quarantined
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems, decompressed_chunks
from parsers.kraft.kafka_batches import Damage
from parsers.kraft.record_schema import CONFIG_RESOURCE_TYPES
from parsers.kraft.records import LogRecord, MetadataRecord, jsonable, payload_json, read_metadata_log
from parsers.schema import Event

SOURCE_KIND = "kraft_metadata"
# How many damage messages go into summary.errors per file (all are counted and sampled).
MAX_MESSAGES = 20

_SNAPSHOT_NAME = re.compile(r"(?:^|/)(\d{20})-(\d{10})\.checkpoint(?:\.gz)?$")


def snapshot_id(path: str) -> tuple[int, int] | None:
    """(end offset, epoch) from a snapshot's file name."""
    m = _SNAPSHOT_NAME.search(path.replace("\\", "/"))
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass
class Where:
    """What every event of a record carries besides the record's own fields."""

    ts_ms: int | None  # append time
    epoch: int | None  # Raft epoch of the batch (partitionLeaderEpoch)
    byte_pos: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def looks_like_metadata(head: bytes) -> bool:
    """Does a v2 segment start like a metadata log (so a renamed ``__cluster_metadata-0`` is still
    found) rather than an ordinary topic's segment? The first record tells: a Raft control record,
    or a value framed as a known metadata record."""
    from parsers.kraft.kafka_batches import HEADER_SIZE, FormatError, parse_header, read_uvarint, read_varint
    from parsers.kraft.record_schema import METADATA

    if len(head) < HEADER_SIZE + 8 or head[16] != 2:
        return False
    h = parse_header(head, 0)
    if h.compression or h.records_count < 1:
        return False
    try:
        pos = HEADER_SIZE
        _length, pos = read_varint(head, pos)
        pos += 1
        for _ in range(2):  # timestampDelta, offsetDelta
            _, pos = read_varint(head, pos)
        key_len, pos = read_varint(head, pos)
        if h.is_control:
            return key_len == 4 and 2 <= int.from_bytes(head[pos + 2 : pos + 4], "big", signed=True) <= 6
        if key_len != -1:
            return False
        value_len, pos = read_varint(head, pos)
        frame, pos = read_uvarint(head, pos)
        api_key, pos = read_uvarint(head, pos)
        version, pos = read_uvarint(head, pos)
    except FormatError:
        return False
    schema = METADATA.get(api_key)
    return value_len > 0 and frame == 1 and schema is not None and version <= schema.max_version


# ---------------------------------------------------------------------------- record -> event

def _ints(value: Any) -> list[int] | None:
    return None if value is None else [int(v) for v in value]


def _broker(name: str) -> int | None:
    return int(name) if name and name.lstrip("-").isdigit() else None


def record_event(rec: MetadataRecord) -> Event:
    """The event a metadata or control record stands for (position fields are stamped later)."""
    f = rec.fields
    name = rec.name
    if rec.control_type == 2:
        leader = f.get("leaderId") if f else None
        detail: dict[str, Any] = {}
        if f:
            detail["voters"] = [v["voterId"] for v in f.get("voters") or []]
            detail["granting_voters"] = [v["voterId"] for v in f.get("grantingVoters") or []]
        else:
            detail["leader_unknown"] = rec.undecoded or "no body"
        return Event("kraft_leader_change", controller_id=leader, detail=detail)
    if f is None:
        return Event("metadata_record", detail={"record": name, "version": rec.version, "undecoded": rec.undecoded,
                                                "control": rec.is_control})
    if name == "RegisterBrokerRecord":
        return Event("broker_registered", subject_broker=f["brokerId"], detail={
            "via": "kraft_record",
            "broker_epoch": f.get("brokerEpoch"),
            "incarnation_id": f.get("incarnationId"),
            "fenced": f.get("fenced", True),
            "in_controlled_shutdown": f.get("inControlledShutdown", False),
            "rack": f.get("rack"),
            "endpoints": [f"{e['name']}://{e['host']}:{e['port']}" for e in f.get("endPoints") or []],
        })
    if name == "UnregisterBrokerRecord":
        return Event("broker_unregistered", subject_broker=f["brokerId"], detail={"broker_epoch": f.get("brokerEpoch")})
    if name in ("FenceBrokerRecord", "UnfenceBrokerRecord"):
        kind = "broker_fenced" if name == "FenceBrokerRecord" else "broker_unfenced"
        return Event(kind, subject_broker=f["id"], detail={"broker_epoch": f.get("epoch"), "via": "record"})
    if name == "BrokerRegistrationChangeRecord":
        return Event("broker_registration_change", subject_broker=f["brokerId"], detail={
            "broker_epoch": f.get("brokerEpoch"),
            "fenced": f.get("fenced", 0),
            "in_controlled_shutdown": f.get("inControlledShutdown", 0),
        })
    if name == "TopicRecord":
        return Event("topic_record", topic=f["name"], detail={"topic_id": f["topicId"]})
    if name == "PartitionRecord":
        return Event(
            "partition_record",
            partition=f["partitionId"],
            replicas=_ints(f.get("replicas")),
            isr=_ints(f.get("isr")),
            leader=f.get("leader", -1),
            leader_epoch=f.get("leaderEpoch"),
            zk_version=f.get("partitionEpoch"),
            detail={
                "topic_id": f["topicId"],
                "elr": _ints(f.get("eligibleLeaderReplicas")),
                "last_known_elr": _ints(f.get("lastKnownElr")),
                "leader_recovery_state": f.get("leaderRecoveryState", 0),
                "adding": _ints(f.get("addingReplicas")),
                "removing": _ints(f.get("removingReplicas")),
            },
        )
    if name == "PartitionChangeRecord":
        return _partition_change(f)
    if name == "RemoveTopicRecord":
        return Event("topic_removed", detail={"topic_id": f["topicId"]})
    if name == "ConfigRecord":
        rtype = f.get("resourceType")
        rname = f.get("resourceName") or ""
        return Event(
            "config_record",
            topic=rname if rtype == 2 else None,
            subject_broker=_broker(rname) if rtype == 4 else None,
            detail={"resource_type": CONFIG_RESOURCE_TYPES.get(rtype, f"UNKNOWN({rtype})"), "resource_name": rname,
                    "name": f.get("name"), "value": f.get("value")},
        )
    if name == "FeatureLevelRecord":
        return Event("feature_level", detail={"name": f.get("name"), "level": f.get("featureLevel")})
    detail = {"record": name, "version": rec.version, "fields": jsonable(f)}
    if rec.is_control:
        detail["control"] = True
    if name == "ClearElrRecord" and f.get("topicName"):
        return Event("metadata_record", topic=f["topicName"], detail=detail)
    return Event("metadata_record", detail=detail)


# Tagged fields of PartitionChangeRecord and the detail key each one goes to.
_CHANGE_DETAIL = {
    "eligibleLeaderReplicas": "elr",
    "lastKnownElr": "last_known_elr",
    "leaderRecoveryState": "leader_recovery_state",
    "addingReplicas": "adding",
    "removingReplicas": "removing",
    "directories": "directories",
}


def _partition_change(f: dict[str, Any]) -> Event:
    ev = Event("partition_change", partition=f["partitionId"])
    changed = [k for k in ("isr", "leader", "replicas", *_CHANGE_DETAIL) if k in f and not _unchanged(k, f[k])]
    detail: dict[str, Any] = {"topic_id": f["topicId"], "changed": changed}
    if "isr" in changed:
        ev.isr = _ints(f["isr"])
    if "leader" in changed:
        ev.leader = f["leader"]  # -1 = no leader; -2 (no change) never gets here
    if "replicas" in changed:
        ev.replicas = _ints(f["replicas"])
    for k, dk in _CHANGE_DETAIL.items():
        if k in changed:
            v = f[k]
            detail[dk] = v if k in ("leaderRecoveryState", "directories") else _ints(v)
    ev.detail = detail
    return ev


def _unchanged(key: str, value: Any) -> bool:
    # Kafka leaves tagged defaults out; dump text or hand-made records may spell them out.
    if key == "leader":
        return value == -2
    if key == "leaderRecoveryState":
        return value == -1
    return value is None


def resolve_topics(events: list[Event]) -> None:
    """Name topics by id within one file (the replay resolves across files)."""
    names = {ev.detail["topic_id"]: ev.topic for ev in events if ev.event_type == "topic_record"}
    for ev in events:
        if ev.topic is None and ev.detail and ev.event_type in ("partition_record", "partition_change", "topic_removed"):
            ev.topic = names.get(ev.detail.get("topic_id"))


def stamp(ev: Event, rec: MetadataRecord, at: Where, ctx: SourceContext, pos: int, sub: int) -> Event:
    ev.cluster = ctx.cluster
    ev.source_kind = SOURCE_KIND
    ev.source_file = ctx.path
    ev.source_pos = pos
    ev.source_sub = sub
    if at.ts_ms is not None and at.ts_ms >= 0:
        ev.ts = at.ts_ms * 1000
        ev.ts_raw = str(at.ts_ms)
    ev.controller_epoch = at.epoch
    detail = dict(ev.detail or {})
    if at.byte_pos is not None:
        detail["byte_pos"] = at.byte_pos
    detail.update(at.extra)
    ev.detail = detail
    ev.raw = payload_json(rec)
    return ev


def finish(events: list[Event], summary: FileSummary) -> list[Event]:
    resolve_topics(events)
    for ev in events:
        summary.see_ts(ev.ts)
        summary.event_counts[ev.event_type] += 1
    summary.events = len(events)
    return events


# ---------------------------------------------------------------------------- binary segments and snapshots

class _Snapshot:
    """Snapshot records take the snapshot's place in the log, and the time of its last record."""

    def __init__(self, path: str):
        self.id = snapshot_id(path)
        self.last_contained_ts: int | None = None

    def place(self, item: LogRecord, index: int) -> tuple[int, int, Where]:
        rec = item.record
        if item.decoded is not None and item.decoded.control_type == 3 and item.decoded.fields:
            self.last_contained_ts = item.decoded.fields.get("lastContainedLogTimestamp")
        # The bootstrap snapshot contains no log yet: its header time is -1.
        contained = self.last_contained_ts
        ts = rec.timestamp if contained is None or contained < 0 else contained
        extra: dict[str, Any] = {"batch_base_offset": item.batch.base_offset, "snapshot_offset": rec.offset}
        at = Where(ts, item.batch.partition_leader_epoch, rec.pos, extra)
        if self.id is None:
            return rec.offset, 0, at
        extra["snapshot"] = {"end_offset": self.id[0], "epoch": self.id[1]}
        return self.id[0] - 1, index, at


def _segment_place(item: LogRecord) -> tuple[int, int, Where]:
    rec = item.record
    at = Where(rec.timestamp, item.batch.partition_leader_epoch, rec.pos, {"batch_base_offset": item.batch.base_offset})
    return rec.offset, 0, at


class _Accounts:
    """Counts and messages for one file; damage beyond MAX_MESSAGES is counted but not spelled out."""

    def __init__(self, ctx: SourceContext, summary: FileSummary, payload: bytes, base: int = 0):
        self.ctx, self.summary, self.payload, self.base = ctx, summary, payload, base
        self.messages = 0
        self.undecoded: dict[str, int] = {}

    def _say(self, text: str) -> None:
        if self.messages < MAX_MESSAGES:
            self.summary.errors.append(text)
        elif self.messages == MAX_MESSAGES:
            self.summary.errors.append(f"{self.ctx.path}: more damage than shown; all of it is counted as quarantined")
        self.messages += 1

    def damage(self, d: Damage) -> None:
        s = self.summary
        s.lines += d.records
        s.quarantined += d.records
        text = f"{self.ctx.path}: byte {d.pos + self.base}: {d.reason}"
        if d.records:
            text += f"; {d.records} record(s) quarantined"
            s.sample(Quarantined(self.ctx.path, d.pos + self.base, "quarantined", d.reason,
                                 self.payload[d.pos : d.pos + 64].hex()))
        if d.kind in ("truncated", "padding"):
            s.notes.append(text)
        else:
            if d.end < len(self.payload):
                text += f"; reading went on at byte {d.end + self.base}"
            self._say(text)

    def bad_record(self, item: LogRecord) -> None:
        s = self.summary
        rec = item.record
        s.lines += 1
        s.quarantined += 1
        pos = (rec.pos if rec.pos is not None else item.batch.pos) + self.base
        reason = f"record at offset {rec.offset} (byte {pos}): {item.error}"
        s.sample(Quarantined(self.ctx.path, pos, "quarantined", reason, (rec.value or b"")[:64].hex()))
        self._say(f"{self.ctx.path}: {reason}")

    def parsed(self, rec: MetadataRecord) -> None:
        self.summary.lines += 1
        self.summary.parsed += 1
        if rec.undecoded:
            key = f"{rec.name} v{rec.version}"
            self.undecoded[key] = self.undecoded.get(key, 0) + 1

    def close(self) -> None:
        self.close_with(self.undecoded)

    def close_with(self, undecoded: dict[str, int]) -> None:
        for key, n in sorted(undecoded.items()):
            self.summary.notes.append(f"{n} record(s) {key}: kept by name, fields not decoded (unknown to this tool)")


def parse_metadata_file(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    problems = ReadProblems()
    payload = b"".join(decompressed_chunks(data, problems))
    summary.errors.extend(f"{ctx.path}: {e}" for e in problems.errors)
    reader = MetadataReader(ctx, summary)
    events = reader.read(payload)
    reader.close()
    return finish(events, summary)


class MetadataReader:
    """A metadata segment or snapshot read in order: whole (``parse_metadata_file``), or as the controller appends
    to it (``parsers.kraft.growing``: each call reads the whole batches after the last, ``base`` bytes in)."""

    def __init__(self, ctx: SourceContext, summary: FileSummary):
        self.ctx, self.summary = ctx, summary
        self.snapshot: _Snapshot | None = None
        self.first = True
        self.expected: int | None = None  # the offset the next record must have: a Raft log has no gaps in a file
        self.index = 0
        self.undecoded: dict[str, int] = {}

    def read(self, payload: bytes, base: int = 0) -> list[Event]:
        ctx = self.ctx
        accounts = _Accounts(ctx, self.summary, payload, base)
        accounts.undecoded = self.undecoded
        events: list[Event] = []
        for item in read_metadata_log(payload):
            index = self.index
            self.index += 1
            if isinstance(item, Damage):
                accounts.damage(item)
                self.expected = None
                continue
            # baseOffset is outside the batch CRC: a damaged one moves a whole batch, unnoticed but for this
            if self.expected is not None and item.record.offset != self.expected:
                accounts._say(f"{ctx.path}: byte {item.batch.pos + base}: offsets jump from {self.expected - 1} to "
                              f"{item.record.offset} (a damaged batch header, or records missing); offsets kept as "
                              "written")
            self.expected = item.record.offset + 1
            if item.decoded is None:
                accounts.bad_record(item)
                continue
            if self.first:
                # A snapshot starts with its header control record; a segment never does.
                self.first = False
                if item.decoded.control_type == 3:
                    self.snapshot = _Snapshot(ctx.path)
            pos, sub, at = self.snapshot.place(item, index) if self.snapshot else _segment_place(item)
            if base and at.byte_pos is not None:
                at.byte_pos += base
            events.append(stamp(record_event(item.decoded), item.decoded, at, ctx, pos, sub))
            accounts.parsed(item.decoded)
        return events

    def close(self) -> None:
        _Accounts(self.ctx, self.summary, b"").close_with(self.undecoded)
