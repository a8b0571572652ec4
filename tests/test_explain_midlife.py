"""Logs that start mid-life: no topic creation, no registration, yet the answer must not be 'unknown' or 'dead'.

Hand-derived expectations from Kafka 2.8 lines (wording as the controller writes them)."""
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster

CONTROLLER = (
    "[2023-01-07 00:36:46,012] INFO [Controller id=1] Newly added brokers: , deleted brokers: 2, bounced brokers: , "
    "all live brokers: 1,3 (kafka.controller.KafkaController)\n"
    "[2023-01-07 00:36:46,012] INFO [Controller id=1] Broker failure callback for 2 (kafka.controller.KafkaController)\n"
)
STATE_CHANGE = (
    "[2023-01-07 00:36:46,032] ERROR [Controller id=1 epoch=1] Controller 1 epoch 1 failed to change state for "
    "partition logs-1 from OfflinePartition to OnlinePartition (state.change.logger)\n"
    "kafka.common.StateChangeFailedException: Failed to elect leader for partition logs-1 under strategy "
    "OfflinePartitionLeaderElectionStrategy(false)\n"
    "\tat kafka.controller.ZkPartitionStateMachine.$anonfun$doElectLeaderForPartitions$7(PartitionStateMachine.scala:424)\n"
)
SERVER_3 = (
    "[2023-01-07 00:30:00,000] INFO [Partition events-5 broker=3] Shrinking ISR from 1,2,3 to 1,3. Leader: "
    "(highWatermark: 10, endOffset: 12). Out of sync replicas: (brokerId: 2, endOffset: 10). (kafka.cluster.Partition)\n"
    "[2023-01-07 00:30:00,010] DEBUG [Controller id=1] ISR for partition events-5 updated to [1,3] and zkVersion "
    "updated to [1] (kafka.controller.KafkaController)\n"
)


def events():
    out = []
    for path, text in (("broker-1/controller.log", CONTROLLER), ("broker-1/state-change.log", STATE_CHANGE),
                       ("broker-3/server.log", SERVER_3)):
        evs, summary = parse_source(text.encode(), SourceContext(path, cluster="c", broker_hint=int(path[7])))
        assert summary.unrecognized == 0, summary.samples
        out += evs
    return out


def test_failed_election_right_after_a_failure_explains_the_outage():
    res = replay_cluster(events(), "c")
    (lp,) = [x for x in res.leaderless if x.episode.topic == "logs"]
    assert lp.cause.kind == "no_live_isr"
    assert lp.cause.details["cause_brokers"] == [2]
    assert "right after broker 2 was declared dead by the controller at 2023-01-07T00:36:46.012Z" in lp.cause.summary
    assert "no in-sync replica was alive" in lp.cause.summary


def test_a_leader_never_seen_joining_is_not_dead_and_the_controller_is_not_the_leader():
    res = replay_cluster(events(), "c")
    ivs = [iv for iv in res.intervals if iv.topic == "events"]
    assert ivs and all(iv.view.leader == 3 for iv in ivs)  # the writer of the shrink, not controller 1
    assert not any(iv.view.leaderless for iv in ivs)
    assert ivs[0].view.leader_alive is None  # before the controller's broker list names broker 3 alive
    assert ivs[-1].view.leader_alive is True


def real(name):
    from conftest import REAL_LOGS
    from test_shard import load

    return replay_cluster(load(REAL_LOGS / name), name)


def test_a_broker_that_asked_to_shut_down_is_down_once_the_controller_no_longer_lists_it():
    # choopong (Kafka 1.1): broker 0 (the only replica) asked for a controlled shutdown at 17:54:27.777, logged
    # "Resigned" at 17:54:28.387 and closed its ZooKeeper session at 17:54:28.389 ("[ZooKeeperClient] Closing." at
    # .388: KafkaServer.shutdown runs kafkaController.shutdown() then zkClient.close()); controller 2, elected next,
    # listed the live brokers at 17:54:28.433 ("Currently active brokers in the cluster: Set(2)") and failed to elect
    # __consumer_offsets-0 at 28.513. Broker 0 itself wrote "shut down completed" only at 17:54:31.151: it was gone
    # for the cluster from its resignation, 2 ms before the session's close.
    res = real("choopong__kafka")
    (lp,) = [x for x in res.leaderless if (x.episode.topic, x.episode.partition) == ("__consumer_offsets", 0)
             and x.episode.start == 1531936468387000]
    assert lp.cause.kind == "all_replicas_offline"
    assert "broker 0, shut down at 2018-07-18T17:54:28.387Z" in lp.cause.summary


def test_a_failed_election_whose_replicas_only_the_update_metadata_trace_states_names_the_dead_replica():
    # vishnu1368 (2.5.1): no line states __consumer_offsets-0's creation, but controller 1 sent "UpdateMetadata request
    # UpdateMetadataPartitionState(topicName='__consumer_offsets', partitionIndex=0, ..., leader=-1, leaderEpoch=2,
    # isr=[0], zkVersion=2, replicas=[0], offlineReplicas=[0])" (state-change.log.2025-12-04-22.gz, 00:53:12.392) and
    # controller 2 listed "Currently active brokers in the cluster: Set(1, 2)" at 00:53:07.453. (Before the
    # UpdateMetadata trace was read, the replicas were unknown and the cause only said "no in-sync replica was alive".)
    res = real("vishnu1368__kafka_2.12-2.5.1")
    (lp,) = [x for x in res.leaderless if (x.episode.topic, x.episode.partition) == ("__consumer_offsets", 0)]
    assert lp.cause.kind == "all_replicas_offline"
    assert "replication factor 1 and its only replica, broker 0, was not running" in lp.cause.summary


def test_a_controlled_shutdown_whose_own_last_lines_were_overwritten_is_still_a_shutdown():
    # CodingCookieRookie (2.8, three brokers logging into one folder, so rotations overwrote each other): controller 0
    # took up broker 0's controlled shutdown at 22:57:55.848 and resigned at 22:58:08.294 (its ZooKeeper session closes
    # right after: KafkaServer.shutdown); controller 2 listed the live brokers as Set(1, 2) at 22:58:08.379; broker 0
    # came back at 22:59:23.635 ("Newly added brokers: 0"). Broker 0's own "shut down completed" line is not in any
    # file. __consumer_offsets-0 had ISR [0] only, and its assignment is [0] (controller 2's DEBUG "Topics not in
    # preferred replica for broker 0 ... __consumer_offsets-0 -> List(0)", controller.log.2021-11-12-22.gz:55).
    res = real("CodingCookieRookie__CS3219_TASKD")
    (lp,) = [x for x in res.leaderless if (x.episode.topic, x.episode.partition) == ("__consumer_offsets", 0)
             and x.episode.start == 1636757888294000]
    assert lp.episode.end == 1636757963635000
    assert (lp.cause.kind, lp.cause.case.form) == ("all_replicas_offline", "rf1")
    assert "its only replica, broker 0, shut down at 2021-11-12T22:58:08.294Z" in lp.cause.summary
