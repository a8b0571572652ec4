"""A what-if's seeding (``CounterfactualMode``): the cluster's records and observations only seed the partitions the
replay knows nothing about yet; every later decision is the replay's own (``zk_partitions``)."""
from __future__ import annotations

from replay_engine.common import facts as F
from replay_engine.common.apply import RECORDED
from replay_engine.common.partition import UNKNOWN, PState
from replay_engine.common.states import NEW, NON_EXISTENT, OFFLINE, ONLINE
from replay_engine.zk.context import ZkPart


class Seeding(ZkPart):
    """Records and observations in a counterfactual run: what the replay does not know, taken as a start."""

    def seed(self, p: PState, leader, isr, leader_epoch, controller_epoch, zk_version, replicas, state, ts, ref,
             replicas_ordered: bool = True) -> None:
        """Counterfactual mode: adopt what the trace says only for a partition the replay does not know yet."""
        if replicas is not None:
            self.store.set_replicas(p, replicas, ts, replicas_ordered)
        if p.tp in self.c.rewrite:
            self.store.set_replicas(p, self.c.rewrite[p.tp], ts)
            isr = tuple(r for r in self.c.rewrite[p.tp] if self.c.online(r)) or (isr if isr is not None else None)
            if leader is not None and leader >= 0 and leader not in self.c.rewrite[p.tp]:
                leader = isr[0] if isr else -1
        self.store.adopt(p, leader, isr, leader_epoch, zk_version, controller_epoch)
        # seeding, like initializePartitionState: not a transition the table judges
        if state in (ONLINE, OFFLINE, NEW):
            self.store.initialize(p, state)
        elif p.leader is not None:
            self.store.initialize(p, ONLINE if p.leader >= 0 else OFFLINE)
        self.c.touch(p, ts, ref, "observed")

    def seed_from_record(self, f: F.RecordedState) -> None:
        """Counterfactual mode: a record only seeds a partition the replay does not know yet."""
        p = self.c.part(f.tp)
        kind = f.kind
        if kind == "new_state" and f.replicas is not None and p.replicas is None:
            self.store.set_replicas(p, self.mode.assignment(f.tp, f.replicas), f.ts)
            if p.state in (UNKNOWN, NON_EXISTENT):
                self.store.move(p, NEW, RECORDED, f.ts, f.ref, f.from_state)
        elif kind not in ("new_state", "offline", "deleted") and not self.c.known(p) and f.isr is not None:
            self.seed(p, f.leader, f.isr, f.leader_epoch, f.controller_epoch, f.zk_version, f.replicas,
                      None, f.ts, f.ref)
        elif kind == "write" and f.isr is not None and self.c.known(p) \
                and self.c.record_handlers.classify_write(p, f) == "alter_isr":
            # 2.7+: the leader's own ISR change (AlterIsr), written by the controller: an input to the
            # what-if as much as a leader's own write was before 2.7, while the leader is the same
            self.c.partition_handlers.leader_isr_change(F.LeaderIsrChange(
                f.ts, f.ref, f.order, tp=f.tp, leader=f.leader, isr=tuple(f.isr), zk_version=f.zk_version))

    def seed_from_failed(self, f: F.RecordedFailedElection) -> None:
        self.c.part(f.tp)  # counterfactual mode: the replay decides for itself whether an election fails

    def seed_from_observation(self, f: F.ObservedState) -> None:
        p = self.c.part(f.tp)
        if not self.c.known(p) and (f.isr is not None or f.leader is not None):
            replicas, ordered = self.c.observation_handlers.stated_assignment(p, f)
            self.seed(p, f.leader, f.isr, f.leader_epoch, f.controller_epoch, f.zk_version, replicas, f.state,
                      f.ts, f.ref, ordered)
