"""What the parts of the KRaft simulation (the quorum controller, the brokers) use of the cluster they run in, and
its configuration: ``KraftWorld`` names the cluster's type for them, so that they do not import the cluster that
builds them (samplegen.kafka.kraft_cluster)."""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

from samplegen.kafka.state import BrokerSpec

if TYPE_CHECKING:
    from samplegen.kafka.metadata_log import MetadataLog

TP = tuple[str, int]


@dataclass(frozen=True)
class ControllerSpec:
    id: int
    host: str
    ip: str
    port: int = 9093


@dataclass(frozen=True)
class KraftConfig:
    name: str
    cluster_id: str
    brokers: tuple[BrokerSpec, ...]
    controller: ControllerSpec
    session_timeout_ms: int = 9000  # broker.session.timeout.ms (default)
    heartbeat_ms: int = 2000  # broker.heartbeat.interval.ms (default)
    noop_interval_ms: int = 500  # metadata.max.idle.interval.ms (default)
    imbalance_check_ms: int = 300_000  # leader.imbalance.check.interval.seconds = 300 (default)
    log_dir: str = "/var/lib/kafka/data"
    metadata_dir: str = "/var/lib/kafka/meta"
    seed: int = 1

    def broker(self, bid: int) -> BrokerSpec:
        return next(b for b in self.brokers if b.id == bid)

    @property
    def bootstrap_source(self) -> str:
        # kafka-storage.sh format writes the bootstrap records beside the metadata log
        return f"the binary bootstrap metadata file: {self.metadata_dir}/bootstrap.checkpoint"


class KraftWorld(Protocol):
    cfg: KraftConfig
    now: int
    rng: random.Random
    metadata: MetadataLog
    controller: Any  # samplegen.kafka.quorum.QuorumController
    controller_dir: str
    controller_incarnation: str
    brokers: dict[int, Any]  # samplegen.kafka.kraft_broker.KraftBroker by id
    leo: dict[TP, dict[int, int]]  # log end offset per replica

    def schedule(self, ms: int, fn: Callable, *args) -> None: ...

    def fact(self, kind: str, **kw) -> None: ...

    def line(self, node: int, when: int, name: str, /, throwable=(), **fields: Any) -> None: ...

    def new_id(self) -> str: ...

    def publish(self, changes) -> None: ...
