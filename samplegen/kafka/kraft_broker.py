"""A KRaft broker process (Kafka 3.9): start-up, heartbeats, kill -9, and applying metadata deltas.

A broker registers ``REGISTER_AFTER_MS`` after its JVM starts, catches up with the metadata
log, publishes its first image (loading its logs), and its first heartbeat after that,
``UNFENCE_AFTER_MS`` after registering, gets it unfenced; then it heartbeats every
``broker.heartbeat.interval.ms``. A killed broker stops heartbeating; its followers' fetches fail.

What it logs when a delta arrives is ``ReplicaManager.applyDelta``'s state-change lines: local
leaders first, then local followers, for partitions whose leader epoch moved. A change of the
ISR alone makes Kafka log "Skipped the become-leader/follower state change"; that line is not
simulated (nothing reads it).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from samplegen.kafka import templates39 as T

if TYPE_CHECKING:
    from samplegen.kafka.kraft_world import KraftWorld
    from samplegen.kafka.quorum import PartReg
    from samplegen.kafka.state import BrokerSpec

REGISTER_AFTER_MS = 1500
UNFENCE_AFTER_MS = 250
CATCH_UP_MS = (2000, 4000)  # a restarted follower is back in sync this long after it was unfenced
TP = tuple[str, int]


def _ints(values) -> str:
    return ",".join(map(str, values))


class KraftBroker:
    def __init__(self, cl: "KraftWorld", spec: "BrokerSpec", dir_id: str):
        self.cl, self.spec, self.dir_id = cl, spec, dir_id
        self.alive = False
        self.starts = 0
        self.incarnation: str | None = None
        self.epoch: int | None = None
        self.fenced = True
        self.partitions: dict[TP, tuple[int, int]] = {}  # (leader, leader epoch) this JVM applied
        self.on_disk: set[TP] = set()  # logs survive a restart

    @property
    def id(self) -> int:
        return self.spec.id

    def line(self, when: int, name: str, /, **kw) -> None:
        self.cl.line(self.id, when, name, **kw)

    def _current(self, start: int) -> bool:
        return self.alive and start == self.starts

    # --- start-up ----------------------------------------------------------------------------------
    def start(self) -> None:
        cl, b, rng = self.cl, self.id, self.cl.rng
        c = cl.cfg.controller
        self.starts += 1
        self.alive, self.fenced, self.partitions = True, True, {}
        self.incarnation = cl.new_id()
        cl.fact("broker_started", broker=b)
        t = cl.now
        self.line(t, "log4j_mbean")
        t += rng.randint(200, 300)
        self.line(t, "signal_handlers")
        t += rng.randint(350, 450)
        self.line(t, "broker_to_starting", id=b)
        self.line(t, "broker_starting", id=b)
        t += rng.randint(250, 350)
        self.line(t, "raft_observer", id=b, epoch=1, leader=c.id, host=c.host, port=c.port, voters=c.id,
                  previous=f"Unattached(epoch=1, votedKey=null, voters=[{c.id}], electionTimeoutMs={rng.randint(1000, 2000)}, "
                           "highWatermark=Optional.empty)")
        t += rng.randint(50, 100)
        self.line(t, "controller_recorded", id=b, host=c.host, port=c.port, cid=c.id)
        t += rng.randint(100, 200)
        self.line(t, "incarnation_starting", id=b, inc=self.incarnation, cluster_id=cl.cfg.cluster_id)
        cl.schedule(cl.now + REGISTER_AFTER_MS, self._register, self.starts)

    def _register(self, start: int) -> None:
        if not self._current(start):
            return
        cl = self.cl
        self.epoch = cl.controller.register_broker(self.id, self.incarnation, self.dir_id)
        self.line(cl.now + cl.rng.randint(4, 8), "registered", id=self.id, epoch=self.epoch)
        caught_up = cl.now + cl.rng.randint(25, 60)
        self.line(caught_up, "caught_up", id=self.id)
        cl.schedule(caught_up, self._first_publish, start)
        cl.schedule(cl.now + UNFENCE_AFTER_MS, self._heartbeat, start, cl.now + UNFENCE_AFTER_MS)

    def _first_publish(self, start: int) -> None:
        """The first metadata image: the log manager loads the logs, then the partitions are applied."""
        if not self._current(start):
            return
        cl, rng, d = self.cl, self.cl.rng, self.cl.cfg.log_dir
        t = cl.now + rng.randint(1, 4)
        self.line(t, "logs_loading", dir=d)
        mine = sorted(self.on_disk)
        if mine:  # only a restart finds logs; kill -9 left no clean shutdown file
            self.line(t + 1, "logs_recovering", n=len(mine), dir=d)
        for i, key in enumerate(mine, 1):
            t += rng.randint(8, 30)
            leo = cl.leo[key][self.id]
            reg = cl.controller.parts[key]
            self.line(t, "log_completed_load", dir=d, tp=f"{key[0]}-{key[1]}", tid=reg.topic_id, topic=key[0], p=key[1],
                      hw=leo, leo=leo, ms=rng.randint(5, 25), i=i, n=len(mine))
        t += rng.randint(2, 6)
        self.line(t, "logs_loaded", n=len(mine), ms=t - cl.now)
        regs = [r for _, r in sorted(cl.controller.parts.items())]
        cl.schedule(t + rng.randint(5, 15), self.apply, regs, start)

    # --- heartbeats ----------------------------------------------------------------------------------
    def _heartbeat(self, start: int, at: int) -> None:
        if not self._current(start):
            return
        cl = self.cl
        cl.controller.heartbeat(self.id, self.epoch, caught_up=True)
        if self.fenced and not cl.controller.regs[self.id].fenced:
            self.fenced = False
            self._unfenced(start)
        cl.schedule(at + cl.cfg.heartbeat_ms, self._heartbeat, start, at + cl.cfg.heartbeat_ms)

    def _unfenced(self, start: int) -> None:
        cl, b = self.cl, self.id
        t = cl.now + cl.rng.randint(10, 20)
        self.line(t, "unfenced", id=b)
        self.line(t + 1, "broker_started", id=b)
        self.line(t + 3, "kafka_version", version=T.VERSION)
        self.line(t + 3, "kafka_commit", commit=T.COMMIT_ID)
        self.line(t + 3, "kafka_start_time", ms=t + 3)
        self.line(t + 5, "server_started", id=b)
        cl.schedule(cl.now + cl.rng.randint(*CATCH_UP_MS), self._in_sync, start)

    def _in_sync(self, start: int) -> None:
        """Caught up with every leader it follows: each leader adds it to its ISRs (one AlterPartition)."""
        if not self._current(start):
            return
        cl = self.cl
        by_leader: dict[int, dict[TP, list[int]]] = {}
        for key, reg in sorted(cl.controller.parts.items()):
            if self.id in reg.replicas and self.id not in reg.isr and reg.leader >= 0 and cl.brokers[reg.leader].alive:
                by_leader.setdefault(reg.leader, {})[key] = reg.isr + [self.id]
        for leader, isrs in sorted(by_leader.items()):
            for ch in cl.controller.alter_partition(leader, isrs):
                a = ch.after
                cl.leo[(a.topic, a.partition)][self.id] = cl.leo[(a.topic, a.partition)][leader]
                cl.line(leader, cl.now + cl.rng.randint(2, 6), "isr_updated", tp=a.tp, id=leader, isr=_ints(a.isr),
                        v=a.partition_epoch)
            cl.now += cl.rng.randint(1, 4)  # the leaders' requests arrive one after the other

    # --- kill -9 ------------------------------------------------------------------------------------
    def kill9(self) -> None:
        cl, dead = self.cl, self.id
        self.alive = False
        cl.fact("broker_killed", broker=dead)
        trace = [f"java.io.IOException: Connection to {dead} was disconnected before the response was read",
                 *T.FETCH_ERROR_TRACE]
        for f in sorted(cl.brokers):
            fb = cl.brokers[f]
            follows = any(r.leader == dead and f in r.replicas for r in cl.controller.parts.values())
            if fb.alive and follows:
                fb.line(cl.now + cl.rng.randint(1, 40), "fetch_error", id=f, leader=dead,
                        session=cl.rng.randint(10**8, 2 * 10**9), epoch=cl.rng.randint(100, 9000), throwable=trace)

    # --- metadata deltas ------------------------------------------------------------------------------
    def apply(self, regs: list["PartReg"], start: int) -> None:
        if not self._current(start):
            return
        leaders, followers = [], []
        for r in regs:
            known = self.partitions.get((r.topic, r.partition))
            if self.id not in r.replicas or (known is not None and known[1] == r.leader_epoch):
                continue
            (leaders if r.leader == self.id else followers).append(r)
        cl, b = self.cl, self.id
        t = cl.now
        if leaders:
            self.line(t, "sc_to_leaders", id=b, n=len(leaders))
            for r in leaders:
                prev = self._open(r, t)
                leo = cl.leo[(r.topic, r.partition)][b]
                self.line(t, "sc_leader", id=b, tp=r.tp, tid=r.topic_id, le=r.leader_epoch, offset=leo, pe=r.partition_epoch,
                          hw=leo, isr=_ints(r.isr), prev=prev[0], ple=prev[1])
                t += cl.rng.randint(0, 2)
        if followers:
            self.line(t, "sc_to_followers", id=b, n=len(followers))
            for r in followers:
                prev = self._open(r, t)
                leo = cl.leo[(r.topic, r.partition)][b]
                self.line(t, "sc_follower", id=b, tp=r.tp, le=r.leader_epoch, offset=leo, pe=r.partition_epoch, hw=leo,
                          leader=r.leader, prev=prev[0], ple=prev[1])
                t += cl.rng.randint(0, 2)
            self.line(t, "sc_stopped_fetchers", id=b, n=len(followers))
            self.line(t + 1, "sc_started_fetchers", id=b, n=sum(1 for r in followers if r.leader >= 0))

    def _open(self, r: "PartReg", t: int) -> tuple[str, int]:
        """getOrCreatePartition: a Partition new to this JVM opens (or creates) its log. Returns the previous
        leader and leader epoch as Kafka prints them."""
        key = (r.topic, r.partition)
        known = self.partitions.get(key)
        self.partitions[key] = (r.leader, r.leader_epoch)
        if known is not None:
            return f"Some({known[0]})", known[1]
        d = self.cl.cfg.log_dir
        self.line(t, "sc_creating", id=self.id, tp=r.tp, tid=r.topic_id)
        if key not in self.on_disk:
            self.on_disk.add(key)
            self.line(t, "created_log", tp=r.tp, dir=d)
        self.line(t, "partition_log_loaded", tp=r.tp, id=self.id, hw=self.cl.leo[key][self.id])
        return "None", -1
