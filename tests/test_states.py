import pytest

from replay_engine.common.states import (InvalidTransition, check_partition_transition, check_replica_transition,
                                  partition_transition_ok)


@pytest.mark.parametrize("cur,target,ok", [
    ("NonExistentPartition", "NewPartition", True),
    ("NewPartition", "OnlinePartition", True),
    ("OfflinePartition", "OnlinePartition", True),
    ("OnlinePartition", "OnlinePartition", True),  # preferred / controlled-shutdown re-election
    ("OnlinePartition", "NonExistentPartition", False),  # must go Offline first
    ("NonExistentPartition", "OnlinePartition", False),
    ("OfflinePartition", "NonExistentPartition", True),
    ("NewPartition", "NewPartition", False),
])
def test_partition_transitions(cur, target, ok):
    assert partition_transition_ok(cur, target) is ok


def test_invalid_transition_names_both_states_like_kafka():
    with pytest.raises(InvalidTransition) as exc:
        check_partition_transition("OnlinePartition", "NonExistentPartition")
    assert "Instead it is in OnlinePartition state" in str(exc.value)
    assert "NonExistentPartition" in str(exc.value)
    check_replica_transition("OfflineReplica", "ReplicaDeletionStarted")
    with pytest.raises(InvalidTransition):
        check_replica_transition("OnlineReplica", "ReplicaDeletionStarted")
