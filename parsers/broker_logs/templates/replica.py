"""Broker-side partition templates: the leader changing the ISR, a broker becoming leader or
follower, LeaderAndIsr requests as received, requests from a stale controller.
server.log (``kafka.cluster.Partition``, ``kafka.server.ReplicaManager``) and the broker
half of state-change.log, 0.8 to 4.x.
"""
from __future__ import annotations

import re

from parsers.broker_logs.rules import Rule, int_list
from parsers.broker_logs.templates.shapes import request_partition_state, split_topic_partition
from parsers.schema import Event

PARTITION = ("kafka.cluster.Partition",)
BROKER_SC = ("state.change.logger", "kafka.server.ReplicaManager")

# "Partition [t,0] on broker 1: " (0.8-0.11) or "[Partition t-0 broker=1] " (1.0+)
_PART = r"^(?:Partition (?P<ptp0>\[[^\]]*\]) on broker (?P<b0>\d+): |\[Partition (?P<ptp1>\S+) broker=(?P<b1>\d+)\] )"
# "Broker 1 " (0.8-0.11) or "[Broker id=1] " (1.0+); the verb after it is lower / upper case
_BRK = r"^(?:Broker (?P<b0>\d+) |\[Broker id=(?P<b1>\d+)\] )"
_OUT_OF_SYNC = re.compile(r"brokerId: (\d+)")
_OUT_OF_SYNC_LEO = re.compile(r"brokerId: (\d+), endOffset: (-?\d+)")
_LEADER_OFFSETS = re.compile(r"Leader: \(highWatermark: (-?\d+), endOffset: (-?\d+)\)")


def _broker(m) -> int:
    d = m.groupdict()
    return int(d.get("b0") or d.get("b1"))


def _prefix_tp(m) -> str:
    return m["ptp0"] or m["ptp1"]


def _topic_id(text: str | None) -> str | None:
    if not text:
        return None
    return text[5:-1] if text.startswith("Some(") and text.endswith(")") else text


def _isr_change(entry, m):
    tp = split_topic_partition(_prefix_tp(m))
    if tp is None:
        return None
    event_type = "isr_shrink" if m["what"] == "Shrinking" else "isr_expand"
    detail = {"old_isr": int_list(m["old"])}
    if m["rest"]:
        oos = m["rest"].split("Out of sync replicas:", 1)[-1]
        detail["out_of_sync"] = [int(x) for x in _OUT_OF_SYNC.findall(oos)]
        # 2.x+ print the offsets: what the followers being dropped lacked, for data-loss estimates
        leo = _OUT_OF_SYNC_LEO.findall(oos)
        if leo:
            detail["out_of_sync_end_offsets"] = {b: int(o) for b, o in leo}
        lo = _LEADER_OFFSETS.search(m["rest"])
        if lo:
            detail["high_watermark"], detail["leader_end_offset"] = int(lo.group(1)), int(lo.group(2))
    return Event(event_type, broker_id=_broker(m), topic=tp[0], partition=tp[1], isr=int_list(m["new"]), detail=detail)


def _isr_updated(entry, m):
    tp = split_topic_partition(_prefix_tp(m))
    if tp is None:
        return None
    ev = Event("isr_updated", broker_id=_broker(m), topic=tp[0], partition=tp[1], isr=int_list(m["isr"]),
               zk_version=int(m["v"]), detail={"side": "leader"})
    if m["umi"]:
        ev.detail["under_min_isr"] = True
    return ev


def _started_as_leader(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    b = _broker(m)
    detail = {"offset": int(m["off"]), "previous_leader_epoch": int(m["ple"])}
    d = m.groupdict()
    if d.get("hw") is not None:
        detail["high_watermark"] = int(d["hw"])
    if d.get("tid"):
        detail["topic_id"] = _topic_id(d["tid"])
    ev = Event("become_leader", broker_id=b, topic=tp[0], partition=tp[1], leader=b, leader_epoch=int(m["le"]),
               detail=detail)
    if d.get("isr") is not None:
        ev.isr = int_list(d["isr"])
    if d.get("pe") is not None:
        ev.zk_version = int(d["pe"])
    if d.get("umi"):
        detail["under_min_isr"] = True
    if d.get("pl") is not None:
        # Partition.makeLeader logs the leader it knew before taking the new epoch (3.x-4.x: the line is written
        # before leaderReplicaIdOpt and leaderEpoch are updated; makeFollower's line is written after, so its
        # "previous" values are the new ones and are not kept)
        detail["previous_leader"] = int(d["pl"])
    return ev


def _started_as_follower(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    d = m.groupdict()
    detail = {"offset": int(m["off"]), "previous_leader_epoch": int(m["ple"]), "high_watermark": int(m["hw"])}
    ev = Event("become_follower", broker_id=_broker(m), topic=tp[0], partition=tp[1], leader_epoch=int(m["le"]),
               detail=detail)
    if d.get("leader") is not None:
        ev.leader = int(d["leader"])
    if d.get("pe") is not None:
        ev.zk_version = int(d["pe"])
    return ev


def _follower_fetcher(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    ev = Event("become_follower", broker_id=_broker(m), topic=tp[0], partition=tp[1], controller_id=int(m["c"]),
               controller_epoch=int(m["ce"]), detail={"correlation_id": int(m["corr"])})
    leader = m["leader"] or m["leader2"]
    if leader is not None:
        ev.leader = int(leader)
    return ev


def _leader_and_isr_received(entry, m):
    state = request_partition_state(m["state"]) or {}
    topic = partition = None
    if m["tp"] is not None:
        tp = split_topic_partition(m["tp"])
        if tp is None:
            return None
        topic, partition = tp
    elif "topic" in state:
        topic, partition = state["topic"], state["partition"]
    detail = {"correlation_id": int(m["corr"])}
    if state.get("state_controller_epoch") is not None:
        detail["state_controller_epoch"] = state["state_controller_epoch"]
    return Event("leader_and_isr_received", broker_id=_broker(m), topic=topic, partition=partition,
                 controller_id=int(m["c"]), controller_epoch=int(m["ce"]), leader=state.get("leader"),
                 isr=state.get("isr"), leader_epoch=state.get("leader_epoch"), zk_version=state.get("zk_version"),
                 replicas=state.get("replicas"), detail=detail)


def _follower_leader_unavailable(entry, m):
    """The controller sent a leader this broker's metadata cache does not hold alive: -1 is 'no leader'."""
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    detail = {"correlation_id": int(m["corr"]), "leader_unavailable": True}
    if m["sce"] is not None:
        detail["state_controller_epoch"] = int(m["sce"])
    return Event("leader_and_isr_received", broker_id=_broker(m), topic=tp[0], partition=tp[1],
                 controller_id=int(m["c"]), controller_epoch=int(m["ce"]), leader=int(m["leader"]), detail=detail)


def _skipped_become(entry, m):
    """Partition.makeLeader / makeFollower (2.4+; KRaft 3.x-4.x): an unchanged leader epoch is not taken up again, but
    the partition state the broker was handed (a new ISR or partition epoch: an ISR-only PartitionChangeRecord in
    KRaft) is printed whole."""
    state = request_partition_state(m["state"]) or {}
    tp = split_topic_partition(m["tp"])
    if tp is None or state.get("leader") is None:
        return None
    detail = {"skipped": m["role"]}
    if m["tid"]:
        detail["topic_id"] = _topic_id(m["tid"])
    if state.get("state_controller_epoch") is not None:
        detail["state_controller_epoch"] = state["state_controller_epoch"]
    return Event("leader_and_isr_received", broker_id=_broker(m), topic=tp[0], partition=tp[1], leader=state["leader"],
                 isr=state.get("isr"), leader_epoch=state.get("leader_epoch"), zk_version=state.get("zk_version"),
                 replicas=state.get("replicas"), detail=detail)


def _same_epoch_ignored(entry, m):
    """ReplicaManager.becomeLeaderOrFollower ignores a partition whose request carries the leader epoch the broker
    already holds: 0.8.2.2-0.10.0 "... is old. Current leader epoch is C", 0.10.1.0-2.3 "... is not higher than the current
    leader epoch C" (WARN, for E <= C), 2.4.0+ "... matches the current leader epoch" (DEBUG in 2.4, INFO from 2.6).
    The request's leader epoch is the controller's context for the partition (2.8.0
    ControllerChannelManager.addLeaderAndIsrRequestForBrokers sends controllerContext.partitionLeadershipInfo), so where
    E equals the broker's own the line states the partition's leader epoch then. A request behind the broker (E < C)
    states an older context, not the partition's state: no event."""
    tp = split_topic_partition(m["tp"])
    le = int(m["le"])
    cur = m["cur"] or m["cur2"]
    if tp is None or cur is not None and int(cur) != le:
        return None
    # the sender's controller epoch is kept aside: the line says nothing of the epoch that wrote the state, and a
    # request handled later than sent is no evidence of which controller was in office when (folders.clusters)
    return Event("leader_and_isr_received", broker_id=_broker(m), topic=tp[0], partition=tp[1], leader_epoch=le,
                 detail={"correlation_id": int(m["corr"]), "ignored": "same leader epoch",
                         "sender": int(m["c"]), "sender_epoch": int(m["ce"])})


_REQUEST_NAMES = {"LeaderAndIsr": "LeaderAndIsr", "StopReplica": "StopReplica", "stop replica": "StopReplica",
                  "update metadata": "UpdateMetadata", "UpdateMetadata": "UpdateMetadata"}


def _stale_controller(entry, m):
    d = m.groupdict()
    sender = d["c1"] or d["c2"]
    epoch = d["e1"] or d["e2"] or d["e3"]
    corr = d["corr"] or d["corr2"]
    detail = {"latest_epoch": int(m["latest"]), "request": _REQUEST_NAMES[m["kind"]]}
    if corr:
        detail["correlation_id"] = int(corr)
    ev = Event("stale_controller_request", controller_id=int(sender) if sender else None, controller_epoch=int(epoch),
               detail=detail)
    head = re.match(_BRK, entry.message)
    if head:
        ev.broker_id = _broker(head)
    return ev


RULES = [
    Rule("replica.isr_change", PARTITION, ("ing ISR ",),
         re.compile(_PART + r"(?P<what>Shrinking|Expanding) ISR (?:for partition \S+ )?from (?P<old>[\d,]*) to "
                    r"(?P<new>[\d,]*)(?P<rest>\. Leader: .*)?$"),
         _isr_change),
    Rule("replica.isr_updated", PARTITION, ("ISR updated to",),
         re.compile(_PART + r"ISR updated to \[?(?P<isr>[\d,]*)\]?(?P<umi> \(under-min-isr\))? +and (?:zkVersion|version) "
                    r"updated to \[?(?P<v>-?\d+)\]?$"),
         _isr_updated),
    Rule("replica.starts_as_leader.partition", PARTITION, ("starts at ",),
         re.compile(_PART + r"(?P<tp>\S+) starts at [Ll]eader [Ee]poch (?P<le>-?\d+) from offset (?P<off>-?\d+)"
                    r"(?: with high watermark (?P<hw>-?\d+))?\. Previous [Ll]eader [Ee]poch was:? (?P<ple>-?\d+)\.?$"),
         _started_as_leader),
    Rule("replica.leader_starts", ("state.change.logger",), ("] Leader ", " starts at leader epoch "),
         re.compile(r"^\[Broker id=(?P<b1>\d+)\] Leader (?P<tp>\S+) (?:with topic id (?P<tid>\S+) )?starts at "
                    r"leader epoch (?P<le>-?\d+) from offset (?P<off>-?\d+) with (?:partition epoch (?P<pe>-?\d+), )?"
                    r"high watermark (?P<hw>-?\d+),? ISR \[?(?P<isr>[\d, ]*)\]?,? (?:addingReplicas|adding replicas) .*?"
                    r"(?P<umi>\(under-min-isr\))? ?\.? ?Previous leader (?:(?:None|Some\((?P<pl>-?\d+)\)) and previous "
                    r"leader )?epoch was (?P<ple>-?\d+)\.?$"),
         _started_as_leader),
    Rule("replica.follower_starts", ("state.change.logger",), ("] Follower ", " starts at leader epoch "),
         re.compile(r"^\[Broker id=(?P<b1>\d+)\] Follower (?P<tp>\S+) starts at leader epoch (?P<le>-?\d+) from "
                    r"offset (?P<off>-?\d+) with (?:partition epoch (?P<pe>-?\d+) and )?high watermark (?P<hw>-?\d+)\."
                    r"(?: Current leader is (?P<leader>-?\d+)\.)? Previous leader (?:(?:None|Some\(-?\d+\)) and previous "
                    r"leader )?epoch was (?P<ple>-?\d+)\.?$"),
         _started_as_follower),
    Rule("replica.follower_fetcher", BROKER_SC, ("tarted fetcher to new leader as part of become-follower",),
         re.compile(_BRK + r"[Ss]tarted fetcher to new leader as part of become-follower request from controller "
                    r"(?P<c>\d+) epoch (?P<ce>\d+) with correlation id (?P<corr>\d+) for partition (?P<tp>\S+)"
                    r"(?: with leader (?:(?P<leader>-?\d+)|BrokerEndPoint\(id=(?P<leader2>-?\d+)[^)]*\)))?$"),
         _follower_fetcher),
    Rule("replica.leader_and_isr_received", BROKER_SC, ("eceived LeaderAndIsr request ",),
         re.compile(_BRK + r"[Rr]eceived LeaderAndIsr request (?P<state>.*) correlation id (?P<corr>\d+) from controller "
                    r"(?P<c>\d+) epoch (?P<ce>\d+)(?: for partition (?P<tp>\S+))?$"),
         _leader_and_isr_received),
    # ReplicaManager.makeFollowers (0.9.0.0 .. 3.x): "... but cannot become follower since the new leader N is
    # unavailable" (0.9-0.11 "Broker N received ...", 1.0+ "[Broker id=N] Received ... (last update controller epoch E)")
    Rule("replica.follower_leader_unavailable", BROKER_SC, ("cannot become follower since the new leader",),
         re.compile(_BRK + r"[Rr]eceived LeaderAndIsrRequest with correlation id (?P<corr>\d+) from controller (?P<c>\d+) "
                    r"epoch (?P<ce>\d+) for partition (?P<tp>\S+) (?:\(last update controller epoch (?P<sce>\d+)\) )?"
                    r"but cannot become follower since the new leader (?P<leader>-?\d+) is unavailable\.?$"),
         _follower_leader_unavailable),
    Rule("replica.skipped_become", BROKER_SC, ("Skipped the become-", "partition state LeaderAndIsrPartitionState("),
         re.compile(_BRK + r"Skipped the become-(?P<role>leader|follower) state change for (?P<tp>\S+) "
                    r"(?:with topic id (?P<tid>\S+) )?and partition state (?P<state>LeaderAndIsrPartitionState\(.*?\)) "
                    r"since .*$"),
         _skipped_become),
    Rule("replica.same_epoch_ignored", BROKER_SC, ("gnoring LeaderAndIsr request from controller ",
                                                   " since its associated leader epoch "),
         re.compile(_BRK + r"[Ii]gnoring LeaderAndIsr request from controller (?P<c>\d+) with correlation id "
                    r"(?P<corr>\d+) epoch (?P<ce>\d+) for partition (?P<tp>\S+) since its associated leader epoch "
                    r"(?P<le>-?\d+) (?:matches the current leader epoch|is not higher than the current leader epoch "
                    r"(?P<cur>-?\d+)|is old\. Current leader epoch is (?P<cur2>-?\d+))$"),
         _same_epoch_ignored),
    Rule("replica.stale_controller", BROKER_SC, ("Latest known controller epoch is",),
         re.compile(r"(?P<kind>LeaderAndIsr|StopReplica|stop replica|update metadata|UpdateMetadata) request"
                    r"(?: \(delete=\w+\))? (?:from controller (?P<c1>\d+) with correlation id (?P<corr>\d+) since its "
                    r"controller epoch (?P<e1>\d+) is old|with correlation id (?P<corr2>\d+) from an old controller "
                    r"(?P<c2>\d+) with epoch (?P<e2>\d+)|from an old controller epoch (?P<e3>\d+))\.? ?Latest known "
                    r"controller epoch is (?:%d ?)?(?P<latest>\d+)"),
         _stale_controller, search=True),
]
