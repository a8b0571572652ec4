"""How Kafka prints its data structures inside log messages, every version.

Templates capture the variable part of a message as text; these functions turn
that text into values. Each structure's grammar lives here once:

- topic-partitions: ``[t,0]`` (0.8-0.11 TopicAndPartition), ``t-0`` (1.0+),
  ``RemainingPartition(topicName='t', partitionIndex=0)`` (2.4+ controlled shutdown)
- ``LeaderAndIsr(leader=1, leaderEpoch=5, isr=List(1, 2), zkVersion=7)`` and its
  3.2 / 3.3 / 3.5 (``isrWithBrokerEpoch=List(BrokerState(brokerId=1, ...))``) /
  4.0 (Java list) successors
- ``(Leader:1,ISR:1,2,LeaderEpoch:5,ControllerEpoch:3)`` (LeaderIsrAndControllerEpoch,
  3.2+ adds LeaderRecoveryState and ZkVersion)
- ``{"leader":1,"leader_epoch":5,"isr":[1,2]}`` (0.8-1.0 JSON)
- ``PartitionState(controllerEpoch=.., leader=.., ...)`` and
  ``LeaderAndIsrPartitionState(topicName='t', ...)`` (LeaderAndIsr requests)
- Scala/Java collections: ``Set(1, 2)``, ``HashMap(1 -> 42)``, ``Map([t,0] -> List(0))``

Every function is linear in its input (no backtracking regexes over 10 kB dumps)
and returns None / empty for text it does not recognise: a caller decides.
"""
from __future__ import annotations

import functools
import re

from parsers.broker_logs.rules import int_list, split_topic_partition

__all__ = [
    "int_list",
    "split_topic_partition",
    "leader_and_isr",
    "leader_isr_epoch",
    "leader_json",
    "request_partition_state",
    "tp_list",
    "int_map",
    "assignment_map",
    "state_dump",
    "strip_collection",
    "ident_id",
]

_F_LEADER = re.compile(r"\bleader=(-?\d+)")
_F_LEADER_EPOCH = re.compile(r"\bleaderEpoch=(-?\d+)")
_F_VERSION = re.compile(r"\b(?:zkVersion|partitionEpoch)=(-?\d+)")
_F_LRS = re.compile(r"\bleaderRecoveryState=(\w+)")
_F_ISR = re.compile(r"\bisr=(?:List\(|ArrayBuffer\(|Vector\()?\[?([-\d, ]*)")
_F_REPLICAS = re.compile(r"\breplicas=(?:List\(|ArrayBuffer\(|Vector\()?\[?([-\d, ]*)")
_F_CTRL_EPOCH = re.compile(r"\bcontrollerEpoch=(-?\d+)")
_F_BROKER_ID = re.compile(r"brokerId=(\d+)")
_F_TOPIC_NAME = re.compile(r"\btopicName='([^']*)'")
_F_PARTITION_INDEX = re.compile(r"\bpartitionIndex=(\d+)")


_UNSEEN = object()


def _own_lists(got: dict) -> dict:
    return {k: v[:] if type(v) is list else v for k, v in got.items()}


def remembered(read, fresh=_own_lists):
    """``read`` (text -> dict of fields | None) read once per text (a module's reading of a repeated text: a failed
    state change's exception, templates/state_change.py; a KRaft partition change's diff, templates/kraft.py): a
    controller states the same partition state for many partitions and requests (0.27 GB of real logs: 2,514
    distinct request states among 25,064 LeaderAndIsr requests received, 415 distinct among 35,505 UpdateMetadata
    states sent). Every call gets what ``fresh`` makes of the remembered dict: by default a dict and lists of its
    own, as the events keep them."""
    memo: dict[str, dict | None] = {}

    @functools.wraps(read)
    def reading(text: str) -> dict | None:
        got = memo.get(text, _UNSEEN)
        if got is _UNSEEN:
            got = read(text)
            if len(text) <= 2_000:
                if len(memo) >= 4_096:
                    memo.clear()
                memo[text] = got
        return None if got is None else fresh(got)

    reading.memo = memo
    return reading


def _int(m: "re.Match[str] | None") -> int | None:
    return int(m.group(1)) if m else None


@remembered
def leader_and_isr(text: str) -> dict | None:
    """``LeaderAndIsr(...)`` of any version -> leader, leader_epoch, isr, zk_version (+ leader_recovery_state)."""
    start = text.find("LeaderAndIsr(")
    if start < 0:
        return None
    body = text[start:]
    leader = _int(_F_LEADER.search(body))
    epoch = _int(_F_LEADER_EPOCH.search(body))
    version = _int(_F_VERSION.search(body))
    if leader is None or epoch is None:
        return None
    i = body.find("isrWithBrokerEpoch=")
    if i >= 0:
        # 3.5+: the ISR is a list of BrokerState(brokerId=.., brokerEpoch=..); the ids are the ISR.
        end = body.find("leaderRecoveryState=", i)
        isr = [int(x) for x in _F_BROKER_ID.findall(body[i:end if end > 0 else len(body)])]
    else:
        m = _F_ISR.search(body)
        if m is None:
            return None
        isr = int_list(m.group(1))
    out = {"leader": leader, "leader_epoch": epoch, "isr": isr, "zk_version": version}
    lrs = _F_LRS.search(body)
    if lrs:
        out["leader_recovery_state"] = lrs.group(1)
    return out


_LIAC = re.compile(
    r"\(Leader:(-?\d+),ISR:([\d,]*),(?:LeaderRecoveryState:(\w+),)?LeaderEpoch:(-?\d+),"
    r"(?:ZkVersion:(-?\d+),)?ControllerEpoch:(-?\d+)\)"
)


@remembered
def leader_isr_epoch(text: str) -> dict | None:
    """``(Leader:-1,ISR:1,2,LeaderEpoch:6,ControllerEpoch:3)`` (and the 3.2+ form) -> fields."""
    m = _LIAC.search(text)
    if m is None:
        return None
    leader, isr, lrs, leader_epoch, zk_version, controller_epoch = m.groups()  # one call, not six
    out = {
        "leader": int(leader),
        "isr": int_list(isr),
        "leader_epoch": int(leader_epoch),
        "zk_version": int(zk_version) if zk_version is not None else None,
        "controller_epoch": int(controller_epoch),
    }
    if lrs:
        out["leader_recovery_state"] = lrs
    return out


_J_LEADER = re.compile(r'"leader":(-?\d+)')
_J_EPOCH = re.compile(r'"leader_epoch":(-?\d+)')
_J_CEPOCH = re.compile(r'"controller_epoch":(-?\d+)')
_J_ISR = re.compile(r'"isr":\[([-\d,]*)\]')


def leader_json(text: str) -> dict | None:
    """``{"leader":1,"leader_epoch":5,"isr":[1,2]}`` (0.8-1.0) -> fields; keys in any order."""
    leader = _J_LEADER.search(text)
    isr = _J_ISR.search(text)
    if leader is None or isr is None:
        return None
    return {
        "leader": int(leader.group(1)),
        "leader_epoch": _int(_J_EPOCH.search(text)),
        "isr": int_list(isr.group(1)),
        "controller_epoch": _int(_J_CEPOCH.search(text)),
    }


_OLD_LI = re.compile(r"LeaderAndIsrInfo:\(Leader:(-?\d+),ISR:([\d,]*),LeaderEpoch:(-?\d+),ControllerEpoch:(-?\d+)\)")
_OLD_ALL = re.compile(r"AllReplicas:([\d,]*)")


@remembered
def request_partition_state(text: str) -> dict | None:
    """The partition state inside a LeaderAndIsr request as each version prints it.

    0.8-0.9 ``(LeaderAndIsrInfo:(Leader:3,ISR:3,LeaderEpoch:4,ControllerEpoch:12),ReplicationFactor:2),AllReplicas:6,3)``;
    0.10-2.3 ``PartitionState(controllerEpoch=1, leader=0, leaderEpoch=0, isr=[0], zkVersion=0, replicas=[0])``
    (1.x prints the lists without brackets: ``isr=0,2, zkVersion=1, replicas=1,0,2``);
    2.4+ ``LeaderAndIsrPartitionState(topicName='t', partitionIndex=1, controllerEpoch=1, ...)``.
    """
    m = _OLD_LI.search(text)
    if m is not None:
        all_replicas = _OLD_ALL.search(text)
        return {
            "leader": int(m.group(1)),
            "isr": int_list(m.group(2)),
            "leader_epoch": int(m.group(3)),
            "state_controller_epoch": int(m.group(4)),
            "replicas": int_list(all_replicas.group(1)) if all_replicas else None,
        }
    if "PartitionState(" not in text:
        return None
    fast = _printed_in_order(text)
    if fast is not None:
        return fast
    return _fields_anywhere(text)


# The fields in the order every 0.10+ release prints them (LeaderAndIsrRequest's PartitionState, 2.4+'s
# LeaderAndIsrPartitionState): one match instead of a search per field. ``_fields_anywhere`` finds each
# field's first occurrence wherever it is; the match stands for it only when no field's name comes before
# the match (``_FIELD_NAMES``; a topic name, Kafka's [a-zA-Z0-9._-], holds none), and
# tests/test_templates_shapes.py holds the two equal on every real log's request and on shuffled ones.
_IN_ORDER = re.compile(
    r"PartitionState\((?:topicName='([\w.-]*)', partitionIndex=(\d+), )?controllerEpoch=(-?\d+), leader=(-?\d+), "
    r"leaderEpoch=(-?\d+), isr=\[?([-\d, ]*?)\]?, (?:zkVersion|partitionEpoch)=(-?\d+), "
    r"replicas=\[?([-\d, ]*?)\]?(?=, [a-zA-Z]|\))")
_FIELD_NAMES = re.compile(r"\b(?:leader|leaderEpoch|isr|zkVersion|partitionEpoch|replicas|controllerEpoch|"
                          r"partitionIndex)=|\btopicName='")


def _printed_in_order(text: str) -> dict | None:
    m = _IN_ORDER.search(text)
    if m is None or _FIELD_NAMES.search(text, 0, m.start()) is not None:
        return None
    topic, part, cepoch, leader, lepoch, isr, version, replicas = m.groups()
    out = {
        "leader": int(leader),
        "leader_epoch": int(lepoch),
        "isr": int_list(isr),
        "zk_version": int(version),
        "replicas": int_list(replicas),
        "state_controller_epoch": int(cepoch),
    }
    if topic is None:  # the first topicName/partitionIndex, if any, comes after the state
        t, p = _F_TOPIC_NAME.search(text, m.end()), _F_PARTITION_INDEX.search(text, m.end())
        topic, part = (t.group(1), p.group(1)) if t and p else (None, None)
    if topic is not None:
        out["topic"] = topic
        out["partition"] = int(part)
    return out


def _fields_anywhere(text: str) -> dict | None:
    leader = _int(_F_LEADER.search(text))
    if leader is None:
        return None
    isr = _F_ISR.search(text)
    replicas = _F_REPLICAS.search(text)
    out = {
        "leader": leader,
        "leader_epoch": _int(_F_LEADER_EPOCH.search(text)),
        "isr": int_list(isr.group(1)) if isr else None,
        "zk_version": _int(_F_VERSION.search(text)),
        "replicas": int_list(replicas.group(1)) if replicas else None,
        "state_controller_epoch": _int(_F_CTRL_EPOCH.search(text)),
    }
    topic = _F_TOPIC_NAME.search(text)
    part = _F_PARTITION_INDEX.search(text)
    if topic and part:
        out["topic"] = topic.group(1)
        out["partition"] = int(part.group(1))
    return out


_REMAINING = re.compile(r"topicName='([^']*)', partitionIndex=(\d+)")
_COLLECTION_HEAD = re.compile(r"^(?:[A-Z][A-Za-z]*)?\(")


def strip_collection(text: str) -> str:
    """``Set(a, b)`` / ``HashSet(a)`` / ``List(a)`` / ``[a, b]`` / ``a,b`` -> the inside text."""
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        return t[1:-1]
    m = _COLLECTION_HEAD.match(t)
    if m and t.endswith(")"):
        return t[m.end() : -1]
    return t


_TOPIC_AND_PARTITION = re.compile(r"\[([^\[\],\s]+),(\d+)\]")


def tp_list(text: str) -> list[list]:
    """A printed list of partitions -> [[topic, partition], ...] in the order printed.

    Accepts ``t-0,t-1``, ``Set(t-0, t-1)``, ``[t-0, t-1]``, ``[t,0],[t,1]`` and
    ``[RemainingPartition(topicName='t', partitionIndex=0), ...]``.
    """
    if "topicName='" in text:
        return [[t, int(p)] for t, p in _REMAINING.findall(text)]
    old_style = _TOPIC_AND_PARTITION.findall(text)
    if old_style:
        return [[t, int(p)] for t, p in old_style]
    out: list[list] = []
    for item in strip_collection(text).replace(" ", "").split(","):
        tp = split_topic_partition(item)
        if tp:
            out.append([tp[0], tp[1]])
    return out


_PAIR = re.compile(r"(-?\d+) -> (-?\d+)")


def int_map(text: str) -> dict[str, int]:
    """``HashMap(1 -> 4294967322, 2 -> 4294967340)`` -> {"1": 4294967322, "2": 4294967340}."""
    return {k: int(v) for k, v in _PAIR.findall(text)}


# "[t,0] -> List(0, 1)" / "t-0 -> Vector(0, 1)" / "t-22 -> ReplicaAssignment(replicas=1,0, addingReplicas=, ...)"
_ASSIGN = re.compile(
    r"(\[[^\[\],\s]+,\d+\]|[^\s,(\[]+-\d+) -> "
    r"(?:(?:List|Vector|ArrayBuffer|ArraySeq|WrappedArray|Buffer)?\(([\d, ]*)\)|ReplicaAssignment\(replicas=([\d,]*))"
)


def assignment_map(text: str) -> dict[str, dict[str, list[int]]]:
    """Replica assignments printed by the controller -> {topic: {"<partition>": [replicas]}}."""
    out: dict[str, dict[str, list[int]]] = {}
    for m in _ASSIGN.finditer(text):
        tp = split_topic_partition(m.group(1))
        if tp is None:
            continue
        replicas = m.group(2) if m.group(2) is not None else m.group(3)
        out.setdefault(tp[0], {})[str(tp[1])] = int_list(replicas)
    return out


def state_dump(text: str) -> tuple[list[tuple[str, int, str]], bool]:
    """``Map([t,0] -> OnlinePartition, t-1 -> OfflinePartition, ...)`` -> ([(topic, partition, state)], complete).

    A linear split, not a regex: these dumps reach megabytes on big clusters. Topic
    names hold neither ", " nor " -> ", so both are safe separators. ``complete``
    is False when the dump was cut (an item does not parse), e.g. a truncated line.
    """
    body = text.strip()
    m = _COLLECTION_HEAD.match(body)
    if m is None:
        return [], False
    body = body[m.end() :]
    complete = body.endswith(")")
    if complete:
        body = body[:-1]
    out: list[tuple[str, int, str]] = []
    if not body:
        return out, complete
    for item in body.split(", "):
        key, sep, state = item.rpartition(" -> ")
        tp = split_topic_partition(key) if sep else None
        if tp is None or not state.isalpha():
            complete = False
            continue
        out.append((tp[0], tp[1], state))
    return out, complete


_IDENT_ID = re.compile(r"^\[[^\]]*?(\d+)\]")


def ident_id(message: str) -> int | None:
    """The id in a leading log ident: ``[BrokerChangeListener on Controller 3]: ...`` -> 3."""
    m = _IDENT_ID.match(message)
    return int(m.group(1)) if m else None
