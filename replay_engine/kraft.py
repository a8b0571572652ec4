"""KRaft mode: the quorum controller re-run over the ``__cluster_metadata`` log (and KRaft log lines).

In KRaft the controller's decisions *are* the metadata log: a
``PartitionChangeRecord`` after a broker is fenced is the controller's
election. The replay keeps broker registrations (fenced, controlled
shutdown), topics and partition registrations, re-derives every leader
change with the ``PartitionChangeBuilder`` rules (``kraft_rules``) at the
point it was recorded, and follows the record. Leader changes that only the
broker logs show (KRaft logs elections at DEBUG) are judged against what the
brokers say they became. Produces the same outputs as the ZooKeeper-mode
replay, so reports, dashboards, what-if and audit work unchanged.

It reads facts, not events (``kraft_facts`` makes them), each routed to its
handler by its role (``roles.Router``).
"""
from __future__ import annotations

from typing import Any

from replay_engine import facts as F
from replay_engine import rules as R
from replay_engine.apply import OBSERVED, RECORDED, Change, PartitionStore
from replay_engine.config import ConfigImage, ConfigState, as_bool, parse_version
from replay_engine.facts import iso_utc  # the time format of refs and reports
from replay_engine.judge import EVIDENCE_GAP, Comparison, judge_kraft, unknown, unseen_reason
from replay_engine.kraft_evidence import (broker_event_of, departure_findings, hole_between, hole_since_quorum_epoch,
                                          stated_within_replayed,
                                          unjudged_epoch_reason, unseen_partition_changes)
from replay_engine.kraft_point import (created_leader, isr_after_leader_left, states_the_creation, no_broker_acceptable,
                                       previous_from_leader_line, rederive_stated_leader,
                                       stated_leader_whatever_the_isr)
from replay_engine.partition import UNKNOWN, BrokerPeriod, Decision, PState, Tenure
from replay_engine.kraft_facts import KraftStream, liveness_key
from replay_engine.kraft_pass import ADD, REMOVE
from replay_engine.roles import Router
from replay_engine.states import NON_EXISTENT, OFFLINE, ONLINE
from replay_engine.timeline import TimelineBuilder, View

# A fence and the partition changes it causes are appended together; records this close are one step.
SAME_STEP_US = 5_000

# Unjudged because partition changes came that no line in the evidence shows (see kraft_evidence)
UNSEEN_STEPS = ("leader epoch: the epochs before it were decided in steps", "leader epoch: ISR unknown (")
RESTATED = "leader epoch: stated again after a later one was known"
UNKNOWN_BEFORE = "leader epoch: partition unknown before the line"


class KraftReplay:
    def __init__(self, config: ConfigState):
        self.config = config
        self.registered: dict[int, Any] = {}
        self.fenced: set[int] = set()
        self.cs: set[int] = set()
        self.live: set[int] = set()  # registered and unfenced (what the timeline calls alive)
        self.known_brokers: set[int] = set()
        self.topic_names: dict[str, str] = {}
        self.incarnations: dict[F.TP, list[str]] = {}  # partition -> the topic ids it has had, in order
        # Partitions are written only through the apply module. KRaft has no partition state machine: the
        # state shown is Online with a leader, Offline without, and moves between those pass the table.
        self.findings: list[dict[str, Any]] = []
        self.store = PartitionStore(self.findings)
        self.parts = self.store.parts
        self.ar_history = self.store.ar_history
        self.elr: dict[F.TP, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self.elr_enabled = False
        self.timeline = TimelineBuilder()
        self.decisions: list[Decision] = []
        self.comparisons: list[Comparison] = []  # one per record judged, whatever the verdict
        self.periods: dict[int, list[BrokerPeriod]] = {}
        self.tenures: list[Tenure] = []
        self.config_history: list[tuple[int, ConfigImage]] = [(0, config.image())]
        self.failed_elections: dict[F.TP, list[F.Ref]] = {}
        self.evidence_by_broker: dict[int, list[F.Ref]] = {}
        self.evidence_by_tp: dict[F.TP, list[F.Ref]] = {}
        self.unclean_elections: list[Decision] = []
        self.recent_gone: dict[int, int] = {}  # broker -> when it was fenced / began controlled shutdown
        self.has_records = False
        self.journal: list[tuple] | None = None  # shard mode: every change of a broker's liveness, in order
        self.inferred: list[tuple] = []  # lines of its own partitions that showed a leader active (kraft_split)
        # (partition, leader epoch) -> the replay's decision that reached it: a broker may state an epoch after the
        # replay has already taken the next step (the replay reads the quorum's 'Replayed' lines before brokers apply
        # the same records), and is then judged against the decision of its own epoch
        # with the partition epoch it wrote (if known), the acceptable brokers and unclean setting it was taken with,
        # and when each broker's liveness was last read from a line then
        self.replayed_at: dict[tuple[F.TP, int], tuple[Decision, int | None, frozenset[int], bool, dict]] = {}
        self.replayed_epochs: set[tuple[F.TP, int]] = set()  # (partition, leader epoch) the replay's decisions reached
        self.stated_epoch: dict[F.TP, tuple] = {}  # highest (leader epoch, partition epoch) a broker's line stated
        self.replayed_since: dict[F.TP, int] = {}  # records the replay wrote since a line stated the partition epoch
        self.before_skip: dict[F.TP, tuple] = {}  # (epoch, leader, ISR, replicas) before a 'Skipped' line's epoch
        self.epoch_known_at: dict[F.TP, int] = {}  # when a line or a replayed step last set the current leader epoch
        self.holes: list[tuple[int, int, int, int]] = []  # stretches the evidence lost (quorum_epoch_holes)
        self.began: int | None = None  # the time of the evidence's first line
        self.controller_view: tuple[int, int] | None = None  # see KraftStream.controller_view
        # partition -> ((offset, quorum epoch) of a snapshot, the leader epoch it holds, the controller that loaded it,
        # when): the registration the replay holds came from a controller loading that snapshot (and the replay's
        # own steps since), no line having stated the partition after it
        self.from_snapshot: dict[F.TP, tuple] = {}
        self.snapshot_before: dict[tuple[F.TP, int], tuple] = {}  # (partition, leader epoch) first stated then
        # (partition, leader epoch) -> when the evidence first stated it (a broker restarting restates old epochs)
        self.epoch_first_seen: dict[F.TP, dict[int, int]] = {}
        self.liveness_at: dict[int, int] = {}  # broker -> time of the last line the replay took its liveness from
        self.min_epoch: dict[F.TP, int] = {}  # a leader epoch the partition has reached in a step not derived
        # partition -> leader epoch -> the leader the replay gave it: by its own decision, or re-derived at a line and
        # agreed (what a later line stating that epoch again is compared with, see _restated)
        self.epoch_decided: dict[F.TP, dict[int, int]] = {}
        self._seq = 0
        # KRaft has one mode: the metadata log (or the lines the controller logs of it) is followed
        self.router = Router(
            inputs={F.ControllerElected: self._quorum_leader, F.ControllerGone: self._quorum_leader_gone,
                    F.BrokerRegistered: self._registered, F.BrokerUp: self._unfenced, F.BrokerDown: self._broker_down,
                    F.ControlledShutdownRequest: self._controlled_shutdown, F.TopicNamed: self._topic_named,
                    F.TopicGone: self._topic_gone, F.TopicConfig: self._topic_config,
                    F.BrokerConfig: self._broker_config, F.FeatureLevel: self._feature_level,
                    F.KafkaVersion: self._kafka_version, F.LeaderIsrChange: self._isr_updated,
                    F.MetadataLogBegins: self._metadata_log_begins},
            records={F.PartitionRegistration: self._partition_record, F.PartitionChange: self._partition_change},
            observations={F.ObservedState: self._observation, F.BrokerRegistrationObserved: self._registration_observed,
                          F.LeaderActiveHint: self._leader_active_hint},
            evidence={F.Evidence: self._evidence})

    # ------------------------------------------------------------------ helpers

    def acceptable(self) -> frozenset[int]:
        return frozenset(b for b in self.registered if b not in self.fenced and b not in self.cs)

    def _shutting_down(self) -> frozenset[int]:
        """Registered, unfenced brokers in controlled shutdown (not acceptable leaders, but unfenced)."""
        return frozenset(b for b in self.cs if b in self.registered and b not in self.fenced)

    def _period(self, b: int, ts: int, ref: F.Ref, state: str, cause: str | None = None) -> None:
        ps = self.periods.setdefault(b, [])
        if ps and ps[-1].state == state:
            return
        if ps and ps[-1].end is None:
            ps[-1].end, ps[-1].end_ref, ps[-1].end_cause = ts, ref, cause
        ps.append(BrokerPeriod(b, ts, start_ref=ref, state=state))
        self.known_brokers.add(b)

    def _liveness(self, b: int, ts: int, ref: F.Ref, cause: str) -> None:
        self.liveness_at[b] = ts
        if self.journal is not None:
            self.journal.append((ts, b, cause, ref.source_file, ref.source_pos, ref.event))
        # A broker in controlled shutdown may not lead: for availability it has left already.
        up = b in self.registered and b not in self.fenced and b not in self.cs
        was = b in self.live
        if up and not was:
            self.live.add(b)
            self._period(b, ts, ref, "up")
        elif not up and was:
            self.live.discard(b)
            self._period(b, ts, ref, "down", cause)
        elif not up and b not in self.periods:
            # registered fenced, as every broker starts: catching up with the metadata log, not a failure
            self._period(b, ts, ref, "starting" if cause == "registered" else "down", cause)
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.leader == b:
                self._show(p, ts, ref, "liveness")

    def _show(self, p: PState, ts: int, ref: F.Ref, basis: str) -> None:
        if p.leader is None and p.state == UNKNOWN:
            return
        alive = None if p.leader is None or p.leader < 0 else p.leader in self.live
        state = p.state if p.state != UNKNOWN else (ONLINE if p.leader is not None and p.leader >= 0 else OFFLINE)
        self.timeline.update(p.tp, ts, View(p.leader, p.isr, p.leader_epoch, p.controller_epoch, state, alive), ref, basis)

    def _set_replicas(self, p: PState, replicas, ts: int) -> None:
        self.store.set_replicas(p, replicas, ts)

    def _unclean(self, topic: str) -> bool:
        return as_bool(self.config.unclean_enabled(topic).value)

    def _rule(self, decision: str, *args):
        """Kafka's rule for ``decision`` in the version that wrote the evidence (replay_engine.rules)."""
        return R.decide(decision, self.config.version, *args)

    # ------------------------------------------------------------------ facts

    def run(self, stream: KraftStream) -> None:
        """``stream``: from ``kraft_facts.kraft_facts``: the facts in the cluster's order, and what the whole
        cluster's events say besides (stretches the evidence lost, records a renounce rolled back)."""
        self.start(stream)
        route = self.router.route
        for fact in stream.facts:
            route(fact)
        self.finish(stream)

    def start(self, stream: KraftStream) -> None:
        """Before the first ``step`` (``run`` is start, a step per fact in order, finish): what the whole
        cluster's events say besides the facts. ``watch`` calls it again as the evidence grows."""
        self.holes = list(stream.holes)
        self.began = stream.began
        self.controller_view = stream.controller_view

    def step(self, fact: F.Fact) -> None:
        """One fact, in the cluster's order."""
        self.router.route(fact)

    def finish(self, stream: KraftStream) -> None:
        """After the last fact: the findings of the whole run."""
        self.findings.extend(stream.findings)
        self.findings.extend(departure_findings(self.comparisons, self.config.version))

    def _quorum_leader(self, f: F.ControllerElected) -> None:
        self._tenure(f, f.controller, f.epoch)

    def _quorum_leader_gone(self, f: F.ControllerGone) -> None:
        """The quorum has no leader known, or the leader renounced (kraft_facts emits this only while one is
        in office)."""
        if self.tenures and self.tenures[-1].end is None:
            t = self.tenures[-1]
            t.end, t.end_ref, t.end_cause = f.ts, f.ref, "renounced"

    def _tenure(self, f: F.Fact, c: int | None, epoch: int | None) -> None:
        if self.tenures and self.tenures[-1].end is None:
            t = self.tenures[-1]
            if t.controller == c and (epoch is None or t.epoch == epoch):
                return
            t.end, t.end_ref, t.end_cause = f.ts, f.ref, "new quorum leader" if c is not None and c >= 0 else "renounced"
        if c is not None and c >= 0:
            self.tenures.append(Tenure(c, epoch, f.ts, start_ref=f.ref))

    def _registered(self, f: F.BrokerRegistered) -> None:
        b = f.broker
        self.registered[b] = f.epoch
        if f.fenced is not None:
            (self.fenced.add if f.fenced else self.fenced.discard)(b)
        self.cs.discard(b)
        self.evidence_by_broker.setdefault(b, []).append(f.ref)
        self._liveness(b, f.ts, f.ref, "registered")

    def _broker_down(self, f: F.BrokerDown) -> None:
        b = f.broker
        if f.cause == "heartbeat_timeout":
            # "Fencing broker N because its session has timed out": maybeFenceOneStaleBroker logs it and runs
            # handleBrokerFenced in the same event (3.5.1 .. 3.9.0-rc3 ReplicationControlManager); 3.4-3.6 log the
            # fence record at no INFO line, 3.7+ as "Replayed BrokerRegistrationChangeRecord ..." (the same fence
            # stated again, see _fence)
            self._fence(b, f, "fenced")
        elif f.cause == "unregistered":
            self.registered.pop(b, None)
            self.recent_gone[b] = f.ts
            self._liveness(b, f.ts, f.ref, "unregistered")
        else:
            self._fence(b, f, f.cause)

    def _fence(self, b: int, f: F.Fact, cause: str) -> None:
        if b in self.fenced and b in self.registered:
            # handleBrokerFenced runs only when a broker's state becomes fenced (maybeFenceOneStaleBroker finds unfenced
            # brokers only; processBrokerHeartbeat on a change of state): a fence of a fenced broker is the same one,
            # stated again (its liveness read from this line too)
            self.evidence_by_broker.setdefault(b, []).append(f.ref)
            self.liveness_at[b] = f.ts
            return
        self.registered.setdefault(b, None)
        self.fenced.add(b)
        self.recent_gone[b] = f.ts
        self.evidence_by_broker.setdefault(b, []).append(f.ref)
        self._liveness(b, f.ts, f.ref, cause)
        if not self.has_records:
            self._replay_leaving(b, f)

    def _unfenced(self, f: F.BrokerUp) -> None:
        b = f.broker
        self.registered.setdefault(b, None)
        self.fenced.discard(b)
        self.cs.discard(b)
        self._liveness(b, f.ts, f.ref, "unfenced")
        if not self.has_records:
            self._replay_unfence(f)

    def _controlled_shutdown(self, f: F.ControlledShutdownRequest) -> None:
        """The controller granted a controlled shutdown ('Unfenced broker N has requested and been granted a
        controlled shutdown', or a registration change to in-controlled-shutdown)."""
        b = f.broker
        if b in self.cs:
            return
        self.cs.add(b)
        self.recent_gone[b] = f.ts
        self.evidence_by_broker.setdefault(b, []).append(f.ref)
        self._liveness(b, f.ts, f.ref, "controlled_shutdown")
        if not self.has_records:
            self._replay_leaving(b, f)

    def _leader_active(self, leader: int, ts: int, ref: F.Ref) -> None:
        self.registered.setdefault(leader, None)
        self.fenced.discard(leader)
        self.cs.discard(leader)
        self._liveness(leader, ts, ref, "elected leader")

    def _leader_active_hint(self, f: F.LeaderActiveHint) -> None:
        """Another shard's line showed ``f.leader`` active (its own shard decided, with its partition's state). Phase
        1's candidates are taken where the leader was not acceptable, as the line's own shard mostly finds."""
        if f.candidate:
            if self.has_records or not (f.leader in self.fenced or f.leader in self.cs or f.leader not in self.registered):
                return
            self.inferred.append(f.key)
        self._leader_active(f.leader, f.ts, f.ref)

    def _metadata_log_begins(self, f: F.MetadataLogBegins) -> None:
        self.has_records = True

    def _topic_named(self, f: F.TopicNamed) -> None:
        self.topic_names[f.topic_id] = f.topic
        for tp in sorted({t for t in self.incarnations if t[0] == f.topic} | {t for t in self.parts if t[0] == f.topic}):
            self._incarnation(tp, f.topic_id, f.ts, f.ref)

    def _topic_gone(self, f: F.TopicGone) -> None:
        for tp in sorted(t for t in self.parts if t[0] == f.topic):
            self._forget(tp, f.ts, f.ref)

    def _incarnation(self, tp: F.TP, topic_id: str | None, ts: int, ref: F.Ref) -> None:
        """A fact naming the topic id of a partition. A topic id names one incarnation of a topic: a topic created
        again under its name gets a new id (KIP-516; 3.5.1 .. 4.x ReplicationControlManager.createTopic draws
        ``Uuid.randomUuid()``), and its partitions start again at leader epoch 0 and partition epoch 0. On the first
        fact naming an id not seen before, the old incarnation is gone, whether or not its RemoveTopicRecord is in
        the evidence (a cluster formatted anew has none); a line naming an id already left behind (a broker behind
        the others) changes nothing."""
        if not topic_id:
            return
        seen = self.incarnations.setdefault(tp, [])
        if topic_id in seen:
            return
        if seen and tp in self.parts:
            self._forget(tp, ts, ref)
        seen.append(topic_id)

    def _forget(self, tp: F.TP, ts: int, ref: F.Ref) -> None:
        """The partition (its incarnation) is gone: what the replay held of it, and its history of epochs."""
        if tp in self.parts:
            self.store.drop(tp)
            self.timeline.update(tp, ts, View(None, None, None, None, NON_EXISTENT, None), ref, "recorded")
        for per_partition in (self.elr, self.stated_epoch, self.replayed_since, self.before_skip, self.epoch_known_at,
                              self.from_snapshot, self.epoch_first_seen, self.min_epoch, self.epoch_decided):
            per_partition.pop(tp, None)
        for key in [k for k in self.replayed_at if k[0] == tp]:
            del self.replayed_at[key]
        self.replayed_epochs = {k for k in self.replayed_epochs if k[0] != tp}
        self.snapshot_before = {k: v for k, v in self.snapshot_before.items() if k[0] != tp}

    def _topic_config(self, f: F.TopicConfig) -> None:
        self._config_entries(self.config.topic.setdefault(f.topic, {}), f)

    def _broker_config(self, f: F.BrokerConfig) -> None:
        if f.static:
            # a broker's own configuration, as it logged it at start-up
            self.config.broker_static.setdefault(f.broker, {}).update(
                {k: (str(v), f.ref) for k, v in f.config.items()})
        else:
            self._config_entries(self.config.cluster_dynamic, f)

    def _config_entries(self, cfg: dict, f: F.TopicConfig | F.BrokerConfig) -> None:
        """A ConfigRecord: each key set, or removed where it has no value."""
        for name, value in f.config.items():
            if value is None:
                cfg.pop(name, None)
            else:
                cfg[name] = (value, f.ref)
        self.config_history.append((f.ts, self.config.image()))

    def _feature_level(self, f: F.FeatureLevel) -> None:
        if f.name == "eligible.leader.replicas.version":
            self.elr_enabled = int(f.level or 0) >= 1

    def _kafka_version(self, f: F.KafkaVersion) -> None:
        v = parse_version(f.version)
        if v is not None and self.config.version is None:
            self.config.version = v
            self.config.version_source = f"logged 'Kafka version: {f.version}'"

    def _evidence(self, f: F.Evidence) -> None:
        if f.broker is not None:
            self.evidence_by_broker.setdefault(f.broker, []).append(f.ref)
        if f.tp is not None:
            self.evidence_by_tp.setdefault(f.tp, []).append(f.ref)

    # ------------------------------------------------------------------ partition records

    def _partition_record(self, f: F.PartitionRegistration) -> None:
        tp, r, ts = f.tp, f.ref, f.ts
        self._incarnation(tp, f.topic_id, ts, r)
        self.has_records = self.has_records or f.metadata_log
        p = self.parts.get(tp)
        snapshot = f.snapshot
        if snapshot and p is not None and p.leader_epoch is not None and f.leader_epoch is not None \
                and (f.leader_epoch, f.zk_version or 0) < (p.leader_epoch, p.zk_version or 0):
            # Older than the registration held: a controller replaying the log as it loads it logs each PartitionRecord
            # again ("Created partition ..." 3.3-3.8, "Replayed PartitionRecord for new partition ..." 3.9+,
            # ReplicationControlManager.replay(PartitionRecord)); the record is the creation, and the changes since are
            # replayed at DEBUG. History, as an older line of a broker is (see _observed).
            return
        if p is None and not snapshot and f.replicas:
            # A topic created now: the ISR is the usable replicas, the leader the first of them.
            leader, isr = created_leader(f.replicas, self.acceptable(), self._shutting_down(),
                                         version=self.config.version)
            replayed = {"leader": leader, "isr": list(isr)}
            recorded = {"leader": f.leader, "isr": list(f.isr or [])}
            unseen = self._unseen_brokers(f.replicas)
            if unseen and created_leader(f.replicas, self.acceptable() | unseen, self._shutting_down(),
                                         version=self.config.version) != (leader, isr):
                self.comparisons.append(unknown(tp, ts, r, recorded, unseen_reason(unseen), replayed))
            else:
                self._judge(tp, f, recorded, replayed, "new partition (KRaft createTopics)")
        p = self.store.part(tp)
        self._set_replicas(p, f.replicas or (), ts)
        self.store.set_leader(p, f.leader)
        self.store.set(p, isr=tuple(f.isr or ()), leader_epoch=f.leader_epoch, zk_version=f.zk_version,
                       controller_epoch=f.controller_epoch)
        self.store.move(p, ONLINE if (f.leader or -1) >= 0 else OFFLINE, OBSERVED if snapshot else RECORDED, ts, r)
        self.elr[tp] = (tuple(f.elr or ()), tuple(f.last_known_elr or ()))
        self._show(p, ts, r, "recorded" if not snapshot else "observed")

    def _partition_change(self, f: F.PartitionChange) -> None:
        tp, r, ts = f.tp, f.ref, f.ts
        self._incarnation(tp, f.topic_id, ts, r)
        self.has_records = self.has_records or f.metadata_log
        p = self.parts.get(tp)
        changed = f.changed
        prev = f.previous
        decided: int | None = None  # the leader the replay elected for this change, where it judged one
        if not f.metadata_log and p is not None and p.leader_epoch is not None and f.leader_epoch is not None \
                and (f.leader_epoch, f.zk_version or 0) <= (p.leader_epoch, p.zk_version or 0):
            # A change no newer than the registration held: a controller loading its log logs each record it
            # replays ("UNCLEAN partition change for ...", PartitionRegistration.maybeLogPartitionChange from
            # ReplicationControlManager.replay, 3.9.0-rc3 / trunk), as history. Its leader is compared with the one
            # the replay gave that epoch, if it gave one; nothing is taken.
            given = self.epoch_decided.get(tp, {}).get(f.leader_epoch)
            if "leader" in f.changed and f.leader is not None and given is not None:
                self._restated(tp, f, f.leader, given)
            return
        held = None if p is None else (p.leader_epoch, p.leader, p.isr)
        if prev is not None and held != (prev["leader_epoch"], prev["leader"], tuple(prev["isr"])):
            # The change's own line states the registration it started from (4.x PartitionChangeBuilder): the step is
            # taken from there. A replay that already took it itself, at the line that began the controller's event
            # ("The request from broker N to unfence has been granted ...", then handleBrokerUnfenced's elections in
            # the same event), took it when the line says: the partition was led from the record on.
            mine = self.replayed_at.get((tp, held[0])) if held is not None and held[0] is not None else None
            if mine is not None and prev["leader_epoch"] is not None and held[0] == prev["leader_epoch"] + 1 \
                    and mine[0].after.get("leader") == f.leader:
                self.timeline.retime(tp, ts)
            p = self.store.part(tp)
            self._set_replicas(p, prev["replicas"], ts)
            self.store.set_leader(p, prev["leader"])
            self.store.set(p, isr=prev["isr"], leader_epoch=prev["leader_epoch"], zk_version=prev["partition_epoch"])
            self.elr[tp] = (prev["elr"], prev["last_known_elr"])
        if p is None or p.isr is None:
            if "leader" in changed:
                self.comparisons.append(unknown(tp, ts, r, {"leader": f.leader},
                                                "leader change: partition unknown before the record"))
            p = self.store.part(tp)
        else:
            target = tuple(f.isr) if f.isr is not None and "isr" in changed else p.isr
            step = broker_event_of(f.broker_events, p.isr, p.leader, self.elr.get(p.tp, ((), ()))[0])
            removed = frozenset({step[1]}) if step is not None and step[0] == REMOVE else frozenset()
            added = frozenset({step[1]}) if step is not None and step[0] == ADD else frozenset()
            if f.metadata_log:
                gone = set(removed)  # the log says which broker event the record was written for, if any
            else:
                gone = {b for b, t in self.recent_gone.items() if ts - t <= SAME_STEP_US}
            if "leader" in changed:
                ok = (self.acceptable() | added) - removed
                elr = self.elr.get(tp, ((), ()))[0]
                if f.elr is not None:
                    elr = f.elr
                # ELR is in use when the feature is on, or a registration holds ELR members (only KIP-966 fills them)
                # ... or the registration the line started from holds ELR or a last known leader, or an empty ISR, which
                # only the ELR rules write (3.9.0-rc3 PartitionChangeBuilder.build)
                elr_on = self.elr_enabled or f.elr is not None or bool(prev and (prev["elr"] or prev["last_known_elr"]
                                                                                  or not prev["isr"]))
                def elect(ok: frozenset[int]):
                    res = self._rule("kraft.election", p.replicas or p.isr, target, p.leader, ok, self._unclean(tp[0]),
                                     elr, elr_on, self.elr.get(tp, ((), ()))[1])  # lastKnownElr before this change
                    if res.how == "kept" and f.leader != res.leader and "isr" not in changed:
                        # Only a PREFERRED election (the periodic rebalance) moves leadership off a valid leader.
                        res = self._rule("kraft.election.preferred", p.replicas or p.isr, target, p.leader, ok, elr,
                                         elr_on)
                    return res

                res = elect(ok)
                recorded = {"leader": f.leader}
                replayed = {"leader": res.leader}
                unseen = self._unseen_brokers(p.replicas or p.isr) - removed
                if unseen and elect(ok | unseen).leader != res.leader:
                    self.comparisons.append(unknown(tp, ts, r, recorded, unseen_reason(unseen), replayed))
                else:
                    self._judge(tp, f, recorded, replayed, f"PartitionChangeBuilder ({res.how})")
                    decided = res.leader
                if f.leader is not None and f.leader >= 0 and f.leader not in p.isr and f.leader not in target:
                    self._unclean_record(p, f)
                elif res.how == "unclean" and f.leader == res.leader:
                    self._unclean_record(p, f)
                if f.leader == -1:
                    self.failed_elections.setdefault(tp, []).append(r)
            elif "isr" in changed and gone & set(p.isr):
                # The controller took a fenced / shutting-down broker out of the ISR (no leader change).
                replayed = {"isr": list(self._rule("kraft.isr_shrink", p.isr, gone, self.elr_enabled or f.elr is not None))}
                self._judge(tp, f, {"isr": list(f.isr or [])}, replayed, "ISR shrink on fence / shutdown")
        if f.replicas is not None and "replicas" in changed:
            self._set_replicas(p, f.replicas, ts)
        store = self.store
        if "leader" in changed and f.leader is not None:
            store.set_leader(p, f.leader)
            store.set(p, leader_epoch=None if p.leader_epoch is None else p.leader_epoch + 1)
            if decided is not None and p.leader_epoch is not None:
                # the new leader epoch of a judged change: a broker's line of it is compared with the same election
                self.epoch_decided.setdefault(tp, {})[p.leader_epoch] = decided
        if "isr" in changed and f.isr is not None:
            store.set(p, isr=tuple(f.isr))
        store.adopt(p, leader_epoch=f.leader_epoch, zk_version=f.zk_version, controller_epoch=f.controller_epoch)
        if f.elr is not None or f.last_known_elr is not None:
            old = self.elr.get(tp, ((), ()))
            self.elr[tp] = (f.elr if f.elr is not None else old[0],
                            f.last_known_elr if f.last_known_elr is not None else old[1])
        store.move(p, ONLINE if p.leader is not None and p.leader >= 0 else OFFLINE, RECORDED, ts, r)
        self._show(p, ts, r, "recorded")

    def _isr_updated(self, f: F.LeaderIsrChange) -> None:
        """The leader's AlterPartition, accepted by the controller ("ISR updated to 1,2 and version updated to 111",
        kafka.cluster.Partition): the ISR the controller holds from then on, until a newer partition epoch."""
        tp = f.tp
        p = self.parts.get(tp)
        if p is None or (f.zk_version is not None and p.zk_version is not None and f.zk_version < p.zk_version):
            return
        self.store.adopt(p, isr=f.isr, zk_version=f.zk_version)
        if f.zk_version is not None:
            self.replayed_since[tp] = 0
        self._show(p, f.ts, f.ref, "recorded")

    def _unclean_record(self, p: PState, f: F.PartitionChange) -> None:
        self._seq += 1
        d = Decision(self._seq, f.ts, p.tp, "election", "UNCLEAN", f.ref,
                     p.snapshot(), {"leader": f.leader, "isr": list(f.isr or [f.leader])}, unclean=True,
                     status="agreed", record=f.ref)
        self.unclean_elections.append(d)
        self.decisions.append(d)

    def _unseen_brokers(self, brokers) -> frozenset[int]:
        """Replicas no fact has spoken of yet (registration, fencing, a liveness line): their state when the evidence
        began is not in it."""
        return frozenset(b for b in brokers if b >= 0 and b not in self.known_brokers and b not in self.registered
                         and b not in self.fenced)

    def _judge(self, tp: F.TP, f: F.Fact, recorded: dict, replayed: dict, how: str) -> None:
        r = f.ref
        c = judge_kraft(tp, f.ts, r, recorded, replayed, how)
        self.comparisons.append(c)
        if c.agreed and isinstance(f, F.ObservedState) and f.leader_epoch is not None and "leader" in replayed:
            self.epoch_decided.setdefault(tp, {})[f.leader_epoch] = replayed["leader"]
        self._seq += 1
        self.decisions.append(Decision(self._seq, f.ts, tp, "election" if "leader" in replayed else "isr_removal",
                                       how, r, {}, replayed, status=c.verdict, record=r))

    # ------------------------------------------------------------------ observations

    def _registration_observed(self, f: F.BrokerRegistrationObserved) -> None:
        self.registered[f.broker] = f.epoch
        self.known_brokers.add(f.broker)

    def _observation(self, f: F.ObservedState) -> None:
        self._incarnation(f.tp, f.topic_id, f.ts, f.ref)
        if f.initial:
            self._learn_partition(f)
        else:
            self._observed(f)

    def _learn_partition(self, f: F.ObservedState) -> None:
        """A registration a controller re-states while loading the metadata log."""
        p = self.store.part(f.tp)
        self._set_replicas(p, f.replicas, f.ts)
        if f.leader_epoch is not None and f.isr is not None and (
                p.leader_epoch is None or f.leader_epoch >= p.leader_epoch):
            # A controller loading the metadata log re-states the registration: as new as anything the
            # replay knows (same or higher leader epoch), it is the partition's state now
            self.store.set_leader(p, f.leader)
            self.store.set(p, isr=tuple(f.isr), leader_epoch=f.leader_epoch)
            self.store.adopt(p, zk_version=f.zk_version)
            self.store.move(p, ONLINE if (f.leader if f.leader is not None else -1) >= 0 else OFFLINE,
                            OBSERVED, f.ts, f.ref)
            self._show(p, f.ts, f.ref, "observed")
            if f.snapshot is not None:
                self.from_snapshot[f.tp] = (f.snapshot, f.leader_epoch, f.ref.broker, f.ts)
            else:
                self.from_snapshot.pop(f.tp, None)  # restated from the log after a snapshot: of no known epoch

    # ------------------------------------------------------------------ log-only evidence

    def _replay_leaving(self, b: int, f: F.Fact) -> None:
        """No metadata log: the controller's moves for a broker that was fenced or is shutting down."""
        ok = self.acceptable()
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.isr is None and p.leader == b and p.leader_epoch is not None:
                # The leader left: the controller wrote a new leader epoch (brokerToRemove is never kept as leader,
                # 3.9 PartitionChangeBuilder) that the replay cannot derive with the ISR unknown. Lines stating
                # older epochs after this are brokers lagging behind it, not the partition's state.
                self.min_epoch[tp] = max(self.min_epoch.get(tp, 0), p.leader_epoch + 1)
            if p.isr is None or b not in set(p.isr) | {p.leader} or self._behind(p):
                continue
            target = self._rule("kraft.isr_shrink", p.isr, {b}, self.elr_enabled)
            res = self._rule("kraft.election", p.replicas or p.isr, target, p.leader, ok, self._unclean(tp[0]), (), self.elr_enabled)
            # generateLeaderAndIsrUpdates' target ISR is the ISR without the broker (Replicas.copyWithout), even
            # where it is left unwritten
            self._apply_replayed(p, f, res.leader, res.isr, res.how == "unclean", tuple(r for r in p.isr if r != b))

    def _behind(self, p: PState) -> bool:
        """The registration held is older than a change the replay knows was made but could not derive."""
        return p.leader_epoch is not None and p.leader_epoch < self.min_epoch.get(p.tp, -1)

    def _replay_unfence(self, f: F.Fact) -> None:
        ok = self.acceptable()
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.leader is not None and p.leader < 0 and p.isr is not None and not self._behind(p):
                res = self._rule("kraft.election", p.replicas or p.isr, p.isr, None, ok, self._unclean(tp[0]), (), self.elr_enabled)
                if res.leader >= 0:
                    self._apply_replayed(p, f, res.leader, res.isr, res.how == "unclean")

    def _apply_replayed(self, p: PState, f: F.Fact, leader: int, isr, unclean: bool, target=None) -> None:
        bump = self._rule("kraft.leader_epoch_bump", p.leader, p.isr, leader, isr, target)
        if bump is None:
            return  # the controller writes no record for a change that changes nothing
        le = p.leader_epoch + 1 if bump and p.leader_epoch is not None else p.leader_epoch
        state = ONLINE if leader >= 0 else OFFLINE
        change = Change(leader, tuple(isr), le, state=state, attempted=state, failed_election=leader < 0)
        before = p.snapshot()
        if not self.store.apply_decision(p, change, f.ts, f.ref):
            return
        self.replayed_since[p.tp] = self.replayed_since.get(p.tp, 0) + 1
        self.epoch_known_at[p.tp] = f.ts
        if p.leader_epoch is not None and bump:
            self.epoch_decided.setdefault(p.tp, {})[p.leader_epoch] = leader
        if p.leader_epoch is not None:
            self.epoch_first_seen.setdefault(p.tp, {}).setdefault(p.leader_epoch, f.ts)
        self._seq += 1
        d = Decision(self._seq, f.ts, p.tp, "election" if leader >= 0 else "election_failed", "KRaft (replayed)",
                     f.ref, before, {"leader": leader, "isr": list(isr), "leader_epoch": p.leader_epoch},
                     unclean=unclean, status="applied", change=change)
        self.decisions.append(d)
        if p.leader_epoch is not None and bump:
            pe = None if p.zk_version is None else p.zk_version + self.replayed_since[p.tp]
            self.replayed_at[(p.tp, p.leader_epoch)] = (d, pe, self.acceptable(), self._unclean(p.tp[0]),
                                                        dict(self.liveness_at))
            self.replayed_epochs.add((p.tp, p.leader_epoch))
        if unclean:
            self.unclean_elections.append(d)
        if leader < 0:
            self.failed_elections.setdefault(p.tp, []).append(f.ref)
        self._show(p, f.ts, f.ref, "replayed")

    def _unknown(self, p: PState, f: F.ObservedState, leader: int | None, why: str) -> None:
        seen = self.epoch_first_seen.get(p.tp, {})
        first = f.leader_epoch is not None and seen.get(f.leader_epoch) == f.ts
        if why.startswith(UNSEEN_STEPS) or why.startswith(RESTATED) or why == UNKNOWN_BEFORE:
            # The steps were decided after the state the replay holds; if the evidence lost a stretch since, they
            # may lie in it: an evidence gap, not a record the evidence could have judged. A restated epoch was
            # decided before the first line stating it and after the last earlier epoch the evidence shows; a
            # partition no line named before had its registration set at some time before the line, since the
            # evidence began or before it.
            until, loaded = f.ts, self.from_snapshot.get(p.tp)
            if why == UNKNOWN_BEFORE:
                since = self.began
            elif why.startswith(UNSEEN_STEPS):
                since = seen.get(p.leader_epoch, self.epoch_known_at.get(p.tp))
            else:
                until = seen.get(f.leader_epoch, f.ts)
                at = max((e for e in seen if e < f.leader_epoch and seen[e] <= until), default=None)
                since = seen.get(at)
                loaded = self.snapshot_before.get((p.tp, f.leader_epoch))
            h = hole_between(self.holes, since, until)
            if h is not None:
                why = (f"{EVIDENCE_GAP} (quorum epochs {h[2]}-{h[3]}, {iso_utc(h[0])} to {iso_utc(h[1])}, are in no "
                       f"line: {why})")
            elif loaded is not None and not why == UNKNOWN_BEFORE:
                why = self._after_snapshot(loaded, until, why)
        self.comparisons.append(unknown(p.tp, f.ts, f.ref, {"leader": leader}, why))

    def _after_snapshot(self, loaded: tuple, until: int, why: str) -> str:
        """Why a leader epoch stated after a registration the replay took from a snapshot load is unjudged.

        The registration dates from the snapshot, not from the line restating it: the changes after it are records
        past the snapshot's offset, so written in its quorum epoch or later, and a controller loading the log
        replays them at DEBUG (3.9.0-rc3 / trunk ReplicationControlManager.replay(PartitionChangeRecord)). Quorum
        epochs from the snapshot's on that no line names (:func:`quorum_epoch_holes`) are a stretch the evidence
        lost in which they may have been written: an evidence gap. With none, the steps had witnesses and the
        record stays unjudged."""
        (offset, epoch), _, controller, at = loaded
        h = hole_since_quorum_epoch(self.holes, epoch, until)
        if h is None:
            return why
        return (f"{EVIDENCE_GAP} (after snapshot {offset}-{epoch}: the registration held is the one controller "
                f"{controller} loaded from it, the changes since are replayed at DEBUG, and quorum "
                f"epochs {max(h[2], epoch)}-{h[3]}, {iso_utc(h[0])} to {iso_utc(h[1])}, from the snapshot's on are in "
                f"no line: {why})")

    def _up_between(self, b: int, since: int, until: int) -> str | None:
        """The first period in which broker ``b`` was acceptable overlapping (since, until], as text, if any."""
        for per in self.periods.get(b, []):
            if per.state == "up" and per.start is not None and per.start <= until \
                    and (per.end is None or per.end > since):
                return f"up from {iso_utc(per.start)}" + (f" to {iso_utc(per.end)}" if per.end is not None else "")
        return None

    def _point_none_acceptable(self, p: PState, f: F.ObservedState, leader: int, known: set[int],
                               unjudged: str) -> None:
        """A stated epoch while the replay holds no broker acceptable: the version's election over any replicas
        and ISR gives no leader. A stated leader is judged by it too, unless that broker was acceptable at some time
        since the epoch before was known (a broker applies a delta of records at once: the epoch may have been
        decided then) or the evidence lost the lines of its return."""
        if leader >= 0:
            since = self.epoch_known_at.get(p.tp)
            if since is None:
                self._unknown(p, f, leader, unjudged)
                return
            up = self._up_between(leader, since, f.ts)
            if up is not None:
                self._unknown(p, f, leader, f"leader epoch: decided while broker {leader} was acceptable ({up}), "
                                            "before the liveness held at the line")
                return
        order = tuple(sorted(known))
        want = self._rule("kraft.election", order, order, None, frozenset(), self._unclean(p.tp[0]), (),
                          self.elr_enabled).leader
        if want != leader:
            stale = self._stale_liveness(leader, want, self.acceptable(), f.ts, self.liveness_at)
            if stale is None:
                # A KRaft controller elects only an acceptable broker (3.9 PartitionChangeBuilder isAcceptableLeader):
                # a stated leader the replay holds fenced or shutting down came back in lines the evidence lost.
                since_l = self.liveness_at.get(leader)
                stale = (f"{EVIDENCE_GAP} (broker {leader} leads at this epoch, so it was acceptable, but the "
                         f"evidence holds it fenced or shutting down from "
                         f"{iso_utc(since_l) if since_l is not None else 'the start'} with no line of its return)")
            self._unknown(p, f, leader, stale)
            return
        self._judge(p.tp, f, {"leader": leader}, {"leader": want},
                    "point: no known broker acceptable (isAcceptableLeader), whatever the replicas and ISR")

    def _point(self, p: PState, f: F.ObservedState, leader: int) -> None:
        """A stated leader epoch the replay did not reach itself: re-derived from the registration before it."""
        decided = (p.tp, f.leader_epoch) in self.replayed_epochs
        epoch, was, isr, replicas = p.leader_epoch, p.leader, p.isr, p.replicas
        unseen = unseen_partition_changes(p.zk_version, self.replayed_since.get(p.tp, 0), f.zk_version)
        skipped = self.before_skip.get(p.tp)
        if skipped is not None and epoch == f.leader_epoch and skipped[0] is not None and skipped[0] + 1 == epoch:
            epoch, was, isr, replicas = skipped  # the epoch was first seen in another broker's 'Skipped' line
        if not decided and previous_from_leader_line(f.previous, f.leader_epoch, epoch):
            # the new leader's own line names the leader of the epoch just before; the ISR then is not stated
            epoch, was, isr, unseen = f.previous[1], f.previous[0], None, None
        if epoch is None or f.leader_epoch != epoch + 1 or was is None or decided:
            held = self.epoch_decided.get(p.tp, {}).get(f.leader_epoch)
            if held is not None and epoch is not None and f.leader_epoch <= epoch:
                self._restated(p.tp, f, leader, held)
                return
            known = set(self.registered) | self.fenced | self.cs
            if not decided and no_broker_acceptable(self.acceptable(), known, self.elr_enabled):
                self._point_none_acceptable(p, f, leader, known, unjudged_epoch_reason(epoch, f.leader_epoch, False))
                return
            self._unknown(p, f, leader, unjudged_epoch_reason(epoch, f.leader_epoch, decided))
            return
        # Where the replay knows no other replica to be acceptable, the outcome follows from ISR membership alone:
        # the comparison says so (the liveness it rests on is the replay's, from fence / shutdown / unfence lines).
        others = set(replicas or isr or ()) - {was, leader}
        alone = "" if others & self.acceptable() else "; no other replica known acceptable"
        if unseen or not isr:
            why = f"{unseen} ISR-only partition change(s) before it are in no line" if unseen else "not in the evidence"
            if stated_leader_whatever_the_isr(replicas, was, leader, self.acceptable(), self._unclean(p.tp[0])):
                self._judge(p.tp, f, {"leader": leader}, {"leader": leader},
                            f"point: elected whatever the ISR ({why}{alone})")
            else:
                self._unknown(p, f, leader, f"leader epoch: ISR unknown ({why})")
            return
        want, how = rederive_stated_leader(replicas, isr, was, leader, self.acceptable(), self._unclean(p.tp[0]),
                                           self.elr_enabled, version=self.config.version)
        stale = None if want == leader else self._stale_liveness(leader, want, self.acceptable(), f.ts,
                                                                 self.liveness_at)
        if stale is not None:
            self._unknown(p, f, leader, stale)
            return
        self._judge(p.tp, f, {"leader": leader}, {"leader": want}, f"point: {how}{alone}")
        if want == leader and was >= 0 and leader != was and "left" in how:
            # the step that moved leadership took the old leader out of the ISR (brokerToRemove), unless a
            # preferred election, which keeps the ISR, explains the move as well
            self.store.set(p, isr=isr_after_leader_left(replicas, isr, was, leader, self.acceptable(), self.elr_enabled,
                                                        version=self.config.version))

    def _restated(self, tp: F.TP, f: F.ObservedState | F.PartitionChange, leader: int, held: int) -> None:
        """A leader epoch stated again after the replay knew it (or a later one): a broker applying the registration
        anew, as a broker does for every partition it hosts when it loads the metadata image at start-up (3.5.1 ..
        4.x ``ReplicaManager.applyDelta``: "Creating new partition ...", then Partition.makeLeader / makeFollower log
        the epoch the image holds). One leader epoch has one leader (every leader change raises it,
        PartitionChangeBuilder.build), so the line is compared with the leader the replay gave that epoch: its own
        decision, or the one it re-derived at the epoch's first line (``epoch_decided``); an epoch only observed
        before is left to _unknown."""
        self.comparisons.append(judge_kraft(tp, f.ts, f.ref, {"leader": leader}, {"leader": held},
                                            "the leader the replay gave this leader epoch (stated again, or the record's epoch taken up)"))

    def _stale_liveness(self, recorded: int, replayed: int | None, acceptable: frozenset[int], ts: int,
                        liveness_at: dict[int, int]) -> str | None:
        """Why a leader the record and the replay disagree on rests on liveness the evidence lost, if it does.

        An elected leader was acceptable when elected (isAcceptableLeader: registered, unfenced, not shutting down);
        a broker the replay elected and the controller passed over was not. Where the replay held the other view of
        that broker from a line older than a stretch the evidence lost (:func:`quorum_epoch_holes`), its
        registration changed in that stretch: the record shows a state the replay never saw."""
        view = self.controller_view
        if view is None or not view[0] <= ts <= view[1]:
            # no quorum controller's line and no metadata log: fencing (a broker killed misses its heartbeats,
            # BrokerHeartbeatManager) is known only from brokers' own lines, and a killed broker writes none
            flipped = [b for b, held in ((recorded, False), (replayed, True))
                       if b is not None and b >= 0 and (b in acceptable) == held]
            if flipped:
                return (f"{EVIDENCE_GAP} (whether broker(s) {', '.join(map(str, sorted(flipped)))} were acceptable "
                        "to the controller (unfenced, not shutting down) is not in the evidence: no quorum "
                        "controller's log and no metadata log at this time)")
        for b, held in ((recorded, "fenced or shutting down"), (replayed, "acceptable")):
            if b is None or b < 0 or (b in acceptable) != (held == "acceptable"):
                continue
            h = hole_between(self.holes, liveness_at.get(b, -1), ts)
            if h is not None:
                since = liveness_at.get(b)
                return (f"{EVIDENCE_GAP} (broker {b}, held {held} from "
                        f"{iso_utc(since) if since is not None else 'the start'}, across quorum epochs {h[2]}-{h[3]}, "
                        f"{iso_utc(h[0])} to {iso_utc(h[1])}, that are in no line)")
        return None

    def _judge_replayed(self, tp: F.TP, f: F.ObservedState, leader: int, d: Decision, pe: int | None,
                        acceptable: frozenset[int], unclean: bool, seen: dict[int, int]) -> None:
        """A broker's line at the leader epoch one of the replay's own decisions reached, judged against it.

        A line stating a later partition epoch than the decision wrote may follow ISR-only changes no line shows
        (AlterPartition by the leader), before the decision as well as after: the decision then rests on an ISR the
        replay did not know, and is judged only if its outcome holds whatever that ISR was (as :meth:`_point`)."""
        unseen = unseen_partition_changes(pe, 0, f.zk_version) if pe is not None else None
        c = None
        if unseen:
            was, replicas = d.before.get("leader"), d.before.get("replicas")
            if was is not None and stated_leader_whatever_the_isr(replicas, was, leader, acceptable, unclean):
                c = judge_kraft(tp, f.ts, f.ref, {"leader": leader}, {"leader": leader},
                                f"broker's own view of the replayed decision: elected whatever the ISR ({unseen} "
                                f"partition change(s) up to it are in no line)")
            else:
                self._unknown(self.store.part(tp), f, leader, f"leader epoch: ISR unknown ({unseen} ISR-only "
                                                                  f"partition change(s) up to it are in no line)")
                return
        if c is None:
            c = judge_kraft(tp, f.ts, f.ref, {"leader": leader}, {"leader": d.after.get("leader")},
                            "broker's own view of the replayed decision")
            stale = None if c.agreed else self._stale_liveness(leader, d.after.get("leader"), acceptable, d.ts, seen)
            if stale is not None:
                self.comparisons.append(unknown(tp, f.ts, f.ref, {"leader": leader}, stale))
                return
        self.comparisons.append(c)
        d.status = c.verdict
        if c.agreed and f.leader_epoch is not None:
            self.epoch_decided.setdefault(tp, {})[f.leader_epoch] = leader

    def _observed(self, f: F.ObservedState) -> None:
        """A broker says it became leader/follower: the controller's decision, as delivered."""
        tp = f.tp
        p = self.store.part(tp)
        leader = f.leader
        if leader is None:
            if not self.has_records and f.leader_epoch is not None:
                self._unknown(p, f, None, "leader epoch: the line does not name the leader")
            return
        if f.leader_epoch is not None:
            if f.leader_epoch not in self.epoch_first_seen.get(tp, {}) and tp in self.from_snapshot:
                # first stated while the registration held came from a snapshot load
                self.snapshot_before[(tp, f.leader_epoch)] = self.from_snapshot[tp]
            self.epoch_first_seen.setdefault(tp, {}).setdefault(f.leader_epoch, f.ts)
        mine = self.replayed_at.get((tp, f.leader_epoch)) if f.leader_epoch is not None else None
        judged = not self.has_records and mine is not None and mine[0].status == "applied"
        created = not judged and not self.has_records and f.became is not None and (p.replicas or f.replicas) \
            and states_the_creation(f.leader_epoch, f.zk_version) \
            and self.epoch_first_seen[tp].get(f.leader_epoch) == f.ts
        if created:
            # the first line stating the registration createTopics wrote: judged by the creation rule
            want, _ = created_leader(f.replicas or p.replicas, self.acceptable(), self._shutting_down(),
                                     version=self.config.version)
            self._judge(tp, f, {"leader": leader}, {"leader": want},
                        "point: the broker's own view of the created partition (KRaft createTopics)")
        elif not judged and not self.has_records and f.leader_epoch is not None and f.became is not None:
            self._point(p, f, leader)  # a new leader epoch the broker started (not a LeaderAndIsr request received)
        if judged:
            # The broker states the outcome of the very decision the replay took (same leader epoch).
            self._judge_replayed(tp, f, leader, *mine)
        stated = self.stated_epoch.get(tp)
        # The epoch right after the one known, its leader not seen leaving since: the election the line states
        # came after everything the replay knows of that leader
        next_epoch = f.leader_epoch is not None and p.leader_epoch is not None and f.leader_epoch == p.leader_epoch + 1 \
            and leader >= 0 and self.recent_gone.get(leader, -1) <= self.epoch_known_at.get(tp, -1)
        if f.leader_epoch is not None and f.leader_epoch < self.min_epoch.get(tp, -1):
            return  # a broker behind a step the replay knows was taken (see _replay_leaving)
        if f.leader_epoch is not None and p.leader_epoch is not None and (f.leader_epoch, f.zk_version or 0) \
                < (p.leader_epoch, p.zk_version or 0) and (stated is None or f.leader_epoch < stated[0]
                                                           or p.leader_epoch <= stated[0]
                                                           or stated_within_replayed(p.zk_version, f.zk_version,
                                                                                     self.replayed_since.get(tp, 0))):
            return  # older than the registration known (leader epoch, then partition epoch)
        # A broker stating an epoch below what only the replay's own steps reached: those steps were not what the
        # controller committed (no broker ever states them); the broker's registration is taken instead.
        if f.leader_epoch is not None and (stated is None or f.leader_epoch >= stated[0]):
            self.stated_epoch[tp] = (f.leader_epoch, f.zk_version)
        if f.skipped and f.leader_epoch is not None and p.leader_epoch is not None \
                and f.leader_epoch > p.leader_epoch:
            # a broker already at a newer epoch: the registration before it stays at hand for the line stating it
            self.before_skip[tp] = (p.leader_epoch, p.leader, p.isr, p.replicas)
        if f.isr is None and (unseen_partition_changes(p.zk_version, self.replayed_since.get(tp, 0), f.zk_version)
                              or (p.leader_epoch is not None and f.leader_epoch is not None
                                  and f.leader_epoch > p.leader_epoch + 1)):
            self.store.set(p, isr=None)  # the line does not state the ISR, and unseen changes came before it
        self.store.adopt(p, leader, f.isr, f.leader_epoch, zk_version=f.zk_version, replicas=f.replicas, ts=f.ts)
        self.from_snapshot.pop(tp, None)  # the registration is now one a line states
        if f.leader_epoch is not None and f.leader_epoch == p.leader_epoch:
            self.epoch_known_at[tp] = f.ts
        if f.zk_version is not None:
            self.replayed_since[tp] = 0
        b = f.ref.broker  # the broker whose log states it
        own = f.became == "leader" and b is not None and leader == b
        if (own or f.became == "follower" and next_epoch) and not self.has_records \
                and (leader in self.fenced or leader in self.cs or leader not in self.registered) \
                and not (mine is not None and mine[0].after.get("leader") == leader):
            # elected at this new epoch, so active then (isAcceptableLeader: registered, unfenced, not shutting down);
            # a follower's line names the leader of the epoch it starts just as the leader's own line does. A line
            # stating the very leader the replay elected at that epoch is a broker applying, late, a decision taken
            # while that leader was acceptable: it says nothing of the leader now (it may be shutting down since).
            self.inferred.append(liveness_key(f))
            self._leader_active(leader, f.ts, f.ref)
        self.store.move(p, ONLINE if leader >= 0 else OFFLINE, OBSERVED, f.ts, f.ref)
        self._show(p, f.ts, f.ref, "observed")
