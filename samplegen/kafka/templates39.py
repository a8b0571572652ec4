"""The log lines of Kafka 3.9.0 in KRaft mode, as message templates (the KRaft sample's grammar).

Same :class:`~samplegen.kafka.templates28.Template` as the 2.8 table, but 3.9's default
``log4j.properties`` routes ``org.apache.kafka.controller.*`` (the QuorumController and its
managers) to controller.log, which 2.8 did not have.

``evidence``, as in ``templates28``: ``"real"`` = a line of this shape (same level, logger and
words) is in the real Kafka 3.9.0 KRaft logs under ``shared/real_logs/BetrajJ__kafka-kraft``;
``"real:<dir>"`` = in another folder's real logs with unchanged text; ``"source"`` = only in
Kafka's source at hand (checked by ``tests/test_samplegen_kraft.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

from samplegen.kafka.templates28 import Template

VERSION = "3.9.0"
COMMIT_ID = "a60e31147e6b01ee"  # as the real 3.9.0 logs print it
METADATA_VERSION = "3.9-IV0"
METADATA_LEVEL = 21  # MetadataVersion.IBP_3_9_IV0.featureLevel()
REAL_39 = "BetrajJ__kafka-kraft"


@dataclass(frozen=True)
class KraftTemplate(Template):
    @property
    def file(self) -> str:
        if self.logger == "state.change.logger":
            return "state-change"
        if self.logger.startswith("org.apache.kafka.controller."):
            return "controller"
        return "server"


TEMPLATES: dict[str, KraftTemplate] = {}


def _t(name: str, level: str, logger: str, text: str, evidence: str = "real") -> None:
    assert name not in TEMPLATES, name
    TEMPLATES[name] = KraftTemplate(name, level, logger, text, evidence)


QC = "org.apache.kafka.controller.QuorumController"
RCM = "org.apache.kafka.controller.ReplicationControlManager"
CCM = "org.apache.kafka.controller.ClusterControlManager"
OCM = "org.apache.kafka.controller.OffsetControlManager"
BHM = "org.apache.kafka.controller.BrokerHeartbeatManager"
BLM = "kafka.server.BrokerLifecycleManager"
BS = "kafka.server.BrokerServer"
SC = "state.change.logger"
LM = "kafka.log.LogManager"
APP = "org.apache.kafka.common.utils.AppInfoParser"
RAFT_STATE = "org.apache.kafka.raft.QuorumState"
_Q = "[QuorumController id={cid}] "

# --- every node's JVM start-up (server.log) --------------------------------------------------------
_t("log4j_mbean", "INFO", "kafka.utils.Log4jControllerRegistration$", "Registered kafka:type=kafka.Log4jController MBean")
_t("signal_handlers", "INFO", "org.apache.kafka.common.utils.LoggingSignalHandler", "Registered signal handlers for TERM, INT, HUP")
_t("kafka_version", "INFO", APP, "Kafka version: {version}")
_t("kafka_commit", "INFO", APP, "Kafka commitId: {commit}")
_t("kafka_start_time", "INFO", APP, "Kafka startTimeMs: {ms}")
_t("server_started", "INFO", "kafka.server.KafkaRaftServer", "[KafkaRaftServer nodeId={id}] Kafka Server started")

# --- the controller node: Raft and the QuorumController --------------------------------------------
_t("controller_starting", "INFO", "kafka.server.ControllerServer", "[ControllerServer id={id}] Starting controller")
_t("raft_candidate", "INFO", RAFT_STATE,
   "[RaftManager id={id}] Completed transition to CandidateState(localId={id}, localDirectoryId={dir},epoch={epoch}, "
   "retries=1, voteStates={votes}, highWatermark={hw}, electionTimeoutMs={timeout}) from {previous}")
_t("raft_leader", "INFO", RAFT_STATE,
   "[RaftManager id={id}] Completed transition to Leader(localReplicaKey=ReplicaKey(id={id}, directoryId=Optional[{dir}]), "
   "epoch={epoch}, epochStartOffset={offset}, highWatermark=Optional.empty, voterStates={voters}) from {previous}")
_t("qc_creating", "INFO", QC, _Q + "Creating new QuorumController with clusterId {cluster_id}.")
_t("qc_active", "INFO", QC, _Q + "Becoming the active controller at epoch {epoch}, next write offset {offset}.")
# 3.6-3.9 ActivationRecordsGenerator on an empty log (4.0's real line is the same without the ZK sentence).
_t("qc_activation_empty", "WARN", QC,
   _Q + "Performing controller activation. The metadata log appears to be empty. Appending {n} bootstrap record(s) "
   "in metadata transaction at metadata.version {mv} from bootstrap source '{source}'. Setting the ZK migration "
   "state to NONE since this is a de-novo KRaft cluster.", evidence="source")
_t("replayed_begin_txn", "INFO", OCM, _Q + "Replayed BeginTransactionRecord(name='Bootstrap records') at offset {offset}.",
   evidence="real:Ammar777782439__kafka_2.13-4.0.0")
_t("replayed_end_txn", "INFO", OCM, _Q + "Replayed EndTransactionRecord() at offset {offset}.",
   evidence="real:Ammar777782439__kafka_2.13-4.0.0")
_t("replayed_feature", "INFO", "org.apache.kafka.controller.FeatureControlManager",
   _Q + "Replayed a FeatureLevelRecord setting metadata.version to {mv}")
_t("replayed_controller_reg", "INFO", CCM,
   _Q + "Replayed RegisterControllerRecord contaning ControllerRegistration(id={id}, incarnationId={inc}, "
   "zkMigrationReady=false, listeners=[Endpoint(listenerName='CONTROLLER', securityProtocol=PLAINTEXT, host='{host}', "
   "port={port})], supportedFeatures={features}).")
_t("replayed_broker_initial", "INFO", CCM, _Q + "Replayed initial RegisterBrokerRecord for broker {b}: {record}")
_t("replayed_broker_new_incarnation", "INFO", CCM,
   _Q + "Replayed RegisterBrokerRecord establishing a new incarnation of broker {b}: {record}")
_t("new_incarnation", "INFO", CCM,
   _Q + "Registering a new incarnation of broker {b}. Previous incarnation ID was {old}; new incarnation ID is {new}. "
   "Generated 0 record(s) to clean up previous incarnations. Broker epoch will become {epoch}.")
_t("unfence_granted", "INFO", BHM,
   _Q + "The request from broker {b} to unfence has been granted because it has caught up with the offset of its "
   "register broker record {offset}.")
_t("replayed_registration_change", "INFO", CCM,
   _Q + "Replayed BrokerRegistrationChangeRecord modifying the registration for broker {b}: "
   "BrokerRegistrationChangeRecord(brokerId={b}, brokerEpoch={epoch}, fenced={fenced}, inControlledShutdown=0, logDirs=[])")
_t("fencing", "INFO", RCM, _Q + "Fencing broker {b} because its session has timed out.")
_t("changing_partitions", "INFO", RCM, _Q + "{context}: changing {n} partition(s)")
_t("replayed_topic", "INFO", RCM, _Q + "Replayed TopicRecord for topic {topic} with topic ID {tid}.")
_t("replayed_partition", "INFO", RCM,
   _Q + "Replayed PartitionRecord for new partition {tp} with topic ID {tid} and PartitionRegistration(replicas=[{replicas}], "
   "directories=[{dirs}], isr=[{isr}], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader={leader}, "
   "leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0).")
_t("periodic_task", "INFO", QC, _Q + "{task}: generated {n} records in {us} microseconds.")

# --- a broker: lifecycle (server.log) --------------------------------------------------------------
_t("broker_to_starting", "INFO", BS, "[BrokerServer id={id}] Transition from SHUTDOWN to STARTING")
_t("broker_starting", "INFO", BS, "[BrokerServer id={id}] Starting broker")
_t("raft_observer", "INFO", RAFT_STATE,
   "[RaftManager id={id}] Completed transition to FollowerState(fetchTimeoutMs=2000, epoch={epoch}, leader={leader}, "
   "leaderEndpoints=Endpoints(endpoints={{ListenerName(CONTROLLER)={host}/<unresolved>:{port}}}), voters=[{voters}], "
   "highWatermark=Optional.empty, fetchingSnapshot=Optional.empty) from {previous}")
_t("controller_recorded", "INFO", "kafka.server.NodeToControllerRequestThread",
   "[broker-{id}-to-controller-heartbeat-channel-manager]: Recorded new KRaft controller, from now on will use node "
   "{host}:{port} (id: {cid} rack: null)")
_t("incarnation_starting", "INFO", BLM,
   "[BrokerLifecycleManager id={id}] Incarnation {inc} of broker {id} in cluster {cluster_id} is now STARTING.")
_t("registered", "INFO", BLM, "[BrokerLifecycleManager id={id}] Successfully registered broker {id} with broker epoch {epoch}")
_t("caught_up", "INFO", BLM, "[BrokerLifecycleManager id={id}] The broker has caught up. Transitioning from STARTING to RECOVERY.")
_t("unfenced", "INFO", BLM, "[BrokerLifecycleManager id={id}] The broker has been unfenced. Transitioning from RECOVERY to RUNNING.")
_t("broker_started", "INFO", BS, "[BrokerServer id={id}] Transition from STARTING to STARTED")

# --- a broker: its logs and partitions --------------------------------------------------------------
_t("logs_loading", "INFO", LM, "Loading logs from log dirs ArrayBuffer({dir})")
_t("logs_recovering", "INFO", LM, "Recovering {n} logs from {dir} since no clean shutdown file was found")
_t("log_completed_load", "INFO", LM,
   "Completed load of Log(dir={dir}/{tp}, topicId={tid}, topic={topic}, partition={p}, highWatermark={hw}, "
   "lastStableOffset={hw}, logStartOffset=0, logEndOffset={leo}) with 1 segments, local-log-start-offset 0 and "
   "log-end-offset {leo} in {ms}ms ({i}/{n} completed in {dir})")
_t("logs_loaded", "INFO", LM, "Loaded {n} logs in {ms}ms")
_t("created_log", "INFO", LM, "Created log for partition {tp} in {dir}/{tp} with properties {{}}")
_t("partition_log_loaded", "INFO", "kafka.cluster.Partition",
   "[Partition {tp} broker={id}] Log loaded for partition {tp} with initial high watermark {hw}")
_t("isr_updated", "INFO", "kafka.cluster.Partition", "[Partition {tp} broker={id}] ISR updated to {isr}  and version updated to {v}")
_t("fetch_error", "INFO", "org.apache.kafka.clients.FetchSessionHandler",
   "[ReplicaFetcher replicaId={id}, leaderId={leader}, fetcherId=0] Error sending fetch request (sessionId={session}, "
   "epoch={epoch}) to node {leader}:")

# --- a broker: metadata deltas applied (state-change.log) ------------------------------------------
_t("sc_creating", "INFO", SC, "[Broker id={id}] Creating new partition {tp} with topic id {tid}.")
_t("sc_to_leaders", "INFO", SC, "[Broker id={id}] Transitioning {n} partition(s) to local leaders.")
_t("sc_to_followers", "INFO", SC, "[Broker id={id}] Transitioning {n} partition(s) to local followers.")
_t("sc_leader", "INFO", SC,
   "[Broker id={id}] Leader {tp} with topic id Some({tid}) starts at leader epoch {le} from offset {offset} with partition "
   "epoch {pe}, high watermark {hw}, ISR [{isr}], adding replicas [] and removing replicas [] . Previous leader {prev} "
   "and previous leader epoch was {ple}.")
_t("sc_follower", "INFO", SC,
   "[Broker id={id}] Follower {tp} starts at leader epoch {le} from offset {offset} with partition epoch {pe} and high "
   "watermark {hw}. Current leader is {leader}. Previous leader {prev} and previous leader epoch was {ple}.")
_t("sc_stopped_fetchers", "INFO", SC, "[Broker id={id}] Stopped fetchers as part of become-follower for {n} partitions")
_t("sc_started_fetchers", "INFO", SC, "[Broker id={id}] Started fetchers as part of become-follower for {n} partitions")

# The frames real 3.9.0 logs show under the fetcher's "Error sending fetch request" when its leader dies.
FETCH_ERROR_TRACE = [
    "\tat org.apache.kafka.clients.NetworkClientUtils.sendAndReceive(NetworkClientUtils.java:100)",
    "\tat kafka.server.BrokerBlockingSender.sendRequest(BrokerBlockingSender.scala:114)",
    "\tat kafka.server.RemoteLeaderEndPoint.fetch(RemoteLeaderEndPoint.scala:79)",
    "\tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:317)",
    "\tat kafka.server.AbstractFetcherThread.$anonfun$maybeFetch$3(AbstractFetcherThread.scala:131)",
    "\tat kafka.server.AbstractFetcherThread.$anonfun$maybeFetch$3$adapted(AbstractFetcherThread.scala:130)",
    "\tat scala.Option.foreach(Option.scala:437)",
    "\tat kafka.server.AbstractFetcherThread.maybeFetch(AbstractFetcherThread.scala:130)",
    "\tat kafka.server.AbstractFetcherThread.doWork(AbstractFetcherThread.scala:113)",
    "\tat kafka.server.ReplicaFetcherThread.doWork(ReplicaFetcherThread.scala:98)",
    "\tat org.apache.kafka.server.util.ShutdownableThread.run(ShutdownableThread.java:136)",
]
