"""state-change.log templates, controller side: the partition and replica state machines,
failed elections, the leader/ISR writes outside elections, and the partition state
machine's start-up dump. 0.8 to 3.9 (ZooKeeper mode).

Controller-side prefixes: ``Controller 1 epoch 3 `` (0.8-0.11), ``[Controller id=1 epoch=3] ``
(1.0+; 1.0 also ``[Controller id=1] `` on a few lines; 2.x repeats the old text after
the prefix on error lines).
"""
from __future__ import annotations

import re

from parsers.broker_logs.rules import Rule, int_list
from parsers.schema import Event, EventRun
from parsers.broker_logs.templates.shapes import (
    ident_id,
    request_partition_state,
    leader_and_isr,
    leader_isr_epoch,
    leader_json,
    remembered,
    split_topic_partition,
    state_dump,
)

SC = ("state.change.logger",)
CONTROLLER = ("kafka.controller.*",)

_P = (r"^(?:\[Controller id=(?P<cid>\d+)(?: epoch=(?P<ce>\d+))?\] (?:Controller \d+ epoch \d+ )?"
      r"|Controller (?P<cid0>\d+) epoch (?P<ce0>\d+) )")


def _ids(m) -> tuple[int | None, int | None]:
    """The controller id and epoch of _P's prefix (every pattern calling this starts with _P: four groups read by
    name, not a dict of all the match's groups per entry)."""
    cid = m["cid"] or m["cid0"]
    ce = m["ce"] or m["ce0"]
    return (int(cid) if cid else None, int(ce) if ce else None)


def _base(event_type: str, m, tp_text: str) -> Event | None:
    tp = split_topic_partition(tp_text)
    if tp is None:
        return None
    cid, ce = _ids(m)
    return Event(event_type, controller_id=cid, controller_epoch=ce, topic=tp[0], partition=tp[1])


def _changed_partition(entry, m):
    ev = _base("partition_state_change", m, m["tp"])
    if ev is None:
        return None
    ev.from_state, ev.to_state = m["from"], m["to"]
    if m["lai"] is not None:
        f = leader_and_isr(m["lai"])
        if f is None:
            return None
        ev.leader, ev.leader_epoch, ev.isr, ev.zk_version = f["leader"], f["leader_epoch"], f["isr"], f["zk_version"]
        if "leader_recovery_state" in f:
            ev.detail = {"leader_recovery_state": f["leader_recovery_state"]}
    elif m["leader"] is not None:
        ev.leader = int(m["leader"])
    elif m["ar"] is not None:
        ev.replicas = int_list(m["ar"])
    return ev


_STRATEGY = re.compile(r"under strategy (\w+(?:\((?:true|false)\))?)")
_NO_LIVE_ISR = re.compile(r"No (?:broker|replica) in ISR for partition \S+ is alive\. Live brokers are: \[([^\]]*)\], "
                          r"ISR brokers are: \[([^\]]*)\]")
_NO_STATE = re.compile(r"LeaderAndIsr information doesn't exist for partition ")
_NO_LIVE_REPLICA = re.compile(r"No replica for partition \S+ is alive\. Live brokers are: \[([^\]]*)\], "
                              r"Assigned replicas are: \[([^\]]*)\]")
_SHUTTING_DOWN = re.compile(r"No other replicas in ISR ([\d,]*) for \S+ besides shutting down brokers ([\d,]*)")
_EXC_LINE = re.compile(r"([\w.$]+(?:Exception|Error)): (.*)")

# What a failed election under each strategy means (Election.scala): the offline strategy
# picks the first assigned replica that is live and in the ISR (any live one when unclean).
_STRATEGY_REASON = {
    "OfflinePartitionLeaderElectionStrategy(false)": "no_live_isr",
    "OfflinePartitionLeaderElectionStrategy(true)": "no_live_replica",
    "ControlledShutdownPartitionLeaderElectionStrategy": "other",
    "ReassignPartitionLeaderElectionStrategy": "other",
    "PreferredReplicaPartitionLeaderElectionStrategy": "other",
}


def _exception_detail(entry) -> dict:
    """The cause of a failed state change, from the exception on the continuation lines."""
    return exception_cause("\n".join(line for line in entry.continuation[:6] if line.strip())[:4000])


# Read once per text: a controller that cannot elect writes the same exception for many partitions (1,236 distinct
# among 9,568 failed elections of 0.27 GB of real logs, reading one 6.5 us).
@remembered
def exception_cause(text: str) -> dict:
    """The exception's first lines (blank ones left out) -> exception, message, strategy, reason and what it names."""
    detail: dict = {}
    exc = _EXC_LINE.search(text)
    if exc:
        detail["exception"] = exc.group(1).rsplit(".", 1)[-1]
        detail["message"] = exc.group(2).strip()
    s = _STRATEGY.search(text)
    if s:
        detail["strategy"] = s.group(1)
        if s.group(1) in _STRATEGY_REASON:
            detail["reason"] = _STRATEGY_REASON[s.group(1)]
    m = _NO_LIVE_ISR.search(text)
    if m:
        detail.update(reason="no_live_isr", live_brokers=int_list(m.group(1)), isr=int_list(m.group(2)))
    m = _NO_LIVE_REPLICA.search(text)
    if m:
        detail.update(reason="no_live_replica", live_brokers=int_list(m.group(1)), assigned=int_list(m.group(2)))
    if _NO_STATE.search(text):
        # the partition's state znode is gone (its topic deleted): 2.3.0 PartitionStateMachine
        # .doElectLeaderForPartitions fails the election of a partition ZooKeeper holds no LeaderAndIsr for
        detail["reason"] = "no_state"
    m = _SHUTTING_DOWN.search(text)
    if m:
        # thrown only by ControlledShutdownLeaderSelector (0.8.2.2 .. 1.0.0 PartitionLeaderSelector.scala), which
        # names the controller's shutting-down brokers
        detail.update(reason="other", isr=int_list(m.group(1)), shutting_down_brokers=int_list(m.group(2)))
        detail.setdefault("strategy", "ControlledShutdownLeaderSelector")
    if "reason" not in detail and exc and "strategy" not in detail:
        detail["reason"] = "other"
    return detail


def _failed_partition(entry, m):
    ev = _base("partition_state_change", m, m["tp"])
    if ev is None:
        return None
    ev.from_state, ev.to_state = m["from"], m["to"]
    detail = _exception_detail(entry)
    if ev.to_state == "OnlinePartition":
        ev.event_type = "leader_election_failed"
        ev.detail = detail
    else:
        # An invalid transition the controller refused: nothing changed.
        ev.detail = {"failed": True, **{k: v for k, v in detail.items() if k in ("exception", "message")}}
    return ev


def _changed_replica(entry, m):
    ev = _base("replica_state_change", m, m["tp"])
    if ev is None:
        return None
    ev.subject_broker = int(m["r"])
    ev.from_state, ev.to_state = m["from"], m["to"]
    return ev


def _failed_replica(entry, m):
    ev = _changed_replica(entry, m)
    if ev is not None:
        d = _exception_detail(entry)
        ev.detail = {"failed": True, **{k: v for k, v in d.items() if k in ("exception", "message")}}
    return ev


def _isr_written(entry, m):
    ev = _base("partition_leader_isr_written", m, m["tp"])
    f = leader_isr_epoch(m["state"])
    if ev is None or f is None:
        return None
    ev.leader, ev.isr, ev.leader_epoch, ev.zk_version = f["leader"], f["isr"], f["leader_epoch"], f["zk_version"]
    ev.controller_epoch = f["controller_epoch"]
    ev.detail = {"removed_replica": int(m["r"]), "reason": "offline_replica", "transition": m["to"]}
    if "leader_recovery_state" in f:
        ev.detail["leader_recovery_state"] = f["leader_recovery_state"]
    return ev


def _new_leader_isr_010(entry, m):
    tp = split_topic_partition(m["tp"])
    f = leader_json(m["json"])
    if tp is None or f is None:
        return None
    return Event("partition_leader_isr_written", controller_id=int(m["cid"]), topic=tp[0], partition=tp[1],
                 leader=f["leader"], isr=f["isr"], leader_epoch=f["leader_epoch"], controller_epoch=f["controller_epoch"],
                 detail={"reason": "offline_replica"})


def _selected_leader(entry, m):
    tp = split_topic_partition(m["tp"])
    f = leader_json(m["json"])
    if tp is None or f is None:
        return None
    # OfflinePartitionLeaderSelector is called for partitions in OfflinePartition or NewPartition only
    return Event("partition_leader_isr_written", topic=tp[0], partition=tp[1], leader=f["leader"], isr=f["isr"],
                 leader_epoch=f["leader_epoch"], from_state="OfflinePartition",
                 detail={"reason": "election", "strategy": "offline"})


def _unclean_010(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    leader = int(m["leader"])
    return Event("unclean_leader_election", topic=tp[0], partition=tp[1], leader=leader, isr=[leader],
                 detail={"live_brokers": int_list(m["live"])})


def _psm_startup(entry, m):
    text = m["dump"]
    if not text.endswith(")") and entry.continuation:
        # a dump broken over lines by the writer: the rest is on the continuation lines
        text = text + "".join(entry.continuation)
    items, complete = state_dump(text)
    cid = ident_id(entry.message)
    if not items:
        return None  # a controller of an empty cluster: routine
    # Each event cites the line by position; its raw text is a rendering of its own item, not a
    # copy of a dump that can hold tens of thousands of partitions.
    # One event per partition, as one EventRun (what they share is the run's base).
    head = entry.line[: entry.line.find(" -> ") + 4]
    d = {"via": "controller_startup"}
    if not complete:
        d["dump_incomplete"] = True
    topics, partitions, states = zip(*items)
    raws = [f"{head}... {topic}-{partition} -> {state} ..." for topic, partition, state in items]
    return EventRun(Event("partition_state_observed", controller_id=cid, detail=d), _PSM_RUN_FIELDS,
                    (list(topics), list(partitions), list(states), raws))


_PSM_RUN_FIELDS = ("topic", "partition", "to_state", "raw")


def _update_metadata_sent(entry, m):
    """ControllerChannelManager.sendUpdateMetadataRequests (1.0 .. 2.5, TRACE; 2.6+ logs counts only): the partition
    state the controller's context holds (partitionLeadershipInfo and the assignment) as it sends it to the brokers.
    Leader -2 is LeaderDuringDelete (a topic being deleted): no leader to observe."""
    st = request_partition_state(m["state"])
    tp = split_topic_partition(m["tp"])
    if st is None or tp is None or st["leader"] < -1:
        return None
    cid, sender_epoch = _ids(m)
    d = {"via": "update_metadata_sent"}
    if sender_epoch is not None:
        d["sender_epoch"] = sender_epoch  # the sending controller's epoch (the line's prefix), not the state's
    off = re.search(r"offlineReplicas=\[?([\d, ]*)\]?", m["state"])
    if off is not None:
        d["offline_replicas"] = int_list(off.group(1))
    d["recipients"] = int_list(m["brokers"])
    return Event("partition_state_observed", controller_id=cid, topic=tp[0], partition=tp[1], leader=st["leader"],
                 isr=st["isr"], leader_epoch=st["leader_epoch"], zk_version=st["zk_version"],
                 controller_epoch=st["state_controller_epoch"], replicas=st["replicas"], detail=d)


def _update_metadata_sent_08(entry, m):
    """ControllerChannelManager.sendRequestsToBrokers (0.8.2-0.11, TRACE): "Controller C epoch E sending
    UpdateMetadata request (Leader:..,ISR:..,LeaderEpoch:..,ControllerEpoch:..) [with correlationId N] to broker(s)
    ... for partition P", the controller's partitionLeadershipInfo as it sends it (after a failover, a broker
    change or an ISR change notification it has just read the state znode). Leader -2: a topic being deleted."""
    st = leader_isr_epoch(m["state"])
    tp = split_topic_partition(m["tp"])
    if st is None or tp is None or st["leader"] < -1:
        return None
    cid, sender_epoch = _ids(m)
    d = {"via": "update_metadata_sent"}
    if sender_epoch is not None:
        d["sender_epoch"] = sender_epoch
    d["recipients"] = int_list(m["brokers"])  # 'Set(0, 1)', 'broker 1', 'Set()'
    return Event("partition_state_observed", controller_id=cid, topic=tp[0], partition=tp[1], leader=st["leader"],
                 isr=st["isr"], leader_epoch=st["leader_epoch"], controller_epoch=st["controller_epoch"], detail=d)


_LAI_TAIL = r"(?: with (?:state (?P<lai>LeaderAndIsr\(.*\))|leader (?P<leader>-?\d+)|assigned replicas (?P<ar>[\d, ]*)))?$"

RULES = [
    Rule("state_change.changed_partition", SC, ("hanged partition ",),
         re.compile(_P + r"[Cc]hanged partition (?P<tp>\S+) (?:state )?from (?P<from>\w+) to (?P<to>\w+)" + _LAI_TAIL),
         _changed_partition),
    Rule("state_change.failed_to_change_state", SC, ("failed to change state for partition",),
         re.compile(_P + r"failed to change state for partition (?P<tp>\S+) from (?P<from>\w+) to (?P<to>\w+)$"),
         _failed_partition),
    Rule("state_change.initiated_failed", SC, ("nitiated state change for partition",),
         re.compile(_P + r"[Ii]nitiated state change for partition (?P<tp>\S+) from (?P<from>\w+) to (?P<to>\w+) failed$"),
         _failed_partition),
    Rule("state_change.changed_replica", SC, ("hanged state of replica ",),
         re.compile(_P + r"[Cc]hanged state of replica (?P<r>\d+) for partition (?P<tp>\S+) from (?P<from>\w+) "
                    r"to (?P<to>\w+)$"),
         _changed_replica),
    Rule("state_change.replica_failed", SC, ("nitiated state change of replica ",),
         re.compile(_P + r"[Ii]nitiated state change of replica (?P<r>\d+) for partition (?P<tp>\S+) from (?P<from>\w+) "
                    r"to (?P<to>\w+) failed$"),
         _failed_replica),
    Rule("state_change.isr_written_after_removal", SC, ("after removing replica",),
         re.compile(_P + r"Partition (?P<tp>\S+) state changed to (?P<state>\(.*\)) after removing replica (?P<r>\d+) "
                    r"from the ISR as part of transition to (?P<to>\w+)$"),
         _isr_written),
    Rule("state_change.new_leader_and_isr.010", CONTROLLER, ("New leader and ISR for partition",),
         re.compile(r"^\[Controller (?:id=)?(?P<cid>\d+)\]:? New leader and ISR for partition (?P<tp>\S+) is "
                    r"(?P<json>\{.*\})$"),
         _new_leader_isr_010),
    Rule("state_change.offline_selector.selected", CONTROLLER, ("Selected new leader and ISR",),
         re.compile(r"^\[OfflinePartitionLeaderSelector\]: Selected new leader and ISR (?P<json>\{.*\}) for offline "
                    r"partition (?P<tp>\S+)$"),
         _selected_leader),
    Rule("state_change.offline_selector.unclean", CONTROLLER, ("No broker in ISR is alive", "Elect leader "),
         re.compile(r"^\[OfflinePartitionLeaderSelector\]: No broker in ISR is alive for (?P<tp>\S+)\. Elect leader "
                    r"(?P<leader>-?\d+) from live brokers (?P<live>[\d, ]*)\. There's potential data loss\.$"),
         _unclean_010),
    Rule("state_change.update_metadata_sent", SC, ("Sending UpdateMetadata request ", "PartitionState("),
         re.compile(_P + r"Sending UpdateMetadata request (?P<state>(?:UpdateMetadata)?PartitionState\([^()]*\)) to "
                    r"brokers (?P<brokers>.*) for partition (?P<tp>\S+)$"),
         _update_metadata_sent),
    Rule("state_change.update_metadata_sent.08", SC, ("sending UpdateMetadata request (Leader:",),
         re.compile(_P + r"sending UpdateMetadata request (?P<state>\(Leader:[^()]*\)) (?:with correlationId \d+ )?"
                    r"to brokers? (?P<brokers>.*?) for partition (?P<tp>\S+)$"),
         _update_metadata_sent_08),
    Rule("state_change.psm_startup_dump", CONTROLLER, ("Started partition state machine with initial state",),
         re.compile(r"^(?:\[[^\]]*\]:? )?Started partition state machine with initial state -> (?P<dump>.*)$"),
         _psm_startup),
]
