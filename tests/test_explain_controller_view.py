"""Causes read from what the controller itself stated (issue 44, class 7: no 'unknown' cause where the replicas are
known), each checked against the cited real line, read here apart from the parsers.

- A controller states which brokers it holds live (at its failover 'Currently active brokers in the cluster: Set(..)',
  1.1.1 KafkaController.initializeControllerContext, read from ZooKeeper; after, each broker change's 'all live
  brokers'), and elects only replicas it holds online (1.1.1 PartitionStateMachine, ``isReplicaOnline``): a partition
  none of whose replicas it held live had no leader for that reason, whatever the replay's registrations say.
- The same with its ISR, as its own cache states it ('All leaders = ... P -> (Leader:-1,ISR:1,...)'), and unclean
  election off.
- A leader's own line taking up the controller's request that names it leader shows it running and live to the
  controller, which sends requests only to brokers it holds live (2.7.0 ControllerChannelManager.sendRequest).
- Only a controller elects: a partition lost while no controller was in office, or whose controller left office
  moments later, waited for the next one.
"""
from __future__ import annotations

import gzip
import re

from conftest import REAL_LOGS2, replayed_cluster
from parsers.schema import iso_utc
from replay_engine.causes.cases import (ALL_REPLICAS_OFFLINE, CONTROLLER_LEFT, CONTROLLER_TOOK_OVER, LEADER_RETURN_UNSEEN,
                                 LIVE_VIEW, NO_CONTROLLER, NO_LIVE_ISR, SERVING)


def _line(cluster: str, rel: str, n: int) -> str:
    return gzip.decompress((REAL_LOGS2 / cluster / rel).read_bytes()).decode().splitlines()[n - 1]


def _case(cluster: str, topic: str, partition: int, start: str):
    res = replayed_cluster(cluster, "real_logs2")
    got = [lp.cause for lp in res.leaderless
           if (lp.episode.topic, lp.episode.partition) == (topic, partition) and iso_utc(lp.episode.start) == start]
    assert len(got) == 1
    return got[0].case


def _cites(claim, cluster: str, rel: str, n: int) -> bool:
    return any(r.source_file == f"{cluster}/{rel}" and r.source_pos == n for r in claim.refs)


def test_no_replica_live_to_the_controller():
    cluster, rel = "rupajain__NewUploadedCode", "kafka_2.11-1.1.1/logs/controller.log.2018-07-26-12.gz"
    live = {int(b) for b in re.search(r"Currently active brokers in the cluster: Set\(([\d, ]*)\)",
                                      _line(cluster, rel, 16)).group(1).split(",")}
    case = _case(cluster, "__consumer_offsets", 0, "2018-07-26T13:01:15.430Z")
    assert (case.kind, case.controller) == (ALL_REPLICAS_OFFLINE, 3)
    assert case.replicas == (0,) and not live & set(case.replicas)
    view = case.claim(LIVE_VIEW)
    assert set(view.value) == live == {1, 3} and _cites(view, cluster, rel, 16)


def test_no_isr_member_live_to_the_controller_as_its_cache_states_the_isr():
    cluster, rel = "cesaralcancio__study-kafka", "logs/controller.log.2021-02-16-17.gz"
    live = {int(b) for b in re.search(r"Set\(([\d, ]*)\)", _line(cluster, rel, 16)).group(1).split(",")}
    cached = re.search(r"__consumer_offsets-3 -> \(Leader:(-?\d+),ISR:([\d,]*),", _line(cluster, rel, 46))
    isr = tuple(int(b) for b in cached.group(2).split(","))
    case = _case(cluster, "__consumer_offsets", 3, "2021-02-16T19:24:49.296Z")
    assert (case.kind, case.form, case.controller) == (NO_LIVE_ISR, "isr_offline_to_controller", 3)
    assert cached.group(1) == "-1" and case.brokers == isr and not live & set(isr)
    assert _cites(case.claim(LIVE_VIEW), cluster, rel, 16)


def test_a_leader_taking_up_the_request_that_names_it_leader_was_running():
    cluster, rel = "piplouille__asi322-partiel", "kafka_2.12-2.2.0/logs/server.log.2020-11-16-11.gz"
    assert re.search(r"\[Partition test-2-0 broker=0\] test-2-0 starts at Leader Epoch 0", _line(cluster, rel, 11))
    case = _case(cluster, "test-2", 0, "2020-11-16T12:00:34.662Z")
    assert (case.kind, case.brokers) == (LEADER_RETURN_UNSEEN, (0,))
    assert _cites(case.claim(SERVING), cluster, rel, 11)


def test_a_loss_while_no_controller_was_in_office():
    # the controller's own ZooKeeper session expired (0.10.2 KafkaController.SessionExpirationListener resigns it)
    # and it was elected again 59 ms later
    cluster = "so3500__volttron-kafka"
    lost, back = "kafka_2.12-0.10.2.1/logs/controller.log.2017-09-20-09.gz", "kafka_2.12-0.10.2.1/logs/server.log.2017-09-20-12.gz"
    assert "ZK expired; shut down all controller components and try to re-elect" in _line(cluster, lost, 1)
    assert "1 successfully elected as leader" in _line(cluster, back, 19)
    case = _case(cluster, "__consumer_offsets", 46, "2017-09-20T13:07:16.787Z")
    assert (case.kind, case.form) == (NO_CONTROLLER, "no_controller")
    assert _cites(case.claim(CONTROLLER_TOOK_OVER), cluster, back, 19)


def test_a_controller_that_left_office_moments_after_the_loss():
    cluster = "danisharora__helloworld"
    rel = "kafka_2.11-0.9.0.0/logs/controller.log.2016-11-15-12.gz"
    assert "Broker 1 resigned as the controller" in _line(cluster, rel, 1016)
    case = _case(cluster, "othertopic", 0, "2016-11-15T14:27:46.600Z")
    assert (case.kind, case.form, case.controller) == (NO_CONTROLLER, "controller_left", 1)
    assert _cites(case.claim(CONTROLLER_LEFT), cluster, rel, 1016)
    assert case.claim(CONTROLLER_TOOK_OVER).broker == 2


def test_a_leader_the_controller_just_elected_was_live_to_it():
    cluster, rel = "cesaralcancio__study-kafka", "logs/state-change.log.gz"
    assert re.search(r"\[Controller id=1 epoch=7\] Changed partition ECOMMERCE_ORDER_APPROVED-2 from OnlinePartition "
                     r"to OnlinePartition with state LeaderAndIsr\(leader=5,", _line(cluster, rel, 2018))
    case = _case(cluster, "ECOMMERCE_ORDER_APPROVED", 2, "2021-02-16T19:32:08.802Z")
    assert (case.kind, case.brokers) == (LEADER_RETURN_UNSEEN, (5,))
    assert _cites(case.claim(SERVING), cluster, rel, 2018)


def test_an_isr_whose_replica_is_on_a_failed_log_directory_is_not_online():
    # shani530 (2.4.0): broker 2's log directory failed ("Error while deleting segments ... in dir ...\kafka-2",
    # server.log.2020-03-31-17.gz:3462), and controller 2 (its own broker) took the replicas on it offline:
    # "Mark replicas ...hello-producer-topic-1-0... on broker 2 as offline" (state-change.log.2020-03-31-23.gz:9979,
    # 2.4.0 KafkaController.onBrokerLogDirFailure -> replicasOnOfflineDirs); then "Changed partition
    # hello-producer-topic-1-0 state from OnlinePartition to OfflinePartition" (:10011). Its ISR was [2]: a replica on
    # an offline directory is not online to the controller (2.4.0 ControllerContext.isReplicaOnline), and broker 1,
    # up as far as the registrations show, was not among the brokers controller 2 held live ('all live brokers: 2',
    # controller.log.2020-03-31-23.gz:124): no replica could be elected -- not 'unknown'.
    cluster = "shani530__KafkaLearning"
    logs = "kafka_2.13-2.4.0/logs/"
    assert re.search(r"Mark replicas .*\bhello-producer-topic-1-0\b.* on broker 2 as offline",
                     _line(cluster, logs + "state-change.log.2020-03-31-23.gz", 9979))
    assert "all live brokers: 2 " in _line(cluster, logs + "controller.log.2020-03-31-23.gz", 124)
    case = _case(cluster, "hello-producer-topic-1", 0, "2020-03-31T15:03:34.870Z")
    assert (case.kind, case.form, case.controller, case.isr_at_loss) == (ALL_REPLICAS_OFFLINE, "dirs_offline", 2, (2,))
    from replay_engine.causes.cases import REPLICA_DIR_OFFLINE

    [dirs] = [c for c in case.downs if c.what == REPLICA_DIR_OFFLINE]
    assert dirs.broker == 2 and _cites(dirs, cluster, logs + "state-change.log.2020-03-31-23.gz", 9979)
    assert case.others == (1,) and _cites(case.claim(LIVE_VIEW), cluster, logs + "controller.log.2020-03-31-23.gz", 124)
