"""The KRaft replay's own steps, where no metadata log records them: the partition changes the quorum controller
writes when a broker leaves (fenced, controlled shutdown) or is unfenced (ReplicationControlManager
generateLeaderAndIsrUpdates), decided with the release's rules and applied through the store.
"""
from __future__ import annotations

from typing import Any

from replay_engine import facts as F
from replay_engine.apply import Change
from replay_engine.part import Part
from replay_engine.partition import Decision, PState
from replay_engine.states import OFFLINE, ONLINE


class KraftSteps(Part):
    """The replay's own partition changes, logs only."""

    def __init__(self, replay: Any):
        # the KraftReplay this part belongs to, what the parts share; a weak reference, so that a replay with its parts
        # is freed by reference counting, no cycle left for the collector
        self.belong_to(replay)
        self.store = replay.store
        self.parts = replay.parts
        self.brokers = replay.brokers
        self.ledger = replay.ledger

    def leaving(self, b: int, f: F.Fact) -> None:
        """No metadata log: the controller's moves for a broker that was fenced or is shutting down."""
        ok = self.brokers.acceptable()
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.isr is None and p.leader == b and p.leader_epoch is not None:
                # The leader left: the controller wrote a new leader epoch (brokerToRemove is never kept as leader,
                # 3.9 PartitionChangeBuilder) that the replay cannot derive with the ISR unknown. Lines stating
                # older epochs after this are brokers lagging behind it, not the partition's state.
                self.ledger.min_epoch[tp] = max(self.ledger.min_epoch.get(tp, 0), p.leader_epoch + 1)
            if p.isr is None or b not in set(p.isr) | {p.leader} or self._behind(p):
                continue
            target = self.r.rule("kraft.isr_shrink", p.isr, {b}, self.r.elr_enabled)
            res = self.r.rule("kraft.election", p.replicas or p.isr, target, p.leader, ok, self.r.unclean(tp[0]), (),
                              self.r.elr_enabled)
            # generateLeaderAndIsrUpdates' target ISR is the ISR without the broker (Replicas.copyWithout), even
            # where it is left unwritten
            self.apply(p, f, res.leader, res.isr, res.how == "unclean", tuple(r for r in p.isr if r != b))

    def _behind(self, p: PState) -> bool:
        """The registration held is older than a change the replay knows was made but could not derive."""
        return p.leader_epoch is not None and p.leader_epoch < self.ledger.min_epoch.get(p.tp, -1)

    def unfence(self, f: F.Fact) -> None:
        ok = self.brokers.acceptable()
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.leader is not None and p.leader < 0 and p.isr is not None and not self._behind(p):
                res = self.r.rule("kraft.election", p.replicas or p.isr, p.isr, None, ok, self.r.unclean(tp[0]), (),
                                  self.r.elr_enabled)
                if res.leader >= 0:
                    self.apply(p, f, res.leader, res.isr, res.how == "unclean")

    def apply(self, p: PState, f: F.Fact, leader: int, isr, unclean: bool, target=None) -> None:
        bump = self.r.rule("kraft.leader_epoch_bump", p.leader, p.isr, leader, isr, target)
        if bump is None:
            return  # the controller writes no record for a change that changes nothing
        le = p.leader_epoch + 1 if bump and p.leader_epoch is not None else p.leader_epoch
        state = ONLINE if leader >= 0 else OFFLINE
        change = Change(leader, tuple(isr), le, state=state, attempted=state, failed_election=leader < 0)
        before = p.snapshot()
        if not self.store.apply_decision(p, change, f.ts, f.ref):
            return
        self.ledger.replayed_since[p.tp] = self.ledger.replayed_since.get(p.tp, 0) + 1
        self.ledger.epoch_known_at[p.tp] = f.ts
        if p.leader_epoch is not None and bump:
            self.ledger.epoch_decided.setdefault(p.tp, {})[p.leader_epoch] = leader
        if p.leader_epoch is not None:
            self.ledger.epoch_first_seen.setdefault(p.tp, {}).setdefault(p.leader_epoch, f.ts)
        self.r._seq += 1
        d = Decision(self.r._seq, f.ts, p.tp, "election" if leader >= 0 else "election_failed", "KRaft (replayed)",
                     f.ref, before, {"leader": leader, "isr": list(isr), "leader_epoch": p.leader_epoch},
                     unclean=unclean, status="applied", change=change)
        self.r.decisions.append(d)
        if p.leader_epoch is not None and bump:
            pe = None if p.zk_version is None else p.zk_version + self.ledger.replayed_since[p.tp]
            self.ledger.replayed_at[(p.tp, p.leader_epoch)] = (d, pe, self.brokers.acceptable(),
                                                               self.r.unclean(p.tp[0]), dict(self.brokers.liveness_at))
            self.ledger.replayed_epochs.add((p.tp, p.leader_epoch))
        if unclean:
            self.r.unclean_elections.append(d)
        if leader < 0:
            self.r.failed_elections.setdefault(p.tp, []).append(f.ref)
        self.r.show(p, f.ts, f.ref, "replayed")
