"""The KRaft quorum controller (Kafka 3.9, one voter): what it writes to the metadata log and logs.

It plays ``QuorumController`` with its managers, by their rules:

- registration (``ClusterControlManager``): a ``RegisterBrokerRecord`` whose offset is the broker
  epoch, fenced; a new incarnation replaces the old registration;
- heartbeats (``BrokerHeartbeatManager``): the first heartbeat after the broker has caught up
  unfences it; no heartbeat for ``broker.session.timeout.ms`` fences it;
- ``ReplicationControlManager.handleBrokerFenced``: for every partition with the broker in its
  ISR, a ``PartitionChangeRecord`` (ISR without it, a new leader if needed), *then* the fence
  record, in one batch; ``handleBrokerUnfenced``: the unfence record, *then* leaders for the
  leaderless partitions;
- ``PartitionChangeBuilder`` elections without ELR (3.9 has none): keep a leader that is in the
  target ISR and acceptable, else the first replica (replica order) in the target ISR that is;
  else -1; an empty target ISR is not written (the last member stays). PREFERRED (the periodic
  ``maybeBalancePartitionLeaders``) picks replicas[0] when it is in the ISR and acceptable.
  The leader epoch moves with the leader only (metadata.version >= 3.6); the partition epoch
  with every change.

Times the README derives by hand are constants here (``ACTIVE_AFTER_MS`` ...).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from samplegen.kafka import templates39 as T

if TYPE_CHECKING:
    from samplegen.kafka.kraft_world import KraftWorld

ACTIVE_AFTER_MS = 1500  # the single voter elects itself and activates this long after its JVM starts
REPLAY_LINE_MS = 2  # a committed record's "Replayed ..." line follows the write by this much (one voter)
TP = tuple[str, int]


@dataclass
class PartReg:
    """PartitionRegistration, as the controller holds it."""

    topic: str
    partition: int
    topic_id: str
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0

    @property
    def tp(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass
class BrokerReg:
    id: int
    epoch: int
    incarnation: str
    dir_id: str
    fenced: bool = True
    last_contact: int = 0


@dataclass
class Change:
    """One partition's change in a write: the registration before (None: created) and after."""

    before: PartReg | None
    after: PartReg


@dataclass
class QuorumController:
    cl: "KraftWorld"
    regs: dict[int, BrokerReg] = field(default_factory=dict)
    parts: dict[TP, PartReg] = field(default_factory=dict)
    active_ms: int | None = None

    @property
    def id(self) -> int:
        return self.cl.cfg.controller.id

    def line(self, when: int, name: str, /, **kw) -> None:
        self.cl.line(self.id, when, name, cid=self.id, **kw)

    def acceptable(self) -> set[int]:
        return {b for b, r in self.regs.items() if not r.fenced}

    # --- start-up and the Raft leadership ------------------------------------------------------
    def start(self) -> None:
        cfg, cl = self.cl.cfg, self.cl
        c = cfg.controller
        t0 = cl.now
        cl.line(c.id, t0, "log4j_mbean")
        cl.line(c.id, t0 + cl.rng.randint(200, 300), "signal_handlers")
        cl.line(c.id, t0 + cl.rng.randint(550, 650), "controller_starting", id=c.id)
        self.line(t0 + cl.rng.randint(900, 1000), "qc_creating", cluster_id=cfg.cluster_id)
        cl.schedule(t0 + ACTIVE_AFTER_MS, self._become_leader)

    def _become_leader(self) -> None:
        cfg, cl, log = self.cl.cfg, self.cl, self.cl.metadata
        c, c_dir = cfg.controller, cl.controller_dir
        votes = f"{{{c.id}=org.apache.kafka.raft.CandidateState$VoterState@{cl.rng.getrandbits(31):x}}}"
        timeout = cl.rng.randint(1000, 2000)
        cl.line(c.id, cl.now - 2, "raft_candidate", id=c.id, dir=c_dir, epoch=1, votes=votes, hw="Optional.empty",
                timeout=timeout,
                previous=f"Unattached(epoch=0, votedKey=null, voters=[{c.id}], electionTimeoutMs={timeout}, "
                         "highWatermark=Optional.empty)")
        voters = (f"{{{c.id}=ReplicaState(replicaKey=ReplicaKey(id={c.id}, directoryId=Optional.empty), "
                  "endOffset=Optional.empty, lastFetchTimestamp=-1, lastCaughtUpTimestamp=-1, hasAcknowledgedLeader=true)}")
        cl.line(c.id, cl.now, "raft_leader", id=c.id, dir=c_dir, epoch=1, offset=0, voters=voters,
                previous=f"CandidateState(localId={c.id}, localDirectoryId={c_dir},epoch=1, retries=1, voteStates={votes}, "
                         f"highWatermark=Optional.empty, electionTimeoutMs={timeout})")
        log.leader_change(cl.now, 1, c.id, [c.id])
        self.active_ms = cl.now
        cl.fact("controller_active", controller=c.id, epoch=1)
        self.line(cl.now, "qc_active", epoch=1, offset=log.next_offset)
        self.line(cl.now, "qc_activation_empty", n=1, mv=T.METADATA_VERSION, source=cfg.bootstrap_source)
        base = log.append(cl.now + 1, [
            ("BeginTransactionRecord", 0, {"name": "Bootstrap records"}),
            ("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": T.METADATA_LEVEL}),
            ("ZkMigrationStateRecord", 0, {"zkMigrationState": 0}),
            ("EndTransactionRecord", 0, {}),
        ])
        self.line(cl.now + REPLAY_LINE_MS, "replayed_begin_txn", offset=base)
        self.line(cl.now + REPLAY_LINE_MS, "replayed_feature", mv=T.METADATA_VERSION)
        self.line(cl.now + REPLAY_LINE_MS, "replayed_end_txn", offset=base + 3)
        started = cl.now + cl.rng.randint(20, 40)
        cl.line(c.id, started, "kafka_version", version=T.VERSION)
        cl.line(c.id, started, "kafka_commit", commit=T.COMMIT_ID)
        cl.line(c.id, started, "kafka_start_time", ms=started)
        cl.line(c.id, started + 3, "server_started", id=c.id)
        cl.schedule(cl.now + cl.rng.randint(120, 180), self._register_controller)
        cl.schedule(cl.now + cfg.noop_interval_ms, self._noop)
        cl.schedule(cl.now + cfg.imbalance_check_ms, self._periodic, cl.now + cfg.imbalance_check_ms)

    def _register_controller(self) -> None:
        c, cl = self.cl.cfg.controller, self.cl
        inc = cl.controller_incarnation
        cl.metadata.append(cl.now, [("RegisterControllerRecord", 0, {
            "controllerId": c.id, "incarnationId": inc, "zkMigrationReady": False,
            "endPoints": [{"name": "CONTROLLER", "host": c.host, "port": c.port, "securityProtocol": 0}],
            "features": _FEATURES,
        })])
        self.line(cl.now + REPLAY_LINE_MS, "replayed_controller_reg", id=c.id, inc=inc, host=c.host, port=c.port,
                  features="{kraft.version: 0-1, metadata.version: 1-21}")

    def _noop(self) -> None:
        """The leader's liveness marker every metadata.max.idle.interval.ms."""
        cl = self.cl
        cl.metadata.append(cl.now, [("NoOpRecord", 0, {})])
        cl.schedule(cl.now + cl.cfg.noop_interval_ms + cl.rng.randint(0, 2), self._noop)

    # --- writes ---------------------------------------------------------------------------------
    def _write(self, records: list, changes: list[Change]) -> int:
        base = self.cl.metadata.append(self.cl.now, records)
        for ch in changes:
            self.parts[(ch.after.topic, ch.after.partition)] = ch.after
        if changes:
            self.cl.publish(changes)
        return base

    # --- brokers: registration, heartbeats, fencing ----------------------------------------------
    def register_broker(self, b: int, incarnation: str, dir_id: str) -> int:
        cl = self.cl
        spec = cl.cfg.broker(b)
        old = self.regs.get(b)
        epoch = cl.metadata.next_offset
        if old is not None and old.incarnation != incarnation:
            self.line(cl.now, "new_incarnation", b=b, old=old.incarnation, new=incarnation, epoch=epoch)
        cl.metadata.append(cl.now, [("RegisterBrokerRecord", 3, {
            "brokerId": b, "isMigratingZkBroker": False, "incarnationId": incarnation, "brokerEpoch": epoch,
            "endPoints": [{"name": "PLAINTEXT", "host": spec.host, "port": spec.port, "securityProtocol": 0}],
            "features": _FEATURES, "rack": None, "fenced": True, "inControlledShutdown": False, "logDirs": [dir_id],
        })])
        self.regs[b] = BrokerReg(b, epoch, incarnation, dir_id, fenced=True, last_contact=cl.now)
        record = (f"RegisterBrokerRecord(brokerId={b}, isMigratingZkBroker=false, incarnationId={incarnation}, "
                  f"brokerEpoch={epoch}, endPoints=[BrokerEndpoint(name='PLAINTEXT', host='{spec.host}', port={spec.port}, "
                  "securityProtocol=0)], features=[BrokerFeature(name='kraft.version', minSupportedVersion=0, "
                  "maxSupportedVersion=1), BrokerFeature(name='metadata.version', minSupportedVersion=1, "
                  f"maxSupportedVersion=21)], rack=null, fenced=true, inControlledShutdown=false, logDirs=[{dir_id}])")
        name = "replayed_broker_initial" if old is None else "replayed_broker_new_incarnation"
        self.line(cl.now + REPLAY_LINE_MS, name, b=b, record=record)
        cl.fact("broker_registered", broker=b, epoch=epoch)
        return epoch

    def heartbeat(self, b: int, epoch: int, caught_up: bool) -> None:
        reg = self.regs.get(b)
        if reg is None or reg.epoch != epoch:
            return
        reg.last_contact = self.cl.now
        self.cl.schedule(self.cl.now + self.cl.cfg.session_timeout_ms, self._maybe_fence, b, self.cl.now)
        if reg.fenced and caught_up:
            self._unfence(reg)

    def _unfence(self, reg: BrokerReg) -> None:
        cl = self.cl
        self.line(cl.now, "unfence_granted", b=reg.id, offset=reg.epoch)
        reg.fenced = False
        changes = self._elect_leaderless(brought_back=reg.id)
        if changes:
            self.line(cl.now, "changing_partitions", context="handleBrokerUnfenced", n=len(changes))
        records = [("BrokerRegistrationChangeRecord", 0, {"brokerId": reg.id, "brokerEpoch": reg.epoch, "fenced": -1})]
        self._write(records + [_change_record(ch) for ch in changes], changes)
        self.line(cl.now + REPLAY_LINE_MS, "replayed_registration_change", b=reg.id, epoch=reg.epoch, fenced=-1)
        cl.fact("broker_unfenced", broker=reg.id, epoch=reg.epoch)
        for ch in changes:
            cl.fact("partition_change", **_fact(ch))

    def _maybe_fence(self, b: int, contact: int) -> None:
        reg = self.regs.get(b)
        if reg is None or reg.fenced or reg.last_contact != contact:
            return  # a later heartbeat renewed the session
        cl = self.cl
        cl.now += cl.rng.randint(1, 3)  # the deferred event runs just after the deadline
        self.line(cl.now, "fencing", b=b)
        changes = self._remove_from_isrs(b)
        if changes:
            self.line(cl.now, "changing_partitions", context="handleBrokerFenced", n=len(changes))
        reg.fenced = True
        records = [_change_record(ch) for ch in changes]
        records.append(("BrokerRegistrationChangeRecord", 0, {"brokerId": b, "brokerEpoch": reg.epoch, "fenced": 1}))
        self._write(records, changes)
        self.line(cl.now + REPLAY_LINE_MS, "replayed_registration_change", b=b, epoch=reg.epoch, fenced=1)
        cl.fact("broker_fenced", broker=b, epoch=reg.epoch, last_heartbeat=contact)
        for ch in changes:
            cl.fact("partition_change", **_fact(ch))

    # --- partitions --------------------------------------------------------------------------------
    def create_topic(self, name: str, topic_id: str, assignment: list[list[int]]) -> None:
        cl = self.cl
        ok = self.acceptable()
        records: list = [("TopicRecord", 0, {"name": name, "topicId": topic_id})]
        changes = []
        for p, replicas in enumerate(assignment):
            isr = [r for r in replicas if r in ok]
            reg = PartReg(name, p, topic_id, list(replicas), isr, isr[0] if isr else -1)
            changes.append(Change(None, reg))
            records.append(("PartitionRecord", 1, {
                "partitionId": p, "topicId": topic_id, "replicas": reg.replicas, "isr": reg.isr, "removingReplicas": [],
                "addingReplicas": [], "leader": reg.leader, "leaderEpoch": 0, "partitionEpoch": 0,
                "directories": [self.regs[r].dir_id for r in replicas],
            }))
        self._write(records, changes)
        at = cl.now + REPLAY_LINE_MS
        self.line(at, "replayed_topic", topic=name, tid=topic_id)
        for ch in changes:
            r = ch.after
            self.line(at, "replayed_partition", tp=r.tp, tid=topic_id, replicas=", ".join(map(str, r.replicas)),
                      dirs=", ".join(self.regs[b].dir_id for b in r.replicas), isr=", ".join(map(str, r.isr)), leader=r.leader)
        cl.fact("topic_created", topic=name, topic_id=topic_id, assignment=[list(a) for a in assignment])

    def alter_partition(self, leader: int, new_isrs: dict[TP, list[int]]) -> list[Change]:
        """A leader's AlterPartition (ISR expansion): one write for the request."""
        changes = []
        for key, isr in new_isrs.items():
            cur = self.parts[key]
            if cur.leader != leader or any(r not in self.acceptable() for r in isr if r not in cur.isr):
                continue  # Kafka rejects a stale leader or an ineligible (fenced) new member
            after = copy.deepcopy(cur)
            after.isr = list(isr)
            after.partition_epoch += 1
            changes.append(Change(cur, after))
        if changes:
            self._write([_change_record(ch) for ch in changes], changes)
            for ch in changes:
                self.cl.fact("partition_change", **_fact(ch))
        return changes

    def _remove_from_isrs(self, b: int) -> list[Change]:
        """handleBrokerFenced's partition changes (generateLeaderAndIsrUpdates, brokerToRemove = b)."""
        ok = self.acceptable() - {b}
        out = []
        for key in sorted(self.parts):
            cur = self.parts[key]
            if b not in cur.isr:
                continue
            target = [r for r in cur.isr if r != b] or list(cur.isr)
            out.append(self._changed(cur, target, _elect_any(cur, target, ok)))
        return out

    def _elect_leaderless(self, brought_back: int) -> list[Change]:
        ok = self.acceptable() | {brought_back}
        out = []
        for key in sorted(self.parts):
            cur = self.parts[key]
            if cur.leader == -1:
                leader = _elect_any(cur, cur.isr, ok)
                if leader != -1:
                    out.append(self._changed(cur, cur.isr, leader))
        return out

    @staticmethod
    def _changed(cur: PartReg, isr: list[int], leader: int) -> Change:
        after = copy.deepcopy(cur)
        after.isr = list(isr)
        if leader != cur.leader:
            after.leader = leader
            after.leader_epoch += 1
        after.partition_epoch += 1
        return Change(cur, after)

    # --- periodic tasks ------------------------------------------------------------------------------
    def _periodic(self, slot: int) -> None:
        """maybeBalancePartitionLeaders then maybeElectUncleanLeaders, every leader.imbalance.check.interval."""
        cl = self.cl
        cl.now += cl.rng.randint(1, 3)
        ok = self.acceptable()
        changes = []
        for key in sorted(self.parts):
            cur = self.parts[key]
            preferred = cur.replicas[0]
            if cur.leader != preferred and preferred in cur.isr and preferred in ok:
                changes.append(self._changed(cur, cur.isr, preferred))
        if changes:
            self._write([_change_record(ch) for ch in changes], changes)
            for ch in changes:
                cl.fact("partition_change", preferred=True, **_fact(ch))
        self.line(cl.now + 1, "periodic_task", task="maybeBalancePartitionLeaders", n=len(changes),
                  us=cl.rng.randint(900, 9000))
        # Unclean election is off for every topic here: nothing to elect.
        self.line(cl.now + 2, "periodic_task", task="maybeElectUncleanLeaders", n=0, us=cl.rng.randint(60, 900))
        nxt = slot + cl.cfg.imbalance_check_ms
        cl.schedule(nxt, self._periodic, nxt)


_FEATURES = [{"name": "kraft.version", "minSupportedVersion": 0, "maxSupportedVersion": 1},
             {"name": "metadata.version", "minSupportedVersion": 1, "maxSupportedVersion": T.METADATA_LEVEL}]


def _elect_any(cur: PartReg, target_isr: list[int], acceptable: set[int]) -> int:
    """PartitionChangeBuilder.electAnyLeader without ELR or unclean election."""
    if cur.leader in target_isr and cur.leader in acceptable:
        return cur.leader
    return next((r for r in cur.replicas if r in target_isr and r in acceptable), -1)


def _change_record(ch: Change) -> tuple[str, int, dict]:
    """Only what changed is written: every field but the partition is a tagged delta."""
    b, a = ch.before, ch.after
    fields: dict = {"partitionId": a.partition, "topicId": a.topic_id}
    if b is None or a.isr != b.isr:
        fields["isr"] = a.isr
    if b is None or a.leader != b.leader:
        fields["leader"] = a.leader
    return ("PartitionChangeRecord", 1, fields)


def _fact(ch: Change) -> dict:
    a = ch.after
    return {"topic": a.topic, "partition": a.partition, "leader": a.leader, "isr": list(a.isr),
            "leader_epoch": a.leader_epoch, "partition_epoch": a.partition_epoch,
            "previous_leader": ch.before.leader if ch.before else None}
