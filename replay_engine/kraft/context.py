"""What the KRaft replay of any of a cluster's partitions needs to know about all of them.

The KRaft replay follows each partition on its own, as the ZooKeeper-mode replay does; what crosses partitions
is settled here, once, over the events that carry it (phase 1 of a split replay; the whole replay computes the
same from all its events, so both run one code path):

- the order: lines of one file in the same millisecond keep the file's order, a line without its writer's id
  ordered as the file's writer (``ClusterContext.writers``, from every event of the file);
- topic names (``ClusterContext.topic_ids``): the quorum controller's lines and records name topic ids;
- which "Replayed ..." lines are a controller's start-up burst, re-stating history: twenty or more of one writer
  within two seconds, counted over every partition (``bursts``, kept as time ranges per writer);
- which records a renounce rolled back or were never committed (``skip``, with their findings): decided over
  all the records of an epoch;
- where the metadata log's partition records begin (``records_from``): before it, the replay takes its own
  decisions; after it, the records say every decision, for every partition alike.

Echoes (the same record re-logged by another quorum member) are matched per partition and need nothing here.
"""
from __future__ import annotations

import bisect
import functools
import itertools
import operator
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from parsers.schema import Event
from replay_engine.zk.from_events import ClusterContext, cluster_context
from replay_engine.kraft.evidence import (quorum_epoch_holes, renounce_findings, reverted_on_renounce,
                                          uncommitted_in_metadata_log)

# A controller loading its log re-logs every record ("Replayed ...") within moments: that is history, not news.
BURST_WINDOW_US = 2_000_000
BURST_MIN = 20
# Every quorum member logs the record it replays: the same record from several writers counts once.
ECHO_WINDOW_US = 2_000_000

# Event types whose facts are about the whole cluster (brokers, quorum, topics, configuration), whatever
# partition the event may also name: they reach every shard.
WIDE_TYPES = frozenset({
    "broker_registered", "broker_unregistered", "broker_fenced", "broker_heartbeat_timeout", "broker_unfenced",
    "broker_registration_change", "broker_unclean_shutdown", "controlled_shutdown_requested", "topic_record",
    "topic_removed", "config_record",
    "feature_level", "broker_config", "kafka_version", "kraft_leader_change", "kraft_renounce_on_error",
    "kraft_snapshot_load", "kraft_quorum_epoch"})

# The lines the replay from logs alone may learn a leader's liveness from (``KraftLines._observed``): phase 1
# reads them to foresee which will (``kraft_split``).
LEADER_LINE = "become_leader"

_RECORD_TYPES = ("partition_record", "partition_change")

EventKey = tuple  # (source_file, source_pos, source_sub, event_type, topic, partition)


def event_key(e: Event) -> EventKey:
    return (e.source_file, e.source_pos, e.source_sub, e.event_type, e.topic, e.partition)


def is_wide(e: Event) -> bool:
    """An event every shard reads: it names no partition, or what it says concerns a broker or the cluster."""
    return e.topic is None or e.partition is None or e.subject_broker is not None or e.event_type in WIDE_TYPES


def is_replay_line(e: Event) -> bool:
    """A quorum controller's line of a record it replays: "Replayed ..." (3.7+), and the "UNCLEAN partition change for
    ..." line ReplicationControlManager.replay(PartitionChangeRecord) logs through
    PartitionRegistration.maybeLogPartitionChange (3.9.0-rc3, trunk), every voter alike and again at each load."""
    if e.source_kind != "broker_log":
        return False
    raw = e.raw or ""
    return raw.find("Replayed ", 0, 200) >= 0 or raw.find("UNCLEAN partition change for ", 0, 200) >= 0


def phase1_needs(e: Event) -> bool:
    """What phase 1 reads (the same rule as the Spark router in ``forensics.audit.distributed``)."""
    return is_wide(e) or e.source_kind == "kraft_metadata" or is_replay_line(e) or e.event_type == LEADER_LINE


def _is_controller_view(e: Event) -> bool:
    return e.source_kind == "kraft_metadata" or (e.logger or "").startswith("org.apache.kafka.controller")


def kraft_context(events: Iterable[Event], ctx: ClusterContext | None = None) -> ClusterContext:
    """``ctx`` (by default ``cluster_context`` of the events) with what KRaft reads of every event: each file's
    writer, topic ids' names and the span of the controller's own evidence (``KraftSeen``; the audit folds the
    same over its Spark partitions, ``forensics.audit.distributed.kraft_contexts``)."""
    events = list(events)
    return kraft_seen(events).into(ctx if ctx is not None else cluster_context(events))


@dataclass
class KraftSeen:
    """What ``kraft_context`` reads of some of a cluster's events; ``merge`` gives what it reads of the union."""

    writers: dict[str, int]  # file -> its lowest broker id
    names: dict[str, tuple[int, str]]  # topic id -> (time, name) of its first naming
    lo: int | None = None  # the span of the controller's own evidence
    hi: int | None = None

    def merge(self, other: KraftSeen) -> KraftSeen:
        writers = dict(self.writers)
        for f, w in other.writers.items():
            writers[f] = w if f not in writers else min(writers[f], w)
        names = dict(self.names)
        for t, cand in other.names.items():
            names[t] = cand if t not in names else min(names[t], cand)
        los = [x for x in (self.lo, other.lo) if x is not None]
        his = [x for x in (self.hi, other.hi) if x is not None]
        return KraftSeen(writers, names, min(los, default=None), max(his, default=None))

    def into(self, ctx: ClusterContext) -> ClusterContext:
        ctx.writers = dict(self.writers)
        ctx.topic_ids = {t: n for t, (_, n) in sorted(self.names.items())}
        ctx.controller_view = (self.lo, self.hi) if self.lo is not None else None
        return ctx


def kraft_seen(events: Iterable[Event]) -> KraftSeen:
    writers: dict[str, int] = {}
    names: dict[str, tuple[int, str]] = {}
    lo = hi = None
    for e in events:
        if e.broker_id is not None and e.source_file:
            w = writers.get(e.source_file)
            writers[e.source_file] = e.broker_id if w is None or e.broker_id < w else w
        tid = (e.detail or {}).get("topic_id") if e.detail else None
        if tid and e.topic and not e.topic.startswith("topic-id:"):
            cand = (e.ts or 0, e.topic)
            cur = names.get(str(tid))
            if cur is None or cand < cur:
                names[str(tid)] = cand
        if e.ts is not None and _is_controller_view(e):
            lo = e.ts if lo is None or e.ts < lo else lo
            hi = e.ts if hi is None or e.ts > hi else hi
    return KraftSeen(writers, names, lo, hi)


def order_key(writers: dict[str, int]) -> Callable[[Event], tuple]:
    """Metadata records in log order (offset), log lines by time; merged by time, records first on ties.
    A line without its writer's id (PartitionChangeBuilder's) is ordered as its file's writer."""

    def key(e: Event):
        rank = 0 if e.source_kind == "kraft_metadata" else 1
        pos = e.source_pos or 0
        b = e.broker_id if e.broker_id is not None else writers.get(e.source_file or "", -1)
        return (e.ts or 0, rank, pos if rank == 0 else 0, b, e.source_file or "", pos, e.source_sub)
    return key


def ordered(events: list[Event], writers: dict[str, int]) -> list[Event]:
    """The events in the KRaft replay's order, a metadata record read from two copies (segment and checkpoint,
    two nodes) once: the copy that sorts first; each metadata log's records in offset order (``in_offset_order``)."""
    seen: set[tuple] = set()
    out = []
    by_file: dict[str | None, list[int]] = {}  # the records' places in ``out``, by file
    for e in sorted(events, key=order_key(writers)):
        if e.source_kind == "kraft_metadata":
            key = (e.source_pos, e.source_sub, e.event_type, e.topic, e.partition, e.subject_broker)
            if key in seen:
                continue
            seen.add(key)
            by_file.setdefault(e.source_file, []).append(len(out))
        out.append(e)
    return _in_offset_order(out, by_file)


_POSITION = operator.attrgetter("source_pos", "source_sub")


def _offset_order(records: list[Event]) -> list[int] | None:
    """The records' places sorted by (offset, index), None read as -1; None when they are in that order already. The
    keys are compared as they are (in C) unless a None decides a comparison, which then raises and all is decided
    again with -1 (None == None compares alike either way)."""
    keys = list(map(_POSITION, records))
    try:
        if all(map(operator.le, keys, itertools.islice(keys, 1, None))):
            return None
        return sorted(range(len(records)), key=keys.__getitem__)
    except TypeError:
        keys = [(-1 if a is None else a, -1 if b is None else b) for a, b in keys]
        if all(map(operator.le, keys, itertools.islice(keys, 1, None))):
            return None
        return sorted(range(len(records)), key=keys.__getitem__)


def in_offset_order(events: list[Event]) -> list[Event]:
    """Each metadata log's records in offset order, in the places its records hold among the events by time.

    A log is the order its records were committed in (KafkaRaftClient appends batches at increasing offsets; every
    node replays them so); a record's timestamp is the appending node's clock, and the bootstrap batch a formatted
    node writes carries its own (so offset 2 can carry an earlier time than offset 1). Merged
    with the lines by time, a log's records keep their offsets' order."""
    by_file: dict[str | None, list[int]] = {}
    for i, e in enumerate(events):
        if e.source_kind == "kraft_metadata":
            by_file.setdefault(e.source_file, []).append(i)
    return _in_offset_order(events, by_file)


def _in_offset_order(events: list[Event], by_file: dict[str | None, list[int]]) -> list[Event]:
    """``in_offset_order``, the records' places given by file (each file's in order)."""
    slots: dict[str, list[int]] = {}
    for f, places in by_file.items():
        slot = slots.get(_directory(f or ""))
        if slot is None:
            slots[_directory(f or "")] = places
        else:  # several files of one log (segments): their places merged
            slot.extend(places)
            slot.sort()
    for places in slots.values():
        records = [events[i] for i in places]
        order = _offset_order(records)
        if order is None:
            continue  # in offset order already (a stable sort would keep every record where it is)
        in_log = [records[i] for i in order]
        if any(a is not b for a, b in zip(records, in_log)):
            for i, e in zip(places, in_log):
                events[i] = e
    return events


@dataclass(frozen=True)
class KraftPass:
    """Phase 1's result for one cluster (small: ranges, keys and findings, never events)."""

    bursts: dict[tuple, tuple[tuple[int, int], ...]]  # (broker_id, source_file) -> time ranges of start-up bursts
    skip: frozenset  # event keys of records rolled back by a renounce or never committed
    findings: tuple  # what the renounces rolled back (kraft_evidence.renounce_findings)
    # (metadata log, offset) of a PartitionChangeRecord -> the broker events it may belong to (broker_events)
    broker_events: dict[tuple[str, int], tuple[tuple[str, int], ...]]
    holes: tuple  # stretches the evidence lost (kraft_evidence.quorum_epoch_holes)
    records_from: tuple | None  # order key of the metadata log's first partition record
    # lines of other partitions that showed a leader active (keys: file, position, event type, partition), which a
    # shard applies to the brokers' liveness; None where no split is made (kraft_split)
    liveness: frozenset | None = None
    journal: str | None = None  # the brokers' liveness as phase 1 went through it (kraft_split)
    # node -> the times it was the active controller, from its own lines (active_spans): its record lines then are
    # records it writes now, not a log it reloads
    active: dict[int, tuple[tuple[int, int], ...]] | None = None

    def writing(self, e: Event) -> bool:
        """True when ``e`` is a line its writer logged as the active controller (within one of its active spans)."""
        spans = (self.active or {}).get(e.broker_id) if e.ts is not None else None
        return bool(spans) and any(a <= e.ts < b for a, b in spans)


def kraft_pass(events: list[Event], version: tuple[int, ...] | None, writers: dict[str, int],
               replay_lines: Sequence[bool] | None = None) -> KraftPass:
    """``events``: one cluster's events in ``ordered`` order, at least those ``phase1_needs``; ``version``: the
    Kafka version whose rules say which records a renounce rolled back; ``writers``: ``ClusterContext.writers``;
    ``replay_lines``: ``is_replay_line`` of each event, where the caller has it."""
    from replay_engine import rules as R

    reverted = reverted_on_renounce(events)
    uncommitted = uncommitted_in_metadata_log(events, lambda offsets, n: R.decide("kraft.renounce", version, offsets, n))
    undone: dict[int, list[Event]] = {}
    skip: set[EventKey] = set()
    for i in sorted(set(reverted) | set(uncommitted)):
        j = reverted.get(i)
        if j is None or not R.decide("kraft.renounce.failed_write", version, (events[j].detail or {}).get("exception")):
            j = uncommitted.get(i)
        if j is not None:
            undone.setdefault(j, []).append(events[i])
            skip.add(event_key(events[i]))
    first = next((e for e in events if e.source_kind == "kraft_metadata" and e.event_type in _RECORD_TYPES
                  and e.partition is not None and (e.topic or (e.detail or {}).get("topic_id"))
                  and event_key(e) not in skip), None)
    active = active_spans(events)
    return KraftPass(start_up_bursts(events, active, replay_lines), frozenset(skip), tuple(renounce_findings(events, undone)),
                     broker_events(events, R.decide("kraft.registration.cleanup", version)),
                     tuple(quorum_epoch_holes(events)),
                     None if first is None else order_key(writers)(first),
                     active={w: tuple(spans) for w, spans in active.items()})


def start_up_bursts(events: list[Event], active: dict[int, list[tuple[int, int]]] | None = None,
                    replay_lines: Sequence[bool] | None = None) -> dict[tuple, tuple[tuple[int, int], ...]]:
    """Per writer, the time ranges of its start-up bursts: ``BURST_MIN`` or more "Replayed" lines within
    ``BURST_WINDOW_US``. A window is a run of whole milliseconds (lines of one time all fall in it or none), so
    a line is history exactly when its time is in one of its writer's ranges. The active controller's own lines are
    never history: it replays each record as it writes it, and not again when Raft commits it (3.9.0-rc3
    QuorumController.QuorumMetaLogListener.handleCommit: "the records were already replayed"), so a burst of them
    (a fence changing fifty partitions) is live. ``replay_lines``: as ``kraft_pass``."""
    active = active if active is not None else active_spans(events)
    in_active = within(active)
    by_writer: dict[tuple, list[int]] = {}
    if replay_lines is None:
        replay_lines = [is_replay_line(e) for e in events]
    for e, replayed in zip(events, replay_lines):
        if e.ts is not None and replayed and not in_active(e.broker_id, e.ts):
            by_writer.setdefault((e.broker_id, e.source_file), []).append(e.ts)
    out: dict[tuple, tuple[tuple[int, int], ...]] = {}
    for writer, ts in by_writer.items():
        flagged = [False] * len(ts)
        start, marked = 0, 0  # lines before ``marked`` are settled
        for end in range(len(ts)):
            while ts[end] - ts[start] > BURST_WINDOW_US:
                start += 1
            if end - start + 1 >= BURST_MIN:
                for k in range(max(start, marked), end + 1):
                    flagged[k] = True
                marked = end + 1
        ranges: list[tuple[int, int]] = []
        for k, f in enumerate(flagged):
            if not f:
                continue
            if ranges and k > 0 and flagged[k - 1] and ts[k] - ts[k - 1] <= BURST_WINDOW_US:
                # one burst; two are never joined across the active controller's own lines left out between them
                ranges[-1] = (ranges[-1][0], ts[k])
            else:
                ranges.append((ts[k], ts[k]))
        if ranges:
            out[writer] = tuple(ranges)
    return out


def within(spans: dict[Any, Iterable[tuple[int, int]]]) -> Callable[[Any, int], bool]:
    """``(key, t) -> any(a <= t < b for a, b in spans[key])``, by bisection over each key's spans merged (a writer's
    active spans are asked of every line it wrote)."""
    merged: dict[Any, tuple[list[int], list[int]]] = {}
    for k, ss in spans.items():
        starts: list[int] = []
        ends: list[int] = []
        for a, b in sorted(s for s in ss if s[0] < s[1]):
            if ends and a <= ends[-1]:
                ends[-1] = max(ends[-1], b)
            else:
                starts.append(a)
                ends.append(b)
        merged[k] = (starts, ends)

    def test(key: Any, t: int) -> bool:
        m = merged.get(key)
        if m is None:
            return False
        i = bisect.bisect_right(m[0], t) - 1
        return i >= 0 and t < m[1][i]
    return test


def active_spans(events: list[Event]) -> dict[int, list[tuple[int, int]]]:
    """Node -> the times it was the active controller, from its own lines: from "Becoming the active controller at
    epoch E" (QuorumController.claim) to the first of its lines that ends that tenure: a quorum leader other than
    itself or a later quorum epoch named (a Raft transition, "In the new epoch ..."; a restarted node names a later
    epoch before it claims again), its renounce, a snapshot load begun or a new QuorumController created ("Creating new
    QuorumController with clusterId ...", its constructor: a node starting anew)."""
    out: dict[int, list[tuple[int, int]]] = {}
    since: dict[int, tuple[int, int]] = {}  # node -> (since, quorum epoch)
    for e in events:
        if e.ts is None or e.broker_id is None or e.source_kind != "broker_log":
            continue
        w, t = e.broker_id, e.event_type
        if w in since:
            start, epoch = since[w]
            later = e.controller_epoch is not None and epoch is not None and e.controller_epoch > epoch
            if t == "kraft_renounce_on_error" or t == "kraft_snapshot_load" and (e.detail or {}).get("phase") == "start" \
                    or t == "cluster_identity" and (e.detail or {}).get("via") == "quorum_controller" \
                    or t in ("kraft_leader_change", "kraft_quorum_epoch") and (later or t == "kraft_leader_change"
                                                                              and e.controller_id != w):
                out.setdefault(w, []).append((start, e.ts))
                del since[w]
        if t == "kraft_leader_change" and (e.detail or {}).get("via") == "became_active" and w not in since:
            since[w] = (e.ts, e.controller_epoch)
    for w, (a, _) in since.items():
        out.setdefault(w, []).append((a, 1 << 62))
    return out


def in_bursts(bursts: dict[tuple, tuple[tuple[int, int], ...]]) -> Callable[..., bool]:
    """``test(e, replay_line=None)``: ``e`` is a line of one of its writer's start-up bursts (``replay_line``:
    ``is_replay_line(e)``, where the caller has it)."""
    starts = {w: [a for a, _ in rs] for w, rs in bursts.items()}

    def test(e: Event, replay_line: bool | None = None) -> bool:
        rs = bursts.get((e.broker_id, e.source_file)) if e.ts is not None else None
        if not rs or not (is_replay_line(e) if replay_line is None else replay_line):
            return False
        k = bisect.bisect_right(starts[(e.broker_id, e.source_file)], e.ts) - 1
        return k >= 0 and e.ts <= rs[k][1]
    return test


def echo_lines(events: list[Event], replay_lines: Sequence[bool] | None = None) -> set[int]:
    """Indexes of "Replayed" lines that echo another quorum member's line of the same record (its key names
    the partition: matched within each partition's own lines). ``replay_lines``: as ``kraft_pass``."""
    echoes: set[int] = set()
    last: dict[tuple, tuple[int, Any]] = {}
    if replay_lines is None:
        replay_lines = [is_replay_line(e) for e in events]
    for i, e in enumerate(events):
        if e.ts is None or not replay_lines[i]:
            continue
        d = e.detail or {}
        key = (e.event_type, e.subject_broker, e.topic, e.partition, d.get("broker_epoch"), d.get("fenced"),
               d.get("in_controlled_shutdown"), d.get("topic_id"), d.get("name"), d.get("level"))
        prev = last.get(key)
        if prev is not None and e.ts - prev[0] <= ECHO_WINDOW_US and prev[1] != e.broker_id:
            echoes.add(i)
            continue
        last[key] = (e.ts, e.broker_id)
    return echoes


# A broker's change of state and the partition changes the controller writes for it are one event's records, in
# one order (3.5.1 .. 3.9.0-rc3, trunk metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java):
# handleBrokerInControlledShutdown and handleBrokerUnfenced append the BrokerRegistrationChangeRecord (or
# UnfenceBrokerRecord) first, then generateLeaderAndIsrUpdates' PartitionChangeRecords; handleBrokerFenced and
# handleBrokerUnregistered append the PartitionChangeRecords first, then the fence (FenceBrokerRecord or
# BrokerRegistrationChangeRecord fenced=1) or the UnregisterBrokerRecord.
REMOVE, ADD, UNCLEAN_SHUTDOWN = "remove", "add", "unclean_shutdown"


def _broker_step(e: Event, cleanup: bool = False) -> tuple[str, str, int] | None:
    """(where its changes lie: 'after' / 'before' it, the event's role for its broker, the broker) of a record that
    changes a broker's registration, or None. ``cleanup``: the release writes handleBrokerUncleanShutdown's changes
    before a new incarnation's RegisterBrokerRecord (rule ``kraft.registration.cleanup``)."""
    d = e.detail or {}
    b = e.subject_broker
    if b is None:
        return None
    t = e.event_type
    if t in ("broker_fenced", "broker_unregistered") or (t == "broker_registration_change" and d.get("fenced") == 1):
        return ("before", REMOVE, b)
    if t == "broker_unfenced" or (t == "broker_registration_change" and d.get("fenced") == -1):
        return ("after", ADD, b)
    if t == "broker_registration_change" and d.get("in_controlled_shutdown") == 1:
        return ("after", REMOVE, b)
    if t == "broker_registered" and cleanup:
        return ("before", UNCLEAN_SHUTDOWN, b)
    return None


def broker_events(events: list[Event], cleanup: bool = False) -> dict[tuple[str, int], tuple[tuple[str, int], ...]]:
    """(Metadata log, offset) of a PartitionChangeRecord -> the broker events it may have been written for, in log order:
    ``('remove', B)`` for enterControlledShutdown / handleBrokerFenced / handleBrokerUnregistered (B is
    ``brokerToRemove`` of generateLeaderAndIsrUpdates: never an acceptable leader, out of the target ISR),
    ``('add', B)`` for handleBrokerUnfenced (``brokerToAdd``: acceptable although the registration still shows
    it fenced while the records are generated).

    An event's records are appended together, so they lie in one batch, contiguous; several events may share a
    batch (the Raft accumulator lingers). A run of partition changes belongs to the step record just before it
    when that one writes its changes after it, and to the step record just after it when that one writes them
    before it. When both are there, which of the run's changes are whose is settled per partition by the
    replay (``KraftReplay``): each event only touches its own partitions (partitionsWithBrokerInIsr,
    partitionsWithNoLeader)."""
    batches: dict[tuple[str, int], dict[int, Event]] = {}
    changing: set[tuple[str, int]] = set()  # the batches holding a partition change: only they have runs
    for e in events:
        if e.source_kind != "kraft_metadata" or e.source_pos is None:
            continue
        d = e.detail or {}
        if d.get("snapshot_offset") is None and d.get("batch_base_offset") is not None:
            key = (metadata_log(e), d["batch_base_offset"])
            batches.setdefault(key, {}).setdefault(e.source_pos, e)
            if e.event_type == "partition_change":
                changing.add(key)
    out: dict[tuple[str, int], tuple[tuple[str, int], ...]] = {}
    for key in sorted(changing):
        recs = batches[key]
        _runs(key[0], [recs[o] for o in sorted(recs)], out, cleanup)
    return out


def metadata_log(e: Event) -> str:
    """The metadata log a record was read from (its directory): offsets are a log's own."""
    return _directory(e.source_file or "")


@functools.lru_cache(maxsize=1024)
def _directory(path: str) -> str:
    return path.rsplit("/", 1)[0]


def _runs(log: str, batch: list[Event], out: dict[tuple[str, int], tuple[tuple[str, int], ...]],
          cleanup: bool = False) -> None:
    k = 0
    while k < len(batch):
        if batch[k].event_type != "partition_change":
            k += 1
            continue
        j = k
        while j < len(batch) and batch[j].event_type == "partition_change":
            j += 1
        head = _broker_step(batch[k - 1], cleanup) if k > 0 else None
        tail = _broker_step(batch[j], cleanup) if j < len(batch) else None
        cands = tuple(step[1:] for step, where in ((head, "after"), (tail, "before"))
                      if step is not None and step[0] == where)
        if cands:
            for e in batch[k:j]:
                out[(log, e.source_pos)] = cands
        k = j
