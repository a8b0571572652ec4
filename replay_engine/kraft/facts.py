"""KRaft events -> replay facts, in the order the KRaft replay consumes them (parallel to ``from_events.py``).

The metadata log and the KRaft log lines say the same things ZooKeeper-mode evidence says, in other words: a
fence, an unregistration or a heartbeat timeout takes a broker out (``BrokerDown`` with that cause, as a session
expiry is ``BrokerDown`` with its own); an unfence or a registration brings it back (``BrokerUp``); a
ConfigRecord is a topic's or the cluster's dynamic config; a broker's "starts at leader epoch" line is an
``ObservedState``. KRaft-only meanings (a registration's epoch and fence, a topic id, a feature level, a
partition epoch and ELR) have their own facts in ``facts.py``.

What crosses partitions (which lines are history, which records were rolled back, topic names, which broker
event a metadata record was written for, where the metadata log's records begin) is settled over all of the cluster's events in
``kraft_pass``; echoes are matched here. A fact carries what its handler needs, so the replay never reads an
event. A partition shard converts its own partitions' events and every cluster-wide one, with phase 1's
``KraftPass`` (``cut``).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

from parsers.schema import Event
from replay_engine.common import facts as F
from replay_engine.zk.from_events import ClusterContext, ref_of
from replay_engine.kraft.evidence import previous_registration
from replay_engine.kraft.context import (KraftPass, echo_lines, event_key, in_bursts, is_replay_line, kraft_context,
                                      kraft_pass, metadata_log, order_key, ordered)

KRAFT_TYPES = frozenset({"partition_record", "partition_change", "topic_record", "topic_removed", "kraft_leader_change",
                         "broker_fenced", "broker_unfenced", "broker_registration_change", "broker_unregistered",
                         "broker_heartbeat_timeout", "feature_level", "config_record", "metadata_record"})
ZK_CONTROLLER_TYPES = frozenset({"controller_elected", "partition_state_change", "zk_txn", "partition_state_written",
                                 "broker_failed"})

_OBSERVED_LINES = {"become_leader": "leader", "become_follower": "follower", "leader_and_isr_received": None}


def is_kraft(events: list[Event]) -> bool:
    """KRaft evidence and no ZooKeeper-mode controller activity."""
    return is_kraft_counts(Counter(e.event_type for e in events))


def is_kraft_counts(counts: dict[str, int]) -> bool:
    """The same decision from event counts by type (what Spark aggregates per cluster)."""
    kraft = sum(n for t, n in counts.items() if t in KRAFT_TYPES and t != "metadata_record")
    zk = sum(n for t, n in counts.items() if t in ZK_CONTROLLER_TYPES)
    return kraft > 0 and kraft >= zk


@dataclass
class KraftStream:
    facts: list[F.Fact]
    holes: list[tuple[int, int, int, int]] = field(default_factory=list)  # stretches the evidence lost
    findings: list[dict[str, Any]] = field(default_factory=list)  # records a renounce rolled back, and why
    began: int | None = None  # the time of the evidence's first line
    # first and last time a quorum controller's own line or a metadata log record is in the evidence: where the
    # controller's view of fenced and shutting-down brokers is known
    controller_view: tuple[int, int] | None = None


def prepared(events: list[Event], ctx: ClusterContext | None = None) -> tuple[list[Event], ClusterContext]:
    """One cluster's events in the KRaft replay's order (``kraft_pass.ordered``), and the whole cluster's
    context (``ctx``, else that of these events)."""
    ctx = ctx if ctx is not None else kraft_context(events)
    return ordered(events, ctx.writers), ctx


def kraft_facts(events: list[Event], version: tuple[int, ...] | None = None, kpass: KraftPass | None = None,
                ctx: ClusterContext | None = None, keep_tp: Callable[[F.TP], bool] | None = None) -> KraftStream:
    """Events of ONE cluster, in ``prepared`` order -> the facts the KRaft replay runs over, in the same order.
    ``version``: the Kafka version whose rules say which records a renounce rolled back; ``ctx`` and ``kpass``:
    what the whole cluster says (``kraft_pass``), by default of these events; ``keep_tp``: a shard's partitions
    (``cut``)."""
    ctx = ctx if ctx is not None else kraft_context(events)
    replay_lines = [is_replay_line(e) for e in events]  # each line's test, read by the passes below alike
    if kpass is None:
        kpass = kraft_pass(events, version, ctx.writers, replay_lines)
    history = in_bursts(kpass.bursts)
    echoes = echo_lines(events, replay_lines)
    names = dict(ctx.topic_ids)
    steps = kpass.broker_events
    skip = kpass.skip
    records_from, order = kpass.records_from, order_key(ctx.writers)
    out: list[F.Fact] = []
    quorum_leader: tuple | None = None  # (controller, epoch) as last stated
    loading: dict[int, tuple[int, int]] = {}  # controller -> (offset, quorum epoch) of the snapshot it is loading
    for i, ev in enumerate(events):
        if records_from is not None and order(ev) >= records_from:
            # from the metadata log's first partition record on, the records say every decision: in every shard
            out.append(F.MetadataLogBegins(records_from[0], F.Ref(records_from[0], "metadata_log_begins",
                                                                  records_from[4] or None, records_from[2], "")))
            records_from = None
        if ev.event_type == "kraft_snapshot_load" and ev.controller_id is not None:
            d = ev.detail or {}
            if d.get("phase") == "start":
                loading[ev.controller_id] = (int(d["loaded_offset"]), int(d["loaded_epoch"]))
            else:
                loading.pop(ev.controller_id, None)
        if skip and event_key(ev) in skip:
            continue  # rolled back by the controller's renounce, or appended and never committed: not replayed
        if i in echoes:
            continue
        if history(ev, replay_lines[i]):
            # the state it describes, not something that just happened (as of the snapshot being loaded, if one is)
            out.extend(_restated(ev, names, loading.get(ev.controller_id if ev.controller_id is not None
                                                        else ev.broker_id)))
        elif ev.event_type == "kraft_leader_change":
            # every voter logs each change of quorum leader: a statement of what is already known is no news
            c, epoch = ev.controller_id, ev.controller_epoch
            if c is not None and c >= 0:
                if quorum_leader is None or quorum_leader[0] != c or (epoch is not None and quorum_leader[1] != epoch):
                    out.append(F.ControllerElected(ev.ts or 0, ref_of(ev), controller=c, epoch=epoch))
                    quorum_leader = (c, epoch)
            elif quorum_leader is not None:
                out.append(F.ControllerGone(ev.ts or 0, ref_of(ev), controller=c, cause="renounced"))
                quorum_leader = None
        elif ev.event_type == "kraft_renounce_on_error":
            # the active controller renounced after a failed write: its tenure ends (if it is the one in office)
            c = (ev.detail or {}).get("renounced_by")
            if quorum_leader is not None and quorum_leader[0] == c:
                out.append(F.ControllerGone(ev.ts or 0, ref_of(ev), controller=c, cause="renounced_on_error"))
                quorum_leader = None
        elif ev.event_type == "partition_record" and ev.source_kind != "kraft_metadata":
            out.extend(_partition_record(ev, names, steps, live=kpass.writing(ev)))
        else:
            convert = _CONVERT.get(ev.event_type)
            if convert is not None:
                out.extend(convert(ev, names, steps))
            else:
                # evidence is indexed by the broker or partition it names: a line naming neither explains nothing
                tp = _tp(ev, names) if ev.partition is not None else None
                if ev.subject_broker is not None or tp is not None:
                    out.append(F.Evidence(ev.ts or 0, ref_of(ev), kind=ev.event_type, broker=ev.subject_broker, tp=tp))
    if keep_tp is not None:
        out = cut(out, keep_tp, kpass.liveness)
    return KraftStream(out, list(kpass.holes), [dict(f) for f in kpass.findings], ctx.trace_start, ctx.controller_view)


def liveness_key(f: F.ObservedState) -> tuple:
    return (f.ref.source_file, f.ref.source_pos, f.ref.event, f.tp)


def cut(facts: list[F.Fact], keep_tp: Callable[[F.TP], bool], liveness: frozenset | None) -> list[F.Fact]:
    """A shard's facts: the cluster-wide ones, and of the partition facts its own. Of another shard's partition
    there stays what it says of a broker: a line's evidence about it, and a leader shown active (``liveness``:
    the keys phase 1 expects to, or None in phase 1 itself, which takes every leader's own line as a candidate)."""
    out: list[F.Fact] = []
    for f in facts:
        tp = getattr(f, "tp", None)
        if tp is None or keep_tp(tp):
            out.append(f)
        elif isinstance(f, F.Evidence):
            if f.broker is not None:
                out.append(replace(f, tp=None))
        elif isinstance(f, F.ObservedState) and not f.initial and f.leader is not None:
            if liveness is None:
                if f.became == "leader" and f.ref.broker == f.leader:
                    out.append(F.LeaderActiveHint(f.ts, f.ref, leader=f.leader, key=liveness_key(f), candidate=True))
            elif liveness_key(f) in liveness:
                out.append(F.LeaderActiveHint(f.ts, f.ref, leader=f.leader, key=liveness_key(f)))
    return out


def _tp(ev: Event, names: dict[str, str]) -> F.TP | None:
    tid = (ev.detail or {}).get("topic_id")
    topic = ev.topic or names.get(tid or "") or (f"topic-id:{tid}" if tid else None)
    if topic is None or ev.partition is None:
        return None
    return (topic, int(ev.partition))


def _t(xs) -> tuple[int, ...] | None:
    return None if xs is None else tuple(xs)


def _named(ev: Event, names: dict[str, str]) -> list[F.Fact]:
    tid = (ev.detail or {}).get("topic_id")
    if not (tid and ev.topic):
        return []
    names[tid] = ev.topic
    return [F.TopicNamed(ev.ts or 0, ref_of(ev), topic=ev.topic, topic_id=tid)]


def _restated(ev: Event, names: dict[str, str], snapshot: tuple[int, int] | None = None) -> list[F.Fact]:
    """A line of a controller's start-up burst: what it re-states is observed, the rest says nothing new.
    ``snapshot``: (offset, quorum epoch) of the snapshot the controller is loading, which the registration dates from."""
    t, ts = ev.event_type, ev.ts or 0
    if t in ("topic_record", "topic_created"):
        # names the topic's id for the lines after it; an incarnation the log replays is no news of one created now
        _named(ev, names)
        return []
    if t == "feature_level":
        # a feature level the log holds is in force from its record on: the rules it switches on apply from here
        return _feature_level(ev, names, None)
    if t == "broker_registered" and ev.subject_broker is not None:
        return [F.BrokerRegistrationObserved(ts, ref_of(ev), broker=ev.subject_broker,
                                             epoch=(ev.detail or {}).get("broker_epoch"))]
    if t == "partition_record":
        tp = _tp(ev, names)
        if tp is not None and ev.replicas:
            return [F.ObservedState(ts, ref_of(ev), tp=tp, leader=ev.leader, isr=_t(ev.isr),
                                    leader_epoch=ev.leader_epoch, zk_version=ev.zk_version,
                                    replicas=_t(ev.replicas), initial=True, snapshot=snapshot,
                                    topic_id=(ev.detail or {}).get("topic_id"))]
    if t in ("partition_change", "unclean_leader_election") and (ev.detail or {}).get("via") == "log":
        # a change the controller replays from its log as it starts (4.x PartitionRegistration.maybeLogPartitionChange
        # from ReplicationControlManager.replay): a record written before this line, judged as such
        convert = _unclean_line if t == "unclean_leader_election" else _partition_change
        return convert(ev, names, {}, restated=True)
    return []


def _membership_of(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    return [] if ev.subject_broker is None else _membership(ev, ev.subject_broker)


def _topic_record(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    return _named(ev, names)


def _topic_removed(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    topic = ev.topic or names.get((ev.detail or {}).get("topic_id") or "")
    return [] if topic is None else [F.TopicGone(ev.ts or 0, ref_of(ev), topic=topic)]


def _topic_line(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    """A quorum controller's "Replayed TopicRecord for topic T with topic ID I" / "Created topic ..." (3.3 .. 4.x
    ReplicationControlManager.replay(TopicRecord)) and "Replayed RemoveTopicRecord ...": the record, as logged."""
    if not (ev.detail or {}).get("topic_id"):
        return []  # a ZooKeeper-mode controller's topic line: no incarnation named
    return _named(ev, names) if ev.event_type == "topic_created" else _topic_removed(ev, names, steps)


def _feature_level(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    d = ev.detail or {}
    return [F.FeatureLevel(ev.ts or 0, ref_of(ev), name=d.get("name"), level=d.get("level"))]


def _broker_config(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    if ev.subject_broker is None:
        return []
    return [F.BrokerConfig(ev.ts or 0, ref_of(ev), broker=ev.subject_broker,
                           config=dict((ev.detail or {}).get("config") or {}))]


def _kafka_version(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    return [F.KafkaVersion(ev.ts or 0, ref_of(ev), version=(ev.detail or {}).get("version"))]


def _isr_updated(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    """The leader's AlterPartition, accepted by the controller: the leader changed the ISR, as in ZooKeeper mode."""
    tp = _tp(ev, names)
    if tp is None or ev.isr is None:
        return []
    return [F.LeaderIsrChange(ev.ts or 0, ref_of(ev), tp=tp,
                              leader=None if (ev.detail or {}).get("side") == "controller" else ev.broker_id,
                              isr=_t(ev.isr), zk_version=ev.zk_version)]


def _membership(ev: Event, b: int) -> list[F.Fact]:
    t, ts, d, r = ev.event_type, ev.ts or 0, ev.detail or {}, ref_of(ev)
    self_view = "self" if d.get("side") == "broker" or d.get("via") == "broker_self" else "controller"
    if t == "broker_registered":
        stated = d.get("via") == "kraft_record" or d.get("fenced") is not None
        return [F.BrokerRegistered(ts, r, broker=b, epoch=d.get("broker_epoch"), via=d.get("via") or "",
                                   view=self_view, fenced=bool(d.get("fenced", True)) if stated else None,
                                   incarnation=d.get("incarnation_id"))]
    if t == "broker_unregistered":
        return [F.BrokerDown(ts, r, broker=b, cause="unregistered", view="controller")]
    if t == "broker_unclean_shutdown":
        return [F.BrokerUncleanShutdown(ts, r, broker=b)]
    if t == "broker_fenced":
        return [F.BrokerDown(ts, r, broker=b, cause="fenced", view="controller")]
    if t == "broker_heartbeat_timeout":
        return [F.BrokerDown(ts, r, broker=b, cause="heartbeat_timeout", view="controller")]
    if t == "broker_unfenced":
        return [F.BrokerUp(ts, r, broker=b, epoch=d.get("broker_epoch"), via="unfenced", view=self_view)]
    if t == "controlled_shutdown_result" and d.get("side") == "controller":
        # "The request from broker N to shut down has been granted since the lowest active offset ...": the broker's
        # next state is SHUTDOWN_NOW, which ReplicationControlManager.processBrokerHeartbeat handles as a fence
        # (3.5.1 .. 3.9.0-rc3 BrokerHeartbeatManager.calculateNextBrokerState, handleBrokerFenced)
        return [F.BrokerDown(ts, r, broker=b, cause="fenced", view="controller")]
    if t == "controlled_shutdown_requested":
        # the controller's grant; the broker's own "Beginning controlled shutdown" asks, it decides nothing
        if d.get("side") != "controller":
            return []
        if d.get("immediate"):
            # "Unfenced broker N has requested and been granted an immediate shutdown": with no leadership to move the
            # next state is SHUTDOWN_NOW, not CONTROLLED_SHUTDOWN, which processBrokerHeartbeat handles as a fence; the
            # registration is never in controlled shutdown (3.3.1 .. 3.9.0-rc3 BrokerHeartbeatManager
            # .calculateNextBrokerState, ReplicationControlManager.processBrokerHeartbeat -> handleBrokerFenced)
            return [F.BrokerDown(ts, r, broker=b, cause="shutdown", view="controller")]
        return [F.ControlledShutdownRequest(ts, r, broker=b)]
    out: list[F.Fact] = []  # a BrokerRegistrationChangeRecord: a fence, an unfence and / or a controlled shutdown
    if d.get("fenced") == 1:
        out.append(F.BrokerDown(ts, r, broker=b, cause="fenced", view="controller"))
    elif d.get("fenced") == -1:
        out.append(F.BrokerUp(ts, r, broker=b, epoch=d.get("broker_epoch"), via="unfenced", view="controller"))
    if d.get("in_controlled_shutdown") == 1:
        out.append(F.ControlledShutdownRequest(ts, r, broker=b))
    return out


def _config(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    """A ConfigRecord sets (or, with no value, removes) one key of a topic's or the cluster's dynamic config."""
    d = ev.detail or {}
    name, value = d.get("name"), d.get("value")
    if name is None:
        return []
    rtype = str(d.get("resource_type") or "")
    entry = {name: None if value is None else str(value)}
    if rtype in ("2", "TOPIC", "topic") and ev.topic:
        return [F.TopicConfig(ev.ts or 0, ref_of(ev), topic=ev.topic, config=entry)]
    if rtype in ("4", "BROKER", "broker") and not d.get("resource_name"):
        return [F.BrokerConfig(ev.ts or 0, ref_of(ev), broker=None, config=entry, static=False)]
    return []


def _partition_record(ev: Event, names: dict[str, str], steps, live: bool = False) -> list[F.Fact]:
    """A PartitionRecord. Of a line, a creation only when the active controller logged it (``live``): it replays each
    record as it writes it ("Replayed PartitionRecord for new partition ...", 3.9.0-rc3 ReplicationControlManager
    .replay; QuorumController.QuorumMetaLogListener.handleCommit does not replay its own records again); any other
    node's line, or one logged before its writer became active, restates a registration."""
    tp = _tp(ev, names)
    if tp is None:
        return []
    d = ev.detail or {}
    metadata = ev.source_kind == "kraft_metadata"
    return [F.PartitionRegistration(ev.ts or 0, ref_of(ev), tp=tp, leader=ev.leader, isr=_t(ev.isr),
                                    leader_epoch=ev.leader_epoch, zk_version=ev.zk_version,
                                    controller_epoch=ev.controller_epoch, replicas=_t(ev.replicas),
                                    kind="new_partition", elr=_t(d.get("elr")), last_known_elr=_t(d.get("last_known_elr")),
                                    metadata_log=metadata,
                                    snapshot=d.get("snapshot_offset") is not None or not (metadata or live),
                                    topic_id=d.get("topic_id"))]


def _partition_change(ev: Event, names: dict[str, str], steps: dict[tuple[str, int], tuple],
                      changed: Iterable[str] | None = None, restated: bool = False) -> list[F.Fact]:
    """``changed``: the fields the record changed, where the event does not say (else its ``changed``); ``restated``:
    a controller replaying its log as it starts logged it (``_restated``)."""
    tp = _tp(ev, names)
    if tp is None:
        return []
    d = ev.detail or {}
    metadata = ev.source_kind == "kraft_metadata"
    events = steps.get((metadata_log(ev), ev.source_pos), ()) if metadata and d.get("snapshot_offset") is None else ()
    return [F.PartitionChange(ev.ts or 0, ref_of(ev), tp=tp, leader=ev.leader, isr=_t(ev.isr),
                              leader_epoch=ev.leader_epoch, zk_version=ev.zk_version,
                              controller_epoch=ev.controller_epoch, replicas=_t(ev.replicas),
                              changed=_changed(changed if changed is not None else d.get("changed") or ()),
                              elr=_t(d.get("elr")),
                              last_known_elr=_t(d.get("last_known_elr")), previous=previous_registration(d),
                              broker_events=events, metadata_log=metadata, topic_id=d.get("topic_id"),
                              restated=restated)]


_CHANGED: dict[tuple[str, ...], frozenset[str]] = {}


def _changed(names: Iterable[str]) -> frozenset[str]:
    """The fields a change names, as a set made once per combination (a cluster's changes name a few)."""
    key = tuple(names)
    got = _CHANGED.get(key)
    if got is None:
        got = _CHANGED[key] = frozenset(key)
    return got


def _unclean_line(ev: Event, names: dict[str, str], steps, restated: bool = False) -> list[F.Fact]:
    """A quorum controller's line of an election that was not clean: "UNCLEAN partition change for T-P with topic ID
    I: ..." (PartitionRegistration.maybeLogPartitionChange, INFO where the new leader was not in the ISR: 3.9.0-rc3,
    trunk) or "Setting new leader for topicId I, partition P to N using an unclean election" (PartitionChangeBuilder
    .tryElection): a partition change record, as logged."""
    d = ev.detail or {}
    if d.get("via") != "log" or not d.get("topic_id"):
        return []  # a ZooKeeper-mode controller's unclean election: not a KRaft record
    return _partition_change(ev, names, steps, ["leader"] if not d.get("changed") and ev.leader is not None else None,
                             restated)


def _observed(ev: Event, names: dict[str, str], steps) -> list[F.Fact]:
    """A broker says it became leader or follower (or received LeaderAndIsr): the decision as delivered."""
    tp = _tp(ev, names)
    if tp is None:
        return []
    became = _OBSERVED_LINES[ev.event_type]
    leader = ev.leader if ev.leader is not None else (ev.broker_id if became == "leader" else None)
    d = ev.detail or {}
    previous = (int(d["previous_leader"]), int(d["previous_leader_epoch"])) if became == "leader" \
        and d.get("previous_leader") is not None and d.get("previous_leader_epoch") is not None else None
    return [F.ObservedState(ev.ts or 0, ref_of(ev), tp=tp, leader=leader, isr=_t(ev.isr), leader_epoch=ev.leader_epoch,
                            controller_epoch=ev.controller_epoch, zk_version=ev.zk_version, replicas=_t(ev.replicas),
                            became=became, skipped=bool(d.get("skipped")), previous=previous,
                            topic_id=d.get("topic_id"))]


# Event type -> its facts; kraft_leader_change is settled in the loop, and any other type is evidence.
_CONVERT = {
    **dict.fromkeys(("broker_registered", "broker_unregistered", "broker_fenced", "broker_heartbeat_timeout",
                     "broker_unfenced", "broker_registration_change", "controlled_shutdown_requested",
                     "controlled_shutdown_result", "broker_unclean_shutdown"),
                    _membership_of),
    "topic_record": _topic_record,
    "topic_removed": _topic_removed,
    "topic_created": _topic_line,
    "topic_deleted": _topic_line,
    "config_record": _config,
    "feature_level": _feature_level,
    "broker_config": _broker_config,
    "kafka_version": _kafka_version,
    "partition_record": _partition_record,
    "partition_change": _partition_change,
    "unclean_leader_election": _unclean_line,
    "isr_updated": _isr_updated,
    **dict.fromkeys(_OBSERVED_LINES, _observed),
}
