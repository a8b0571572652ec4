"""Which broker wrote a line: the log-ident prefix names it in most Kafka classes.

Several brokers often log into one folder (and, with a shared appender, one
file), so attribution is per line. The prefixes below are the log idents of
Kafka's classes across versions (kafka-log-formats.md section 2 and the real
corpus); the id in them is always the local broker / node id, never a peer.
Idents that name a peer (``[ReplicaFetcherThread-0-1]`` names the leader,
``[Controller-3-to-broker-1-send-thread]`` the controller and its target) are
matched only on the part that names the writer.
"""
from __future__ import annotations

import re

# Bracketed idents: "[<name><id>" followed by anything. Longest names first where
# one is a prefix of another ("Controller id=" before "Controller ").
BRACKETED_IDENTS = (
    "Controller id=", "Controller ", "Controller-",
    "Broker id=", "KafkaServer id=", "Kafka Server ", "KafkaRaftServer nodeId=",
    "BrokerServer id=", "ControllerServer id=", "QuorumController id=",
    "BrokerLifecycleManager id=", "ControllerRegistrationManager id=",
    "RaftManager id=", "RaftManager nodeId=", "MetadataLoader id=", "SnapshotEmitter id=",
    "SnapshotGenerator id=", "MetadataCache brokerId=", "StandardAuthorizer ",
    "AclPublisher broker id=", "AclPublisher controller id=", "DynamicConfigPublisher broker id=",
    "BrokerMetadataPublisher id=", "ControllerMetadataMetricsPublisher id=",
    "ReplicaManager broker=", "Replica Manager on Broker ", "ReplicaFetcher replicaId=",
    "ReplicaFetcherManager on broker ", "ReplicaAlterLogDirsManager on broker ",
    "PartitionStateMachine controllerId=", "ReplicaStateMachine controllerId=",
    "ControllerEventThread controllerId=", "ControllerBrokerRequestBatch controllerId=",
    "RequestSendThread controllerId=", "Partition state machine on Controller ",
    "Replica state machine on controller ", "Channel manager on controller ",
    "BrokerChangeListener on Controller ", "TopicChangeListener on Controller ",
    "IsrChangeNotificationListener on Controller ", "AddPartitionsListener on ",
    "DeleteTopicsListener on ", "PreferredReplicaElectionListener on ", "SessionExpirationListener on ",
    "Topic Deletion Manager ", "LogDirFailureHandler id=",
    "GroupCoordinator id=", "GroupCoordinator ", "Group Metadata Manager on Broker ",
    "GroupMetadataManager brokerId=", "TransactionCoordinator id=", "Transaction Marker Channel Manager ",
    "TxnMarkerSenderThread-", "Transaction State Manager ", "Admin Manager on Broker ",
    "KafkaApi-", "SocketServer brokerId=", "ExpirationReaper-", "broker-",
    "BrokerToControllerChannelManager broker=", "NodeToControllerChannelManager id=",
    "data-plane Kafka Request Handler on Broker ", "Kafka Request Handler on Broker ",
)
_WRITER = re.compile(
    r"^(?:"
    r"\[(?:" + "|".join(re.escape(p) for p in BRACKETED_IDENTS) + r")(\d+)"
    r"|\[SocketServer listenerType=\w+, nodeId=(\d+)\]"
    r"|\[Partition \S+ broker=(\d+)\]"
    r"|Partition \[[^\]]*\] on broker (\d+):"
    r"|Controller (\d+) epoch \d+ "
    r"|Broker (\d+) (?!was elected as)"  # 0.8-0.10 elector: "Broker 2 was elected as leader instead of broker 0"
    r")"
)


def writer_id(message: str) -> int | None:
    """The broker id named by the message's log-ident prefix, or None."""
    if not message or message[0] not in "[CBP":
        return None
    m = _WRITER.match(message)
    if m is None:
        return None
    for g in m.groups():
        if g is not None:
            return int(g)
    return None
