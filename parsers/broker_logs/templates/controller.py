"""controller.log templates: the ZooKeeper-mode controller (KafkaController, its listeners,
ZookeeperLeaderElector, TopicDeletionManager), 0.8 to 3.9.

Cluster-level facts: who became controller with which epoch, who resigned, which
brokers joined or died, what the new controller saw at start-up, controlled
shutdowns as the controller handles them, preferred elections, reassignments,
topic creation and deletion, log-dir failures.
"""
from __future__ import annotations

import re

from parsers.broker_logs.rules import Rule, int_list
from parsers.schema import Event, EventRun, Packed
from parsers.broker_logs.templates.shapes import (
    assignment_map,
    ident_id,
    int_map,
    leader_and_isr,
    leader_isr_epoch,
    split_topic_partition,
    strip_collection,
    tp_list,
)

CONTROLLER_LOGGERS = ("kafka.controller.*",)
ELECTOR = ("kafka.server.ZookeeperLeaderElector*",)  # 0.8-0.10: the election runs outside the controller

# "[Controller 1]: " (0.8-0.11), "[Controller id=1] " (1.0+). Listeners have their own idents.
_C = r"^\[Controller (?:id=)?(?P<cid>\d+)\]:? "
_ANY_IDENT = r"^(?:\[[^\]]*\]:?,? )?"
# TopicDeletionManager's lines: its own ident, or (0.9-0.10.2) its DeleteTopicsThread's, a ShutdownableThread named
# "delete-topics-thread-<broker>" whose ident is "[<name>], " (0.9.0.0 TopicDeletionManager.DeleteTopicsThread.doWork)
_DELETION = r"^\[(?:Topic Deletion Manager |delete-topics-thread-)\d+\],? "


def _cid(m) -> int | None:
    g = m.groupdict().get("cid")
    return int(g) if g is not None else None


def _elected(entry, m):
    bid = int(m["id"])
    ev = Event("controller_elected", controller_id=bid, subject_broker=bid)
    if m.groupdict().get("epoch") is not None:
        ev.controller_epoch = int(m["epoch"])
        ev.detail = {"epoch_zk_version": int(m["zkv"])}
    return ev


def _epoch(entry, m):
    # <= 2.0 logs the new epoch on its own line: finish() folds it into the election line before it,
    # or makes it the election when the file has none (0.8-0.10 controller.log).
    cid = int(m["id"]) if m.groupdict().get("id") else _cid(m)
    return Event("controller_startup_state", controller_id=cid, controller_epoch=int(m["epoch"]), detail={"kind": "epoch"})


def _resigned(entry, m):
    bid = int(m["id"]) if m.groupdict().get("id") else _cid(m)
    return Event("controller_resigned", controller_id=bid, subject_broker=bid)


def _moved(entry, m):
    return Event("controller_moved", controller_id=_cid(m), detail={"event": m["event"]})


def _observed_elector(entry, m):
    return Event("controller_observed", controller_id=int(m["leader"]), detail={"via": "zk_leader_change"})


def _observed_debug(entry, m):
    return Event("controller_observed", controller_id=int(m["leader"]), detail={"via": "election_lost"})


def _broker_change(entry, m):
    added = int_list(m["added"])
    deleted = int_list(m["deleted"])
    bounced = int_list(m["bounced"]) if m["bounced"] is not None else []
    live = int_list(m["live"])
    cid = ident_id(entry.message)
    common = {"live_brokers": live, "via": "controller_broker_change"}
    evs = []
    for b in added:
        evs.append(Event("broker_registered", controller_id=cid, subject_broker=b, detail=dict(common)))
    for b in bounced:
        # KIP-380: same id, new czxid; the controller handles it as failure then startup.
        evs.append(Event("broker_failed", controller_id=cid, subject_broker=b, detail={**common, "bounced": True}))
        evs.append(Event("broker_registered", controller_id=cid, subject_broker=b, detail={**common, "bounced": True}))
    for b in deleted:
        evs.append(Event("broker_failed", controller_id=cid, subject_broker=b, detail=dict(common)))
    if not evs:
        evs.append(Event("controller_startup_state", controller_id=cid, detail={"kind": "broker_change_noop", "brokers": live}))
    return evs


def _failure_callback(entry, m):
    cid = ident_id(entry.message)
    return [Event("broker_failed", controller_id=cid, subject_broker=b, detail={"via": "failure_callback"})
            for b in int_list(m["ids"])]


def _startup_brokers(kind):
    def build(entry, m):
        brokers = int_list(strip_collection(m["set"]))
        return Event("controller_startup_state", controller_id=_cid(m), detail={"kind": kind, "brokers": brokers})
    return build


def _startup_topics(entry, m):
    topics = [t.strip() for t in strip_collection(m["set"]).split(",") if t.strip()]
    # complete: the whole collection is on the line (a closed 'Set(..)' / 'HashSet(..)'), not a line cut short
    return Event("controller_startup_state", controller_id=_cid(m),
                 detail={"kind": "topics", "topics": sorted(topics), "complete": m["set"].rstrip().endswith(")")})


def _broker_epochs(entry, m):
    return Event("controller_startup_state", controller_id=_cid(m),
                 detail={"kind": "broker_epochs", "epochs": int_map(m["map"]), "phase": m["phase"].lower()})


def _shutting_down_broker(entry, m):
    return Event("controlled_shutdown_requested", controller_id=_cid(m), subject_broker=int(m["id"]),
                 detail={"side": "controller"})


def _preferred_started(entry, m):
    parts = tp_list(m["parts"])
    if not parts:
        return None  # logged at every fail-over with an empty list: routine
    detail = {"phase": "started", "partitions": parts}
    if m.groupdict().get("trigger"):
        detail["trigger"] = m["trigger"]
        detail["election_type"] = m["etype"]
    return Event("preferred_election", controller_id=_cid(m), detail=detail)


def _preferred_done(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    phase = "completed" if m["how"] == "completed" else "failed"
    return Event("preferred_election", controller_id=_cid(m), topic=tp[0], partition=tp[1], leader=int(m["leader"]),
                 detail={"phase": phase})


def _preferred_error(entry, m):
    return Event("preferred_election", controller_id=_cid(m), detail={"phase": "failed", "partitions": tp_list(m["parts"])})


def _reassign_started(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    return Event("reassignment", controller_id=_cid(m), topic=tp[0], partition=tp[1], replicas=int_list(m["replicas"]),
                 detail={"phase": "started"})


def _reassign_removed(entry, m):
    parts = tp_list(m["parts"])
    return [Event("reassignment", controller_id=_cid(m), topic=t, partition=p, detail={"phase": "completed"})
            for t, p in parts] or None


def _new_topics(entry, m):
    topics = [t.strip() for t in strip_collection(m["new"]).split(",") if t.strip()]
    if not topics:
        return None  # a topic-change event without new topics
    assignment = assignment_map(m["assign"])
    cid = ident_id(entry.message)
    return [Event("topic_created", controller_id=cid, topic=t, detail={"assignment": assignment.get(t, {})})
            for t in sorted(topics)]


def _topic_deleted(entry, m):
    return Event("topic_deleted", controller_id=ident_id(entry.message), topic=m["topic"],
                 detail={"phase": "completed"})


def _topic_names(text: str) -> list[str]:
    """'a,b' or 'Set(a, b)' (the controller's mkString or a Scala set) -> the names, sorted, once each."""
    return sorted({t for t in strip_collection(text).replace(",", " ").split() if t})


def _deletion_started(entry, m):
    # resumeDeletions -> onTopicDeletion: the topic's partitions go OfflinePartition, then NonExistentPartition
    # once every replica is deleted (0.9-3.9 TopicDeletionManager)
    return Event("topic_deletion_requested", controller_id=ident_id(entry.message), topic=m["topic"],
                 detail={"side": "controller", "via": "deletion_started"})


def _deletions_queued(via: str):
    """The controller names the topics queued for deletion: at its start ("List of topics to be deleted: a,b",
    0.9+ KafkaController.initializeTopicDeletion) and when a request arrives ("Starting topic deletion for
    topics a,b", 1.1+ KafkaController.processTopicDeletion)."""
    def build(entry, m):
        cid = ident_id(entry.message)
        return [Event("topic_deletion_requested", controller_id=cid, topic=t, detail={"side": "controller", "via": via})
                for t in _topic_names(m["topics"])] or None
    return build


def _deletion_halted(entry, m):
    # markTopicIneligibleForDeletion: the deletion waits (0.9-2.3 without a reason; 2.4+ "due to replica deletion
    # failure", "offline replicas" or "topic reassignment in progress")
    cid = ident_id(entry.message)
    return [Event("topic_deletion_halted", controller_id=cid, topic=t, detail={"reason": m["reason"]})
            for t in _topic_names(m["topics"])] or None


def _mark_offline(entry, m):
    return Event("log_dir_failure", controller_id=_cid(m), subject_broker=int(m["broker"]),
                 detail={"side": "controller", "partitions": tp_list(m["parts"])})


def _log_dir_brokers(entry, m):
    return [Event("log_dir_failure", controller_id=_cid(m), subject_broker=b, detail={"side": "controller"})
            for b in int_list(m["ids"])]


def _controller_isr_updated(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    return Event("isr_updated", controller_id=_cid(m), topic=tp[0], partition=tp[1], isr=int_list(m["isr"]),
                 zk_version=int(m["zkv"]), detail={"side": "controller"})


def _controller_isr_written(entry, m):
    """KafkaController.processAlterPartition (2.8.0 .. 3.9.0-rc3, DEBUG "ISR for partition P updated to
    LeaderAndIsr(leader=L, leaderEpoch=E, isr..., partitionEpoch=V)."): the registration the controller has just
    written to ZooKeeper for the leader's AlterPartition, as it now holds it: leader, leader epoch, ISR and znode
    version, stated."""
    tp = split_topic_partition(m["tp"])
    st = leader_and_isr(m["state"])
    if tp is None or st is None:
        return None
    return Event("partition_state_observed", controller_id=_cid(m), topic=tp[0], partition=tp[1], leader=st["leader"],
                 isr=st["isr"], leader_epoch=st["leader_epoch"], zk_version=st["zk_version"],
                 detail={"via": "controller_isr_written"})


def _zk_expired_listener(entry, m):
    bid = int(m["id"])
    return Event("zk_session_expired", subject_broker=bid, detail={"via": "controller_listener"})


# One "tp -> (Leader:..,ISR:..,LeaderEpoch:..,ControllerEpoch:..)" item; items are joined by "," and a 0.8-0.11
# partition is "[topic,0]", so the split is on the item shape, not on commas.
_LEADERS_ITEM = re.compile(r"(?P<tp>\[[^\]]+\]|[^,\s][^\s]*?) -> (?P<v>\(Leader:[^)]*\))")


def _all_leaders(entry, m):
    """KafkaController.doControlledShutdown (0.8 .. 3.x) ends with TRACE "All leaders = " and the controller
    context's partitionLeadershipInfo: the leader, ISR and epochs it holds for every partition."""
    text = m["dump"] + "".join(entry.continuation or ())
    cid = _cid(m)
    head = entry.line[: entry.line.find("All leaders = ") + 14]
    cols: tuple[list, ...] = ([], [], [], [], [], [], [], [])  # _LEADERS_RUN_FIELDS: one event per partition
    topics, partitions, leaders, isrs, leader_epochs, controller_epochs, zk_versions, raws = cols
    for item in _LEADERS_ITEM.finditer(text):
        tp = split_topic_partition(item["tp"])
        st = leader_isr_epoch(item["v"])
        if tp is None or st is None:
            continue
        topics.append(tp[0])
        partitions.append(tp[1])
        leaders.append(st["leader"])
        isrs.append(st["isr"])
        leader_epochs.append(st["leader_epoch"])
        controller_epochs.append(st["controller_epoch"])
        zk_versions.append(st["zk_version"])
        raws.append(f"{head}... {item.group(0)} ...")
    if not topics:
        return None
    return EventRun(Event("partition_state_observed", controller_id=cid, detail={"via": "controller_leadership_dump"}),
                    _LEADERS_RUN_FIELDS, cols)


_LEADERS_RUN_FIELDS = ("topic", "partition", "leader", "isr", "leader_epoch", "controller_epoch", "zk_version", "raw")


def _isr_before_removal(entry, m):
    """KafkaController.removeReplicaFromIsr (0.8.2.2 .. 1.0.0, DEBUG "Removing replica R from ISR a,b,c for partition
    P."): the ISR the controller's context holds for P (partitionLeadershipInfo) just before it writes the ISR without
    R (an OfflineReplica: a broker failing, or a follower's controlled shutdown). The controller's own view, stated:
    an ISR expansion by the leader that no other line shows is in it."""
    tp = split_topic_partition(m["tp"])
    isr = int_list(m["isr"])
    if tp is None:
        return None
    return Event("partition_state_observed", controller_id=_cid(m), topic=tp[0], partition=tp[1], isr=isr,
                 detail={"via": "controller_isr_before_removal", "removed_replica": int(m["r"])})


# One "tp -> List(3, 1, 2)" item of a map of assignments (the Seq's class name varies with the Scala version): the
# whole item, its partition and its replicas.
_ASSIGNMENT_ITEM = re.compile(r"((\[[^\]]+\]|[^\s,()>]+) -> \w*\(([\d, ]*)\))")
_RUN_FIELDS = ("topic", "partition", "replicas", "raw")
try:  # the same reading compiled, for the common shapes (setup.py builds it; without it, the loop below)
    from parsers.broker_logs import _dumps
except ImportError:  # pragma: no cover - a machine without a C compiler
    _dumps = None
if getattr(_dumps, "LAYOUT", None) != 2:  # built from an older _dumps.c (lists): the loop below until it is rebuilt
    _dumps = None
# Off: every dump goes through the Python loop (tests/test_assignment_dump.py compares the two).
COMPILED = True


def _assignments_listed(entry, m):
    """KafkaController.checkAndTriggerPartitionRebalance (DEBUG): "preferred replicas by broker Map(...)" (0.8.1-2.4:
    every partition's assignment, grouped by its preferred replica) and "topics not in preferred replica [for broker
    N] Map(...)" (the partitions the auto-rebalance is about to consider): the controller's own assignment, in order.
    One event per partition, as one EventRun (a listing names every partition every five minutes: this loop is the
    hottest of a real corpus's parse, so the items come as tuples and the common shapes are read inline)."""
    text = m["dump"] + "".join(entry.continuation or ())
    head = entry.line[: entry.line.find(m["what"]) + len(m["what"])] + " ... "
    got = _dumps.assignments(text, head) if (_dumps is not None and COMPILED) else None
    base = Event("partition_state_observed", controller_id=_cid(m), detail={"via": "controller_assignment"})
    if got is not None:
        topics, topic_ends, partitions, replicas, replica_ends, raws, raw_ends = got
        if not topic_ends:
            return None
        return EventRun(base, _RUN_FIELDS, (Packed("text", topics, topic_ends), Packed("int", partitions),
                                            Packed("ints", replicas, replica_ends), Packed("text", raws, raw_ends)))
    topics, partitions, replicas, raws = [], [], [], []
    for item, tp_text, ar_text in _ASSIGNMENT_ITEM.findall(text):
        topic, sep, part = tp_text.rpartition("-")
        if tp_text[0] == "[" or not (sep and topic and part.isdigit()):
            tp = split_topic_partition(tp_text)  # "[t,0]" (0.8-0.10), or not a partition at all
            if tp is None:
                continue
            topic, part = tp
        try:
            ar = list(map(int, ar_text.split(",")))  # "1, 2, 3" as Scala prints a Seq
        except ValueError:
            ar = int_list(ar_text)  # "" (none), or spaces where commas were expected
            if not ar:
                continue
        topics.append(topic)
        partitions.append(int(part))
        replicas.append(ar)
        raws.append(head + item + " ...")
    if not topics:
        return None
    return EventRun(base, _RUN_FIELDS, (topics, partitions, replicas, raws))


RULES = [
    Rule("controller.assignments_by_preferred", CONTROLLER_LOGGERS, ("referred replicas by broker ",),
         re.compile(_C + r"(?P<what>[Pp]referred replicas by broker) (?P<dump>.*)$"), _assignments_listed,
         declines_by_text=True),
    Rule("controller.assignments_not_preferred", CONTROLLER_LOGGERS, ("opics not in preferred replica",),
         re.compile(_C + r"(?P<what>[Tt]opics not in preferred replica(?: for broker \d+)?) (?P<dump>.*)$"),
         _assignments_listed, declines_by_text=True),
    Rule("controller.isr_before_removal", CONTROLLER_LOGGERS, ("Removing replica ", " from ISR "),
         re.compile(_C + r"Removing replica (?P<r>\d+) from ISR (?P<isr>[\d,]*) for partition (?P<tp>\S+?)\.?$"),
         _isr_before_removal),
    Rule("controller.all_leaders", CONTROLLER_LOGGERS, ("All leaders = ",),
         re.compile(_C + r"All leaders = (?P<dump>.*)$"), _all_leaders),
    # --- election -------------------------------------------------------------------------------
    Rule("controller.elected.2x", CONTROLLER_LOGGERS, ("successfully elected as the controller. Epoch",),
         re.compile(_C + r"(?P<id>\d+) successfully elected as the controller\. Epoch incremented to (?P<epoch>\d+) "
                    r"and epoch zk version is now (?P<zkv>-?\d+)"),
         _elected),
    Rule("controller.elected.011", CONTROLLER_LOGGERS, ("successfully elected as the controller",),
         re.compile(_C + r"(?P<id>\d+) successfully elected as the controller$"), _elected),
    Rule("controller.elected.elector", ELECTOR, ("successfully elected as leader",),
         re.compile(r"^(?P<id>\d+) successfully elected as leader$"), _elected),
    Rule("controller.epoch.010", CONTROLLER_LOGGERS, ("incremented epoch to",),
         re.compile(_C + r"Controller (?P<id>\d+) incremented epoch to (?P<epoch>\d+)$"), _epoch),
    Rule("controller.epoch.1x", CONTROLLER_LOGGERS, ("ncremented",),
         re.compile(_C + r"(?:Incremented epoch to|Epoch incremented to) (?P<epoch>\d+)$"), _epoch),
    Rule("controller.resigned.010", CONTROLLER_LOGGERS, ("resigned as the controller",),
         re.compile(_C + r"Broker (?P<id>\d+) resigned as the controller$"), _resigned),
    Rule("controller.resigned.1x", CONTROLLER_LOGGERS, ("] Resigned",),
         re.compile(_C + r"Resigned$"), _resigned),
    Rule("controller.moved", CONTROLLER_LOGGERS, ("Controller moved to another broker",),
         re.compile(_C + r"Controller moved to another broker when processing (?P<event>.*?)\.?$"), _moved),
    Rule("controller.observed.elector", ELECTOR, ("New leader is ",),
         re.compile(r"^New leader is (?P<leader>-?\d+)$"), _observed_elector),
    Rule("controller.observed.lost", (*CONTROLLER_LOGGERS, *ELECTOR), (" elected as ",),
         re.compile(_ANY_IDENT + r"Broker (?P<leader>\d+) (?:was elected as (?:controller|leader) instead of broker \d+"
                    r"|has been elected as the controller, so stopping the election process)\.?$"),
         _observed_debug),
    # --- brokers ------------------------------------------------------------------------------
    Rule("controller.broker_change", CONTROLLER_LOGGERS, ("Newly added brokers:",),
         re.compile(_ANY_IDENT + r"Newly added brokers: (?P<added>[\d, ]*), deleted brokers: (?P<deleted>[\d, ]*), "
                    r"(?:bounced brokers: (?P<bounced>[\d, ]*), )?all live brokers: (?P<live>[\d, ]*)$"),
         _broker_change),
    Rule("controller.failure_callback", CONTROLLER_LOGGERS, ("Broker failure callback for",),
         re.compile(_ANY_IDENT + r"Broker failure callback for (?P<ids>[\d, ]*)$"), _failure_callback),
    Rule("controller.shutting_down_broker", CONTROLLER_LOGGERS, ("Shutting down broker ",),
         re.compile(_C + r"Shutting down broker (?P<id>\d+)$"), _shutting_down_broker),
    # --- what a new controller sees -------------------------------------------------------------
    Rule("controller.startup.live_brokers", CONTROLLER_LOGGERS, ("Currently active brokers in the cluster",),
         re.compile(_C + r"Currently active brokers in the cluster: (?P<set>.*)$"), _startup_brokers("live_brokers")),
    Rule("controller.startup.shutting_down", CONTROLLER_LOGGERS, ("Currently shutting brokers in the cluster",),
         re.compile(_C + r"Currently shutting brokers in the cluster: (?P<set>.*)$"),
         _startup_brokers("shutting_down_brokers")),
    Rule("controller.startup.topics", CONTROLLER_LOGGERS, ("Current list of topics in the cluster",),
         re.compile(_C + r"Current list of topics in the cluster: (?P<set>.*)$"), _startup_topics),
    Rule("controller.broker_epochs", CONTROLLER_LOGGERS, ("broker epochs cache",),
         re.compile(_C + r"(?P<phase>Initialized|Updated) broker epochs cache: (?P<map>.*)$"), _broker_epochs),
    # --- elections, reassignment ----------------------------------------------------------------
    Rule("controller.preferred.started.010", CONTROLLER_LOGGERS, ("Starting preferred replica leader election",),
         re.compile(_C + r"Starting preferred replica leader election for partitions ?(?P<parts>.*)$"), _preferred_started,
         declines_by_text=True),
    Rule("controller.preferred.started.24", CONTROLLER_LOGGERS, ("Starting replica leader election (",),
         re.compile(_C + r"Starting replica leader election \((?P<etype>\w+)\) for partitions ?(?P<parts>.*?) "
                    r"triggered by (?P<trigger>\w+)$"),
         _preferred_started, declines_by_text=True),
    Rule("controller.preferred.done", CONTROLLER_LOGGERS, ("replica leader election. ",),
         re.compile(_C + r"Partition (?P<tp>\S+) (?P<how>completed|failed to complete) preferred replica leader "
                    r"election\. (?:New leader|Leader) is (?P<leader>-?\d+)$"),
         _preferred_done),
    Rule("controller.preferred.error", CONTROLLER_LOGGERS, ("Error completing preferred replica leader election",),
         re.compile(_C + r"Error completing preferred replica leader election for partitions? (?P<parts>.*)$"),
         _preferred_error),
    Rule("controller.reassign.started", CONTROLLER_LOGGERS, ("Handling reassignment of partition",),
         re.compile(_C + r"Handling reassignment of partition (?P<tp>\S+) to new replicas (?P<replicas>[\d, ]*)$"),
         _reassign_started),
    Rule("controller.reassign.removed", CONTROLLER_LOGGERS, ("from the list of reassigned partitions",),
         re.compile(_C + r"Removing partitions? (?P<parts>.*) from the list of reassigned partitions in zookeeper$"),
         _reassign_removed),
    # --- topics ---------------------------------------------------------------------------------
    Rule("controller.new_topics", CONTROLLER_LOGGERS, ("New topics: [",),
         re.compile(_ANY_IDENT + r"New topics: \[(?P<new>[^\]]*)\], deleted topics: \[[^\]]*\], "
                    r"new partition replica assignment \[(?P<assign>.*)\]$"),
         _new_topics),
    Rule("controller.topic_deleted", CONTROLLER_LOGGERS, ("Deletion of topic ", "successfully completed"),
         re.compile(_DELETION + r"Deletion of topic (?P<topic>\S+) successfully completed$"),
         _topic_deleted),
    Rule("controller.topic_deletion_queued", CONTROLLER_LOGGERS, ("List of topics to be deleted: ",),
         re.compile(_C + r"List of topics to be deleted: (?P<topics>.*)$"), _deletions_queued("controller_startup"),
         declines_by_text=True),
    Rule("controller.topic_deletion_request", CONTROLLER_LOGGERS, ("Starting topic deletion for topics ",),
         re.compile(r"^\[(?:Controller (?:id=)?|DeleteTopicsListener on )(?P<cid>\d+)\]:? Starting topic deletion for "
                    r"topics (?P<topics>.*)$"), _deletions_queued("request")),
    Rule("controller.topic_deletion_halted", CONTROLLER_LOGGERS, ("Halted deletion of topics ",),
         re.compile(r"^\[Topic Deletion Manager \d+\],? Halted deletion of topics (?P<topics>\S*)(?: due to (?P<reason>.+))?$"),
         _deletion_halted),
    Rule("controller.topic_deletion_started", CONTROLLER_LOGGERS, ("Deletion of topic ", "(re)started"),
         re.compile(_DELETION + r"Deletion of topic (?P<topic>\S+) \(re\)started$"),
         _deletion_started),
    # --- log dirs, ISR writes (controller side) -------------------------------------------------
    Rule("controller.mark_replicas_offline", ("state.change.logger", *CONTROLLER_LOGGERS), ("Mark replicas ",),
         re.compile(_C + r"Mark replicas (?P<parts>.*) on broker (?P<broker>\d+) as offline$"), _mark_offline),
    Rule("controller.log_dir_failure", CONTROLLER_LOGGERS, ("Handling log directory failure for brokers",),
         re.compile(_C + r"Handling log directory failure for brokers (?P<ids>[\d, ]*)$"), _log_dir_brokers),
    Rule("controller.isr_updated", CONTROLLER_LOGGERS, ("and zkVersion updated to",),
         re.compile(_C + r"ISR for partition (?P<tp>\S+) updated to \[(?P<isr>[\d,]*)\] and zkVersion updated to "
                    r"\[(?P<zkv>-?\d+)\]$"),
         _controller_isr_updated),
    Rule("controller.isr_written", CONTROLLER_LOGGERS, ("ISR for partition ", " updated to LeaderAndIsr("),
         re.compile(_C + r"ISR for partition (?P<tp>\S+) updated to (?P<state>LeaderAndIsr\(.*\))\.?$"),
         _controller_isr_written),
    Rule("controller.zk_expired", CONTROLLER_LOGGERS, ("ZK expired",),
         re.compile(r"^\[SessionExpirationListener on (?P<id>\d+)\], ZK expired"), _zk_expired_listener),
]
