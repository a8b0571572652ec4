"""The ZooKeeper-mode controller, re-run over facts in order (one event queue, one thread, as in Kafka).

For each input the loop does what ``KafkaController`` does (onBrokerStartup,
onBrokerFailure, onControllerFailover, topic creation, controlled shutdown,
preferred election, reassignment), calling the pure election functions, and
produces :class:`Decision` records. The cluster's own records (state-znode
writes, ``Changed partition`` lines, failed elections) are then compared with
those decisions, and the timeline follows the record: the replay fills in
only where nothing was recorded. Every disagreement is a divergence with
evidence on both sides.

Decisions are data (``_propose*``); the apply module (``replay_engine.apply``) is the
only writer of partition state; the judge (``replay_engine.judge``) compares records
with decisions; the mode (``replay_engine.modes``) says how records are used.
See docs/replay.md.
"""
from __future__ import annotations

from typing import AbstractSet, Any, Callable

from replay_engine import elections as E
from replay_engine import facts as F
from replay_engine import rules as R
from replay_engine import judge as J
from replay_engine.brokers import RULE_SHUTDOWN_TAKEN, BrokerStates
from replay_engine.apply import DECIDED, OBSERVED, RECORDED, PartitionStore
from replay_engine.config import UNCLEAN, ConfigImage, ConfigState, as_bool, parse_version
from replay_engine.decide import WRITES, change_for
from replay_engine.frozen import FrozenMap
from replay_engine.from_events import Coverage
from replay_engine.modes import CounterfactualMode, ZkRecordsMode, mode_for
from replay_engine.partition import UNKNOWN, Decision, PState, Tenure
from replay_engine.roles import Router
from replay_engine.states import NEW, NON_EXISTENT, OFFLINE, ONLINE
from replay_engine.timeline import TimelineBuilder, View
from replay_engine.zk_inference import NAMES_ANOTHER, STALE, acting, implied_liveness

class ZkControllerReplay:
    def __init__(self, config: ConfigState, coverage: Coverage | None = None, mode: ZkRecordsMode | None = None):
        """``mode``: how records are used (see replay_engine.modes); by default, following them, with
        ZooKeeper's log when ``coverage`` holds it. In a what-if topology (``CounterfactualMode.rewrite``)
        followers of a rewritten partition are assumed to keep up, so ISR = live replicas of the new AR."""
        self.config = config
        self.mode = mode if mode is not None else mode_for(coverage)
        self.coverage = self.mode.coverage(coverage)
        self.rewrite = dict(self.mode.rewrite) if isinstance(self.mode, CounterfactualMode) else {}
        self.next_rebalance: int | None = None
        # Every broker's state (registered, live to the controller, shutting down, stopping, stopped, epochs, log
        # dirs, periods), each change with its provenance: written only there (replay_engine.brokers).
        self.brokers = BrokerStates()
        # topic -> its deletions: (the record that began one, when it ended or None). One ends when the topic is
        # gone, or when another controller takes over (it re-reads the queue and says so if the topic is in it).
        self.deletions: dict[str, list[tuple[F.Ref, int | None]]] = {}
        self.deletion_halts: dict[str, list[tuple[F.Ref, str | None]]] = {}  # topic -> (line, reason) of each hold
        self.after_hole = False  # ZooKeeper's data had a hole: records on states not seen since are evidence gaps
        self.hidden: set[F.TP] = set()  # partitions that existed before a hole, their state since unknown
        self.covered_before: int | None = None  # the first zxid after the last hole a snapshot covered
        self.controller: int | None = None
        self.controller_epoch: int | None = None
        # a controller elected whose failover waits for its logged view of live brokers (see _controller_elected)
        self.failover_waiting: F.ControllerElected | None = None
        # The partitions, who leads which, and their assignments over time: written only by the apply module.
        self.store = PartitionStore(findings=[])
        self.parts = self.store.parts
        self.led_by = self.store.led_by
        self.ar_history = self.store.ar_history
        self.part: Callable[[F.TP], PState] = self.store.part
        self.timeline = TimelineBuilder()
        # What the timeline shows: confirmed state only (records, observations, decisions where no record
        # is expected). The replay's own belief (self.parts) may run ahead of it until the record arrives.
        self.shown: dict[F.TP, View] = {}
        self.shown_led_by: dict[int, set[F.TP]] = {}
        self.pending = J.Pending()
        self.decisions: list[Decision] = []
        self.comparisons: list[J.Comparison] = []  # one per record judged, whatever the verdict
        self.preferred_requested: dict[F.TP, int] = {}  # partition -> when a preferred election was asked
        self._preferred_asks = 0  # how many times it was written (the judge's view holds a copy)
        self._view_key: tuple | None = None
        self._view: J.JudgeView | None = None
        self.tenures: list[Tenure] = []
        self.evidence_by_broker: dict[int, list[F.Ref]] = {}
        self.evidence_by_tp: dict[F.TP, list[F.Ref]] = {}
        self.failed_elections: dict[F.TP, list[F.Ref]] = {}
        # partition -> controller epoch of its last record logged under an epoch below the one known (logs only)
        self.below_epoch: dict[F.TP, int] = {}
        self.unclean_elections: list[Decision] = []
        self.findings: list[dict[str, Any]] = self.store.findings
        self.config_history: list[tuple[int, ConfigImage]] = [(0, config.image())]
        self.now = 0
        self._seq = 0
        self._inferring = False
        # Each fact goes to its role's handler (replay_engine.roles); the mode chooses what records and
        # observations do: judged and followed, or (counterfactual) only seeding what the replay does not know.
        follow = self.mode.follows_records
        self.router = Router(
            inputs={
                F.BrokerUp: self._broker_up,
                F.BrokerDown: self._broker_down,
                F.LiveSet: self._live_set,
                F.ControllerElected: self._controller_elected,
                F.ControllerGone: self._controller_gone,
                F.TopicAssignment: self._topic_assignment,
                F.TopicGone: self._topic_gone,
                F.TopicConfig: self._topic_config,
                F.BrokerConfig: self._broker_config,
                F.KafkaVersion: self._kafka_version,
                F.LeaderIsrChange: self._leader_isr_change,
                F.ControlledShutdownRequest: self._controlled_shutdown,
                F.PreferredElectionRequest: self._preferred_request,
                F.ReassignmentRequest: self._reassignment_request,
                F.TopicDeletionRequest: self._deletion_request,
                F.ReassignAway: self._reassign_away,
                F.BrokerStopped: self._broker_stopped,
                F.ReplicasOffline: self._replicas_offline,
                F.ReplicasOnline: self._replicas_online,
                F.ZkHole: self._hole,
            },
            records={
                F.RecordedState: self._recorded_state if follow else self._seed_from_record,
                F.RecordedFailedElection: self._recorded_failed if follow else self._seed_from_failed,
                F.RecordHint: self._record_hint,
            },
            observations={F.ObservedState: self._observed if follow else self._seed_from_observation},
            evidence={F.Evidence: self._evidence, F.TopicDeletionHalted: self._deletion_halted},
        )
        # Shard mode (replay_engine.shard): how the cluster-wide state evolved, to check that every shard
        # saw the same cluster. None = not recorded.
        self.journal: list[tuple] | None = None
        self._journal_last: tuple | None = None  # the cluster-wide state last journaled (``start``, ``step``)
        self._timers = self.mode.fires_timers

    # ------------------------------------------------------------------ running

    def run(self, facts: list[F.Fact], trace_end: int | None = None) -> None:
        self.start()
        step = self.step
        for fact in facts:
            step(fact)
        self.finish(trace_end)

    def start(self) -> None:
        """Before the first ``step`` (``run`` is start, a step per fact in order, finish): the journal's first state."""
        self._journal_last = self._cluster_state() if self.journal is not None else None
        self._timers = self.mode.fires_timers

    def step(self, fact: F.Fact) -> None:
        """One fact, as the controller's single event thread takes it."""
        if self._timers:
            self._fire_timers(fact.ts)
        if fact.ts > self.now:
            self.now = fact.ts
        if self.failover_waiting is not None and not isinstance(fact, (F.LiveSet, F.Evidence)):
            self._failover(self.failover_waiting)
        self.router.route(fact)
        journal = self.journal
        if journal is not None:
            now = self._cluster_state()
            if now != self._journal_last:
                r = fact.ref
                journal.append((fact.ts, r.source_file, r.source_pos, r.event, now))
                self._journal_last = now

    def skip_to(self, ts: int | None) -> None:
        """Time reaches ``ts`` without a fact: a record phase 1 foresaw changes nothing
        (``replay_engine.cluster_pass.inert``), taken only where no timer runs, as ``step`` takes time."""
        if ts is not None and ts > self.now:
            self.now = ts

    def finish(self, trace_end: int | None = None) -> None:
        end = trace_end if trace_end is not None else self.now
        if self._timers:
            self._fire_timers(end)
        self.pending.resolve_unconfirmed()

    # ------------------------------------------------------------------ helpers

    def unseen(self, brokers) -> frozenset[int]:
        return self.brokers.unseen(brokers)

    def online(self, b: int) -> bool:
        return self.brokers.online(b)

    def online_set(self, tp: F.TP | None = None) -> frozenset[int]:
        return self.brokers.online_set(tp)

    # What readers of a finished replay (the image) and the judge read of the brokers (replay_engine.brokers)
    @property
    def live(self) -> AbstractSet[int]:
        return self.brokers.live

    @property
    def shutting(self) -> AbstractSet[int]:
        return self.brokers.shutting

    @property
    def known_brokers(self) -> AbstractSet[int]:
        return self.brokers.known

    @property
    def periods(self) -> dict[int, list]:
        return self.brokers.periods

    @property
    def offline_replicas(self) -> dict[int, set[F.TP]]:
        return self.brokers.offline_replicas

    def judge_view(self) -> J.JudgeView:
        """The frozen view the judge reads at a record: the brokers as the acting controller sees them, and the rules
        in force. Built again only when one of them changed since the last record."""
        t = self.tenures[-1] if self.tenures else None
        key = (self.brokers.writes, self.controller, self.controller_epoch, len(self.tenures),
               t is not None and t.end is None, len(self.config_history), self._preferred_asks)
        if key != self._view_key:
            self._view_key, self._view = key, self._build_judge_view()
        return self._view

    def _build_judge_view(self) -> J.JudgeView:
        brokers = self.brokers
        t = self.tenures[-1] if self.tenures and self.tenures[-1].end is None else None
        inherited = t is None or t.start_ref is None or t.start_ref.event == "inferred_controller"
        return J.JudgeView(
            self.controller, frozenset(brokers.live), frozenset(brokers.shutting), brokers.online_set(),
            FrozenMap({b: frozenset(tps) for b, tps in brokers.offline_replicas.items()}),
            None if brokers.membership_stated else frozenset(brokers.seen),
            brokers.versions.get(self.controller, self.config.version), self.config.image(),
            FrozenMap(self.preferred_requested), self.coverage, inherited)

    def _config_changed(self, ts: int) -> None:
        self.config_history.append((ts, self.config.image()))

    def view(self, p: PState) -> View:
        state = p.state
        leader = p.leader
        if p.deleting:
            state = OFFLINE
        if state == NEW and p.init_failed:
            leader = -1
        alive = None if leader is None or leader < 0 else self.brokers.alive(leader)
        serving = None if leader is None or leader < 0 or leader not in self.brokers.stopped else False
        return View(leader, p.isr, p.leader_epoch, p.controller_epoch, state, alive, serving)

    def serving(self, b: int) -> bool:
        return self.brokers.serving(b)

    def _touch(self, p: PState, ts: int, ref: F.Ref, basis: str) -> None:
        if p.state == UNKNOWN and p.leader is None:
            return  # nothing known yet: no interval to show
        self._show(p.tp, self.view(p), ts, ref, basis)

    def _show(self, tp: F.TP, view: View, ts: int, ref: F.Ref, basis: str) -> None:
        old = self.shown.get(tp)
        if old is not None and old.leader is not None and old.leader >= 0:
            self.shown_led_by.get(old.leader, set()).discard(tp)
        self.shown[tp] = view
        if view.leader is not None and view.leader >= 0:
            self.shown_led_by.setdefault(view.leader, set()).add(tp)
        self.timeline.update(tp, ts, view, ref, basis)

    def _liveness_changed(self, b: int, ts: int, ref: F.Ref) -> None:
        alive = b in self.brokers.registered
        serving = False if b in self.brokers.stopped else None
        for tp in sorted(self.shown_led_by.get(b, ())):
            v = self.shown[tp]
            if v.leader_alive != alive or v.leader_serving != serving:
                self._show(tp, View(v.leader, v.isr, v.leader_epoch, v.controller_epoch, v.state, alive, serving),
                           ts, ref, "liveness")

    def _unclean_allowed(self, topic: str) -> bool:
        return as_bool(self.config.unclean_enabled(topic, self.controller).value)

    def _rule(self, decision: str, *args):
        """Kafka's rule for ``decision`` in the version that wrote the evidence (replay_engine.rules): the acting
        controller's own version when it logged one (a rolling upgrade mixes them), else the cluster's."""
        return R.decide(decision, self.brokers.versions.get(self.controller, self.config.version), *args)

    def _recorded_here(self, ts: int, kind: str) -> bool:
        return self.coverage.recorded(ts, self.controller, kind)

    def _note_broker(self, b: int, ref: F.Ref) -> None:
        self.evidence_by_broker.setdefault(b, []).append(ref)

    # ------------------------------------------------------------------ decisions

    # Decision functions (``_propose*``) read the controller's view and return decisions as data, each with
    # the change it makes (Decision.change); ``_commit`` hands them to the apply module, which checks the state
    # move against the valid-previous-states table, and keeps the books (pending records, failed elections).

    def _propose(self, p: PState, kind: str, strategy: str | None, trigger: F.Fact,
                 new_leader: int | None = None, new_isr: tuple[int, ...] | None = None, unclean: bool = False,
                 note: str | None = None, keep_state: bool = False) -> Decision | None:
        if self.mode.defers_to_records and self._recorded_here(trigger.ts, kind):
            return None  # the record will say what was decided; it is judged point-wise when it comes
        change = change_for(p, kind, new_leader, new_isr, self.controller_epoch, keep_state)
        after = None
        if kind in WRITES:
            after = {"leader": new_leader, "isr": list(new_isr) if new_isr is not None else None,
                     "leader_epoch": change.leader_epoch}
        d = Decision(0, trigger.ts, p.tp, kind, strategy, trigger.ref, p.snapshot(), after, unclean, note=note,
                     change=change)
        d.expected_record = self._recorded_here(trigger.ts, kind)
        return d

    def _commit(self, d: Decision | None) -> Decision | None:
        if d is None:
            return None
        p = self.parts[d.tp]
        if not self.store.apply_decision(p, d.change, d.ts, d.trigger):
            return None  # Kafka leaves a partition alone when the transition is invalid (a finding says so)
        self._seq += 1
        d.seq = self._seq
        self.decisions.append(d)
        if d.unclean:
            self.unclean_elections.append(d)
        if d.change.failed_election:
            self.failed_elections.setdefault(p.tp, []).append(d.trigger)
        if d.expected_record:
            self.pending.add(d)
        else:
            d.status = "applied"
            self.pending.note_applied(d)
            self._touch(p, d.ts, d.trigger, "replayed")
        return d

    def _commit_all(self, ds: list[Decision | None]) -> None:
        for d in ds:
            self._commit(d)

    def _propose_offline(self, p: PState, trigger: F.Fact, allow_unclean: bool | None = None) -> Decision | None:
        if p.deleting:
            return None
        cand = p.candidates
        if cand is None or p.isr is None:
            return None  # too little known about this partition to decide
        unclean_ok = self._unclean_allowed(p.tp[0]) if allow_unclean is None else allow_unclean
        res = self._rule("zk.election.offline", cand, p.isr, self.online_set(p.tp), unclean_ok)
        if res is None:
            return self._propose(p, "election_failed", E.OFFLINE + f"({str(bool(allow_unclean)).lower()})", trigger)
        return self._propose(p, "election", E.OFFLINE + f"({str(bool(allow_unclean)).lower()})", trigger,
                             res.leader, res.isr, unclean=res.unclean)

    def _propose_online_state_change(self, trigger: F.Fact,
                                     only: Callable[[PState], bool] | None = None) -> list[Decision | None]:
        """Elect leaders for every New/Offline partition (Kafka's triggerOnlinePartitionStateChange)."""
        out = []
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.deleting or (only is not None and not only(p)):
                continue
            if p.state == NEW and p.init_failed:
                out.append(self._propose_new(p, trigger))
            elif p.state == OFFLINE or (p.state == UNKNOWN and p.leader is not None and p.leader >= 0
                                        and not self.online(p.leader)):
                out.append(self._propose_offline(p, trigger))
        return out

    def _trigger_online_state_change(self, trigger: F.Fact, only: Callable[[PState], bool] | None = None) -> None:
        self._commit_all(self._propose_online_state_change(trigger, only))

    def _propose_isr_removals(self, b: int, trigger: F.Fact) -> list[Decision | None]:
        """OfflineReplica for every replica on broker b: the ISR write that produces ``leader: -1``."""
        out = []
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.deleting or p.isr is None or b not in p.isr or p.leader is None:
                continue
            leader, isr = self._rule("zk.offline_replica.isr", p.leader, p.isr, b, self._unclean_allowed(tp[0]))
            out.append(self._propose(p, "isr_removal", "OfflineReplica", trigger, leader, isr,
                                     note=f"replica {b} removed from the ISR"))
        return out

    def _remove_replica_from_isr(self, b: int, trigger: F.Fact) -> None:
        for d in self._propose_isr_removals(b, trigger):
            if self._commit(d) is not None and d.after["leader"] == -1 and self.parts[d.tp].state == ONLINE:
                # Left without a leader, the partition is offline; the timeline shows it at its next change
                # (the decision itself was shown as written: leader -1 of a partition still Online).
                self.store.move(self.parts[d.tp], OFFLINE, DECIDED, d.ts, d.trigger)

    def _propose_new(self, p: PState, trigger: F.Fact) -> Decision | None:
        if p.replicas is None:
            return None
        res = self._rule("zk.election.new_partition", p.replicas, self.online_set(p.tp))
        if res is None:
            return self._propose(p, "new_partition_failed", "NewPartition->OnlinePartition", trigger,
                                 note="No assigned replica is alive")
        return self._propose(p, "new_partition", "NewPartition->OnlinePartition", trigger, res.leader, res.isr)

    # ------------------------------------------------------------------ membership and controller

    def _broker_stopped(self, f: F.BrokerStopped) -> None:
        if self.brokers.stop(f.broker, f.ref):
            self._note_broker(f.broker, f.ref)
            self._liveness_changed(f.broker, f.ts, f.ref)

    def _controller_view_follows(self, f: F.Fact) -> bool:
        """Does this fact change what the controller believes? A broker's word about itself reaches the
        controller only through ZooKeeper later: it counts at once only when the controller's own log (which
        would show when it learnt) is missing from the evidence."""
        view = getattr(f, "view", "zk")
        return view != "self" or not self.coverage.controller_logged(f.ts, self.controller)

    def _register(self, b: int, f: F.Fact) -> None:
        if self.brokers.register(b, f.ts, f.ref):
            self._liveness_changed(b, f.ts, f.ref)

    def _deregister(self, b: int, f: F.Fact, cause: str, died: F.Ref | None = None) -> None:
        if self.brokers.deregister(b, f.ref, cause, died):
            self._liveness_changed(b, f.ts, f.ref)

    def _replicas_online(self, f: F.ReplicasOnline) -> None:
        self.brokers.replicas_online(f.broker, f.tps, f.ref)

    def _replicas_offline(self, f: F.ReplicasOffline) -> None:
        tps = f.tps
        if f.cause == "failover":
            tps = tuple(tp for tp in tps if not (tp in self.parts and self.parts[tp].deleting))
        self.brokers.replicas_offline(f.broker, tps, f.ref)
        self._note_broker(f.broker, f.ref)
        for tp in f.tps:
            self.evidence_by_tp.setdefault(tp, []).append(f.ref)

    def _broker_up(self, f: F.BrokerUp) -> None:
        b = f.broker
        brokers = self.brokers
        self._note_broker(b, f.ref)
        died = brokers.unstop(b, f.ref)
        if f.view != "self" or self._controller_view_follows(f):
            brokers.log_dirs_back(b, f.ref)
        if f.view == "self":
            brokers.self_reports(b, f.ref)
        brokers.back(b, f.ref)
        old_epoch = brokers.epochs.get(b)
        bounced = b in self.brokers.registered and f.epoch is not None and old_epoch is not None and old_epoch != f.epoch
        if bounced:
            self._deregister(b, f, "bounced", died)
        self._register(b, f)
        if f.epoch is not None:
            brokers.set_epoch(b, f.epoch, f.ref)
        bounced = bounced and self._rule("zk.broker.bounce", old_epoch, f.epoch)  # the controller notices it
        if not self._controller_view_follows(f) or (b in self.brokers.live and not bounced):
            return
        if bounced and b in self.brokers.live and self.controller is not None:
            self._controller_sees_failure(b, F.BrokerDown(f.ts, f.ref, broker=b, cause="bounced"))
        brokers.controller_sees_up(b, f.ref)
        if self.controller is not None and self.controller in self.brokers.live and self.controller != b:
            self._trigger_online_state_change(f)

    def _broker_down(self, f: F.BrokerDown) -> None:
        b = f.broker
        self._note_broker(b, f.ref)
        died = self.brokers.unstop(b, f.ref)
        if f.view == "self":
            self.brokers.self_reports(b, f.ref)
        self._deregister(b, f, f.cause, died)
        if not self._controller_view_follows(f):
            if b == self.controller:
                self._controller_gone(F.ControllerGone(f.ts, f.ref, controller=b, cause=f"controller's broker {f.cause}"))
            return
        if b not in self.brokers.live:
            return
        self._controller_sees_failure(b, f)

    def _controller_sees_failure(self, b: int, f: F.Fact) -> None:
        self.brokers.controller_sees_down(b, f.ref)
        if b == self.controller:
            cause = getattr(f, "cause", "")
            self._controller_gone(F.ControllerGone(f.ts, f.ref, controller=b, cause=f"controller's broker {cause}"))
            return
        if self.controller is not None:
            # onBrokerFailure -> onReplicasBecomeOffline: elect first, then remove from ISRs.
            for tp in sorted(self.led_by.get(b, ())):
                p = self.parts[tp]
                if not p.deleting:
                    self.store.move(p, OFFLINE, DECIDED, f.ts, f.ref)
            self._trigger_online_state_change(f)
            self._remove_replica_from_isr(b, f)

    def _live_set(self, f: F.LiveSet) -> None:
        """The controller's full view of live brokers; it also tells registration for brokers that do not
        speak for themselves in the evidence."""
        self._live_set_view(f)
        if self.failover_waiting is not None and f.controller in (None, self.controller):
            self._failover(f)

    def _live_set_view(self, f: F.LiveSet) -> None:
        self.brokers.state_membership(True, f.ref)
        self.brokers.controller_view(f.brokers, f.ref)
        for b in sorted(f.brokers):
            self._register(b, f)
        for b in sorted(self.brokers.registered - f.brokers):
            if b in self.brokers.stopping:
                # It asked to shut down and is now gone from the controller's view: stopped, even if its
                # own "shut down completed" line is not in the evidence (rotated away, overwritten). Only a
                # shutdown the evidence states counts: one inferred from records differs between shards.
                self._deregister(b, f, "shutdown")
            elif b not in self.brokers.self_reporting:
                self._deregister(b, f, "controller_detected")

    def _controller_elected(self, f: F.ControllerElected) -> None:
        c = f.controller
        if self.controller == c and (f.epoch is None or f.epoch == self.controller_epoch):
            return
        if self.tenures and self.tenures[-1].end is None:
            t = self.tenures[-1]
            t.end, t.end_ref, t.end_cause = f.ts, f.ref, "another controller elected"
        if f.epoch is not None and self.controller_epoch is not None and f.epoch <= self.controller_epoch:
            self.findings.append({"kind": "controller_epoch_not_increasing", "ts": f.ts, "controller": c,
                                  "epoch": f.epoch, "previous_epoch": self.controller_epoch,
                                  "text": f"controller epoch went from {self.controller_epoch} back to {f.epoch}: "
                                          "ZooKeeper's data was reset or another cluster's logs are mixed in",
                                  "evidence": [f.ref.to_json()]})
            if f.epoch < self.controller_epoch:
                self._forget_partitions(keep={tp for tp, e in self.below_epoch.items() if e == f.epoch})
        self.below_epoch.clear()
        self._end_deletions(f.ts)
        self.controller = c
        self.controller_epoch = f.epoch if f.epoch is not None else (
            None if self.controller_epoch is None else self.controller_epoch + 1)
        self.tenures.append(Tenure(c, self.controller_epoch, f.ts, start_ref=f.ref))
        self.next_rebalance = f.ts + 5_000_000
        self._register(c, f)
        self.brokers.failover(c, f.ref)
        if self.coverage.controller_logged(f.ts, c) and not self.coverage.zk_covers(f.ts):
            # onControllerFailover (0.8.0 .. 3.9 KafkaController): initializeControllerContext logs "Currently
            # active brokers in the cluster" before the state machines start and elect. Logs only, that line is
            # the controller's view; its elections wait for it (or for the next fact, should the line be lost).
            self.failover_waiting = f
            return
        self._failover(f)

    def _failover(self, f: F.Fact) -> None:
        """onControllerFailover: ReplicaStateMachine.startup before PartitionStateMachine.startup."""
        self.failover_waiting = None
        if self._rule("zk.failover.offline_replicas"):
            for b in sorted(self.brokers.known - self.brokers.live):
                self._remove_replica_from_isr(b, f)
        # A tenure inferred from a record began before the evidence, its view of live brokers never stated: a leader
        # no line shows joining or leaving is not known dead to it (logs that start mid-tenure name few brokers live).
        inferred = f.ref is not None and f.ref.event == "inferred_controller"
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.deleting or p.state == NON_EXISTENT:
                continue
            if p.state == NEW:
                continue
            # PartitionStateMachine.initializePartitionState: set from what is known, not a checked transition
            if p.leader is not None and (p.leader < 0 or p.leader not in self.brokers.live and (
                    not inferred or p.leader in self.brokers.known)):
                self.store.initialize(p, OFFLINE)
            elif p.leader is not None:
                self.store.initialize(p, ONLINE)
        self._trigger_online_state_change(f)

    def _forget_partitions(self, keep: AbstractSet[F.TP] = frozenset(),
                           assigned: AbstractSet[str] = frozenset()) -> None:
        """A new history starts (cluster data reset): what was known about partitions no longer holds, except for
        ``keep``, partitions the new history's own lines already spoke of, and the replicas of ``assigned``
        topics (their assignment known unchanged)."""
        for p in self.parts.values():
            if p.tp in keep:
                continue
            # the znode version the controller last wrote belongs to the old data too: the new history's
            # writes start again from version 0 (KafkaZkClient.createTopicPartitionStatesRaw)
            self.store.set(p, isr=None, leader_epoch=None, zk_version=None, recorded_zk_version=None)
            if p.tp[0] not in assigned:
                self.store.set(p, replicas=None)
            self.store.forget(p)
            self.store.set_leader(p, None)
        self.pending.clear()

    def _controller_gone(self, f: F.ControllerGone) -> None:
        if f.cause == "resigned" and f.controller is not None and f.controller in self.brokers.stopping:
            # KafkaServer.shutdown (0.9.0.0 .. 3.9, core/src/main/scala/kafka/server/KafkaServer.scala): after
            # info("shutting down") and the controlled shutdown, kafkaController.shutdown() (which logs the
            # resignation on every broker) is followed by the ZooKeeper client's close: the broker's registration
            # goes with its session at that moment, before its own "shut down completed".
            self._broker_down(F.BrokerDown(f.ts, f.ref, broker=f.controller, cause="shutdown"))
        if self.controller is None:
            return
        if f.controller is not None and f.controller != self.controller:
            return
        if self.tenures and self.tenures[-1].end is None:
            t = self.tenures[-1]
            t.end, t.end_ref, t.end_cause = f.ts, f.ref, f.cause
        self.controller = None
        self.next_rebalance = None

    # ------------------------------------------------------------------ timers (counterfactual mode)

    def _fire_timers(self, ts: int) -> None:
        """Auto leader rebalance: 5 s after failover, then every leader.imbalance.check.interval.seconds."""
        from replay_engine.config import AUTO_REBALANCE, IMBALANCE_INTERVAL, IMBALANCE_PCT

        while self.next_rebalance is not None and self.next_rebalance <= ts and self.controller is not None:
            t = self.next_rebalance
            interval = self.config.int_value(IMBALANCE_INTERVAL, controller=self.controller) * 1_000_000
            self.next_rebalance = t + max(interval, 1_000_000)
            if not as_bool(self.config.resolve(AUTO_REBALANCE, controller=self.controller).value):
                continue
            if any(p.reassign_target is not None for p in self.parts.values()):
                continue  # Kafka skips the whole check while a reassignment is in progress
            pct = self.config.int_value(IMBALANCE_PCT, controller=self.controller)
            ref = F.Ref(t, "auto_rebalance_check", None, None,
                        "auto leader rebalance check (leader.imbalance.check.interval.seconds, replayed)")
            by_pref: dict[int, list[PState]] = {}
            for tp in sorted(self.parts):
                p = self.parts[tp]
                if p.replicas and not p.deleting and p.leader is not None:
                    by_pref.setdefault(p.replicas[0], []).append(p)
            timer = F.PreferredElectionRequest(t, ref, tps=None, trigger="auto")
            for b in sorted(by_pref):
                ps = by_pref[b]
                off = [p for p in ps if p.leader != b]
                if not ps or len(off) / len(ps) <= pct / 100:
                    continue
                for p in off:
                    if self.online(b) and p.isr is not None and b in p.isr:
                        res = self._rule("zk.election.preferred", p.replicas, p.isr, self.online_set(p.tp))
                        if res is not None:
                            self._commit(self._propose(p, "election", E.PREFERRED, timer, res.leader, res.isr,
                                                       note="auto leader rebalance"))

    def _reassign_away(self, f: F.ReassignAway) -> None:
        """Move every replica off a broker, onto the live broker holding fewest replicas (lowest id first)."""
        b = f.broker
        load: dict[int, int] = {x: 0 for x in self.brokers.live}
        for p in self.parts.values():
            for r in p.replicas or ():
                if r in load:
                    load[r] += 1
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.replicas is None or b not in p.replicas or p.deleting:
                continue
            spare = sorted((load[x], x) for x in load if x not in p.replicas and self.online(x))
            if not spare:
                self.findings.append({"kind": "reassign_impossible", "ts": f.ts, "topic": tp[0], "partition": tp[1],
                                      "text": f"{tp[0]}-{tp[1]}: every live broker already holds a replica; "
                                              f"it cannot be moved off broker {b}"})
                continue
            new = spare[0][1]
            load[new] += 1
            ar = tuple(new if r == b else r for r in p.replicas)
            isr = tuple(new if r == b else r for r in (p.isr or ()))
            self.store.set_replicas(p, ar, f.ts)
            self.store.set(p, isr=isr)
            if p.leader == b:
                res = self._rule("zk.election.reassign", ar, isr, self.online_set(tp))
                if res is not None:
                    self._commit(self._propose(p, "election", E.REASSIGN, f, res.leader, res.isr,
                                               note=f"moved off broker {b}"))
                    continue
            self._touch(p, f.ts, f.ref, "replayed")

    # ------------------------------------------------------------------ topics, configs, admin

    def _topic_assignment(self, f: F.TopicAssignment) -> None:
        for part in sorted(f.assignment):
            ar = f.assignment[part]
            if ar is None:
                continue
            tp = (f.topic, part)
            ar = self.mode.assignment(tp, ar)
            p = self.part(tp)
            # a partition whose state a hole hid still exists: an assignment rewritten (partitions added, a
            # reassignment) creates only those with no assignment in the controller's context
            # (KafkaController.processPartitionModifications, partitionsToBeAdded, 2.8.0)
            fresh = (p.state == NON_EXISTENT or p.state == UNKNOWN and tp not in self.hidden) and p.leader is None
            old = p.replicas
            self.store.set_replicas(p, ar, f.ts)
            if fresh:
                # onNewPartitionCreation: NonExistentPartition -> NewPartition, then -> OnlinePartition
                if self.store.move(p, NEW, DECIDED, f.ts, f.ref) and self.controller is not None:
                    self._commit(self._propose_new(p, f))
            elif p.reassign_target is not None and tuple(ar) == p.reassign_target:
                self.store.set(p, reassign_target=None)
                if p.leader is not None and p.isr is not None and (p.leader not in ar or not self.online(p.leader)):
                    res = self._rule("zk.election.reassign", ar, p.isr, self.online_set(p.tp))
                    if res is None:
                        self._commit(self._propose(p, "election_failed", E.REASSIGN, f))
                    else:
                        self._commit(self._propose(p, "election", E.REASSIGN, f, res.leader, res.isr))
            elif old is not None and old != tuple(ar):
                self.evidence_by_tp.setdefault(tp, []).append(f.ref)

    def _deletion_halted(self, f: F.TopicDeletionHalted) -> None:
        self.deletion_halts.setdefault(f.topic, []).append((f.ref, f.reason))

    def _end_deletions(self, ts: int, topic: str | None = None) -> None:
        for t, spans in self.deletions.items():
            if (topic is None or t == topic) and spans and spans[-1][1] is None:
                spans[-1] = (spans[-1][0], ts)

    def _topic_gone(self, f: F.TopicGone) -> None:
        self._end_deletions(f.ts, f.topic)
        for tp in sorted(tp for tp in self.parts if tp[0] == f.topic):
            p = self.parts[tp]
            # TopicDeletionManager's onPartitionDeletion: OfflinePartition, then NonExistentPartition
            if p.state != NON_EXISTENT:
                self.store.move(p, OFFLINE, RECORDED, f.ts, f.ref)
            self.store.move(p, NON_EXISTENT, RECORDED, f.ts, f.ref)
            self._show(tp, View(None, None, None, None, NON_EXISTENT, None), f.ts, f.ref, "recorded")
            self.pending.drop(tp)
            self.store.drop(tp)
            self.hidden.discard(tp)

    def _topic_config(self, f: F.TopicConfig) -> None:
        before = self._unclean_allowed(f.topic)
        self.config.topic[f.topic] = {k: (str(v), f.ref) for k, v in f.config.items()}
        after = self._unclean_allowed(f.topic)
        self._config_changed(f.ts)
        if after and not before and self.controller is not None and self._rule("zk.unclean.enable_retries_offline", "topic"):
            # TopicUncleanLeaderElectionEnable: offline partitions of the topic get another (unclean) chance.
            self._trigger_online_state_change(f, only=lambda p: p.tp[0] == f.topic)

    def _broker_config(self, f: F.BrokerConfig) -> None:
        entries = {k: (str(v), f.ref) for k, v in f.config.items()}
        if f.broker is None:
            before = {t: self._unclean_allowed(t) for t in {tp[0] for tp in self.parts}}
            self.config.cluster_dynamic.update(entries)
            self._config_changed(f.ts)
            if self.controller is not None and self._rule("zk.unclean.enable_retries_offline", "cluster") and UNCLEAN in f.config:
                self._trigger_online_state_change(
                    f, only=lambda p: self._unclean_allowed(p.tp[0]) and not before.get(p.tp[0]))
            return
        self.config.broker_static.setdefault(f.broker, {}).update(entries)
        v = f.config.get("inter.broker.protocol.version")
        if v and self.config.version is None:
            self.config.version = parse_version(v)
            self.config.version_source = f"inter.broker.protocol.version of broker {f.broker}"
        self._config_changed(f.ts)

    def _kafka_version(self, f: F.KafkaVersion) -> None:
        v = parse_version(f.version)
        if v is not None and f.ref.broker is not None:
            self.brokers.note_version(f.ref.broker, v, f.ref)
        if v is not None and (self.config.version is None or self.config.version_source.startswith("inter.broker")):
            self.config.version = v
            self.config.version_source = f"logged 'Kafka version: {f.version}'"
            self._config_changed(f.ts)

    def _leader_isr_change(self, f: F.LeaderIsrChange) -> None:
        if f.tp in self.rewrite:
            return  # the trace's ISR changes belong to the old assignment
        p = self.part(f.tp)
        self.store.adopt(p, isr=f.isr, zk_version=f.zk_version, leader_epoch=f.leader_epoch)
        if f.leader is not None and f.leader >= 0 and p.leader is None:
            self.store.set_leader(p, f.leader)
            if p.state == UNKNOWN:
                self.store.move(p, ONLINE, RECORDED, f.ts, f.ref)
        self._touch(p, f.ts, f.ref, "recorded")

    def _controlled_shutdown(self, f: F.ControlledShutdownRequest) -> None:
        b = f.broker
        self._note_broker(b, f.ref)
        if self.controller is None or b not in self.brokers.live:
            return
        self.brokers.shutdown_taken(b, f.ref, server_stopping=not self._inferring,
                                    rule=RULE_SHUTDOWN_TAKEN if self._inferring else None)
        self._commit_all(self._propose_controlled_shutdown(b, f))

    def _propose_controlled_shutdown(self, b: int, f: F.Fact) -> list[Decision | None]:
        """Move leadership off a broker in controlled shutdown, and take it out of the other ISRs."""
        out = []
        live_or_sd = frozenset(self.brokers.live)
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.deleting or p.isr is None or p.candidates is None or p.leader is None:
                continue
            if p.leader == b:
                if len(p.candidates) <= 1:
                    continue  # RF=1: nothing to move; the partition goes down with the broker
                res = self._rule("zk.election.controlled_shutdown", p.candidates, p.isr, live_or_sd, self.brokers.shutting)
                if res is not None:
                    out.append(self._propose(p, "election", E.CONTROLLED_SHUTDOWN, f, res.leader, res.isr))
                else:
                    # Kafka logs the failure; the partition keeps its (still alive) leader for now.
                    out.append(self._propose(p, "election_failed", E.CONTROLLED_SHUTDOWN, f, keep_state=True,
                                             note=f"no other live ISR member to take over from broker {b}"))
            elif b in p.isr and len(p.isr) > 1:
                leader, isr = self._rule("zk.offline_replica.isr", p.leader, p.isr, b, self._unclean_allowed(tp[0]))
                out.append(self._propose(p, "isr_removal", "OfflineReplica (controlled shutdown)", f, leader, isr,
                                         note=f"replica {b} removed from the ISR for its controlled shutdown"))
        return out

    def _preferred_request(self, f: F.PreferredElectionRequest) -> None:
        if self.controller is None:
            return
        tps = f.tps if f.tps is not None else tuple(sorted(self.parts))
        for tp in tps:
            self.preferred_requested[tp] = f.ts
        self._preferred_asks += 1
        for tp in sorted(set(tps)):
            p = self.parts.get(tp)
            if p is None or p.deleting or p.replicas is None or p.isr is None or p.leader == p.replicas[0]:
                continue
            res = self._rule("zk.election.preferred", p.replicas, p.isr, self.online_set(p.tp))
            if res is not None:
                self._commit(self._propose(p, "election", E.PREFERRED, f, res.leader, res.isr))

    def _reassignment_request(self, f: F.ReassignmentRequest) -> None:
        for tp, target in sorted(f.targets.items()):
            self.store.set(self.part(tp), reassign_target=tuple(target))

    def _deletion_request(self, f: F.TopicDeletionRequest) -> None:
        spans = self.deletions.setdefault(f.topic, [])
        if not spans or spans[-1][1] is not None:
            spans.append((f.ref, None))
        for tp in sorted(tp for tp in self.parts if tp[0] == f.topic):
            p = self.parts[tp]
            self.store.set(p, deleting=True)
            self.pending.drop(tp)
            self._touch(p, f.ts, f.ref, "recorded")

    def _evidence(self, f: F.Evidence) -> None:
        if f.broker is not None:
            self._note_broker(f.broker, f.ref)
        if f.tp is not None:
            self.evidence_by_tp.setdefault(f.tp, []).append(f.ref)
        if f.kind == "broker_shutdown_started" and f.broker is not None:
            self.brokers.server_stopping(f.broker, f.ref)
        if f.kind == "zk_snapshot_taken":
            self.brokers.state_membership(True, f.ref)
        if f.kind == "controlled_shutdown_taken" and f.broker in self.brokers.live and self.controller is not None \
                and not self.coverage.controller_logged(f.ts, self.controller):
            # the broker's word that the controller took its request: the controller's own line is not in the
            # evidence, and its moves were recorded (or not) in the state-change log, judged there
            self.brokers.shutdown_taken(f.broker, f.ref, server_stopping=False)
        if f.kind == "zk_write_failed":
            self.findings.append({"kind": "zk_write_failed", "ts": f.ts, "evidence": [f.ref.to_json()]})
        if f.kind == "unclean_leader_election" and f.tp is not None and f.broker is not None:
            self._recorded_unclean(f)

    def _defers_gaps(self) -> bool:
        """A record on a state the replay never saw is an evidence gap: logs only, or after a ZooKeeper hole."""
        return self.mode.evidence_gaps or self.after_hole

    def _hole(self, f: F.ZkHole) -> None:
        """Transactions no file holds (``zk_holes``): partitions, registrations and epochs may all have changed
        there. What the replay held of the partitions is forgotten (a record is judged again once the evidence
        restates the state it was decided on). Without a snapshot at its end no broker counts as seen until a fact
        shows it; with one, the partitions it shows unchanged are kept, and a broker it does not list, or lists as
        registered inside the hole, went down in it (its registration, if any, follows from the snapshot)."""
        span = f"{hex(f.after + 1)}-{hex(f.before - 1)}"
        last = self.findings[-1] if self.findings and self.findings[-1]["kind"] == "zk_hole" else None
        if f.snapshot is None and last is not None and self.covered_before == f.after + 1:
            # the rest of a hole a snapshot covers part of (one lost txn log): one finding for it
            last["text"] += f"; transactions {span}, after the snapshot, are in no file at all"
        elif f.snapshot is None:
            self.findings.append({"kind": "zk_hole", "ts": f.ts, "evidence": [f.ref.to_json()],
                                  "text": f"ZooKeeper transactions {span} are in no file given (a txn log is missing): "
                                          "what they changed is not in the evidence"})
        else:
            self.covered_before = f.before
            self.findings.append({"kind": "zk_hole", "ts": f.ts, "evidence": [f.ref.to_json()],
                                  "text": f"ZooKeeper transactions {span} are in no file given (a txn log is missing); "
                                          f"the snapshot at {hex(f.snapshot)} states what they left, not how: "
                                          f"{len(f.keep)} partitions unchanged, brokers registered "
                                          f"{sorted(f.members)}"})
        self.after_hole = True
        self.hidden.update(tp for tp in self.parts if tp not in f.keep)
        self._forget_partitions(keep=f.keep, assigned=f.assigned)
        if f.snapshot is None:
            self.brokers.state_membership(False, f.ref)
            self.brokers.forget_seen(f.ref)
            return
        self.brokers.state_membership(True, f.ref)
        for b in sorted((self.brokers.registered | self.brokers.live) - (f.members - f.anew)):
            self._broker_down(F.BrokerDown(f.ts, f.ref, broker=b, cause="zk_hole"))

    def _recorded_unclean(self, f: F.Evidence) -> None:
        """The controller's own word that it elected a replica out of sync (OfflinePartitionLeaderSelector 0.8-1.x
        "No broker in ISR is alive for P. Elect leader B from live brokers ... There's potential data loss."):
        an unclean election, whatever the replay derived (its own decision for it, if any, is already listed)."""
        if any(d.tp == f.tp and (d.after or {}).get("leader") == f.broker and abs(d.ts - f.ts) <= J.MATCH_WINDOW_US
               for d in self.unclean_elections):
            return
        p = self.store.part(f.tp)
        self._seq += 1
        self.unclean_elections.append(Decision(self._seq, f.ts, f.tp, "election", "UNCLEAN (recorded)", f.ref,
                                               p.snapshot(), {"leader": f.broker, "isr": [f.broker]}, unclean=True,
                                               status="recorded", record=f.ref, expected_record=False))

    # ------------------------------------------------------------------ records and observations

    def _classify_write(self, p: PState, f: F.RecordedState) -> str:
        if f.created or p.state in (UNKNOWN, NEW, NON_EXISTENT) and p.leader is None:
            return "new_partition"
        if p.leader is not None and f.leader == p.leader and f.isr is not None and p.isr is not None \
                and tuple(f.isr) == tuple(p.isr):
            # Same leader and ISR, epoch+1: reassignment's updateLeaderEpoch, a retry after BADVERSION, or
            # removing the last ISR member of an already leaderless partition (it is never removed).
            return "epoch_bump"
        if f.leader == -1:
            return "isr_removal"
        if p.leader is not None and f.leader == p.leader:
            if f.leader_epoch is not None and p.leader_epoch is not None and f.leader_epoch == p.leader_epoch:
                # 2.7+ (AlterIsr): the leader's own ISR change, written by the controller without an epoch bump.
                return "alter_isr"
            return "isr_removal"
        return "election"

    def _known(self, p: PState) -> bool:
        return p.isr is not None and (p.leader is not None or p.state == NEW)

    def _seed(self, p: PState, leader, isr, leader_epoch, controller_epoch, zk_version, replicas, state, ts, ref,
              replicas_ordered: bool = True) -> None:
        """Counterfactual mode: adopt what the trace says only for a partition the replay does not know yet."""
        if replicas is not None:
            self.store.set_replicas(p, replicas, ts, replicas_ordered)
        if p.tp in self.rewrite:
            self.store.set_replicas(p, self.rewrite[p.tp], ts)
            isr = tuple(r for r in self.rewrite[p.tp] if self.online(r)) or (isr if isr is not None else None)
            if leader is not None and leader >= 0 and leader not in self.rewrite[p.tp]:
                leader = isr[0] if isr else -1
        self.store.adopt(p, leader, isr, leader_epoch, zk_version, controller_epoch)
        # seeding, like initializePartitionState: not a transition the table judges
        if state in (ONLINE, OFFLINE, NEW):
            self.store.initialize(p, state)
        elif p.leader is not None:
            self.store.initialize(p, ONLINE if p.leader >= 0 else OFFLINE)
        self._touch(p, ts, ref, "observed")

    def infer_from_record(self, f: F.RecordedState | F.RecordedFailedElection) -> None:
        """Logs only: a state-change line says which controller (and epoch) acted, and implies who it
        believed alive; when the controller.log that would say so is missing, the record still tells
        (``replay_engine.zk_inference``, which phase 1 of a sharded replay asks too)."""
        if not self.mode.infers_from_records:
            return
        failed = isinstance(f, F.RecordedFailedElection)
        kind = "failed" if failed else f.kind
        cid, ce = f.controller_id, f.controller_epoch
        said = acting(self.controller, self.controller_epoch, cid, ce, kind)
        if said == NAMES_ANOTHER or said == STALE and self._new_zk_data(f, cid):
            ref = F.Ref(f.ts, "inferred_controller", f.ref.source_file, f.ref.source_pos,
                        f"controller {cid} epoch {ce} (inferred from its state-change line): {f.ref.text}")
            self._controller_elected(F.ControllerElected(f.ts, ref, controller=cid, epoch=ce))
        elif said == STALE:
            # a zombie's line, or the new data's first lines before a write proves it new: should a write prove
            # it, what these lines said about the partition belongs to the new history and is kept
            self.below_epoch[f.tp] = ce
        brokers = self.brokers
        implied = implied_liveness(kind, None if failed else f.leader, f.isr, f.from_state,
                                   None if failed else f.removed_replica, f.live if failed else None,
                                   brokers.live, brokers.shutting, brokers.stopping)
        if implied.gone is not None:
            brokers.implied_gone(implied.gone, f.ref)
        if implied.alive:
            brokers.implied_live(implied.alive, f.ref)
        if implied.stated is not None:
            brokers.stated_live(implied.stated, f.ref)  # the exception message states its view

    def _new_zk_data(self, f, cid: int) -> bool:
        """A partition write logged under a controller epoch below the one known: from 2.1 no zombie can write
        (see rule zk.controller.stale_epoch_write), so ZooKeeper's data was recreated and a new history starts."""
        if not isinstance(f, F.RecordedState) or f.kind not in ("election", "new_partition", "isr_removal", "write"):
            return False  # in-memory transitions and failed elections write nothing: a zombie may still log them
        version = self.brokers.versions.get(cid, self.config.version)
        return R.decide("zk.controller.stale_epoch_write", version) == "new_data"

    def _cluster_state(self) -> tuple:
        # Brokers in controlled shutdown are left out: a shutdown inferred from records (no request in the
        # evidence) is inferred by each shard from its own partitions' elections, milliseconds apart.
        return (self.controller, self.controller_epoch, frozenset(self.brokers.live), frozenset(self.brokers.registered),
                frozenset(self.brokers.stopped))

    def _record_hint(self, f: F.RecordHint) -> None:
        self.infer_from_record(f.record)

    def _seed_from_record(self, f: F.RecordedState) -> None:
        """Counterfactual mode: a record only seeds a partition the replay does not know yet."""
        p = self.part(f.tp)
        kind = f.kind
        if kind == "new_state" and f.replicas is not None and p.replicas is None:
            self.store.set_replicas(p, self.mode.assignment(f.tp, f.replicas), f.ts)
            if p.state in (UNKNOWN, NON_EXISTENT):
                self.store.move(p, NEW, RECORDED, f.ts, f.ref, f.from_state)
        elif kind not in ("new_state", "offline", "deleted") and not self._known(p) and f.isr is not None:
            self._seed(p, f.leader, f.isr, f.leader_epoch, f.controller_epoch, f.zk_version, f.replicas,
                       None, f.ts, f.ref)
        elif kind == "write" and f.isr is not None and self._known(p) and self._classify_write(p, f) == "alter_isr":
            # 2.7+: the leader's own ISR change (AlterIsr), written by the controller: an input to the
            # what-if as much as a leader's own write was before 2.7, while the leader is the same
            self._leader_isr_change(F.LeaderIsrChange(f.ts, f.ref, f.order, tp=f.tp, leader=f.leader,
                                                      isr=tuple(f.isr), zk_version=f.zk_version))

    def _seed_from_failed(self, f: F.RecordedFailedElection) -> None:
        self.part(f.tp)  # counterfactual mode: the replay decides for itself whether an election fails

    def _seed_from_observation(self, f: F.ObservedState) -> None:
        p = self.part(f.tp)
        if not self._known(p) and (f.isr is not None or f.leader is not None):
            replicas, ordered = self._stated_assignment(p, f)
            self._seed(p, f.leader, f.isr, f.leader_epoch, f.controller_epoch, f.zk_version, replicas, f.state,
                       f.ts, f.ref, ordered)

    def _stated_assignment(self, p: PState, f: F.ObservedState) -> tuple[tuple[int, ...] | None, bool]:
        """The replicas a broker's line states, as the assignment, and whether in AR's order: before 0.11 the line
        lists a set (rule zk.line.replicas_order), which tells the members but not their order. One restating the
        known members leaves AR as it is (None)."""
        stated = f.replicas
        if stated is None:
            return None, True
        version = self.brokers.versions.get(f.ref.broker, self.config.version)
        if f.ar_in_order or R.decide("zk.line.replicas_order", version, len(stated)):
            return stated, True
        if p.replicas is not None and set(stated) == set(p.replicas):
            return None, True
        return stated, False

    def _recorded_state(self, f: F.RecordedState) -> None:
        p = self.part(f.tp)
        kind = f.kind
        self.infer_from_record(f)
        if kind == "new_state":
            # NonExistentPartition -> NewPartition: a partition (re)starts its history here.
            if p.state not in (NEW,) or f.from_state == NON_EXISTENT:
                # (a topic assignment seen first may have set NewPartition already: the znode is still new, version 0)
                self.store.set(p, isr=None, leader_epoch=None, zk_version=None, recorded_zk_version=None)
                self.store.set_leader(p, None)
            if f.replicas is not None:
                self.store.set_replicas(p, f.replicas, f.ts)
            self.store.move(p, NEW, RECORDED, f.ts, f.ref, f.from_state)
            return
        if kind == "offline":
            if p.state != NEW:
                self.store.move(p, OFFLINE, RECORDED, f.ts, f.ref, f.from_state)
            self._touch(p, f.ts, f.ref, "recorded")
            return
        if kind == "deleted":
            self.store.move(p, NON_EXISTENT, RECORDED, f.ts, f.ref, f.from_state)
            self.store.set_leader(p, None)
            self._touch(p, f.ts, f.ref, "recorded")
            return
        if kind == "write":
            queue = self.pending.get(f.tp)
            kind = self._classify_write(J.before_state(f.tp, queue[0].before) if queue else p, f)
        if kind == "alter_isr":
            self._adopt(p, f, kind)  # an input (the leader's request), not a decision of the controller
            return
        recorded = {"leader": f.leader, "isr": list(f.isr) if f.isr is not None else None,
                    "leader_epoch": f.leader_epoch}
        writes = kind in ("election", "new_partition") or (
            kind == "isr_removal" and f.removed_replica is not None and p.isr is not None and int(f.removed_replica) in p.isr)
        recreated = writes and f.zk_version is not None and p.recorded_zk_version is not None \
            and f.zk_version <= p.recorded_zk_version
        # Every election writes leader epoch + 1 (0.10.2 PartitionLeaderSelector.selectLeader: currentLeaderEpoch + 1;
        # 2.7 LeaderAndIsr.newLeaderAndIsr): an election stating another outcome at the epoch already held
        # was taken on a new history (the same outcome at that epoch is the same election logged twice).
        same_epoch = kind == "election" and f.leader_epoch is not None and f.leader_epoch == p.leader_epoch \
            and f.leader is not None and p.leader is not None and (f.leader != p.leader or (
                f.isr is not None and p.isr is not None and tuple(f.isr) != tuple(p.isr)))
        if self.mode.evidence_gaps and not self.pending.get(f.tp) and (recreated or same_epoch or (
                f.leader_epoch is not None and p.leader_epoch is not None and f.leader_epoch < p.leader_epoch)):
            # The leader epoch went backwards, or a write did not raise the znode's version: the topic (or the
            # whole ZooKeeper data) was recreated since we last saw it. A new history starts here.
            went = " and ".join(
                ([f"leader epoch {f.leader_epoch} after {p.leader_epoch}"] if f.leader_epoch is not None
                 and p.leader_epoch is not None and f.leader_epoch <= p.leader_epoch else [])
                + ([f"znode version {f.zk_version} after {p.recorded_zk_version}"] if recreated else []))
            self.findings.append({"kind": "partition_history_restarted", "ts": f.ts, "topic": p.tp[0],
                                  "partition": p.tp[1],
                                  "text": f"{p.tp[0]}-{p.tp[1]}: {went}: the topic (or ZooKeeper's data) was recreated "
                                          "where no line of the evidence shows it; its history starts again here and "
                                          "this decision, taken on the new state, is not judged",
                                  "evidence": [f.ref.to_json()]})
            self.store.set(p, replicas=None, isr=None, leader_epoch=None, recorded_zk_version=None)
            self.store.set_leader(p, None)
            self.store.forget(p)
            self.comparisons.append(J.unknown(p.tp, f.ts, f.ref, recorded, J.NEW_HISTORY))
            judged = None
        else:
            n = len(self.comparisons)
            unknown_before = {"isr": p.isr is None, "leader_epoch": p.leader_epoch is None}
            self._compare(p, kind, f, recorded)
            judged = self.comparisons[-1] if len(self.comparisons) > n else None
        self._adopt(p, f, kind)
        if judged is not None and judged.agreed and judged.replayed:
            # A line that states only part of the decision (0.8-0.10 "... to OnlinePartition with leader N") agreed
            # with Kafka's rule on what it states; where nothing told the replay the ISR or leader epoch, the rest is
            # what the rule wrote with it (not where it knew them: the same election is often logged twice, once
            # whole and once as "with leader N", and the second must not count another epoch).
            fill = {k: judged.replayed.get(k) for k in ("isr", "leader_epoch")
                    if recorded.get(k) is None and unknown_before[k]}
            if fill.get("isr") is not None:
                self.store.set(p, isr=tuple(fill["isr"]))
            if fill.get("leader_epoch") is not None:
                self.store.set(p, leader_epoch=fill["leader_epoch"])

    def _adopt(self, p: PState, f: F.RecordedState, kind: str) -> None:
        store = self.store
        store.adopt(p, f.leader, f.isr, f.leader_epoch, f.zk_version, f.controller_epoch, f.replicas, f.ts,
                    recorded=True)
        if kind in ("election", "new_partition"):
            store.move(p, ONLINE, RECORDED, f.ts, f.ref, f.from_state)
            store.set(p, init_failed=False)
        elif kind == "isr_removal" and f.leader == -1:
            store.move(p, OFFLINE, RECORDED, f.ts, f.ref)
        elif kind == "isr_removal" and f.leader is not None and f.leader >= 0 and p.state == OFFLINE:
            # the controller removes replicas of an offline partition with leader -1: a record naming a leader
            # proves the partition had one, whatever the replay believed
            store.move(p, ONLINE, RECORDED, f.ts, f.ref)
        elif p.state == UNKNOWN and f.leader is not None:
            store.move(p, ONLINE if f.leader >= 0 else OFFLINE, RECORDED, f.ts, f.ref)
        self._touch(p, f.ts, f.ref, "recorded")

    def _compare(self, p: PState, kind: str, f: F.RecordedState, recorded: dict[str, Any]) -> None:
        out = J.judge_write(self.judge_view(), self.pending, p, kind, f, recorded,
                            may_infer=self.controller is not None and not self._inferring,
                            defer_gaps=self._defers_gaps())
        if isinstance(out, J.InferShutdown):
            b = out.broker
            self._inferring = True
            try:
                self._controlled_shutdown(F.ControlledShutdownRequest(f.ts, f.ref, broker=b))
            finally:
                self._inferring = False
            self.findings.append({"kind": "inferred_controlled_shutdown", "ts": f.ts, "broker": b,
                                  "text": f"broker {b} was shut down with a controlled shutdown (inferred from "
                                          "the controller's writes; the request itself leaves no record)",
                                  "evidence": [f.ref.to_json()]})
            self._compare(p, kind, f, recorded)
            return
        self.comparisons.append(out)

    def _recorded_failed(self, f: F.RecordedFailedElection) -> None:
        p = self.part(f.tp)
        self.infer_from_record(f)
        self.failed_elections.setdefault(f.tp, []).append(f.ref)
        self.comparisons.append(J.judge_failed(self.judge_view(), self.pending, p, f, defer_gaps=self._defers_gaps()))
        if f.isr is not None and p.isr is None:
            self.store.set(p, isr=tuple(f.isr))
        if f.assigned is not None:
            self.store.set_replicas(p, f.assigned, f.ts)  # the assignment the controller itself used
        if not (f.strategy and ("ControlledShutdown" in f.strategy or "Preferred" in f.strategy)):
            # a failed OfflinePartition -> OnlinePartition election says the partition was offline, whatever the
            # replay held (a NewPartition whose creation election no line shows)
            if p.state != NEW or f.from_state == OFFLINE:
                self.store.move(p, OFFLINE, RECORDED, f.ts, f.ref, f.from_state)
            if p.leader is None:
                self.store.set_leader(p, -1)
        self._touch(p, f.ts, f.ref, "recorded")

    def _observed(self, f: F.ObservedState) -> None:
        p = self.part(f.tp)
        if f.leader_epoch is not None and p.leader_epoch is not None and f.leader_epoch < p.leader_epoch and not (
                f.controller_epoch is not None and p.controller_epoch is not None
                and f.controller_epoch > p.controller_epoch):
            # An older view (a broker behind, or a skewed clock): the state has moved on. A lower leader epoch
            # under a newer controller epoch is not old, though: the topic's history restarted.
            return
        if f.leader_epoch is not None and p.leader_epoch is not None and f.leader_epoch < p.leader_epoch:
            # that restart recreated the state znode too: the version written before it no longer counts
            self.store.set(p, recorded_zk_version=None)
        replicas, ordered = self._stated_assignment(p, f)
        self.store.adopt(p, f.leader, f.isr, f.leader_epoch, f.zk_version, f.controller_epoch, replicas, f.ts,
                         replicas_ordered=ordered)
        if f.state in (ONLINE, OFFLINE, NEW, NON_EXISTENT) and f.initial:
            self.store.initialize(p, f.state)
            if f.state == OFFLINE and p.leader is None:
                self.store.set_leader(p, -1)
        elif f.state in (ONLINE, OFFLINE, NEW, NON_EXISTENT):
            self.store.move(p, f.state, OBSERVED, f.ts, f.ref)
            if f.state == OFFLINE and p.leader is None:
                self.store.set_leader(p, -1)
        elif p.state == UNKNOWN and p.leader is not None:
            self.store.move(p, ONLINE if p.leader >= 0 else OFFLINE, OBSERVED, f.ts, f.ref)
        self._touch(p, f.ts, f.ref, "observed")
