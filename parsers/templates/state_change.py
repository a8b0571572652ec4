"""state-change.log templates: partition and replica state machines (controller side)."""
from __future__ import annotations

import re

from parsers.rules import Rule, int_list, opt_int, split_topic_partition
from parsers.schema import Event

SC = ("state.change.logger", "kafka.controller.*")

# LeaderAndIsr(leader=1, leaderEpoch=5, isr=List(1, 2), zkVersion=7) and its 3.x variants.
_LAI = re.compile(
    r"LeaderAndIsr\(leader=(?P<leader>-?\d+), leaderEpoch=(?P<le>-?\d+), "
    r"(?:isr=(?:List\()?\[?(?P<isr>[\d, ]*)[\])]?|isrWithBrokerEpoch=(?P<isrbe>[^=]*(?:=[^=]*)*?)), "
    r"(?:leaderRecoveryState=(?P<lrs>\w+), )?(?:zkVersion|partitionEpoch)=(?P<zkv>-?\d+)\)"
)
_BROKER_STATE_ID = re.compile(r"brokerId=(\d+)")


def _lai_fields(text: str) -> dict | None:
    m = _LAI.search(text)
    if m is None:
        return None
    isr = int_list(m["isr"]) if m["isr"] is not None else [int(x) for x in _BROKER_STATE_ID.findall(m["isrbe"] or "")]
    out = {"leader": int(m["leader"]), "leader_epoch": int(m["le"]), "isr": isr, "zk_version": int(m["zkv"])}
    if m["lrs"]:
        out["leader_recovery_state"] = m["lrs"]
    return out


def _changed_partition(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    ev = Event(
        "partition_state_change",
        controller_id=int(m["cid"]),
        controller_epoch=int(m["ce"]),
        topic=tp[0],
        partition=tp[1],
        from_state=m["from"],
        to_state=m["to"],
    )
    tail = m["tail"] or ""
    if tail.startswith(" with state "):
        f = _lai_fields(tail)
        if f is None:
            return None
        ev.leader, ev.leader_epoch, ev.isr, ev.zk_version = f["leader"], f["leader_epoch"], f["isr"], f["zk_version"]
        if "leader_recovery_state" in f:
            ev.detail = {"leader_recovery_state": f["leader_recovery_state"]}
    elif tail.startswith(" with assigned replicas "):
        ev.replicas = int_list(tail[len(" with assigned replicas "):])
    elif tail.startswith(" with leader "):
        ev.leader = opt_int(tail[len(" with leader "):].strip())
    elif tail:
        return None
    return ev


def _changed_partition_010(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    ev = Event(
        "partition_state_change",
        controller_id=int(m["cid"]),
        controller_epoch=int(m["ce"]),
        topic=tp[0],
        partition=tp[1],
        from_state=m["from"],
        to_state=m["to"],
    )
    tail = m["tail"] or ""
    if tail.startswith(" with assigned replicas "):
        ev.replicas = int_list(tail[len(" with assigned replicas "):])
    elif tail.startswith(" with leader "):
        ev.leader = opt_int(tail[len(" with leader "):].strip())
    elif tail:
        return None
    return ev


def _failed_change(entry, m):
    tp = split_topic_partition(m["tp"])
    if tp is None:
        return None
    cont = "\n".join(entry.continuation[:3])
    strategy = None
    sm = re.search(r"under strategy (\w+(?:\((?:true|false)\))?)", cont)
    if sm:
        strategy = sm.group(1)
    is_election = m["to"] == "OnlinePartition"
    return Event(
        "leader_election_failed" if is_election else "partition_state_change",
        controller_id=int(m["cid"]),
        controller_epoch=int(m["ce"]),
        topic=tp[0],
        partition=tp[1],
        from_state=m["from"],
        to_state=m["to"],
        detail={"strategy": strategy, "failed": True, "exception": cont.split("\n", 1)[0] if cont else None},
    )


RULES = [
    Rule(
        "state_change.changed_partition.1x",
        SC,
        ("Changed partition ",),
        re.compile(r"^\[Controller id=(?P<cid>\d+) epoch=(?P<ce>\d+)\] Changed partition (?P<tp>\S+) "
                   r"(?:state )?from (?P<from>\w+) to (?P<to>\w+)(?P<tail> with .*)?$"),
        _changed_partition,
    ),
    Rule(
        "state_change.changed_partition.010",
        SC,
        ("changed partition ",),
        re.compile(r"^Controller (?P<cid>\d+) epoch (?P<ce>\d+) changed partition (?P<tp>\[[^\]]*\]) "
                   r"(?:state )?from (?P<from>\w+) to (?P<to>\w+)(?P<tail> with .*)?$"),
        _changed_partition_010,
    ),
    Rule(
        "state_change.failed_to_change_state.1x",
        SC,
        ("failed to change state for partition",),
        re.compile(r"^\[Controller id=(?P<cid>\d+) epoch=(?P<ce>\d+)\] Controller \d+ epoch \d+ failed to change state "
                   r"for partition (?P<tp>\S+) from (?P<from>\w+) to (?P<to>\w+)$"),
        _failed_change,
    ),
]
