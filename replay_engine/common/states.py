"""Partition and replica states of the ZooKeeper-mode controller, and their valid transitions.

Transitions are data: for each target state, the states it may be entered
from. An invalid transition is rejected (Kafka logs an error and changes
nothing); :func:`check_partition_transition` says so with both names.
"""
from __future__ import annotations

NON_EXISTENT = "NonExistentPartition"
NEW = "NewPartition"
ONLINE = "OnlinePartition"
OFFLINE = "OfflinePartition"

PARTITION_VALID_PREVIOUS: dict[str, frozenset[str]] = {
    NEW: frozenset({NON_EXISTENT}),
    ONLINE: frozenset({NEW, ONLINE, OFFLINE}),
    OFFLINE: frozenset({NEW, ONLINE, OFFLINE}),
    NON_EXISTENT: frozenset({OFFLINE}),
}

NEW_REPLICA = "NewReplica"
ONLINE_REPLICA = "OnlineReplica"
OFFLINE_REPLICA = "OfflineReplica"
DELETION_STARTED = "ReplicaDeletionStarted"
DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
DELETION_INELIGIBLE = "ReplicaDeletionIneligible"
NON_EXISTENT_REPLICA = "NonExistentReplica"

REPLICA_VALID_PREVIOUS: dict[str, frozenset[str]] = {
    NEW_REPLICA: frozenset({NON_EXISTENT_REPLICA}),
    ONLINE_REPLICA: frozenset({NEW_REPLICA, ONLINE_REPLICA, OFFLINE_REPLICA, DELETION_INELIGIBLE}),
    OFFLINE_REPLICA: frozenset({NEW_REPLICA, ONLINE_REPLICA, OFFLINE_REPLICA, DELETION_INELIGIBLE}),
    DELETION_STARTED: frozenset({OFFLINE_REPLICA}),
    DELETION_SUCCESSFUL: frozenset({DELETION_STARTED}),
    DELETION_INELIGIBLE: frozenset({OFFLINE_REPLICA, DELETION_STARTED}),
    NON_EXISTENT_REPLICA: frozenset({DELETION_SUCCESSFUL}),
}


class InvalidTransition(ValueError):
    def __init__(self, kind: str, current: str, target: str, valid: frozenset[str]):
        self.current, self.target = current, target
        super().__init__(
            f"{kind} should be in one of {sorted(valid)} states before moving to {target} state. "
            f"Instead it is in {current} state"
        )


def check_partition_transition(current: str, target: str) -> None:
    valid = PARTITION_VALID_PREVIOUS[target]
    if current not in valid:
        raise InvalidTransition("Partition", current, target, valid)


def check_replica_transition(current: str, target: str) -> None:
    valid = REPLICA_VALID_PREVIOUS[target]
    if current not in valid:
        raise InvalidTransition("Replica", current, target, valid)


def partition_transition_ok(current: str, target: str) -> bool:
    return current in PARTITION_VALID_PREVIOUS.get(target, frozenset())
