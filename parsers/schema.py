"""The canonical event schema: the one place that says what an event is.

Every parser emits :class:`Event` objects; Spark sees them through
:data:`SPARK_SCHEMA`, Arrow through :data:`ARROW_SCHEMA`, and both are derived
from :data:`FIELDS` below, so the three can never drift apart.

Conventions
- ``ts`` is microseconds since the Unix epoch, UTC. Log4j lines carry no zone:
  the parser converts with the ``--tz`` the user gave (default UTC) and keeps
  the text as it was in ``ts_raw``.
- ``source_pos`` is the 1-based line number for text sources, the byte offset
  of the record for binary sources (the zxid has its own column).
  ``source_sub`` orders several events that come from one line or record.
- ``broker_id`` is the broker that *wrote* the line; ``subject_broker`` is the
  broker the event is *about* (the one registered, failed, fenced, shutting
  down). A controller logging "deleted brokers: 3" has broker_id = controller,
  subject_broker = 3. ZooKeeper and KRaft records have no writer broker.
- The field contract of every event type is in ``docs/events.md``.
- ``detail`` is a JSON object (keys sorted) for everything without a column.
"""
from __future__ import annotations

import functools
import json
from array import array
from dataclasses import dataclass
from typing import Any, Iterable

import pyarrow as pa

# (name, arrow type, spark DDL type, meaning)
FIELDS: tuple[tuple[str, pa.DataType, str, str], ...] = (
    ("cluster", pa.string(), "string", "cluster name (from --cluster or the source's place)"),
    ("ts", pa.timestamp("us", tz="UTC"), "timestamp", "event time, UTC"),
    ("ts_raw", pa.string(), "string", "timestamp text as written in the source"),
    ("source_kind", pa.string(), "string", "broker_log, zk_txnlog, zk_snapshot, znode_dump, kraft_metadata, client_log, "
                                          "log_dir"),
    ("source_file", pa.string(), "string", "path of the file the event came from"),
    ("source_pos", pa.int64(), "bigint", "line number (text) or byte offset (binary)"),
    ("source_sub", pa.int32(), "int", "index among events from the same line/record"),
    ("broker_id", pa.int32(), "int", "broker that wrote the line (None for ZooKeeper/KRaft records)"),
    ("subject_broker", pa.int32(), "int", "broker the event is about (registered, failed, fenced, shutting down)"),
    ("event_type", pa.string(), "string", "one of EVENT_TYPES"),
    ("level", pa.string(), "string", "log level (text sources)"),
    ("logger", pa.string(), "string", "log4j logger name (text sources)"),
    ("controller_id", pa.int32(), "int", "controller broker id"),
    ("controller_epoch", pa.int32(), "int", "controller epoch"),
    ("topic", pa.string(), "string", "topic name"),
    ("partition", pa.int32(), "int", "partition number"),
    ("leader", pa.int32(), "int", "partition leader (-1 = none)"),
    ("isr", pa.list_(pa.int32()), "array<int>", "in-sync replicas"),
    ("replicas", pa.list_(pa.int32()), "array<int>", "assigned replicas (AR), in order"),
    ("leader_epoch", pa.int32(), "int", "partition leader epoch"),
    ("zk_version", pa.int32(), "int", "zkVersion / partition epoch of the state"),
    ("from_state", pa.string(), "string", "state machine: previous state"),
    ("to_state", pa.string(), "string", "state machine: new state"),
    ("zxid", pa.int64(), "bigint", "ZooKeeper transaction id"),
    ("session_id", pa.int64(), "bigint", "ZooKeeper session id"),
    ("detail", pa.string(), "string", "JSON object with everything else"),
    ("raw", pa.string(), "string", "the source text (or a rendering of the record)"),
)

FIELD_NAMES: tuple[str, ...] = tuple(f[0] for f in FIELDS)
ARROW_SCHEMA = pa.schema([pa.field(n, t) for n, t, _, _ in FIELDS])
SPARK_DDL = ", ".join(f"`{n}` {d}" for n, _, d, _ in FIELDS)

SOURCE_KINDS = ("broker_log", "zk_txnlog", "zk_snapshot", "znode_dump", "kraft_metadata", "client_log", "log_dir")

# Longest raw text kept per event. Real logs hold 10 kB HashMap dumps; a 10 MB
# line must not ride along through every stage.
RAW_LIMIT = 16_384


def spark_schema():
    """The Spark StructType (imported lazily so the pure core never needs Spark)."""
    from pyspark.sql.types import _parse_datatype_string

    return _parse_datatype_string(SPARK_DDL)


@dataclass(slots=True)
class Event:
    event_type: str
    cluster: str | None = None
    ts: int | None = None
    ts_raw: str | None = None
    source_kind: str | None = None
    source_file: str | None = None
    source_pos: int | None = None
    source_sub: int = 0
    broker_id: int | None = None
    subject_broker: int | None = None
    level: str | None = None
    logger: str | None = None
    controller_id: int | None = None
    controller_epoch: int | None = None
    topic: str | None = None
    partition: int | None = None
    leader: int | None = None
    isr: list[int] | None = None
    replicas: list[int] | None = None
    leader_epoch: int | None = None
    zk_version: int | None = None
    from_state: str | None = None
    to_state: str | None = None
    zxid: int | None = None
    session_id: int | None = None
    detail: dict[str, Any] | None = None
    raw: str | None = None

    def detail_json(self) -> str | None:
        return dump_detail(self.detail)

    def as_row(self) -> dict[str, Any]:
        """Column name -> value, with ``detail`` as JSON text, ready for Arrow."""
        row = {n: getattr(self, n) for n in FIELD_NAMES}
        row["detail"] = dump_detail(self.detail)
        row["raw"] = cut_raw(row["raw"])
        return row


@dataclass(slots=True)
class EventRun:
    """The events one entry gives that differ only in a few fields (a controller's dump of every partition's
    assignment: one event per partition): ``base`` holds what they share, ``columns`` the values of
    ``fields`` per event, in order; event i's ``source_sub`` is ``base.source_sub + i``. A reader that
    hands events on one by one expands it (``events``); one that writes them as columns (the ingest's
    staged files) takes it as it is. Both give the same events. A column is a list or a ``Packed``."""

    base: Event
    fields: tuple[str, ...]
    columns: tuple[list | Packed, ...]

    def __len__(self) -> int:
        return len(self.columns[0])

    # What the events share is read and set on ``base``: a run passes where an event does (stamping,
    # attribution, finishing) as long as only shared fields are touched.
    def __getattr__(self, name: str):
        return getattr(self.base, name)

    def __setattr__(self, name: str, value) -> None:
        if name in ("base", "fields", "columns"):
            object.__setattr__(self, name, value)
        else:
            setattr(self.base, name, value)

    def events(self) -> list[Event]:
        from copy import copy

        base, out = self.base, []
        for i, values in enumerate(zip(*self.columns)):
            ev = copy(base)
            if base.detail is not None:
                ev.detail = dict(base.detail)
            ev.source_sub = base.source_sub + i
            for name, v in zip(self.fields, values):
                setattr(ev, name, v)
            out.append(ev)
        return out


@dataclass(frozen=True, slots=True)
class Packed:
    """One column of an EventRun in Arrow's layout, with no Python object per value (the compiled dump reader,
    parsers/broker_logs/_dumps.c, gives them; the staged files' writer takes the buffers as they are): ``kind``
    "int" (``data``: int32 values), "text" (``data``: UTF-8; ``ends``: each value's end in it, int32) or "ints"
    (a list of int32 per value: ``ends`` indexes ``data``'s values). Native byte order. Iterated, it gives the
    values a list column would hold (int, str, list[int])."""

    kind: str
    data: bytes
    ends: bytes = b""

    def __len__(self) -> int:
        return len(self.data if self.kind == "int" else self.ends) // 4

    def __iter__(self):
        if self.kind == "int":
            return iter(array("i", self.data).tolist())
        ends = array("i", self.ends).tolist()
        values = self.data.decode() if self.kind == "text" else array("i", self.data).tolist()
        if self.kind == "text" and len(values) != len(self.data):  # not ASCII: ends count bytes
            values = self.data
            return (values[a:b].decode() for a, b in zip([0] + ends, ends))
        return (values[a:b] for a, b in zip([0] + ends, ends))


def expand_runs(events: list) -> list[Event]:
    """Events and EventRuns -> events."""
    if not any(type(ev) is EventRun for ev in events):
        return events
    out: list[Event] = []
    for ev in events:
        if type(ev) is EventRun:
            out.extend(ev.events())
        else:
            out.append(ev)
    return out


def count_events(events: list) -> int:
    """How many events a list of Events and EventRuns holds."""
    return sum(len(ev) if type(ev) is EventRun else 1 for ev in events)


def cut_raw(raw: str | None) -> str | None:
    if raw is not None and len(raw) > RAW_LIMIT:
        return raw[:RAW_LIMIT] + f"...[{len(raw) - RAW_LIMIT} chars cut]"
    return raw


# json.dumps with these options builds an encoder per call: one, made once, writes the same text.
_DETAIL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


# Most details repeat ({"template": ..., "via": ...}: 2,626 distinct texts among 101,848 events of a 0.1 GB corpus),
# and encoding one was half of staging a plain event: each text is made once. Only details whose keys and values are
# exactly str, int or None are kept: for those, equal items mean equal JSON (a bool equals 1 and a float -0.0
# equals 0, but their texts differ; lists and dicts are not hashable): lists of those and bools go by ``_memo_key``.
_MEMO_TYPES = frozenset((str, int, type(None)))
_DETAIL_MEMO: dict[tuple, str] = {}
_DETAIL_MEMO_MAX = 50_000


# A bool in a memo key: tagged, so it equals no int (True == 1).
_BOOL = object()


def _memo_key(detail: dict[str, Any]) -> tuple | None:
    """The memo key of a detail with lists or bools in it (a third of the details staged from the 0.27 GB rotated
    corpus: update_metadata_sent's recipients, a KRaft change's ELR lists; 97,970 of them, 2,957 distinct texts),
    or None when equal values need not mean equal JSON (a list's items must be exactly str, int or None)."""
    if not _MEMO_TYPES.issuperset(map(type, detail)):
        return None
    values = []
    for v in detail.values():
        t = type(v)
        if t in _MEMO_TYPES:
            values.append(v)
        elif t is list and _MEMO_TYPES.issuperset(map(type, v)):
            values.append(tuple(v))  # no other value in a key is a tuple
        elif t is bool:
            values.append((_BOOL, v))
        else:
            return None
    return tuple(detail), tuple(values)


def dump_detail(detail: dict[str, Any] | None) -> str | None:
    if not detail:
        return None
    values = tuple(detail.values())
    if _MEMO_TYPES.issuperset(map(type, values)) and _MEMO_TYPES.issuperset(map(type, detail)):
        key = (tuple(detail), values)
    else:
        key = _memo_key(detail)
        if key is None:
            return _DETAIL_JSON.encode(detail)
    text = _DETAIL_MEMO.get(key)
    if text is None:
        text = _DETAIL_JSON.encode(detail)
        if len(_DETAIL_MEMO) < _DETAIL_MEMO_MAX:
            _DETAIL_MEMO[key] = text
    return text


def load_detail(text: str | None) -> dict[str, Any]:
    return json.loads(text) if text else {}


def events_to_arrow(events: Iterable[Event]) -> pa.RecordBatch:
    """Column-wise conversion (much faster than row dicts through pa.Table.from_pylist)."""
    cols: dict[str, list] = {n: [] for n in FIELD_NAMES}
    for ev in events:
        for n, v in ev.as_row().items():
            cols[n].append(v)
    return pa.RecordBatch.from_arrays([pa.array(cols[n], type=t) for n, t, _, _ in FIELDS], schema=ARROW_SCHEMA)


def event_from_row(row: dict[str, Any]) -> Event:
    """Inverse of :meth:`Event.as_row` for rows read back from Parquet/Spark/pandas."""
    kw = {n: row.get(n) for n in FIELD_NAMES}
    ts = kw["ts"]
    if ts is not None and not isinstance(ts, int):
        kw["ts"] = to_micros(ts)
    for k in ("isr", "replicas"):
        if kw[k] is not None:
            kw[k] = [int(x) for x in kw[k]]
    kw["detail"] = load_detail(kw["detail"]) if isinstance(kw["detail"], str) else (kw["detail"] or None)
    if kw["source_sub"] is None:
        kw["source_sub"] = 0
    return Event(**kw)


def to_micros(value: Any) -> int:
    """datetime / pandas Timestamp / numpy datetime64 -> epoch microseconds (UTC)."""
    import datetime as _dt

    if hasattr(value, "value") and hasattr(value, "tz_localize"):  # pandas Timestamp (ns)
        return int(value.value // 1000)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        delta = value - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    import numpy as np

    if isinstance(value, np.datetime64):
        return int(value.astype("datetime64[us]").astype(np.int64))
    raise TypeError(f"not a timestamp: {value!r}")


def iso_utc(ts: int | None, millis: bool = True) -> str | None:
    """Epoch microseconds -> '2021-05-05T16:02:11.123Z' (None stays None)."""
    if ts is None:
        return None
    if type(ts) is int:
        # a replay's reports write the same few seconds thousands of times: each second's text is made once
        sec, us = divmod(ts, 1_000_000)
        head = _second_text(sec)
        return f"{head}.{us // 1000:03d}Z" if millis else head + "Z"
    import datetime as _dt

    d = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(microseconds=ts)
    if millis:
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.lru_cache(maxsize=4096)
def _second_text(sec: int) -> str:
    """Epoch seconds -> '2021-05-05T16:02:11' (what ``iso_utc`` writes before the fraction)."""
    import datetime as _dt

    return (_dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(seconds=sec)).strftime("%Y-%m-%dT%H:%M:%S")


def us_of_iso(iso: str) -> int:
    """'2021-05-05T16:02:11.123Z' (or any ISO-8601 with an offset) -> epoch microseconds: iso_utc's inverse."""
    import datetime as _dt

    d = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return (d - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)) // _dt.timedelta(microseconds=1)


# The event vocabulary. Parsers emit only these; downstream code matches on them.
# Kafka's own words are kept (controller epoch, ISR, OfflinePartition ...).
EVENT_TYPES: dict[str, str] = {
    # --- controller (ZooKeeper mode, broker logs) ---
    "controller_elected": "this broker became controller (controller_epoch when logged)",
    "controller_resigned": "this broker stopped being controller",
    "controller_moved": "controller moved to another broker while processing an event",
    "controller_observed": "a broker learnt who the controller is (e.g. 'New leader is N'); znode dump of /controller",
    "controller_startup_state": "a new controller's logged view at start (live brokers, shutting down, topics)",
    "broker_registered": "a broker became live (controller 'Newly added brokers', broker's own registration, ZK create of /brokers/ids/N, KRaft RegisterBrokerRecord)",
    "broker_failed": "controller saw a broker die ('deleted brokers', 'Broker failure callback')",
    "broker_deregistered": "ZooKeeper: /brokers/ids/N disappeared (session closed/expired or delete)",
    "broker_startup": "KafkaServer/BrokerServer starting or started",
    "broker_shutdown_started": "KafkaServer shutting down",
    "broker_shutdown_completed": "KafkaServer shut down completed",
    "controlled_shutdown_requested": "broker asked for / controller started a controlled shutdown",
    "controlled_shutdown_result": "outcome of a controlled shutdown attempt (succeeded, partitions remaining, retry, unclean)",
    "partition_state_change": "partition state machine transition (from_state/to_state, leader, ISR, epochs)",
    "replica_state_change": "replica state machine transition",
    "partition_leader_isr_written": "controller wrote leader/ISR outside an election (e.g. removing a replica from ISR -> leader -1)",
    "leader_election_failed": "an election found no leader (no live ISR, NoReplicaOnlineException)",
    "unclean_leader_election": "a leader was chosen outside the ISR",
    "preferred_election": "preferred replica / auto rebalance election started or completed",
    "reassignment": "partition reassignment progress logged by the controller",
    "topic_created": "topic creation seen by the controller",
    "topic_deleted": "topic deletion seen by the controller",
    "isr_shrink": "leader shrank the ISR",
    "isr_expand": "leader expanded the ISR",
    "isr_updated": "leader's ISR write result (ISR updated to ..., zkVersion)",
    "leader_and_isr_received": "broker received a LeaderAndIsr request / state for a partition",
    "become_leader": "broker became leader for a partition",
    "become_follower": "broker became follower for a partition",
    "stale_controller_request": "a request carrying an old controller epoch was ignored",
    "zk_session_expired": "ZooKeeper session of this broker expired",
    "zk_session_established": "ZooKeeper session (re)established",
    "zk_disconnected": "ZooKeeper connection lost (not yet expired)",
    "zk_session_closing": "the broker closed a ZooKeeper client (its session, and the ephemeral znodes it held, end)",
    "broker_config": "broker configuration logged at start-up (KafkaConfig values)",
    "kafka_version": "Kafka version logged at start-up (AppInfoParser)",
    "cluster_identity": "which cluster a broker, file or directory belongs to: a cluster id it states or the ZooKeeper chroot its broker used",
    "log_dir_failure": "a log directory went offline",
    "broker_fatal_error": "the broker could not start or register, or stopped itself (detail.cause: why, detail.proof_offset: the proving line)",
    # --- KRaft (logs and metadata records) ---
    "kraft_leader_change": "metadata quorum leader (active controller) changed",
    "kraft_quorum_epoch": "a quorum node entered an epoch with no leader known (Raft candidate, unattached, voted, resigned)",
    "kraft_snapshot_load": "a quorum controller began or finished loading a metadata snapshot (the registrations it replays meanwhile date from the snapshot)",
    "kraft_renounce_on_error": "an active controller's event failed: it renounced and reverted to the last committed offset",
    "broker_fenced": "KRaft: broker fenced",
    "broker_unfenced": "KRaft: broker unfenced",
    "broker_heartbeat_timeout": "KRaft: broker session timed out",
    "broker_unregistered": "KRaft: UnregisterBrokerRecord",
    "broker_registration_change": "KRaft: BrokerRegistrationChangeRecord (fenced / controlled shutdown flags)",
    "broker_unclean_shutdown": "KRaft: a new incarnation of a broker registered; its previous one leaves every ISR and ELR (handleBrokerUncleanShutdown)",
    "partition_change": "KRaft: PartitionChangeRecord (delta on the partition registration)",
    "partition_record": "KRaft: PartitionRecord (full partition registration)",
    "topic_record": "KRaft: TopicRecord",
    "topic_removed": "KRaft: RemoveTopicRecord",
    "config_record": "KRaft: ConfigRecord",
    "feature_level": "KRaft: FeatureLevelRecord",
    "metadata_record": "KRaft: any other metadata record, by name",
    # --- ZooKeeper transaction log / snapshots ---
    "zk_txn": "raw ZooKeeper transaction (kept for forensics)",
    "zk_txnlog_span": "the zxids a ZooKeeper txn log's readable entries cover (first, last, how many)",
    "zk_write_failed": "a ZooKeeper write that failed (error txn or failed multi), e.g. a fenced controller's write",
    "zk_session_created": "ZooKeeper createSession",
    "zk_session_closed": "ZooKeeper closeSession (client close or expiry)",
    "controller_znode_created": "/controller created",
    "controller_znode_deleted": "/controller deleted",
    "controller_epoch_set": "/controller_epoch written",
    "partition_state_written": "/brokers/topics/T/partitions/P/state written",
    "topic_assignment_written": "/brokers/topics/T written (AR per partition)",
    "topic_config_written": "/config/topics/T written",
    "broker_config_written": "/config/brokers/N or <default> written",
    "reassignment_requested": "/admin/reassign_partitions written",
    "preferred_election_requested": "/admin/preferred_replica_election written",
    "topic_deletion_requested": "/admin/delete_topics/T created, or the controller naming T queued for deletion",
    "topic_deletion_halted": "ZK controller: 'Halted deletion of topics T due to R' (the deletion waits)",
    "isr_change_notification": "/isr_change_notification/... created",
    "log_dir_event": "/log_dir_event_notification/... created",
    # --- znode dumps / captures ---
    "partition_state_observed": "a state znode as seen in a dump/capture (at its mtime)",
    "broker_observed": "a /brokers/ids/N znode as seen in a dump/capture",
    "topic_assignment_observed": "a /brokers/topics/T znode as seen in a dump/capture",
    "topic_config_observed": "a /config/topics/T znode as seen in a dump/capture",
    # --- clients ---
    "client_error": "producer/consumer error naming a partition (leader not available, not leader, expiring records, timeout)",
}
