"""server.log templates about the broker itself: start-up and shutdown, registration in
ZooKeeper, controlled shutdown as the broker sees it, its ZooKeeper session, the
configuration and version it logged at start-up, failed log directories.
0.8 to 4.x; KRaft-only broker lines (BrokerLifecycleManager) are in ``kraft.py``.
"""
from __future__ import annotations

import re

from parsers.broker_logs.rules import Rule
from parsers.broker_logs.templates.shapes import tp_list
from parsers.schema import Event

SERVER = ("kafka.server.KafkaServer", "kafka.server.BrokerServer")
ZK_CLIENT = ("org.apache.zookeeper.ClientCnxn*",)

_SERVER_IDENT = r"^(?:\[(?:Kafka Server |KafkaServer id=|BrokerServer id=)(?P<id>\d+)\],? )?"


def _id(m) -> int | None:
    g = m.groupdict().get("id")
    return int(g) if g is not None else None


_LIFECYCLE = {
    "starting": ("broker_startup", "starting"),
    "Starting broker": ("broker_startup", "starting"),
    "started": ("broker_startup", "started"),
    "Transition from STARTING to STARTED": ("broker_startup", "started"),
    "shutting down": ("broker_shutdown_started", None),
    "shut down completed": ("broker_shutdown_completed", None),
}


def _lifecycle(entry, m):
    event_type, phase = _LIFECYCLE[m["what"]]
    kraft = "BrokerServer" in entry.message[:20] or (entry.logger or "").endswith("BrokerServer")
    detail = {"mode": "kraft" if kraft else "zk"}
    if phase:
        detail["phase"] = phase
    return Event(event_type, subject_broker=_id(m), detail=detail)


def _registered_self(entry, m):
    detail = {"via": "broker_self", "endpoints": m["ep"].strip()}
    if m["epoch"] is not None:
        detail["broker_epoch"] = int(m["epoch"])
    return Event("broker_registered", subject_broker=int(m["id"]), detail=detail)


def _controlled_shutdown(entry, m):
    d = m.groupdict()
    bid = _id(m)
    if d["start"]:
        return Event("controlled_shutdown_requested", subject_broker=bid, detail={"side": "broker"})
    if d["ok"]:
        return Event("controlled_shutdown_result", subject_broker=bid, detail={"side": "broker", "outcome": "succeeded"})
    if d["k"] is not None:
        return Event("controlled_shutdown_result", subject_broker=bid,
                     detail={"side": "broker", "outcome": "partitions_remaining", "remaining": int(d["k"])})
    if d["retry"]:
        detail = {"side": "broker", "outcome": "retrying"}
        if d["left"] is not None:
            detail["retries_left"] = int(d["left"])
        return Event("controlled_shutdown_result", subject_broker=bid, detail=detail)
    if d["unclean"]:
        return Event("controlled_shutdown_result", subject_broker=bid, detail={"side": "broker", "outcome": "failed_unclean"})
    return None  # "Error during controlled shutdown ...": the retry or give-up line follows


def _remaining(entry, m):
    parts = tp_list(m["rem"])
    return Event("controlled_shutdown_result", subject_broker=_id(m),
                 detail={"side": "broker", "outcome": "partitions_remaining", "remaining": len(parts), "partitions": parts})


def _zk_established(entry, m):
    return Event("zk_session_established", session_id=int(m["session"], 16),
                 detail={"session": m["session"], "timeout_ms": int(m["timeout"]), "server": m["server"]})


def _zk_expired(entry, m):
    if m["closing"]:
        return None  # the same expiry, logged a second time while closing the socket
    return Event("zk_session_expired", session_id=int(m["session"], 16), detail={"session": m["session"], "via": "zk_client"})


def _zk_client_closing(entry, m):
    return Event("zk_session_closing", detail={"client": m["name"] or "", "via": "zookeeper_client"})


def _zk_session_closed(entry, m):
    return Event("zk_session_closing", session_id=int(m["session"], 16), detail={"session": m["session"],
                                                                               "via": "zk_library"})


def _zk_lost(cause_from_line: bool):
    def build(entry, m):
        session = m["session"]
        if int(session, 16) == 0:
            return None  # no session yet: a connection attempt failing, not a loss
        if cause_from_line:
            ms = m.groupdict().get("ms")
            cause = f"no response from the server for {ms} ms" if ms else m["cause"]
        else:
            first = next((line.strip() for line in entry.continuation if line.strip()), "")
            if first.startswith("java.net.ConnectException") or not first:
                return None  # reconnect attempts while the server is down: the loss was logged before
            cause = first[:300]
        return Event("zk_disconnected", session_id=int(session, 16), detail={"session": session, "cause": cause})
    return build


_CONFIG_KEYS = frozenset((
    "broker.id", "node.id", "unclean.leader.election.enable", "min.insync.replicas", "auto.leader.rebalance.enable",
    "leader.imbalance.check.interval.seconds", "leader.imbalance.per.broker.percentage", "controlled.shutdown.enable",
    "controlled.shutdown.max.retries", "controlled.shutdown.retry.backoff.ms", "zookeeper.session.timeout.ms",
    "broker.session.timeout.ms", "replica.lag.time.max.ms", "default.replication.factor", "broker.rack",
    "process.roles", "inter.broker.protocol.version", "reserved.broker.max.id", "broker.id.generation.enable",
))


def _kafka_config(entry, m):
    config: dict[str, str] = {}
    for line in entry.continuation:
        key, sep, value = line.strip().partition(" = ")
        if sep and key in _CONFIG_KEYS:
            config[key] = value
    if not config:
        return None
    subject = None
    for key in ("broker.id", "node.id"):
        v = config.get(key)
        if v is not None and v.lstrip("-").isdigit() and int(v) >= 0:
            subject = int(v)
            break
    event = Event("broker_config", subject_broker=subject, detail={"config": dict(sorted(config.items()))})
    chroot = zk_chroot(entry.continuation)
    if chroot is None:
        return event
    return [event, Event("cluster_identity", subject_broker=subject, detail={"zk_chroot": chroot, "via": "config"})]


def zk_chroot(lines) -> str | None:
    """The ZooKeeper chroot of a ``zookeeper.connect = h1:2181,h2:2181/path`` line of a configuration dump ('/' for
    none; None when the dump names no ZooKeeper): everything from the first '/' on, as the broker reads it (2.7.0
    ``KafkaServer.initZkClient``: ``config.zkConnect.substring(chrootIndex)``)."""
    for line in lines:
        key, sep, value = line.strip().partition(" = ")
        if sep and key == "zookeeper.connect":
            value = value.strip()
            if not value or value == "null":
                return None
            slash = value.find("/")
            return "/" if slash < 0 else (value[slash:].rstrip("/") or "/")
    return None


def _kafka_version(entry, m):
    return Event("kafka_version", detail={"version": m["v"]})


def _log_dir_offline(entry, m):
    return Event("log_dir_failure", subject_broker=int(m["id"]),
                 detail={"side": "broker", "dir": m["dir"].strip(), "via": "replica_manager"})


_FAILED_DIR = re.compile(r"(?:in (?:log )?dir|data directory) (\S+)|checkpoint file (\S+)[/\\]")


def _log_dir_channel(entry, m):
    # Every error this logger writes marks a log directory offline (LogDirFailureChannel).
    msg = m["msg"]
    detail = {"side": "broker", "via": "failure_channel", "message": msg[:300]}
    d = _FAILED_DIR.search(msg)
    if d:
        detail["dir"] = d.group(1) or d.group(2)
    return Event("log_dir_failure", detail=detail)


RULES = [
    Rule("broker.lifecycle", SERVER, (),
         re.compile(_SERVER_IDENT + r"(?P<what>starting|started|shutting down|shut down completed|Starting broker"
                    r"|Transition from STARTING to STARTED)$"),
         _lifecycle),
    Rule("broker.registered_self", ("kafka.utils.ZkUtils*", "kafka.zk.KafkaZkClient*"), ("Registered broker ",),
         re.compile(r"^Registered broker (?P<id>\d+) at path /brokers/ids/\d+ with address(?:es)?:? (?P<ep>.*?)"
                    r"(?:, czxid \(broker epoch\): (?P<epoch>-?\d+))?\.?$"),
         _registered_self),
    Rule("broker.controlled_shutdown", SERVER, ("ontrolled shutdown",),
         re.compile(_SERVER_IDENT + r"(?:(?P<start>Starting controlled shutdown)"
                    r"|(?P<ok>Controlled shutdown succeeded|Controlled shutdown request returned successfully after \d+ ?ms)"
                    r"|Controlled shutdown request returned after \d+ ?ms with (?P<k>\d+) partitions remaining to move"
                    r"|(?P<retry>Retrying controlled shutdown)(?: after the previous attempt failed\.\.\.| \((?P<left>\d+) "
                    r"retries remaining\))"
                    r"|(?P<unclean>Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed)"
                    r"|(?P<err>Error during controlled shutdown, .*))$"),
         _controlled_shutdown),
    Rule("broker.controlled_shutdown.remaining", SERVER, ("Remaining partitions to move:",),
         re.compile(_SERVER_IDENT + r"Remaining partitions to move: ?(?P<rem>.*)$"), _remaining),
    # --- ZooKeeper session, from the ZooKeeper client library (same wording 3.4 - 3.8) --------------
    Rule("broker.zk.established", ZK_CLIENT, ("Session establishment complete",),
         re.compile(r"Session establishment complete on server (?P<server>\S+), session ?id = (?P<session>0x[0-9a-f]+), "
                    r"negotiated timeout = (?P<timeout>\d+)"),
         _zk_established, search=True),
    Rule("broker.zk.expired", ZK_CLIENT, ("Unable to reconnect to ZooKeeper service",),
         re.compile(r"Unable to reconnect to ZooKeeper service, session (?P<session>0x[0-9a-f]+) has expired"
                    r"(?P<closing>, closing socket connection)?$"),
         _zk_expired, search=True),
    Rule("broker.zk.timed_out", ZK_CLIENT, ("Client session timed out",),
         re.compile(r"Client session timed out, have not heard from server in (?P<ms>\d+) ?ms for session ?id "
                    r"(?P<session>0x[0-9a-f]+)(?P<cause>)"),
         _zk_lost(True), search=True),
    Rule("broker.zk.server_closed", ZK_CLIENT, ("Unable to read additional data from server",),
         re.compile(r"Unable to read additional data from server session ?id (?P<session>0x[0-9a-f]+), "
                    r"(?P<cause>likely server has closed socket)"),
         _zk_lost(True), search=True),
    # Declined by the session id and the first line of the exception that is not blank (the refused reconnects while
    # the server is down): declines_by_head, as ~52,000 such entries in 0.27 GB of real logs each tried it.
    Rule("broker.zk.socket_closed", ZK_CLIENT, ("Session 0x",),
         re.compile(r"Session (?P<session>0x[0-9a-f]+) for se(?:r)?ver (?P<server>.*?), (?:unexpected error, closing "
                    r"socket connection and attempting reconnect|Closing socket connection\. Attempting reconnect except "
                    r"it is a SessionExpiredException\.)$"),
         _zk_lost(False), search=True, declines_by_head=True),
    # The broker closing a ZooKeeper client (KafkaServer.shutdown closes its own last, after the authorizer's): its
    # ephemeral /brokers/ids registration goes with the session. Kafka's client (1.1+ ZooKeeperClient.close) logs
    # before the close; the ZooKeeper library (ZooKeeper.close, 3.4 - 3.8) after the server ended the session.
    Rule("broker.zk.client_closing", ("kafka.zookeeper.ZooKeeperClient",), ("Closing.",),
         re.compile(r"^\[ZooKeeperClient(?: (?P<name>[^\]]+))?\] Closing\.$"), _zk_client_closing),
    Rule("broker.zk.session_closed", ("org.apache.zookeeper.ZooKeeper",), ("Session: 0x",),
         re.compile(r"^Session: (?P<session>0x[0-9a-f]+) closed$"), _zk_session_closed),
    # --- what the broker logged about itself at start-up -------------------------------------------
    Rule("broker.kafka_version", ("org.apache.kafka.common.utils.AppInfoParser",), ("Kafka version",),
         re.compile(r"^Kafka version ?: ?(?P<v>\S+)$"), _kafka_version),
    Rule("broker.kafka_config", ("kafka.server.KafkaConfig",), ("KafkaConfig values:",),
         re.compile(r"^KafkaConfig values:\s*$"), _kafka_config),
    Rule("broker.log_dir_offline", ("kafka.server.ReplicaManager",), ("Stopping serving replicas in dir",),
         re.compile(r"^\[ReplicaManager broker=(?P<id>\d+)\] Stopping serving replicas in dir (?P<dir>.+)$"),
         _log_dir_offline),
    Rule("broker.log_dir_failure_channel",
         ("kafka.server.LogDirFailureChannel", "org.apache.kafka.storage.internals.log.LogDirFailureChannel"), (),
         re.compile(r"^(?P<msg>.+)$"), _log_dir_channel),
]
