"""The bundled incidents, as short declarative scripts, and the runner that plays one on a :class:`Cluster`.

A scenario is a cluster definition plus timed steps (UTC wall-clock times of
one day). Everything else (controller reactions, ZooKeeper writes, routine
lines, timers) follows from the simulator's rules, so each sample's expected
findings can be derived by hand from the steps and those rules (see the
sample's README.md).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from samplegen.kafka.cluster import Cluster, create_topic, set_traffic
from samplegen.kafka.state import BrokerSpec, ClusterConfig


@dataclass(frozen=True)
class Step:
    at: str  # "HH:MM:SS.mmm" on the scenario's day, UTC
    action: str
    args: dict = field(default_factory=dict)


def at(time: str, action: str, **args) -> Step:
    return Step(time, action, args)


@dataclass(frozen=True)
class ClientApp:
    kind: str  # "java" or "sarama" (leaderless outages), "java_acks_all" / "sarama_acks_all" (ISR too small)
    file: str
    topic: str
    partitions: tuple[int, ...]  # the partitions its keys land on


@dataclass(frozen=True)
class Scenario:
    name: str
    day: str
    cluster: ClusterConfig
    steps: tuple[Step, ...]
    end: str
    clients: tuple[ClientApp, ...] = ()

    def ms(self, hhmmss: str) -> int:
        return day_ms(self.day, hhmmss)


def day_ms(day: str, hhmmss: str) -> int:
    """Epoch milliseconds of ``HH:MM:SS.mmm`` on ``day`` (UTC)."""
    h, m, rest = hhmmss.split(":")
    s, _, frac = rest.partition(".")
    d = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
    base = int(d.timestamp()) * 1000
    return base + ((int(h) * 60 + int(m)) * 60 + int(s)) * 1000 + int((frac or "0").ljust(3, "0")[:3])


def _brokers(n: int = 3) -> tuple[BrokerSpec, ...]:
    return tuple(BrokerSpec(i, f"kafka-broker-{i}", f"10.0.0.{10 + i}") for i in range(1, n + 1))


OFFSETS = dict(name="__consumer_offsets", partitions=50, rf=3, messages_per_sec=40,
               config={"compression.type": "producer", "cleanup.policy": "compact", "segment.bytes": "104857600"})

# Seed article 003: a log cluster shrunk by killing a broker; an RF=1 topic loses the leaders on it.
RF1_BROKER_KILL = Scenario(
    name="rf1_broker_kill",
    day="2021-08-16",
    cluster=ClusterConfig(name="kafka_cluster_01", brokers=_brokers(), cluster_id="qT9ykP2ZR0ie1hXh3bG8Yw",
                          chroot="/kafka_cluster_01", seed=3),
    steps=(
        at("09:00:05.000", "start", broker=2),
        at("09:00:09.000", "start", broker=3),
        at("09:00:13.000", "start", broker=1),
        at("09:05:00.000", "create_topic", via=3, **OFFSETS),
        at("09:15:02.000", "create_topic", via=2, name="dw_test_kafka_0816000", partitions=300, rf=1, start_index=1,
           replica_shift=0, messages_per_sec=30_000, segment_records=300_000),
        at("10:32:05.000", "kill9", broker=1),
        at("10:50:12.000", "zkcli", path="/brokers/topics/dw_test_kafka_0816000/partitions/101/state",
           file="zkcli/get_partition_101_state.txt"),
        at("11:12:30.000", "start", broker=1),
    ),
    end="11:40:00.000",
    clients=(
        ClientApp("java", "clients/java-producer.log", "dw_test_kafka_0816000", (18, 101, 145, 200)),
        ClientApp("sarama", "clients/go-sarama-producer.log", "dw_test_kafka_0816000", (29, 60, 101, 217)),
    ),
)

# A planned restart of the controller broker: controlled shutdown, a clean re-election, no leaderless partition.
CONTROLLER_FAILOVER = Scenario(
    name="controller_failover",
    day="2021-09-07",
    cluster=ClusterConfig(name="kafka-prod-eu", brokers=_brokers(), cluster_id="Vd3rA0qBSJ6m4X1nTfKw2g", seed=11),
    steps=(
        at("14:00:05.000", "start", broker=1),
        at("14:00:09.000", "start", broker=2),
        at("14:00:13.000", "start", broker=3),
        at("14:02:00.000", "create_topic", via=2, **OFFSETS),
        at("14:03:00.000", "create_topic", via=1, name="orders", partitions=12, rf=3, start_index=0, replica_shift=0,
           messages_per_sec=2_400, segment_records=200_000),
        at("14:03:30.000", "create_topic", via=1, name="payments", partitions=6, rf=3, start_index=1, replica_shift=1,
           messages_per_sec=600, segment_records=200_000),
        at("15:10:00.000", "controlled_shutdown", broker=1),
        at("15:12:30.000", "start", broker=1),
    ),
    end="15:40:00.000",
)

# ISR shrinks to the leader alone, the leader dies, unclean election on one topic loses data; the other waits.
UNCLEAN_ELECTION = Scenario(
    name="unclean_election",
    day="2021-10-21",
    cluster=ClusterConfig(name="kafka-events", brokers=_brokers(), cluster_id="Hn8cW2sLTfO0yq5ZpR7u3A", seed=21),
    steps=(
        at("14:00:05.000", "start", broker=3),
        at("14:00:09.000", "start", broker=1),
        at("14:00:13.000", "start", broker=2),
        at("14:02:00.000", "create_topic", via=3, **OFFSETS),
        at("14:03:00.000", "create_topic", via=3, name="clickstream", partitions=6, rf=2, start_index=0, replica_shift=0,
           config={"unclean.leader.election.enable": "true"}),
        at("14:03:30.000", "create_topic", via=3, name="ledger", partitions=6, rf=2, start_index=0, replica_shift=0),
        at("14:05:00.000", "traffic", topic="clickstream", per_partition=20),
        at("14:05:00.000", "traffic", topic="ledger", per_partition=5),
        at("14:30:00.000", "isolate", a=1, b=2),
        at("14:41:07.000", "kill9", broker=1),
        at("15:02:40.000", "heal", a=1, b=2),
        at("15:02:40.000", "start", broker=1),
    ),
    end="15:20:00.000",
)

# Two of three brokers lost one after the other: every partition keeps a leader, but the ISR falls to one
# replica, below the topic's min.insync.replicas=2, and acks=all producers are refused until a broker is back.
UNDER_MIN_ISR = Scenario(
    name="under_min_isr",
    day="2021-11-03",
    cluster=ClusterConfig(name="kafka-payments", brokers=_brokers(), cluster_id="Pz4mQ8vXTu2bW6nLc0Ka1w", seed=31),
    steps=(
        at("10:00:05.000", "start", broker=1),
        at("10:00:09.000", "start", broker=2),
        at("10:00:13.000", "start", broker=3),
        at("10:02:00.000", "create_topic", via=1, **OFFSETS),
        at("10:03:00.000", "create_topic", via=1, name="payments", partitions=6, rf=3, start_index=0, replica_shift=0,
           config={"min.insync.replicas": "2"}),
        at("10:05:00.000", "traffic", topic="payments", per_partition=50),
        at("10:20:00.000", "kill9", broker=2),
        at("10:25:00.000", "kill9", broker=3),
        at("10:40:00.000", "start", broker=2),
        at("10:45:00.000", "start", broker=3),
    ),
    end="11:00:00.000",
    clients=(
        ClientApp("java_acks_all", "clients/java-payments-producer.log", "payments", (0, 2, 3)),
        ClientApp("sarama_acks_all", "clients/go-ledger-producer.log", "payments", (1, 4)),
    ),
)

# A crashed broker's restarts are refused: its regenerated server.properties points zookeeper.connect at the
# staging ensemble, whose cluster id is not the one in meta.properties (InconsistentClusterIdException).
_STAGING = dict(connect="zk-staging-1:2181,zk-staging-2:2181,zk-staging-3:2181", zk_server="zk-staging-1/10.0.9.21:2181",
                found_cluster_id="sTg8Qe1UR2aWv5xHk3Lm0n")
RESTART_REFUSED = Scenario(
    name="restart_refused",
    day="2021-12-09",
    cluster=ClusterConfig(name="kafka-metrics", brokers=_brokers(), cluster_id="Mx2LrT7kQWa9cV4bN1sZ0e", seed=41),
    steps=(
        at("09:00:05.000", "start", broker=1),
        at("09:00:09.000", "start", broker=2),
        at("09:00:13.000", "start", broker=3),
        at("09:02:00.000", "create_topic", via=1, **OFFSETS),
        at("09:03:00.000", "create_topic", via=1, name="host-metrics", partitions=6, rf=1, start_index=0,
           replica_shift=0),
        at("09:05:00.000", "traffic", topic="host-metrics", per_partition=200),
        at("09:30:00.000", "kill9", broker=3),
        at("09:41:07.000", "start_refused", broker=3, **_STAGING),
        at("09:43:30.000", "start_refused", broker=3, **_STAGING),
        at("09:52:00.000", "start", broker=3),
    ),
    end="10:10:00.000",
)

SCENARIOS = {s.name: s for s in (RF1_BROKER_KILL, CONTROLLER_FAILOVER, UNCLEAN_ELECTION, UNDER_MIN_ISR,
                                 RESTART_REFUSED)}


@dataclass
class Played:
    scenario: Scenario
    cluster: Cluster
    captures: dict[str, str]  # file -> zkCli transcript
    end_ms: int


def play(sc: Scenario) -> Played:
    from samplegen.writers.zkcli import get_s

    start = sc.ms(sc.steps[0].at)
    cl = Cluster(sc.cluster, start)
    captures: dict[str, str] = {}

    def run(step: Step) -> None:
        a = dict(step.args)
        if step.action == "start":
            cl.start_broker(a["broker"])
        elif step.action == "kill9":
            cl.kill9(a["broker"])
        elif step.action == "start_refused":
            cl.start_refused(a["broker"], a["connect"], a["zk_server"], a["found_cluster_id"])
        elif step.action == "controlled_shutdown":
            cl.controlled_shutdown(a["broker"])
        elif step.action == "create_topic":
            via = a.pop("via")
            name, partitions, rf = a.pop("name"), a.pop("partitions"), a.pop("rf")
            create_topic(cl, name, partitions, rf, via=via, **a)
        elif step.action == "traffic":
            set_traffic(cl, a["topic"], a["per_partition"])
        elif step.action == "isolate":
            cl.isolate(a["a"], a["b"])
        elif step.action == "heal":
            cl.brokers[a["a"]].unreachable.discard(a["b"])
            cl.brokers[a["b"]].unreachable.discard(a["a"])
        elif step.action == "zkcli":
            path = cl.p(a["path"])
            captures[a["file"]] = get_s(path, cl.zk.get(path))
            cl.fact("zkcli_get", path=path)
        else:
            raise ValueError(f"unknown step {step.action}")

    for step in sc.steps:
        t = sc.ms(step.at)
        cl.schedule(t, _exact(cl, t, run), step)
    end = sc.ms(sc.end)
    cl.run_until(end)
    return Played(sc, cl, captures, end)


def _exact(cl: Cluster, t: int, fn):
    """Scenario steps happen at their stated instant: the simulation must not have run past it."""

    def go(step: Step) -> None:
        if cl.now > t:
            raise RuntimeError(f"step {step.action} at {step.at} would start {cl.now - t} ms late: move it")
        cl.now = t
        fn(step)

    return go
