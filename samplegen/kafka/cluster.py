"""The cluster: a clock, an event queue, ZooKeeper, brokers; what a broker does and logs.

Time is simulated in milliseconds (UTC). Scenario steps and timers (session
expiry, ISR checks, the controller's rebalance task) sit in one queue and run
in time order, so a run is deterministic for a given seed. Every ZooKeeper
request goes through :class:`samplegen.zk.server.ZkServer`, which assigns zxids
and writes the txn log; watches fire a fixed :data:`WATCH_DELAY_MS` later.

The controller's logic lives in :mod:`samplegen.kafka.controller`; this module
is the broker side: start-up, shutdown, kill -9, handling the controller's
requests, replication and the leader's ISR shrink/expand.
"""
from __future__ import annotations

import random

from samplegen.kafka import templates28 as T
from samplegen.kafka import znodes
from samplegen.kafka.config28 import config_dump
from samplegen.kafka.event_queue import EventQueue
from samplegen.kafka.logsink import LogSink
from samplegen.kafka.scala import comma
from samplegen.kafka.state import BrokerRt, ClusterConfig, Partition
from samplegen.zk.server import Op, ZkServer

# ZooKeeper delivers a watch and the controller's event thread picks it up this long after the write.
WATCH_DELAY_MS = 12
# The leader checks its followers every replica.lag.time.max.ms / 2 (the isr-expiration task).
ISR_CHECK_FRACTION = 2
CATCH_UP_MS = 2500  # a restarted follower is back in sync this long after it starts fetching
REGISTER_AFTER_MS = 2500  # a starting broker creates /brokers/ids/N this long after its JVM started


class Cluster(EventQueue):
    def __init__(self, cfg: ClusterConfig, start_ms: int):
        super().__init__(start_ms)
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)
        self.zk = ZkServer(epoch=cfg.zk_epoch, session_seed=0x17B0000000 + cfg.seed * 7919)
        self.log = LogSink()
        self.brokers: dict[int, BrokerRt] = {b.id: BrokerRt(b) for b in cfg.brokers}
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.topics: dict[str, dict] = {}
        self.controller = None  # samplegen.kafka.controller.Controller of the active controller
        self.facts: list[dict] = []  # key instants, for the sample's README and tests
        self._produced_at = start_ms
        self._carry: dict[tuple[str, int], int] = {}

    # --- time (the event queue: samplegen.kafka.event_queue) ------------------------------------
    def tick(self, lo: int = 1, hi: int = 3) -> int:
        self.now += self.rng.randint(lo, hi)
        return self.now

    def fact(self, kind: str, **kw) -> None:
        self.facts.append({"kind": kind, "ms": self.now, **kw})

    # --- ZooKeeper access (paths below the chroot) ---------------------------------------------
    def p(self, path: str) -> str:
        return self.cfg.chroot + path

    def zk_read(self, b: int, n: int = 1) -> None:
        """Reads leave no txn but use up cxids, as in real logs."""
        self.brokers[b].session.cxid += n

    def zk_create(self, b: int, path: str, data: bytes | None = None, *, ephemeral: bool = False) -> int:
        rc, _ = self.zk.create(self.now, self.brokers[b].session, self.p(path), data, ephemeral=ephemeral)
        self.tick()
        return rc

    def zk_create_recursive(self, b: int, path: str, data: bytes | None = None) -> None:
        """KafkaZkClient.createRecursive(throwIfPathExists=false): create, and the parents on NONODE."""
        rc = self.zk_create(b, path, data)
        if rc == -101:
            self.zk_create_recursive(b, path[: path.rfind("/")])
            self.zk_create(b, path, data)

    def zk_multi(self, b: int, ops: list[Op]) -> int:
        ops = [Op(o.kind, self.p(o.path), o.data, o.version, o.ephemeral) for o in ops]
        rc = self.zk.multi(self.now, self.brokers[b].session, ops)
        self.tick()
        return rc

    def zk_set(self, b: int, path: str, data: bytes, version: int = -1) -> int:
        rc = self.zk.set_data(self.now, self.brokers[b].session, self.p(path), data, version)
        self.tick()
        return rc

    def znode(self, path: str):
        return self.zk.get(self.p(path))

    def live_broker_znodes(self) -> dict[int, int]:
        """/brokers/ids children -> czxid (broker epoch)."""
        return {int(c): self.znode(f"/brokers/ids/{c}").czxid for c in self.zk.children(self.p("/brokers/ids"))}

    # --- traffic -----------------------------------------------------------------------------------
    def produce(self) -> None:
        """Advance log end offsets to ``now``: leaders append, followers that can fetch keep up."""
        dt = self.now - self._produced_at
        if dt <= 0:
            return
        since = self._produced_at
        self._produced_at = self.now
        for key, p in self.partitions.items():
            if p.leader < 0 or not self.brokers[p.leader].alive or p.state != "OnlinePartition":
                continue
            # Exact integer arithmetic (micro-messages): a scenario's offsets can be derived by hand.
            acc = self._carry.get(key, 0) + round(p.rate * 1000) * dt
            n, self._carry[key] = divmod(acc, 1_000_000)
            before = p.leo.get(p.leader, 0)
            p.leo[p.leader] = before + n
            seg = self.topics[p.topic].get("segment_records", 0)
            rolled = None
            if seg and n and before // seg != p.leo[p.leader] // seg:
                rolled = (p.leo[p.leader] // seg) * seg
                at = since + int(dt * (rolled - before) / n)  # when the leader's log crossed the boundary
                self._roll(p, p.leader, rolled, at)
            for r in p.replicas:
                if r != p.leader and self.can_fetch(r, p.leader):
                    if rolled is not None and p.leo.get(r, 0) < rolled:
                        self._roll(p, r, rolled, at + self.rng.randint(5, 400))
                    p.leo[r] = p.leo[p.leader]
                    p.last_caught_up[r] = self.now
            p.hw = min(p.leo.get(r, 0) for r in p.isr) if p.isr else p.hw

    def _roll(self, p: Partition, b: int, offset: int, t: int) -> None:
        """Log.roll on a replica: the producer snapshot, then the new segment (routine server.log noise)."""
        self.log.add(b, t, "producer_snapshot", tp=p.tp, offset=offset)
        self.log.add(b, t + self.rng.randint(0, 2), "log_rolled", tp=p.tp, dir=self.cfg.log_dir, offset=offset,
                     ms=self.rng.randint(1, 9))

    def housekeeping(self, b: int, start: int) -> None:
        """GroupMetadataManager's delete-expired-group-metadata task, every offsets.retention.check.interval.ms."""
        br = self.brokers[b]
        if not br.alive or br.starts != start:
            return
        self.log.add(b, self.now, "expired_offsets", id=b, n=0, ms=self.rng.choice((0, 0, 0, 1)))
        self.schedule(self.now + 600_000, self.housekeeping, b, start)

    def can_fetch(self, follower: int, leader: int) -> bool:
        f, lead = self.brokers[follower], self.brokers[leader]
        return f.alive and lead.alive and leader in f.fetcher_leaders and leader not in f.unreachable

    # --- broker start-up ---------------------------------------------------------------------------
    def _zk_client(self, b: int, connect: str) -> None:
        """A ZooKeeperClient connecting: its lines in server.log and the createSession txn."""
        br = self.brokers[b]
        spec = br.spec
        zk_host, zk_ip = self.cfg.zk_servers[(b + br.starts) % len(self.cfg.zk_servers)]
        self.log.add(b, self.now, "zk_init_session", connect=connect)
        if br.env_logged != br.starts:  # ZooKeeper logs its environment once per JVM
            br.env_logged = br.starts
            for key, value in _client_env(spec.host):
                self.log.add(b, self.now, "zk_client_env", key=key, value=value)
        self.tick()
        self.log.add(b, self.now, "zk_initiating", connect=connect, timeout=self.cfg.session_timeout_ms,
                     watcher=f"{self.rng.getrandbits(31):x}")
        self.log.add(b, self.tick(), "jute_maxbuffer")
        self.log.add(b, self.tick(), "zk_request_timeout")
        self.log.add(b, self.tick(), "zk_waiting")
        server = f"{zk_host}/{zk_ip}:2181"
        self.log.add(b, self.tick(), "zk_opening_socket", server=server)
        self.log.add(b, self.tick(), "zk_socket_established", client=f"/{spec.ip}:{self.rng.randint(32768, 60999)}",
                     server=server)
        br.session = self.zk.create_session(self.tick(2, 6), self.cfg.session_timeout_ms)
        self.log.add(b, self.tick(), "zk_session_complete", server=server, sid=f"0x{br.session.sid:x}",
                     timeout=self.cfg.session_timeout_ms)
        self.log.add(b, self.tick(), "zk_connected")

    def _zk_client_close(self, b: int) -> None:
        br = self.brokers[b]
        sid = f"0x{br.session.sid:x}"
        self.log.add(b, self.now, "zk_closing")
        deleted = self.zk.close_session(self.tick(), br.session, expired=False)
        self.log.add(b, self.tick(), "zk_event_thread_down", sid=sid)
        self.log.add(b, self.now, "zk_session_closed", sid=sid)
        self.log.add(b, self.tick(), "zk_closed")
        br.session = None
        self._after_ephemerals_gone(deleted)

    def start_broker(self, b: int) -> None:
        br = self.brokers[b]
        spec = br.spec
        br.starts += 1
        br.alive = True
        br.shutting_down = False
        br.started_ms = self.now
        br.alive_since.append((self.now, None))
        br.fetcher_leaders = set()
        br.leader_epochs = {}
        self.fact("broker_started", broker=b)
        add = lambda name, **kw: self.log.add(b, self.now, name, **kw)  # noqa: E731
        add("log4j_mbean")
        self.tick(150, 250)
        add("tls_reneg")
        self.tick(20, 60)
        add("signal_handlers")
        add("server_starting")
        add("connecting_zk", connect=self.cfg.zk_connect)
        self.tick(5, 15)
        if self.cfg.chroot:
            # KafkaServer.initZkClient: a short-lived client without the chroot makes sure it exists.
            self._zk_client(b, self.cfg.zk_connect[: -len(self.cfg.chroot)])
            rc, _ = self.zk.create(self.now, br.session, self.cfg.chroot, None)
            self.tick()
            self.log.add(b, self.now, "created_chroot", chroot=self.cfg.chroot)
            self._zk_client_close(b)
        self._zk_client(b, self.cfg.zk_connect)
        for path in znodes.PERSISTENT_PATHS:
            self.zk_create_recursive(b, path)
        self.tick(300, 700)
        add("feature_thread_start")
        self.zk_read(b, 2)
        add("feature_cache", epoch=0)
        # Cluster id: read /cluster/id, create it the first time.
        self.zk_read(b)
        if self.znode("/cluster/id") is None:
            self.zk_create_recursive(b, "/cluster/id", znodes.cluster_id(self.cfg.cluster_id))
        self.tick(2, 6)
        add("cluster_id", cluster_id=self.cfg.cluster_id)
        if br.starts == 1:
            add("no_meta_properties", dir=self.cfg.log_dir)
        cfg_body = config_dump(
            broker_id=b, host=spec.host, log_dir=self.cfg.log_dir, zk_connect=self.cfg.zk_connect,
            unclean=str(self.cfg.unclean_default).lower(), zk_timeout=self.cfg.session_timeout_ms,
            lag=self.cfg.replica_lag_time_max_ms,
        )
        self.tick(20, 40)
        add("kafka_config", body=cfg_body)
        self.tick(4, 9)
        add("kafka_config", body=cfg_body)
        self.tick(30, 50)
        for kind in ("Fetch", "Produce", "Request", "ControllerMutation"):
            add("reaper_quota", kind=kind)
            self.tick(0, 2)
        self._load_logs(b)
        self.tick(200, 300)
        add("conn_rate")
        add("awaiting_sockets", host="0.0.0.0", port=spec.port)
        self.tick(20, 40)
        add("socket_created", id=b)
        self.tick(15, 30)
        add("to_controller_start", id=b)
        self.tick(10, 20)
        for kind in ("Produce", "Fetch", "DeleteRecords", "ElectLeader"):
            add("reaper_start", id=b, kind=kind)
            self.tick(0, 1)
        self.tick(10, 20)
        add("logdir_handler")
        self.tick(30, 40)
        # Start-up is timed so the broker registers exactly REGISTER_AFTER_MS after it was started.
        assert self.now <= br.started_ms + REGISTER_AFTER_MS - 6, "start-up took longer than REGISTER_AFTER_MS"
        self.now = br.started_ms + REGISTER_AFTER_MS - 6
        registered_at = self._register(b)
        # The rest of start-up runs after the controller has seen the registration (another process in reality).
        self.schedule(registered_at + WATCH_DELAY_MS + 1, self._start_after_registration, b, br.starts)

    def start_refused(self, b: int, connect: str, zk_server: str, found_cluster_id: str) -> None:
        """A start with a zookeeper.connect that reaches another ensemble (a config-management mistake): the
        /cluster/id there is not the one in the broker's meta.properties, KafkaServer.startup throws
        InconsistentClusterIdException and the JVM exits. Nothing is written to this cluster's ZooKeeper."""
        br = self.brokers[b]
        spec = br.spec
        self.fact("broker_start_refused", broker=b, cause="inconsistent_cluster_id")
        add = lambda name, **kw: self.log.add(b, self.now, name, **kw)  # noqa: E731
        add("log4j_mbean")
        self.tick(150, 250)
        add("tls_reneg")
        self.tick(20, 60)
        add("signal_handlers")
        add("server_starting")
        add("connecting_zk", connect=connect)
        self.tick(5, 15)
        add("zk_init_session", connect=connect)
        for key, value in _client_env(spec.host):
            add("zk_client_env", key=key, value=value)
        self.tick()
        add("zk_initiating", connect=connect, timeout=self.cfg.session_timeout_ms,
            watcher=f"{self.rng.getrandbits(31):x}")
        self.log.add(b, self.tick(), "jute_maxbuffer")
        self.log.add(b, self.tick(), "zk_request_timeout")
        self.log.add(b, self.tick(), "zk_waiting")
        self.log.add(b, self.tick(), "zk_opening_socket", server=zk_server)
        self.log.add(b, self.tick(), "zk_socket_established", client=f"/{spec.ip}:{self.rng.randint(32768, 60999)}",
                     server=zk_server)
        sid = f"0x{self.rng.getrandbits(56):x}"
        self.log.add(b, self.tick(2, 6), "zk_session_complete", server=zk_server, sid=sid,
                     timeout=self.cfg.session_timeout_ms)
        self.log.add(b, self.tick(), "zk_connected")
        self.tick(100, 200)
        add("feature_thread_start")
        self.tick(5, 20)
        add("feature_cache", epoch=0)
        self.tick(60, 100)
        add("cluster_id", cluster_id=found_cluster_id)
        self.log.add(b, self.tick(2, 6), "fatal_startup",
                     throwable=T.trace(T.INCONSISTENT_CLUSTER_ID.format(found=found_cluster_id,
                                                                        stored=self.cfg.cluster_id), T.STARTUP_TRACE))
        self.log.add(b, self.tick(1, 3), "server_shutting_down_bare")
        self.log.add(b, self.tick(1, 3), "feature_thread_shutting")
        add("feature_thread_stopped")
        self.log.add(b, self.tick(0, 2), "feature_thread_done")
        add("zk_closing")
        self.log.add(b, self.tick(90, 120), "zk_session_closed", sid=sid)
        add("zk_event_thread_down", sid=sid)
        self.log.add(b, self.tick(5, 9), "zk_closed")
        self.log.add(b, self.tick(10, 15), "app_info_unregistered", id=b)
        self.log.add(b, self.tick(), "server_shut_down_bare")
        add("exiting_kafka")
        self.log.add(b, self.tick(), "server_shutting_down_bare")

    def _start_after_registration(self, b: int, start: int) -> None:
        br = self.brokers[b]
        if not br.alive or br.starts != start:
            return
        add = lambda name, **kw: self.log.add(b, self.now, name, **kw)  # noqa: E731
        self.tick(20, 40)
        for kind in ("topic", "Heartbeat", "Rebalance"):
            add("reaper_start", id=b, kind=kind)
            self.tick(0, 3)
        # KafkaController.startup: the event thread starts and tries to become controller.
        self.log.add(b, self.now, "cet_starting", id=b)
        self.tick()
        from samplegen.kafka.controller import elect

        elect(self, b)
        add("group_coord_starting", id=b)
        self.tick(20, 40)
        add("group_coord_started", id=b)
        self._producer_id_block(b)
        add("txn_coord_starting", id=b)
        self.tick(3, 8)
        add("txn_marker_start", id=b)
        add("txn_coord_started", id=b)
        self.tick(15, 25)
        add("reaper_start", id=b, kind="AlterAcls")
        self.tick(15, 25)
        add("config_changes_thread")
        self.tick(20, 30)
        add("socket_starting", id=b)
        self.tick(10, 15)
        add("socket_started_dp", id=b)
        add("socket_started", id=b)
        self.tick(5, 8)
        add("kafka_version", version=T.VERSION)
        add("kafka_commit", commit=T.COMMIT_ID)
        add("kafka_start_time", ms=self.now - 7)
        add("server_started", id=b)
        self.schedule(self.now + self.rng.randint(40_000, 59_000), self.housekeeping, b, br.starts)
        self.fact("broker_ready", broker=b)
        if self.controller is not None:
            self.recorded_controller(b)

    def recorded_controller(self, b: int) -> None:
        c = self.controller.id
        cs = self.brokers[c].spec
        self.log.add(b, self.tick(50, 120), "recorded_controller", id=b, host=cs.host, port=cs.port, cid=c)

    def _load_logs(self, b: int) -> None:
        br = self.brokers[b]
        add = lambda name, **kw: self.log.add(b, self.now, name, **kw)  # noqa: E731
        logs = sorted(br.local_logs, key=_tp_key)
        self.tick(10, 20)
        add("logs_loading", dir=self.cfg.log_dir)
        add("logs_skip_recovery" if br.clean_shutdown else "logs_recovery", dir=self.cfg.log_dir)
        start = self.now
        for i, tp in enumerate(logs, 1):
            topic, part = tp.rsplit("-", 1)
            p = self.partitions[(topic, int(part))]
            leo = p.leo.get(b, 0)
            self.tick(1, 4)
            add("log_producer_state", tp=tp, dir=self.cfg.log_dir, offset=leo)
            add("log_completed_load", dir=self.cfg.log_dir, tp=tp, topic=topic, partition=part,
                hw=min(p.hw, leo), start=0, leo=leo, ms=self.rng.randint(2, 40), i=i, n=len(logs))
        self.tick(2, 6)
        add("logs_loaded", n=len(logs), ms=self.now - start + self.rng.randint(1, 5))
        add("log_cleanup_start")
        add("log_flusher_start")
        br.clean_shutdown = False

    def _register(self, b: int) -> int:
        br = self.brokers[b]
        spec = br.spec
        self.log.add(b, self.now, "creating_broker_znode", id=b)
        self.now += 6
        data = znodes.broker_info(spec.host, spec.port, self.now)
        registered_at = self.now
        self.zk_multi(b, [Op("create", f"/brokers/ids/{b}", None, ephemeral=True), Op("setData", f"/brokers/ids/{b}", data)])
        node = self.znode(f"/brokers/ids/{b}")
        br.epoch = node.czxid
        stat = ",".join(str(x) for x in (node.czxid, node.mzxid, node.ctime, node.mtime, node.version, node.cversion,
                                         node.aversion, node.owner, len(data), 0, node.pzxid))
        self.fire("broker_change", at=registered_at)  # the controller acts WATCH_DELAY_MS after the write
        self.log.add(b, self.now, "broker_znode_stat", id=b, stat=stat)
        self.log.add(b, self.tick(), "registered_broker", id=b, host=spec.host, port=spec.port, epoch=br.epoch)
        self.fact("broker_registered", broker=b, zxid=node.czxid, epoch=br.epoch, at=registered_at)
        return registered_at

    def _producer_id_block(self, b: int) -> None:
        self.zk_read(b)
        node = self.znode("/latest_producer_id_block")
        if node.data:
            import json

            prev = json.loads(node.data)
            start = int(prev["block_end"]) + 1
        else:
            start = 0
        self.tick(30, 60)
        self.zk_set(b, "/latest_producer_id_block", znodes.producer_id_block(b, start, start + 999), node.version)
        self.log.add(b, self.now, "producer_id_block", id=b, start=start, end=start + 999,
                     version=self.znode("/latest_producer_id_block").version)

    # --- watches -----------------------------------------------------------------------------------
    def fire(self, kind: str, at: int | None = None, **kw) -> None:
        self.schedule((self.now if at is None else at) + WATCH_DELAY_MS, self._deliver, kind, kw)

    def _deliver(self, kind: str, kw: dict) -> None:
        from samplegen.kafka import controller as ctl

        if kind == "controller_change":
            for b in sorted(self.brokers):
                if self.brokers[b].alive and not self.brokers[b].shutting_down and self.brokers[b].session:
                    ctl.elect(self, b, reelect=True)
                    self.tick(1, 4)
            return
        c = self.controller
        if c is None or not self.brokers[c.id].alive:
            return
        if kind == "broker_change":
            c.on_broker_change()
        elif kind == "topic_change":
            c.on_topic_change(kw["topic"])

    def _after_ephemerals_gone(self, paths: list[str]) -> None:
        if any(p.startswith(self.p("/brokers/ids/")) for p in paths):
            self.fire("broker_change")
        if self.p("/controller") in paths:
            self.fire("controller_change")

    # --- failure and shutdown ----------------------------------------------------------------------
    def kill9(self, b: int) -> None:
        """The process dies; nothing more is logged by it. ZooKeeper expires the session later."""
        br = self.brokers[b]
        br.alive = False
        br.alive_since[-1] = (br.alive_since[-1][0], self.now)
        self.fact("broker_killed", broker=b)
        self.schedule(self.now + self.cfg.session_timeout_ms, self.expire_session, b, br.session)
        if self.controller is not None and self.controller.id == b:
            self.controller = None
        self._followers_lose_leader(b)

    def expire_session(self, b: int, session) -> None:
        if session is None or not session.open:
            return
        deleted = self.zk.close_session(self.now, session, expired=True)
        self.fact("session_expired", broker=b, zxid=self.zk.records[-1].zxid, session=f"0x{session.sid:x}")
        if self.brokers[b].session is session:
            self.brokers[b].session = None
        self._after_ephemerals_gone(deleted)
        self.tick()

    def _followers_lose_leader(self, dead: int) -> None:
        """Followers of a dead leader: one fetch error with its trace, then failed reconnects until leadership moves."""
        for f in sorted(self.brokers):
            fb = self.brokers[f]
            if not fb.alive or dead not in fb.fetcher_leaders:
                continue
            t = self.now + self.rng.randint(1, 30)
            self.log.add(f, t, "fetch_error", id=f, leader=dead, session=self.rng.randint(10**8, 2 * 10**9),
                         epoch=self.rng.randint(100, 9000),
                         throwable=T.trace(f"java.io.IOException: Connection to {dead} was disconnected before the response was read",
                                           T.FETCH_ERROR_TRACE))
            spec = self.brokers[dead].spec
            for k in range(1, self.cfg.session_timeout_ms // 1000 + 1):
                ms = t + k * 1000 + self.rng.randint(0, 40)
                self.schedule(ms, self._fetch_retry, f, dead, spec)

    def _fetch_retry(self, f: int, dead: int, spec) -> None:
        fb = self.brokers[f]
        if fb.alive and dead in fb.fetcher_leaders and not self.brokers[dead].alive:
            self.log.add(f, self.now, "fetch_conn_failed", id=f, leader=dead, host=spec.host, ip=spec.ip, port=spec.port)

    def controlled_shutdown(self, b: int) -> None:
        br = self.brokers[b]
        add = lambda name, **kw: self.log.add(b, self.now, name, **kw)  # noqa: E731
        add("server_shutting_down", id=b)
        self.tick(1, 3)
        add("cs_starting", id=b)
        br.shutting_down = True
        self.fact("controlled_shutdown_started", broker=b)
        self.tick(5, 15)
        self.controller.on_controlled_shutdown(b)
        self.tick(20, 60)
        add("cs_succeeded", id=b)
        self.tick(2, 5)
        add("request_handler_down", id=b)
        self.tick(30, 90)
        add("request_handler_down_done", id=b)
        self.tick(20, 40)
        add("group_coord_down", id=b)
        add("fetcher_manager_down", id=b)
        br.fetcher_leaders = set()
        self.tick(10, 30)
        if self.controller is not None and self.controller.id == b:
            self.controller.resign()
            self.controller = None
        self.tick(10, 30)
        self._zk_client_close(b)
        self.tick(30, 120)
        add("log_manager_down")
        self.tick(2, 6)
        add("server_shut_down", id=b)
        br.alive = False
        br.clean_shutdown = True
        br.alive_since[-1] = (br.alive_since[-1][0], self.now)
        self.fact("broker_stopped", broker=b)

    # --- the controller's requests, on the receiving broker ---------------------------------------
    def on_update_metadata(self, b: int, cid: int, epoch: int, corr: int, n: int) -> None:
        br = self.brokers[b]
        if not br.alive:
            return
        self.log.add(b, self.now, "sb_um", id=b, n=n, cid=cid, epoch=epoch, corr=corr)

    def on_leader_and_isr(self, b: int, cid: int, epoch: int, corr: int, parts: list[Partition]) -> None:
        br = self.brokers[b]
        if not br.alive:
            return
        start = self.now
        add = lambda name, **kw: self.log.add(b, self.now, name, **kw)  # noqa: E731
        add("sb_handling", id=b, corr=corr, cid=cid, n=len(parts))
        lead, follow = [], []
        for p in parts:
            if p.tp in br.local_logs and br.leader_epochs.get(p.tp) == p.leader_epoch:
                self.tick(0, 1)
                add("sb_ignored", id=b, cid=cid, corr=corr, epoch=epoch, tp=p.tp, le=p.leader_epoch)
            elif p.leader == b:
                lead.append(p)
            elif p.leader < 0 or not self.brokers[p.leader].alive:
                self.tick(0, 1)
                add("sb_cannot_follow", id=b, corr=corr, cid=cid, epoch=epoch, tp=p.tp, ce=p.controller_epoch,
                    leader=p.leader)
            else:
                follow.append(p)
        for p in lead + follow:
            self._ensure_log(b, p)
        if lead:
            self.tick(1, 8)
            add("sb_stopped_fetchers_leader", id=b, corr=corr, cid=cid, epoch=epoch, n=len(lead))
            add("fetcher_removed", id=b, parts=_set_of(p.tp for p in lead))
            for p in lead:
                prev = br.leader_epochs.get(p.tp, -1)
                leo = p.leo.get(b, 0)
                self.tick(0, 2)
                add("sb_leader", id=b, tp=p.tp, le=p.leader_epoch, offset=leo, hw=min(p.hw, leo),
                    isr=comma(p.isr), prev=prev)
                br.leader_epochs[p.tp] = br.log_epochs[p.tp] = p.leader_epoch
                if p.topic == "__consumer_offsets":
                    self._coordinator_for(b, p.partition)
        if follow:
            self.tick(1, 8)
            add("sb_stopped_fetchers_follower", id=b, cid=cid, epoch=epoch, corr=corr, n=len(follow))
            add("fetcher_removed", id=b, parts=_set_of(p.tp for p in follow))
            by_leader: dict[int, list[Partition]] = {}
            log_epochs: dict[str, int] = {}
            for p in follow:
                prev = br.leader_epochs.get(p.tp, -1)
                log_epochs[p.tp] = br.log_epochs.get(p.tp, -1)
                leo = p.leo.get(b, 0)
                self.tick(0, 2)
                add("sb_follower", id=b, tp=p.tp, le=p.leader_epoch, offset=leo, hw=min(p.hw, leo), prev=prev)
                br.leader_epochs[p.tp] = p.leader_epoch
                by_leader.setdefault(p.leader, []).append(p)
            for leader, ps in sorted(by_leader.items()):
                for p in ps:
                    self._truncate(b, p, log_epochs[p.tp])
                    br.log_epochs[p.tp] = p.leader_epoch
                lspec = self.brokers[leader].spec
                states = ", ".join(
                    f"{p.tp} -> InitialFetchState(BrokerEndPoint(id={leader}, host={lspec.host}:{lspec.port}),"
                    f"{p.leader_epoch},{p.leo.get(b, 0)})" for p in ps)
                if leader not in br.fetcher_leaders:
                    add("fetcher_thread_start", id=b, leader=leader)
                br.fetcher_leaders.add(leader)
                add("fetcher_added", id=b, leader=leader, states=f"Map({states})" if len(ps) <= 4 else f"HashMap({states})")
                for p in ps:
                    self._schedule_catch_up(b, p)
        self.tick(1, 10)
        add("sb_finished", id=b, ms=max(1, self.now - start), corr=corr, cid=cid, n=len(parts))
        self.refresh_fetchers(b)

    def refresh_fetchers(self, b: int) -> None:
        """The leaders this broker fetches from: those of the partitions it follows."""
        self.brokers[b].fetcher_leaders = {
            p.leader for p in self.partitions.values()
            if b in p.replicas and p.leader not in (b, -1) and p.tp in self.brokers[b].local_logs
        }

    def _ensure_log(self, b: int, p: Partition) -> None:
        br = self.brokers[b]
        if p.tp in br.local_logs:
            return
        br.local_logs.add(p.tp)
        p.leo.setdefault(b, 0)
        unclean = self.topics[p.topic]["config"].get("unclean.leader.election.enable", str(self.cfg.unclean_default).lower())
        add = lambda name, **kw: self.log.add(b, self.now, name, **kw)  # noqa: E731
        self.tick(0, 3)
        add("log_producer_state", tp=p.tp, dir=self.cfg.log_dir, offset=0)
        add("created_log", tp=p.tp, dir=self.cfg.log_dir, unclean=unclean)
        add("no_checkpointed_hw", tp=p.tp, id=b)
        add("partition_log_loaded", tp=p.tp, id=b, hw=0)

    def _truncate(self, b: int, p: Partition, known: int) -> None:
        """A new follower asks the leader where its last epoch ends and truncates a divergent tail (KIP-279)."""
        mine = p.leo.get(b, 0)
        later = [start for epoch, start in p.epoch_start.items() if epoch > known]
        target = min(later) if later else p.leo.get(p.leader, 0)
        if mine > target:
            self.log.add(b, self.now, "truncate", tp=p.tp, dir=self.cfg.log_dir, offset=target)
            self.fact("follower_truncated", broker=b, topic=p.topic, partition=p.partition, from_offset=mine, to_offset=target)
            p.leo[b] = target
        else:
            self.log.add(b, self.now, "truncate_noop", tp=p.tp, dir=self.cfg.log_dir, offset=mine, last=mine - 1)

    def _coordinator_for(self, b: int, part: int) -> None:
        add = lambda name, **kw: self.log.add(b, self.now, name, **kw)  # noqa: E731
        add("group_coordinator_elected", id=b, p=part)
        add("group_loading", id=b, p=part)
        self.tick(0, 2)
        add("group_loaded", id=b, p=part, ms=self.rng.randint(0, 9), wait=0)

    # --- ISR maintenance by the leader (AlterIsr through the controller, IBP 2.8) ---------------
    def _schedule_catch_up(self, follower: int, p: Partition) -> None:
        if follower not in p.isr:
            self.schedule(self.now + CATCH_UP_MS + self.rng.randint(0, 800), self._maybe_expand, follower, p)

    def _maybe_expand(self, follower: int, p: Partition) -> None:
        if p.leader < 0 or follower in p.isr or not self.can_fetch(follower, p.leader):
            return
        if self.controller is None:
            return
        self.controller.alter_isr(p.leader, p, p.isr + [follower])

    def isolate(self, a: int, b: int) -> None:
        """Brokers a and b can no longer exchange data (both still talk to ZooKeeper)."""
        self.brokers[a].unreachable.add(b)
        self.brokers[b].unreachable.add(a)
        self.fact("network_partition", brokers=[a, b])
        for follower, leader in ((a, b), (b, a)):
            if leader in self.brokers[follower].fetcher_leaders:
                self.log.add(follower, self.now + self.rng.randint(500, 1500), "fetch_error", id=follower, leader=leader,
                             session=self.rng.randint(10**8, 2 * 10**9), epoch=self.rng.randint(100, 9000),
                             throwable=T.trace(f"java.io.IOException: Connection to {leader} was disconnected before the "
                                               "response was read", T.FETCH_ERROR_TRACE))
        lag = self.cfg.replica_lag_time_max_ms
        for leader in (a, b):
            br = self.brokers[leader]
            period = lag // ISR_CHECK_FRACTION
            k = (self.now + lag - br.started_ms) // period + 1
            self.schedule(br.started_ms + k * period, self._isr_expiration, leader)

    def _isr_expiration(self, leader: int) -> None:
        """Partition.maybeShrinkIsr on every partition this broker leads."""
        lag = self.cfg.replica_lag_time_max_ms
        for p in sorted(self.partitions.values(), key=lambda x: (x.topic, x.partition)):
            if p.leader != leader or p.state != "OnlinePartition":
                continue
            stale = [r for r in p.isr if r != leader and self.now - p.last_caught_up.get(r, self.now) > lag]
            if not stale or self.controller is None:
                continue
            new_isr = [r for r in p.isr if r not in stale]
            oos = " ".join(f"(brokerId: {r}, endOffset: {p.leo.get(r, 0)})" for r in stale)
            self.log.add(leader, self.now, "isr_shrink", tp=p.tp, id=leader, old=comma(p.isr), new=comma(new_isr),
                         hw=p.hw, leo=p.leo.get(leader, 0), oos=oos)
            self.fact("isr_shrink", broker=leader, topic=p.topic, partition=p.partition, old=list(p.isr), new=new_isr,
                      leader_leo=p.leo.get(leader, 0), stale={r: p.leo.get(r, 0) for r in stale})
            self.controller.alter_isr(leader, p, new_isr)
            self.tick()


def _tp_key(tp: str):
    t, _, p = tp.rpartition("-")
    return t, int(p)


def _set_of(tps) -> str:
    tps = list(tps)
    return f"Set({', '.join(tps)})" if len(tps) <= 4 else f"HashSet({', '.join(tps)})"


def _client_env(host: str) -> list[tuple[str, str]]:
    return [
        ("zookeeper.version", T.ZK_CLIENT_VERSION), ("host.name", host), ("java.version", "11.0.12"),
        ("java.vendor", "Red Hat, Inc."), ("java.home", "/usr/lib/jvm/java-11-openjdk-11.0.12.0.7-0.el7_9.x86_64"),
        ("java.class.path", "/opt/kafka/bin/../libs/activation-1.1.1.jar:/opt/kafka/bin/../libs/kafka_2.13-2.8.0.jar"),
        ("java.library.path", "/usr/java/packages/lib:/usr/lib64:/lib64:/lib:/usr/lib"),
        ("java.io.tmpdir", "/tmp"), ("java.compiler", "<NA>"), ("os.name", "Linux"), ("os.arch", "amd64"),
        ("os.version", "3.10.0-1160.el7.x86_64"), ("user.name", "kafka"), ("user.home", "/home/kafka"),
        ("user.dir", "/opt/kafka"), ("os.memory.free", "981MB"), ("os.memory.max", "6144MB"), ("os.memory.total", "1024MB"),
    ]



def _properties(config: dict[str, str]) -> str:
    """java.util.Properties.toString: ``{a=1, b=2}``."""
    return "{" + ", ".join(f"{k}={v}" for k, v in config.items()) + "}"


def create_topic(cl: Cluster, name: str, partitions: int, rf: int, *, via: int, config: dict[str, str] | None = None,
                 start_index: int | None = None, replica_shift: int | None = None, messages_per_sec: float = 0.0,
                 segment_records: int = 0, rate_jitter: float = 0.3) -> dict:
    """AdminZkClient.createTopic on broker ``via`` (CreateTopics request, or auto-creation), then the controller reacts."""
    from samplegen.kafka.assignment import assign_replicas

    config = dict(config or {})
    brokers = sorted(cl.live_broker_znodes())
    assignment = assign_replicas(partitions, rf, brokers, start_index=start_index, replica_shift=replica_shift, rng=cl.rng)
    topic_id = znodes.uuid_base64(cl.rng)
    cl.topics[name] = {"id": topic_id, "config": config, "assignment": assignment, "segment_records": segment_records}
    for p, reps in assignment.items():
        cl.partitions[(name, p)] = Partition(name, p, list(reps))
    set_traffic(cl, name, messages_per_sec / partitions, jitter=rate_jitter)
    shown = ", ".join(f"{p} -> ArrayBuffer({', '.join(map(str, r))})" for p, r in assignment.items())
    cl.log.add(via, cl.now, "creating_topic", topic=name, config=_properties(config), assignment=f"HashMap({shown})")
    cl.tick(2, 5)
    data = znodes.topic_config(config)
    if cl.zk_set(via, f"/config/topics/{name}", data) == -101:
        cl.zk_create(via, f"/config/topics/{name}", data)
    cl.zk_create(via, f"/brokers/topics/{name}", znodes.topic_assignment(assignment, topic_id))
    cl.fact("topic_created", topic=name, assignment={str(k): v for k, v in assignment.items()}, config=config,
            topic_id=topic_id)
    cl.fire("topic_change", topic=name)
    return assignment


def set_traffic(cl: Cluster, topic: str, per_partition: float, *, jitter: float = 0.0) -> None:
    """Producers write ``per_partition`` messages/s to each partition (times 1 +- jitter, drawn once)."""
    cl.produce()
    for (t, _), p in sorted(cl.partitions.items()):
        if t == topic:
            p.rate = round(per_partition * (1 + cl.rng.uniform(-jitter, jitter)) if jitter else per_partition, 3)
