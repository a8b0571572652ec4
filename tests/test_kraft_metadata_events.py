"""KRaft with a ``__cluster_metadata`` log: each PartitionChangeRecord is judged with the broker state its own offset
holds, and with the broker event it was written for (issue 44, class 4).

The quorum controller writes a broker's change of state and the partition changes it causes as one event, in a fixed
order (3.5.1 .. 3.9.0-rc3 ``ReplicationControlManager``): ``handleBrokerInControlledShutdown`` and
``handleBrokerUnfenced`` append the registration change first, then the partition changes;
``handleBrokerFenced`` / ``handleBrokerUnregistered`` the partition changes first, then the fence or unregistration.
Several events share a Raft batch (the accumulator lingers), so a batch that puts three brokers in controlled shutdown
one after the other holds three events: the changes after broker 1's record were decided with brokers 2 and 3 still
acceptable. The replay used to take every broker a batch takes out as gone for all of its changes.
"""
from __future__ import annotations

import pytest

from conftest import replayed_cluster
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.kraft.evidence import broker_event_of
from replay_engine.kraft.context import broker_events
from samplegen.kafka.kraft_encode import MetadataBatch, encode_log

T0 = 1_741_773_000_000
ORD = "AAAAAAAAAAAAAAAAAAAAAw"


def _verdicts(res, path_tail: str) -> dict[int, tuple]:
    return {c.record.source_pos: (c.verdict, c.recorded, c.replayed) for c in res.comparisons
            if c.record.source_file.endswith(path_tail)}


@pytest.fixture(scope="module")
def greenlemon():
    return replayed_cluster("greenlemonT__kafka-temp", "real_logs2")


def test_changes_after_a_controlled_shutdown_record_are_that_brokers_alone(greenlemon):
    # data/kafka1/__cluster_metadata-0/00000000000000000000.log, batch 6316: offset 6316 puts broker 1 in controlled
    # shutdown, 6318 is PartitionChangeRecord __consumer_offsets-0 leader 3 ISR [3, 2]; brokers 3 and 2 enter
    # controlled shutdown only at 6368 and 6420 of the same batch. Broker 3 was acceptable at 6318.
    v = _verdicts(greenlemon, "kafka1/__cluster_metadata-0/00000000000000000000.log.gz")
    assert v[6318] == ("agreed", {"leader": 3}, {"leader": 3})
    # batch 8109: partition changes 8109.. precede broker 2's fence (8159), then broker 1 enters controlled shutdown
    # (8160): __consumer_offsets-13 leader 1 was decided with broker 1 still acceptable
    assert v[8109] == ("agreed", {"leader": 1}, {"leader": 1})


def test_a_metadata_log_alone_agrees_on_every_record(greenlemon):
    ag = greenlemon.agreement()
    assert ag["compared"] > 3000 and ag["agreed"] == ag["compared"] and ag["uncompared"] == 0


@pytest.mark.parametrize("name", ["ftmhxp__real-time-data-streaming-pipeline", "ogs59__docker-compose-kafka4.10"])
def test_other_metadata_logs_agree_on_every_record(name):
    res = replayed_cluster(name, "real_logs2")
    ag = res.agreement()
    assert ag["compared"] > 200 and ag["agreed"] == ag["compared"] and ag["uncompared"] == 0
    if name.startswith("ftmhxp"):
        # kafka1/data/__cluster_metadata-0/00000000000000000000.log: 12897 puts broker 3 in controlled shutdown,
        # 12899 writes __consumer_offsets-1 ISR [1, 2] (3 left it); broker 1's own shutdown record is 12949
        v = _verdicts(res, "kafka1/data/__cluster_metadata-0/00000000000000000000.log.gz")
        assert v[12899] == ("agreed", {"isr": [1, 2]}, {"isr": [1, 2]})


def test_an_unfence_elects_in_the_batch_that_fenced_the_broker():
    # kafka_data/__cluster_metadata-0/00000000000000000000.log, batch 8371: 8422 fences broker 1, 8423 unfences it,
    # 8424 elects it for _schemas-0 (handleBrokerUnfenced, brokerToAdd). The folder's other metadata log
    # (kafka_2.13-3.5.0/kraft-combined-logs, another cluster id) has records at the same offsets.
    name = "Danielowo2000__BigDataTechnologies-Version-2"
    res = replayed_cluster(name, "real_logs2")
    v = _verdicts(res, "kafka_data/__cluster_metadata-0/00000000000000000000.log.gz")
    assert v[8424] == ("agreed", {"leader": 1}, {"leader": 1})


# ------------------------------------------------------------------ the rule itself, on an encoded log


def _change(p: int, **fields) -> tuple:
    return ("PartitionChangeRecord", 1, {"partitionId": p, "topicId": ORD, **fields})


def _registration(b: int, **fields) -> tuple:
    return ("BrokerRegistrationChangeRecord", 1, {"brokerId": b, "brokerEpoch": 1, **fields})


def _events(batches):
    data = encode_log(batches)
    evs, _ = parse_source(data, SourceContext(path="c/__cluster_metadata-0/00000000000000000000.log", cluster="t"))
    return evs


def test_each_run_of_changes_is_given_the_events_its_place_allows():
    evs = _events([
        MetadataBatch(1, T0, [_registration(1, inControlledShutdown=1), _change(0, leader=2),
                              _registration(3, inControlledShutdown=1), _change(1, leader=2), _change(2, isr=[2]),
                              _registration(2, fenced=1)]),
        MetadataBatch(1, T0 + 10, [_change(3, leader=-1), _registration(3, fenced=1)]),
        MetadataBatch(1, T0 + 20, [_registration(3, fenced=-1), _change(4, leader=3), _change(5, isr=[1, 3])]),
    ])
    got = {k[1]: v for k, v in broker_events(evs).items()}
    assert got == {1: (("remove", 1),),
                   3: (("remove", 3), ("remove", 2)), 4: (("remove", 3), ("remove", 2)),
                   6: (("remove", 3),),
                   9: (("add", 3),), 10: (("add", 3),)}


def test_the_event_a_change_belongs_to_is_the_one_iterating_its_partition():
    both = (("remove", 3), ("remove", 2))
    assert broker_event_of(both, (3, 1), 3) == ("remove", 3)  # partitionsWithBrokerInIsr(3)
    assert broker_event_of(both, (2, 1), 2) == ("remove", 2)  # not 3's: partitionsWithBrokerInIsr(2)
    assert broker_event_of(both, (1,), 1) is None  # neither broker's partition: a change of another kind
    assert broker_event_of((("add", 3), ("remove", 2)), (3,), -1) == ("add", 3)  # partitionsWithNoLeader
    assert broker_event_of((("add", 3), ("remove", 2)), (2, 3), 2) == ("remove", 2)


def test_an_isr_change_no_broker_event_wrote_is_a_leaders_alter_partition(greenlemon):
    # data/kafka1/__cluster_metadata-0/00000000000000000000.log: 6611 unfences broker 1; 6616, alone in its batch,
    # writes __consumer_offsets-13 ISR [2, 1] (leader 2 unchanged): broker 2's AlterPartition, which the controller
    # writes only with every member registered, unfenced and not shutting down (3.3+ ineligibleReplicasForIsr).
    v = _verdicts(greenlemon, "kafka1/__cluster_metadata-0/00000000000000000000.log.gz")
    assert v[6616] == ("agreed", {"isr": [2, 1]}, {"isr": [2, 1]})


def test_alter_partition_rows_follow_the_release():
    from replay_engine import rules as R

    # broker 3 fenced: 3.5 refuses an ISR naming it (INELIGIBLE_REPLICA), 3.2 wrote it
    assert R.decide("kraft.alter_partition", (3, 5, 1), (1, 2, 3), 1, (1, 3), frozenset({1, 2})) is False
    assert R.decide("kraft.alter_partition", (3, 2, 0), (1, 2, 3), 1, (1, 3), frozenset({1, 2})) is True
    assert R.decide("kraft.alter_partition", (3, 5, 1), (1, 2, 3), 1, (2, 3), frozenset({1, 2, 3})) is False  # no leader
