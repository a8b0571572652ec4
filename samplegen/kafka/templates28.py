"""The log lines of Kafka 2.8.0 (ZooKeeper mode), as message templates: the writer's grammar.

One :class:`Template` per distinct line the simulator prints. ``text`` is a
``str.format`` pattern (literal braces doubled); the logger decides the file,
as Kafka's default ``log4j.properties`` routes it: ``state.change.logger`` to
state-change.log, ``kafka.controller.*`` to controller.log, the rest to
server.log.

``evidence`` says why we believe the line is real:
- ``"real"``: a line of this template (same words, other values) is in the real
  Kafka 2.8.0 logs under ``shared/real_logs`` (checked by a test);
- ``"real:<dir>"``: found in another version's real logs, the text being
  unchanged between that version and 2.8 in Kafka's source;
- ``"source"``: only in Kafka 2.8's source (no real line at hand); kept few.

Stack traces are the frames real 2.8.0 logs show for the same call paths.
"""
from __future__ import annotations

import re
import string
from dataclasses import dataclass

VERSION = "2.8.0"
COMMIT_ID = "ebb1d6e21cc92130"
ZK_CLIENT_VERSION = "3.5.9-83df9301aa5c2a5d284a9940177808c01bc35cef, built on 01/06/2021 20:03 GMT"


@dataclass(frozen=True)
class Template:
    name: str
    level: str
    logger: str
    text: str
    evidence: str = "real"

    @property
    def file(self) -> str:
        if self.logger == "state.change.logger":
            return "state-change"
        if self.logger.startswith("kafka.controller"):
            return "controller"
        return "server"

    def render(self, **kw) -> str:
        return self.text.format(**kw)

    def fast(self):
        """The template compiled to a function of its fields (an f-string: several times faster than format)."""
        fields = list(dict.fromkeys(f for _, f, _, _ in string.Formatter().parse(self.text) if f))
        # Extra keywords are ignored, as str.format ignores them.
        return eval(f"lambda {''.join(f + ', ' for f in fields)}**_: f{self.text!r}")  # noqa: S307 - our own text

    def shape(self) -> "re.Pattern[str]":
        """The first line of the message with every field a wildcard (for finding real instances)."""
        first = self.text.split("\n", 1)[0]
        out = []
        for literal, field, _, _ in string.Formatter().parse(first):
            out.append(re.escape(literal))
            if field is not None:
                out.append(".*?")
        return re.compile("".join(out) + "$")


_T: dict[str, Template] = {}


def _t(name: str, level: str, logger: str, text: str, evidence: str = "real") -> Template:
    t = Template(name, level, logger, text, evidence)
    assert name not in _T, name
    _T[name] = t
    return t


KC = "kafka.controller.KafkaController"
SC = "state.change.logger"
PSM = "kafka.controller.ZkPartitionStateMachine"
RSM = "kafka.controller.ZkReplicaStateMachine"
RST = "kafka.controller.RequestSendThread"
CEM = "kafka.controller.ControllerEventManager$ControllerEventThread"
KS = "kafka.server.KafkaServer"
ZKC = "kafka.zookeeper.ZooKeeperClient"
ZKK = "kafka.zk.KafkaZkClient"
CNXN = "org.apache.zookeeper.ClientCnxn"
ZOO = "org.apache.zookeeper.ZooKeeper"
NC = "org.apache.kafka.clients.NetworkClient"
LOG = "kafka.log.Log"
LM = "kafka.log.LogManager"
PART = "kafka.cluster.Partition"
GC = "kafka.coordinator.group.GroupCoordinator"
GMM = "kafka.coordinator.group.GroupMetadataManager"
RFM = "kafka.server.ReplicaFetcherManager"
RFT = "kafka.server.ReplicaFetcherThread"
REAPER = "kafka.server.DelayedOperationPurgatory$ExpiredOperationReaper"

# --- broker start-up (server.log) --------------------------------------------------------------
_t("log4j_mbean", "INFO", "kafka.utils.Log4jControllerRegistration$", "Registered kafka:type=kafka.Log4jController MBean")
_t("tls_reneg", "INFO", "org.apache.zookeeper.common.X509Util",
   "Setting -D jdk.tls.rejectClientInitiatedRenegotiation=true to disable client-initiated TLS renegotiation")
_t("signal_handlers", "INFO", "org.apache.kafka.common.utils.LoggingSignalHandler", "Registered signal handlers for TERM, INT, HUP")
_t("server_starting", "INFO", KS, "starting")
_t("connecting_zk", "INFO", KS, "Connecting to zookeeper on {connect}")
_t("created_chroot", "INFO", KS, "Created zookeeper path {chroot}", evidence="source")
_t("zk_init_session", "INFO", ZKC, "[ZooKeeperClient Kafka server] Initializing a new session to {connect}.")
_t("zk_client_env", "INFO", ZOO, "Client environment:{key}={value}")
_t("zk_initiating", "INFO", ZOO,
   "Initiating client connection, connectString={connect} sessionTimeout={timeout} "
   "watcher=kafka.zookeeper.ZooKeeperClient$ZooKeeperClientWatcher$@{watcher}")
_t("jute_maxbuffer", "INFO", "org.apache.zookeeper.ClientCnxnSocket", "jute.maxbuffer value is 4194304 Bytes")
_t("zk_request_timeout", "INFO", CNXN, "zookeeper.request.timeout value is 0. feature enabled=")
_t("zk_waiting", "INFO", ZKC, "[ZooKeeperClient Kafka server] Waiting until connected.")
_t("zk_opening_socket", "INFO", CNXN,
   "Opening socket connection to server {server}. Will not attempt to authenticate using SASL (unknown error)")
_t("zk_socket_established", "INFO", CNXN, "Socket connection established, initiating session, client: {client}, server: {server}")
_t("zk_session_complete", "INFO", CNXN,
   "Session establishment complete on server {server}, sessionid = {sid}, negotiated timeout = {timeout}")
_t("zk_connected", "INFO", ZKC, "[ZooKeeperClient Kafka server] Connected.")
_t("zk_closing", "INFO", ZKC, "[ZooKeeperClient Kafka server] Closing.")
_t("zk_session_closed", "INFO", ZOO, "Session: {sid} closed")
_t("zk_event_thread_down", "INFO", CNXN, "EventThread shut down for session: {sid}")
_t("zk_closed", "INFO", ZKC, "[ZooKeeperClient Kafka server] Closed.")
_t("feature_thread_start", "INFO", "kafka.server.FinalizedFeatureChangeListener$ChangeNotificationProcessorThread",
   "[feature-zk-node-event-process-thread]: Starting")
_t("feature_cache", "INFO", "kafka.server.FinalizedFeatureCache",
   "Updated cache from existing <empty> to latest FinalizedFeaturesAndEpoch(features=Features{{}}, epoch={epoch}).")
_t("cluster_id", "INFO", KS, "Cluster ID = {cluster_id}")
_t("no_meta_properties", "WARN", "kafka.server.BrokerMetadataCheckpoint", "No meta.properties file under dir {dir}/meta.properties")
_t("kafka_config", "INFO", "kafka.server.KafkaConfig", "KafkaConfig values: \n{body}")
_t("reaper_quota", "INFO", "kafka.server.ClientQuotaManager$ThrottledChannelReaper", "[ThrottledChannelReaper-{kind}]: Starting")
_t("logs_loading", "INFO", LM, "Loading logs from log dirs ArraySeq({dir})")
_t("logs_recovery", "INFO", LM, "Attempting recovery for all logs in {dir} since no clean shutdown file was found")
_t("logs_skip_recovery", "INFO", LM, "Skipping recovery for all logs in {dir} since clean shutdown file was found")
_t("log_producer_state", "INFO", LOG,
   "[Log partition={tp}, dir={dir}] Loading producer state till offset {offset} with message format version 2")
_t("log_completed_load", "INFO", LM,
   "Completed load of Log(dir={dir}/{tp}, topic={topic}, partition={partition}, highWatermark={hw}, "
   "lastStableOffset={hw}, logStartOffset={start}, logEndOffset={leo}) with 1 segments in {ms}ms "
   "({i}/{n} loaded in {dir})")
_t("logs_loaded", "INFO", LM, "Loaded {n} logs in {ms}ms.")
_t("log_cleanup_start", "INFO", LM, "Starting log cleanup with a period of 300000 ms.")
_t("log_flusher_start", "INFO", LM, "Starting log flusher with a default period of 9223372036854775807 ms.")
_t("conn_rate", "INFO", "kafka.network.ConnectionQuotas", "Updated connection-accept-rate max connection creation rate to 2147483647")
_t("awaiting_sockets", "INFO", "kafka.network.Acceptor", "Awaiting socket connections on {host}:{port}.")
_t("socket_created", "INFO", "kafka.network.SocketServer",
   "[SocketServer listenerType=ZK_BROKER, nodeId={id}] Created data-plane acceptor and processors for endpoint : ListenerName(PLAINTEXT)")
_t("to_controller_start", "INFO", "kafka.server.BrokerToControllerRequestThread", "[broker-{id}-to-controller-send-thread]: Starting")
_t("reaper_start", "INFO", REAPER, "[ExpirationReaper-{id}-{kind}]: Starting")
_t("logdir_handler", "INFO", "kafka.server.ReplicaManager$LogDirFailureHandler", "[LogDirFailureHandler]: Starting")
_t("creating_broker_znode", "INFO", ZKK, "Creating /brokers/ids/{id} (is it secure? false)")
_t("broker_znode_stat", "INFO", ZKK, "Stat of the created znode at /brokers/ids/{id} is: {stat}\n")
_t("registered_broker", "INFO", ZKK,
   "Registered broker {id} at path /brokers/ids/{id} with addresses: PLAINTEXT://{host}:{port}, czxid (broker epoch): {epoch}")
_t("group_coord_starting", "INFO", GC, "[GroupCoordinator {id}]: Starting up.")
_t("group_coord_started", "INFO", GC, "[GroupCoordinator {id}]: Startup complete.")
_t("producer_id_block", "INFO", "kafka.coordinator.transaction.ProducerIdManager",
   "[ProducerId Manager {id}]: Acquired new producerId block (brokerId:{id},blockStartProducerId:{start},"
   "blockEndProducerId:{end}) by writing to Zk with path version {version}")
_t("txn_coord_starting", "INFO", "kafka.coordinator.transaction.TransactionCoordinator", "[TransactionCoordinator id={id}] Starting up.")
_t("txn_marker_start", "INFO", "kafka.coordinator.transaction.TransactionMarkerChannelManager",
   "[Transaction Marker Channel Manager {id}]: Starting")
_t("txn_coord_started", "INFO", "kafka.coordinator.transaction.TransactionCoordinator", "[TransactionCoordinator id={id}] Startup complete.")
_t("config_changes_thread", "INFO", "kafka.common.ZkNodeChangeNotificationListener$ChangeEventProcessThread",
   "[/config/changes-event-process-thread]: Starting")
_t("socket_starting", "INFO", "kafka.network.SocketServer",
   "[SocketServer listenerType=ZK_BROKER, nodeId={id}] Starting socket server acceptors and processors")
_t("socket_started_dp", "INFO", "kafka.network.SocketServer",
   "[SocketServer listenerType=ZK_BROKER, nodeId={id}] Started data-plane acceptor and processor(s) for endpoint : ListenerName(PLAINTEXT)")
_t("socket_started", "INFO", "kafka.network.SocketServer",
   "[SocketServer listenerType=ZK_BROKER, nodeId={id}] Started socket server acceptors and processors")
_t("kafka_version", "INFO", "org.apache.kafka.common.utils.AppInfoParser", "Kafka version: {version}")
_t("kafka_commit", "INFO", "org.apache.kafka.common.utils.AppInfoParser", "Kafka commitId: {commit}")
_t("kafka_start_time", "INFO", "org.apache.kafka.common.utils.AppInfoParser", "Kafka startTimeMs: {ms}")
_t("server_started", "INFO", KS, "[KafkaServer id={id}] started")
_t("recorded_controller", "INFO", "kafka.server.BrokerToControllerRequestThread",
   "[broker-{id}-to-controller-send-thread]: Recorded new controller, from now on will use broker {host}:{port} (id: {cid} rack: null)")

# --- broker shutdown (server.log) --------------------------------------------------------------
_t("server_shutting_down", "INFO", KS, "[KafkaServer id={id}] shutting down")
_t("cs_starting", "INFO", KS, "[KafkaServer id={id}] Starting controlled shutdown")
_t("cs_succeeded", "INFO", KS, "[KafkaServer id={id}] Controlled shutdown succeeded")
_t("request_handler_down", "INFO", "kafka.server.KafkaRequestHandlerPool",
   "[data-plane Kafka Request Handler on Broker {id}], shutting down")
_t("request_handler_down_done", "INFO", "kafka.server.KafkaRequestHandlerPool",
   "[data-plane Kafka Request Handler on Broker {id}], shut down completely")
_t("group_coord_down", "INFO", GC, "[GroupCoordinator {id}]: Shutdown complete.")
_t("fetcher_manager_down", "INFO", RFM, "[ReplicaFetcherManager on broker {id}] shutting down")
_t("log_manager_down", "INFO", LM, "Shutdown complete.")
_t("server_shut_down", "INFO", KS, "[KafkaServer id={id}] shut down completed")

# --- a start-up refused (server.log): the 2.8.0 sequence of AndreasTraut's real server.log ---------
_t("fatal_startup", "ERROR", KS, "Fatal error during KafkaServer startup. Prepare to shutdown")
_t("server_shutting_down_bare", "INFO", KS, "shutting down")
_t("feature_thread_shutting", "INFO", "kafka.server.FinalizedFeatureChangeListener$ChangeNotificationProcessorThread",
   "[feature-zk-node-event-process-thread]: Shutting down")
_t("feature_thread_stopped", "INFO", "kafka.server.FinalizedFeatureChangeListener$ChangeNotificationProcessorThread",
   "[feature-zk-node-event-process-thread]: Stopped")
_t("feature_thread_done", "INFO", "kafka.server.FinalizedFeatureChangeListener$ChangeNotificationProcessorThread",
   "[feature-zk-node-event-process-thread]: Shutdown completed")
_t("app_info_unregistered", "INFO", "org.apache.kafka.common.utils.AppInfoParser", "App info kafka.server for {id} unregistered")
_t("server_shut_down_bare", "INFO", KS, "shut down completed")
_t("exiting_kafka", "ERROR", "kafka.Kafka$", "Exiting Kafka.")

# KafkaServer.startup (2.8.0, KafkaServer.scala:218): the stored meta.properties names another cluster.
INCONSISTENT_CLUSTER_ID = ("kafka.common.InconsistentClusterIdException: The Cluster ID {found} doesn't match stored "
                           "clusterId Some({stored}) in meta.properties. The broker is trying to join the wrong "
                           "cluster. Configured zookeeper.connect may be wrong.")
STARTUP_TRACE = ["kafka.server.KafkaServer.startup(KafkaServer.scala:218)", "kafka.Kafka$.main(Kafka.scala:109)",
                 "kafka.Kafka.main(Kafka.scala)"]

# --- ZooKeeper session trouble (server.log) ------------------------------------------------------
_t("zk_expired_warn", "WARN", CNXN, "Unable to reconnect to ZooKeeper service, session {sid} has expired")
_t("zk_expired_info", "INFO", CNXN, "Unable to reconnect to ZooKeeper service, session {sid} has expired, closing socket connection")
_t("zk_session_expired", "INFO", ZKC, "[ZooKeeperClient Kafka server] Session expired.")

# --- replication (server.log) ------------------------------------------------------------------
_t("fetcher_removed", "INFO", RFM, "[ReplicaFetcherManager on broker {id}] Removed fetcher for partitions {parts}")
_t("fetcher_added", "INFO", RFM, "[ReplicaFetcherManager on broker {id}] Added fetcher to broker {leader} for partitions {states}")
_t("fetcher_thread_start", "INFO", RFT, "[ReplicaFetcher replicaId={id}, leaderId={leader}, fetcherId=0] Starting")
_t("fetch_error", "WARN", RFT,
   "[ReplicaFetcher replicaId={id}, leaderId={leader}, fetcherId=0] Error in response for fetch request "
   "(type=FetchRequest, replicaId={id}, maxWait=500, minBytes=1, maxBytes=10485760, fetchData={{}}, "
   "isolationLevel=READ_UNCOMMITTED, toForget=, metadata=(sessionId={session}, epoch={epoch}), rackId=)")
_t("fetch_conn_failed", "WARN", NC,
   "[ReplicaFetcher replicaId={id}, leaderId={leader}, fetcherId=0] Connection to node {leader} ({host}/{ip}:{port}) "
   "could not be established. Broker may not be available.", evidence="source")
_t("controller_conn_failed", "WARN", NC,
   "[Controller id={cid}, targetBrokerId={target}] Connection to node {target} ({host}/{ip}:{port}) could not be "
   "established. Broker may not be available.")
_t("truncate_noop", "INFO", LOG,
   "[Log partition={tp}, dir={dir}] Truncating to {offset} has no effect as the largest offset in the log is {last}")
_t("truncate", "INFO", LOG, "[Log partition={tp}, dir={dir}] Truncating to offset {offset}", evidence="source")
_t("isr_shrink", "INFO", PART,
   "[Partition {tp} broker={id}] Shrinking ISR from {old} to {new}. Leader: (highWatermark: {hw}, endOffset: {leo}). "
   "Out of sync replicas: {oos}.", evidence="real:CodingCookieRookie__CS3219_TASKD")
_t("isr_updated", "INFO", PART, "[Partition {tp} broker={id}] ISR updated to {isr} and version updated to [{version}]")
_t("partition_log_loaded", "INFO", PART,
   "[Partition {tp} broker={id}] Log loaded for partition {tp} with initial high watermark {hw}")
_t("created_log", "INFO", LM,
   "Created log for partition {tp} in {dir}/{tp} with properties {{compression.type -> producer, "
   "min.insync.replicas -> 1, message.downconversion.enable -> true, segment.jitter.ms -> 0, "
   "cleanup.policy -> [delete], flush.ms -> 9223372036854775807, retention.ms -> 604800000, "
   "segment.bytes -> 1073741824, flush.messages -> 9223372036854775807, message.format.version -> 2.8-IV1, "
   "max.compaction.lag.ms -> 9223372036854775807, file.delete.delay.ms -> 60000, max.message.bytes -> 1048588, "
   "min.compaction.lag.ms -> 0, message.timestamp.type -> CreateTime, preallocate -> false, "
   "index.interval.bytes -> 4096, min.cleanable.dirty.ratio -> 0.5, unclean.leader.election.enable -> {unclean}, "
   "retention.bytes -> -1, delete.retention.ms -> 86400000, segment.ms -> 604800000, "
   "message.timestamp.difference.max.ms -> 9223372036854775807, segment.index.bytes -> 10485760}}.")
_t("no_checkpointed_hw", "INFO", PART,
   "[Partition {tp} broker={id}] No checkpointed highwatermark is found for partition {tp}")
_t("creating_topic", "INFO", "kafka.zk.AdminZkClient",
   "Creating topic {topic} with configuration {config} and initial partition assignment {assignment}")

# --- routine noise (server.log) ----------------------------------------------------------------
_t("log_rolled", "INFO", LOG, "[Log partition={tp}, dir={dir}] Rolled new log segment at offset {offset} in {ms} ms.")
_t("producer_snapshot", "INFO", "kafka.log.ProducerStateManager",
   "[ProducerStateManager partition={tp}] Writing producer snapshot at offset {offset}")
_t("segment_retention", "INFO", LOG,
   "[Log partition={tp}, dir={dir}] Deleting segment LogSegment(baseOffset={base}, size={size}, "
   "lastModifiedTime={mtime}, largestRecordTimestamp=Some({largest})) due to retention time 604800000ms breach "
   "based on the largest record timestamp in the segment")
_t("log_start_incremented", "INFO", LOG,
   "[Log partition={tp}, dir={dir}] Incremented log start offset to {offset} due to segment deletion")
_t("segment_files_deleted", "INFO", LOG,
   "[Log partition={tp}, dir={dir}] Deleting segment files LogSegment(baseOffset={base}, size={size}, "
   "lastModifiedTime={mtime}, largestRecordTimestamp=Some({largest}))")
_t("group_preparing", "INFO", GC,
   "[GroupCoordinator {id}]: Preparing to rebalance group {group} in state PreparingRebalance with old generation "
   "{gen} (__consumer_offsets-{p}) (reason: Adding new member {member} with group instance id None)")
_t("group_stabilized", "INFO", GC,
   "[GroupCoordinator {id}]: Stabilized group {group} generation {gen} (__consumer_offsets-{p}) with {n} members")
_t("group_assignment", "INFO", GC,
   "[GroupCoordinator {id}]: Assignment received from leader for group {group} for generation {gen}. "
   "The group has {n} members, 0 of which are static.")
_t("group_member_left", "INFO", GC,
   "[GroupCoordinator {id}]: Member[group.instance.id None, member.id {member}] in group {group} has left, "
   "removing it from the group")
_t("expired_offsets", "INFO", GMM, "[GroupMetadataManager brokerId={id}] Removed {n} expired offsets in {ms} milliseconds.",
   evidence="real:Saurabh7064__kafka")
_t("group_coordinator_elected", "INFO", GC, "[GroupCoordinator {id}]: Elected as the group coordinator for partition {p}")
_t("group_loading", "INFO", GMM,
   "[GroupMetadataManager brokerId={id}] Scheduling loading of offsets and group metadata from __consumer_offsets-{p}")
_t("group_loaded", "INFO", GMM,
   "[GroupMetadataManager brokerId={id}] Finished loading offsets and group metadata from __consumer_offsets-{p} "
   "in {ms} milliseconds, of which {wait} milliseconds was spent in the scheduler.")
# --- controller.log ----------------------------------------------------------------------------
_t("cet_starting", "INFO", CEM, "[ControllerEventThread controllerId={id}] Starting")
_t("cet_shutting_down", "INFO", CEM, "[ControllerEventThread controllerId={id}] Shutting down")
_t("cet_stopped", "INFO", CEM, "[ControllerEventThread controllerId={id}] Stopped")
_t("cet_shutdown_completed", "INFO", CEM, "[ControllerEventThread controllerId={id}] Shutdown completed")
_t("controller_epoch_created", "INFO", ZKK, "Successfully created /controller_epoch with initial epoch 0")
_t("elected", "INFO", KC,
   "[Controller id={id}] {id} successfully elected as the controller. Epoch incremented to {epoch} and epoch zk "
   "version is now {zkv}")
_t("feature_znode", "INFO", KC,
   "[Controller id={id}] Creating FeatureZNode at path: /feature with contents: FeatureZNode(Enabled,Features{{}})")
_t("already_elected", "DEBUG", KC, "[Controller id={id}] Broker {cid} has been elected as the controller, so stopping the election process.")
_t("registering_handlers", "INFO", KC, "[Controller id={id}] Registering handlers")
_t("deleting_logdir_notif", "INFO", KC, "[Controller id={id}] Deleting log dir event notifications")
_t("deleting_isr_notif", "INFO", KC, "[Controller id={id}] Deleting isr change notifications")
_t("init_context", "INFO", KC, "[Controller id={id}] Initializing controller context")
_t("init_epochs", "INFO", KC, "[Controller id={id}] Initialized broker epochs cache: HashMap({epochs})")
_t("register_mods", "DEBUG", KC, "[Controller id={id}] Register BrokerModifications handler for {brokers}")
_t("channel_connect", "DEBUG", "kafka.controller.ControllerChannelManager",
   "[Channel manager on controller {id}]: Controller {id} trying to connect to broker {target}")
_t("rst_starting", "INFO", RST, "[RequestSendThread controllerId={id}] Starting")
_t("rst_connected", "INFO", RST,
   "[RequestSendThread controllerId={id}] Controller {id} connected to {host}:{port} (id: {target} rack: null) for "
   "sending state change requests")
_t("rst_shutting_down", "INFO", RST, "[RequestSendThread controllerId={id}] Shutting down")
_t("rst_stopped", "INFO", RST, "[RequestSendThread controllerId={id}] Stopped")
_t("rst_shutdown_completed", "INFO", RST, "[RequestSendThread controllerId={id}] Shutdown completed")
_t("rst_unsuccessful", "WARN", RST,
   "[RequestSendThread controllerId={id}] Controller {id}'s connection to broker {host}:{port} (id: {target} "
   "rack: null) was unsuccessful")
_t("active_brokers", "INFO", KC, "[Controller id={id}] Currently active brokers in the cluster: {brokers}")
_t("shutting_brokers", "INFO", KC, "[Controller id={id}] Currently shutting brokers in the cluster: HashSet()")
_t("topics_list", "INFO", KC, "[Controller id={id}] Current list of topics in the cluster: {topics}")
_t("fetch_deletions", "INFO", KC, "[Controller id={id}] Fetching topic deletions in progress")
_t("to_delete", "INFO", KC, "[Controller id={id}] List of topics to be deleted: ")
_t("ineligible_delete", "INFO", KC, "[Controller id={id}] List of topics ineligible for deletion: {topics}")
_t("init_tdm", "INFO", KC, "[Controller id={id}] Initializing topic deletion manager")
_t("tdm_init", "INFO", "kafka.controller.TopicDeletionManager",
   "[Topic Deletion Manager {id}] Initializing manager with initial deletions: Set(), initial ineligible deletions: {topics}")
_t("send_um", "INFO", KC, "[Controller id={id}] Sending update metadata request")
_t("rsm_init", "INFO", RSM, "[ReplicaStateMachine controllerId={id}] Initializing replica state")
_t("rsm_online", "INFO", RSM, "[ReplicaStateMachine controllerId={id}] Triggering online replica state changes")
_t("rsm_offline", "INFO", RSM, "[ReplicaStateMachine controllerId={id}] Triggering offline replica state changes")
_t("rsm_started", "DEBUG", RSM, "[ReplicaStateMachine controllerId={id}] Started replica state machine with initial state -> HashMap({states})")
_t("psm_init", "INFO", PSM, "[PartitionStateMachine controllerId={id}] Initializing partition state")
_t("psm_online", "INFO", PSM, "[PartitionStateMachine controllerId={id}] Triggering online partition state changes")
_t("psm_started", "DEBUG", PSM, "[PartitionStateMachine controllerId={id}] Started partition state machine with initial state -> HashMap({states})")
_t("ready", "INFO", KC, "[Controller id={id}] Ready to serve as the new controller with epoch {epoch}")
_t("pre_undergoing", "INFO", KC, "[Controller id={id}] Partitions undergoing preferred replica election: ")
_t("pre_completed", "INFO", KC, "[Controller id={id}] Partitions that completed preferred replica election: ")
_t("pre_skipping", "INFO", KC, "[Controller id={id}] Skipping preferred replica election for partitions due to topic deletion: ")
_t("pre_resuming", "INFO", KC, "[Controller id={id}] Resuming preferred replica election for partitions: ")
_t("pre_starting", "INFO", KC, "[Controller id={id}] Starting replica leader election (PREFERRED) for partitions {parts} triggered by {trigger}")
_t("scheduler", "INFO", KC, "[Controller id={id}] Starting the controller scheduler")
_t("auto_rebalance", "INFO", KC, "[Controller id={id}] Processing automatic preferred replica leader election")
_t("auto_check", "TRACE", KC, "[Controller id={id}] Checking need to trigger auto leader balancing")
_t("not_preferred", "DEBUG", KC, "[Controller id={id}] Topics not in preferred replica for broker {b} HashMap({parts})")
_t("imbalance", "TRACE", KC, "[Controller id={id}] Leader imbalance ratio for broker {b} is {ratio}")
_t("broker_change", "INFO", KC,
   "[Controller id={id}] Newly added brokers: {added}, deleted brokers: {deleted}, bounced brokers: , all live brokers: {live}")
_t("startup_callback", "INFO", KC, "[Controller id={id}] New broker startup callback for {brokers}")
_t("failure_callback", "INFO", KC, "[Controller id={id}] Broker failure callback for {brokers}")
_t("epochs_updated", "INFO", KC, "[Controller id={id}] Updated broker epochs cache: HashMap({epochs})")
_t("unregister_mods", "DEBUG", KC, "[Controller id={id}] Unregister BrokerModifications handler for {brokers}")
_t("new_topics", "INFO", KC,
   "[Controller id={id}] New topics: [Set({topic})], deleted topics: [HashSet()], new partition replica assignment "
   "[Set(TopicIdReplicaAssignment({topic},Some({topic_id}),{assignment}))]")
_t("new_partitions", "INFO", KC, "[Controller id={id}] New partition creation callback for {parts}")
_t("cs_controller", "INFO", KC, "[Controller id={id}] Shutting down broker {b}")
_t("cs_all_shutting", "DEBUG", KC, "[Controller id={id}] All shutting down brokers: {brokers}")
_t("cs_live", "DEBUG", KC, "[Controller id={id}] Live brokers: {brokers}")
_t("all_leaders", "TRACE", KC, "[Controller id={id}] All leaders = {leaders}")
_t("removed_shutting", "INFO", KC, "[Controller id={id}] Removed {b} from list of shutting down brokers.")
_t("updating_isrs", "DEBUG", KC, "[Controller id={id}] Updating ISRs for partitions: {parts}.")
_t("isr_zk_updated", "DEBUG", KC, "[Controller id={id}] ISR for partition {tp} updated to [{isr}] and zkVersion updated to [{zkv}]")
_t("resigning", "DEBUG", KC, "[Controller id={id}] Resigning")
_t("psm_stopped", "INFO", PSM, "[PartitionStateMachine controllerId={id}] Stopped partition state machine")
_t("rsm_stopped", "INFO", RSM, "[ReplicaStateMachine controllerId={id}] Stopped replica state machine")
_t("resigned", "INFO", KC, "[Controller id={id}] Resigned")

# --- state-change.log (controller side) -------------------------------------------------------
_t("sc_new_partition", "INFO", SC,
   "[Controller id={id} epoch={epoch}] Changed partition {tp} state from NonExistentPartition to NewPartition with assigned replicas {replicas}")
_t("sc_online", "INFO", SC,
   "[Controller id={id} epoch={epoch}] Changed partition {tp} from {frm} to OnlinePartition with state "
   "LeaderAndIsr(leader={leader}, leaderEpoch={le}, isr={isr}, zkVersion={zkv})")
_t("sc_failed", "ERROR", SC,
   "[Controller id={id} epoch={epoch}] Controller {id} epoch {epoch} failed to change state for partition {tp} from {frm} to OnlinePartition")
_t("sc_removed_from_isr", "INFO", SC,
   "[Controller id={id} epoch={epoch}] Partition {tp} state changed to (Leader:{leader},ISR:{isr},LeaderEpoch:{le},"
   "ControllerEpoch:{ce}) after removing replica {replica} from the ISR as part of transition to OfflineReplica")
_t("sc_send_lai", "INFO", SC,
   "[Controller id={id} epoch={epoch}] Sending LeaderAndIsr request to broker {b} with {lead} become-leader and {follow} become-follower partitions")
_t("sc_send_um", "INFO", SC,
   "[Controller id={id} epoch={epoch}] Sending UpdateMetadata request to brokers {brokers} for {n} partitions")
_t("sc_send_stop", "INFO", SC, "[Controller id={id} epoch={epoch}] Sending StopReplica request for {n} replicas to broker {b}")

# --- state-change.log (broker side) -----------------------------------------------------------
_t("sb_um", "INFO", SC,
   "[Broker id={id}] Add {n} partitions and deleted 0 partitions from metadata cache in response to UpdateMetadata "
   "request sent by controller {cid} epoch {epoch} with correlation id {corr}")
_t("sb_handling", "INFO", SC, "[Broker id={id}] Handling LeaderAndIsr request correlationId {corr} from controller {cid} for {n} partitions")
_t("sb_stopped_fetchers_leader", "INFO", SC,
   "[Broker id={id}] Stopped fetchers as part of LeaderAndIsr request correlationId {corr} from controller {cid} "
   "epoch {epoch} as part of the become-leader transition for {n} partitions")
_t("sb_leader", "INFO", SC,
   "[Broker id={id}] Leader {tp} starts at leader epoch {le} from offset {offset} with high watermark {hw} ISR [{isr}] "
   "addingReplicas [] removingReplicas []. Previous leader epoch was {prev}.")
_t("sb_stopped_fetchers_follower", "INFO", SC,
   "[Broker id={id}] Stopped fetchers as part of become-follower request from controller {cid} epoch {epoch} with "
   "correlation id {corr} for {n} partitions")
_t("sb_follower", "INFO", SC,
   "[Broker id={id}] Follower {tp} starts at leader epoch {le} from offset {offset} with high watermark {hw}. "
   "Previous leader epoch was {prev}.")
_t("sb_ignored", "INFO", SC,
   "[Broker id={id}] Ignoring LeaderAndIsr request from controller {cid} with correlation id {corr} epoch {epoch} for "
   "partition {tp} since its associated leader epoch {le} matches the current leader epoch")
_t("sb_cannot_follow", "ERROR", SC,
   "[Broker id={id}] Received LeaderAndIsrRequest with correlation id {corr} from controller {cid} epoch {epoch} for "
   "partition {tp} (last update controller epoch {ce}) but cannot become follower since the new leader {leader} is "
   "unavailable.")
_t("sb_finished", "INFO", SC,
   "[Broker id={id}] Finished LeaderAndIsr request in {ms}ms correlationId {corr} from controller {cid} for {n} partitions")

TEMPLATES: dict[str, Template] = dict(_T)

# Frames of real 2.8.0 traces (AndreasTraut__kafka_2.13-2.8.0 state-change.log / server.log).
_PSM_ELECT = [
    "kafka.controller.ZkPartitionStateMachine.$anonfun$doElectLeaderForPartitions$7(PartitionStateMachine.scala:424)",
    "scala.collection.IterableOnceOps.foreach(IterableOnce.scala:563)",
    "scala.collection.IterableOnceOps.foreach$(IterableOnce.scala:561)",
    "scala.collection.AbstractIterable.foreach(Iterable.scala:919)",
    "kafka.controller.ZkPartitionStateMachine.doElectLeaderForPartitions(PartitionStateMachine.scala:421)",
    "kafka.controller.ZkPartitionStateMachine.electLeaderForPartitions(PartitionStateMachine.scala:332)",
    "kafka.controller.ZkPartitionStateMachine.doHandleStateChanges(PartitionStateMachine.scala:238)",
    "kafka.controller.ZkPartitionStateMachine.handleStateChanges(PartitionStateMachine.scala:158)",
    "kafka.controller.PartitionStateMachine.triggerOnlineStateChangeForPartitions(PartitionStateMachine.scala:74)",
    "kafka.controller.PartitionStateMachine.triggerOnlinePartitionStateChange(PartitionStateMachine.scala:59)",
]
_EVENT_LOOP = [
    "kafka.controller.QueuedEvent.process(ControllerEventManager.scala:52)",
    "kafka.controller.ControllerEventManager$ControllerEventThread.process$1(ControllerEventManager.scala:130)",
    "kafka.controller.ControllerEventManager$ControllerEventThread.$anonfun$doWork$1(ControllerEventManager.scala:133)",
    "scala.runtime.java8.JFunction0$mcV$sp.apply(JFunction0$mcV$sp.scala:18)",
    "kafka.metrics.KafkaTimer.time(KafkaTimer.scala:31)",
    "kafka.controller.ControllerEventManager$ControllerEventThread.doWork(ControllerEventManager.scala:133)",
    "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:96)",
]
ELECTION_TRACE_BROKER_FAILURE = _PSM_ELECT + [
    "kafka.controller.KafkaController.onReplicasBecomeOffline(KafkaController.scala:619)",
    "kafka.controller.KafkaController.onBrokerFailure(KafkaController.scala:589)",
    "kafka.controller.KafkaController.processBrokerChange(KafkaController.scala:1610)",
    "kafka.controller.KafkaController.process(KafkaController.scala:2424)",
] + _EVENT_LOOP
ELECTION_TRACE_FAILOVER = _PSM_ELECT + [
    "kafka.controller.PartitionStateMachine.startup(PartitionStateMachine.scala:42)",
    "kafka.controller.KafkaController.onControllerFailover(KafkaController.scala:262)",
    "kafka.controller.KafkaController.elect(KafkaController.scala:1520)",
    "kafka.controller.KafkaController.processStartup(KafkaController.scala:1423)",
    "kafka.controller.KafkaController.process(KafkaController.scala:2458)",
] + _EVENT_LOOP
FETCH_ERROR_TRACE = [
    "org.apache.kafka.clients.NetworkClientUtils.sendAndReceive(NetworkClientUtils.java:100)",
    "kafka.server.ReplicaFetcherBlockingSend.sendRequest(ReplicaFetcherBlockingSend.scala:110)",
    "kafka.server.ReplicaFetcherThread.fetchFromLeader(ReplicaFetcherThread.scala:217)",
    "kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:317)",
    "kafka.server.AbstractFetcherThread.$anonfun$maybeFetch$3(AbstractFetcherThread.scala:141)",
    "kafka.server.AbstractFetcherThread.$anonfun$maybeFetch$3$adapted(AbstractFetcherThread.scala:140)",
    "scala.Option.foreach(Option.scala:437)",
    "kafka.server.AbstractFetcherThread.maybeFetch(AbstractFetcherThread.scala:140)",
    "kafka.server.AbstractFetcherThread.doWork(AbstractFetcherThread.scala:123)",
    "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:96)",
]
RST_TRACE = [
    "org.apache.kafka.clients.NetworkClientUtils.awaitReady(NetworkClientUtils.java:71)",
    "kafka.controller.RequestSendThread.brokerReady(ControllerChannelManager.scala:292)",
    "kafka.controller.RequestSendThread.doWork(ControllerChannelManager.scala:246)",
    "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:96)",
]


def trace(first: str, frames: list[str]) -> list[str]:
    """An exception's lines as log4j prints them under the entry: the exception, then ``\\tat`` frames."""
    return [first] + ["\tat " + f for f in frames]
