"""Writer attribution: the log ident of every version names the broker that wrote the line."""
import pytest

from parsers.broker_logs.templates.writer import writer_id
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source


@pytest.mark.parametrize("message, writer", [
    ("[Kafka Server 1], starting", 1),                                            # 0.8-0.11 KafkaServer
    ("[KafkaServer id=2] started", 2),                                            # 1.0+ KafkaServer
    ("[Controller 3]: Broker 3 starting become controller state transition", 3),  # 0.8-0.11 KafkaController
    ("[Controller id=4] Resigned", 4),                                            # 1.0+ KafkaController
    ("[Controller id=5 epoch=7] Changed partition t-0 from A to B", 5),           # 1.0+ state.change controller side
    ("Controller 6 epoch 3 changed partition [t,0] from A to B", 6),              # 0.8-0.11 state.change controller side
    ("Broker 7 received LeaderAndIsr request", 7),                                # 0.8-0.11 state.change broker side
    ("[Broker id=8] Handling LeaderAndIsr request", 8),                           # 1.0+ state.change broker side
    ("[ReplicaManager broker=9] Shutting down", 9),
    ("[Replica Manager on Broker 10]: Shut down", 10),
    ("Partition [t,0] on broker 11: Shrinking ISR for partition [t,0] from 11,2 to 11", 11),
    ("[Partition t-0 broker=12] Expanding ISR from 12 to 12,3", 12),
    ("[QuorumController id=3000] Becoming the active controller at epoch 1", 3000),
    ("[Controller 3001] Fencing broker 1 because its session has timed out.", 3001),  # KRaft 3.3/3.4 prefix
    ("[BrokerServer id=13] Starting broker", 13),
    ("[BrokerLifecycleManager id=14] Beginning controlled shutdown.", 14),
    ("[RaftManager id=15] Completed transition to Leader(", 15),
    ("[RaftManager nodeId=16] Completed transition to Leader(", 16),
    ("[KafkaRaftServer nodeId=17] Kafka Server started", 17),
    ("[ControllerServer id=18] shutting down", 18),
    ("[SessionExpirationListener on 19], ZK expired", 19),
    ("[BrokerChangeListener on Controller 20]: Newly added brokers: 1", 20),
    ("[Partition state machine on Controller 21]: Started partition state machine", 21),
    ("[PartitionStateMachine controllerId=22] Started partition state machine", 22),
    ("[Controller-23-to-broker-1-send-thread], Shutting down", 23),
    ("[RequestSendThread controllerId=24] Starting", 24),
    ("[ReplicaFetcher replicaId=25, leaderId=2, fetcherId=0] Starting", 25),
    ("[ReplicaFetcherManager on broker 26] Removed fetcher for partitions", 26),
    ("[GroupCoordinator 27]: Preparing to rebalance", 27),
    ("[GroupCoordinator id=28] Loading", 28),
    ("[TransactionCoordinator id=29] Starting up.", 29),
    ("[SocketServer listenerType=ZK_BROKER, nodeId=30] Started socket server acceptors", 30),
    ("[Topic Deletion Manager 31], Deletion of topic t successfully completed", 31),
    ("[MetadataLoader id=32] initializing", 32),
    ("[ExpirationReaper-33-Produce]: Starting", 33),
])
def test_writer_named_by_ident(message, writer):
    assert writer_id(message) == writer


@pytest.mark.parametrize("message", [
    "[ReplicaFetcherThread-0-1], Error for partition [t,0] to broker 1",  # names the leader, not the writer
    "[ZooKeeperClient Kafka server] Session expired.",
    "New leader is 3",
    "starting",
    "Registered broker 4 at path /brokers/ids/4 with addresses: PLAINTEXT://h:9092",
    "[OfflinePartitionLeaderSelector]: Selected new leader and ISR",
    "Broker 2 was elected as leader instead of broker 0",  # 0.8-0.10 elector: written by broker 0
])
def test_lines_naming_no_writer(message):
    assert writer_id(message) is None


def test_interleaved_brokers_in_one_file_are_attributed_per_line():
    text = ("[2021-04-26 16:12:41,785] INFO [KafkaServer id=0] started (kafka.server.KafkaServer)\n"
            "[2021-04-26 16:12:42,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"
            "[2021-04-26 16:12:43,000] INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,0 (kafka.cluster.Partition)\n"
            "[2021-04-26 16:12:44,000] INFO Registered broker 0 at path /brokers/ids/0 with addresses: "
            "PLAINTEXT://h:9092, czxid (broker epoch): 168 (kafka.zk.KafkaZkClient)\n")
    events, summary = parse_source(text.encode(), SourceContext(path="logs/server.log"))
    assert [(e.event_type, e.broker_id) for e in events] == [
        ("broker_startup", 0), ("broker_startup", 1), ("isr_expand", 1), ("broker_registered", None)]
    assert events[3].subject_broker == 0  # the line names its subject even though its writer is unknown
    assert summary.broker_id is None and dict(summary.writer_ids) == {0: 1, 1: 2}
