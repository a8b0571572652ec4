"""A KRaft-mode cluster (Kafka 3.9): a clock, an event queue, one controller node, brokers, traffic.

The KRaft counterpart of :mod:`samplegen.kafka.cluster`: the quorum controller
(:mod:`samplegen.kafka.quorum`) writes the metadata log instead of ZooKeeper; brokers
(:mod:`samplegen.kafka.kraft_broker`) apply what it writes. Timers and scenario steps sit in
one queue, run in time order from a seeded RNG, so a run is deterministic.
"""
from __future__ import annotations

import random

from samplegen.kafka import templates39 as T
from samplegen.kafka.event_queue import EventQueue
from samplegen.kafka.kraft_broker import KraftBroker
from samplegen.kafka.logsink import LogSink
from samplegen.kafka.metadata_log import MetadataLog
from samplegen.kafka.kraft_world import KraftConfig
from samplegen.kafka.quorum import QuorumController
from samplegen.kafka.znodes import uuid_base64

TP = tuple[str, int]
TRAFFIC_AFTER_MS = 1000  # producers start writing to a new topic once its leaders are known


def new_uuid(rng: random.Random) -> str:
    """Uuid.randomUuid as printed; Kafka redraws ids starting with '-' (they read as CLI options)."""
    while True:
        u = uuid_base64(rng)
        if not u.startswith("-"):
            return u


class KraftCluster(EventQueue):
    def __init__(self, cfg: KraftConfig, start_ms: int):
        super().__init__(start_ms)
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)
        self.log = LogSink()
        self.metadata = MetadataLog()
        self.facts: list[dict] = []
        self.controller_dir = new_uuid(self.rng)
        self.controller_incarnation = new_uuid(self.rng)
        self.controller = QuorumController(self)
        self.brokers = {b.id: KraftBroker(self, b, new_uuid(self.rng)) for b in cfg.brokers}
        self.rates: dict[TP, int] = {}  # messages per second produced to each partition
        self.leo: dict[TP, dict[int, int]] = {}  # log end offset per replica
        self._carry: dict[TP, int] = {}
        self._produced_at = start_ms

    # --- ids (time and the event queue: samplegen.kafka.event_queue) ----------------------------
    def new_id(self) -> str:
        return new_uuid(self.rng)

    def fact(self, kind: str, **kw) -> None:
        self.facts.append({"kind": kind, "ms": self.now, **kw})

    def line(self, node: int, when: int, name: str, /, throwable=(), **fields) -> None:
        self.log.add(node, when, T.TEMPLATES[name], throwable=throwable, **fields)

    # --- what the controller wrote reaches the brokers --------------------------------------------
    def publish(self, changes) -> None:
        regs = [ch.after for ch in changes]
        for b in sorted(self.brokers):
            br = self.brokers[b]
            if br.alive:
                self.schedule(self.now + self.rng.randint(3, 12), br.apply, regs, br.starts)

    # --- topics and traffic ------------------------------------------------------------------------
    def create_topic(self, name: str, assignment: list[list[int]], messages_per_sec: int) -> str:
        topic_id = new_uuid(self.rng)
        for p, replicas in enumerate(assignment):
            self.leo[(name, p)] = {r: 0 for r in replicas}
        self.controller.create_topic(name, topic_id, assignment)
        self.schedule(self.now + TRAFFIC_AFTER_MS, self._start_traffic, name, len(assignment), messages_per_sec)
        return topic_id

    def _start_traffic(self, name: str, partitions: int, messages_per_sec: int) -> None:
        for p in range(partitions):
            self.rates[(name, p)] = messages_per_sec

    def produce(self) -> None:
        """Advance log end offsets to ``now``: a live leader appends, live ISR followers keep up."""
        dt = self.now - self._produced_at
        if dt <= 0:
            return
        self._produced_at = self.now
        for key, rate in self.rates.items():
            reg = self.controller.parts.get(key)
            if reg is None or reg.leader < 0 or not self.brokers[reg.leader].alive:
                continue
            # Exact integer arithmetic: offsets in the logs can be checked by hand.
            n, self._carry[key] = divmod(self._carry.get(key, 0) + rate * dt, 1000)
            leo = self.leo[key]
            leo[reg.leader] += n
            for r in reg.isr:
                if r != reg.leader and self.brokers[r].alive:
                    leo[r] = leo[reg.leader]
