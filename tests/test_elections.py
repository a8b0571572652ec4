"""The four election strategies and the ISR removal, against rules hand-derived from Kafka's controller.

Each row: (assignment AR, ISR, live brokers, other inputs) -> expected (leader, ISR) or None.
Sources: controller-semantics.md sections 5-6 and the seed articles 000/003/004.
"""
import pytest

from replay_engine.zk.elections import (Election, controlled_shutdown_leader, offline_partition_leader,
                                     preferred_replica_leader, reassign_partition_leader, remove_replica_from_isr,
                                     remove_replica_from_isr_010)

OFFLINE_CASES = [
    # AR order decides, not ISR order: AR [3,1,2], ISR [1,3] -> 3 (seed 000: "first live replica in AR order in ISR")
    ([3, 1, 2], [1, 3], {1, 2, 3}, False, Election(3, (1, 3))),
    # leader 1 dead, ISR [1,2,3] -> first live ISR member in AR order: 2; ISR drops the dead one
    ([1, 2, 3], [1, 2, 3], {2, 3}, False, Election(2, (2, 3))),
    # seed 003: RF=1, only replica dead -> no leader, whatever unclean says
    ([1], [1], {2, 3}, False, None),
    ([1], [1], {2, 3}, True, None),
    # ISR shrank to [1], 1 dead, 2 alive but out of sync: clean -> none; unclean -> 2 with ISR [2]
    ([1, 2], [1], {2, 3}, False, None),
    ([1, 2], [1], {2, 3}, True, Election(2, (2,), unclean=True)),
    # unclean picks the first live replica in AR order, not the lowest id
    ([3, 2, 1], [1], {2, 3}, True, Election(3, (3,), unclean=True)),
    # a live ISR member always wins over unclean
    ([1, 2, 3], [1, 3], {2, 3}, True, Election(3, (3,))),
    # nobody alive at all
    ([1, 2], [1, 2], set(), True, None),
]


@pytest.mark.parametrize("ar,isr,live,unclean,expected", OFFLINE_CASES)
def test_offline_partition_leader(ar, isr, live, unclean, expected):
    assert offline_partition_leader(ar, isr, frozenset(live), unclean) == expected


def test_controlled_shutdown_skips_the_shutting_down_broker():
    # broker 1 (leader, first in AR) shuts down: 2 is next in AR and in ISR; 1 leaves the ISR
    assert controlled_shutdown_leader([1, 2, 3], [1, 2, 3], frozenset({1, 2, 3}), frozenset({1})) == Election(2, (2, 3))
    # the only ISR member is shutting down: no leader can be moved (Kafka keeps it until it stops)
    assert controlled_shutdown_leader([1, 2], [1], frozenset({1, 2}), frozenset({1})) is None
    # a shutting-down broker is "live or shutting down" but never eligible
    assert controlled_shutdown_leader([2, 1], [2, 1], frozenset({1, 2}), frozenset({2})) == Election(1, (1,))


def test_preferred_replica_only_the_head_of_ar():
    assert preferred_replica_leader([2, 1, 3], [1, 2, 3], frozenset({1, 2, 3})) == Election(2, (1, 2, 3))
    assert preferred_replica_leader([2, 1, 3], [1, 3], frozenset({1, 2, 3})) is None  # head not in ISR
    assert preferred_replica_leader([2, 1, 3], [1, 2, 3], frozenset({1, 3})) is None  # head dead


def test_reassign_uses_the_target_assignment():
    assert reassign_partition_leader([4, 5, 1], [1, 4, 5], frozenset({1, 4, 5})) == Election(4, (1, 4, 5))
    assert reassign_partition_leader([4, 5], [1], frozenset({1, 4, 5})) is None


@pytest.mark.parametrize("leader,isr,replica,expected", [
    (1, [1, 2, 3], 2, (1, (1, 3))),  # follower dies: leader stays, ISR shrinks
    (1, [1, 2], 1, (-1, (2,))),  # leader dies (no election happened first): leader -1
    (1, [1], 1, (-1, (1,))),  # the last ISR member is never removed: leader -1, isr [1] (seed 003)
    (2, [2], 3, (2, (2,))),
])
def test_remove_replica_from_isr(leader, isr, replica, expected):
    assert remove_replica_from_isr(leader, isr, replica) == expected


def test_remove_replica_from_isr_010_empties_isr_when_unclean_enabled():
    assert remove_replica_from_isr_010(1, [1], 1, unclean_enabled=False) == (-1, (1,))
    assert remove_replica_from_isr_010(1, [1], 1, unclean_enabled=True) == (-1, ())
