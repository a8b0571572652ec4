"""What a controller's record tells beyond its own partition (ZooKeeper mode, logs alone): which controller acted, in
which epoch, and which brokers it held live. Pure functions of the record's fields and the controller's state.

The replay applies what they return (``ZkControllerReplay.infer_from_record``); phase 1 of a sharded replay asks the
same functions, before a record's facts are built, whether the record would change anything
(``cluster_pass.inert``). One rule, two readers: a record read from its event and from its fact gives the same
answer because both pass the same fields here.
"""
from __future__ import annotations

from typing import AbstractSet, Iterable, NamedTuple

from replay_engine.common.states import OFFLINE

# PartitionStateMachine's in-memory transitions: a state-change line marks them, ZooKeeper holds nothing of them
IN_MEMORY_KINDS = frozenset({"new_state", "offline", "deleted"})
# The kinds of record whose fields imply something of the controller's live brokers (``implied_liveness``)
IMPLYING = frozenset({"election", "new_partition", "isr_removal", "failed"})
# What ``acting`` answers besides None (the record names the controller in office, in its epoch)
NAMES_ANOTHER, STALE = "names another", "stale"


def below_epoch(epoch: int | None, ce: int) -> bool:
    """Was a record logged under a controller epoch below the one in force (a zombie's line, or new ZooKeeper data)?"""
    return epoch is not None and ce < epoch


def names_controller(controller: int | None, epoch: int | None, cid: int, ce: int, kind: str) -> bool:
    """Logs only, a record not ``below_epoch``: does it name a controller the replay must infer elected (another one,
    or a higher epoch)? Every state-change line carries its controller's id and epoch (2.7.0
    StateChangeLogger.scala ``logIdent`` "[Controller id=N epoch=E]", the logger ``ZkPartitionStateMachine``'s
    ``doHandleStateChanges`` writes with ``withControllerEpoch``). An in-memory transition (``IN_MEMORY_KINDS``)
    only marks what a stale-epoch controller said; the acting controller is inferred from writes and failed
    elections (``kind`` "failed")."""
    return kind not in IN_MEMORY_KINDS and (controller != cid or (epoch is not None and ce > epoch))


def acting(controller: int | None, epoch: int | None, cid: int | None, ce: int | None, kind: str) -> str | None:
    """What the record's "[Controller id=C epoch=E]" says of the controller in office: ``NAMES_ANOTHER`` (another
    controller, or a higher epoch, to infer elected), ``STALE`` (an epoch below the one in force: a zombie's line, or
    new ZooKeeper data, which the record's kind and the release tell apart), or None (nothing new)."""
    if cid is None or ce is None:
        return None
    if below_epoch(epoch, ce):
        return STALE
    return NAMES_ANOTHER if names_controller(controller, epoch, cid, ce, kind) else None


def implied_alive(kind: str, leader: int | None, isr, from_state: str | None) -> tuple:
    """The brokers a controller record shows its controller held alive: an elected leader (every election strategy
    picks among the live replicas: 2.7.0 PartitionStateMachine.scala, ``PartitionLeaderElectionAlgorithms``), and the
    ISR of a new partition (``initializeLeaderAndIsrForPartitions``: ISR = the online replicas) or of one elected out
    of OfflinePartition (2.7.0 Election.scala ``leaderForOffline``: the ISR filtered by ``isReplicaOnline``)."""
    if kind not in ("election", "new_partition") or leader is None or leader < 0:
        return ()
    if isr and (kind == "new_partition" or from_state == OFFLINE):
        return (leader, *isr)
    return (leader,)


class Liveness(NamedTuple):
    """What a record implies of the controller's live brokers, against its state before the record."""

    gone: int | None  # a broker the controller saw go (taken out of the live set)
    alive: tuple[int, ...]  # brokers it held live that the replay did not
    stated: frozenset[int] | None  # the live set a failed election states, when it differs from the replay's
    fragile: bool  # the answer reads the brokers in controlled shutdown, which a shard may know more of

    @property
    def changes(self) -> bool:
        return self.gone is not None or bool(self.alive) or self.stated is not None


def implied_liveness(kind: str, leader: int | None, isr, from_state: str | None, removed: int | None,
                     stated: Iterable[int] | None, live: AbstractSet[int], shutting: AbstractSet[int],
                     stopping: AbstractSet[int]) -> Liveness:
    """The controller's live brokers as a record implies them. ``removed``: the replica an ISR removal takes out;
    ``stated``: the live brokers a failed election's exception names (0.8.2.2 PartitionLeaderSelector.scala,
    ``OfflinePartitionLeaderSelector.selectLeader``'s NoReplicaOnlineException); ``live``, ``shutting``,
    ``stopping``: the replay's broker state before the record (``replay_engine.common.brokers``).

    - An ISR removal (OfflineReplica: 2.7.0 ReplicaStateMachine.doHandleStateChanges) means the controller saw the
      broker go, unless it is leaving by a controlled shutdown (its followed replicas leave the ISRs while it is still
      registered). A shutdown the broker logged counts in every shard; one inferred from a partition's records only in
      that partition's shard: the answer is fragile whenever the broker is in the live set.
    - An election names live brokers (``implied_alive``).
    - A failed election states the live set; brokers shutting down stay as they were (the message lists the ones it
      could elect). It is fragile unless the stated set is the replay's own."""
    gone = None
    fragile = False
    if kind == "isr_removal" and removed is not None:
        r = int(removed)
        fragile = r in live
        if fragile and r not in shutting and r not in stopping:
            gone = r
    alive = tuple(b for b in implied_alive(kind, leader, isr, from_state) if b not in live)
    new = None
    if kind == "failed" and stated is not None:
        stated = frozenset(stated)
        fragile = stated != live
        after = stated | (frozenset(live) & frozenset(shutting))
        new = after if after != live else None
    return Liveness(gone, alive, new, fragile)
