"""The ZooKeeper-mode controller of Kafka 2.8, as far as its ZooKeeper writes and log lines show.

Mirrors ``KafkaController`` / ``ZkPartitionStateMachine`` / ``ZkReplicaStateMachine``:
election through one multi (create ``/controller`` + bump ``/controller_epoch``),
failover (replica state machine before partition state machine), broker
change (startup, failure -> ``onReplicasBecomeOffline``: elections first, then
OfflineReplica removing the dead replica from the ISR, which is where
``leader: -1`` comes from), topic creation, controlled shutdown, AlterIsr and
the auto preferred-leader rebalance. Elections are the pure functions of
:mod:`samplegen.kafka.elections`. Every state write is
``multi[check /controller_epoch, setData state]``.
"""
from __future__ import annotations

import json

from samplegen.kafka import elections
from samplegen.kafka import templates28 as T
from samplegen.kafka import znodes
from samplegen.kafka.scala import comma, hash_set, scala_list, scala_set
from samplegen.kafka.state import Partition
from samplegen.zk.server import Op

REBALANCE_INTERVAL_MS = 300_000  # leader.imbalance.check.interval.seconds
REBALANCE_FIRST_MS = 5_000
IMBALANCE_RATIO = 0.10  # leader.imbalance.per.broker.percentage / 100


def elect(cl, b: int, *, reelect: bool = False) -> None:
    """KafkaController.elect on broker ``b``."""
    cl.zk_read(b)
    node = cl.znode("/controller")
    if node is not None:
        cid = json.loads(node.data)["brokerid"]
        cl.log.add(b, cl.now, "already_elected", id=b, cid=cid)
        cl.tick()
        return
    if cl.znode("/controller_epoch") is None:
        cl.zk_create(b, "/controller_epoch", znodes.controller_epoch(0))
        cl.log.add(b, cl.now, "controller_epoch_created")
    cl.zk_read(b)
    ep = cl.znode("/controller_epoch")
    epoch = int(ep.data) + 1
    rc = cl.zk_multi(b, [
        Op("create", "/controller", znodes.controller(b, cl.now), ephemeral=True),
        Op("setData", "/controller_epoch", znodes.controller_epoch(epoch), ep.version),
    ])
    if rc:
        return
    zkv = cl.znode("/controller_epoch").version
    cl.log.add(b, cl.now, "elected", id=b, epoch=epoch, zkv=zkv)
    cl.fact("controller_elected", broker=b, epoch=epoch, zxid=cl.zk.records[-1].zxid)
    c = Controller(cl, b, epoch, zkv)
    cl.controller = c
    c.on_failover()


class Controller:
    def __init__(self, cl, broker_id: int, epoch: int, epoch_zk_version: int):
        self.cl = cl
        self.id = broker_id
        self.epoch = epoch
        self.zkv = epoch_zk_version
        self.live: dict[int, int] = {}
        self.shutting: set[int] = set()
        self.corr: dict[int, int] = {}
        self.active = True

    # --- small helpers -------------------------------------------------------------------------
    def log(self, name: str, throwable=(), **kw) -> None:
        self.cl.log.add(self.id, self.cl.now, name, throwable=throwable, id=self.id, **kw)

    def sc(self, name: str, throwable=(), **kw) -> None:
        self.cl.log.add(self.id, self.cl.now, name, throwable=throwable, id=self.id, epoch=self.epoch, **kw)

    def online(self, b: int) -> bool:
        return b in self.live and b not in self.shutting

    def parts(self) -> list[Partition]:
        return sorted(self.cl.partitions.values(), key=lambda p: (p.topic, p.partition))

    def _next_corr(self, b: int) -> int:
        c = self.corr.get(b, -1) + 1
        self.corr[b] = c
        return c

    def _epochs(self) -> str:
        return ", ".join(f"{b} -> {e}" for b, e in sorted(self.live.items()))

    def _check(self) -> Op:
        return Op("check", "/controller_epoch", None, self.zkv)

    def write_state(self, p: Partition, leader: int, isr: list[int], leader_epoch: int, why: str) -> None:
        path = f"/brokers/topics/{p.topic}/partitions/{p.partition}/state"
        data = znodes.partition_state(leader, leader_epoch, isr, self.epoch)
        self.cl.zk_multi(self.id, [self._check(), Op("setData", path, data, p.zk_version)])
        if leader >= 0 and leader_epoch != p.leader_epoch:
            p.epoch_start[leader_epoch] = p.leo.get(leader, 0)
        p.leader, p.isr, p.leader_epoch, p.controller_epoch = leader, list(isr), leader_epoch, self.epoch
        p.zk_version += 1
        self.cl.fact("partition_state_written", topic=p.topic, partition=p.partition, leader=leader, isr=list(isr),
                     leader_epoch=leader_epoch, zk_version=p.zk_version, zxid=self.cl.zk.records[-1].zxid, why=why)

    # --- requests to brokers -------------------------------------------------------------------
    def send(self, lai: dict[int, list[Partition]], um_parts: list[Partition] | None, um_to=None) -> None:
        """ControllerBrokerRequestBatch.sendRequestsToBrokers: LeaderAndIsr per broker, then UpdateMetadata."""
        for b in sorted(lai):
            ps = lai[b]
            lead = sum(1 for p in ps if p.leader == b)
            self.sc("sc_send_lai", b=b, lead=lead, follow=len(ps) - lead)
            corr = self._next_corr(b)
            self.cl.tick(1, 3)
            self.cl.on_leader_and_isr(b, self.id, self.epoch, corr, ps)
        if um_parts is not None:
            self.update_metadata(sorted(um_to if um_to is not None else self.live), len(um_parts))

    def update_metadata(self, brokers: list[int], n: int) -> None:
        self.sc("sc_send_um", brokers=hash_set(brokers), n=n)
        for b in brokers:
            corr = self._next_corr(b)
            self.cl.tick(0, 2)
            self.cl.on_update_metadata(b, self.id, self.epoch, corr, n)

    def _recipients(self, parts: list[Partition], exclude: int | None = None,
                    include_shutting: bool = False) -> dict[int, list[Partition]]:
        out: dict[int, list[Partition]] = {}
        for p in parts:
            for r in p.replicas:
                ok = (r in self.live) if include_shutting else self.online(r)
                if ok and r != exclude:
                    out.setdefault(r, []).append(p)
        return out

    # --- failover ------------------------------------------------------------------------------
    def on_failover(self) -> None:
        cl = self.cl
        if cl.znode("/feature") is None:
            self.log("feature_znode")
            cl.zk_create(self.id, "/feature", znodes.FEATURE)
        self.log("registering_handlers")
        cl.tick(2, 4)
        self.log("deleting_logdir_notif")
        cl.zk_read(self.id)
        cl.tick(2, 4)
        self.log("deleting_isr_notif")
        cl.zk_read(self.id)
        cl.tick(2, 4)
        self.log("init_context")
        cl.zk_read(self.id, 3)
        self.live = cl.live_broker_znodes()
        cl.tick(5, 12)
        self.log("init_epochs", epochs=self._epochs())
        self.log("register_mods", brokers=scala_set(self.live))
        topics = sorted(cl.topics)
        for b in sorted(self.live):
            cl.tick(5, 20)
            self.log("channel_connect", target=b)
            self.log("rst_starting")
        self.log("active_brokers", brokers=scala_set(self.live))
        self.log("shutting_brokers")
        self.log("topics_list", topics=hash_set(topics))
        self.log("fetch_deletions")
        cl.tick(2, 5)
        self.log("to_delete")
        self.log("ineligible_delete", topics=comma(topics))
        self.log("init_tdm")
        self.log("tdm_init", topics=hash_set(topics))
        self.log("send_um")
        parts = self.parts()
        self.update_metadata(sorted(self.live), len(parts))
        # Replica state machine first: live replicas online, replicas of dead brokers offline.
        self.log("rsm_init")
        self.log("rsm_online")
        self.send(self._recipients([p for p in parts if p.state != "NonExistentPartition"]), None)
        self.log("rsm_offline")
        dead = sorted({r for p in parts for r in p.replicas if r not in self.live})
        for d in dead:
            self.offline_replica(d, [p for p in parts if d in p.replicas])
        states = ", ".join(f"[Topic={p.topic},Partition={p.partition},Replica={r}] -> "
                           f"{'OnlineReplica' if r in self.live else 'OfflineReplica'}" for p in parts for r in p.replicas)
        self.log("rsm_started", states=states)
        self.log("psm_init")
        for p in parts:
            p.state = "OnlinePartition" if p.leader in self.live else "OfflinePartition"
        self.log("psm_online")
        self.trigger_online(T.ELECTION_TRACE_FAILOVER)
        self.log("psm_started", states=", ".join(f"{p.tp} -> {p.state}" for p in parts))
        self.log("ready", epoch=self.epoch)
        cl.tick(3, 8)
        for name in ("pre_undergoing", "pre_completed", "pre_skipping", "pre_resuming"):
            self.log(name)
        self.log("pre_starting", parts="", trigger="ZkTriggered")
        cl.tick(20, 50)
        self.log("scheduler")
        self._rebalance_base = cl.now + REBALANCE_FIRST_MS
        cl.schedule(self._rebalance_base, self.auto_rebalance, 0)
        for b in sorted(self.live):
            cl.tick(1, 5)
            spec = cl.brokers[b].spec
            self.log("rst_connected", host=spec.host, port=spec.port, target=b)
        for b in sorted(self.live):
            if b != self.id or cl.brokers[b].alive:
                cl.recorded_controller(b)

    def resign(self) -> None:
        cl = self.cl
        self.active = False
        self.log("cet_shutting_down")
        self.log("cet_shutdown_completed")
        self.log("cet_stopped")
        cl.tick(0, 2)
        self.log("resigning")
        self.log("unregister_mods", brokers=scala_set(self.live))
        self.log("psm_stopped")
        self.log("rsm_stopped")
        for _ in sorted(self.live):
            cl.tick(0, 3)
            self.log("rst_shutting_down")
            self.log("rst_stopped")
            self.log("rst_shutdown_completed")
        self.log("resigned")
        cl.fact("controller_resigned", broker=self.id)

    # --- broker changes ------------------------------------------------------------------------
    def on_broker_change(self) -> None:
        if not self.active:
            return
        cl = self.cl
        cl.zk_read(self.id, 1 + len(self.live))
        curr = cl.live_broker_znodes()
        new = sorted(set(curr) - set(self.live))
        dead = sorted(set(self.live) - set(curr))
        if not new and not dead:
            return
        self.log("broker_change", added=comma(new), deleted=comma(dead), live=comma(sorted(curr)))
        cl.fact("controller_broker_change", controller=self.id, added=new, deleted=dead)
        for b in new:
            self.log("channel_connect", target=b)
            self.log("rst_starting")
        for b in dead:
            self.log("rst_shutting_down")
            self.log("rst_stopped")
            self.log("rst_shutdown_completed")
        self.live = dict(curr)
        if new:
            self.on_broker_startup(new)
        if dead:
            self.on_broker_failure(dead)
        if new:
            self.log("register_mods", brokers=scala_list(new))
        if dead:
            self.log("unregister_mods", brokers=scala_list(dead))
        cl.tick(1, 3)
        self.log("epochs_updated", epochs=self._epochs())

    def on_broker_startup(self, new: list[int]) -> None:
        cl = self.cl
        self.log("startup_callback", brokers=comma(new))
        existing = sorted(b for b in self.live if b not in new)
        self.update_metadata(existing, 0)
        with_leaders = [p for p in self.parts() if p.state != "NonExistentPartition"]
        self.update_metadata(new, len(with_leaders))
        on_new = [p for p in with_leaders if any(r in new for r in p.replicas)]
        self.send({b: [p for p in on_new if b in p.replicas] for b in new if any(b in p.replicas for p in on_new)}, None)
        self.trigger_online(None)
        for b in new:
            cl.tick(1, 4)
            spec = cl.brokers[b].spec
            self.log("rst_connected", host=spec.host, port=spec.port, target=b)
            cl.recorded_controller(b)

    def on_broker_failure(self, dead: list[int]) -> None:
        self.log("failure_callback", brokers=comma(dead))
        for b in dead:
            if b in self.shutting:
                self.shutting.discard(b)
                self.log("removed_shutting", b=b)
        parts = self.parts()
        offline_leader = [p for p in parts if p.state in ("OnlinePartition", "NewPartition") and not self.online(p.leader)]
        for p in offline_leader:
            p.state = "OfflinePartition"  # logged at TRACE only in 2.6+: absent
        self.trigger_online(T.ELECTION_TRACE_BROKER_FAILURE)
        for d in dead:
            self.offline_replica(d, [p for p in parts if d in p.replicas])
        if not offline_leader:
            self.update_metadata(sorted(self.live), 0)

    def offline_replica(self, d: int, parts: list[Partition]) -> None:
        """ReplicaStateMachine -> OfflineReplica for replica ``d`` of ``parts`` (removeReplicasFromIsr)."""
        if not parts:
            return
        cl = self.cl
        changed = []
        for p in parts:
            if d in p.isr and p.state != "NonExistentPartition":
                leader, isr = elections.remove_from_isr(p.leader, p.isr, d)
                self.write_state(p, leader, isr, p.leader_epoch + 1, f"offline replica {d}")
                changed.append(p)
                if leader == -1:
                    cl.fact("leader_minus_one", topic=p.topic, partition=p.partition, isr=list(isr),
                            zxid=cl.zk.records[-1].zxid, removed=d)
        self.sc("sc_send_stop", n=len(parts), b=d)
        for p in parts:
            # Kafka logs every partition of the replica, changed or not (leaderAndIsrsWithoutReplica too).
            self.sc("sc_removed_from_isr", tp=p.tp, leader=p.leader, isr=comma(p.isr), le=p.leader_epoch,
                    ce=p.controller_epoch, replica=d)
        self.send(self._recipients(parts, exclude=d), parts)

    # --- partition state machine ---------------------------------------------------------------
    def trigger_online(self, trace: list[str] | None) -> None:
        todo = [p for p in self.parts() if p.state in ("OfflinePartition", "NewPartition")]
        if todo:
            self.elect_leaders(todo, "offline", trace)

    def elect_leaders(self, parts: list[Partition], strategy: str, trace: list[str] | None) -> list[Partition]:
        """doHandleStateChanges(..., OnlinePartition, strategy): ZK writes, failures logged, then successes."""
        cl = self.cl
        cl.zk_read(self.id, len(parts))
        done, failed = [], []
        for p in parts:
            frm = p.state
            live = {b for b in self.live if self.online(b)}
            unclean = False
            if strategy == "offline":
                allow = cl.topics[p.topic]["config"].get(
                    "unclean.leader.election.enable", str(cl.cfg.unclean_default).lower()) == "true"
                leader, isr, unclean = elections.offline(p.replicas, p.isr, live, allow)
            elif strategy == "controlled_shutdown":
                leader, isr = elections.controlled_shutdown(p.replicas, p.isr, set(self.live), self.shutting)
            else:
                leader, isr = elections.preferred(p.replicas, p.isr, live)
            if leader is None:
                failed.append((p, frm))
                continue
            old_leader, old_leo = p.leader, p.leo.get(p.leader, 0) if p.leader >= 0 else None
            self.write_state(p, leader, isr, p.leader_epoch + 1, strategy)
            if unclean:
                cl.fact("unclean_election", topic=p.topic, partition=p.partition, leader=leader,
                        new_leader_leo=p.leo.get(leader, 0), isr_before=[r for r in p.replicas if r not in isr])
            done.append((p, frm))
        strat = {"offline": "OfflinePartitionLeaderElectionStrategy(false)",
                 "controlled_shutdown": "ControlledShutdownPartitionLeaderElectionStrategy",
                 "preferred": "PreferredReplicaPartitionLeaderElectionStrategy"}[strategy]
        for p, frm in failed:
            if trace is None:
                raise NotImplementedError(f"no real 2.8 stack trace known for a failed election of {p.tp} here")
            self.sc("sc_failed", tp=p.tp, frm=frm,
                    throwable=T.trace("kafka.common.StateChangeFailedException: Failed to elect leader for partition "
                                      f"{p.tp} under strategy {strat}", trace))
            cl.fact("leader_election_failed", topic=p.topic, partition=p.partition, isr=list(p.isr),
                    live=sorted(self.live), strategy=strategy)
        for p, frm in done:
            self.sc("sc_online", tp=p.tp, frm=frm, leader=p.leader, le=p.leader_epoch, isr=scala_list(p.isr),
                    zkv=p.zk_version)
            p.state = "OnlinePartition"
        ok = [p for p, _ in done]
        if ok:
            self.send(self._recipients(ok, include_shutting=strategy == "controlled_shutdown"), ok)
        return ok

    # --- topics --------------------------------------------------------------------------------
    def on_topic_change(self, topic: str) -> None:
        cl = self.cl
        cl.zk_read(self.id, 2)
        meta = cl.topics[topic]
        parts = [cl.partitions[(topic, i)] for i in sorted(meta["assignment"])]
        kind = "Map" if len(parts) <= 4 else "HashMap"
        ra = ", ".join(f"{p.tp} -> ReplicaAssignment(replicas={comma(p.replicas)}, addingReplicas=, removingReplicas=)"
                       for p in parts)
        self.log("new_topics", topic=topic, topic_id=meta["id"], assignment=f"{kind}({ra})")
        self.log("new_partitions", parts=comma(p.tp for p in parts))
        for p in parts:
            p.state = "NewPartition"
            self.sc("sc_new_partition", tp=p.tp, replicas=comma(p.replicas))
        # initializeLeaderAndIsrForPartitions: the znodes first, then the states.
        cl.zk_multi(self.id, [self._check(), Op("create", f"/brokers/topics/{topic}/partitions")])
        for p in parts:
            cl.zk_multi(self.id, [self._check(), Op("create", f"/brokers/topics/{topic}/partitions/{p.partition}")])
        for p in parts:
            live = [r for r in p.replicas if self.online(r)]
            p.leader, p.isr, p.leader_epoch, p.controller_epoch = live[0], live, 0, self.epoch
            p.epoch_start[0] = 0
            cl.zk_multi(self.id, [self._check(), Op("create", f"/brokers/topics/{topic}/partitions/{p.partition}/state",
                                                    znodes.partition_state(p.leader, 0, live, self.epoch))])
            p.zk_version = 0
            cl.fact("partition_state_written", topic=p.topic, partition=p.partition, leader=p.leader, isr=list(live),
                    leader_epoch=0, zk_version=0, zxid=cl.zk.records[-1].zxid, why="new partition")
        for p in parts:
            self.sc("sc_online", tp=p.tp, frm="NewPartition", leader=p.leader, le=0, isr=scala_list(p.isr), zkv=0)
            p.state = "OnlinePartition"
        self.send(self._recipients(parts), parts)

    # --- controlled shutdown and ISR changes ---------------------------------------------------
    def on_controlled_shutdown(self, b: int) -> list[Partition]:
        cl = self.cl
        self.log("cs_controller", b=b)
        self.shutting.add(b)
        self.log("cs_all_shutting", brokers=comma(sorted(self.shutting)))
        self.log("cs_live", brokers=comma(sorted(x for x in self.live if x not in self.shutting)))
        parts = [p for p in self.parts() if b in p.replicas and len(p.replicas) > 1]
        led = [p for p in parts if p.leader == b]
        followed = [p for p in parts if p.leader != b]
        self.elect_leaders(led, "controlled_shutdown", None)
        if followed:
            self.sc("sc_send_stop", n=len(followed), b=b)
            self.offline_replica(b, followed)
        leaders = ",".join(f"{p.tp} -> (Leader:{p.leader},ISR:{comma(p.isr)},LeaderEpoch:{p.leader_epoch},"
                           f"ControllerEpoch:{p.controller_epoch})" for p in self.parts())
        self.log("all_leaders", leaders=leaders)
        cl.tick(1, 5)
        return [p for p in self.parts() if p.leader == b]

    def alter_isr(self, leader: int, p: Partition, new_isr: list[int]) -> None:
        """An AlterIsr from the leader: the controller writes the new ISR (same leader epoch)."""
        cl = self.cl
        self.log("updating_isrs", parts=f"Set({p.tp})")
        self.write_state(p, p.leader, new_isr, p.leader_epoch, "alter isr")
        self.log("isr_zk_updated", tp=p.tp, isr=comma(new_isr), zkv=p.zk_version)
        self.update_metadata(sorted(self.live), 1)
        cl.tick(1, 4)
        cl.log.add(leader, cl.now, "isr_updated", tp=p.tp, id=leader, isr=comma(new_isr), version=p.zk_version)

    # --- auto leader rebalance -----------------------------------------------------------------
    def auto_rebalance(self, k: int) -> None:
        cl = self.cl
        if not self.active or cl.controller is not self:
            return
        self.log("auto_rebalance")
        cl.tick(0, 1)
        self.log("auto_check")
        by_pref: dict[int, list[Partition]] = {}
        for p in self.parts():
            by_pref.setdefault(p.replicas[0], []).append(p)
        for b in sorted(by_pref):
            ps = by_pref[b]
            not_pref = [p for p in ps if p.leader != b]
            cl.tick(0, 4)
            self.log("not_preferred", b=b, parts=", ".join(f"{p.tp} -> {scala_list(p.replicas)}" for p in not_pref))
            ratio = len(not_pref) / len(ps)
            self.log("imbalance", b=b, ratio=repr(ratio))
            if ratio > IMBALANCE_RATIO:
                cand = [p for p in not_pref if self.online(b) and b in p.isr]
                self.log("pre_starting", parts=comma(p.tp for p in cand), trigger="AutoTriggered")
                if cand:
                    self.elect_leaders(cand, "preferred", None)
        cl.schedule(self._rebalance_base + (k + 1) * REBALANCE_INTERVAL_MS, self.auto_rebalance, k + 1)
