"""Canonical events -> replay facts, in one global order.

Order: where ZooKeeper transaction data exists, its facts keep zxid order (the
total order the cluster itself had); broker-log facts are merged in by time.
Log lines of different brokers with the same millisecond are ordered by the
writing broker's id, then file and line: a stable rule, documented so a
reader can predict it. Clock skew between brokers is measured separately
(``skew.py``) and reported, not silently corrected.

Where ZooKeeper data covers a period, it is authoritative for membership,
controller tenure and the controller's writes; log lines saying the same
thing become evidence (they still appear in explanations). Controlled
shutdown requests and auto-rebalance triggers are never in ZooKeeper, so those
always come from the logs.
"""
from __future__ import annotations

import functools
import heapq
import re
from dataclasses import dataclass, field, replace
from typing import Iterable

from parsers.schema import Event
from replay_engine.common import facts as F
from replay_engine.zk.shutdown_sessions import shutdown_session_ends
from replay_engine.zk.holes import end_state, find_holes

ZK_KINDS = ("zk_txnlog",)
SNAPSHOT_KINDS = ("zk_snapshot", "znode_dump")
LOG_KINDS = ("broker_log", "client_log", None)  # lines of a log: their facts are ordered by ``_log_key``
_MAX_TEXT = 400


def ref_of(ev: Event) -> F.Ref:
    raw = ev.raw or ""
    cut = raw.find("\n")
    first = raw if cut < 0 else raw[:cut]
    if len(first) > _MAX_TEXT:
        first = first[:_MAX_TEXT] + "..."
    return F.Ref(ev.ts, ev.event_type, ev.source_file, ev.source_pos, first, ev.zxid, ev.broker_id)


def _tp(ev: Event) -> F.TP | None:
    if ev.topic is None or ev.partition is None:
        return None
    return (ev.topic, int(ev.partition))


def _t(xs) -> tuple[int, ...] | None:
    return None if xs is None else tuple(map(int, xs))


def _tp_list(items) -> tuple[F.TP, ...] | None:
    """Partition lists in details come as [[topic, p], ...] or [{"topic", "partition"}, ...]."""
    if not isinstance(items, list):
        return None
    out = []
    for it in items:
        if isinstance(it, dict) and "topic" in it and "partition" in it:
            out.append((str(it["topic"]), int(it["partition"])))
        elif isinstance(it, (list, tuple)) and len(it) == 2:
            out.append((str(it[0]), int(it[1])))
    return tuple(out)


# Which decisions leave a trace where. ZooKeeper holds writes only (a failed election writes nothing).
# state-change.log holds elections and failures at every version's default level; the "leader -1 after
# removing replica" write is logged at INFO only in 2.6+ (and by 0.10's controller.log), not in 1.1-2.5.
ZK_RECORDED_KINDS = frozenset({"election", "isr_removal", "new_partition"})
LOG_RECORDED_KINDS = frozenset({"election", "new_partition", "election_failed", "new_partition_failed"})


@dataclass
class Coverage:
    """Periods in which the real controller's decisions would have been recorded, by kind."""

    zk: list[tuple[int, int]] = field(default_factory=list)  # txn-log time windows
    state_change: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # broker -> windows
    controller_log: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # broker -> windows
    logs_record_isr_removal: bool = True

    def zk_covers(self, ts: int) -> bool:
        """Does ZooKeeper's own data cover this time (so registrations are known as they happened)?"""
        return any(a <= ts <= b for a, b in self.zk)

    def controller_logged(self, ts: int, controller: int | None) -> bool:
        """Is the controller's own controller.log in the evidence at this time (so its view is known)?"""
        return controller is not None and any(a <= ts <= b for a, b in self.controller_log.get(controller, ()))

    def recorded(self, ts: int, controller: int | None, kind: str) -> bool:
        if kind in ZK_RECORDED_KINDS and any(a <= ts <= b for a, b in self.zk):
            return True
        if controller is not None and (kind in LOG_RECORDED_KINDS or kind == "isr_removal"
                                       and self.logs_record_isr_removal):
            return any(a <= ts <= b for a, b in self.state_change.get(controller, ()))
        return False


@dataclass
class FactStream:
    facts: list[F.Fact]
    mode: str  # 'zk' (ZooKeeper transaction data present) or 'logs'
    coverage: Coverage
    kafka_version: str | None
    trace_start: int | None
    trace_end: int | None
    zk_window: tuple[int, int] | None
    notes: list[str] = field(default_factory=list)
    kafka_version_source: str | None = None  # where kafka_version was read, when not a 'Kafka version:' line


@dataclass
class ClusterContext:
    """What the replay of any part of a cluster needs to know about all of it: how far the evidence
    reaches. ``build_facts`` computes it from its own events; a partition shard is handed the
    whole cluster's (``replay_engine.sharding.shard``), computed by the same rules."""

    log_windows: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)  # (kind, broker) -> span
    zk_window: tuple[int, int] | None = None
    trace_start: int | None = None
    trace_end: int | None = None
    zk: bool = False  # ZooKeeper transaction data present (mode 'zk')
    # KRaft (replay_engine.kraft.context.kraft_context): each file's writer (its lowest broker id), topic id -> name,
    # and the first and last time of a quorum controller's own line or a metadata record
    writers: dict[str, int] = field(default_factory=dict)
    topic_ids: dict[str, str] = field(default_factory=dict)
    controller_view: tuple[int, int] | None = None


@functools.lru_cache(maxsize=4096)
def log_window_kind(source_file: str | None, logger: str | None = None) -> str | None:
    """Which controller record a log file's time span covers: its state-change or controller log.

    A file named for neither (a container's stdout, a collector's export, a server.log that an
    operator's log4j config shares) still holds those records where the line's logger is the
    one Kafka's log4j.properties routes to them: state.change.logger, kafka.controller.*. Asked of every line: kept
    per (file, logger), a cluster's few."""
    if source_file:
        name = source_file.rsplit("/", 1)[-1]
        if "state-change" in name:
            return "state_change"
        if "controller" in name:
            return "controller_log"
    if logger == "state.change.logger":
        return "state_change"
    if logger is not None and logger.startswith("kafka.controller."):
        return "controller_log"
    return None


def cluster_context(events: Iterable[Event]) -> ClusterContext:
    ctx = ClusterContext()
    zk_lo = zk_hi = lo = hi = None
    for ev in events:
        ts = ev.ts
        if ts is None:
            continue
        lo = ts if lo is None or ts < lo else lo
        hi = ts if hi is None or ts > hi else hi
        if ev.source_kind in ZK_KINDS:
            ctx.zk = True
            zk_lo = ts if zk_lo is None or ts < zk_lo else zk_lo
            zk_hi = ts if zk_hi is None or ts > zk_hi else zk_hi
        elif ev.source_kind in LOG_KINDS and ev.broker_id is not None:
            kind = log_window_kind(ev.source_file, ev.logger)
            if kind is not None:
                w = ctx.log_windows.get((kind, ev.broker_id))
                ctx.log_windows[(kind, ev.broker_id)] = (ts, ts) if w is None else (min(w[0], ts), max(w[1], ts))
    ctx.trace_start, ctx.trace_end = lo, hi
    ctx.zk_window = (zk_lo, zk_hi) if zk_lo is not None else None
    return ctx


# A Kafka binary distribution unpacks to kafka_<scala version>-<kafka version>/ (kafka_2.11-0.9.0.0/logs/...).
_DIST_DIR = re.compile(r"(?:^|[/_])kafka_2\.\d+-(\d+\.\d+\.\d+(?:\.\d+)?)$")


def version_from_paths(paths: Iterable[str | None]) -> str | None:
    """The Kafka release named by the distribution directory the log files sit in, when they name exactly one."""
    found = set()
    for path in paths:
        for part in (path or "").split("/")[:-1]:
            m = _DIST_DIR.search(part)
            if m:
                found.add(m.group(1))
    return found.pop() if len(found) == 1 else None


def _in_window(ts: int | None, window: tuple[int, int] | None) -> bool:
    return window is not None and ts is not None and window[0] <= ts <= window[1]


# Event types whose meaning ZooKeeper data states authoritatively.
# (A failed election writes nothing to ZooKeeper: only state-change.log records it, so it stays a record.)
_ZK_AUTHORITATIVE_LOG_TYPES = frozenset({
    "controller_elected", "controller_resigned", "broker_registered", "broker_failed",
    "partition_state_change", "partition_leader_isr_written",
    "isr_shrink", "isr_expand", "isr_updated", "controller_startup_state", "broker_shutdown_completed",
    "zk_session_expired", "topic_created", "topic_deleted",
})


_WRITE_FAILURES = ("KeeperException", "SessionExpired", "ControllerMovedException", "ConnectionLoss",
                   "ZooKeeperClientExpiredException", "ZooKeeperClientTimeoutException")


_LIVE_MSG = re.compile(r"Live brokers are: \[(?:Set\()?([\d, ]*)\)?\]")
_ISR_MSG = re.compile(r"ISR brokers are: \[(?:List\()?([\d, ]*)\)?\]")
_AR_MSG = re.compile(r"Assigned replicas are: \[(?:List\()?([\d, ]*)\)?\]")


# 0.8.2.2 .. 1.0.0 PartitionStateMachine.electLeaderForPartition and 1.1.0+ doElectLeaderForPartitions: "[Aa]borted
# leader election for partition P since the LeaderAndIsr path was already written by another controller. ... another
# controller was elected with epoch E."
_FENCED_MSG = re.compile(r"borted leader election for partition .* already written by another controller\..*"
                         r"elected with epoch (\d+)", re.S)


def _failure_context(message: str) -> dict:
    """What a NoReplicaOnlineException message states about the controller's view at that moment; or, for an
    election aborted by the controller-epoch fence, the controller epoch the partition's state was written under."""
    out: dict = {}
    for key, rx in (("live_brokers", _LIVE_MSG), ("isr", _ISR_MSG), ("assigned", _AR_MSG)):
        m = rx.search(message)
        if m:
            out[key] = [int(x) for x in re.findall(r"\d+", m.group(1))]
    m = _FENCED_MSG.search(message)
    if m:
        out["fenced_by"] = int(m.group(1))
    return out


def _write_failure(d: dict) -> bool:
    text = f"{d.get('exception') or ''} {d.get('message') or ''}"
    return any(x in text for x in _WRITE_FAILURES)


# The transitions of PartitionStateMachine a state-change line records, by the state entered.
_ENTERED_KIND = {"NewPartition": "new_state", "OfflinePartition": "offline", "NonExistentPartition": "deleted"}


def record_kind(ev: Event) -> str | None:
    """What controller record a log event of a partition is (the ``kind`` of its ``RecordedState``, or "failed" for
    a ``RecordedFailedElection``), or None when it records no decision (evidence only). Logs only, authoritative."""
    t = ev.event_type
    if t == "partition_state_change":
        to = ev.to_state
        if to == "OnlinePartition":
            return "new_partition" if ev.from_state == "NewPartition" else "election"
        return _ENTERED_KIND.get(to)
    if t == "partition_leader_isr_written":
        return "election" if (ev.detail or {}).get("reason") == "election" else "isr_removal"
    if t == "leader_election_failed":
        return None if _write_failure(ev.detail or {}) else "failed"
    return None


def log_event_facts(ev: Event, authoritative: bool) -> list[F.Fact]:
    """One log event -> facts. ``authoritative`` False turns inputs/records into evidence."""
    t = ev.event_type
    ts = ev.ts or 0
    r = ref_of(ev)
    d = ev.detail or {}
    tp = _tp(ev)
    out: list[F.Fact] = []

    def ev_only(kind: str, broker: int | None = None, tp_: F.TP | None = None) -> list[F.Fact]:
        return [F.Evidence(ts, r, kind=kind, broker=broker, tp=tp_)]

    if not authoritative and t in _ZK_AUTHORITATIVE_LOG_TYPES:
        return ev_only(t, ev.subject_broker if ev.subject_broker is not None else ev.broker_id, tp)

    if t == "controller_elected":
        cid = ev.controller_id if ev.controller_id is not None else ev.subject_broker
        if cid is not None:
            out.append(F.ControllerElected(ts, r, controller=int(cid), epoch=ev.controller_epoch))
    elif t == "controller_resigned":
        out.append(F.ControllerGone(ts, r, controller=ev.controller_id if ev.controller_id is not None else ev.subject_broker,
                                    cause="resigned"))
    elif t == "broker_registered" and ev.subject_broker is not None:
        via = d.get("via", "")
        out.append(F.BrokerUp(ts, r, broker=int(ev.subject_broker), epoch=d.get("broker_epoch"), via=via,
                              view="controller" if via == "controller_broker_change" else "self"))
        if d.get("live_brokers") is not None and d.get("via") == "controller_broker_change":
            out.append(F.LiveSet(ts, r, brokers=frozenset(int(x) for x in d["live_brokers"]), controller=ev.broker_id))
    elif t == "broker_failed" and ev.subject_broker is not None:
        out.append(F.BrokerDown(ts, r, broker=int(ev.subject_broker), cause="controller_detected", view="controller"))
        if d.get("live_brokers") is not None:
            out.append(F.LiveSet(ts, r, brokers=frozenset(int(x) for x in d["live_brokers"]), controller=ev.broker_id))
    elif t == "controller_startup_state":
        if d.get("kind") in ("live_brokers", "broker_change_noop") and d.get("brokers", d.get("live_brokers")) is not None:
            bs = d.get("brokers", d.get("live_brokers"))
            out.append(F.LiveSet(ts, r, brokers=frozenset(int(x) for x in bs), controller=ev.controller_id))
        elif d.get("kind") == "topics" and d.get("complete"):
            out.append(F.TopicsListed(ts, r, topics=frozenset(d.get("topics") or ()), controller=ev.controller_id))
        else:
            out.extend(ev_only(t, ev.controller_id))
    elif t == "broker_startup" and d.get("phase") == "started" and ev.subject_broker is not None:
        out.append(F.BrokerUp(ts, r, broker=int(ev.subject_broker), via="started", view="self"))
    elif t == "broker_shutdown_completed" and ev.subject_broker is not None:
        out.append(F.BrokerDown(ts, r, broker=int(ev.subject_broker), cause="shutdown", view="self"))
    elif t == "zk_session_expired" and ev.subject_broker is not None:
        out.append(F.BrokerDown(ts, r, broker=int(ev.subject_broker), cause="session_expired", view="self"))
    elif t == "partition_state_change" and tp is not None:
        to, frm = ev.to_state, ev.from_state
        kind = record_kind(ev)
        if kind == "new_state":
            if ev.replicas:
                out.append(F.TopicAssignment(ts, r, topic=tp[0], assignment={tp[1]: _t(ev.replicas)}))
            out.append(F.RecordedState(ts, r, tp=tp, kind=kind, from_state=frm, to_state=to,
                                       replicas=_t(ev.replicas), controller_epoch=ev.controller_epoch,
                                       controller_id=ev.controller_id))
        elif kind in ("new_partition", "election"):
            out.append(F.RecordedState(ts, r, tp=tp, kind=kind, from_state=frm, to_state=to, leader=ev.leader,
                                       isr=_t(ev.isr), leader_epoch=ev.leader_epoch, zk_version=ev.zk_version,
                                       controller_epoch=ev.controller_epoch, strategy=d.get("strategy"),
                                       controller_id=ev.controller_id))
        elif kind is not None:
            out.append(F.RecordedState(ts, r, tp=tp, kind=kind, from_state=frm, to_state=to,
                                       controller_epoch=ev.controller_epoch, controller_id=ev.controller_id))
        else:
            out.extend(ev_only(t, None, tp))
    elif t == "partition_leader_isr_written" and tp is not None:
        out.append(F.RecordedState(ts, r, tp=tp, kind=record_kind(ev), leader=ev.leader, isr=_t(ev.isr),
                                   leader_epoch=ev.leader_epoch, zk_version=ev.zk_version,
                                   controller_epoch=ev.controller_epoch, removed_replica=d.get("removed_replica"),
                                   controller_id=ev.controller_id, from_state=ev.from_state))
    elif t == "leader_election_failed" and tp is not None and record_kind(ev) is None:
        # The controller lost ZooKeeper (or its controllership) while writing: no election outcome.
        out.extend(ev_only("state_change_write_failed", None, tp))
    elif t == "leader_election_failed" and tp is not None:
        d = {**_failure_context(d.get("message") or ""), **d}
        live = d.get("live_brokers")
        out.append(F.RecordedFailedElection(ts, r, tp=tp, strategy=d.get("strategy"), reason=d.get("reason"),
                                            from_state=ev.from_state,
                                            live=frozenset(int(x) for x in live) if live is not None else None,
                                            isr=_t(d.get("isr")), assigned=_t(d.get("assigned")),
                                            controller_id=ev.controller_id, controller_epoch=ev.controller_epoch,
                                            fenced_by=d.get("fenced_by")))
    elif t in ("isr_shrink", "isr_expand", "isr_updated") and tp is not None and ev.isr is not None:
        # the leader writes its own ISR changes; the controller (2.7+) logs the same change, but it is not the leader
        leader = None if d.get("side") == "controller" else ev.broker_id
        out.append(F.LeaderIsrChange(ts, r, tp=tp, leader=leader, isr=_t(ev.isr), zk_version=ev.zk_version))
    elif t == "controlled_shutdown_result" and ev.subject_broker is not None and d.get("side") == "broker" \
            and d.get("outcome") in ("succeeded", "partitions_remaining"):
        # The controller answered the broker's ControlledShutdownRequest (KafkaServer.controlledShutdown, every
        # release): it had put the broker among its shutting-down brokers (KafkaController.doControlledShutdown
        # adds it before moving leadership), whatever the partitions left to move.
        out.extend(ev_only("controlled_shutdown_taken", int(ev.subject_broker)))
    elif t == "controlled_shutdown_requested" and ev.subject_broker is not None:
        if d.get("side", "controller") == "controller":
            out.append(F.ControlledShutdownRequest(ts, r, broker=int(ev.subject_broker)))
        else:
            out.extend(ev_only(t, int(ev.subject_broker)))
    elif t == "preferred_election" and d.get("phase") == "started":
        tp_list = _tp_list(d.get("partitions"))
        if tp is not None:
            tp_list = (tp,)
        out.append(F.PreferredElectionRequest(ts, r, tps=tp_list, trigger=d.get("trigger", "log")))
    elif t == "topic_created" and ev.topic:
        asg = d.get("assignment") or {}
        out.append(F.TopicAssignment(ts, r, topic=ev.topic, assignment={int(k): _t(v) for k, v in asg.items()}))
    elif t == "topic_deleted" and ev.topic:
        out.append(F.TopicGone(ts, r, topic=ev.topic))
    elif t == "topic_deletion_requested" and ev.topic:
        out.append(F.TopicDeletionRequest(ts, r, topic=ev.topic))
    elif t == "topic_deletion_halted" and ev.topic:
        out.append(F.TopicDeletionHalted(ts, r, topic=ev.topic, reason=d.get("reason")))
    elif t == "replica_state_change" and tp is not None and ev.subject_broker is not None and (
            ev.to_state in ("OnlineReplica", "NewReplica", "NonExistentReplica")
            or ev.to_state == "OfflineReplica" and ev.from_state == "ReplicaDeletionIneligible"):
        # The controller's replica state machine (ReplicaStateMachine.handleStateChange logs every transition to
        # state-change.log). 2.3.0+ startup (a failover): initializeReplicaState puts a replica the controller does
        # not hold online (broker dead, log dir offline) in ReplicaDeletionIneligible, then moves it to
        # OfflineReplica before the partition state machine elects; the other ways into OfflineReplica (a broker
        # failing, shutting down, a topic deleted) say nothing a BrokerChange line would not. A replica moved to
        # OnlineReplica (live), NewReplica or NonExistentReplica (a new or deleted partition) is no longer held so.
        # (TopicDeletionManager moves ineligible replicas of a topic being deleted to OfflineReplica again when
        # their broker returns: the replay skips partitions it holds in deletion.)
        b = int(ev.subject_broker)
        if ev.to_state == "OfflineReplica":
            out.append(F.ReplicasOffline(ts, r, broker=b, tps=(tp,), cause="failover"))
        else:
            out.append(F.ReplicasOnline(ts, r, broker=b, tps=(tp,)))
        out.extend(ev_only(t, b, tp))
    elif t == "log_dir_failure" and d.get("side") == "controller" and ev.subject_broker is not None \
            and _tp_list(d.get("partitions")):
        out.append(F.ReplicasOffline(ts, r, broker=int(ev.subject_broker), tps=_tp_list(d.get("partitions"))))
    elif t == "broker_fatal_error" and d.get("halt") and (ev.subject_broker is not None or ev.broker_id is not None):
        # A line Kafka writes just before Exit.halt / Runtime.halt (e.g. 1.0+ LogManager.handleLogDirFailure when
        # the last log directory failed; templates/fatal.py names each). The process is gone at this line; no
        # shutdown hook ran, so its ZooKeeper session lives on until it expires.
        b = int(ev.subject_broker if ev.subject_broker is not None else ev.broker_id)
        out.append(F.BrokerStopped(ts, r, broker=b))
        out.extend(ev_only(t, b))
    elif t == "broker_config":
        out.append(F.BrokerConfig(ts, r, broker=ev.subject_broker, config=dict(d.get("config") or {}), static=True))
    elif t == "kafka_version" and d.get("version"):
        out.append(F.KafkaVersion(ts, r, version=str(d["version"])))
    elif t in ("partition_state_observed", "leader_and_isr_received", "become_leader", "become_follower") and tp is not None:
        leader = ev.leader
        if t == "become_leader" and leader is None:
            leader = ev.broker_id
        out.append(F.ObservedState(ts, r, tp=tp, leader=leader, isr=_t(ev.isr), leader_epoch=ev.leader_epoch,
                                   controller_epoch=ev.controller_epoch, zk_version=ev.zk_version,
                                   replicas=_t(ev.replicas), state=ev.to_state,
                                   initial=d.get("via") == "controller_startup",
                                   ar_in_order=d.get("via") == "controller_assignment",
                                   sender_epoch=_sender_epoch(ev), sending=d.get("via") == "update_metadata_sent",
                                   recipients=_t(d.get("recipients")) if d.get("via") == "update_metadata_sent" else None))
    elif t == "unclean_leader_election" and tp is not None and ev.leader is not None:
        out.extend(ev_only(t, int(ev.leader), tp))  # the broker elected out of sync
    else:
        out.extend(ev_only(t, ev.subject_broker if ev.subject_broker is not None else ev.broker_id, tp))
    return out


def _sender_epoch(ev: Event) -> int | None:
    """The epoch of the controller that sent the request a line states (None for other lines)."""
    d = ev.detail or {}
    if ev.event_type == "leader_and_isr_received" and ev.controller_id is not None:
        return ev.controller_epoch
    if ev.event_type == "partition_state_observed" and d.get("via") == "update_metadata_sent":
        return d.get("sender_epoch")
    return None


def _zk_facts(evs: list[Event]) -> list[F.Fact]:
    """ZooKeeper events of one zxid (a multi may hold several) -> facts."""
    out: list[F.Fact] = []
    by_type: dict[str, list[Event]] = {}
    for ev in evs:
        by_type.setdefault(ev.event_type, []).append(ev)
    elected = by_type.get("controller_znode_created", [])
    epoch_set = by_type.get("controller_epoch_set", [])
    for ev in elected:
        epoch = epoch_set[0].controller_epoch if epoch_set else None
        out.append(F.ControllerElected(ev.ts or 0, ref_of(ev), controller=int(ev.controller_id), epoch=epoch))
    for ev in evs:
        t, ts, r, d, tp = ev.event_type, ev.ts or 0, ref_of(ev), ev.detail or {}, _tp(ev)
        if t in ("controller_znode_created", "controller_epoch_set", "zk_txn", "zk_session_created"):
            continue
        if t == "broker_registered" and ev.subject_broker is not None:
            out.append(F.BrokerUp(ts, r, broker=int(ev.subject_broker), epoch=d.get("broker_epoch"), via="zk_create"))
        elif t == "broker_deregistered" and ev.subject_broker is not None:
            out.append(F.BrokerDown(ts, r, broker=int(ev.subject_broker), cause=d.get("cause", "deleted")))
        elif t == "controller_znode_deleted":
            out.append(F.ControllerGone(ts, r, controller=ev.controller_id, cause=d.get("cause", "deleted")))
        elif t == "partition_state_written" and tp is not None:
            writer = d.get("writer")
            if writer is None and "conditional" in d:
                writer = "controller" if d["conditional"] else "leader"
            if writer == "leader":
                out.append(F.LeaderIsrChange(ts, r, tp=tp, leader=ev.leader, isr=_t(ev.isr) or (),
                                             leader_epoch=ev.leader_epoch, zk_version=ev.zk_version))
            else:
                out.append(F.RecordedState(ts, r, tp=tp, kind="write", leader=ev.leader, isr=_t(ev.isr),
                                           leader_epoch=ev.leader_epoch, controller_epoch=ev.controller_epoch,
                                           zk_version=ev.zk_version, created=bool(d.get("created"))))
        elif t == "topic_assignment_written" and ev.topic:
            asg = d.get("assignment") or {}
            out.append(F.TopicAssignment(ts, r, topic=ev.topic, assignment={int(k): _t(v) for k, v in asg.items()},
                                         adding={int(k): _t(v) for k, v in (d.get("adding") or {}).items()},
                                         removing={int(k): _t(v) for k, v in (d.get("removing") or {}).items()}))
        elif t == "topic_deleted" and ev.topic:
            out.append(F.TopicGone(ts, r, topic=ev.topic))
        elif t == "topic_config_written" and ev.topic:
            out.append(F.TopicConfig(ts, r, topic=ev.topic, config=dict(d.get("config") or {})))
        elif t == "broker_config_written":
            out.append(F.BrokerConfig(ts, r, broker=ev.subject_broker, config=dict(d.get("config") or {}), static=False))
        elif t == "reassignment_requested":
            targets = {}
            for p in d.get("partitions") or []:
                if isinstance(p, dict) and "replicas" in p:
                    targets[(p["topic"], int(p["partition"]))] = _t(p["replicas"])
            out.append(F.ReassignmentRequest(ts, r, targets=targets))
        elif t == "preferred_election_requested":
            tps = _tp_list(d.get("partitions") or [])
            out.append(F.PreferredElectionRequest(ts, r, tps=tps or None, trigger="admin"))
        elif t == "topic_deletion_requested" and ev.topic:
            out.append(F.TopicDeletionRequest(ts, r, topic=ev.topic))
        else:
            out.append(F.Evidence(ts, r, kind=t, broker=ev.subject_broker, tp=tp))
    return out


def _snapshot_facts(ev: Event) -> list[F.Fact]:
    """Snapshot nodes and znode dumps: the state as it stood (observations)."""
    t, ts, r, d, tp = ev.event_type, ev.ts or 0, ref_of(ev), ev.detail or {}, _tp(ev)
    if d.get("deleted"):  # a capture's watch saw the znode go
        if t == "broker_observed" and ev.subject_broker is not None:
            # the ephemeral registration vanished: its session ended (expired or closed, the watch cannot tell)
            return [F.BrokerDown(ts, r, broker=int(ev.subject_broker), cause="deleted")]
        if t == "controller_observed":
            return [F.ControllerGone(ts, r, controller=None, cause="deleted")]
        if t == "topic_assignment_observed" and ev.topic:
            return [F.TopicGone(ts, r, topic=ev.topic)]
        return [F.Evidence(ts, r, kind=t, broker=ev.subject_broker, tp=tp)]
    if t in ("partition_state_written", "partition_state_observed") and tp is not None:
        return [F.ObservedState(ts, r, tp=tp, leader=ev.leader, isr=_t(ev.isr), leader_epoch=ev.leader_epoch,
                                controller_epoch=ev.controller_epoch, zk_version=ev.zk_version, state=ev.to_state)]
    if t in ("topic_assignment_written", "topic_assignment_observed") and ev.topic:
        asg = d.get("assignment") or {}
        return [F.TopicAssignment(ts, r, topic=ev.topic, assignment={int(k): _t(v) for k, v in asg.items()})]
    if t in ("topic_config_written", "topic_config_observed") and ev.topic:
        return [F.TopicConfig(ts, r, topic=ev.topic, config=dict(d.get("config") or {}))]
    if t in ("broker_registered", "broker_observed") and ev.subject_broker is not None:
        return [F.BrokerUp(ts, r, broker=int(ev.subject_broker), epoch=d.get("broker_epoch"), via=t)]
    if t in ("controller_znode_created", "controller_observed") and ev.controller_id is not None and ev.controller_id >= 0:
        return [F.ControllerElected(ts, r, controller=int(ev.controller_id), epoch=ev.controller_epoch)]
    return [F.Evidence(ts, r, kind=t, broker=ev.subject_broker, tp=tp)]


def _covered_hole_facts(holes: list, zk_events: list[Event], snap_trees: list[Event],
                        snap_facts: list[F.Fact]) -> list[F.Fact]:
    """A fact where each covered hole begins (just after the last transaction held before it); the snapshot's
    nodes changed inside the hole, stamped with their own times, are moved to no earlier than that."""
    out: list[F.Fact] = []
    for h in holes:
        last = max((e for e in zk_events if e.zxid is not None and e.zxid <= h.after), key=lambda e: e.zxid,
                   default=None)
        ts = (last.ts or 0) + 1 if last is not None else (h.at.ts or 0)
        end = end_state(h, snap_trees, zk_events)
        # cited as the next log (where the numbering shows the hole), dated where the hole begins
        out.append(F.ZkHole(ts, replace(ref_of(h.at), ts=ts), after=h.after, before=h.before, snapshot=h.snapshot,
                            keep=end.keep, assigned=end.assigned, members=end.members, anew=end.anew))
        for f in snap_facts:
            z = f.ref.zxid
            if z is not None and h.after < z < h.before and f.ts < ts:
                f.ts = ts
    return out


def _log_key(f: F.Fact) -> tuple:
    r = f.ref
    return (f.ts, r.broker if r.broker is not None else -1, r.source_file or "", r.source_pos or 0)


def event_log_key(ev: Event) -> tuple:
    """``_log_key`` of every fact a log event gives (each is stamped ``ev.ts or 0`` and cites the event's line)."""
    b = ev.broker_id
    return (ev.ts or 0, b if b is not None else -1, ev.source_file or "", ev.source_pos or 0)


def logs_stream_key(f: F.Fact) -> tuple:
    """Where a fact of a stream with no ZooKeeper transactions stands, comparable with ``event_log_key``: the facts
    of snapshots and dumps (``order`` (ts, 0, i)) go before the log facts of their time, as ``build_facts`` merges."""
    return (f.ts, -2, "", 0) if f.order and f.order[1] == 0 else _log_key(f)


def build_facts(events: Iterable[Event], context: ClusterContext | None = None,
                paths: Iterable[str] | None = None) -> FactStream:
    """Events of ONE cluster -> facts in replay order (``context``: the whole cluster's, for a shard; ``paths``:
    every file of the cluster's evidence, when ``events`` are a part of it, for the release its directory names)."""
    from parsers.zookeeper.events import link_sessions

    events = list(events)
    ctx = context if context is not None else cluster_context(events)
    # Facts that span ZooKeeper files (which session registered which broker, duplicates across
    # ensemble copies and snapshots) are settled first, over all of the cluster's ZooKeeper events.
    zk_all = [e for e in events if e.source_kind in ("zk_txnlog", "zk_snapshot")]
    # a snapshot's whole tree, before its nodes are merged with the txns that wrote them (covered holes read it)
    snap_trees = [e for e in zk_all if e.source_kind == "zk_snapshot"]
    if zk_all:
        events = link_sessions(zk_all) + [e for e in events if e.source_kind not in ("zk_txnlog", "zk_snapshot")]
    zk_events: list[Event] = []
    snap_events: list[Event] = []
    log_events: list[Event] = []
    version = None
    for ev in events:
        if ev.source_kind in ZK_KINDS:
            zk_events.append(ev)
        elif ev.source_kind in SNAPSHOT_KINDS:
            snap_events.append(ev)
        elif ev.source_kind in LOG_KINDS:
            log_events.append(ev)
        if ev.event_type == "kafka_version" and ev.detail and not version:
            version = ev.detail.get("version")

    notes: list[str] = []
    version_source = None
    if not version:
        version = version_from_paths(sorted(set(paths) if paths is not None else
                                            {ev.source_file for ev in events if ev.source_file}))
        if version:
            version_source = f"file names (Kafka distribution directory kafka_*-{version})"
    coverage = Coverage()
    zk_window = ctx.zk_window
    if zk_window is not None:
        coverage.zk.append(zk_window)
    # Transactions no file holds (a txn log lost between two others): told at the first transaction after each.
    spans = [e for e in zk_events if e.event_type == "zk_txnlog_span"]
    zk_events = [e for e in zk_events if e.event_type != "zk_txnlog_span"]
    snap_zxids = sorted({int(e.detail["snapshot_zxid"]) for e in snap_events
                         if e.detail and e.detail.get("snapshot_zxid") is not None})
    holes = find_holes(spans, snap_zxids)
    # ZooKeeper: zxid order; copies of one zxid (several servers, overlapping files) count once.
    zk_events.sort(key=lambda e: (e.zxid if e.zxid is not None else -1, e.source_sub or 0, e.source_file or ""))
    seen: set[tuple] = set()
    zk_facts: list[F.Fact] = []
    group: list[Event] = []
    cur = None
    holes.sort(key=lambda h: h.before)
    # A hole a snapshot covers is told where it begins, the snapshot's nodes changed inside it following.
    covered = [h for h in holes if h.snapshot is not None]
    holes = [h for h in holes if h.snapshot is None]
    hi = 0
    for ev in zk_events:
        key = (ev.zxid, ev.event_type, ev.source_sub, ev.topic, ev.partition, ev.subject_broker)
        if key in seen:
            continue
        seen.add(key)
        if ev.zxid != cur and group:
            zk_facts.extend(_zk_facts(group))
            group = []
        while hi < len(holes) and ev.zxid is not None and ev.zxid >= holes[hi].before:
            h = holes[hi]
            hi += 1
            zk_facts.append(F.ZkHole(h.at.ts or ev.ts or 0, ref_of(h.at), after=h.after, before=h.before))
        cur = ev.zxid
        group.append(ev)
    if group:
        zk_facts.extend(_zk_facts(group))

    # Snapshots/dumps describe state already reached: they go first at their own time, unless a txn of
    # the same zxid is already in the stream (then the txn says it, with its context).
    zk_zxids = {e.zxid for e in zk_events if e.zxid is not None}
    snap_facts: list[F.Fact] = []
    for ev in snap_events:
        if ev.zxid is not None and ev.zxid in zk_zxids:
            continue
        snap_facts.extend(_snapshot_facts(ev))
    # A binary snapshot holds ZooKeeper's whole tree, /brokers/ids included: the membership is known from it on.
    firsts: dict[str, Event] = {}
    for ev in snap_events:
        if ev.source_kind == "zk_snapshot" and ev.ts is not None and (
                ev.source_file not in firsts or ev.ts < firsts[ev.source_file].ts):
            firsts[ev.source_file] = ev
    snap_facts[:0] = [F.Evidence(ev.ts, ref_of(ev), kind="zk_snapshot_taken") for _, ev in sorted(firsts.items())]
    snap_facts[:0] = _covered_hole_facts(covered, zk_events, snap_trees, snap_facts)
    for i, f in enumerate(snap_facts):
        f.order = (f.ts, 0, i)

    log_facts: list[F.Fact] = []
    session_ends = shutdown_session_ends(log_events)
    for ev in log_events:
        authoritative = not _in_window(ev.ts, zk_window)
        b = session_ends.get((ev.source_file, ev.source_pos)) if authoritative else None
        if b is not None:
            # a broker's word about itself: the controller's own log, where present, tells when it learnt
            log_facts.append(F.BrokerDown(ev.ts or 0, ref_of(ev), broker=b, cause="shutdown", view="self"))
        log_facts.extend(log_event_facts(ev, authoritative))
    for (kind, b), (a, z) in sorted(ctx.log_windows.items()):
        getattr(coverage, kind).setdefault(b, []).append((a, z))
    log_facts.sort(key=_log_key)

    for i, f in enumerate(zk_facts):
        f.order = (f.ts, 1, i)
    for i, f in enumerate(log_facts):
        f.order = (f.ts, 2, i)
    merged = list(heapq.merge(sorted(snap_facts, key=lambda f: f.order), zk_facts, log_facts, key=lambda f: f.ts))
    mode = "zk" if ctx.zk else "logs"
    if mode == "logs":
        notes.append("no ZooKeeper transaction log given: broker membership and controller tenure come from the "
                     "broker logs, and what they do not say stays unknown")
    return FactStream(
        facts=merged,
        mode=mode,
        coverage=coverage,
        kafka_version=version,
        trace_start=ctx.trace_start,
        trace_end=ctx.trace_end,
        zk_window=zk_window,
        notes=notes,
        kafka_version_source=version_source,
    )
