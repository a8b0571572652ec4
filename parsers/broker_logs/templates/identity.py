"""Which cluster a broker or controller belongs to, in its own words: the cluster id it logs while it starts.

- ZooKeeper mode, 0.10.1+: ``Cluster ID = X`` (``kafka.server.KafkaServer``), logged in ``KafkaServer.startup``
  right after ``getOrGenerateClusterId`` read (or created) the ``/cluster/id`` znode (0.10.1.0 and every later
  tag, ``core/src/main/scala/kafka/server/KafkaServer.scala``).
- KRaft controller, 3.3+: ``Creating new QuorumController with clusterId X, authorizer A.`` (3.3-3.6) and
  ``Creating new QuorumController with clusterId X.`` (3.7+), in the ``QuorumController`` constructor (3.5.0 /
  3.7.0 ``metadata/src/main/java/org/apache/kafka/controller/QuorumController.java``).
- KRaft broker, 2.8+: ``Incarnation I of broker N in cluster X is now STARTING.`` (``BrokerLifecycleManager.start``,
  2.8.0 ``core/src/main/scala/kafka/server/BrokerLifecycleManager.scala``).

The ZooKeeper chroot a ZooKeeper-mode broker uses is read from its configuration dump (``broker.py``).
"""
from __future__ import annotations

import re

from parsers.broker_logs.rules import Rule
from parsers.schema import Event

# A cluster id is Uuid.randomUuid's base64 (22 characters) unless the operator chose one (kafka-storage.sh format -t):
# any run of characters but blanks and the punctuation that closes the message.
_ID = r"(?P<cid>[^\s,]+?)"


def _identity(via: str):
    def build(entry, m):
        d = m.groupdict()
        node = d.get("node")
        detail = {"cluster_id": d["cid"], "via": via}
        if d.get("inc"):
            detail["incarnation_id"] = d["inc"]
        return Event("cluster_identity", subject_broker=int(node) if node is not None else None, detail=detail)
    return build


RULES = [
    Rule("identity.kafka_server", ("kafka.server.KafkaServer",), ("Cluster ID = ",),
         re.compile(r"^(?:\[(?:Kafka Server |KafkaServer id=)(?P<node>\d+)\],? )?Cluster ID = " + _ID + r"\s*$"),
         _identity("kafka_server")),
    Rule("identity.quorum_controller", ("org.apache.kafka.controller.QuorumController",),
         ("Creating new QuorumController with clusterId ",),
         re.compile(r"^\[(?:QuorumController id=|Controller )(?P<node>\d+)\] Creating new QuorumController with "
                    r"clusterId " + _ID + r"(?:,|\.(?: |$)|$)"),
         _identity("quorum_controller")),
    Rule("identity.broker_lifecycle", ("kafka.server.BrokerLifecycleManager",), ("in cluster ", "is now STARTING"),
         re.compile(r"^(?:\[BrokerLifecycleManager id=\d+\] )?Incarnation (?P<inc>\S+) of broker (?P<node>\d+) in "
                    r"cluster " + _ID + r" is now STARTING\.?$"),
         _identity("broker_lifecycle")),
]
