"""What the replay consumes: typed facts, each citing the event it came from.

Parsers speak in events (many sources, many shapes); the controller loop
speaks in facts (one shape per thing that can happen to a cluster). Three
roles:
- *inputs*: things that happened to the controller (a broker's session ended,
  a topic was created, a leader shrank its ISR, an admin asked for an election);
- *records*: decisions the real controller made and left behind (a state-znode
  write, a ``Changed partition`` line, a failed election): the replay compares
  its own decision with them, then follows the record;
- *observations*: the state as somebody saw it (a znode dump, a new
  controller's initial-state dump): adopted as truth at that moment;
- *evidence*: lines that act on nothing but help explain (a kill, a client
  error): indexed by broker and partition.

Both replays consume these facts: ``from_events.py`` makes them from
ZooKeeper-mode evidence, ``kraft_facts.py`` from KRaft metadata records and
log lines. Where a KRaft record means what a ZooKeeper-mode fact means (a
fence and a session expiry both take a broker out: ``BrokerDown`` with its
cause), it is that fact; KRaft-only meanings have their own classes below.
``roles.py`` routes each fact to its replay's handler by ``role``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from parsers.schema import iso_utc
from replay_engine.common.frozen import quick_init

TP = tuple[str, int]


@quick_init
@dataclass(frozen=True)
class Ref:
    """Provenance: the event a fact (or a statement in a report) rests on."""

    ts: int | None
    event: str
    source_file: str | None
    source_pos: int | None
    text: str
    zxid: int | None = None
    broker: int | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "ts": iso_utc(self.ts),
            "event": self.event,
            "source_file": self.source_file,
            "source_pos": self.source_pos,
            "text": self.text,
        }
        if self.zxid is not None:
            out["zxid"] = hex(self.zxid)
        return out

    def cite(self) -> str:
        where = f"{self.source_file}:{self.source_pos}" if self.source_file else "?"
        if self.zxid is not None:
            where += f" (zxid {hex(self.zxid)})"
        return where


@dataclass
class Fact:
    ts: int
    ref: Ref
    order: tuple = field(default=(), compare=False)

    role = "input"  # one of roles.ROLES: an input unless the class says otherwise


# ---- inputs: cluster membership and leadership of the controller ----------------------------------


# Who says a broker came or went: ZooKeeper itself ("zk"), the controller having processed it
# ("controller"), or the broker about itself ("self", which the controller learns only later).
@dataclass
class BrokerUp(Fact):
    broker: int = -1
    epoch: int | None = None  # broker epoch (czxid) when known
    via: str = ""
    view: str = "zk"


@dataclass
class BrokerDown(Fact):
    broker: int = -1
    # ZooKeeper mode: session_expired, session_closed, shutdown, deleted, controller_detected.
    # KRaft: fenced (a fence record or line), unregistered, heartbeat_timeout (the controller's "Fencing broker N
    # because its session has timed out": the fence itself follows as its record).
    cause: str = ""
    view: str = "zk"


@dataclass
class LiveSet(Fact):
    """The controller's full view of live brokers (e.g. 'all live brokers: 1,2'): resynchronises liveness."""

    brokers: frozenset[int] = frozenset()
    controller: int | None = None


@dataclass
class ZkHole(Fact):
    """Transactions no file holds (``zk_holes``): zxids ``after`` < z < ``before``. With ``snapshot``, a snapshot
    states the tree they left: ``keep``, the partitions whose state it shows unchanged since before the hole,
    ``assigned``, the topics whose assignment it shows unchanged, ``members``, the brokers registered at its zxid,
    and ``anew``, those of them that registered inside the hole."""

    after: int = 0
    before: int = 0
    snapshot: int | None = None
    keep: frozenset[TP] = frozenset()
    assigned: frozenset[str] = frozenset()
    members: frozenset[int] = frozenset()
    anew: frozenset[int] = frozenset()


@dataclass
class ReplicasOffline(Fact):
    """The controller holds these replicas of the broker offline (a failed log directory, or a failover's
    OfflineReplica for a replica it did not hold online): they cannot lead until the controller brings them online
    again or the broker registers anew."""

    broker: int = -1
    tps: tuple[TP, ...] = ()
    cause: str = "log_dir"  # or "failover"


@dataclass
class ReplicasOnline(Fact):
    """The controller's replica state machine moved these replicas of the broker to OnlineReplica."""

    broker: int = -1
    tps: tuple[TP, ...] = ()


@dataclass
class ControllerElected(Fact):
    controller: int = -1
    epoch: int | None = None


@dataclass
class ControllerGone(Fact):
    controller: int | None = None
    cause: str = ""


# ---- inputs: topics, configs, admin requests, leader-side ISR changes -------------------------------


@dataclass
class TopicAssignment(Fact):
    topic: str = ""
    assignment: dict[int, tuple[int, ...]] = field(default_factory=dict)
    adding: dict[int, tuple[int, ...]] = field(default_factory=dict)
    removing: dict[int, tuple[int, ...]] = field(default_factory=dict)


@dataclass
class TopicGone(Fact):
    topic: str = ""


@dataclass
class TopicsListed(Fact):
    """A new controller's list of the cluster's topics, read from ZooKeeper at its failover ('Current list of topics
    in the cluster: Set(..)', 0.10.2.0 KafkaController.initializeControllerContext: ``controllerContext.allTopics =
    zkUtils.getAllTopics()``, as 0.9.0.0; 2.4.0 ``zkClient.getAllTopicsInCluster``): a topic not in it had been deleted, whether
    or not a line shows its deletion."""

    topics: frozenset[str] = frozenset()
    controller: int | None = None


@dataclass
class TopicConfig(Fact):
    topic: str = ""
    config: dict[str, str] = field(default_factory=dict)


@dataclass
class BrokerConfig(Fact):
    broker: int | None = None  # None = dynamic cluster-wide default
    config: dict[str, str] = field(default_factory=dict)
    static: bool = True


@dataclass
class KafkaVersion(Fact):
    version: str = ""


@dataclass
class LeaderIsrChange(Fact):
    """The partition leader changed the ISR itself (shrink/expand), not a controller decision."""

    tp: TP = ("", 0)
    leader: int | None = None
    isr: tuple[int, ...] = ()
    leader_epoch: int | None = None
    zk_version: int | None = None


@dataclass
class ControlledShutdownRequest(Fact):
    broker: int = -1


@dataclass
class PreferredElectionRequest(Fact):
    tps: tuple[TP, ...] | None = None  # None = all partitions
    trigger: str = "admin"


@dataclass
class ReassignmentRequest(Fact):
    targets: dict[TP, tuple[int, ...]] = field(default_factory=dict)


@dataclass
class TopicDeletionRequest(Fact):
    topic: str = ""


@dataclass
class TopicDeletionHalted(Fact):
    """The controller put a topic's deletion on hold (TopicDeletionManager.markTopicIneligibleForDeletion):
    its partitions stay offline until the deletion can go on."""

    topic: str = ""
    reason: str | None = None

    role = "evidence"


# ---- records and observations ------------------------------------------------------------------------


@dataclass
class StatedPartition:
    """What a record or an observation states of a partition (None: not stated). Not a fact itself: the fields
    ``RecordedState`` and ``ObservedState`` share, after a fact's own (listed as the second base)."""

    tp: TP = ("", 0)
    leader: int | None = None
    isr: tuple[int, ...] | None = None
    leader_epoch: int | None = None
    controller_epoch: int | None = None
    zk_version: int | None = None
    replicas: tuple[int, ...] | None = None


@dataclass
class RecordedState(StatedPartition, Fact):
    """A partition state the real controller wrote or logged (leader/ISR may be partly unknown)."""

    from_state: str | None = None
    to_state: str | None = None
    kind: str = "write"  # election, new_partition, isr_removal, new_state (-> NewPartition), offline, write
    removed_replica: int | None = None
    created: bool = False
    strategy: str | None = None
    controller_id: int | None = None  # the controller that logged or wrote it, when stated

    role = "record"


@dataclass
class RecordedFailedElection(Fact):
    tp: TP = ("", 0)
    strategy: str | None = None
    reason: str | None = None
    from_state: str | None = None
    live: frozenset[int] | None = None
    isr: tuple[int, ...] | None = None
    assigned: tuple[int, ...] | None = None
    controller_id: int | None = None
    controller_epoch: int | None = None
    # aborted by the controller-epoch fence: the controller epoch the partition's state was found written under
    fenced_by: int | None = None

    role = "record"


@dataclass
class ObservedState(StatedPartition, Fact):
    state: str | None = None
    # the state a newly elected controller set up (its "Started partition state machine with initial state"
    # dump): initializePartitionState's outcome, not a transition from what the replay knew before
    initial: bool = False
    # a broker's own line: "leader" / "follower" (Partition.makeLeader / makeFollower), None for a LeaderAndIsr
    # request received or a dump; ``skipped``: the broker was already at a newer leader epoch and skipped it
    became: str | None = None
    skipped: bool = False
    # a leader's own line: (the leader, the leader epoch) the broker held before this epoch (Partition.makeLeader)
    previous: tuple[int, int] | None = None
    # a registration a controller restates while loading a snapshot: (the snapshot's offset, its quorum epoch)
    snapshot: tuple[int, int] | None = None
    topic_id: str | None = None  # KRaft: the topic's id the line names (one incarnation of the topic)
    # the replicas are the controller's own list of the assignment, in order (not a broker's request line, whose
    # order depends on the release: rule zk.line.replicas_order)
    ar_in_order: bool = False
    # the epoch of the controller whose request (LeaderAndIsr received, UpdateMetadata sent) states it: that
    # controller's context, which it read from ZooKeeper at its failover or wrote itself; ``sending``: the
    # controller's own line, logged as it sends (its context at the line), not a broker's of a request it handled
    sender_epoch: int | None = None
    sending: bool = False
    # the brokers the controller's own line sends the request to: each of them live or shutting down to it
    # (``replay_engine.rules.zk_lines`` UPDATE_METADATA_RECIPIENTS)
    recipients: tuple[int, ...] | None = None

    role = "observation"


@dataclass
class Evidence(Fact):
    """Not an input: a line that helps explain (a kill, a session expiry seen by the broker, a client error)."""

    kind: str = ""
    broker: int | None = None
    tp: TP | None = None

    role = "evidence"


@dataclass
class ReassignAway(Fact):
    """What-if operation: move every replica off ``broker`` (kafka-reassign-partitions) before it stops."""

    broker: int = -1


@dataclass
class BrokerStopped(Fact):
    """The broker process died (kill -9, crash) but its ZooKeeper session lives on until it expires: it
    serves nothing, yet the controller does not know. Used by what-if, where the kill time is estimated."""

    broker: int = -1


@dataclass
class RecordHint(Fact):
    """A partition shard's view of another shard's controller record: only what it says about the
    whole cluster (which controller acted, which brokers it believed alive) is taken from it."""

    record: Fact | None = None

    role = "record"


@dataclass
class LeaderActiveHint(Fact):
    """A KRaft partition shard's view of another shard's broker line that showed its leader active (from logs
    alone, ``KraftLines._observed``): only what it says of that broker's liveness is taken from it. A
    ``candidate`` is phase 1's guess, taken only where the leader was not acceptable (``kraft_split``)."""

    leader: int = -1
    key: tuple = ()
    candidate: bool = False

    role = "observation"


@dataclass
class MetadataLogBegins(Fact):
    """The __cluster_metadata log's first partition record: from here on its records say every decision."""


# ---- KRaft-only meanings (kraft_facts.py) -----------------------------------------------------------
# A partition epoch (bumped by every PartitionChangeRecord) sits where ZooKeeper mode keeps the znode version:
# ``zk_version``, as the partition store names it for both.


@dataclass
class BrokerRegistered(BrokerUp):
    """A RegisterBrokerRecord (or its line): a new incarnation of the broker, with its broker epoch. A KRaft broker
    registers fenced and may lead only once the controller unfences it; ``fenced`` None = the line does not say;
    ``incarnation`` its incarnation id, when the record or line names it."""

    fenced: bool | None = None
    incarnation: str | None = None


@dataclass
class BrokerUncleanShutdown(Fact):
    """A new incarnation of a broker registering (3.9+ "Registering a new incarnation of broker B ..."): before its
    RegisterBrokerRecord the controller writes handleBrokerUncleanShutdown's changes, which take the broker out of
    every ISR and ELR and never elect it (``brokerWithUncleanShutdown``)."""

    broker: int = -1


@dataclass
class BrokerRegistrationObserved(Fact):
    """A registration a controller re-logs while loading the metadata log: the broker was registered (with this
    epoch) before, not just now."""

    broker: int = -1
    epoch: int | None = None

    role = "observation"


@dataclass
class TopicNamed(Fact):
    """A TopicRecord: the topic id the controller names the topic's partitions by."""

    topic: str = ""
    topic_id: str = ""


@dataclass
class FeatureLevel(Fact):
    """A FeatureLevelRecord (e.g. eligible.leader.replicas.version): a rule switched on at this level."""

    name: str | None = None
    level: int | None = None


@dataclass
class PartitionRegistration(RecordedState):
    """A PartitionRecord: a partition created (or, from a snapshot or a line, its registration as it stands),
    with its eligible leader replicas (KIP-966)."""

    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    metadata_log: bool = False  # read from __cluster_metadata itself, not from a log line
    snapshot: bool = False  # a snapshot's or a line's restatement, not a creation just now
    topic_id: str | None = None


@dataclass
class PartitionChange(RecordedState):
    """A PartitionChangeRecord (or PartitionChangeBuilder's line): the controller's election or ISR change. Only
    the ``changed`` fields are stated; ``elr`` / ``last_known_elr`` None = not in the record."""

    changed: frozenset[str] = frozenset()
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    previous: dict[str, Any] | None = None  # the registration a 4.x line says the change started from
    # the broker events a metadata log record may have been written for, in log order: ('remove', B) or ('add', B)
    # (kraft_pass.broker_events)
    broker_events: tuple[tuple[str, int], ...] = ()
    metadata_log: bool = False
    topic_id: str | None = None
    # a line a controller logs while loading its log at start-up: a record written before, not a decision now
    restated: bool = False
