"""The simulator's nouns: cluster settings, brokers, partitions."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BrokerSpec:
    id: int
    host: str
    ip: str
    port: int = 9092


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    brokers: tuple[BrokerSpec, ...]
    cluster_id: str
    zk_servers: tuple[tuple[str, str], ...] = (("zk1", "10.0.1.1"), ("zk2", "10.0.1.2"), ("zk3", "10.0.1.3"))
    chroot: str = ""  # e.g. "/kafka_cluster_01" (zookeeper.connect=...:2181/kafka_cluster_01)
    zk_epoch: int = 1  # ZooKeeper leader epoch: the high 32 bits of every zxid
    session_timeout_ms: int = 18000  # zookeeper.session.timeout.ms (2.5+ default)
    replica_lag_time_max_ms: int = 30000  # replica.lag.time.max.ms (2.5+ default)
    unclean_default: bool = False  # unclean.leader.election.enable (0.11+ default)
    log_dir: str = "/var/lib/kafka/data"
    seed: int = 1

    def broker(self, bid: int) -> BrokerSpec:
        return next(b for b in self.brokers if b.id == bid)

    @property
    def zk_connect(self) -> str:
        return ",".join(f"{h}:2181" for h, _ in self.zk_servers) + self.chroot


@dataclass
class Partition:
    topic: str
    partition: int
    replicas: list[int]
    rate: float = 0.0  # messages per second produced to it
    leader: int = -1
    isr: list[int] = field(default_factory=list)
    leader_epoch: int = 0
    controller_epoch: int = 0
    zk_version: int = 0
    state: str = "NonExistentPartition"
    leo: dict[int, int] = field(default_factory=dict)  # log end offset per replica
    hw: int = 0
    last_caught_up: dict[int, int] = field(default_factory=dict)  # follower -> ms
    epoch_start: dict[int, int] = field(default_factory=dict)  # leader epoch -> first offset (leader epoch cache)

    @property
    def tp(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass
class BrokerRt:
    """A broker process as the simulator runs it."""

    spec: BrokerSpec
    alive: bool = False
    session: object = None  # samplegen.zk.server.Session
    epoch: int | None = None  # czxid of /brokers/ids/N
    started_ms: int = 0
    starts: int = 0
    clean_shutdown: bool = False
    shutting_down: bool = False
    leader_epochs: dict[str, int] = field(default_factory=dict)  # in memory: what this process last applied
    log_epochs: dict[str, int] = field(default_factory=dict)  # on disk (leader-epoch-checkpoint): survives restarts
    local_logs: set[str] = field(default_factory=set)
    fetcher_leaders: set[int] = field(default_factory=set)
    unreachable: set[int] = field(default_factory=set)  # brokers it cannot exchange data with
    alive_since: list[tuple[int, int | None]] = field(default_factory=list)
    env_logged: int = 0  # the start whose ZooKeeper client printed its environment

    @property
    def id(self) -> int:
        return self.spec.id
