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
"""
from __future__ import annotations

from typing import Any

from parsers.schema import Event, iso_utc
from replay_engine import facts as F
from replay_engine import rules as R
from replay_engine.apply import OBSERVED, RECORDED, Change, PartitionStore
from replay_engine.config import ConfigImage, ConfigState, as_bool, parse_version
from replay_engine.from_events import ref_of
from replay_engine.judge import EVIDENCE_GAP, Comparison, judge_kraft, unknown
from replay_engine.kraft_evidence import (departure_findings, hole_between, previous_registration, quorum_epoch_holes,
                                          renounce_findings, reverted_on_renounce, stated_within_replayed,
                                          topic_names_from_lines, uncommitted_in_metadata_log, unjudged_epoch_reason,
                                          unseen_partition_changes)
from replay_engine.kraft_point import isr_after_leader_left, rederive_stated_leader, stated_leader_whatever_the_isr
from replay_engine.kraft_rules import isr_without
from replay_engine.partition import UNKNOWN, BrokerPeriod, Decision, PState, Tenure
from replay_engine.states import NON_EXISTENT, OFFLINE, ONLINE
from replay_engine.timeline import TimelineBuilder, View

KRAFT_TYPES = frozenset({"partition_record", "partition_change", "topic_record", "topic_removed", "kraft_leader_change",
                         "broker_fenced", "broker_unfenced", "broker_registration_change", "broker_unregistered",
                         "broker_heartbeat_timeout", "feature_level", "config_record", "metadata_record"})
# A fence and the partition changes it causes are appended together; records this close are one step.
SAME_STEP_US = 5_000


# Unjudged because partition changes came that no line in the evidence shows (see kraft_evidence)
UNSEEN_STEPS = ("leader epoch: the epochs before it were decided in steps", "leader epoch: ISR unknown (")
RESTATED = "leader epoch: stated again after a later one was known"

ZK_CONTROLLER_TYPES = frozenset({"controller_elected", "partition_state_change", "zk_txn", "partition_state_written",
                                 "broker_failed"})


def is_kraft(events: list[Event]) -> bool:
    """KRaft evidence and no ZooKeeper-mode controller activity."""
    counts: dict[str, int] = {}
    for e in events:
        counts[e.event_type] = counts.get(e.event_type, 0) + 1
    return is_kraft_counts(counts)


def is_kraft_counts(counts: dict[str, int]) -> bool:
    """The same decision from event counts by type (what Spark aggregates per cluster)."""
    kraft = sum(n for t, n in counts.items() if t in KRAFT_TYPES and t != "metadata_record")
    zk = sum(n for t, n in counts.items() if t in ZK_CONTROLLER_TYPES)
    return kraft > 0 and kraft >= zk


class KraftReplay:
    def __init__(self, config: ConfigState):
        self.config = config
        self.registered: dict[int, Any] = {}
        self.fenced: set[int] = set()
        self.cs: set[int] = set()
        self.live: set[int] = set()  # registered and unfenced (what the timeline calls alive)
        self.known_brokers: set[int] = set()
        self.topic_names: dict[str, str] = {}
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
        self.leaving: dict[int, set[int]] = {}  # batch base offset -> brokers the batch takes out
        self.epoch_known_at: dict[F.TP, int] = {}  # when a line or a replayed step last set the current leader epoch
        self.holes: list[tuple[int, int, int, int]] = []  # stretches the evidence lost (quorum_epoch_holes)
        # (partition, leader epoch) -> when the evidence first stated it (a broker restarting restates old epochs)
        self.epoch_first_seen: dict[F.TP, dict[int, int]] = {}
        self.liveness_at: dict[int, int] = {}  # broker -> time of the last line the replay took its liveness from
        self.min_epoch: dict[F.TP, int] = {}  # a leader epoch the partition has reached in a step not derived
        self._seq = 0

    # ------------------------------------------------------------------ helpers

    def acceptable(self) -> frozenset[int]:
        return frozenset(b for b in self.registered if b not in self.fenced and b not in self.cs)

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

    def _tp(self, ev: Event) -> F.TP | None:
        tid = (ev.detail or {}).get("topic_id")
        topic = ev.topic or self.topic_names.get(tid or "") or (f"topic-id:{tid}" if tid else None)
        if topic is None or ev.partition is None:
            return None
        return (topic, int(ev.partition))

    def _unclean(self, topic: str) -> bool:
        return as_bool(self.config.unclean_enabled(topic).value)

    def _rule(self, decision: str, *args):
        """Kafka's rule for ``decision`` in the version that wrote the evidence (replay_engine.rules)."""
        return R.decide(decision, self.config.version, *args)

    # ------------------------------------------------------------------ events

    def run(self, events: list[Event]) -> None:
        history, echoes = history_and_echoes(events)
        # Logs only: the controller's lines name topic ids, the brokers' name both (resolved before replaying)
        self.topic_names.update(topic_names_from_lines(events))
        self.leaving = leaving_by_batch(events)
        self.history_lines, self.echo_lines = len(history), len(echoes)
        reverted = reverted_on_renounce(events)
        uncommitted = uncommitted_in_metadata_log(events, lambda offsets, n: self._rule("kraft.renounce", offsets, n))
        self.holes = quorum_epoch_holes(events)
        undone: dict[int, list[Event]] = {}
        for i, ev in enumerate(events):
            if i in reverted and self._rule("kraft.renounce.failed_write", (events[reverted[i]].detail or {}).get("exception")):
                undone.setdefault(reverted[i], []).append(ev)  # rolled back by the controller's renounce: not replayed
                continue
            if i in uncommitted:
                undone.setdefault(uncommitted[i], []).append(ev)  # appended, never committed: not replayed
                continue
            if i in echoes:
                continue
            if i in history:
                self._learn(ev)  # the state it describes, without treating it as something that just happened
                continue
            h = getattr(self, "_on_" + ev.event_type, None)
            if h is not None:
                h(ev)
            elif ev.event_type in ("become_leader", "become_follower", "leader_and_isr_received"):
                self._observed(ev)
            else:
                tp = self._tp(ev) if ev.topic is not None or ev.partition is not None else None
                r = ref_of(ev)
                if ev.subject_broker is not None:
                    self.evidence_by_broker.setdefault(ev.subject_broker, []).append(r)
                if tp is not None:
                    self.evidence_by_tp.setdefault(tp, []).append(r)
        self.findings.extend(renounce_findings(events, undone))
        self.findings.extend(departure_findings(self.comparisons, self.config.version))

    def _on_kraft_leader_change(self, ev: Event) -> None:
        c, epoch = ev.controller_id, ev.controller_epoch
        if self.tenures and self.tenures[-1].end is None:
            t = self.tenures[-1]
            if t.controller == c and (epoch is None or t.epoch == epoch):
                return
            t.end, t.end_ref, t.end_cause = ev.ts, ref_of(ev), "new quorum leader" if c is not None and c >= 0 else "renounced"
        if c is not None and c >= 0:
            self.tenures.append(Tenure(c, epoch, ev.ts or 0, start_ref=ref_of(ev)))

    def _on_kraft_renounce_on_error(self, ev: Event) -> None:
        c = (ev.detail or {}).get("renounced_by")
        if self.tenures and self.tenures[-1].end is None and self.tenures[-1].controller == c:
            t = self.tenures[-1]
            t.end, t.end_ref, t.end_cause = ev.ts, ref_of(ev), "renounced"

    def _on_broker_registered(self, ev: Event) -> None:
        b = ev.subject_broker
        if b is None:
            return
        d = ev.detail or {}
        self.registered[b] = d.get("broker_epoch")
        if d.get("via") == "kraft_record" or d.get("fenced") is not None:
            (self.fenced.add if d.get("fenced", True) else self.fenced.discard)(b)
        self.cs.discard(b)
        self.evidence_by_broker.setdefault(b, []).append(ref_of(ev))
        self._liveness(b, ev.ts or 0, ref_of(ev), "registered")

    def _on_broker_unregistered(self, ev: Event) -> None:
        b = ev.subject_broker
        if b is None:
            return
        self.registered.pop(b, None)
        self.recent_gone[b] = ev.ts or 0
        self._liveness(b, ev.ts or 0, ref_of(ev), "unregistered")

    def _fence(self, b: int, ev: Event, cause: str) -> None:
        self.registered.setdefault(b, None)
        self.fenced.add(b)
        self.recent_gone[b] = ev.ts or 0
        self.evidence_by_broker.setdefault(b, []).append(ref_of(ev))
        self._liveness(b, ev.ts or 0, ref_of(ev), cause)
        if not self.has_records:
            self._replay_leaving(b, ev)

    def _on_broker_fenced(self, ev: Event) -> None:
        if ev.subject_broker is not None:
            self._fence(ev.subject_broker, ev, "fenced")

    def _on_broker_heartbeat_timeout(self, ev: Event) -> None:
        if ev.subject_broker is not None:
            self.evidence_by_broker.setdefault(ev.subject_broker, []).append(ref_of(ev))

    def _on_broker_unfenced(self, ev: Event) -> None:
        b = ev.subject_broker
        if b is None:
            return
        self.registered.setdefault(b, None)
        self.fenced.discard(b)
        self.cs.discard(b)
        self._liveness(b, ev.ts or 0, ref_of(ev), "unfenced")
        if not self.has_records:
            self._replay_unfence(ev)

    def _on_broker_registration_change(self, ev: Event) -> None:
        b = ev.subject_broker
        if b is None:
            return
        d = ev.detail or {}
        if d.get("fenced") == 1:
            self._fence(b, ev, "fenced")
        elif d.get("fenced") == -1:
            self._on_broker_unfenced(ev)
        if d.get("in_controlled_shutdown") == 1 and b not in self.cs:
            self.cs.add(b)
            self.recent_gone[b] = ev.ts or 0
            self.evidence_by_broker.setdefault(b, []).append(ref_of(ev))
            self._liveness(b, ev.ts or 0, ref_of(ev), "controlled_shutdown")
            if not self.has_records:
                self._replay_leaving(b, ev)

    def _on_controlled_shutdown_requested(self, ev: Event) -> None:
        """'Unfenced broker N has requested and been granted a controlled shutdown' (the controller's grant)."""
        b = ev.subject_broker
        if b is None or (ev.detail or {}).get("side") != "controller" or b in self.cs:
            return
        self.cs.add(b)
        self.recent_gone[b] = ev.ts or 0
        self.evidence_by_broker.setdefault(b, []).append(ref_of(ev))
        self._liveness(b, ev.ts or 0, ref_of(ev), "controlled_shutdown")
        if not self.has_records:
            self._replay_leaving(b, ev)

    def _on_topic_record(self, ev: Event) -> None:
        tid = (ev.detail or {}).get("topic_id")
        if tid and ev.topic:
            self.topic_names[tid] = ev.topic

    def _on_topic_removed(self, ev: Event) -> None:
        topic = ev.topic or self.topic_names.get((ev.detail or {}).get("topic_id") or "")
        for tp in sorted(t for t in self.parts if t[0] == topic):
            self.store.drop(tp)
            self.timeline.update(tp, ev.ts or 0, View(None, None, None, None, NON_EXISTENT, None), ref_of(ev), "recorded")

    def _on_config_record(self, ev: Event) -> None:
        d = ev.detail or {}
        name, value = d.get("name"), d.get("value")
        if name is None:
            return
        rtype = str(d.get("resource_type") or "")
        entry = (str(value), ref_of(ev)) if value is not None else None
        if rtype in ("2", "TOPIC", "topic") and ev.topic:
            cfg = self.config.topic.setdefault(ev.topic, {})
        elif rtype in ("4", "BROKER", "broker") and not d.get("resource_name"):
            cfg = self.config.cluster_dynamic
        else:
            return
        if entry is None:
            cfg.pop(name, None)
        else:
            cfg[name] = entry
        self.config_history.append((ev.ts or 0, self.config.image()))

    def _on_feature_level(self, ev: Event) -> None:
        d = ev.detail or {}
        if d.get("name") == "eligible.leader.replicas.version":
            self.elr_enabled = int(d.get("level") or 0) >= 1

    def _on_broker_config(self, ev: Event) -> None:
        if ev.subject_broker is not None:
            self.config.broker_static.setdefault(ev.subject_broker, {}).update(
                {k: (str(v), ref_of(ev)) for k, v in ((ev.detail or {}).get("config") or {}).items()})

    def _on_kafka_version(self, ev: Event) -> None:
        v = parse_version((ev.detail or {}).get("version"))
        if v is not None and self.config.version is None:
            self.config.version = v
            self.config.version_source = f"logged 'Kafka version: {(ev.detail or {}).get('version')}'"

    # ------------------------------------------------------------------ partition records

    def _on_partition_record(self, ev: Event) -> None:
        tp = self._tp(ev)
        if tp is None:
            return
        self.has_records = self.has_records or ev.source_kind == "kraft_metadata"
        p = self.parts.get(tp)
        d = ev.detail or {}
        r = ref_of(ev)
        snapshot = d.get("snapshot_offset") is not None or ev.source_kind != "kraft_metadata"
        if p is None and not snapshot and ev.replicas:
            # A topic created now: the ISR is the usable replicas, the leader the first of them.
            ok = self.acceptable()
            isr = tuple(x for x in ev.replicas if x in ok) or tuple(ev.replicas)
            replayed = {"leader": isr[0] if isr and isr[0] in ok else -1, "isr": list(isr)}
            recorded = {"leader": ev.leader, "isr": list(ev.isr or [])}
            self._judge(tp, ev, recorded, replayed, "new partition (KRaft createTopics)")
        p = self.store.part(tp)
        self._set_replicas(p, ev.replicas or (), ev.ts or 0)
        self.store.set_leader(p, ev.leader)
        self.store.set(p, isr=tuple(ev.isr or ()), leader_epoch=ev.leader_epoch, zk_version=ev.zk_version,
                       controller_epoch=ev.controller_epoch)
        self.store.move(p, ONLINE if (ev.leader or -1) >= 0 else OFFLINE, OBSERVED if snapshot else RECORDED,
                        ev.ts or 0, r)
        self.elr[tp] = (tuple(d.get("elr") or ()), tuple(d.get("last_known_elr") or ()))
        self._show(p, ev.ts or 0, r, "recorded" if not snapshot else "observed")

    def _on_partition_change(self, ev: Event) -> None:
        tp = self._tp(ev)
        if tp is None:
            return
        self.has_records = self.has_records or ev.source_kind == "kraft_metadata"
        p = self.parts.get(tp)
        d = ev.detail or {}
        r = ref_of(ev)
        changed = set(d.get("changed") or [])
        prev = previous_registration(d)
        if prev is not None and (p is None or p.isr is None):
            # The change's own line states the registration it started from (4.x PartitionChangeBuilder)
            p = self.store.part(tp)
            self._set_replicas(p, prev["replicas"], ev.ts or 0)
            self.store.set_leader(p, prev["leader"])
            self.store.set(p, isr=prev["isr"], leader_epoch=prev["leader_epoch"], zk_version=prev["partition_epoch"])
            self.elr[tp] = (prev["elr"], prev["last_known_elr"])
        if p is None or p.isr is None:
            if "leader" in changed:
                self.comparisons.append(unknown(tp, ev.ts or 0, r, {"leader": ev.leader},
                                                "leader change: partition unknown before the record"))
            p = self.store.part(tp)
        else:
            target = tuple(ev.isr) if ev.isr is not None and "isr" in changed else p.isr
            leaving = self.leaving.get(d.get("batch_base_offset"), set()) if ev.source_kind == "kraft_metadata" else set()
            gone = {b for b, t in self.recent_gone.items() if (ev.ts or 0) - t <= SAME_STEP_US} | leaving
            if "leader" in changed:
                ok = self.acceptable() - leaving
                elr = self.elr.get(tp, ((), ()))[0]
                if d.get("elr") is not None:
                    elr = tuple(d.get("elr") or ())
                # ELR is in use when the feature is on, or a registration holds ELR members (only KIP-966 fills them)
                elr_on = self.elr_enabled or d.get("elr") is not None or bool(prev and prev["elr"])
                res = self._rule("kraft.election", p.replicas or p.isr, target, p.leader, ok, self._unclean(tp[0]), elr, elr_on,
                                 self.elr.get(tp, ((), ()))[1])  # lastKnownElr before this change
                if res.how == "kept" and ev.leader != res.leader and "isr" not in changed:
                    # Only a PREFERRED election (the periodic rebalance) moves leadership off a valid leader.
                    res = self._rule("kraft.election.preferred", p.replicas or p.isr, target, p.leader, ok, elr, elr_on)
                recorded = {"leader": ev.leader}
                replayed = {"leader": res.leader}
                self._judge(tp, ev, recorded, replayed, f"PartitionChangeBuilder ({res.how})")
                if ev.leader is not None and ev.leader >= 0 and ev.leader not in p.isr and ev.leader not in target:
                    self._unclean_record(p, ev)
                elif res.how == "unclean" and ev.leader == res.leader:
                    self._unclean_record(p, ev)
                if ev.leader == -1:
                    self.failed_elections.setdefault(tp, []).append(r)
            elif "isr" in changed and gone & set(p.isr):
                # The controller took a fenced / shutting-down broker out of the ISR (no leader change).
                replayed = {"isr": list(self._rule("kraft.isr_shrink", p.isr, gone, self.elr_enabled or d.get("elr") is not None))}
                self._judge(tp, ev, {"isr": list(ev.isr or [])}, replayed, "ISR shrink on fence / shutdown")
        if ev.replicas is not None and "replicas" in changed:
            self._set_replicas(p, ev.replicas, ev.ts or 0)
        store = self.store
        if "leader" in changed and ev.leader is not None:
            store.set_leader(p, ev.leader)
            store.set(p, leader_epoch=None if p.leader_epoch is None else p.leader_epoch + 1)
        if "isr" in changed and ev.isr is not None:
            store.set(p, isr=tuple(ev.isr))
        store.adopt(p, leader_epoch=ev.leader_epoch, zk_version=ev.zk_version, controller_epoch=ev.controller_epoch)
        if d.get("elr") is not None or d.get("last_known_elr") is not None:
            old = self.elr.get(tp, ((), ()))
            self.elr[tp] = (tuple(d.get("elr") if d.get("elr") is not None else old[0]),
                            tuple(d.get("last_known_elr") if d.get("last_known_elr") is not None else old[1]))
        store.move(p, ONLINE if p.leader is not None and p.leader >= 0 else OFFLINE, RECORDED, ev.ts or 0, r)
        self._show(p, ev.ts or 0, r, "recorded")

    def _on_isr_updated(self, ev: Event) -> None:
        """The leader's AlterPartition, accepted by the controller ("ISR updated to 1,2 and version updated to 111",
        kafka.cluster.Partition): the ISR the controller holds from then on, until a newer partition epoch."""
        tp = self._tp(ev)
        if tp is None or ev.isr is None:
            return
        p = self.parts.get(tp)
        if p is None or (ev.zk_version is not None and p.zk_version is not None and ev.zk_version < p.zk_version):
            return
        self.store.adopt(p, isr=ev.isr, zk_version=ev.zk_version)
        if ev.zk_version is not None:
            self.replayed_since[tp] = 0
        self._show(p, ev.ts or 0, ref_of(ev), "recorded")

    def _unclean_record(self, p: PState, ev: Event) -> None:
        self._seq += 1
        d = Decision(self._seq, ev.ts or 0, p.tp, "election", "UNCLEAN", ref_of(ev),
                     p.snapshot(), {"leader": ev.leader, "isr": list(ev.isr or [ev.leader])}, unclean=True,
                     status="agreed", record=ref_of(ev))
        self.unclean_elections.append(d)
        self.decisions.append(d)

    def _judge(self, tp: F.TP, ev: Event, recorded: dict, replayed: dict, how: str) -> None:
        r = ref_of(ev)
        c = judge_kraft(tp, ev.ts or 0, r, recorded, replayed, how)
        self.comparisons.append(c)
        self._seq += 1
        self.decisions.append(Decision(self._seq, ev.ts or 0, tp, "election" if "leader" in replayed else "isr_removal",
                                       how, r, {}, replayed, status=c.verdict, record=r))

    def _learn(self, ev: Event) -> None:
        t = ev.event_type
        if t == "topic_record":
            self._on_topic_record(ev)
        elif t == "broker_registered" and ev.subject_broker is not None:
            self.registered[ev.subject_broker] = (ev.detail or {}).get("broker_epoch")
            self.known_brokers.add(ev.subject_broker)
        elif t == "partition_record":
            tp = self._tp(ev)
            if tp is not None and ev.replicas:
                p = self.store.part(tp)
                self._set_replicas(p, ev.replicas, ev.ts or 0)
                if ev.leader_epoch is not None and ev.isr is not None and (
                        p.leader_epoch is None or ev.leader_epoch >= p.leader_epoch):
                    # A controller loading the metadata log re-states the registration: as new as anything the
                    # replay knows (same or higher leader epoch), it is the partition's state now
                    self.store.set_leader(p, ev.leader)
                    self.store.set(p, isr=tuple(ev.isr), leader_epoch=ev.leader_epoch)
                    self.store.adopt(p, zk_version=ev.zk_version)
                    self.store.move(p, ONLINE if (ev.leader if ev.leader is not None else -1) >= 0 else OFFLINE,
                                    OBSERVED, ev.ts or 0, ref_of(ev))
                    self._show(p, ev.ts or 0, ref_of(ev), "observed")

    # ------------------------------------------------------------------ log-only evidence

    def _replay_leaving(self, b: int, ev: Event) -> None:
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
            self._apply_replayed(p, ev, res.leader, res.isr, res.how == "unclean")

    def _behind(self, p: PState) -> bool:
        """The registration held is older than a change the replay knows was made but could not derive."""
        return p.leader_epoch is not None and p.leader_epoch < self.min_epoch.get(p.tp, -1)

    def _replay_unfence(self, ev: Event) -> None:
        ok = self.acceptable()
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.leader is not None and p.leader < 0 and p.isr is not None and not self._behind(p):
                res = self._rule("kraft.election", p.replicas or p.isr, p.isr, None, ok, self._unclean(tp[0]), (), self.elr_enabled)
                if res.leader >= 0:
                    self._apply_replayed(p, ev, res.leader, res.isr, res.how == "unclean")

    def _apply_replayed(self, p: PState, ev: Event, leader: int, isr, unclean: bool) -> None:
        bump = self._rule("kraft.leader_epoch_bump", p.leader, p.isr, leader, isr)
        if bump is None:
            return  # the controller writes no record for a change that changes nothing
        le = p.leader_epoch + 1 if bump and p.leader_epoch is not None else p.leader_epoch
        state = ONLINE if leader >= 0 else OFFLINE
        change = Change(leader, tuple(isr), le, state=state, attempted=state, failed_election=leader < 0)
        before = p.snapshot()
        if not self.store.apply_decision(p, change, ev.ts or 0, ref_of(ev)):
            return
        self.replayed_since[p.tp] = self.replayed_since.get(p.tp, 0) + 1
        self.epoch_known_at[p.tp] = ev.ts or 0
        if p.leader_epoch is not None:
            self.epoch_first_seen.setdefault(p.tp, {}).setdefault(p.leader_epoch, ev.ts or 0)
        self._seq += 1
        d = Decision(self._seq, ev.ts or 0, p.tp, "election" if leader >= 0 else "election_failed", "KRaft (replayed)",
                     ref_of(ev), before, {"leader": leader, "isr": list(isr), "leader_epoch": p.leader_epoch},
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
            self.failed_elections.setdefault(p.tp, []).append(ref_of(ev))
        self._show(p, ev.ts or 0, ref_of(ev), "replayed")

    def _unknown(self, p: PState, ev: Event, leader: int | None, why: str) -> None:
        seen = self.epoch_first_seen.get(p.tp, {})
        first = ev.leader_epoch is not None and seen.get(ev.leader_epoch) == ev.ts
        if why.startswith(UNSEEN_STEPS) or why.startswith(RESTATED) and first:
            # The steps were decided after the state the replay holds; if the evidence lost a stretch since, they
            # may lie in it: an evidence gap, not a record the evidence could have judged. A line restating an
            # epoch no line stated before was decided after the last earlier epoch the evidence shows.
            at = p.leader_epoch if why.startswith(UNSEEN_STEPS) else max(
                (e for e in seen if e < ev.leader_epoch), default=None)
            since = seen.get(at, self.epoch_known_at.get(p.tp) if at == p.leader_epoch else None)
            h = hole_between(self.holes, since, ev.ts or 0)
            if h is not None:
                why = (f"{EVIDENCE_GAP} (quorum epochs {h[2]}-{h[3]}, {iso_utc(h[0])} to {iso_utc(h[1])}, are in no "
                       f"line: {why})")
        self.comparisons.append(unknown(p.tp, ev.ts or 0, ref_of(ev), {"leader": leader}, why))

    def _point(self, p: PState, ev: Event, leader: int) -> None:
        """A stated leader epoch the replay did not reach itself: re-derived from the registration before it."""
        decided = (p.tp, ev.leader_epoch) in self.replayed_epochs
        epoch, was, isr, replicas = p.leader_epoch, p.leader, p.isr, p.replicas
        unseen = unseen_partition_changes(p.zk_version, self.replayed_since.get(p.tp, 0), ev.zk_version)
        skipped = self.before_skip.get(p.tp)
        if skipped is not None and epoch == ev.leader_epoch and skipped[0] is not None and skipped[0] + 1 == epoch:
            epoch, was, isr, replicas = skipped  # the epoch was first seen in another broker's 'Skipped' line
        if epoch is None or ev.leader_epoch != epoch + 1 or was is None or decided:
            self._unknown(p, ev, leader, unjudged_epoch_reason(epoch, ev.leader_epoch, decided))
            return
        # Where the replay knows no other replica to be acceptable, the outcome follows from ISR membership alone:
        # the comparison says so (the liveness it rests on is the replay's, from fence / shutdown / unfence lines).
        others = set(replicas or isr or ()) - {was, leader}
        alone = "" if others & self.acceptable() else "; no other replica known acceptable"
        if unseen or not isr:
            why = f"{unseen} ISR-only partition change(s) before it are in no line" if unseen else "not in the evidence"
            if stated_leader_whatever_the_isr(replicas, was, leader, self.acceptable(), self._unclean(p.tp[0])):
                self._judge(p.tp, ev, {"leader": leader}, {"leader": leader},
                            f"point: elected whatever the ISR ({why}{alone})")
            else:
                self._unknown(p, ev, leader, f"leader epoch: ISR unknown ({why})")
            return
        want, how = rederive_stated_leader(replicas, isr, was, leader, self.acceptable(), self._unclean(p.tp[0]),
                                           self.elr_enabled)
        stale = None if want == leader else self._stale_liveness(leader, want, self.acceptable(), ev.ts or 0,
                                                                 self.liveness_at)
        if stale is not None:
            self._unknown(p, ev, leader, stale)
            return
        self._judge(p.tp, ev, {"leader": leader}, {"leader": want}, f"point: {how}{alone}")
        if want == leader and was >= 0 and leader != was and "left" in how:
            # the step that moved leadership took the old leader out of the ISR (brokerToRemove), unless a
            # preferred election, which keeps the ISR, explains the move as well
            self.store.set(p, isr=isr_after_leader_left(replicas, isr, was, leader, self.acceptable(), self.elr_enabled))

    def _stale_liveness(self, recorded: int, replayed: int | None, acceptable: frozenset[int], ts: int,
                        liveness_at: dict[int, int]) -> str | None:
        """Why a leader the record and the replay disagree on rests on liveness the evidence lost, if it does.

        An elected leader was acceptable when elected (isAcceptableLeader: registered, unfenced, not shutting down);
        a broker the replay elected and the controller passed over was not. Where the replay held the other view of
        that broker from a line older than a stretch the evidence lost (:func:`quorum_epoch_holes`), its
        registration changed in that stretch: the record shows a state the replay never saw."""
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

    def _judge_replayed(self, tp: F.TP, ev: Event, leader: int, d: Decision, pe: int | None,
                        acceptable: frozenset[int], unclean: bool, seen: dict[int, int]) -> None:
        """A broker's line at the leader epoch one of the replay's own decisions reached, judged against it.

        A line stating a later partition epoch than the decision wrote may follow ISR-only changes no line shows
        (AlterPartition by the leader), before the decision as well as after: the decision then rests on an ISR the
        replay did not know, and is judged only if its outcome holds whatever that ISR was (as :meth:`_point`)."""
        unseen = unseen_partition_changes(pe, 0, ev.zk_version) if pe is not None else None
        c = None
        if unseen:
            was, replicas = d.before.get("leader"), d.before.get("replicas")
            if was is not None and stated_leader_whatever_the_isr(replicas, was, leader, acceptable, unclean):
                c = judge_kraft(tp, ev.ts or 0, ref_of(ev), {"leader": leader}, {"leader": leader},
                                f"broker's own view of the replayed decision: elected whatever the ISR ({unseen} "
                                f"partition change(s) up to it are in no line)")
            else:
                self._unknown(self.store.part(tp), ev, leader, f"leader epoch: ISR unknown ({unseen} ISR-only "
                                                                   f"partition change(s) up to it are in no line)")
                return
        if c is None:
            c = judge_kraft(tp, ev.ts or 0, ref_of(ev), {"leader": leader}, {"leader": d.after.get("leader")},
                            "broker's own view of the replayed decision")
            stale = None if c.agreed else self._stale_liveness(leader, d.after.get("leader"), acceptable, d.ts, seen)
            if stale is not None:
                self.comparisons.append(unknown(tp, ev.ts or 0, ref_of(ev), {"leader": leader}, stale))
                return
        self.comparisons.append(c)
        d.status = c.verdict

    def _observed(self, ev: Event) -> None:
        """A broker says it became leader/follower: the controller's decision, as delivered."""
        tp = self._tp(ev)
        if tp is None:
            return
        p = self.store.part(tp)
        leader = ev.leader if ev.leader is not None else (ev.broker_id if ev.event_type == "become_leader" else None)
        if leader is None:
            if not self.has_records and ev.leader_epoch is not None:
                self._unknown(p, ev, None, "leader epoch: the line does not name the leader")
            return
        if ev.leader_epoch is not None and ev.ts is not None:
            self.epoch_first_seen.setdefault(tp, {}).setdefault(ev.leader_epoch, ev.ts)
        mine = self.replayed_at.get((tp, ev.leader_epoch)) if ev.leader_epoch is not None else None
        judged = not self.has_records and mine is not None and mine[0].status == "applied"
        if not judged and not self.has_records and ev.leader_epoch is not None \
                and ev.event_type != "leader_and_isr_received":
            self._point(p, ev, leader)
        if judged:
            # The broker states the outcome of the very decision the replay took (same leader epoch).
            self._judge_replayed(tp, ev, leader, *mine)
        stated = self.stated_epoch.get(tp)
        # The epoch right after the one known, its leader not seen leaving since: the election the line states
        # came after everything the replay knows of that leader
        next_epoch = ev.leader_epoch is not None and p.leader_epoch is not None and ev.leader_epoch == p.leader_epoch + 1 \
            and leader >= 0 and self.recent_gone.get(leader, -1) <= self.epoch_known_at.get(tp, -1)
        if ev.leader_epoch is not None and ev.leader_epoch < self.min_epoch.get(tp, -1):
            return  # a broker behind a step the replay knows was taken (see _replay_leaving)
        if ev.leader_epoch is not None and p.leader_epoch is not None and (ev.leader_epoch, ev.zk_version or 0) \
                < (p.leader_epoch, p.zk_version or 0) and (stated is None or ev.leader_epoch < stated[0]
                                                            or p.leader_epoch <= stated[0]
                                                            or stated_within_replayed(p.zk_version, ev.zk_version,
                                                                                      self.replayed_since.get(tp, 0))):
            return  # older than the registration known (leader epoch, then partition epoch)
        # A broker stating an epoch below what only the replay's own steps reached: those steps were not what the
        # controller committed (no broker ever states them); the broker's registration is taken instead.
        if ev.leader_epoch is not None and (stated is None or ev.leader_epoch >= stated[0]):
            self.stated_epoch[tp] = (ev.leader_epoch, ev.zk_version)
        if (ev.detail or {}).get("skipped") and ev.leader_epoch is not None and p.leader_epoch is not None \
                and ev.leader_epoch > p.leader_epoch:
            # a broker already at a newer epoch: the registration before it stays at hand for the line stating it
            self.before_skip[tp] = (p.leader_epoch, p.leader, p.isr, p.replicas)
        if ev.isr is None and (unseen_partition_changes(p.zk_version, self.replayed_since.get(tp, 0), ev.zk_version)
                               or (p.leader_epoch is not None and ev.leader_epoch is not None
                                   and ev.leader_epoch > p.leader_epoch + 1)):
            self.store.set(p, isr=None)  # the line does not state the ISR, and unseen changes came before it
        self.store.adopt(p, leader, ev.isr, ev.leader_epoch, zk_version=ev.zk_version, replicas=ev.replicas,
                         ts=ev.ts or 0)
        if ev.leader_epoch is not None and ev.leader_epoch == p.leader_epoch:
            self.epoch_known_at[tp] = ev.ts or 0
        if ev.zk_version is not None:
            self.replayed_since[tp] = 0
        b = ev.broker_id
        own = ev.event_type == "become_leader" and b is not None and leader == b
        if (own or ev.event_type == "become_follower" and next_epoch) and not self.has_records \
                and (leader in self.fenced or leader in self.cs or leader not in self.registered):
            # elected at this new epoch, so active then (isAcceptableLeader: registered, unfenced, not shutting down);
            # a follower's line names the leader of the epoch it starts just as the leader's own line does
            self.registered.setdefault(leader, None)
            self.fenced.discard(leader)
            self.cs.discard(leader)
            self._liveness(leader, ev.ts or 0, ref_of(ev), "elected leader")
        self.store.move(p, ONLINE if leader >= 0 else OFFLINE, OBSERVED, ev.ts or 0, ref_of(ev))
        self._show(p, ev.ts or 0, ref_of(ev), "observed")


# A controller loading its log re-logs every record ("Replayed ...") within moments: that is history, not news.
BURST_WINDOW_US = 2_000_000
BURST_MIN = 20
# Every quorum member logs the record it replays: the same record from several writers counts once.
ECHO_WINDOW_US = 2_000_000


def leaving_by_batch(events: list[Event]) -> dict[int, set[int]]:
    """Batch base offset -> brokers a metadata batch fences, unregisters or puts in controlled shutdown.

    handleBrokerFenced / handleBrokerUnregistered write the broker's partition changes *before* its fence or
    unregister record, in the same batch: those changes were decided with the broker already out."""
    out: dict[int, set[int]] = {}
    for e in events:
        d = e.detail or {}
        if e.source_kind != "kraft_metadata" or e.subject_broker is None or d.get("batch_base_offset") is None \
                or d.get("snapshot_offset") is not None:
            continue
        out_now = e.event_type in ("broker_fenced", "broker_unregistered") or (
            e.event_type == "broker_registration_change" and (d.get("fenced") == 1 or d.get("in_controlled_shutdown") == 1))
        if out_now:
            out.setdefault(d["batch_base_offset"], set()).add(e.subject_broker)
    return out


def _is_replay_line(e: Event) -> bool:
    return e.source_kind == "broker_log" and "Replayed " in (e.raw or "")[:200]


def history_and_echoes(events: list[Event]) -> tuple[set[int], set[int]]:
    """Indexes of log events that re-state history (start-up bursts) and of echoes from other controllers."""
    history: set[int] = set()
    by_writer: dict[object, list[int]] = {}
    for i, e in enumerate(events):
        if _is_replay_line(e) and e.ts is not None:
            by_writer.setdefault((e.broker_id, e.source_file), []).append(i)
    for idxs in by_writer.values():
        start = 0
        for end in range(len(idxs)):
            while events[idxs[end]].ts - events[idxs[start]].ts > BURST_WINDOW_US:
                start += 1
            if end - start + 1 >= BURST_MIN:
                history.update(idxs[start:end + 1])
    echoes: set[int] = set()
    last: dict[tuple, tuple[int, object]] = {}
    for i, e in enumerate(events):
        if e.source_kind != "broker_log" or not _is_replay_line(e) or e.ts is None:
            continue
        d = e.detail or {}
        key = (e.event_type, e.subject_broker, e.topic, e.partition, d.get("broker_epoch"), d.get("fenced"),
               d.get("in_controlled_shutdown"), d.get("topic_id"))
        prev = last.get(key)
        if prev is not None and e.ts - prev[0] <= ECHO_WINDOW_US and prev[1] != e.broker_id:
            echoes.add(i)
            continue
        last[key] = (e.ts, e.broker_id)
    return history, echoes


def kraft_order(events: list[Event]) -> list[Event]:
    """Metadata records in log order (offset), log lines by time; merged by time, records first on ties.

    Lines of one file in the same millisecond keep the file's order: a line without the writer's id in it
    (PartitionChangeBuilder's) is ordered as its file's writer, not before every broker's lines."""
    writer: dict[str, int] = {}
    for e in events:
        if e.broker_id is not None and e.source_file:
            writer[e.source_file] = min(writer.get(e.source_file, e.broker_id), e.broker_id)

    def key(e: Event):
        rank = 0 if e.source_kind == "kraft_metadata" else 1
        pos = e.source_pos or 0
        b = e.broker_id if e.broker_id is not None else writer.get(e.source_file or "", -1)
        return (e.ts or 0, rank, pos if rank == 0 else 0, b, e.source_file or "", pos, e.source_sub)
    return sorted(events, key=key)
