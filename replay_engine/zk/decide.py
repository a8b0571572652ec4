"""What a decision of the ZooKeeper-mode controller does to one partition, as data (pure).

The controller's handlers pick the strategy and call the election functions (``elections``); this turns
the outcome into the :class:`~replay_engine.common.apply.Change` the apply module writes, with the leader-epoch
and zkVersion bumps that go with it (Kafka's ``LeaderAndIsr.newLeaderAndIsr``: a new leader or ISR
written by the controller raises the leader epoch by one; the znode write raises its version), and the
state the decision attempts (checked against the valid-previous-states table before anything is made).
"""
from __future__ import annotations

from replay_engine.common.apply import KEEP, Change
from replay_engine.common.partition import PState
from replay_engine.common.states import NEW, OFFLINE, ONLINE

WRITES = ("election", "isr_removal", "new_partition")
ELECTIONS = ("election", "election_failed", "new_partition", "new_partition_failed")


def change_for(p: PState, kind: str, leader: int | None, isr: tuple[int, ...] | None, controller_epoch: int | None,
               keep_state: bool = False) -> Change:
    """The change, with the state the decision moves the partition to (``attempted``, None: no move).

    Every election kind attempts OnlinePartition (``handleStateChanges(..., OnlinePartition, strategy)``),
    whether it then finds a leader or not; a failed one leaves the partition Offline (New stays New).
    """
    attempted = ONLINE if kind in ELECTIONS else None
    if kind in WRITES:
        if kind == "new_partition":
            le, zv = 0, 0
        else:
            le = None if p.leader_epoch is None else p.leader_epoch + 1
            zv = None if p.zk_version is None else p.zk_version + 1
        state, init_failed = KEEP, KEEP
        if kind != "isr_removal":
            state, init_failed = ONLINE, False
        return Change(leader, isr, le, zv, controller_epoch, state, init_failed, attempted=attempted)
    # a failed election counts in the partition's history, unless the partition simply keeps its leader
    # (controlled shutdown with no other ISR member)
    if kind == "election_failed":
        return Change(state=OFFLINE if p.state != NEW and not keep_state else KEEP, attempted=attempted,
                      failed_election=not keep_state)
    if kind == "new_partition_failed":  # the partition stays NewPartition
        return Change(init_failed=True, attempted=attempted, failed_election=not keep_state)
    raise ValueError(f"unknown decision kind {kind!r}")
