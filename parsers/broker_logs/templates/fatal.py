"""server.log / kafkaServer.out templates for a broker that could not start, could not register, or
stopped itself: the line that says so and, in the stack trace under it, the line that proves why.

Messages, from Kafka's source (tag:file):
- ``Fatal error during KafkaServer startup. Prepare to shutdown`` (0.8+ KafkaServer.startup),
  ``Fatal error during KafkaServerStartable startup. Prepare to shutdown`` (0.8-2.x KafkaServerStartable),
  ``Fatal error during broker startup. Prepare to shutdown`` (2.8+ BrokerServer),
  ``Fatal error during controller startup. Prepare to shutdown`` (2.8+ ControllerServer);
- ``Exiting Kafka due to fatal exception during startup.`` / ``Exiting Kafka due to fatal exception``
  (2.8+ kafka.Kafka main);
- ``Encountered fatal fault: <what>`` (3.x+ ProcessTerminatingFaultHandler, KRaft);
- ``Shutdown broker because all log dirs in <dirs> have failed`` and ``Shutdown broker because none of
  the specified log dirs from <dirs> can be created or validated`` (1.1+ LogManager);
- lines after which the broker halts at once (``Exit.halt`` / ``Runtime.halt``: no shutdown hook runs, its
  ZooKeeper session outlives it), all ``running`` with ``halt`` set: ``Halting broker because dir <dir> is
  offline`` (1.0+ ReplicaManager.LogDirFailureHandler, inter.broker.protocol below 1.0), ``Shutdown broker
  because the metadata log dir <dir> has failed`` and ``Shutdown broker because some log directory has failed
  during migration mode: <dir>`` (3.7+ ReplicaManager.handleLogDirFailure), ``Disk error while replicating
  data[ for <tp>].`` (0.8-0.11 ReplicaFetcherThread), ``Disk error during leadership change.`` (0.8-0.11
  KafkaApis), ``Error deleting the log for partition <tp>`` (0.8.2-0.11 Partition.delete) and ``Error writing
  to highwatermark file: `` (0.8.2-0.11 ReplicaManager.checkpointHighWatermarks), and ``Halting Kafka.`` (2.8+
  kafka.Kafka's shutdown hook, when the server's shutdown itself threw);
- ``Unable to register broker <id> because the controller returned error <ERROR>`` (2.8+
  BrokerLifecycleManager, KRaft: the controller refused the registration and the broker retries);
- ``Error while creating ephemeral at /brokers/ids/<id>, node already exists and owner '<s>' does not
  match current session '<s>'`` (2.0+ KafkaZkClient.CheckedEphemeral: the old session still holds the id).

The thrown exception names the cause: ``InconsistentBrokerIdException`` ("Configured broker.id N
doesn't match stored broker.id M in meta.properties", KafkaServer.getBrokerIdAndOfflineDirs),
``InconsistentClusterIdException`` ("The Cluster ID X doesn't match stored clusterId Some(Y) in
meta.properties", 2.4+ KafkaServer.startup; KRaft: "Invalid cluster.id in: <path>", 3.7+
MetaPropertiesEnsemble.verify, and ``InconsistentNodeIdException`` "Configured node.id ... doesn't match
stored node.id", 2.8-3.6 KafkaRaftServer), ``NodeExistsException`` or "A broker is already registered on
the path /brokers/ids/N" (0.9-1.x ZkUtils.registerBrokerInZk), ``BindException``,
``KafkaStorageException``, ``OutOfMemoryError``.
"""
from __future__ import annotations

import re

from parsers.broker_logs.rules import Rule
from parsers.schema import Event

# Cause -> what the broker could not do. The order is the order of precedence when a trace names
# several (a KafkaException wrapping a BindException is a port in use).
CAUSES: tuple[tuple[str, str], ...] = (
    ("InconsistentBrokerIdException", "inconsistent_broker_id"),
    ("InconsistentNodeIdException", "inconsistent_broker_id"),
    ("doesn't match stored node.id", "inconsistent_broker_id"),
    ("InconsistentClusterIdException", "inconsistent_cluster_id"),
    ("Invalid cluster.id in", "inconsistent_cluster_id"),
    ("NodeExistsException", "broker_id_in_use"),
    ("A broker is already registered on the path", "broker_id_in_use"),
    ("BindException", "port_in_use"),
    ("OutOfMemoryError", "out_of_memory"),
    ("KafkaStorageException", "log_dirs_failed"),
)
# Causes the lines below name themselves (no trace to read).
CAUSE_DISK = "disk_error"

# KRaft registration errors (Errors enum names) -> cause.
_REGISTRATION = {
    "INCONSISTENT_CLUSTER_ID": "inconsistent_cluster_id",
    "DUPLICATE_BROKER_REGISTRATION": "broker_id_in_use",
    "UNSUPPORTED_VERSION": "registration_refused",
}

_IDENT = (r"^(?:\[(?:Kafka Server |KafkaServer id=|BrokerServer id=|ControllerServer id=|KafkaRaftServer nodeId="
          r"|BrokerLifecycleManager id=)(?P<id>\d+)[^\]]*\],? )?")


def _id(m) -> int | None:
    g = m.groupdict().get("id")
    return int(g) if g is not None else None


def _exception_line(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("at ") and not s.startswith("...")


def cause_of(lines: list[str]) -> tuple[str, int | None, str | None]:
    """(cause, index of the proving line, its text) from the exception lines of a trace."""
    shown = [(i, line.strip()) for i, line in enumerate(lines) if _exception_line(line)]
    for marker, cause in CAUSES:
        for i, text in shown:
            if marker in text:
                return cause, i, text[:300]
    if shown:
        return "other", shown[0][0], shown[0][1][:300]
    return "other", None, None


def _from_trace(via: str, phase: str | None):
    def build(entry, m):
        cause, idx, text = cause_of(entry.continuation)
        detail = {"via": via, "cause": cause, "message": (text or entry.message)[:300]}
        if phase:
            detail["phase"] = phase
        if idx is not None:
            detail["proof_offset"] = idx + 1  # lines below the entry's first line
        what = m.groupdict().get("what")
        if what:
            detail["fault"] = what[:300]
            if cause == "other":
                # the fault handler puts its reason on the line itself
                for marker, c in CAUSES:
                    if marker in what:
                        detail["cause"], detail["proof_offset"] = c, 0
                        break
        return Event("broker_fatal_error", subject_broker=_id(m), detail=detail)
    return build


def _log_dirs(entry, m):
    phase = "running" if m["all"] else "startup"
    return Event("broker_fatal_error",
                 detail={"via": "log_manager", "cause": "log_dirs_failed", "phase": phase, "dirs": (m["dirs"] or m["dirs2"]).strip(),
                         "message": entry.message[:300], "proof_offset": 0, "halt": True})


def _halted(via: str, cause: str):
    """A line Kafka writes just before it halts the process (``Exit.halt`` / ``Runtime.halt``)."""
    def build(entry, m):
        detail = {"via": via, "cause": cause, "phase": "running", "message": entry.message[:300], "proof_offset": 0,
                  "halt": True}
        g = m.groupdict()
        dirs = g.get("dirs") or g.get("dirs2")
        if dirs:
            detail["dirs"] = dirs.strip()
        return Event("broker_fatal_error", subject_broker=_id(m), detail=detail)
    return build


def _registration(entry, m):
    error = m["error"]
    return Event("broker_fatal_error", subject_broker=int(m["bid"]),
                 detail={"via": "lifecycle_manager", "phase": "registration", "error": error,
                         "cause": _REGISTRATION.get(error, "registration_refused"), "message": entry.message[:300],
                         "proof_offset": 0})


def _ephemeral(entry, m):
    return Event("broker_fatal_error", subject_broker=int(m["bid"]), session_id=int(m["mine"], 16),
                 detail={"via": "zk_registration", "phase": "startup", "cause": "broker_id_in_use",
                         "path": f"/brokers/ids/{m['bid']}", "owner_session": m["owner"], "session": m["mine"],
                         "message": entry.message[:300], "proof_offset": 0})


def _oom(entry, m):
    cause, idx, text = cause_of([entry.message, *entry.continuation])
    if cause != "out_of_memory":
        return None
    detail = {"via": "uncaught", "phase": "running", "cause": cause, "message": (text or "")[:300],
              "proof_offset": idx}
    return Event("broker_fatal_error", detail=detail)


_SERVERS = ("kafka.server.KafkaServer", "kafka.server.KafkaServerStartable", "kafka.server.BrokerServer",
            "kafka.server.ControllerServer")

RULES = [
    Rule("fatal.startup", _SERVERS, ("Fatal error during ", "startup. Prepare to shutdown"),
         re.compile(_IDENT + r"Fatal error during (?:KafkaServer|KafkaServerStartable|broker|controller) startup\. "
                    r"Prepare to shutdown$"),
         _from_trace("server", "startup")),
    Rule("fatal.exit_startup", ("kafka.Kafka$",), ("Exiting Kafka due to fatal exception during startup",),
         re.compile(r"^Exiting Kafka due to fatal exception during startup\.?$"), _from_trace("main", "startup")),
    Rule("fatal.exit", ("kafka.Kafka$",), ("Exiting Kafka due to fatal exception",),
         re.compile(r"^Exiting Kafka due to fatal exception$"), _from_trace("main", None)),
    Rule("fatal.fault", ("org.apache.kafka.server.fault.ProcessTerminatingFaultHandler",), ("Encountered fatal fault",),
         re.compile(r"^Encountered fatal fault: (?P<what>.*)$"), _from_trace("fault_handler", None)),
    Rule("fatal.log_dirs", ("kafka.log.LogManager",), ("Shutdown broker because ",),
         re.compile(r"^Shutdown broker because (?:(?P<all>all) log dirs in (?P<dirs>.*) have failed"
                    r"|none of the specified log dirs from (?P<dirs2>.*) can be created or validated)$"),
         _log_dirs),
    Rule("fatal.halt_shutdown_hook", ("kafka.Kafka$",), ("Halting Kafka.",), re.compile(r"^Halting Kafka\.$"),
         _halted("main", "other")),
    Rule("fatal.halt_dir_offline", ("kafka.server.ReplicaManager",), ("Halting broker because dir ",),
         re.compile(r"^(?:\[ReplicaManager broker=(?P<id>\d+)\] )?Halting broker because dir (?P<dirs>.+) is offline$"),
         _halted("replica_manager", "log_dirs_failed")),
    Rule("fatal.halt_metadata_dir", ("kafka.server.ReplicaManager",), ("Shutdown broker because ",),
         re.compile(r"^(?:\[ReplicaManager broker=(?P<id>\d+)\] )?Shutdown broker because (?:the metadata log dir "
                    r"(?P<dirs>.+) has failed|some log directory has failed during migration mode: (?P<dirs2>.+))$"),
         _halted("replica_manager", "log_dirs_failed")),
    Rule("fatal.halt_disk_error", ("kafka.server.ReplicaFetcherThread", "kafka.server.KafkaApis"), ("Disk error ",),
         re.compile(r"^(?:\[[^\]]*\][,:]? )?Disk error (?:while replicating data(?: for \S+)?\.?|during leadership change\.)$"),
         _halted("disk_error", CAUSE_DISK)),
    Rule("fatal.halt_log_delete", ("kafka.cluster.Partition",), ("Error deleting the log for partition ",),
         re.compile(r"^(?:Partition \[[^\]]*\] on broker \d+: )?Error deleting the log for partition \S+$"),
         _halted("disk_error", CAUSE_DISK)),
    Rule("fatal.halt_hw_checkpoint", ("kafka.server.ReplicaManager",), ("Error writing to highwatermark file",),
         re.compile(r"^(?:\[[^\]]*\][,:]? )?Error writing to highwatermark file: ?$"),
         _halted("disk_error", CAUSE_DISK)),
    Rule("fatal.registration_refused", ("kafka.server.BrokerLifecycleManager",
                                        "org.apache.kafka.server.BrokerLifecycleManager"),
         ("Unable to register broker ", "because the controller returned error "),
         re.compile(_IDENT + r"Unable to register broker (?P<bid>\d+) because the controller returned error "
                    r"(?P<error>[A-Z_]+)$"),
         _registration),
    Rule("fatal.broker_id_node_exists", ("kafka.zk.KafkaZkClient*",), ("Error while creating ephemeral at /brokers/ids/",),
         re.compile(r"^Error while creating ephemeral at /brokers/ids/(?P<bid>\d+), node already exists and owner "
                    r"'(?P<owner>0x[0-9a-f]+)' does not match current session '(?P<mine>0x[0-9a-f]+)'$"),
         _ephemeral),
    # An OutOfMemoryError thrown anywhere (an uncaught exception in a request handler, the log
    # cleaner, a scheduler task): the JVM is past trusting, whatever the logger.
    Rule("fatal.out_of_memory", None, ("OutOfMemoryError",), re.compile(r"OutOfMemoryError"), _oom,
         search=True, thrown=True),
]

