"""The bundled KRaft-mode incidents, as short declarative scripts, and the runner that plays one.

Same shape as :mod:`samplegen.scenarios` (a cluster plus timed steps of one UTC day); the
cluster is a :class:`~samplegen.kafka.kraft_cluster.KraftCluster`, whose controller writes a
metadata log instead of ZooKeeper. Kept apart from ``SCENARIOS`` because the ZooKeeper-mode
sample tests read ZooKeeper files every scenario there has.
"""
from __future__ import annotations

from dataclasses import dataclass

from samplegen.kafka.kraft_cluster import KraftCluster
from samplegen.kafka.kraft_world import ControllerSpec, KraftConfig
from samplegen.kafka.state import BrokerSpec
from samplegen.scenarios import Step, _exact, at, day_ms


@dataclass(frozen=True)
class KraftScenario:
    name: str
    day: str
    cluster: KraftConfig
    steps: tuple[Step, ...]
    end: str

    def ms(self, hhmmss: str) -> int:
        return day_ms(self.day, hhmmss)


# A broker dies without a controlled shutdown (kill -9, or the host is lost); the controller fences it when its
# heartbeats stop. RF=1 partitions that only it held go leaderless until it is back; RF=3 ones fail over.
KRAFT_BROKER_FENCED = KraftScenario(
    name="kraft_broker_fenced",
    day="2025-03-12",
    cluster=KraftConfig(
        name="kraft-payments",
        cluster_id="xZ4f0QqYTdKcd3mSGh8w2A",
        brokers=tuple(BrokerSpec(i, f"kafka-broker-{i}", f"10.0.0.{10 + i}") for i in (1, 2, 3)),
        controller=ControllerSpec(3000, "kafka-controller-3000", "10.0.0.30"),
        seed=39,
    ),
    steps=(
        at("09:48:00.000", "start_controller"),
        at("09:48:04.000", "start", broker=1),
        at("09:48:06.000", "start", broker=2),
        at("09:48:08.000", "start", broker=3),
        # kafka-topics.sh --create --replica-assignment: placements fixed by the operator
        at("09:49:00.000", "create_topic", name="payments", messages_per_sec=150,
           assignment=((1,), (2,), (3,), (1,), (2,), (3,))),
        at("09:49:30.000", "create_topic", name="orders", messages_per_sec=400,
           assignment=((1, 2, 3), (2, 3, 1), (3, 1, 2), (1, 3, 2), (2, 1, 3), (3, 2, 1))),
        at("09:58:00.000", "kill9", broker=2),
        at("10:11:00.000", "start", broker=2),
    ),
    end="10:15:00.000",
)

KRAFT_SCENARIOS = {s.name: s for s in (KRAFT_BROKER_FENCED,)}


@dataclass
class KraftPlayed:
    scenario: KraftScenario
    cluster: KraftCluster
    end_ms: int


def play(sc: KraftScenario) -> KraftPlayed:
    cl = KraftCluster(sc.cluster, sc.ms(sc.steps[0].at))

    def run(step: Step) -> None:
        a = dict(step.args)
        if step.action == "start_controller":
            cl.controller.start()
        elif step.action == "start":
            cl.brokers[a["broker"]].start()
        elif step.action == "kill9":
            cl.brokers[a["broker"]].kill9()
        elif step.action == "create_topic":
            cl.create_topic(a["name"], [list(r) for r in a["assignment"]], a["messages_per_sec"])
        else:
            raise ValueError(f"unknown step {step.action}")

    for step in sc.steps:
        t = sc.ms(step.at)
        cl.schedule(t, _exact(cl, t, run), step)
    end = sc.ms(sc.end)
    cl.run_until(end)
    return KraftPlayed(sc, cl, end)
