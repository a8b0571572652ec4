"""Following the real controller's records (ZooKeeper mode): each judged against the replay's decision, then adopted.

A record is a decision the cluster left behind: a state-znode write, a ``Changed partition`` line, a failed election.
From logs alone it also tells which controller acted and whom it held live (``zk_inference``). The judge
(``replay_engine.common.judge``) reads a frozen view built at the record (``ControllerContext.judge_view``); the state the
record shows is then adopted through the partition store. Observations (a broker's or a dump's view of a partition)
are ``replay_engine.zk.observations``'s; evidence lines are indexed (and a few carry a broker's state: ``replay_engine.common.brokers``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from replay_engine.common import facts as F
from replay_engine.common import judge as J
from replay_engine import rules as R
from replay_engine.common.apply import RECORDED
from replay_engine.common.brokers import RULE_ELIGIBILITY, RULE_SHUTDOWN_MOVE
from replay_engine.rules.zk_controller import ELECTION_FENCE
from replay_engine.common.partition import UNKNOWN, Decision, PState
from replay_engine.common.states import NEW, NON_EXISTENT, OFFLINE, ONLINE
from replay_engine.zk.context import ZkPart
from replay_engine.zk.inference import IMPLYING, NAMES_ANOTHER, STALE, acting, implied_liveness


class RecordHandlers(ZkPart):
    """Records and evidence in; verdicts and the state they show out."""

    def evidence(self, f: F.Evidence) -> None:
        if f.broker is not None:
            self.c.note_broker(f.broker, f.ref)
        if f.tp is not None:
            self.c.evidence_by_tp.setdefault(f.tp, []).append(f.ref)
        if f.kind == "broker_shutdown_started" and f.broker is not None:
            self.brokers.server_stopping(f.broker, f.ref)
        if f.kind == "zk_snapshot_taken":
            self.brokers.state_membership(True, f.ref)
        if f.kind == "controlled_shutdown_taken" and f.broker in self.brokers.live and self.c.controller is not None \
                and not self.c.coverage.controller_logged(f.ts, self.c.controller):
            # the broker's word that the controller took its request: the controller's own line is not in the
            # evidence, and its moves were recorded (or not) in the state-change log, judged there
            self.brokers.shutdown_taken(f.broker, f.ref, server_stopping=False)
        if f.kind == "zk_write_failed":
            self.findings.append({"kind": "zk_write_failed", "ts": f.ts, "evidence": [f.ref.to_json()]})
        if f.kind == "unclean_leader_election" and f.tp is not None and f.broker is not None:
            self.recorded_unclean(f)

    def recorded_unclean(self, f: F.Evidence) -> None:
        """The controller's own word that it elected a replica out of sync (OfflinePartitionLeaderSelector 0.8-1.x
        "No broker in ISR is alive for P. Elect leader B from live brokers ... There's potential data loss."):
        an unclean election, whatever the replay derived (its own decision for it, if any, is already listed)."""
        if any(d.tp == f.tp and (d.after or {}).get("leader") == f.broker and abs(d.ts - f.ts) <= J.MATCH_WINDOW_US
               for d in self.c.unclean_elections):
            return
        p = self.store.part(f.tp)
        self.c.unclean_elections.append(Decision(self.c.next_seq(), f.ts, f.tp, "election", "UNCLEAN (recorded)", f.ref,
                                                 p.snapshot(), {"leader": f.broker, "isr": [f.broker]}, unclean=True,
                                                 status="recorded", record=f.ref, expected_record=False))

    def classify_write(self, p: PState, f: F.RecordedState) -> str:
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

    def infer_from_record(self, f: F.RecordedState | F.RecordedFailedElection) -> None:
        """Logs only: a state-change line says which controller (and epoch) acted, and implies who it
        believed alive; when the controller.log that would say so is missing, the record still tells
        (``replay_engine.zk.inference``, which phase 1 of a sharded replay asks too)."""
        if not self.mode.infers_from_records:
            return
        failed = isinstance(f, F.RecordedFailedElection)
        kind = "failed" if failed else f.kind
        cid, ce = f.controller_id, f.controller_epoch
        said = acting(self.c.controller, self.c.controller_epoch, cid, ce, kind)
        if said == NAMES_ANOTHER or said == STALE and self.new_zk_data(f, cid):
            ref = F.Ref(f.ts, "inferred_controller", f.ref.source_file, f.ref.source_pos,
                        f"controller {cid} epoch {ce} (inferred from its state-change line): {f.ref.text}")
            self.c.failover_handlers.controller_elected(F.ControllerElected(f.ts, ref, controller=cid, epoch=ce))
        elif said == STALE:
            # a zombie's line, or the new data's first lines before a write proves it new: should a write prove
            # it, what these lines said about the partition belongs to the new history and is kept
            self.c.below_epoch[f.tp] = ce
        # An OnlinePartition -> OfflinePartition move shows the leader gone to the controller (0.10.2.0
        # KafkaController.onBrokerFailure 'partitionsWithoutLeader'), but which leader is the partition's state, which
        # phase 1 of a replay split by partition does not hold: not read, so every shard sees one cluster-wide history
        if kind not in IMPLYING:
            return  # an in-memory transition, or a write not yet classified: it names no broker's liveness
        brokers = self.brokers
        implied = implied_liveness(kind, None if failed else f.leader, f.isr, f.from_state,
                                   None if failed else f.removed_replica, f.live if failed else None,
                                   brokers.live, brokers.shutting, brokers.stopping)
        if implied.gone is not None:
            brokers.implied_live((implied.gone,), f.ref, live=False)
        if implied.alive:
            brokers.implied_live(implied.alive, f.ref)
        if implied.stated is not None:
            brokers.stated_live(implied.stated, f.ref)  # the exception message states its view

    def new_zk_data(self, f, cid: int) -> bool:
        """A partition write logged under a controller epoch below the one known: from 2.1 no zombie can write
        (see rule zk.controller.stale_epoch_write), so ZooKeeper's data was recreated and a new history starts."""
        if not isinstance(f, F.RecordedState) or f.kind not in ("election", "new_partition", "isr_removal", "write"):
            return False  # in-memory transitions and failed elections write nothing: a zombie may still log them
        version = self.brokers.versions.get(cid, self.config.version)
        return R.decide("zk.controller.stale_epoch_write", version) == "new_data"

    def record_hint(self, f: F.RecordHint) -> None:
        self.infer_from_record(f.record)

    def recorded_state(self, f: F.RecordedState) -> None:
        """A record of the real controller, in five steps: what it tells beyond its partition (``infer_from_record``),
        what it is (``classify``), whether the partition's history restarted under it (``restarted``), the verdict
        (``judge``), and the state it shows, followed (``adopt``, ``fill_in``)."""
        p = self.c.part(f.tp)
        self.infer_from_record(f)
        kind = self.classify(p, f)
        if kind is None:
            return  # an in-memory transition, followed as it is
        if kind == "alter_isr":
            self.adopt(p, f, kind)  # an input (the leader's request), not a decision of the controller
            return
        recorded = {"leader": f.leader, "isr": list(f.isr) if f.isr is not None else None,
                    "leader_epoch": f.leader_epoch}
        if f.tp in self.c.held_back:
            self.c.partition_handlers.take_up_held(p, recorded)
        unknown_before = {"isr": p.isr is None, "leader_epoch": p.leader_epoch is None}
        judged = self.restarted(p, kind, f, recorded) or self.judge(p, kind, f, recorded)
        self.adopt(p, f, kind)
        self.fill_in(p, judged, recorded, unknown_before)

    def classify(self, p: PState, f: F.RecordedState) -> str | None:
        """The decision a record is (``classify_write`` for a state-znode write); None for PartitionStateMachine's
        in-memory transitions (New, Offline, NonExistent), which are followed here and judged nowhere."""
        kind = f.kind
        if kind == "new_state":
            # NonExistentPartition -> NewPartition: a partition (re)starts its history here.
            if p.state not in (NEW,) or f.from_state == NON_EXISTENT:
                # (a topic assignment seen first may have set NewPartition already: the znode is still new, version 0)
                self.store.set(p, isr=None, leader_epoch=None, zk_version=None, recorded_zk_version=None)
                self.store.set_leader(p, None)
            if f.replicas is not None:
                self.store.set_replicas(p, f.replicas, f.ts)
            self.store.move(p, NEW, RECORDED, f.ts, f.ref, f.from_state)
            return None
        if kind == "offline":
            if p.state != NEW or f.from_state not in (None, NEW):
                # a line stating the move from OnlinePartition proves the partition was online, whatever the replay
                # held (a NewPartition whose creation election no line shows): 1.0.0 PartitionStateMachine
                # .handleStateChange logs the state it moves from ('Changed partition P state from $currState to
                # OfflinePartition'), "the leader for a partition is no longer alive"
                self.store.move(p, OFFLINE, RECORDED, f.ts, f.ref, f.from_state)
            self.c.touch(p, f.ts, f.ref, "recorded")
            return None
        if kind == "deleted":
            self.store.move(p, NON_EXISTENT, RECORDED, f.ts, f.ref, f.from_state)
            self.store.set_leader(p, None)
            self.c.touch(p, f.ts, f.ref, "recorded")
            return None
        if kind == "write":
            queue = self.pending.get(f.tp)
            kind = self.classify_write(J.before_state(f.tp, queue[0].before) if queue else p, f)
        return kind

    def restarted(self, p: PState, kind: str, f: F.RecordedState, recorded: dict[str, Any]) -> J.Comparison | None:
        """Logs only: did the partition's history restart under this record (its leader epoch went back, a write did
        not raise the znode's version, an election states another outcome at the epoch held)? Then the topic, or
        the whole ZooKeeper data, was recreated where no line shows it: the replay forgets the partition, a finding
        says so, and the record is an evidence gap (that comparison is returned; None: the history goes on)."""
        writes = kind in ("election", "new_partition") or (
            kind == "isr_removal" and f.removed_replica is not None and p.isr is not None
            and int(f.removed_replica) in p.isr)
        recreated = writes and f.zk_version is not None and p.recorded_zk_version is not None \
            and f.zk_version <= p.recorded_zk_version
        # Every election writes leader epoch + 1 (0.10.2 PartitionLeaderSelector.selectLeader: currentLeaderEpoch + 1;
        # 2.7 LeaderAndIsr.newLeaderAndIsr): an election stating another outcome at the epoch already held
        # was taken on a new history (the same outcome at that epoch is the same election logged twice).
        same_epoch = kind == "election" and f.leader_epoch is not None and f.leader_epoch == p.leader_epoch \
            and f.leader is not None and p.leader is not None and (f.leader != p.leader or (
                f.isr is not None and p.isr is not None and tuple(f.isr) != tuple(p.isr)))
        fenced = self.fenced_restart(p, kind, f)
        if not (self.mode.evidence_gaps and not self.pending.get(f.tp) and (recreated or same_epoch or fenced or (
                f.leader_epoch is not None and p.leader_epoch is not None and f.leader_epoch < p.leader_epoch))):
            return None
        view = self.c.stale_views.pop(f.tp, None)
        if fenced and view is not None and view.sender_epoch == f.controller_epoch:
            # the electing controller's own line stated the partition before the election: its history restarts
            # from that line, and the election is judged on it
            self.findings.append({"kind": "partition_history_restarted", "ts": f.ts, "topic": p.tp[0],
                                  "partition": p.tp[1],
                                  "text": f"{p.tp[0]}-{p.tp[1]}: controller epoch {f.controller_epoch} elected a leader "
                                          f"where the replay held the partition written under epoch "
                                          f"{p.controller_epoch}, which that election would have refused "
                                          f"({R.rule_for(ELECTION_FENCE, self.version_of(f)).cite[2]}): ZooKeeper's "
                                          "data (or the topic) was recreated; the partition is as that controller "
                                          f"stated it at {view.ref.cite()}",
                                  "evidence": [view.ref.to_json(), f.ref.to_json()]})
            self.store.set(p, recorded_zk_version=None)
            self.store.adopt(p, view.leader, view.isr, view.leader_epoch, view.zk_version, view.controller_epoch,
                             None, view.ts)
            return None
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
        gap = J.unknown(p.tp, f.ts, f.ref, recorded, J.NEW_HISTORY)
        self.c.comparisons.append(gap)
        return gap

    def version_of(self, f: F.Fact):
        return self.brokers.versions.get(getattr(f, "controller_id", None), self.config.version)

    def fenced_restart(self, p: PState, kind: str, f: F.RecordedState) -> bool:
        """An election recorded under controller epoch E where the replay holds the partition written under a later
        epoch: Kafka's election would have given up on that znode (rule zk.election.epoch_fence), so the znode it read
        is not the one the replay holds."""
        return kind == "election" and f.controller_epoch is not None and p.controller_epoch is not None \
            and R.decide(ELECTION_FENCE, self.version_of(f), p.controller_epoch, f.controller_epoch)

    def judge(self, p: PState, kind: str, f: F.RecordedState, recorded: dict[str, Any]) -> J.Comparison | None:
        """The record's verdict (``compare``): the comparison it added, if any."""
        comparisons = self.c.comparisons
        n = len(comparisons)
        self.compare(p, kind, f, recorded)
        return comparisons[-1] if len(comparisons) > n else None

    def fill_in(self, p: PState, judged: J.Comparison | None, recorded: dict[str, Any],
                unknown_before: dict[str, bool]) -> None:
        """A line that states only part of the decision (0.8-0.10 "... to OnlinePartition with leader N") agreed
        with Kafka's rule on what it states; where nothing told the replay the ISR or leader epoch, the rest is
        what the rule wrote with it (not where it knew them: the same election is often logged twice, once
        whole and once as "with leader N", and the second must not count another epoch)."""
        if judged is None or not judged.agreed or not judged.replayed:
            return
        fill = {k: judged.replayed.get(k) for k in ("isr", "leader_epoch")
                if recorded.get(k) is None and unknown_before[k]}
        if fill.get("isr") is not None:
            self.store.set(p, isr=tuple(fill["isr"]))
        if fill.get("leader_epoch") is not None:
            self.store.set(p, leader_epoch=fill["leader_epoch"])

    def adopt(self, p: PState, f: F.RecordedState, kind: str) -> None:
        store = self.store
        store.adopt(p, f.leader, f.isr, f.leader_epoch, f.zk_version, f.controller_epoch, f.replicas, f.ts,
                    recorded=True)
        self.c.note_stated_epoch(f.tp, f.controller_epoch)
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
        self.c.touch(p, f.ts, f.ref, "recorded")

    def compare(self, p: PState, kind: str, f: F.RecordedState, recorded: dict[str, Any]) -> None:
        out = J.judge_write(self.c.judge_view(), self.pending, p, kind, f, recorded,
                            may_infer=self.c.controller is not None and not self.c.inferring,
                            defer_gaps=self.c.defers_gaps())
        if isinstance(out, J.InferShutdown):
            b = out.broker
            self.c.inferring = True
            try:
                self.c.broker_handlers.controlled_shutdown(F.ControlledShutdownRequest(f.ts, f.ref, broker=b))
            finally:
                self.c.inferring = False
            self.findings.append({"kind": "inferred_controlled_shutdown", "ts": f.ts, "broker": b,
                                  "text": f"broker {b} was shut down with a controlled shutdown (inferred from "
                                          "the controller's writes; the request itself leaves no record)",
                                  "evidence": [f.ref.to_json()]})
            self.compare(p, kind, f, recorded)
            return
        if out.verdict == J.UNKNOWN and out.reason == J.GAP:
            # a state the evidence does not show, decided in controller epochs no line names: a hole, named (from
            # the controller epoch a line last showed the partition in, the replay's own steps since aside)
            missing = self.c.epochs_in_no_line(self.c.stated_epoch.get(p.tp, p.controller_epoch), f.controller_epoch)
            if missing:
                out = replace(out, reason=J.epochs_hole(missing))
        self.c.comparisons.append(out)
        self.adopt_implied(out, f)

    def adopt_implied(self, judged: J.Comparison, f: F.Fact) -> None:
        """The record contradicted the brokers' eligibility the replay held (``judge.implied_by_record``): the state it
        implies is adopted, with the record as provenance, so every later decision uses it; a finding says so. The
        record itself still counts against the agreement (diverged, or unknown with ``judge.ADOPTED``)."""
        if judged.implied is None:
            return
        up, down = judged.implied
        changes = [self.brokers.adopt(b, b in up, f.ref, RULE_ELIGIBILITY, self.c.controller)
                   for b in sorted(up | down)]
        said = "; ".join(f"broker {c.broker} {'eligible' if c.broker in up else 'not eligible'} "
                         f"({c.field} {str(c.value).lower()})" for c in changes)
        self.findings.append({"kind": "broker_state_adopted", "ts": f.ts, "brokers": sorted(up | down),
                              "text": f"{f.tp[0]}-{f.tp[1]}: the controller's record follows from Kafka's election "
                                      f"rule only with {said} to it; the replay held them the other way and takes the "
                                      "record's state from here",
                              "evidence": [f.ref.to_json()]})

    def recorded_failed(self, f: F.RecordedFailedElection) -> None:
        p = self.c.part(f.tp)
        self.infer_from_record(f)
        if f.reason == "no_state" and p.leader is None and p.isr is None and self.c.deletions.get(f.tp[0]):
            # 2.3.0 PartitionStateMachine.doElectLeaderForPartitions: no LeaderAndIsr in ZooKeeper for the partition,
            # the election fails; the replay, too, holds none, its topic deleted (a controller still acting on its
            # old context logs it): the same outcome, and no partition is brought back by it
            self.c.comparisons.append(J.Comparison(f.tp, f.ts, f.ref, {"leader": -1, "failed": True},
                                                   {"leader": -1, "failed": True}, J.AGREED,
                                                   "point: no LeaderAndIsr for the partition (its topic deleted)"))
            return
        self.c.failed_elections.setdefault(f.tp, []).append(f.ref)
        if f.fenced_by is not None:
            self.c.comparisons.append(J.judge_fenced(p, f, self.c.controller_epoch))
            if p.controller_epoch is None or p.controller_epoch < f.fenced_by:
                self.store.set(p, controller_epoch=f.fenced_by)  # the write the record shows, adopted
        else:
            judged = J.judge_failed(self.c.judge_view(), self.pending, p, f, defer_gaps=self.c.defers_gaps())
            self.c.comparisons.append(judged)
            self.adopt_implied(judged, f)
        if f.strategy and "ControlledShutdown" in f.strategy and p.leader is not None and p.leader >= 0 \
                and p.leader in self.brokers.live:
            # only a broker in controlled shutdown has its leaderships moved by this strategy: its shutdown was
            # taken up, whether or not the request's own line is in the evidence
            self.brokers.shutdown_taken(p.leader, f.ref, server_stopping=False, rule=RULE_SHUTDOWN_MOVE)
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
        self.c.touch(p, f.ts, f.ref, "recorded")
