"""KRaft replay of what a controller writes in one batch, in Kafka's order.

``handleBrokerFenced`` appends the partition changes *before* the fence record (both in one
batch); the periodic ``maybeBalancePartitionLeaders`` moves leadership off a leader that is
still valid (PREFERRED election). Both used to be judged as divergences: the RF=1 partition's
``leader -1`` against "keep broker 2", the rebalance against "keep the current leader".
"""
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from replay_engine.kraft.election import elect_preferred
from samplegen.kafka.kraft_encode import MetadataBatch, encode_log, leader_change

T0 = 1_741_773_000_000
PAY = "AAAAAAAAAAAAAAAAAAAAAQ"
ORD = "AAAAAAAAAAAAAAAAAAAAAw"
DIR = "AAAAAAAAAAAAAAAAAAAABA"


def _register(b: int, epoch: int, ts: int) -> MetadataBatch:
    return MetadataBatch(1, ts, [("RegisterBrokerRecord", 3, {
        "brokerId": b, "incarnationId": "AAAAAAAAAAAAAAAAAAAAAg", "brokerEpoch": epoch,
        "endPoints": [{"name": "PLAINTEXT", "host": f"kafka-broker-{b}", "port": 9092, "securityProtocol": 0}],
        "rack": None, "fenced": True, "logDirs": [DIR]})])


def _fencing(b: int, epoch: int, value: int) -> tuple:
    return ("BrokerRegistrationChangeRecord", 0, {"brokerId": b, "brokerEpoch": epoch, "fenced": value})


def _partition(topic_id: str, p: int, replicas: list[int]) -> tuple:
    return ("PartitionRecord", 1, {"partitionId": p, "topicId": topic_id, "replicas": replicas, "isr": replicas,
                                   "leader": replicas[0], "leaderEpoch": 0, "partitionEpoch": 0,
                                   "directories": [DIR] * len(replicas)})


def _change(topic_id: str, p: int, **fields) -> tuple:
    return ("PartitionChangeRecord", 1, {"partitionId": p, "topicId": topic_id, **fields})


def _replay(batches: list[MetadataBatch]):
    data = encode_log(batches)
    events, _ = parse_source(data, SourceContext(path="c/__cluster_metadata-0/00000000000000000000.log", cluster="t"))
    return replay_cluster(events, "t")


def _cluster() -> list[MetadataBatch]:
    out = [leader_change(1, T0, 3000, [3000])]
    for i, b in enumerate((1, 2, 3)):
        out += [_register(b, 1 + 2 * i, T0 + 10 * i), MetadataBatch(1, T0 + 10 * i + 5, [_fencing(b, 1 + 2 * i, -1)])]
    out.append(MetadataBatch(1, T0 + 100, [("TopicRecord", 0, {"name": "payments", "topicId": PAY}),
                                           _partition(PAY, 0, [2])]))
    out.append(MetadataBatch(1, T0 + 200, [("TopicRecord", 0, {"name": "orders", "topicId": ORD}),
                                           _partition(ORD, 0, [1, 2, 3]), _partition(ORD, 1, [2, 3, 1])]))
    return out


def _fence_broker_2(ts: int) -> MetadataBatch:
    # Kafka's order: every partition change of the fencing, then the fence record itself.
    return MetadataBatch(1, ts, [_change(PAY, 0, leader=-1), _change(ORD, 0, isr=[1, 3]),
                                 _change(ORD, 1, isr=[3, 1], leader=3), _fencing(2, 3, 1)])


def test_fencing_batch_changes_are_judged_with_the_broker_already_out():
    res = _replay(_cluster() + [_fence_broker_2(T0 + 100_000)])
    ag = res.agreement()
    assert ag["agreed"] == ag["compared"], ag["divergences"]
    hows = sorted(c.how for c in res.comparisons if c.ts == (T0 + 100_000) * 1000)
    # RF=1: no leader (not "keep broker 2"); the ISR shrink of orders-0 is judged too; orders-1 fails over to 3
    assert hows == ["ISR shrink on fence / shutdown", "PartitionChangeBuilder (isr)", "PartitionChangeBuilder (none)"]
    (lp,) = res.leaderless
    assert (lp.episode.topic, lp.episode.partition, lp.cause.kind) == ("payments", 0, "all_replicas_offline")


def test_periodic_rebalance_is_a_preferred_election():
    batches = _cluster() + [
        _fence_broker_2(T0 + 100_000),
        _register(2, 20, T0 + 200_000),
        MetadataBatch(1, T0 + 200_100, [_fencing(2, 20, -1), _change(PAY, 0, leader=2)]),
        MetadataBatch(1, T0 + 203_000, [_change(ORD, 0, isr=[1, 3, 2]), _change(ORD, 1, isr=[3, 1, 2])]),
        MetadataBatch(1, T0 + 300_000, [_change(ORD, 1, leader=2)]),
    ]
    res = _replay(batches)
    ag = res.agreement()
    assert ag["agreed"] == ag["compared"], ag["divergences"]
    (c,) = [c for c in res.comparisons if c.ts == (T0 + 300_000) * 1000]
    assert (c.recorded, c.replayed, c.how) == ({"leader": 2}, {"leader": 2}, "PartitionChangeBuilder (preferred)")


def test_moving_a_valid_leader_to_a_non_preferred_replica_still_diverges():
    # orders-1's preferred replica is 2; a record moving its valid leader 2 to 3 is nothing Kafka would write
    res = _replay(_cluster() + [MetadataBatch(1, T0 + 300_000, [_change(ORD, 1, leader=3)])])
    (d,) = res.agreement()["divergences"]
    assert (d["topic"], d["partition"], d["recorded"], d["replayed"]) == ("orders", 1, {"leader": 3}, {"leader": 2})


def test_elect_preferred():
    assert elect_preferred([2, 3, 1], [3, 1, 2], 3, {1, 2, 3}).leader == 2
    assert elect_preferred([2, 3, 1], [3, 1], 3, {1, 2, 3}).leader == 3  # preferred out of the ISR: keep the leader
    assert elect_preferred([2, 3, 1], [3, 1, 2], 3, {1, 3}).leader == 3  # preferred fenced
    assert elect_preferred([2], [2], -1, {1, 3}).leader == -1  # never unclean


def test_a_metadata_log_is_replayed_in_offset_order():
    # greenlemonT__kafka-temp data/kafka1/__cluster_metadata-0/00000000000000000000.log: the bootstrap record at
    # offset 1 carries 06:14:31.712, the LeaderChangeMessage of offset 2 06:14:31.169 (the format's bootstrap batch
    # has its own clock). A log is the order its records were committed and replayed in (KafkaRaftClient appends at
    # increasing offsets): offset 1 comes first.
    from conftest import REAL_LOGS2
    from replay_engine.kraft.facts import prepared

    path = REAL_LOGS2 / "greenlemonT__kafka-temp/data/kafka1/__cluster_metadata-0/00000000000000000000.log.gz"
    events, _ = parse_source(path.read_bytes(), SourceContext(path=str(path.relative_to(REAL_LOGS2))))
    early = {e.source_pos: e.ts for e in events if e.source_pos in (1, 2)}
    assert early[1] > early[2]  # the timestamps disagree with the offsets
    got, _ = prepared(events)
    offsets = [e.source_pos for e in got if e.source_kind == "kraft_metadata"]
    assert offsets == sorted(offsets) and offsets.index(1) < offsets.index(2)
