"""Brokers' lines of the leader epochs they take up (``Partition.makeLeader`` / ``makeFollower``), judged where the
controller logs its elections at DEBUG only: against the replay's own decision of that epoch, re-derived from the
registration before it, or left unjudged with the hole or the reason (see docs/replay.md, KRaft).
"""
from __future__ import annotations

from replay_engine.common import facts as F
from replay_engine.common.apply import OBSERVED
from replay_engine.common.judge import EVIDENCE_GAP, judge_kraft, unknown
from replay_engine.kraft.evidence import (hole_between, hole_since_quorum_epoch, stated_within_replayed,
                                          unjudged_epoch_reason, unseen_partition_changes)
from replay_engine.kraft.point import (created_leader, isr_after_leader_left, no_broker_acceptable,
                                       previous_from_leader_line, rederive_stated_leader,
                                       stated_leader_whatever_the_isr, states_the_creation)
from replay_engine.kraft.part import KraftPart
from replay_engine.common.partition import Decision, PState
from replay_engine.kraft.facts import liveness_key
from replay_engine.common.states import OFFLINE, ONLINE
from replay_engine.common.facts import iso_utc  # the time format of refs and reports

# Unjudged because partition changes came that no line in the evidence shows (see kraft_evidence)
UNSEEN_STEPS = ("leader epoch: the epochs before it were decided in steps", "leader epoch: ISR unknown (")
RESTATED = "leader epoch: stated again after a later one was known"
UNKNOWN_BEFORE = "leader epoch: partition unknown before the line"


class KraftLines(KraftPart):
    """Judges a broker's statement of a leader epoch, and adopts it."""

    def on_observation(self, f: F.ObservedState) -> None:
        self.r.topics.incarnation(f.tp, f.topic_id, f.ts, f.ref)
        if f.initial:
            self._learn_partition(f)
        else:
            self._observed(f)

    def _learn_partition(self, f: F.ObservedState) -> None:
        """A registration a controller re-states while loading the metadata log."""
        p = self.store.part(f.tp)
        self.r.set_replicas(p, f.replicas, f.ts)
        if f.leader_epoch is not None and f.isr is not None and (
                p.leader_epoch is None or f.leader_epoch >= p.leader_epoch):
            # A controller loading the metadata log re-states the registration: as new as anything the
            # replay knows (same or higher leader epoch), it is the partition's state now
            self.store.set_leader(p, f.leader)
            self.store.set(p, isr=tuple(f.isr), leader_epoch=f.leader_epoch)
            self.store.adopt(p, zk_version=f.zk_version)
            self.store.move(p, ONLINE if (f.leader if f.leader is not None else -1) >= 0 else OFFLINE,
                            OBSERVED, f.ts, f.ref)
            self.r.show(p, f.ts, f.ref, "observed")
            if f.snapshot is not None:
                self.ledger.from_snapshot[f.tp] = (f.snapshot, f.leader_epoch, f.ref.broker, f.ts)
            else:
                self.ledger.from_snapshot.pop(f.tp, None)  # restated from the log after a snapshot: of no known epoch

    def _observed(self, f: F.ObservedState) -> None:
        """A broker says it became leader/follower: the controller's decision, as delivered."""
        tp = f.tp
        p = self.store.part(tp)
        leader = f.leader
        if leader is None:
            if not self.r.has_records and f.leader_epoch is not None:
                self._unknown(p, f, None, "leader epoch: the line does not name the leader")
            return
        if f.leader_epoch is not None:
            if f.leader_epoch not in self.ledger.epoch_first_seen.get(tp, {}) and tp in self.ledger.from_snapshot:
                # first stated while the registration held came from a snapshot load
                self.ledger.first_stated_after_snapshot(tp, f.leader_epoch)
            self.ledger.epoch_first_seen.setdefault(tp, {}).setdefault(f.leader_epoch, f.ts)
        mine = self.ledger.replayed_at.get((tp, f.leader_epoch)) if f.leader_epoch is not None else None
        judged = not self.r.has_records and mine is not None and mine[0].status == "applied"
        created = not judged and not self.r.has_records and f.became is not None and (p.replicas or f.replicas) \
            and states_the_creation(f.leader_epoch, f.zk_version) \
            and self.ledger.epoch_first_seen[tp].get(f.leader_epoch) == f.ts
        if created:
            # the first line stating the registration createTopics wrote: judged by the creation rule
            want, _ = created_leader(f.replicas or p.replicas, self.brokers.acceptable(), self.brokers.shutting_down(),
                                     version=self.r.config.version)
            self.r.judge(tp, f, {"leader": leader}, {"leader": want},
                        "point: the broker's own view of the created partition (KRaft createTopics)")
        elif not judged and not self.r.has_records and f.leader_epoch is not None and f.became is not None:
            self._point(p, f, leader)  # a new leader epoch the broker started (not a LeaderAndIsr request received)
        if judged:
            # The broker states the outcome of the very decision the replay took (same leader epoch).
            self._judge_replayed(tp, f, leader, *mine)
        stated = self.ledger.stated_epoch.get(tp)
        # The epoch right after the one known, its leader not seen leaving since: the election the line states
        # came after everything the replay knows of that leader
        next_epoch = f.leader_epoch is not None and p.leader_epoch is not None \
            and f.leader_epoch == p.leader_epoch + 1 and leader >= 0 \
            and self.brokers.recent_gone.get(leader, -1) <= self.ledger.epoch_known_at.get(tp, -1)
        if f.leader_epoch is not None and f.leader_epoch < self.ledger.min_epoch.get(tp, -1):
            return  # a broker behind a step the replay knows was taken (see KraftSteps.leaving)
        if f.leader_epoch is not None and p.leader_epoch is not None and (f.leader_epoch, f.zk_version or 0) \
                < (p.leader_epoch, p.zk_version or 0) and (stated is None or f.leader_epoch < stated[0]
                                                           or p.leader_epoch <= stated[0]
                                                           or stated_within_replayed(
                                                               p.zk_version, f.zk_version,
                                                               self.ledger.replayed_since.get(tp, 0))):
            self._not_taken_up(p, f)
            return  # older than the registration known (leader epoch, then partition epoch)
        # A broker stating an epoch below what only the replay's own steps reached: those steps were not what the
        # controller committed (no broker ever states them); the broker's registration is taken instead.
        if f.leader_epoch is not None and (stated is None or f.leader_epoch >= stated[0]):
            self.ledger.stated_epoch[tp] = (f.leader_epoch, f.zk_version)
        if f.skipped and f.leader_epoch is not None and p.leader_epoch is not None \
                and f.leader_epoch > p.leader_epoch:
            # a broker already at a newer epoch: the registration before it stays at hand for the line stating it
            self.ledger.before_skip[tp] = (p.leader_epoch, p.leader, p.isr, p.replicas)
        since = self.ledger.replayed_since.get(tp, 0)
        if f.isr is None and (unseen_partition_changes(p.zk_version, since, f.zk_version)
                              or (p.leader_epoch is not None and f.leader_epoch is not None
                                  and f.leader_epoch > p.leader_epoch + 1)):
            self.store.set(p, isr=None)  # the line does not state the ISR, and unseen changes came before it
        self.store.adopt(p, leader, f.isr, f.leader_epoch, zk_version=f.zk_version, replicas=f.replicas, ts=f.ts)
        self.ledger.from_snapshot.pop(tp, None)  # the registration is now one a line states
        if f.leader_epoch is not None and f.leader_epoch == p.leader_epoch:
            self.ledger.epoch_known_at[tp] = f.ts
        if f.zk_version is not None:
            self.ledger.replayed_since[tp] = 0
        b = f.ref.broker  # the broker whose log states it
        own = f.became == "leader" and b is not None and leader == b
        if (own or f.became == "follower" and next_epoch) and not self.r.has_records \
                and self.brokers.held_out(leader) \
                and not (mine is not None and mine[0].after.get("leader") == leader):
            # elected at this new epoch, so active then (isAcceptableLeader: registered, unfenced, not shutting down);
            # a follower's line names the leader of the epoch it starts just as the leader's own line does. A line
            # stating the very leader the replay elected at that epoch is a broker applying, late, a decision taken
            # while that leader was acceptable: it says nothing of the leader now (it may be shutting down since).
            self.r.inferred.append(liveness_key(f))
            self.r.registrations.leader_active(leader, f.ts, f.ref, p.tp)
        self.store.move(p, ONLINE if leader >= 0 else OFFLINE, OBSERVED, f.ts, f.ref)
        self.r.show(p, f.ts, f.ref, "observed")

    def _point(self, p: PState, f: F.ObservedState, leader: int) -> None:
        """A stated leader epoch the replay did not reach itself: re-derived from the registration before it."""
        decided = (p.tp, f.leader_epoch) in self.ledger.replayed_epochs
        epoch, was, isr, replicas = p.leader_epoch, p.leader, p.isr, p.replicas
        unseen = unseen_partition_changes(p.zk_version, self.ledger.replayed_since.get(p.tp, 0), f.zk_version)
        skipped = self.ledger.before_skip.get(p.tp)
        if skipped is not None and epoch == f.leader_epoch and skipped[0] is not None and skipped[0] + 1 == epoch:
            epoch, was, isr, replicas = skipped  # the epoch was first seen in another broker's 'Skipped' line
        if not decided and previous_from_leader_line(f.previous, f.leader_epoch, epoch):
            # the new leader's own line names the leader of the epoch just before; the ISR then is not stated
            epoch, was, isr, unseen = f.previous[1], f.previous[0], None, None
        if epoch is None or f.leader_epoch != epoch + 1 or was is None or decided:
            held = self.ledger.epoch_decided.get(p.tp, {}).get(f.leader_epoch)
            if held is not None and epoch is not None and f.leader_epoch <= epoch:
                self.restated(p.tp, f, leader, held)
                return
            known = set(self.brokers.registered) | self.brokers.fenced | self.brokers.shutting
            if not decided and no_broker_acceptable(self.brokers.acceptable(), known, self.r.elr_enabled):
                self._point_none_acceptable(p, f, leader, known, unjudged_epoch_reason(epoch, f.leader_epoch, False))
                return
            self._unknown(p, f, leader, unjudged_epoch_reason(epoch, f.leader_epoch, decided))
            return
        # Where the replay knows no other replica to be acceptable, the outcome follows from ISR membership alone:
        # the comparison says so (the liveness it rests on is the replay's, from fence / shutdown / unfence lines).
        others = set(replicas or isr or ()) - {was, leader}
        alone = "" if others & self.brokers.acceptable() else "; no other replica known acceptable"
        if unseen or not isr:
            why = f"{unseen} ISR-only partition change(s) before it are in no line" if unseen else "not in the evidence"
            ok, unclean = self._electing(p, was, leader, f.ts), self.r.unclean(p.tp[0])
            if stated_leader_whatever_the_isr(replicas, was, leader, ok, unclean):
                self.r.judge(p.tp, f, {"leader": leader}, {"leader": leader},
                            f"point: elected whatever the ISR ({why}{alone})")
            else:
                self._unknown(p, f, leader, f"leader epoch: ISR unknown ({why})")
            return
        want, how = rederive_stated_leader(replicas, isr, was, leader, self.brokers.acceptable(),
                                           self.r.unclean(p.tp[0]), self.r.elr_enabled, version=self.r.config.version)
        stale = None if want == leader else self._stale_liveness(leader, want, self.brokers.acceptable(), f.ts,
                                                                 self.brokers.liveness_at)
        if stale is not None:
            self._unknown(p, f, leader, stale)
            return
        self.r.judge(p.tp, f, {"leader": leader}, {"leader": want}, f"point: {how}{alone}")
        if want == leader and was >= 0 and leader != was and "left" in how:
            # the step that moved leadership took the old leader out of the ISR (brokerToRemove), unless a
            # preferred election, which keeps the ISR, explains the move as well
            isr = isr_after_leader_left(replicas, isr, was, leader, self.brokers.acceptable(), self.r.elr_enabled,
                                        version=self.r.config.version)
            self.store.set(p, isr=isr)

    def _not_taken_up(self, p: PState, f: F.ObservedState) -> None:
        """A broker stating, after the replay's own election of it at the next epoch, that the partition has no leader
        at the epoch before: it had not applied that election yet. A broker serves a partition only once it applies
        the record electing it (3.5.1 .. 4.x ReplicaManager.applyDelta -> Partition.makeLeader); brokers apply
        committed records in log order, and the replay timed the election at the line that began the controller's
        event. Until this line no broker led the partition: the leaderless time lasts until it (TimelineBuilder
        .retime)."""
        mine = self.ledger.replayed_at.get((p.tp, p.leader_epoch)) if p.leader_epoch is not None else None
        if mine is None or f.leader != -1 or f.leader_epoch != p.leader_epoch - 1 or f.ref.broker is None:
            return
        if mine[0].status in ("applied", "agreed") and mine[0].after.get("leader") == f.ref.broker \
                and mine[0].ts < f.ts and p.leader == f.ref.broker:
            self.r.timeline.retime(p.tp, f.ts)

    def _electing(self, p: PState, was: int | None, leader: int, ts: int) -> frozenset[int]:
        """The acceptable brokers when the stated election ran, as far as the lines tell: a leaderless partition gets
        a leader only in handleBrokerUnfenced (partitionsWithNoLeader; 3.9.0-rc3 ReplicationControlManager), so one
        leaderless since its epoch was known that a broker now leads at the next epoch was elected in that broker's
        first unfence since (its ISR does not change while it has no leader, so an ISR holding it elected it then):
        the brokers acceptable just after that grant. Otherwise the brokers acceptable now."""
        since = self.ledger.epoch_known_at.get(p.tp)
        if was is not None and was < 0 <= leader and since is not None:
            at = self.brokers.first_up(leader, since, ts)
            if at is not None:
                return self.brokers.acceptable_at(at)
        return self.brokers.acceptable()

    def restated(self, tp: F.TP, f: F.ObservedState | F.PartitionChange, leader: int, held: int) -> None:
        """A leader epoch stated again after the replay knew it (or a later one): a broker applying the registration
        anew, as a broker does for every partition it hosts when it loads the metadata image at start-up (3.5.1 ..
        4.x ``ReplicaManager.applyDelta``: "Creating new partition ...", then Partition.makeLeader / makeFollower log
        the epoch the image holds). One leader epoch has one leader (every leader change raises it,
        PartitionChangeBuilder.build), so the line is compared with the leader the replay gave that epoch: its own
        decision, or the one it re-derived at the epoch's first line (``epoch_decided``); an epoch only observed
        before is left to _unknown."""
        self.r.comparisons.append(judge_kraft(tp, f.ts, f.ref, {"leader": leader}, {"leader": held},
                                            "the leader the replay gave this leader epoch (stated again, or the "
                                            "record's epoch taken up)"))

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
                self.r.comparisons.append(unknown(tp, f.ts, f.ref, {"leader": leader}, stale))
                return
        self.r.comparisons.append(c)
        d.status = c.verdict
        if c.agreed and f.leader_epoch is not None:
            self.ledger.epoch_decided.setdefault(tp, {})[f.leader_epoch] = leader

    def _point_none_acceptable(self, p: PState, f: F.ObservedState, leader: int, known: set[int],
                               unjudged: str) -> None:
        """A stated epoch while the replay holds no broker acceptable: the version's election over any replicas
        and ISR gives no leader. A stated leader is judged by it too, unless that broker was acceptable at some time
        since the epoch before was known (a broker applies a delta of records at once: the epoch may have been
        decided then) or the evidence lost the lines of its return."""
        if leader >= 0:
            since = self.ledger.epoch_known_at.get(p.tp)
            if since is None:
                self._unknown(p, f, leader, unjudged)
                return
            up = self.brokers.up_between(leader, since, f.ts)
            if up is not None:
                self._unknown(p, f, leader, f"leader epoch: decided while broker {leader} was acceptable ({up}), "
                                            "before the liveness held at the line")
                return
        order = tuple(sorted(known))
        want = self.r.rule("kraft.election", order, order, None, frozenset(), self.r.unclean(p.tp[0]), (),
                          self.r.elr_enabled).leader
        if want != leader:
            stale = self._stale_liveness(leader, want, self.brokers.acceptable(), f.ts, self.brokers.liveness_at)
            if stale is None:
                # A KRaft controller elects only an acceptable broker (3.9 PartitionChangeBuilder isAcceptableLeader):
                # a stated leader the replay holds fenced or shutting down came back in lines the evidence lost.
                since_l = self.brokers.liveness_at.get(leader)
                stale = (f"{EVIDENCE_GAP} (broker {leader} leads at this epoch, so it was acceptable, but the "
                         f"evidence holds it fenced or shutting down from "
                         f"{iso_utc(since_l) if since_l is not None else 'the start'} with no line of its return)")
            self._unknown(p, f, leader, stale)
            return
        self.r.judge(p.tp, f, {"leader": leader}, {"leader": want},
                    "point: no known broker acceptable (isAcceptableLeader), whatever the replicas and ISR")

    def _unknown(self, p: PState, f: F.ObservedState, leader: int | None, why: str) -> None:
        seen = self.ledger.epoch_first_seen.get(p.tp, {})
        if why.startswith(UNSEEN_STEPS) or why.startswith(RESTATED) or why == UNKNOWN_BEFORE:
            # The steps were decided after the state the replay holds; if the evidence lost a stretch since, they
            # may lie in it: an evidence gap, not a record the evidence could have judged. A restated epoch was
            # decided before the first line stating it and after the last earlier epoch the evidence shows; a
            # partition no line named before had its registration set at some time before the line, since the
            # evidence began or before it.
            until, loaded = f.ts, self.ledger.from_snapshot.get(p.tp)
            if why == UNKNOWN_BEFORE:
                since = self.r.began
            elif why.startswith(UNSEEN_STEPS):
                since = seen.get(p.leader_epoch, self.ledger.epoch_known_at.get(p.tp))
            else:
                until = seen.get(f.leader_epoch, f.ts)
                at = max((e for e in seen if e < f.leader_epoch and seen[e] <= until), default=None)
                since = seen.get(at)
                loaded = self.ledger.snapshot_before.get((p.tp, f.leader_epoch))
            h = hole_between(self.r.holes, since, until)
            if h is not None:
                why = (f"{EVIDENCE_GAP} (quorum epochs {h[2]}-{h[3]}, {iso_utc(h[0])} to {iso_utc(h[1])}, are in no "
                       f"line: {why})")
            elif loaded is not None and not why == UNKNOWN_BEFORE:
                why = self._after_snapshot(loaded, until, why)
        self.r.comparisons.append(unknown(p.tp, f.ts, f.ref, {"leader": leader}, why))

    def _after_snapshot(self, loaded: tuple, until: int, why: str) -> str:
        """Why a leader epoch stated after a registration the replay took from a snapshot load is unjudged.

        The registration dates from the snapshot, not from the line restating it: the changes after it are records
        past the snapshot's offset, so written in its quorum epoch or later, and a controller loading the log
        replays them at DEBUG (3.9.0-rc3 / trunk ReplicationControlManager.replay(PartitionChangeRecord)). Quorum
        epochs from the snapshot's on that no line names (:func:`quorum_epoch_holes`) are a stretch the evidence
        lost in which they may have been written: an evidence gap. With none, the steps had witnesses and the
        record stays unjudged."""
        (offset, epoch), _, controller, at = loaded
        h = hole_since_quorum_epoch(self.r.holes, epoch, until)
        if h is None:
            return why
        return (f"{EVIDENCE_GAP} (after snapshot {offset}-{epoch}: the registration held is the one controller "
                f"{controller} loaded from it, the changes since are replayed at DEBUG, and quorum "
                f"epochs {max(h[2], epoch)}-{h[3]}, {iso_utc(h[0])} to {iso_utc(h[1])}, from the snapshot's on are in "
                f"no line: {why})")

    def _stale_liveness(self, recorded: int, replayed: int | None, acceptable: frozenset[int], ts: int,
                        liveness_at: dict[int, int]) -> str | None:
        """Why a leader the record and the replay disagree on rests on liveness the evidence lost, if it does.

        An elected leader was acceptable when elected (isAcceptableLeader: registered, unfenced, not shutting down);
        a broker the replay elected and the controller passed over was not. Where the replay held the other view of
        that broker from a line older than a stretch the evidence lost (:func:`quorum_epoch_holes`), its
        registration changed in that stretch: the record shows a state the replay never saw."""
        view = self.r.controller_view
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
            h = hole_between(self.r.holes, liveness_at.get(b, -1), ts)
            if h is not None:
                since = liveness_at.get(b)
                return (f"{EVIDENCE_GAP} (broker {b}, held {held} from "
                        f"{iso_utc(since) if since is not None else 'the start'}, across quorum epochs {h[2]}-{h[3]}, "
                        f"{iso_utc(h[0])} to {iso_utc(h[1])}, that are in no line)")
        return None
