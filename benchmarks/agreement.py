"""Agreement of the replay with the decisions the real controllers recorded: issue 44's measure.

Run from the repo root (``../shared`` beside the clone, or ``KAFKA_FORENSICS_SHARED``):

    .venv/bin/python benchmarks/agreement.py [--folder real_logs2] [--cluster NAME] [--detail] [--record]
    .venv/bin/python benchmarks/agreement_triage.py DIR    # DIR/INDEX.md and a file per cluster short of the goal

Every cluster of ``../shared/real_logs`` and ``../shared/real_logs2`` and every scenario of ``../shared/zk_real`` is
parsed in this process and replayed as ``kafka-forensics replay DIR`` replays it (the same order, the same copies of
a log entry dropped: ``forensics.pipeline.replay_order`` / ``drop_log_copies``). Per cluster:

- ``recorded``: the decisions the evidence records, counted from the parsed events and facts, not from the
  comparison code. ZooKeeper mode: every controller record of a leader/ISR decision (``RecordedState`` of kind
  election, new_partition, isr_removal, write) and every failed election (``RecordedFailedElection``). KRaft with a
  ``__cluster_metadata`` log: every ``PartitionRecord`` (not from a snapshot) and ``PartitionChangeRecord``, once
  per log offset (each voter's copy of the log, and a checkpoint, hold the same record at the same offset). KRaft
  lines: one decision per partition and leader epoch (for a change that moves no leader: per partition epoch) of
  one topic incarnation (a line naming the topic but not its id belongs to the incarnation whose id was named last
  before it, KIP-516), whichever lines state it -- the controller's ``Setting new leader ...`` / ``partition change
  ...`` / ``PartitionRecord`` lines and each broker's ``Leader|Follower ... starts at leader epoch N``; a broker restating
  an epoch at start-up states no new decision. Lines inside the span of a metadata log restate its records (a
  writer's lines read on the log's clock where one of them restates a PartitionRecord of the log: ``line_clocks``), and
  those a controller logs while loading a snapshot restate the snapshot's state: neither is a decision.
- ``compared``, ``agreed``, ``diverged``: recorded decisions the replay judged (agreed: every judged line of it).
  ``departures``: the judged-against ones the replay files as a ``rule_departure`` finding naming the rule row the
  record departs from (both modes: ``kraft.evidence.departure_findings``, ``judge.zk_departure_findings``);
  ``diverged`` counts the others (plain divergences). Both count against the measure.
- ``adopted``: broker states the replay adopted from a record (the record that implies the state is the
  provenance). Contract with the broker-state model (``replay_engine/common/brokers.py``): ``ReplayResult.broker_state``,
  its ``adopted`` (a sized collection) or else its ``changes`` that carry a ``rule`` (a state a record implies by
  that Kafka rule); without it, the findings of kind ``broker_state_adopted``; 0 until either exists.
- Unjudged decisions, by the reason the replay gives, split in three:
  - ``holes`` (the only kind that leaves the denominator): the decision lies in a hole of the evidence, which the
    reason names: ``history restarted`` (leader epoch or znode version went back: the topic or ZooKeeper's data was
    recreated where no line shows it), ``first record`` (no line before it states the partition's ISR or leader
    epoch: they were set before the evidence, or its new ZooKeeper data, begins), ``quorum epochs`` (KRaft epochs
    no line names, the reason naming them and their times), ``controller epochs`` (ZooKeeper mode's like: the
    partition's state changed in controller epochs in which no controller of the evidence took office);
  - ``contradicted``: filed by the replay as an evidence gap, but the replay held a state the cluster's own record
    contradicts, so it counts against (issue 44): ``state not shown`` (judge.GAP, "decided on a state the evidence
    does not show"), ``liveness`` (judge.liveness_reason, and KRaft's "whether broker(s) N were acceptable" and
    "leads at this epoch ... held fenced"), ``unclean default`` (judge.unclean_reason: the record shows which
    default of unclean.leader.election.enable held, a configuration, not missing lines), ``registration``
    (judge.unseen_reason: the record elects or registers a broker no line showed joining; the record shows it
    live);
  - ``uncompared``: every other reason (the replay could not re-derive the decision), and ``unaccounted``:
    recorded decisions the replay neither judged nor listed (should be 0).
- ``measure`` = agreed / (recorded - holes).
- ``moments`` / ``outside``: lines in which Kafka itself says a partition had no leader (``MOMENT_FAMILIES``,
  each cited), and those outside every leaderless interval the replay reports.
- ``unknown``: leaderless intervals whose replicas are known and whose cause is ``unknown``.

Only the replay's public surface is read (``replay_cluster``, ``ReplayResult``: comparisons, leaderless, image
findings, stream facts). ``--detail`` lists every divergence, uncompared, contradicted decision and moment
outside; ``--record`` replaces this table's section of ``benchmarks/journal/agreement.md``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from parsers.schema import iso_utc  # noqa: E402

SECTION = "## agreement on real clusters (issue 44's measure)"
SHARED = Path(os.environ.get("KAFKA_FORENSICS_SHARED", REPO.parent / "shared")).resolve()
FOLDERS = ("real_logs", "real_logs2")
OFFLINE = "OfflinePartition"
GOAL, FLOOR = 0.995, 0.97

# ------------------------------------------------------------------ reasons: hole, contradicted or uncompared

# (kind, test on the replay's reason). Order matters: the first match names the kind.
HOLES = (
    ("history restarted", lambda r: r.startswith("evidence gap (history restarted")),
    ("first record", lambda r: r.startswith("evidence gap (no line before the record states the partition's ISR")),
    ("quorum epochs", lambda r: r.startswith("evidence gap (") and "quorum epoch" in r and "in no line" in r),
    # ZooKeeper mode's like: controller epochs no line names (replay_engine.common.judge.epochs_hole)
    ("controller epochs", lambda r: r.startswith("evidence gap (controller epoch") and "in no line" in r),
)
CONTRADICTED = (
    # replay_engine.common.judge.ADOPTED: the replay held brokers eligible (or not) that the record shows the other way; it
    # adopts the record's state from there (``adopted``), and the record counts against it
    ("adopted", lambda r: r.startswith("state adopted from the record")),
    ("state not shown", lambda r: r.startswith("evidence gap (decided on a state the evidence does not show")),
    ("liveness", lambda r: r.startswith("evidence gap (") and (
        "were live to the controller" in r or "were acceptable to the controller" in r
        or "so it was acceptable, but the evidence holds it" in r)),
    ("unclean default", lambda r: r.startswith("evidence gap (the Kafka version is not in the evidence")),
    ("registration", lambda r: r.startswith("evidence gap (no line before the record states the registration")),
)


def classify_reason(reason: str) -> tuple[str, str]:
    """('hole' | 'contradicted' | 'uncompared', kind) of an unjudged record's reason."""
    for kind, test in HOLES:
        if test(reason):
            return "hole", kind
    for kind, test in CONTRADICTED:
        if test(reason):
            return "contradicted", kind
    if reason.startswith("evidence gap"):
        return "contradicted", "other gap"  # a gap kind this table does not know yet: not a hole until named
    return "uncompared", reason


# ------------------------------------------------------------------ the lines in which Kafka says "no leader"

# A failed election of these strategies leaves the current (live) leader in place: no leaderless moment.
_KEEPS_LEADER = ("ControlledShutdown", "Preferred", "Reassign")

# family -> where Kafka logs it (tag, file, function)
MOMENT_FAMILIES = {
    "failed offline election": (
        "0.9.0.0 controller/PartitionStateMachine.scala handleStateChange ('initiated state change for partition P "
        "from OfflinePartition to OnlinePartition failed'); 1.0.0 the same, 'Initiated state change ...'; 1.1.0-3.9 "
        "PartitionStateMachine.logFailedStateChange ('failed to change state for partition P from OfflinePartition "
        "to OnlinePartition'); not one whose partition has no state in ZooKeeper ('LeaderAndIsr information doesn't "
        "exist', 2.3.0 doElectLeaderForPartitions: its topic deleted)"),
    "leader -1 written": (
        "0.9.0.0-1.0.0 controller/KafkaController.scala removeReplicaFromIsr ('New leader and ISR for partition P "
        "is {\"leader\":-1,...}'); 1.1.0-3.9 controller/ReplicaStateMachine.scala doHandleStateChanges ('Partition P "
        "state changed to (Leader:-1,...) after removing replica N from the ISR as part of transition to "
        "OfflineReplica')"),
    "leader -1 in controller state": (
        "0.9.0.0-3.9 controller/KafkaController.scala controlled shutdown's trace 'All leaders = ... P -> "
        "(Leader:-1,...)' (0.9.0.0 shutdownBroker, 2.7.0 doControlledShutdown); 1.1.0-2.6 "
        "ControllerChannelManager.sendUpdateMetadataRequests ('Sending UpdateMetadata request "
        "PartitionState(...leader=-1...) ... for partition P')"),
    "leader -1 received": (
        "0.9.0.0-3.9 server/ReplicaManager.scala becomeLeaderOrFollower ('received LeaderAndIsr request "
        "...Leader:-1 / leader=-1...'), makeFollowers ('cannot become follower since the new leader -1 is "
        "unavailable')"),
    "follower, current leader -1": (
        "3.x-4.x cluster/Partition.scala makeFollower ('Follower P starts at leader epoch E ... Current leader is -1'; "
        "3.9.0-rc3)"),
    "new leader after none": (
        "3.9.0-rc3 metadata/.../controller/PartitionChangeBuilder.java tryElection ('Setting new leader for topicId "
        "T, partition P to N using ELR | an unclean election'); 4.x adds 'Previous partition: "
        "PartitionRegistration(...leader=-1...)', the registration the election started from"),
    "offline state": (
        "2.7.0 controller/PartitionStateMachine.scala doHandleStateChanges ('Changed partition P state from S to "
        "OfflinePartition'; 0.9.0.0 handleStateChange, 'changed partition P state from S to OfflinePartition'), "
        "initializePartitionState / startup ('Started partition state machine with initial state -> ... P -> "
        "OfflinePartition'): OfflinePartition is 'the leader for the partition dies' (PartitionState). Not counted: "
        "the OfflinePartition step of a topic deletion, whose NonExistentPartition follows at the same instant"),
    "partition change to leader -1": (
        "3.9.0-rc3 metadata/.../metadata/PartitionRegistration.java maybeLogPartitionChange ('UNCLEAN partition "
        "change for P with topic ID T: ... leader: X -> -1', INFO; without UNCLEAN at DEBUG)"),
}


def moment_family(e) -> str | None:
    """The family of a line in which Kafka says the partition had no leader at the line's time, or None."""
    if e.partition is None or e.ts is None or e.source_kind != "broker_log":
        return None
    t, d = e.event_type, e.detail or {}
    if t == "leader_election_failed":
        strategy = str(d.get("strategy") or "")
        if d.get("reason") == "no_state":
            # "LeaderAndIsr information doesn't exist for partition P": ZooKeeper holds no state for it, its topic
            # deleted (2.3.0 PartitionStateMachine.doElectLeaderForPartitions), a controller acting on its old
            # context: no partition there to have a leader
            return None
        if e.from_state == OFFLINE and not any(s in strategy for s in _KEEPS_LEADER):
            return "failed offline election"
        return None
    if t in ("partition_change", "unclean_leader_election") and d.get("via") == "log":
        if d.get("previous_leader") == -1 and e.leader is not None and e.leader >= 0 and "Setting new leader" in (
                e.raw or ""):
            return "new leader after none"
        if e.leader == -1:
            return "partition change to leader -1"
        return None
    if e.to_state == OFFLINE and t in ("partition_state_change", "partition_state_observed"):
        return "offline state"
    if e.leader != -1:
        return None
    if t == "partition_leader_isr_written":
        return "leader -1 written"
    if t == "partition_state_observed":
        return "leader -1 in controller state"
    if t == "leader_and_isr_received":
        return "leader -1 received"
    if t == "become_follower":
        return "follower, current leader -1"
    return None




def log_stated_moments(events):
    """(event, family, topic) of every line stating the partition had no leader at the line's time (events in replay
    order). Left out: a topic deletion's OfflinePartition step (NonExistentPartition at the same instant: no partition
    is left to lead), and a line stating leader -1 at a leader epoch below one an earlier line stated for the partition:
    it restates history, a leaderless moment in the past at no time it gives (3.9.0-rc3 ReplicationControlManager.replay
    logs every change it replays, the log's history included, through PartitionRegistration.maybeLogPartitionChange;
    a ZooKeeper-mode broker logs a LeaderAndIsr request when it handles it, 2.4.0 ReplicaManager.becomeLeaderOrFollower,
    after requests the controller sent later may have been logged by another broker)."""
    names = _topic_names(events)
    deleted = {(e.topic, e.partition, e.ts) for e in events
               if e.event_type == "partition_state_change" and e.to_state == "NonExistentPartition"}
    latest: dict[tuple, int] = {}
    for e in events:
        topic = e.topic if e.topic and not e.topic.startswith("topic-id:") else names.get((e.detail or {}).get("topic_id"))
        if topic is not None and e.partition is not None and e.leader_epoch is not None:
            tp = (topic, int(e.partition))
            before = latest.get(tp)
            latest[tp] = e.leader_epoch if before is None else max(before, e.leader_epoch)
        else:
            before = None
        fam = moment_family(e)
        if fam is None or topic is None:
            continue
        if fam == "offline state" and (e.topic, e.partition, e.ts) in deleted:
            continue
        if before is not None and e.leader_epoch is not None and e.leader_epoch < before:
            continue
        yield e, fam, topic


# ------------------------------------------------------------------ loading


def clusters(folder: str) -> list[str]:
    root = SHARED / folder
    return sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != "issue_snippets")


def zk_real_scenarios() -> list[str]:
    root = SHARED / "zk_real"
    return sorted(p.name for p in root.iterdir() if (p / "ground_truth.json").exists())


def as_replayed(events: list) -> list:
    """The events as ``kafka-forensics replay`` hands them to the replay: in its order, a log entry the evidence holds
    twice (a rotated copy, kafkaServer.out beside server.log) once."""
    from forensics.pipeline import drop_log_copies, replay_order

    events = sorted(events, key=replay_order)
    return drop_log_copies(events)[0]


def load(folder: str, name: str) -> list:
    from forensics.sources import parse_folder_in_process

    return as_replayed(parse_folder_in_process(SHARED / folder, name))


def load_zk_real(name: str):
    """As tests/test_replay_zk_real.py ``load()``."""
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    events = []
    for f in sorted((SHARED / "zk_real" / name / "version-2").iterdir()):
        evs, _ = parse_source(f.read_bytes(), SourceContext(str(f.relative_to(SHARED)), cluster="zk"))
        events += [e for e in evs if e.event_type != "zk_txn"]
    return events


# ------------------------------------------------------------------ what the evidence records


def _key(source_file, source_pos, partition) -> tuple:
    return (source_file, source_pos, partition)


@dataclass
class Recorded:
    label: str
    keys: list[tuple]  # (file, line or offset, partition) of every line/record stating it
    ts: int | None


def recorded_decisions(res, events) -> list[Recorded]:
    """The decisions the evidence records, each with the keys of the lines/records stating it."""
    from replay_engine.common import facts as F

    out: list[Recorded] = []
    if res.mode != "kraft":
        for f in res.stream.facts:
            if isinstance(f, F.RecordedState) and f.kind in ("election", "new_partition", "isr_removal", "write"):
                out.append(Recorded(f"{f.kind} {f.tp[0]}-{f.tp[1]}",
                                    [_key(f.ref.source_file, f.ref.source_pos, f.tp[1])], f.ts))
            elif isinstance(f, F.RecordedFailedElection):
                out.append(Recorded(f"failed election {f.tp[0]}-{f.tp[1]}",
                                    [_key(f.ref.source_file, f.ref.source_pos, f.tp[1])], f.ts))
        return out
    return kraft_recorded(events)


def kraft_recorded(events) -> list[Recorded]:
    incarnations = _topic_incarnations(events)

    def part(e) -> tuple:
        tid = (e.detail or {}).get("topic_id")
        if not tid and e.topic is not None:
            tid = _incarnation_at(incarnations.get(e.topic, ()), e.ts)
        return (tid or e.topic, e.partition)

    out: list[Recorded] = []
    by_offset: dict[tuple, Recorded] = {}
    span = None
    for e in events:
        d = e.detail or {}
        if e.source_kind == "kraft_metadata" and e.ts is not None and d.get("snapshot_offset") is None:
            # the log's span: its first record to its last, of any kind (a broker applies the last partition change
            # after it, while the log goes on)
            span = (e.ts, e.ts) if span is None else (min(span[0], e.ts), max(span[1], e.ts))
        if e.source_kind != "kraft_metadata" or e.event_type not in ("partition_change", "partition_record") \
                or d.get("snapshot_offset") is not None or e.partition is None:
            continue
        k = (e.source_pos, e.source_sub, e.event_type, part(e))
        rec = by_offset.get(k)
        if rec is None:
            what = "new partition" if e.event_type == "partition_record" else "partition change"
            rec = by_offset[k] = Recorded(f"{what} {e.topic or d.get('topic_id')}-{e.partition} (offset {e.source_pos})",
                                          [], e.ts)
            out.append(rec)
        rec.keys.append(_key(e.source_file, e.source_pos, e.partition))
    loading = snapshot_loads(events)
    skew = line_clocks(events, part)
    by_epoch: dict[tuple, Recorded] = {}
    for e in events:
        if e.source_kind != "broker_log" or e.partition is None or e.ts is None:
            continue
        writer = e.controller_id if e.controller_id is not None else e.broker_id
        if any(a <= e.ts <= b for a, b in loading.get(writer, ())):
            continue  # a snapshot's registrations: the state as of the snapshot, no decision at this line
        t, d = e.event_type, e.detail or {}
        if t in ("become_leader", "become_follower"):
            epoch = ("leader epoch", e.leader_epoch)
        elif t in ("partition_change", "unclean_leader_election", "partition_record") and d.get("via") == "log":
            le = e.leader_epoch
            if le is None and t != "partition_record" and "previous_leader_epoch" in d:
                le = d["previous_leader_epoch"] + 1  # PartitionChangeBuilder bumps the epoch with the new leader
            epoch = ("leader epoch", le) if le is not None else ("partition epoch", e.zk_version)
        else:
            continue
        if epoch[1] is None or span is not None and span[0] <= e.ts - skew.get(writer, 0) <= span[1]:
            continue
        k = (part(e), epoch)
        rec = by_epoch.get(k)
        if rec is None:
            rec = by_epoch[k] = Recorded(f"{epoch[0]} {epoch[1]} of {e.topic or d.get('topic_id')}-{e.partition}",
                                         [], e.ts)
            out.append(rec)
        rec.keys.append(_key(e.source_file, e.source_pos, e.partition))
    return out


def line_clocks(events, part) -> dict[int | None, int]:
    """Writer -> how far its lines' clock is ahead of the metadata log's (microseconds): a line stating a creation
    ("Created partition ..." / "Replayed PartitionRecord ...", via log) that a PartitionRecord of the log also holds
    (same topic id, partition, leader and partition epoch) is the same record, written once; log4j writes local time
    without a zone, the record its UTC timestamp. The median over such pairs; writers with none are taken as on the
    log's clock."""
    records: dict[tuple, int] = {}
    for e in events:
        if e.source_kind == "kraft_metadata" and e.event_type == "partition_record" and e.ts is not None \
                and (e.detail or {}).get("snapshot_offset") is None and e.partition is not None:
            records.setdefault((part(e), e.leader_epoch, e.zk_version), e.ts)
    gaps: dict[int | None, list[int]] = {}
    for e in events:
        if e.source_kind == "broker_log" and e.event_type == "partition_record" and e.ts is not None \
                and (e.detail or {}).get("via") == "log" and e.partition is not None:
            at = records.get((part(e), e.leader_epoch, e.zk_version))
            if at is not None:
                writer = e.controller_id if e.controller_id is not None else e.broker_id
                gaps.setdefault(writer, []).append(e.ts - at)
    return {w: sorted(g)[len(g) // 2] for w, g in gaps.items()}


def snapshot_loads(events) -> dict[int | None, list[tuple[int, int]]]:
    """Controller -> the times it spent loading a snapshot (3.9.0-rc3 OffsetControlManager 'Starting to load snapshot
    O-E' .. 'Successfully loaded snapshot'): the records it re-logs meanwhile restate the snapshot's state."""
    out: dict[int | None, list[tuple[int, int]]] = {}
    began: dict[int | None, int] = {}
    for e in events:
        if e.event_type != "kraft_snapshot_load" or e.ts is None:
            continue
        who = e.controller_id if e.controller_id is not None else e.broker_id
        if (e.detail or {}).get("phase") == "start":
            began[who] = e.ts
        elif who in began:
            out.setdefault(who, []).append((began.pop(who), e.ts))
    for who, a in began.items():
        out.setdefault(who, []).append((a, a))
    return out


def _topic_incarnations(events) -> dict[str, list[tuple[int, str]]]:
    """Topic name -> (time first named, topic id) of each incarnation, in time order (KIP-516: a topic created again
    gets a new id)."""
    first: dict[str, tuple[int, str]] = {}
    for e in events:
        tid = (e.detail or {}).get("topic_id")
        if tid and e.topic and not e.topic.startswith("topic-id:"):
            t = e.ts if e.ts is not None else 0
            if tid not in first or t < first[tid][0]:
                first[tid] = (t, e.topic)
    out: dict[str, list[tuple[int, str]]] = {}
    for tid, (t, name) in first.items():
        out.setdefault(name, []).append((t, tid))
    return {name: sorted(v) for name, v in out.items()}


def _incarnation_at(incarnations, ts: int | None) -> str | None:
    """The topic id in force at ``ts``: the last incarnation named at or before it (the first, before any)."""
    if not incarnations:
        return None
    if ts is None:
        return incarnations[0][1] if len(incarnations) == 1 else None
    best = incarnations[0][1]
    for t, tid in incarnations:
        if t <= ts:
            best = tid
    return best


def _topic_names(events) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in events:
        tid = (e.detail or {}).get("topic_id")
        if tid and e.topic and not e.topic.startswith("topic-id:"):
            out.setdefault(tid, e.topic)
    return out


# ------------------------------------------------------------------ measuring


@dataclass
class Item:
    """One thing --detail lists and the triage files group: a decision not agreed, a moment outside, an unknown
    cause. ``what``: diverged | contradicted | uncompared | unaccounted | outside | unknown cause."""

    what: str
    kind: str  # the reason's kind, the moment's family, or the decision's label
    text: str
    where: str  # file:line (or offset) of the first line stating it
    ts: int | None = None
    recorded: dict | None = None
    replayed: dict | None = None
    metadata: bool = False  # stated by a __cluster_metadata record
    tp: tuple | None = None  # the partition of a decision (for agreement_triage's evidence search)

    def line(self) -> str:
        vs = "" if self.recorded is None else f" [recorded {self.recorded}, replayed {self.replayed}]"
        return f"{self.what}: {self.text}{vs}"


@dataclass
class Row:
    folder: str
    name: str
    mode: str
    version: str | None
    recorded: int = 0
    compared: int = 0
    agreed: int = 0
    departures: int = 0  # diverged decisions the replay files as a rule_departure finding (naming its rule row)
    adopted: int = 0
    holes: Counter = field(default_factory=Counter)
    contradicted: Counter = field(default_factory=Counter)
    uncompared: Counter = field(default_factory=Counter)
    unaccounted: int = 0
    moments: Counter = field(default_factory=Counter)
    outside: Counter = field(default_factory=Counter)
    unknown_causes: int = 0
    seconds: float = 0.0
    detail: list[Item] = field(default_factory=list)  # for --detail and the triage files
    clusters: int = 1  # the clusters the folder holds, each replayed alone (``measure_folder``)

    @property
    def diverged(self) -> int:
        """Plain divergences: judged against, and not filed as a departure from a named rule row."""
        return self.compared - self.agreed - self.departures

    @property
    def denominator(self) -> int:
        return self.recorded - sum(self.holes.values())

    @property
    def measure(self) -> float | None:
        return self.agreed / self.denominator if self.denominator > 0 else None

    def add(self, other: "Row") -> None:
        for k in ("recorded", "compared", "agreed", "departures", "adopted", "unaccounted", "unknown_causes", "seconds"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        for k in ("holes", "contradicted", "uncompared", "moments", "outside"):
            getattr(self, k).update(getattr(other, k))


def adopted_states(res) -> int:
    """See the module docstring: the broker-state model's adopted states, else its findings, else 0."""
    model = getattr(res, "broker_state", None)
    if model is not None:
        adopted = getattr(model, "adopted", None)
        if adopted is None:  # replay_engine.common.brokers.BrokerStates: a change a record implies carries its Kafka rule
            adopted = [c for c in getattr(model, "changes", ()) if getattr(c, "rule", None)]
        return len(adopted)
    return sum(1 for f in res.image.findings if f.get("kind") == "broker_state_adopted")


def measure(folder: str, name: str, events) -> Row:
    from replay_engine.api import replay_cluster
    from replay_engine.causes.cases import UNKNOWN

    t0 = time.perf_counter()
    res = replay_cluster(events, name)
    row = Row(folder, name, res.mode, res.image.kafka_version)
    row.adopted = adopted_states(res)

    departed = {(e.get("source_file"), e.get("source_pos")) for f in res.image.findings
                if f.get("kind") == "rule_departure" for e in f.get("evidence", ())}
    judged: dict[tuple, bool] = {}
    disagreed: dict[tuple, object] = {}
    left: dict[tuple, object] = {}
    for c in res.comparisons:
        k = _key(c.record.source_file, c.record.source_pos, c.tp[1])
        if c.verdict == "unknown":
            left.setdefault(k, c)
        else:
            judged[k] = judged.get(k, True) and c.agreed
            if not c.agreed:
                disagreed.setdefault(k, c)
    for rec in recorded_decisions(res, events):
        row.recorded += 1
        where = f"{rec.keys[0][0]}:{rec.keys[0][1]}"
        meta = "__cluster_metadata" in where or ".checkpoint" in where
        verdicts = [judged[k] for k in rec.keys if k in judged]
        if verdicts:
            row.compared += 1
            row.agreed += all(verdicts)
            if not all(verdicts):
                c = next(disagreed[k] for k in rec.keys if k in disagreed)
                what = "diverged"
                if (c.record.source_file, c.record.source_pos) in departed:
                    row.departures += 1
                    what = "departure"
                row.detail.append(Item(what, c.how, f"{rec.label} at {c.record.source_file}:{c.record.source_pos}",
                                       f"{c.record.source_file}:{c.record.source_pos}", rec.ts, c.recorded, c.replayed,
                                       meta, tuple(c.tp)))
            continue
        c = next((left[k] for k in rec.keys if k in left), None)
        if c is None:
            row.unaccounted += 1
            row.uncompared["not judged and not listed by the replay"] += 1
            row.detail.append(Item("unaccounted", "not judged and not listed", f"{rec.label} at {where}", where, rec.ts,
                                   metadata=meta))
            continue
        why = c.reason or "unknown"
        how, kind = classify_reason(why)
        if how == "hole":
            row.holes[kind] += 1
            continue
        getattr(row, how)[kind] += 1
        at = f"{c.record.source_file}:{c.record.source_pos}"
        row.detail.append(Item(how, kind, f"{rec.label} at {at}: {why}", at, rec.ts, c.recorded, c.replayed, meta,
                               tuple(c.tp)))

    spans: dict[tuple, list[tuple[int, int | None]]] = {}
    for lp in res.leaderless:
        ep = lp.episode
        spans.setdefault((ep.topic, ep.partition), []).append((ep.start, ep.end))
        if lp.cause.kind == UNKNOWN and lp.cause.details.get("replicas"):
            row.unknown_causes += 1
            r = ep.intervals[0].opened_by
            row.detail.append(Item("unknown cause", lp.cause.case.form if lp.cause.case is not None else "",
                                   f"{lp.cause.summary} [{_opened(ep)}]", f"{r.source_file}:{r.source_pos}", ep.start))
    for e, fam, topic in log_stated_moments(events):
        row.moments[fam] += 1
        if not any(a <= e.ts and (b is None or e.ts <= b) for a, b in spans.get((topic, int(e.partition)), ())):
            row.outside[fam] += 1
            row.detail.append(Item("outside", fam, f"{topic}-{e.partition} {iso_utc(e.ts)} {e.source_file}:"
                                                   f"{e.source_pos} ({fam})", f"{e.source_file}:{e.source_pos}", e.ts,
                                   metadata=False))
    row.seconds = time.perf_counter() - t0
    return row


def _opened(ep) -> str:
    r = ep.intervals[0].opened_by
    return f"opened by {r.event} at {r.source_file}:{r.source_pos}" if r.source_file else f"opened by {r.event}"


# ------------------------------------------------------------------ output


def _pct(x: float | None) -> str:
    return "none compared" if x is None else f"{100 * x:.1f}%"


def _kinds(c: Counter) -> str:
    return ", ".join(f"{n} {k}" for k, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) or "0"


HEAD = ("| cluster | mode | Kafka | recorded | compared | agreed | diverged | departures | adopted | contradicted "
        "| uncompared "
        "| holes (share) | measure | moments | outside | unknown |")


def row_line(r: Row, label: str | None = None) -> str:
    holes = sum(r.holes.values())
    share = f"{holes} ({100 * holes / r.recorded:.1f}%)" if r.recorded else "0"
    name = label or (r.name if r.clusters == 1 else f"{r.name} ({r.clusters} clusters)")
    return (f"| {name} | {r.mode} | {r.version or '?'} | {r.recorded} | {r.compared} | {r.agreed} "
            f"| {r.diverged} | {r.departures} | {r.adopted} | {sum(r.contradicted.values())} | {sum(r.uncompared.values())} | {share} "
            f"| {_pct(r.measure)} | {sum(r.moments.values())} | {sum(r.outside.values())} | {r.unknown_causes} |")


def folder_summary(folder: str, rows: list[Row]) -> str:
    tot = Row(folder, "all", "", None)
    for r in rows:
        tot.add(r)
    measured = [r for r in rows if r.measure is not None]
    below = [r for r in measured if r.measure < GOAL]
    floor = [r for r in measured if r.measure < FLOOR]
    return (f"{folder}: {_pct(tot.measure)} ({tot.agreed} of {tot.denominator}); {len(below)} of {len(measured)} "
            f"clusters below 99.5%, {len(floor)} below 97%; {tot.diverged} diverged, {tot.departures} rule departures, "
            f"{sum(tot.contradicted.values())} contradicted, {sum(tot.uncompared.values())} uncompared; "
            f"{sum(tot.outside.values())} of {sum(tot.moments.values())} log-stated moments outside; "
            f"{tot.unknown_causes} unknown causes")


def table(rows: list[Row], kinds: bool = True) -> str:
    lines: list[str] = []
    folders = list(dict.fromkeys(r.folder for r in rows))
    for folder in folders:
        mine = [r for r in rows if r.folder == folder]
        tot = Row(folder, "all", "", None)
        for r in mine:
            tot.add(r)
        lines += [f"### {folder}", "", folder_summary(folder, mine), "", HEAD, "|" + "|".join(["---"] * 16) + "|"]
        lines += [row_line(r) for r in mine]
        lines += [row_line(tot, "**all**"), ""]
        by_kind = [(r, what, c) for r in mine for what, c in (("holes", r.holes), ("contradicted", r.contradicted),
                                                               ("uncompared", r.uncompared), ("outside", r.outside))
                   if c] if kinds else []
        if by_kind:
            lines.append("By kind:")
            lines.append("")
            for r, what, c in by_kind:
                lines.append(f"- {r.name}: {what}: {_kinds(c)}")
            lines.append("")
    return "\n".join(lines).rstrip("\n")


def replace_section(section: str, body: str) -> None:
    """Replaces ``section``'s body in its journal file (benchmarks/journal/agreement.md; made if missing): the table
    is kept current, not appended. The goal's row of RESULTS.md is updated by hand; its per-cluster table by
    ``results_table``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import journal_of

    results = journal_of(section)
    text = results.read_text(encoding="utf-8") if results.exists() else f"# Benchmark journal: {results.stem}\n"
    start = text.find("\n" + section + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section + "\n\n" + body.rstrip("\n") + "\n"
    else:
        nxt = text.find("\n## ", start + 1 + len(section))
        tail = "" if nxt < 0 else text[nxt:]
        text = text[:start + 1] + section + "\n\n" + body.rstrip("\n") + "\n" + tail
    results.write_text(text, encoding="utf-8")


RESULTS_SECTION = "## Agreement per cluster (issue 44's table, written by `benchmarks/agreement.py --record`)"


def results_table(body: str) -> None:
    """RESULTS.md's section of the per-cluster table (with holes, contradicted and uncompared by kind), replaced by
    each whole run; made at the page's end if missing."""
    page = REPO / "benchmarks" / "RESULTS.md"
    text = page.read_text(encoding="utf-8")
    start = text.find("\n" + RESULTS_SECTION + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + RESULTS_SECTION + "\n\n" + body.rstrip("\n") + "\n"
    else:
        nxt = text.find("\n## ", start + 1 + len(RESULTS_SECTION))
        text = text[:start + 1] + RESULTS_SECTION + "\n\n" + body.rstrip("\n") + "\n" + ("" if nxt < 0 else text[nxt:])
    page.write_text(text, encoding="utf-8")


def measure_folder(folder: str, name: str, events: list) -> Row:
    """One folder measured as ``kafka-forensics replay`` replays it: the clusters it holds told apart
    (``forensics.pipeline.split_clusters``), each replayed alone, their rows summed (events no evidence places
    are left out, as the command leaves them)."""
    from forensics.pipeline import split_clusters

    events, told = split_clusters(events)
    if not told:
        return measure(folder, name, events)
    parts: dict[str, list] = {}
    for e in events:
        parts.setdefault(e.cluster, []).append(e)
    rows = [measure(folder, cluster, mine) for cluster, mine in sorted(parts.items(), key=lambda kv: str(kv[0]))]
    row = Row(folder, name, rows[0].mode, rows[0].version)
    for r in rows:
        row.add(r)
        row.detail += r.detail
    row.clusters = len(rows)
    return row


def run(folders: list[str], want: set[str], zk_real: bool) -> list[Row]:
    rows = []
    for folder in folders:
        for name in clusters(folder):
            if not want or name in want:
                rows.append(measure_folder(folder, name, load(folder, name)))
    if zk_real:
        for name in zk_real_scenarios():
            if not want or name in want:
                rows.append(measure("zk_real", name, load_zk_real(name)))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folder", action="append", choices=FOLDERS, help="only this folder of ../shared (repeatable)")
    ap.add_argument("--cluster", action="append", help="only this cluster or zk_real scenario (repeatable)")
    ap.add_argument("--record", action="store_true",
                    help="write the table to its section of benchmarks/journal/agreement.md (and, a whole run, RESULTS.md)")
    ap.add_argument("--detail", action="store_true",
                    help="list every divergence, uncompared and contradicted decision, moment outside, unknown cause")
    args = ap.parse_args(argv)
    want = set(args.cluster or [])
    folders = args.folder or list(FOLDERS)
    t0 = time.perf_counter()
    rows = run(folders, want, zk_real=not args.folder)
    out = table(rows)
    print(out)
    print(f"\n({len(rows)} clusters in {time.perf_counter() - t0:.0f} s)")
    if args.detail:
        for r in rows:
            if r.detail:
                print(f"\n{r.folder}/{r.name}:")
                print("\n".join(f"  {item.line()}" for item in r.detail))
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _common import now_utc

        cmd = "python benchmarks/agreement.py" + "".join(f" --folder {f}" for f in args.folder or []) \
            + "".join(f" --cluster {c}" for c in sorted(want))
        replace_section(SECTION, f"{now_utc()}, `{cmd}` (definitions: the script's docstring; holes, "
                                 f"contradicted and uncompared by kind: `--detail`):\n\n{table(rows, kinds=False)}\n")
        if not args.folder and not want:  # the whole measure: RESULTS.md keeps its table (issue 44)
            results_table(f"{now_utc()}, `{cmd}`; the goals' rows above, the runs before in "
                          f"[the journal](journal/agreement.md):\n\n{table(rows)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
