"""The structures Kafka prints inside messages (expectations derived by hand from the text)."""
import pytest
from conftest import REAL_LOGS, per_cluster

from parsers.broker_logs.templates.shapes import (
    assignment_map,
    ident_id,
    int_map,
    leader_and_isr,
    leader_isr_epoch,
    leader_json,
    request_partition_state,
    state_dump,
    strip_collection,
    tp_list,
)


@pytest.mark.parametrize("text, expected", [
    ("LeaderAndIsr(leader=1, leaderEpoch=5, isr=List(1, 2), zkVersion=7)", (1, 5, [1, 2], 7)),
    ("LeaderAndIsr(leader=-1, leaderEpoch=6, isr=List(), zkVersion=9)", (-1, 6, [], 9)),
    ("LeaderAndIsr(leader=1, leaderEpoch=5, isr=List(1), leaderRecoveryState=RECOVERED, partitionEpoch=7)", (1, 5, [1], 7)),
    ("LeaderAndIsr(leader=2, leaderEpoch=1, isrWithBrokerEpoch=List(BrokerState(brokerId=2, brokerEpoch=-1), "
     "BrokerState(brokerId=10, brokerEpoch=4)), leaderRecoveryState=RECOVERED, partitionEpoch=3)", (2, 1, [2, 10], 3)),
    ("LeaderAndIsr(leader=2, leaderEpoch=1, isrWithBrokerEpoch=[BrokerState(brokerId=2, brokerEpoch=-1)], "
     "leaderRecoveryState=RECOVERED, partitionEpoch=3)", (2, 1, [2], 3)),
])
def test_leader_and_isr_every_version(text, expected):
    f = leader_and_isr(text)
    assert (f["leader"], f["leader_epoch"], f["isr"], f["zk_version"]) == expected


def test_leader_isr_and_controller_epoch_forms():
    assert leader_isr_epoch("(Leader:1,ISR:1,2,LeaderEpoch:5,ControllerEpoch:3)") == {
        "leader": 1, "isr": [1, 2], "leader_epoch": 5, "zk_version": None, "controller_epoch": 3}
    f = leader_isr_epoch("(Leader:-1,ISR:,LeaderRecoveryState:RECOVERING,LeaderEpoch:5,ZkVersion:7,ControllerEpoch:3)")
    assert (f["leader"], f["isr"], f["zk_version"], f["leader_recovery_state"]) == (-1, [], 7, "RECOVERING")
    assert leader_isr_epoch("(Leader:1,ISR:1)") is None


def test_leader_json_any_key_order():
    assert leader_json('{"leader":-1,"leader_epoch":1,"isr":[0]}') == {
        "leader": -1, "leader_epoch": 1, "isr": [0], "controller_epoch": None}
    assert leader_json('{"controller_epoch":7,"isr":[2,3],"leader":3,"version":1,"leader_epoch":9}') == {
        "leader": 3, "leader_epoch": 9, "isr": [2, 3], "controller_epoch": 7}


def test_request_partition_state_without_a_state_is_none():
    assert request_partition_state("org.apache.kafka.common.requests.LeaderAndIsrRequest$PartitionState@2fb04945") is None


@pytest.mark.parametrize("text, expected", [
    ("t-0,my-topic-12", [["t", 0], ["my-topic", 12]]),
    ("Set(t-0, u-1)", [["t", 0], ["u", 1]]),
    ("[a,0],[b-c,3]", [["a", 0], ["b-c", 3]]),
    ("[t-0, u-1]", [["t", 0], ["u", 1]]),
    ("[RemainingPartition(topicName='x', partitionIndex=2), RemainingPartition(topicName='y-1', partitionIndex=0)]",
     [["x", 2], ["y-1", 0]]),
    ("", []),
    ("Set()", []),
])
def test_tp_list(text, expected):
    assert tp_list(text) == expected


def test_collections_and_maps():
    assert strip_collection("HashSet(a, b)") == "a, b" and strip_collection("[1, 2]") == "1, 2"
    assert int_map("HashMap(0 -> 4294967322, 1 -> 12)") == {"0": 4294967322, "1": 12}
    assert assignment_map("Map([t,0] -> List(0, 1), [t,1] -> List(1), u-3 -> Vector(2))") == {
        "t": {"0": [0, 1], "1": [1]}, "u": {"3": [2]}}


def test_state_dump_split_not_regex():
    items, complete = state_dump("Map([a,0] -> OnlinePartition, b-c-1 -> OfflinePartition)")
    assert (items, complete) == ([("a", 0, "OnlinePartition"), ("b-c", 1, "OfflinePartition")], True)
    items, complete = state_dump("HashMap(a-0 -> NewPartition, b-")
    assert (items, complete) == ([("a", 0, "NewPartition")], False)
    assert state_dump("nonsense") == ([], False)


def test_ident_id():
    assert ident_id("[BrokerChangeListener on Controller 3]: Newly added brokers") == 3
    assert ident_id("[PartitionStateMachine controllerId=100] Started") == 100
    assert ident_id("no ident") is None


def _real_request_states(cluster: str) -> list[str]:
    """Every line of a cluster of ../shared/real_logs that prints a request's partition state."""
    import gzip

    out = []
    for p in sorted((REAL_LOGS / cluster).rglob("*")):
        if not p.is_file():
            continue
        raw = gzip.open(p).read() if p.name.endswith(".gz") else p.read_bytes()
        out += [ln for ln in raw.decode("utf-8", "replace").splitlines() if "PartitionState(" in ln]
    return out


# clusters whose request states the default run reads: 0.10.2, 2.5, 2.8 and 4.0 print them in three shapes
STATE_SHAPES = {"andreinedelciu__kafka-brokers-public", "vishnu1368__kafka_2.12-2.5.1",
                "AndreasTraut__kafka_2.13-2.8.0", "Ammar777782439__kafka_2.13-4.0.0"}


@pytest.mark.parametrize("cluster", per_cluster(sorted(p.name for p in REAL_LOGS.iterdir() if p.is_dir()),
                                                default=STATE_SHAPES))
def test_request_state_printed_in_order_reads_as_the_field_by_field_search(cluster):
    """The one-match path (fields in the order Kafka prints them) gives what the first-occurrence search of each
    field gives, on every request state of the real logs, and declines whenever the two could differ."""
    from parsers.broker_logs.templates.shapes import _fields_anywhere, _printed_in_order

    lines = _real_request_states(cluster)
    # 0.10+ brokers print the request's state: a read that finds none in these is broken
    assert lines or cluster not in STATE_SHAPES
    fast = 0
    for ln in lines:
        i = ln.index("PartitionState(")
        variants = [ln, ln[max(0, i - 40):], ln[i:],
                    "leader=9 " + ln[i:],  # a field's name before the state: the search finds that one
                    ln[i:].replace("leader=", "leader=List(", 1),  # not the printed order: declined
                    ln[i:] + " topicName='late', partitionIndex=77",  # names after an old-style state
                    ln[i:].replace(", isr=", ", isr=List(", 1),
                    ln[i:].replace("topicName='", "topicName='isr=5,", 1)]  # no topic name holds a field's
        for v in variants:
            got = _printed_in_order(v)
            if got is not None:
                fast += 1
                assert got == _fields_anywhere(v), v
            if "LeaderAndIsrInfo:(" not in v:  # 0.8-0.9's shape has its own reading
                assert request_partition_state(v) == _fields_anywhere(v)
    assert fast >= 3 * len(lines)  # the real ones (whole, cut, from the state) take the one match


@pytest.mark.parametrize("cluster", sorted(STATE_SHAPES))
def test_a_state_read_again_gives_a_dict_and_lists_of_its_own(cluster):
    """A partition state's text is read once (shapes.remembered): a second reading of each real request state (and of
    the LeaderAndIsr / LeaderIsrAndControllerEpoch text of every line) is the first's, field for field, though an event
    kept and changed the first's lists and dict; a text none reads stays None."""
    from parsers.broker_logs.templates import shapes

    lines = _real_request_states(cluster)
    assert lines
    texts = {ln[ln.index("PartitionState("):] for ln in lines}
    for fn in (request_partition_state, leader_and_isr, leader_isr_epoch):
        fn.memo.clear()
        read = fn.__wrapped__
        for text in sorted(texts) + ["(Leader:1,ISR:1,2,LeaderEpoch:5,ControllerEpoch:3)", "no state here"]:
            want = read(text)
            first = fn(text)
            assert first == want and text in fn.memo
            if first is not None:
                for v in first.values():
                    if type(v) is list:
                        v.append(99)
                first["leader"] = -99
            assert fn(text) == want, text
    assert shapes.leader_isr_epoch.memo  # the (Leader:..) text was remembered
