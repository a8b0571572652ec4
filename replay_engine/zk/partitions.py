"""The ZooKeeper-mode controller's partition decisions: elections and ISR writes, proposed as data, then committed.

What Kafka's ``PartitionStateMachine`` and ``ReplicaStateMachine`` do when the controller asks them
(``triggerOnlinePartitionStateChange``, OfflineReplica's ISR removal, a new partition's first leader, the
controlled-shutdown, preferred and reassignment elections, the auto leader rebalance's timer), each through the rule
of the acting controller's release (``replay_engine.rules``: ``ControllerContext.rule``) over the brokers Kafka
would count online (``replay_engine.common.brokers``: ``online_set``). A decision function (``propose*``) reads and returns
a ``Decision`` with the ``Change`` it makes (``decide.change_for``); ``commit`` hands it to the partition store
(``replay_engine.common.apply``), which checks the state move, and keeps the books.
"""
from __future__ import annotations

from typing import Callable

from replay_engine.zk import elections as E
from replay_engine.common import facts as F
from replay_engine.common.apply import DECIDED, RECORDED
from replay_engine.common.config import as_bool
from replay_engine.zk.decide import WRITES, change_for
from replay_engine.common.partition import UNKNOWN, Decision, PState
from replay_engine.common.states import NEW, OFFLINE, ONLINE
from replay_engine.common.judge import same
from replay_engine.zk.context import Held, ZkPart


class PartitionHandlers(ZkPart):
    """Decisions about partitions, proposed and committed."""

    def propose(self, p: PState, kind: str, strategy: str | None, trigger: F.Fact,
                new_leader: int | None = None, new_isr: tuple[int, ...] | None = None, unclean: bool = False,
                note: str | None = None, keep_state: bool = False, forced: bool = False) -> Decision | None:
        """``forced``: taken even where the evidence is known to record such decisions (``take_up_held``)."""
        if self.mode.defers_to_records and not forced and self.c.recorded_here(trigger.ts, kind):
            return None  # the record will say what was decided; it is judged point-wise when it comes
        change = change_for(p, kind, new_leader, new_isr, self.c.controller_epoch, keep_state)
        after = None
        if kind in WRITES:
            after = {"leader": new_leader, "isr": list(new_isr) if new_isr is not None else None,
                     "leader_epoch": change.leader_epoch}
        d = Decision(0, trigger.ts, p.tp, kind, strategy, trigger.ref, p.snapshot(), after, unclean, note=note,
                     change=change)
        d.expected_record = self.c.recorded_here(trigger.ts, kind)
        return d

    def commit(self, d: Decision | None) -> Decision | None:
        if d is None:
            return None
        p = self.parts[d.tp]
        if not self.store.apply_decision(p, d.change, d.ts, d.trigger):
            return None  # Kafka leaves a partition alone when the transition is invalid (a finding says so)
        d.seq = self.c.next_seq()
        self.c.decisions.append(d)
        if d.unclean:
            self.c.unclean_elections.append(d)
        if d.change.failed_election:
            self.c.failed_elections.setdefault(p.tp, []).append(d.trigger)
        if d.expected_record:
            self.pending.add(d)
        else:
            d.status = "applied"
            self.pending.note_applied(d)
            self.c.touch(p, d.ts, d.trigger, "replayed")
        return d

    def commit_all(self, ds: list[Decision | None]) -> None:
        for d in ds:
            self.commit(d)

    def propose_offline(self, p: PState, trigger: F.Fact, allow_unclean: bool | None = None) -> Decision | None:
        if p.deleting:
            return None
        cand = p.candidates
        if cand is None or p.isr is None:
            return None  # too little known about this partition to decide
        unclean_ok = self.c.unclean_allowed(p.tp[0]) if allow_unclean is None else allow_unclean
        res = self.c.rule("zk.election.offline", cand, p.isr, self.c.online_set(p.tp), unclean_ok)
        if res is None:
            return self.propose(p, "election_failed", E.OFFLINE + f"({str(bool(allow_unclean)).lower()})", trigger)
        return self.propose(p, "election", E.OFFLINE + f"({str(bool(allow_unclean)).lower()})", trigger,
                            res.leader, res.isr, unclean=res.unclean)

    def propose_online_state_change(self, trigger: F.Fact,
                                    only: Callable[[PState], bool] | None = None) -> list[Decision | None]:
        """Elect leaders for every New/Offline partition (Kafka's triggerOnlinePartitionStateChange)."""
        out = []
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.deleting or (only is not None and not only(p)):
                continue
            if p.state == NEW and p.init_failed:
                out.append(self.propose_new(p, trigger))
            elif p.state == OFFLINE or (p.state == UNKNOWN and p.leader is not None and p.leader >= 0
                                        and not self.c.online(p.leader)):
                out.append(self.propose_offline(p, trigger))
        return out

    def trigger_online_state_change(self, trigger: F.Fact, only: Callable[[PState], bool] | None = None) -> None:
        self.commit_all(self.propose_online_state_change(trigger, only))

    def propose_isr_removals(self, b: int, trigger: F.Fact) -> list[Decision | None]:
        """OfflineReplica for every replica on broker b: the ISR write that produces ``leader: -1``."""
        out = []
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.deleting or p.isr is None or b not in p.isr or p.leader is None:
                continue
            leader, isr = self.c.rule("zk.offline_replica.isr", p.leader, p.isr, b, self.c.unclean_allowed(tp[0]))
            out.append(self.propose(p, "isr_removal", "OfflineReplica", trigger, leader, isr,
                                    note=f"replica {b} removed from the ISR"))
        return out

    def remove_replica_from_isr(self, b: int, trigger: F.Fact) -> None:
        for d in self.propose_isr_removals(b, trigger):
            self.commit_removal(d)

    def commit_removal(self, d: Decision | None) -> None:
        if self.commit(d) is not None and d.after["leader"] == -1 and self.parts[d.tp].state == ONLINE:
            # Left without a leader, the partition is offline; the timeline shows it at its next change
            # (the decision itself was shown as written: leader -1 of a partition still Online).
            self.store.move(self.parts[d.tp], OFFLINE, DECIDED, d.ts, d.trigger)

    def hold_isr_removals(self, brokers: tuple[int, ...], trigger: F.Fact) -> None:
        """OfflineReplica for the replicas of ``brokers`` where the evidence is known to record such writes (logs
        only) but their every input is stated (a failover's live set): held back, per partition, until its next
        record says whether they were made (``take_up_held``). Its lines may be lost: Kafka made them all the same."""
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if not p.deleting and p.isr is not None and p.leader is not None and set(brokers) & set(p.isr):
                self.c.held_back[tp] = Held(trigger, brokers, p.leader_epoch)

    def take_up_held(self, p: PState, recorded: dict) -> None:
        """The held removals of ``p`` (``hold_isr_removals``) before its next record ``recorded``: made one after
        the other (each raises the leader epoch by one: 2.8.0 LeaderAndIsr.newLeaderAndIsr), up to the one the
        record is, which then waits for it like any replayed decision (those after it stay held); or all, the
        record's epoch one above the last (their lines lost, the record follows from them). Otherwise, or if the
        partition changed since, none is: the record is judged at its point."""
        held = self.c.held_back.pop(p.tp, None)
        if held is None or p.leader_epoch is None or p.leader_epoch != held.leader_epoch or p.isr is None:
            return
        steps, leader, isr, epoch = list(held.steps or ()), p.leader, tuple(p.isr), p.leader_epoch
        for b in held.brokers if held.steps is None else ():
            if b in isr:
                leader, isr = self.c.rule("zk.offline_replica.isr", leader, isr, b, self.c.unclean_allowed(p.tp[0]))
                epoch += 1
                steps.append((b, leader, tuple(isr), epoch))
        mine = [{"leader": x[1], "isr": list(x[2]), "leader_epoch": x[3]} for x in steps]
        last = next((k for k, m in enumerate(mine) if same(m, recorded)), None)
        if last is None and steps and recorded.get("leader_epoch") == steps[-1][3] + 1:
            last = len(steps)
        if last is None:
            return
        for k, (b, leader, isr, _) in enumerate(steps[: last + 1]):
            d = self.propose(p, "isr_removal", "OfflineReplica", held.trigger, leader, isr, forced=True,
                             note=f"replica {b} removed from the ISR" + (
                                 "" if k == last else "; its record is in no line of the evidence"))
            d.expected_record = k == last
            self.commit_removal(d)
        rest = tuple(steps[last + 1:])
        if rest:  # the record was one of them: the others are still to come, each with its own record
            self.c.held_back[p.tp] = Held(held.trigger, tuple(x[0] for x in rest), steps[last][3], rest)

    def propose_new(self, p: PState, trigger: F.Fact) -> Decision | None:
        if p.replicas is None:
            return None
        res = self.c.rule("zk.election.new_partition", p.replicas, self.c.online_set(p.tp))
        if res is None:
            return self.propose(p, "new_partition_failed", "NewPartition->OnlinePartition", trigger,
                                note="No assigned replica is alive")
        return self.propose(p, "new_partition", "NewPartition->OnlinePartition", trigger, res.leader, res.isr)

    def fire_timers(self, ts: int) -> None:
        """Auto leader rebalance: 5 s after failover, then every leader.imbalance.check.interval.seconds."""
        from replay_engine.common.config import AUTO_REBALANCE, IMBALANCE_INTERVAL, IMBALANCE_PCT

        while self.c.next_rebalance is not None and self.c.next_rebalance <= ts and self.c.controller is not None:
            t = self.c.next_rebalance
            interval = self.config.int_value(IMBALANCE_INTERVAL, controller=self.c.controller) * 1_000_000
            self.c.next_rebalance = t + max(interval, 1_000_000)
            if not as_bool(self.config.resolve(AUTO_REBALANCE, controller=self.c.controller).value):
                continue
            if any(p.reassign_target is not None for p in self.parts.values()):
                continue  # Kafka skips the whole check while a reassignment is in progress
            pct = self.config.int_value(IMBALANCE_PCT, controller=self.c.controller)
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
                    if self.c.online(b) and p.isr is not None and b in p.isr:
                        res = self.c.rule("zk.election.preferred", p.replicas, p.isr, self.c.online_set(p.tp))
                        if res is not None:
                            self.commit(self.propose(p, "election", E.PREFERRED, timer, res.leader, res.isr,
                                                     note="auto leader rebalance"))

    def reassign_away(self, f: F.ReassignAway) -> None:
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
            spare = sorted((load[x], x) for x in load if x not in p.replicas and self.c.online(x))
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
                res = self.c.rule("zk.election.reassign", ar, isr, self.c.online_set(tp))
                if res is not None:
                    self.commit(self.propose(p, "election", E.REASSIGN, f, res.leader, res.isr,
                                             note=f"moved off broker {b}"))
                    continue
            self.c.touch(p, f.ts, f.ref, "replayed")

    def leader_isr_change(self, f: F.LeaderIsrChange) -> None:
        if f.tp in self.c.rewrite:
            return  # the trace's ISR changes belong to the old assignment
        p = self.c.part(f.tp)
        self.store.adopt(p, isr=f.isr, zk_version=f.zk_version, leader_epoch=f.leader_epoch)
        if f.leader is not None and f.leader >= 0 and p.leader is None:
            self.store.set_leader(p, f.leader)
            if p.state == UNKNOWN:
                self.store.move(p, ONLINE, RECORDED, f.ts, f.ref)
        self.c.touch(p, f.ts, f.ref, "recorded")

    def propose_controlled_shutdown(self, b: int, f: F.Fact) -> list[Decision | None]:
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
                res = self.c.rule("zk.election.controlled_shutdown", p.candidates, p.isr, live_or_sd,
                                  self.brokers.shutting)
                if res is not None:
                    out.append(self.propose(p, "election", E.CONTROLLED_SHUTDOWN, f, res.leader, res.isr))
                else:
                    # Kafka logs the failure; the partition keeps its (still alive) leader for now.
                    out.append(self.propose(p, "election_failed", E.CONTROLLED_SHUTDOWN, f, keep_state=True,
                                            note=f"no other live ISR member to take over from broker {b}"))
            elif b in p.isr and len(p.isr) > 1:
                leader, isr = self.c.rule("zk.offline_replica.isr", p.leader, p.isr, b, self.c.unclean_allowed(tp[0]))
                out.append(self.propose(p, "isr_removal", "OfflineReplica (controlled shutdown)", f, leader, isr,
                                        note=f"replica {b} removed from the ISR for its controlled shutdown"))
        return out

    def preferred_request(self, f: F.PreferredElectionRequest) -> None:
        if self.c.controller is None:
            return
        tps = f.tps if f.tps is not None else tuple(sorted(self.parts))
        self.c.preferred_asked(tps, f.ts)
        for tp in sorted(set(tps)):
            p = self.parts.get(tp)
            if p is None or p.deleting or p.replicas is None or p.isr is None or p.leader == p.replicas[0]:
                continue
            res = self.c.rule("zk.election.preferred", p.replicas, p.isr, self.c.online_set(p.tp))
            if res is not None:
                self.commit(self.propose(p, "election", E.PREFERRED, f, res.leader, res.isr))
