"""What a partition's line tells the ZooKeeper-mode replay without being a decision (a broker's or a controller's view
of a partition: a request received or sent, a dump of the controller's context): adopted through the partition store,
or, where it shows an unrecorded decision of the replay was not taken, that decision withdrawn. Records, which are
judged, are ``replay_engine.zk.records``'s.
"""
from __future__ import annotations

from replay_engine.common import facts as F
from replay_engine import rules as R
from replay_engine.common.apply import OBSERVED
from replay_engine.common.partition import UNKNOWN, PState
from replay_engine.common.states import NEW, NON_EXISTENT, OFFLINE, ONLINE
from replay_engine.zk.context import ZkPart


class ObservationHandlers(ZkPart):
    """Observations in; the partition's state as they show it out."""

    def observed(self, f: F.ObservedState) -> None:
        p = self.c.part(f.tp)
        # A controller's 'sending UpdateMetadata request ... to brokers S' line also shows S live or shutting down to
        # it (0.10.2.0 KafkaController.sendUpdateMetadataRequest: liveOrShuttingDownBrokerIds), but that is cluster-wide
        # state from a partition's line, which a replay split by partition routes to one shard only (sharding.shard
        # .routes, forensics.audit's routers): not read until those lines go to every shard (no figure of issue 44's
        # measure moved without it, 2026-11-28)
        self.withdraw_unwritten(p, f)
        if f.leader_epoch is not None and p.leader_epoch is not None and f.leader_epoch < p.leader_epoch and not (
                f.controller_epoch is not None and p.controller_epoch is not None
                and f.controller_epoch > p.controller_epoch):
            # An older view (a broker behind, or a skewed clock): the state has moved on. A lower leader epoch
            # under a newer controller epoch is not old, though: the topic's history restarted.
            if f.sending and f.sender_epoch is not None and p.controller_epoch is not None \
                    and f.sender_epoch < p.controller_epoch:
                # the context of a controller whose epoch is below the one the replay's state was written under: a
                # deposed controller's, or one of new ZooKeeper data, which its own election will tell (``restarted``)
                self.c.stale_views[f.tp] = f
            return
        if f.leader_epoch is not None and p.leader_epoch is not None and f.leader_epoch < p.leader_epoch:
            # that restart recreated the state znode too: the version written before it no longer counts
            self.store.set(p, recorded_zk_version=None)
        if self.epoch_alone(f):
            # A request the broker ignored as carrying its own leader epoch (2.8.0 ReplicaManager
            # .becomeLeaderOrFollower) states the epoch, not the leader or ISR: it completes a state the replay holds,
            # never begins one, and is no state a controller wrote under some controller epoch (``stated_epoch``)
            if p.isr is not None:
                self.store.adopt(p, leader_epoch=f.leader_epoch)
            self.c.touch(p, f.ts, f.ref, "observed")
            return
        replicas, ordered = self.stated_assignment(p, f)
        self.store.adopt(p, f.leader, f.isr, f.leader_epoch, f.zk_version, f.controller_epoch, replicas, f.ts,
                         replicas_ordered=ordered)
        if f.leader_epoch is not None:
            # a line without the leader epoch (2.8.0 ReplicaManager.makeFollowers' "cannot become follower since the
            # new leader -1 is unavailable") does not say which write it saw: the writes since the last stated epoch
            # stay unstated for the hole test (``epochs_in_no_line``)
            self.c.note_stated_epoch(f.tp, f.controller_epoch)
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
        self.c.touch(p, f.ts, f.ref, "observed")

    @staticmethod
    def epoch_alone(f: F.ObservedState) -> bool:
        """A line stating a partition's leader epoch and nothing else of its state."""
        return f.leader_epoch is not None and f.leader is None and f.isr is None and f.replicas is None \
            and f.state is None and f.zk_version is None

    def withdraw_unwritten(self, p: PState, f: F.ObservedState) -> None:
        """A controller's context states the partition at a leader epoch below the one the replay's own latest
        decision wrote (unrecorded): that decision was not made by then (the controller the replay held in office was
        gone, or had not acted yet). A controller's context never goes back: it holds what it read from ZooKeeper at
        its failover or wrote since (2.4.0 KafkaController.initializeControllerContext -> updateLeaderAndIsrCache;
        every election writes leader epoch + 1 to ZooKeeper and the cache together, 2.4.0
        PartitionStateMachine.doElectLeaderForPartitions), and a request carries that context
        (ControllerChannelManager.addUpdateMetadataRequestForBrokers / addLeaderAndIsrRequestForBrokers). The
        controller's own line (``sending``: logged as it sends, 1.0-2.5 sendUpdateMetadataRequests) counts from the
        controller epoch the decision was taken under; a broker handles a request later than it was sent
        (ReplicaManager.becomeLeaderOrFollower), so its line counts only from a later controller, which read
        ZooKeeper after the decision. The decision is withdrawn and the partition is as the line states."""
        if f.sender_epoch is None or f.leader_epoch is None or p.leader_epoch is None \
                or f.leader_epoch >= p.leader_epoch or p.controller_epoch is None \
                or f.sender_epoch < p.controller_epoch or f.sender_epoch == p.controller_epoch and not f.sending:
            return
        kept = self.pending.applied.get(p.tp)
        d = kept[-1] if kept else None
        if d is None or d.record is not None or d.status != "applied" or not d.after \
                or d.after.get("leader_epoch") != p.leader_epoch or d.before.get("leader_epoch") is None \
                or f.leader_epoch < d.before["leader_epoch"]:
            return
        kept.pop()
        d.status = "unrecorded"
        d.note = (d.note + "; " if d.note else "") + (
            f"withdrawn: controller epoch {f.sender_epoch} stated leader epoch {f.leader_epoch} after it "
            f"({f.ref.cite()})")
        self.store.adopt(p, f.leader, f.isr, f.leader_epoch, f.zk_version, d.before.get("controller_epoch"))
        if f.leader == -1:
            self.store.initialize(p, OFFLINE)  # leader -1 in the controller's context: OfflinePartition
        elif d.before.get("state") in (ONLINE, OFFLINE, NEW):
            self.store.initialize(p, d.before["state"])  # the decision's own move undone: not a transition
        self.c.timeline.withdraw(p.tp, d.ts)

    def stated_assignment(self, p: PState, f: F.ObservedState) -> tuple[tuple[int, ...] | None, bool]:
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
