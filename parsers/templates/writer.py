"""Which broker wrote a line: the log-ident prefix names it in most Kafka classes."""
from __future__ import annotations

import re

# Prefixes by version (reference: kafka-log-formats.md section 2). Anchored at the
# message start; the id is the only group.
_WRITER = re.compile(
    r"^(?:"
    r"\[(?:Controller id=|Controller |Broker id=|KafkaServer id=|Kafka Server |ReplicaManager broker="
    r"|Replica Manager on Broker |PartitionStateMachine controllerId=|ReplicaStateMachine controllerId="
    r"|ControllerEventThread controllerId=|Partition state machine on Controller |Replica state machine on controller "
    r"|Channel manager on controller |RequestSendThread controllerId=|QuorumController id=|BrokerServer id="
    r"|BrokerLifecycleManager id=|ControllerServer id=|KafkaRaftServer nodeId=|RaftManager id=|RaftManager nodeId="
    r"|BrokerChangeListener on Controller |TopicChangeListener on Controller |Topic Deletion Manager "
    r"|SessionExpirationListener on |ControllerBrokerRequestBatch controllerId=|Controller-|LogDirFailureHandler id="
    r"|BrokerToControllerChannelManager id=|broker-|ReplicaAlterLogDirsManager on broker |GroupCoordinator |TransactionCoordinator id="
    r")(\d+)"
    r"|\[Partition \S+ broker=(\d+)\]"
    r"|Partition \[[^\]]*\] on broker (\d+):"
    r"|Controller (\d+) epoch \d+ "
    r"|Broker (\d+) "
    r")"
)


def writer_id(message: str) -> int | None:
    if not message or message[0] not in "[CBP":
        return None
    m = _WRITER.match(message)
    if m is None:
        return None
    for g in m.groups():
        if g is not None:
            return int(g)
    return None
