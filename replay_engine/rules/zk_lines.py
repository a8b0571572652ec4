"""ZooKeeper mode: what a broker's own line tells of a partition, release by release.

A broker states a partition's replicas when it logs a LeaderAndIsr or UpdateMetadata request it received
("received LeaderAndIsr request PartitionState(... replicas=[...])", "cached leader info (...,AllReplicas:...)").
The controller sends the assignment (AR) in order, but until 0.11 the request held the replicas as a *set*:
0.8-0.9 read them into a Scala ``Set`` (``replicas.toSet``), whose Set1..Set4 keep the order they were added in
and whose larger sets do not; 0.10.0-0.10.2 into a Java ``HashSet`` (``new HashSet<>(replicasArray.length)``),
which lists small broker ids in ascending order whatever the assignment. KAFKA-5329 (0.11.0) made it a list.
A line whose order is not the assignment's still tells which brokers hold the partition, not which is preferred
or which an election tries first.
"""
from __future__ import annotations

from replay_engine.rules.rule import Rule

LAI_SCALA = "core/src/main/scala/kafka/api/LeaderAndIsrRequest.scala"
LAI_JAVA = "clients/src/main/java/org/apache/kafka/common/requests/LeaderAndIsrRequest.java"
PARTITION_STATE = "clients/src/main/java/org/apache/kafka/common/requests/PartitionState.java"


def order_kept_up_to_four(count: int) -> bool:
    """Scala's immutable Set1..Set4 iterate in the order their elements were added; five or more make a HashSet."""
    return count <= 4


def order_lost(count: int) -> bool:
    """A Java HashSet of Integer: ascending ids while they are below the table size, never the assignment's order
    (one replica excepted, which has no order to lose)."""
    return count <= 1


def order_kept(count: int) -> bool:
    return True


REPLICAS_ORDER = "zk.line.replicas_order"

RULES = [
    Rule("Scala set: order kept up to four replicas", REPLICAS_ORDER, (0, 8, 0), (0, 10, 0), order_kept_up_to_four,
         ("0.9.0.0", LAI_SCALA, "PartitionStateInfo.readFrom"),
         "`val replicas = for(i <- 0 until replicationFactor) yield buffer.getInt; ... replicas.toSet`, printed as "
         "`AllReplicas:` + `allReplicas.mkString(\",\")`: the assignment's order for up to four replicas (Set1..Set4), "
         "hash order beyond."),
    Rule("Java HashSet: the assignment's order is lost", REPLICAS_ORDER, (0, 10, 0), (0, 11, 0), order_lost,
         ("0.10.2.0", LAI_JAVA, "LeaderAndIsrRequest"),
         "`Set<Integer> replicas = new HashSet<>(replicasArray.length)` on receipt (UpdateMetadataRequest alike), "
         "printed by `PartitionState.toString` and as `AllReplicas:` in the metadata cache: ascending ids, not AR."),
    Rule("a list in the assignment's order (KAFKA-5329)", REPLICAS_ORDER, (0, 11, 0), None, order_kept,
         ("0.11.0.0", PARTITION_STATE, "PartitionState"),
         "`public final List<Integer> replicas`: the broker keeps and prints the replicas as the controller sent "
         "them, the assignment in order."),
]
