"""The quorum controller's partition records (``PartitionRecord``, ``PartitionChangeRecord`` and the lines that log
them), each judged by ``PartitionChangeBuilder``'s rules for the release, then followed.
"""
from __future__ import annotations

from replay_engine.common import facts as F
from replay_engine.common.apply import OBSERVED, RECORDED
from replay_engine.common.facts import iso_utc
from replay_engine.common.judge import EVIDENCE_GAP, unknown, unseen_reason
from replay_engine.kraft.build import BrokerEvent, Registration, build
from replay_engine.kraft.evidence import broker_event_of, hole_between
from replay_engine.kraft.point import created_leader
from replay_engine.kraft.part import KraftPart
from replay_engine.common.partition import Decision, PState
from replay_engine.kraft.context import ADD, REMOVE, UNCLEAN_SHUTDOWN
from replay_engine.common.states import OFFLINE, ONLINE

# A fence and the partition changes it causes are appended together; records this close are one step.
SAME_STEP_US = 5_000
ELR_FIELDS = frozenset({"eligibleLeaderReplicas", "lastKnownElr"})  # a record's field names


class KraftRecords(KraftPart):
    """Judges and follows the controller's partition records."""

    def on_partition_record(self, f: F.PartitionRegistration) -> None:
        tp, r, ts = f.tp, f.ref, f.ts
        self.r.topics.incarnation(tp, f.topic_id, ts, r)
        self.r.has_records = self.r.has_records or f.metadata_log
        p = self.parts.get(tp)
        snapshot = f.snapshot
        if snapshot and p is not None and p.leader_epoch is not None and f.leader_epoch is not None \
                and (f.leader_epoch, f.zk_version or 0) < (p.leader_epoch, p.zk_version or 0):
            # Older than the registration held: a controller replaying the log as it loads it logs each PartitionRecord
            # again ("Created partition ..." 3.3-3.8, "Replayed PartitionRecord for new partition ..." 3.9+,
            # ReplicationControlManager.replay(PartitionRecord)); the record is the creation, and the changes since are
            # replayed at DEBUG. History, as an older line of a broker is (see KraftLines._observed).
            return
        if p is None and not snapshot and f.replicas:
            # A topic created now: the ISR is the usable replicas, the leader the first of them.
            leader, isr = created_leader(f.replicas, self.brokers.acceptable(), self.brokers.shutting_down(),
                                         version=self.r.config.version)
            replayed = {"leader": leader, "isr": list(isr)}
            recorded = {"leader": f.leader, "isr": list(f.isr or [])}
            unseen = self._unseen_brokers(f.replicas)
            if unseen and created_leader(f.replicas, self.brokers.acceptable() | unseen, self.brokers.shutting_down(),
                                         version=self.r.config.version) != (leader, isr):
                self.r.comparisons.append(unknown(tp, ts, r, recorded, unseen_reason(unseen), replayed))
            else:
                self.r.judge(tp, f, recorded, replayed, "new partition (KRaft createTopics)")
        p = self.store.part(tp)
        self.r.set_replicas(p, f.replicas or (), ts)
        self.store.set_leader(p, f.leader)
        self.store.set(p, isr=tuple(f.isr or ()), leader_epoch=f.leader_epoch, zk_version=f.zk_version,
                       controller_epoch=f.controller_epoch)
        self.store.move(p, ONLINE if (f.leader or -1) >= 0 else OFFLINE, OBSERVED if snapshot else RECORDED, ts, r)
        self.store.set_elr(tp, tuple(f.elr or ()), tuple(f.last_known_elr or ()))
        self.r.show(p, ts, r, "recorded" if not snapshot else "observed")

    def on_partition_change(self, f: F.PartitionChange) -> None:
        tp, r, ts = f.tp, f.ref, f.ts
        self.r.topics.incarnation(tp, f.topic_id, ts, r)
        self.r.has_records = self.r.has_records or f.metadata_log
        p = self.parts.get(tp)
        if f.restated and not self._newer(p, f):
            return  # a record an earlier line of the evidence stated (and the replay judged there)
        if f.restated:
            self.r.comparisons.append(unknown(tp, ts, r, _stated(f, f.changed), self._written_unseen(f)))
            self._take_restated(f)
            return
        changed = f.changed
        prev = f.previous
        decided: int | None = None  # the leader the replay elected for this change, where it judged one
        if not f.metadata_log and p is not None and p.leader_epoch is not None and f.leader_epoch is not None \
                and (f.leader_epoch, f.zk_version or 0) <= (p.leader_epoch, p.zk_version or 0):
            # A change no newer than the registration held: a controller loading its log logs each record it
            # replays ("UNCLEAN partition change for ...", PartitionRegistration.maybeLogPartitionChange from
            # ReplicationControlManager.replay, 3.9.0-rc3 / trunk), as history. Its leader is compared with the one
            # the replay gave that epoch, if it gave one; nothing is taken.
            given = self.ledger.epoch_decided.get(tp, {}).get(f.leader_epoch)
            if "leader" in f.changed and f.leader is not None and given is not None:
                self.r.lines.restated(tp, f, f.leader, given)
            return
        held = None if p is None else (p.leader_epoch, p.leader, p.isr)
        if prev is not None and held != (prev["leader_epoch"], prev["leader"], tuple(prev["isr"])):
            # The change's own line states the registration it started from (4.x PartitionChangeBuilder): the step is
            # taken from there. A replay that already took it itself, at the line that began the controller's event
            # ("The request from broker N to unfence has been granted ...", then handleBrokerUnfenced's elections in
            # the same event), took it when the line says: the partition was led from the record on.
            mine = self.ledger.replayed_at.get((tp, held[0])) if held is not None and held[0] is not None else None
            if mine is not None and prev["leader_epoch"] is not None and held[0] == prev["leader_epoch"] + 1 \
                    and mine[0].after.get("leader") == f.leader:
                self.r.timeline.retime(tp, ts)
            p = self.store.part(tp)
            self.r.set_replicas(p, prev["replicas"], ts)
            self.store.set_leader(p, prev["leader"])
            self.store.set(p, isr=prev["isr"], leader_epoch=prev["leader_epoch"], zk_version=prev["partition_epoch"])
            self.store.set_elr(tp, prev["elr"], prev["last_known_elr"])
            out = self.brokers.all_out_since(prev["replicas"], ts) if held is None and prev["leader"] < 0 else None
            if out is not None and out[0] < ts:
                # First known here, leaderless: no replica has been an acceptable leader since the last of them left
                # (isAcceptableLeader: registered, unfenced, not shutting down), so none was elected since
                self.r.show(p, out[0], out[1], "liveness")
        if p is None or p.isr is None:
            if "leader" in changed:
                self.r.comparisons.append(unknown(tp, ts, r, {"leader": f.leader},
                                                "leader change: partition unknown before the record"))
            p = self.store.part(tp)
        else:
            target = tuple(f.isr) if f.isr is not None and "isr" in changed else p.isr
            step = broker_event_of(f.broker_events, p.isr, p.leader, self.store.elr.get(p.tp, ((), ()))[0])
            removed = frozenset({step[1]}) if step is not None and step[0] == REMOVE else frozenset()
            added = frozenset({step[1]}) if step is not None and step[0] == ADD else frozenset()
            if f.metadata_log:
                gone = set(removed)  # the log says which broker event the record was written for, if any
            else:
                gone = {b for b, t in self.brokers.recent_gone.items() if ts - t <= SAME_STEP_US}
            cleanup = self._unclean_shutdown(p, f, step)
            if cleanup is not None:
                self._judge_built(p, f, cleanup, "PartitionChangeBuilder (handleBrokerUncleanShutdown)")
            elif "leader" in changed:
                ok = (self.brokers.acceptable() | added) - removed
                elr = self.store.elr.get(tp, ((), ()))[0]
                if f.elr is not None:
                    elr = f.elr
                # ELR is in use when the feature is on, or a registration holds ELR members (only KIP-966 fills them)
                # ... or the registration the line started from holds ELR or a last known leader, or an empty ISR, which
                # only the ELR rules write (3.9.0-rc3 PartitionChangeBuilder.build)
                elr_on = self.r.elr_enabled or f.elr is not None or bool(prev and (prev["elr"] or prev["last_known_elr"]
                                                                                  or not prev["isr"]))
                def elect(ok: frozenset[int]):
                    last_known = self.store.elr.get(tp, ((), ()))[1]  # lastKnownElr before this change
                    res = self.r.rule("kraft.election", p.replicas or p.isr, target, p.leader, ok,
                                      self.r.unclean(tp[0]), elr, elr_on, last_known)
                    if res.how == "kept" and f.leader != res.leader and "isr" not in changed:
                        # Only a PREFERRED election (the periodic rebalance) moves leadership off a valid leader.
                        res = self.r.rule("kraft.election.preferred", p.replicas or p.isr, target, p.leader, ok, elr,
                                         elr_on)
                    return res

                res = elect(ok)
                recorded = {"leader": f.leader}
                replayed = {"leader": res.leader}
                unseen = self._unseen_brokers(p.replicas or p.isr) - removed
                if unseen and elect(ok | unseen).leader != res.leader:
                    self.r.comparisons.append(unknown(tp, ts, r, recorded, unseen_reason(unseen), replayed))
                else:
                    self.r.judge(tp, f, recorded, replayed, f"PartitionChangeBuilder ({res.how})")
                    decided = res.leader
                if f.leader is not None and f.leader >= 0 and f.leader not in p.isr and f.leader not in target:
                    self._unclean_record(p, f)
                elif res.how == "unclean" and f.leader == res.leader:
                    self._unclean_record(p, f)
                if f.leader == -1:
                    self.r.failed_elections.setdefault(tp, []).append(r)
            elif "isr" in changed and gone & set(p.isr):
                # The controller took a fenced / shutting-down broker out of the ISR (no leader change).
                shrunk = self.r.rule("kraft.isr_shrink", p.isr, gone, self.r.elr_enabled or f.elr is not None)
                replayed = {"isr": list(shrunk)}
                self.r.judge(tp, f, {"isr": list(f.isr or [])}, replayed, "ISR shrink on fence / shutdown")
            elif "isr" in changed and f.isr is not None and step is None and f.metadata_log and p.leader is not None \
                    and p.leader >= 0:
                # No broker event wrote it: the leader's AlterPartition, which the controller writes only when valid
                # (ReplicationControlManager.alterPartition / validateAlterPartitionData); else the ISR stays.
                ok = self.r.rule("kraft.alter_partition", p.replicas, p.leader, f.isr, self.brokers.acceptable())
                replayed = {"isr": list(f.isr) if ok else list(p.isr)}
                self.r.judge(tp, f, {"isr": list(f.isr)}, replayed, "AlterPartition (validateAlterPartitionData)")
            elif changed and changed <= ELR_FIELDS:
                self.r.comparisons.append(unknown(tp, ts, r, _stated(f, changed),
                                                "ELR change: the broker event that wrote it is not in the evidence"))
        if f.replicas is not None and "replicas" in changed:
            self.r.set_replicas(p, f.replicas, ts)
        store = self.store
        if "leader" in changed and f.leader is not None:
            store.set_leader(p, f.leader)
            store.set(p, leader_epoch=None if p.leader_epoch is None else p.leader_epoch + 1)
            # the new leader epoch of a judged change (the one its line states, else the held one raised): a broker's
            # line of it is compared with the same election
            epoch = f.leader_epoch if f.leader_epoch is not None else p.leader_epoch
            if decided is not None and epoch is not None:
                self.ledger.epoch_decided.setdefault(tp, {})[epoch] = decided
        if "isr" in changed and f.isr is not None:
            store.set(p, isr=tuple(f.isr))
        store.adopt(p, leader_epoch=f.leader_epoch, zk_version=f.zk_version, controller_epoch=f.controller_epoch)
        if f.elr is not None or f.last_known_elr is not None:
            old = self.store.elr.get(tp, ((), ()))
            self.store.set_elr(tp, f.elr if f.elr is not None else old[0],
                               f.last_known_elr if f.last_known_elr is not None else old[1])
        store.move(p, ONLINE if p.leader is not None and p.leader >= 0 else OFFLINE, RECORDED, ts, r)
        self.r.show(p, ts, r, "recorded")

    def _take_restated(self, f: F.PartitionChange) -> None:
        """The registration a restated change leaves is the partition's as the controller loading its log holds it
        (ReplicationControlManager.replay): taken, as a snapshot's registration is, without a move in the timeline (no
        decision was made at this line; the next line about the partition shows it)."""
        p = self.store.part(f.tp)
        if f.replicas is not None and "replicas" in f.changed:
            self.r.set_replicas(p, f.replicas, f.ts)
        self.store.adopt(p, leader=f.leader if "leader" in f.changed else None,
                         isr=f.isr if "isr" in f.changed else None, leader_epoch=f.leader_epoch,
                         zk_version=f.zk_version, controller_epoch=f.controller_epoch)
        if f.elr is not None or f.last_known_elr is not None:
            old = self.store.elr.get(f.tp, ((), ()))
            self.store.set_elr(f.tp, f.elr if f.elr is not None else old[0],
                               f.last_known_elr if f.last_known_elr is not None else old[1])

    @staticmethod
    def _newer(p: PState | None, f: F.PartitionChange) -> bool:
        """Whether a change is past the registration the replay holds (its partition epoch, else its leader epoch)."""
        if p is None:
            return True
        if f.zk_version is not None and p.zk_version is not None:
            return f.zk_version > p.zk_version
        return p.leader_epoch is None or f.leader_epoch is None or f.leader_epoch > p.leader_epoch

    def _written_unseen(self, f: F.PartitionChange) -> str:
        """Why a change a controller restates while loading its log, past every registration the evidence stated
        before, is not judged: the record was written before this line (3.9.0-rc3 / trunk ReplicationControlManager
        .replay logs each record it replays, PartitionRegistration.maybeLogPartitionChange), after the last line that
        stated the partition, where no line of the evidence shows the controller's event that wrote it. Where quorum
        epochs between the two are in no line (``quorum_epoch_holes``), they are named: the hole it was written in."""
        since = self.ledger.epoch_known_at.get(f.tp)
        who = f"controller {f.ref.broker}" if f.ref.broker is not None else "the controller"
        after = f"the last line stating the partition before ({iso_utc(since)})" if since is not None else \
            "every line stating the partition before"
        why = f"restated by {who} loading its log: a record written after {after}; no line shows the event that wrote it"
        h = hole_between(self.r.holes, since, f.ts)
        if h is not None:
            return (f"{EVIDENCE_GAP} (quorum epochs {h[2]}-{h[3]}, {iso_utc(h[0])} to {iso_utc(h[1])}, are in no "
                    f"line: {why})")
        return why

    def _unclean_shutdown(self, p: PState, f: F.PartitionChange, step: tuple[str, int] | None) -> BrokerEvent | None:
        """The unclean shutdown a change was written for, if it was: from its batch in the metadata log, or, from
        lines, a broker whose new incarnation is being registered and is in the partition's ISR or ELR (its changes lie
        between "Registering a new incarnation of broker B" and B's RegisterBrokerRecord, 3.9.0-rc3
        ClusterControlManager.registerBroker; the handler iterates partitionsWithBrokerInIsr(B), then
        partitionsWithBrokerInElr(B), ReplicationControlManager.handleBrokerUncleanShutdown)."""
        if step is not None:
            return BrokerEvent(unclean_shutdown=step[1]) if step[0] == UNCLEAN_SHUTDOWN else None
        if f.metadata_log:
            return None
        elr = self.store.elr.get(p.tp, ((), ()))[0]
        stepped = self.ledger.stepped.get(p.tp)
        hit = sorted(b for b, at in self.brokers.unclean_shutdown.items() if b in p.isr or b in elr or stepped is at)
        return BrokerEvent(unclean_shutdown=hit[0]) if hit else None

    def _judge_built(self, p: PState, f: F.PartitionChange, event: BrokerEvent, how: str) -> None:
        """The change judged field by field against the record the release's PartitionChangeBuilder writes for the
        partition in ``event`` (kraft_build.build), ELR included."""
        elr, last_known = self.store.elr.get(p.tp, ((), ()))
        reg = Registration(tuple(p.replicas or p.isr), tuple(p.isr), p.leader if p.leader is not None else -1,
                           tuple(elr), tuple(last_known))
        at = self.brokers.unclean_shutdown.get(event.unclean_shutdown) if event.unclean_shutdown is not None else None
        if at is not None and self.ledger.stepped.get(p.tp) is at:
            # the replay took this event's step itself (logs only, KraftSteps): the record is compared with it
            recorded = _stated(f, f.changed)
            self.r.judge(p.tp, f, recorded, {k: (reg.leader if k == "leader" else list(getattr(reg, k)))
                                             for k in recorded}, how + ", the replay's own step")
            return
        rec = build(reg, self.brokers.acceptable(), event, version=self.r.config.version,
                    unclean=self.r.unclean(p.tp[0]), elr_enabled=self.r.elr_enabled or f.elr is not None
                    or f.last_known_elr is not None or bool(elr or last_known), min_isr=self.r.min_isr(p.tp[0]))
        after = rec.applied(reg) if rec is not None else reg
        recorded = _stated(f, f.changed)
        replayed = {k: (after.leader if k == "leader" else list(getattr(after, k))) for k in recorded}
        if rec is not None and rec.leader is not None:
            replayed["leader"] = rec.leader
        self.r.judge(p.tp, f, recorded, replayed, how)

    def on_isr_updated(self, f: F.LeaderIsrChange) -> None:
        """The leader's AlterPartition, accepted by the controller ("ISR updated to 1,2 and version updated to 111",
        kafka.cluster.Partition): the ISR the controller holds from then on, until a newer partition epoch."""
        tp = f.tp
        p = self.parts.get(tp)
        if p is None or (f.zk_version is not None and p.zk_version is not None and f.zk_version < p.zk_version):
            return
        self.store.adopt(p, isr=f.isr, zk_version=f.zk_version)
        if f.zk_version is not None:
            self.ledger.replayed_since[tp] = 0
        self.r.show(p, f.ts, f.ref, "recorded")

    def _unclean_record(self, p: PState, f: F.PartitionChange) -> None:
        self.r._seq += 1
        d = Decision(self.r._seq, f.ts, p.tp, "election", "UNCLEAN", f.ref,
                     p.snapshot(), {"leader": f.leader, "isr": list(f.isr or [f.leader])}, unclean=True,
                     status="agreed", record=f.ref)
        self.r.unclean_elections.append(d)
        self.r.decisions.append(d)

    def _unseen_brokers(self, brokers) -> frozenset[int]:
        """Replicas no fact has spoken of yet (registration, fencing, a liveness line): their state when the evidence
        began is not in it."""
        held = self.brokers
        return frozenset(b for b in brokers if b >= 0 and b not in held.known and b not in held.registered
                         and b not in self.brokers.fenced)


def _stated(f: F.PartitionChange, changed: frozenset[str]) -> dict:
    """What a partition change record states, by the replay's names (leader, isr, elr, last_known_elr)."""
    out: dict = {}
    if "leader" in changed and f.leader is not None:
        out["leader"] = f.leader
    if "isr" in changed and f.isr is not None:
        out["isr"] = list(f.isr)
    if f.elr is not None:
        out["elr"] = list(f.elr)
    if f.last_known_elr is not None:
        out["last_known_elr"] = list(f.last_known_elr)
    return out
