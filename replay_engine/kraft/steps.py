"""The KRaft replay's own steps, where no metadata log records them: the partition changes the quorum controller
writes when a broker leaves (fenced, controlled shutdown, unregistered), is unfenced, or registers a new incarnation
(ReplicationControlManager.generateLeaderAndIsrUpdates), each the record PartitionChangeBuilder writes for the release
(``kraft_build.build``: leader, ISR, ELR and last known ELR), applied through the store.
"""
from __future__ import annotations

from replay_engine.common import facts as F
from replay_engine.common.apply import Change
from replay_engine.kraft.build import BrokerEvent, ChangeRecord, Registration, build
from replay_engine.kraft.part import KraftPart
from replay_engine.common.partition import Decision, PState
from replay_engine.common.states import OFFLINE, ONLINE


class KraftSteps(KraftPart):
    """The replay's own partition changes, logs only."""

    def leaving(self, b: int, f: F.Fact, elr_too: bool = False) -> None:
        """No metadata log: the controller's moves for a broker that was fenced, is shutting down or unregistered
        (brokerToRemove over partitionsWithBrokerInIsr; handleBrokerUnregistered also over partitionsWithBrokerInElr,
        ``elr_too``)."""
        now = _Now(self)
        event = BrokerEvent(to_remove=b)
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.isr is None and p.leader == b and p.leader_epoch is not None:
                # The leader left: the controller wrote a new leader epoch (brokerToRemove is never kept as leader,
                # 3.9 PartitionChangeBuilder) that the replay cannot derive with the ISR unknown. Lines stating
                # older epochs after this are brokers lagging behind it, not the partition's state.
                self.ledger.min_epoch[tp] = max(self.ledger.min_epoch.get(tp, 0), p.leader_epoch + 1)
            if p.isr is None or self._behind(p):
                continue
            if b in p.isr or b == p.leader or elr_too and b in self.store.elr.get(tp, ((), ()))[0]:
                self._step(p, f, event, now)

    def unclean_shutdown(self, b: int, f: F.Fact) -> None:
        """A new incarnation of ``b`` registering: handleBrokerUncleanShutdown over the partitions with it in the ISR,
        then those with it in the ELR (3.8.0 .. trunk ReplicationControlManager; brokerWithUncleanShutdown)."""
        now = _Now(self)
        event = BrokerEvent(unclean_shutdown=b)
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.isr is None or self._behind(p):
                continue
            if b in p.isr or b in self.store.elr.get(tp, ((), ()))[0]:
                self._step(p, f, event, now)

    def _behind(self, p: PState) -> bool:
        """The registration held is older than a change the replay knows was made but could not derive."""
        return p.leader_epoch is not None and p.leader_epoch < self.ledger.min_epoch.get(p.tp, -1)

    def unfence(self, f: F.BrokerUp) -> None:
        """handleBrokerUnfenced over partitionsWithNoLeader, the unfenced broker acceptable (brokerToAdd)."""
        now = _Now(self)
        event = BrokerEvent(to_add=f.broker)
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.leader is not None and p.leader < 0 and p.isr is not None and not self._behind(p):
                self._step(p, f, event, now)

    def _step(self, p: PState, f: F.Fact, event: BrokerEvent, now: "_Now") -> None:
        elr, last_known = self.store.elr.get(p.tp, ((), ()))
        topic = p.tp[0]
        unclean, min_isr = now.unclean(topic), now.min_isr(topic)
        # build is a pure function of the registration and what the event reads alike: one broker event's
        # partitions hold a few registrations between them (8 distinct among 8,416 steps on a real cluster)
        key = (tuple(p.replicas or p.isr), tuple(p.isr), p.leader if p.leader is not None else -1, tuple(elr),
               tuple(last_known), event, unclean, min_isr)
        built = now.built.get(key)
        if built is None:
            reg = Registration(*key[:5])
            rec = build(reg, now.acceptable, event, version=self.r.config.version, unclean=unclean,
                        elr_enabled=self.r.elr_enabled, min_isr=min_isr)
            built = now.built[key] = (reg, rec, None if rec is None else rec.applied(reg))
        reg, rec, after = built
        if rec is not None:
            self.apply(p, f, rec, reg, now, after)

    def apply(self, p: PState, f: F.Fact, rec: ChangeRecord, reg: Registration, now: "_Now | None" = None,
              after: Registration | None = None) -> None:
        """The record ``rec`` the controller writes for ``p`` (the registration ``reg``), as the replay's decision.
        ``now``: what the broker event's other partitions read too (else read here); ``after``: ``rec.applied(reg)``,
        where the caller has it."""
        now = now or _Now(self)
        after = after if after is not None else rec.applied(reg)
        bump = rec.leader is not None  # the leader field set: a new leader epoch
        leader, isr = after.leader, after.isr
        le = p.leader_epoch + 1 if bump and p.leader_epoch is not None else p.leader_epoch
        state = ONLINE if leader >= 0 else OFFLINE
        change = Change(leader, tuple(isr), le, state=state, attempted=state, failed_election=leader < 0)
        before = p.snapshot()
        if not self.store.apply_decision(p, change, f.ts, f.ref):
            return
        if rec.elr is not None or rec.last_known_elr is not None:
            self.store.set_elr(p.tp, after.elr, after.last_known_elr)
        self.ledger.stepped[p.tp] = f.ref
        unclean = rec.how == "unclean"
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
            self.ledger.reached(p.tp, p.leader_epoch, (d, pe, now.acceptable, now.unclean(p.tp[0]), now.liveness_at()))
        if unclean:
            self.r.unclean_elections.append(d)
        if leader < 0:
            self.r.failed_elections.setdefault(p.tp, []).append(f.ref)
        self.r.show(p, f.ts, f.ref, "replayed")


class _Now:
    """What every partition of one broker event reads alike, read once: the acceptable leaders, each topic's unclean
    election and min ISR setting, the brokers' liveness (nothing a step writes changes them: steps write partitions)."""

    def __init__(self, steps: KraftSteps):
        self._r = steps.r
        self._brokers = steps.brokers
        self.acceptable = steps.brokers.acceptable()
        self._unclean: dict[str, bool] = {}
        self._min_isr: dict[str, int] = {}
        self._liveness: dict[int, int] | None = None
        # (registration, event, unclean, min ISR) -> (Registration, its ChangeRecord or None, the registration after)
        self.built: dict[tuple, tuple[Registration, ChangeRecord | None, Registration | None]] = {}

    def unclean(self, topic: str) -> bool:
        v = self._unclean.get(topic)
        if v is None:
            v = self._unclean[topic] = self._r.unclean(topic)
        return v

    def min_isr(self, topic: str) -> int:
        v = self._min_isr.get(topic)
        if v is None:
            v = self._min_isr[topic] = self._r.min_isr(topic)
        return v

    def liveness_at(self) -> dict[int, int]:
        """A copy, shared by the event's partitions (read only)."""
        if self._liveness is None:
            self._liveness = dict(self._brokers.liveness_at)
        return self._liveness
