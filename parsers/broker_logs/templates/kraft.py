"""KRaft-mode templates (3.3 to 4.x): the quorum controller and its managers, the Raft
client, and the broker's lifecycle manager.

Controller prefix: ``[QuorumController id=3000] `` (3.5+), ``[Controller 3000] `` (3.3/3.4).
Every controller node replays the metadata log, so record-replay lines (registrations,
fencing, topics) appear once per controller node; ``detail.via`` = ``log`` tells them
from events decoded out of the metadata log itself.
"""
from __future__ import annotations

import re

from parsers.broker_logs.rules import Rule, int_list
from parsers.broker_logs.templates.shapes import remembered, split_topic_partition
from parsers.schema import Event

QC = ("org.apache.kafka.controller.*",)
RAFT = ("org.apache.kafka.raft.*",)
LIFECYCLE = ("kafka.server.BrokerLifecycleManager",)

_Q = r"^\[(?:QuorumController id=|Controller )(?P<cid>\d+)\] "
_BLM = r"^\[BrokerLifecycleManager id=(?P<id>\d+)\] "
_LEADER = r"(?P<l>-?\d+|\(none\))"


def _leader(text: str) -> int:
    return -1 if text == "(none)" else int(text)


def _active(entry, m):
    cid = int(m["cid"])
    return Event("kraft_leader_change", controller_id=cid, controller_epoch=int(m["e"]), subject_broker=cid,
                 detail={"via": "became_active"})


def _renounce(entry, m):
    d = {"via": "renounced", "previous_epoch": int(m["old"]), "renounced_by": int(m["cid"])}
    if m["off"] is not None:
        d["reverted_to_offset"] = int(m["off"])
    return Event("kraft_leader_change", controller_id=_leader(m["l"]), controller_epoch=int(m["e"]), detail=d)


def _write_failed(entry, m):
    """A controller event failed and the active controller renounced (QuorumController.handleEventException)."""
    us = m["us"]
    d = {"operation": m["op"], "exception": m["exc"], "renounced_by": int(m["cid"]),
         "previous_epoch": int(m["e"]) if m["e"] else None, "reverted_to_offset": int(m["off"]),
         "processing_us": int(us) if us is not None else None}
    if m["msg"]:
        d["message"] = m["msg"].strip()
    return Event("kraft_renounce_on_error", controller_id=int(m["cid"]), subject_broker=int(m["cid"]), detail=d)


def _new_epoch(entry, m):
    return Event("kraft_leader_change", controller_id=_leader(m["l"]), controller_epoch=int(m["e"]),
                 detail={"via": "quorum_controller"})


_FROM_EPOCH = re.compile(r"\) from \w+\(.*?\bepoch=(\d+)")


def _raft_detail(entry, **d):
    """A transition line also names the epoch of the state it left ("... from CandidateState(..., epoch=N, ...)")."""
    f = _FROM_EPOCH.search(entry.message)
    if f is not None:
        d["from_epoch"] = int(f.group(1))
    return d


def _raft_leader(entry, m):
    node = int(m["n"])
    return Event("kraft_leader_change", controller_id=node, controller_epoch=int(m["e"]),
                 detail=_raft_detail(entry, via="raft"))


def _raft_follower(entry, m):
    return Event("kraft_leader_change", controller_id=int(m["l"]), controller_epoch=int(m["e"]),
                 detail=_raft_detail(entry, via="raft"))


def _raft_epoch(entry, m):
    """A Raft state without a known leader still names the quorum epoch the node is in (QuorumState.transitionTo)."""
    return Event("kraft_quorum_epoch", controller_epoch=int(m["e"]), subject_broker=int(m["n"]),
                 detail=_raft_detail(entry, state=m["s"]))


def _snapshot_load(entry, m):
    """OffsetControlManager.beginLoadSnapshot / endLoadSnapshot (3.7+): the controller replays a snapshot whose id is
    its end offset and the quorum epoch it was taken in (``<20-digit offset>-<10-digit epoch>``)."""
    return Event("kraft_snapshot_load", controller_id=int(m["cid"]), broker_id=int(m["cid"]),
                 detail={"phase": "start" if m["ph"] == "Starting to load" else "end",
                         "loaded_offset": int(m["off"]), "loaded_epoch": int(m["e"])})


_FEATURE = re.compile(_Q + r"(?:Replayed a FeatureLevelRecord )?(?:(?:[Ss]etting (?:feature (?P<f>\S+)|(?P<mv>metadata[ .]"
                      r"version)) to (?P<lv>\S+?))|removing feature (?P<rf>\S+?))\.?$")


def _feature_level(entry, m):
    """FeatureControlManager.replay(FeatureLevelRecord) (3.5.0 "Setting feature F to N" / "Setting metadata version to
    V"; 3.7.0 .. trunk "Replayed a FeatureLevelRecord setting feature F to N" / "... setting metadata[.]version to V" /
    "... removing feature F"): the feature level in force from this record on (metadata.version: its name, e.g.
    3.5-IV2, as ``version``)."""
    if m["mv"]:
        detail = {"name": "metadata.version", "level": None, "version": m["lv"], "via": "log"}
    elif m["rf"]:
        detail = {"name": m["rf"], "level": 0, "via": "log"}
    else:
        level = m["lv"]
        detail = {"name": m["f"], "level": int(level) if level.lstrip("-").isdigit() else None, "via": "log"}
    return Event("feature_level", controller_id=int(m["cid"]), detail=detail)


def _heartbeat_timeout(entry, m):
    ev = Event("broker_heartbeat_timeout", controller_id=int(m["cid"]), subject_broker=int(m["b"]))
    if m["be"] is not None:
        ev.detail = {"broker_epoch": int(m["be"])}
    return ev


def _unfence_granted(entry, m):
    """BrokerHeartbeatManager (3.x, 4.x): the controller grants the unfence and, in the same step
    (ReplicationControlManager.handleBrokerUnfenced), elects leaders with this broker acceptable."""
    return Event("broker_unfenced", controller_id=int(m["cid"]), subject_broker=int(m["b"]),
                 detail={"broker_epoch": int(m["be"]), "via": "log", "side": "controller_grant"})


_REC_BROKER_ID = re.compile(r"\bbrokerId=(\d+)")
_REC_ID = re.compile(r"\bid=(\d+)")
_REC_EPOCH = re.compile(r"\b(?:brokerEpoch|epoch)=(-?\d+)")
_REC_INCARNATION = re.compile(r"\bincarnationId=([\w-]+)")
_REC_FENCED = re.compile(r"\bfenced=(-?\d+|true|false)")
_REC_SHUTDOWN = re.compile(r"\binControlledShutdown=(-?\d+|true|false)")
_REC_RACK = re.compile(r"\brack=(null|'[^']*'|[^,)]+)")


def _rec_int(rx, text: str) -> int | None:
    m = rx.search(text)
    return int(m.group(1)) if m and m.group(1).lstrip("-").isdigit() else None


def _registered(entry, m):
    rec = m["rec"]
    b = m["b"] or m["b2"] or m["b3"] or m["b4"]
    bid = int(b) if b else _rec_int(_REC_BROKER_ID, rec)
    if bid is None:
        return None
    detail = {"via": "kraft_record", "source": "log", "broker_epoch": _rec_int(_REC_EPOCH, rec)}
    inc = _REC_INCARNATION.search(rec)
    if inc:
        detail["incarnation_id"] = inc.group(1)
    fenced = _REC_FENCED.search(rec)
    if fenced:
        detail["fenced"] = fenced.group(1) == "true"
    rack = _REC_RACK.search(rec)
    if rack and rack.group(1) != "null":
        detail["rack"] = rack.group(1).strip("'")
    if m["b2"] or m["b3"]:
        # 3.3-3.5 "Re-registered broker id N: ..." / 3.6+ "... establishing a new incarnation of broker N"
        # (ClusterControlManager.replay(RegisterBrokerRecord): a registration with another incarnation id)
        detail["new_incarnation"] = True
    return Event("broker_registered", controller_id=int(m["cid"]), subject_broker=bid, detail=detail)


def _new_incarnation(entry, m):
    """3.9.0-rc3 ClusterControlManager.registerBroker: a registration with a new incarnation ID runs
    brokerUncleanShutdownHandler (ReplicationControlManager.handleBrokerUncleanShutdown, with an ELR-capable
    metadata version), whose PartitionChangeRecords take the broker out of every ISR and ELR; the line counts them."""
    b = m["b"] or m["b2"]
    detail = {"via": "log", "cleanup_records": int(m["n"]), "incarnation_id": m["inc"] or m["inc2"]}
    if m["prev"]:
        detail["previous_incarnation_id"] = m["prev"]
    return Event("broker_unclean_shutdown", controller_id=int(m["cid"]), subject_broker=int(b), detail=detail)


def _registration_change(entry, m):
    rec = m["rec"]
    bid = int(m["b"])
    epoch = _rec_int(_REC_EPOCH, rec)
    fenced = _REC_FENCED.search(rec)
    shutdown = _REC_SHUTDOWN.search(rec)
    f = int(fenced.group(1)) if fenced and fenced.group(1).lstrip("-").isdigit() else 0
    s = int(shutdown.group(1)) if shutdown and shutdown.group(1).lstrip("-").isdigit() else 0
    cid = int(m["cid"])
    if f == 1:
        return Event("broker_fenced", controller_id=cid, subject_broker=bid, detail={"broker_epoch": epoch, "via": "log"})
    if f == -1:
        return Event("broker_unfenced", controller_id=cid, subject_broker=bid, detail={"broker_epoch": epoch, "via": "log"})
    return Event("broker_registration_change", controller_id=cid, subject_broker=bid,
                 detail={"broker_epoch": epoch, "fenced": f, "in_controlled_shutdown": s, "via": "log"})


def _fence_record(entry, m):
    rec = m["rec"]
    b = m["b"]
    bid = int(b) if b else (_rec_int(_REC_ID, rec) if "(" in rec else (int(rec) if rec.strip().isdigit() else None))
    if bid is None:
        return None
    event_type = "broker_fenced" if m["how"] in ("Fence", "Fenced") else "broker_unfenced"
    return Event(event_type, controller_id=int(m["cid"]), subject_broker=bid,
                 detail={"broker_epoch": _rec_int(_REC_EPOCH, rec), "via": "log"})


def _unregistered(entry, m):
    rec = m["rec"]
    bid = int(m["b"]) if m["b"] else _rec_int(_REC_BROKER_ID, rec)
    if bid is None:
        return None
    return Event("broker_unregistered", controller_id=int(m["cid"]), subject_broker=bid,
                 detail={"broker_epoch": _rec_int(_REC_EPOCH, rec), "via": "log"})


def _shutdown_granted(entry, m):
    detail = {"side": "controller"}
    if m["what"] == "an immediate shutdown":
        detail["immediate"] = True
    return Event("controlled_shutdown_requested", controller_id=int(m["cid"]), subject_broker=int(m["b"]), detail=detail)


def _shutdown_done(entry, m):
    return Event("controlled_shutdown_result", controller_id=int(m["cid"]), subject_broker=int(m["b"]),
                 detail={"side": "controller", "outcome": "succeeded"})


# The diff a partition change logs, by the name it prints -> the record field it changes
# (leaderEpoch / partitionEpoch are derived by the controller, not record fields).
_DIFF_LIST = {k: re.compile(r"\b" + k + r": \[([\d, ]*)\] -> \[([\d, ]*)\]")
              for k in ("isr", "replicas", "elr", "lastKnownElr")}
_DIFF_INT = {k: re.compile(r"\b" + k + r": (-?\d+) -> (-?\d+)") for k in ("leader", "leaderEpoch", "partitionEpoch")}
# The same fields read in one pass (a search per field was half of the template's time; a KRaft controller logs a
# change per partition per election): the first item of each field is what its own search finds, as no item's text
# (its name, then brackets, digits, commas, spaces, an arrow) holds the start of another field's name.
_DIFF_ITEM = re.compile(r"\b(isr|replicas|elr|lastKnownElr): \[([\d, ]*)\] -> \[([\d, ]*)\]"
                        r"|\b(leader|leaderEpoch|partitionEpoch): (-?\d+) -> (-?\d+)")
_DIFF_ORDER = (*_DIFF_LIST, *_DIFF_INT)
_RECORD_FIELD = {"isr": "isr", "replicas": "replicas", "elr": "eligibleLeaderReplicas", "lastKnownElr": "lastKnownElr",
                 "leader": "leader"}
_DIFF_LRS = re.compile(r"leaderRecoveryState: (\w+) -> (\w+)")


def _read_diff(diff: str) -> dict:
    """A partition change's diff -> {field: (before, after)}, fields in _DIFF_ORDER."""
    found: dict = {}
    for d in _DIFF_ITEM.finditer(diff):
        k = d.group(1)
        if k is not None:
            if k not in found:
                found[k] = (int_list(d.group(2)), int_list(d.group(3)))
        elif d.group(4) not in found:
            found[d.group(4)] = (int(d.group(5)), int(d.group(6)))
    return {k: found[k] for k in _DIFF_ORDER if k in found}


def _own_pairs(got: dict) -> dict:
    return {k: (a[:], b[:]) if type(a) is list else (a, b) for k, (a, b) in got.items()}


# A KRaft controller writes the same diff for many partitions and elections (165 distinct texts among the 20,891
# changes of 0.27 GB of real logs, where reading one was 8 of a change's 11 us): each text is read once; every call
# gets lists of its own, as the events keep them.
diff_values = remembered(_read_diff, _own_pairs)
_DIFF_MEMO = diff_values.memo


def _partition_change(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    diff = m["diff"]
    detail: dict = {"topic_id": m["tid"], "via": "log"}
    values = diff_values(diff)
    changed = [_RECORD_FIELD[k] for k in values if k in _RECORD_FIELD and values[k][0] != values[k][1]]
    lrs = _DIFF_LRS.search(diff)
    if lrs and lrs.group(1) != lrs.group(2):
        changed.append("leaderRecoveryState")
        detail["leader_recovery_state"] = lrs.group(2)
    detail["changed"] = changed
    for k in ("elr", "lastKnownElr"):
        if k in values:
            detail["elr" if k == "elr" else "last_known_elr"] = values[k][1]
    ev = Event("unclean_leader_election" if m["unclean"] else "partition_change", topic=tp[0], partition=tp[1],
               detail=detail)
    if "isr" in values:
        ev.isr = values["isr"][1]
    if "replicas" in values:
        ev.replicas = values["replicas"][1]
    if "leader" in values:
        ev.leader = values["leader"][1]
        detail["previous_leader"] = values["leader"][0]
    if "leaderEpoch" in values:
        ev.leader_epoch = values["leaderEpoch"][1]
    if "partitionEpoch" in values:
        ev.zk_version = values["partitionEpoch"][1]
    return ev


_PREVIOUS = "Previous partition: PartitionRegistration("
_REG_LKE = re.compile(r"\blastKnownElr=\[([\d, ]*)\]")


def _previous_registration(text: str) -> dict:
    """4.x PartitionChangeBuilder states the registration it started from: "Previous partition:
    PartitionRegistration(replicas=[1], isr=[], elr=[1], lastKnownElr=[1], leader=-1, leaderEpoch=49, ...)"."""
    at = text.find(_PREVIOUS)
    if at < 0:
        return {}
    reg = text[at + len(_PREVIOUS):].split("), change record:", 1)[0]
    out: dict = {}
    for key, rx in (("previous_replicas", _REG_REPLICAS), ("previous_isr", _REG_ISR), ("previous_elr", _REG_ELR),
                    ("previous_last_known_elr", _REG_LKE)):
        g = rx.search(reg)
        if g:
            out[key] = int_list(g.group(1))
    for key, rx in (("previous_leader", _REG_LEADER), ("previous_leader_epoch", _REG_LE),
                    ("previous_partition_epoch", _REG_PE)):
        g = rx.search(reg)
        if g:
            out[key] = int(g.group(1))
    return out


def _new_leader(entry, m):
    how = m["how"]
    detail = {"topic_id": m["tid"], "via": "log", **_previous_registration(entry.message)}
    if "unclean" in how:
        return Event("unclean_leader_election", partition=int(m["p"]), leader=int(m["l"]), detail=detail)
    detail["election"] = "elr" if how == "ELR" else how.replace(" election", "").replace("a ", "").replace("an ", "")
    detail["changed"] = ["leader"]
    return Event("partition_change", partition=int(m["p"]), leader=int(m["l"]), detail=detail)


def _topic_created(entry, m):
    return Event("topic_created", controller_id=int(m["cid"]), topic=m["t"], detail={"topic_id": m["tid"], "via": "log"})


def _topic_removed(entry, m):
    return Event("topic_deleted", controller_id=int(m["cid"]), topic=m["t"], detail={"topic_id": m["tid"], "via": "log"})


_REG_REPLICAS = re.compile(r"\breplicas=\[([\d, ]*)\]")
_REG_ISR = re.compile(r"\bisr=\[([\d, ]*)\]")
_REG_ELR = re.compile(r"\belr=\[([\d, ]*)\]")
_REG_LEADER = re.compile(r"\bleader=(-?\d+)")
_REG_LE = re.compile(r"\bleaderEpoch=(-?\d+)")
_REG_PE = re.compile(r"\bpartitionEpoch=(-?\d+)")


def _partition_record(entry, m):
    tp = split_topic_partition(m["tp"])
    reg = m["reg"]
    replicas = _REG_REPLICAS.search(reg)
    isr = _REG_ISR.search(reg)
    leader = _REG_LEADER.search(reg)
    if tp is None or replicas is None or isr is None or leader is None:
        return None
    detail = {"topic_id": m["tid"], "via": "log"}
    elr = _REG_ELR.search(reg)
    if elr:
        detail["elr"] = int_list(elr.group(1))
    le = _REG_LE.search(reg)
    pe = _REG_PE.search(reg)
    return Event("partition_record", controller_id=int(m["cid"]), topic=tp[0], partition=tp[1],
                 replicas=int_list(replicas.group(1)), isr=int_list(isr.group(1)), leader=int(leader.group(1)),
                 leader_epoch=int(le.group(1)) if le else None, zk_version=int(pe.group(1)) if pe else None,
                 detail=detail)


def _lifecycle(event_type: str, **detail):
    def build(entry, m):
        bid = int(m["id"])
        d = dict(detail)
        if m.groupdict().get("be") is not None:
            d["broker_epoch"] = int(m["be"])
        return Event(event_type, subject_broker=bid, detail=d)
    return build


RULES = [
    # --- who leads the metadata quorum -----------------------------------------------------------
    Rule("kraft.becoming_active", QC, ("Becoming the active controller at epoch",),
         re.compile(_Q + r"Becoming the active controller at epoch (?P<e>\d+)"), _active),
    Rule("kraft.renouncing", QC, ("Renouncing the leadership",),
         re.compile(_Q + r"Renouncing the leadership due to a metadata log event\. We were the leader at epoch "
                    r"(?P<old>\d+), but in the new epoch (?P<e>\d+), the leader is " + _LEADER + r"\."
                    r"(?: Reverting to last (?:stable|committed) offset (?P<off>\d+))?"),
         _renounce),
    # 3.6+ EventHandlerExceptionInfo.failureMessage; 3.0-3.5 "<op>: failed with unknown server exception <E> at
    # epoch <n> in <us> us.  [Renouncing leadership and r|R]everting to the last committed offset <o>."
    Rule("kraft.renounce_on_error", QC, ("everting to ", "committed offset"),
         re.compile(_Q + r"(?P<op>[^:\s]+): (?:event )?failed with (?:unknown server exception )?(?P<exc>\w+)"
                    r"(?: \(treated as \w+\))?(?: at epoch (?P<e>\d+))?(?: in (?P<us>\d+) (?:microseconds|us))?\.\s+"
                    r"(?:Renouncing leadership and r|R)everting to (?:the )?last committed offset (?P<off>-?\d+)\."
                    r"(?: Exception message: (?P<msg>.*))?"),
         _write_failed),
    Rule("kraft.snapshot_load.start", QC, ("Starting to load snapshot ",),
         re.compile(_Q + r"(?P<ph>Starting to load) snapshot (?P<off>\d{20})-(?P<e>\d{10})\."), _snapshot_load),
    Rule("kraft.snapshot_load.end", QC, ("Successfully loaded snapshot ",),
         re.compile(_Q + r"(?P<ph>Successfully loaded) snapshot (?P<off>\d{20})-(?P<e>\d{10})\."), _snapshot_load),
    Rule("kraft.new_epoch", QC, ("In the new epoch ",),
         re.compile(_Q + r"In the new epoch (?P<e>\d+), the leader is " + _LEADER + r"\.$"), _new_epoch),
    Rule("kraft.raft_leader", RAFT, ("Completed transition to Leader",),
         re.compile(r"^\[RaftManager (?:id|nodeId)=(?P<n>\d+)\] Completed transition to Leader(?:State)?\(.*?\bepoch=(?P<e>\d+)"),
         _raft_leader),
    Rule("kraft.raft_follower", RAFT, ("Completed transition to FollowerState",),
         re.compile(r"^\[RaftManager (?:id|nodeId)=(?P<n>\d+)\] Completed transition to FollowerState\(fetchTimeoutMs=\d+, "
                    r"epoch=(?P<e>\d+), (?:leader|leaderId)=(?P<l>\d+)"),
         _raft_follower),
    Rule("kraft.raft_epoch", RAFT, ("Completed transition to ",),
         re.compile(r"^\[RaftManager (?:id|nodeId)=(?P<n>\d+)\] Completed transition to "
                    r"(?P<s>CandidateState|ProspectiveState|Unattached\w*|Voted\w*|ResignedState)\(.*?\bepoch=(?P<e>\d+)"),
         _raft_epoch),
    # --- features (FeatureControlManager.replay): 3.3-3.6 "Setting ...", 3.7+ "Replayed a FeatureLevelRecord ..." ---
    Rule("kraft.feature_level", QC, ("Replayed a FeatureLevelRecord ",), _FEATURE, _feature_level),
    Rule("kraft.feature_level.35", QC, ("Setting feature ",), _FEATURE, _feature_level),
    Rule("kraft.metadata_version", QC, ("Setting metadata version to ",), _FEATURE, _feature_level),
    # --- broker registry (ClusterControlManager, BrokerHeartbeatManager, ReplicationControlManager) --
    Rule("kraft.heartbeat_timeout", QC, ("because its session has timed out",),
         re.compile(_Q + r"Fencing broker (?P<b>\d+)(?: at epoch (?P<be>\d+))? because its session has timed out\.$"),
         _heartbeat_timeout),
    Rule("kraft.unfence_granted", QC, ("to unfence has been granted",),
         re.compile(_Q + r"The request from broker (?P<b>\d+) to unfence has been granted because it has caught up "
                    r"with the offset of its register broker record (?P<be>\d+)\.?$"),
         _unfence_granted),
    Rule("kraft.registered", QC, ("RegisterBrokerRecord",),
         re.compile(_Q + r"(?:Replayed initial RegisterBrokerRecord for broker (?P<b>\d+)|Replayed RegisterBrokerRecord "
                    r"establishing a new incarnation of broker (?P<b2>\d+)|Replayed RegisterBrokerRecord modifying the "
                    r"registration for broker (?P<b4>\d+)|Registered new broker|Re-registered broker "
                    r"(?:id (?P<b3>\d+)|incarnation)): "
                    r"(?P<rec>RegisterBrokerRecord\(.*)$"),
         _registered),
    # 3.9+ ClusterControlManager.registerBroker, a new incarnation: handleBrokerUncleanShutdown's records come first
    Rule("kraft.new_incarnation", QC, ("record(s) to clean up previous incarnations",),
         re.compile(_Q + r"(?:Registering a new incarnation of broker (?P<b>\d+)\. Previous incarnation ID was "
                    r"(?P<prev>[\w-]+); new incarnation ID is (?P<inc>[\w-]+)|No previous registration found for "
                    r"broker (?P<b2>\d+)\. New incarnation ID is (?P<inc2>[\w-]+))\.\s+Generated (?P<n>\d+) "
                    r"record\(s\) to clean up previous incarnations\."),
         _new_incarnation),
    Rule("kraft.registration_change", QC, ("Replayed BrokerRegistrationChangeRecord",),
         re.compile(_Q + r"Replayed BrokerRegistrationChangeRecord modifying the registration for broker (?P<b>\d+): "
                    r"(?P<rec>.*)$"),
         _registration_change),
    Rule("kraft.fence_record", QC, ("enceBrokerRecord",),
         re.compile(_Q + r"Replayed (?P<how>Fence|Unfence)BrokerRecord modifying the registration for broker (?P<b>\d+): "
                    r"(?P<rec>.*)$"),
         _fence_record),
    Rule("kraft.fenced.33", QC, ("enced broker: ",),
         re.compile(_Q + r"(?P<how>Fenced|Unfenced) broker: (?P<b>)(?P<rec>.*)$"), _fence_record),
    Rule("kraft.unregistered", QC, ("UnregisterBrokerRecord",),
         re.compile(_Q + r"(?:Replayed UnregisterBrokerRecord modifying the registration for broker (?P<b>\d+)"
                    r"|Unregistered broker): (?P<rec>.*)$"),
         _unregistered),
    Rule("kraft.shutdown_granted", QC, ("has requested and been granted",),
         re.compile(_Q + r"Unfenced broker (?P<b>\d+) has requested and been granted (?P<what>a controlled shutdown|"
                    r"an immediate shutdown)\.$"),
         _shutdown_granted),
    Rule("kraft.shutdown_done", QC, ("to shut down has been granted",),
         re.compile(_Q + r"The request from broker (?P<b>\d+) to shut down has been granted"), _shutdown_done),
    # --- partitions ------------------------------------------------------------------------------
    Rule("kraft.partition_change", QC, ("partition change for ",),
         re.compile(r"^(?:\[[^\]]*\] )?(?P<unclean>UNCLEAN )?partition change for (?P<tp>\S+) with topic ID "
                    r"(?P<tid>[\w-]+): (?P<diff>.*)$"),
         _partition_change),
    Rule("kraft.new_leader", QC, ("Setting new leader for topicId",),
         re.compile(r"^(?:\[[^\]]*\] )?Setting new leader for topicId (?P<tid>[\w-]+), partition (?P<p>\d+) to "
                    r"(?P<l>-?\d+) using (?P<how>ELR|an? \w+ election|\w+ election)"),
         _new_leader),
    Rule("kraft.partition_record", QC, (" with topic ID ", " and PartitionRegistration("),
         re.compile(_Q + r"(?:Replayed PartitionRecord for new partition|Created partition) (?P<tp>\S+) with topic ID "
                    r"(?P<tid>[\w-]+) and PartitionRegistration\((?P<reg>.*)\)\.?$"),
         _partition_record),
    Rule("kraft.topic_created", QC, (" with topic ID ",),
         re.compile(_Q + r"(?:Replayed TopicRecord for topic|Created topic) (?P<t>\S+) with topic ID (?P<tid>[\w-]+)\.$"),
         _topic_created),
    Rule("kraft.topic_removed", QC, (" with ID ",),
         re.compile(_Q + r"(?:Replayed RemoveTopicRecord for topic|Removed topic) (?P<t>\S+) with ID (?P<tid>[\w-]+)\.$"),
         _topic_removed),
    # --- the broker's own view (BrokerLifecycleManager) -------------------------------------------
    Rule("kraft.broker.registered", LIFECYCLE, ("Successfully registered broker",),
         re.compile(_BLM + r"Successfully registered broker \d+ with broker epoch (?P<be>-?\d+)$"),
         _lifecycle("broker_registered", via="broker_self", mode="kraft")),
    Rule("kraft.broker.shutdown_begin", LIFECYCLE, ("Beginning controlled shutdown",),
         re.compile(_BLM + r"Beginning controlled shutdown\.$"), _lifecycle("controlled_shutdown_requested", side="broker")),
    Rule("kraft.broker.shutdown_exit", LIFECYCLE, ("asked us to exit controlled shutdown",),
         re.compile(_BLM + r"The controller has asked us to exit controlled shutdown\.$"),
         _lifecycle("controlled_shutdown_result", side="broker", outcome="succeeded")),
    Rule("kraft.broker.unfenced", LIFECYCLE, ("The broker has been unfenced",),
         re.compile(_BLM + r"The broker has been unfenced\."), _lifecycle("broker_unfenced", side="broker", via="log")),
]
