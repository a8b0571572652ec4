"""Every line in which Kafka says a partition had no leader falls inside a leaderless interval (issue 44, class 6), and
such an outage is explained (class 7). Each case is read from the cited real lines, apart from the parsers.

A decision the replay took itself, which a controller's context stated later had not been made: a controller's context never goes back in leader epoch: it holds what it read from ZooKeeper at its failover (2.4.0
KafkaController.initializeControllerContext -> updateLeaderAndIsrCache) or wrote since, and its requests carry it
(ControllerChannelManager.addUpdateMetadataRequestForBrokers, logged as sent by sendUpdateMetadataRequests, TRACE).
A line of it at a leader epoch below the one the replay's own decision wrote shows that decision was not made by
then: the partition is as the line states, and the outage the decision was to end goes on.

A topic a new controller's list of the cluster's topics (read from ZooKeeper at its failover) leaves out had been
deleted, and a 0.9-0.10 deletion thread's own lines state a deletion: a later outage of such a partition is no outage,
or is the deletion's.

A partition the replay held NewPartition (its creation's election in no line) that the controller moves "from
OnlinePartition to OfflinePartition" (1.0.0 PartitionStateMachine.handleStateChange logs the state it moves from)
was online and lost its leader at that line.
"""
from __future__ import annotations

import copy
import gzip
import re

from conftest import REAL_LOGS2, log4j_us, real_cluster_events, replayed_cluster
from replay_engine.causes.cases import UNKNOWN

CLUSTER = "shani530__KafkaLearning"
LOGS = "kafka_2.13-2.4.0/logs"
_REPLAYED: dict = {}


def _line(rel: str, n: int, cluster: str = CLUSTER, logs: str = LOGS) -> str:
    return gzip.decompress((REAL_LOGS2 / cluster / logs / rel).read_bytes()).decode().splitlines()[n - 1]


def _ts(line: str) -> int:
    return log4j_us(re.match(r"\[([^\]]+)\]", line).group(1))


def _replayed_part(rel: str, n: int, cluster: str = CLUSTER, logs: str = LOGS):
    """The replay of the cluster the folder's split (as `kafka-forensics replay` splits it) puts the cited line in."""
    from forensics.pipeline import split_clusters
    from replay_engine.api import replay_cluster

    kept, _ = split_clusters([copy.copy(e) for e in real_cluster_events(cluster, folder="real_logs2")])
    name = next(e.cluster for e in kept if e.source_file == f"{cluster}/{logs}/{rel}" and e.source_pos == n)
    if name not in _REPLAYED:
        _REPLAYED[name] = replay_cluster([e for e in kept if e.cluster == name], name)
    return _REPLAYED[name]


def _episodes(res, topic: str, partition: int) -> list[tuple[int, int | None]]:
    return [(lp.episode.start, lp.episode.end) for lp in res.leaderless
            if (lp.episode.topic, lp.episode.partition) == (topic, partition)]


def test_a_new_controller_states_the_leader_epoch_before_the_replays_election():
    # server.log.2020-03-31-17.gz:4313 broker 0 registers at 15:05:07.495; the replay, holding controller 2 in office,
    # elected __transaction_state-13's leader then (epoch 4). controller.log.2020-03-31-23.gz:143: broker 0 itself
    # became controller with epoch 15 at 15:05:07.673 (controller 2 was gone); at 15:05:08.450 its UpdateMetadata
    # (state-change.log.2020-03-31-23.gz:10203) still states leader -1 at leader epoch 3, as ZooKeeper held it; its
    # own election of leader 0 at epoch 4 is at 15:05:09.597 (:12862).
    registered = _line("server.log.2020-03-31-17.gz", 4313)
    elected = _line("controller.log.2020-03-31-23.gz", 143)
    sent = _line("state-change.log.2020-03-31-23.gz", 10203)
    changed = _line("state-change.log.2020-03-31-23.gz", 12862)
    assert "Registered broker 0 at path /brokers/ids/0" in registered
    assert "0 successfully elected as the controller. Epoch incremented to 15" in elected
    assert "[Controller id=0 epoch=15] Sending UpdateMetadata request" in sent
    assert "topicName='__transaction_state', partitionIndex=13," in sent and "leader=-1, leaderEpoch=3," in sent
    assert "__transaction_state-13 from OfflinePartition to OnlinePartition" in changed and "leaderEpoch=4" in changed
    assert _ts(registered) < _ts(elected) < _ts(sent) < _ts(changed)

    res = _replayed_part("state-change.log.2020-03-31-23.gz", 10203)
    covering = [(a, b) for a, b in _episodes(res, "__transaction_state", 13) if a <= _ts(sent) and (b is None or
                                                                                                   _ts(sent) <= b)]
    assert covering == [(covering[0][0], _ts(changed))] and covering[0][0] < _ts(registered)
    withdrawn = [d for d in res.decisions if d.tp == ("__transaction_state", 13) and d.ts == _ts(registered)]
    assert withdrawn and all(d.status == "unrecorded" and "withdrawn" in (d.note or "") for d in withdrawn)


def test_the_controller_in_office_states_a_leader_epoch_below_the_replays_election():
    # controller.log.2020-04-01-19.gz: controller 1 (epoch 5) starts; the replay elected hello-producer-topic-4's
    # leader at its failover (epoch 4); its own UpdateMetadata at 19:36:57.680 (state-change.log.2020-04-01-19.gz:161)
    # states leader -1 at leader epoch 3 (replica 2 removed from the ISR, :140 'ReplicaDeletionIneligible to
    # OfflineReplica' just before): the partition had no leader there.
    sent = _line("state-change.log.2020-04-01-19.gz", 161)
    assert "[Controller id=1 epoch=5] Sending UpdateMetadata request" in sent
    assert "topicName='hello-producer-topic', partitionIndex=4," in sent and "leader=-1, leaderEpoch=3," in sent
    res = _replayed_part("state-change.log.2020-04-01-19.gz", 161)
    assert any(a <= _ts(sent) and (b is None or _ts(sent) <= b) for a, b in _episodes(res, "hello-producer-topic", 4))


RZETHON, RZETHON_LOGS = "RzethonUMnieDziala__CityPulse_KafkaClusterDeploy", "kafka_2.11-1.0.0/logs"


def test_a_partition_moved_offline_from_online_had_no_leader_from_that_line():
    # electricity-0 was created at 2018-12-08 19:49:45 (controller.log.2018-12-08-19.gz:93-100, its Online line not in
    # the state-change log); state-change.log.2018-12-08-19.gz:3438 moves it "from OnlinePartition to
    # OfflinePartition" at 01:43:52.101, and its election fails 7 ms later (:3520).
    moved = _line("state-change.log.2018-12-08-19.gz", 3438, RZETHON, RZETHON_LOGS)
    failed = _line("state-change.log.2018-12-08-19.gz", 3520, RZETHON, RZETHON_LOGS)
    assert "Changed partition electricity-0 state from OnlinePartition to OfflinePartition" in moved
    assert "electricity-0 from OfflinePartition to OnlinePartition failed" in failed
    res = replayed_cluster(RZETHON, "real_logs2")
    assert any(a <= _ts(moved) and (b is None or _ts(moved) <= b) for a, b in _episodes(res, "electricity", 0))


def test_an_outage_whose_first_line_states_no_isr_is_explained_from_the_isr_its_election_states():
    # pollution-0 goes offline at :3455 (01:43:52.102; the replay knew no ISR for it); its failed election at :3945-3946
    # states "ISR brokers are: [1]" 30 ms later: the outage is explained from that ISR, not left 'unknown'.
    moved = _line("state-change.log.2018-12-08-19.gz", 3455, RZETHON, RZETHON_LOGS)
    reason = _line("state-change.log.2018-12-08-19.gz", 3946, RZETHON, RZETHON_LOGS)
    assert "Changed partition pollution-0 state from OnlinePartition to OfflinePartition" in moved
    isr = [int(b) for b in re.search(r"ISR brokers are: \[([\d, ]*)\]", reason).group(1).split(",")]
    res = replayed_cluster(RZETHON, "real_logs2")
    got = [lp.cause for lp in res.leaderless if (lp.episode.topic, lp.episode.partition) == ("pollution", 0)
           and lp.episode.start == _ts(moved)]
    assert len(got) == 1 and got[0].kind != UNKNOWN and got[0].details["isr_at_loss"] == isr


def test_a_topic_the_new_controllers_list_leaves_out_was_deleted():
    # pmitra43 (0.10.2.0): brokers 1 and 2 drop my-replicated-topic-1-1 from their metadata caches at 16:05:29
    # (state-change.log.2017-06-26-16.gz:15, 0.10.2.0 MetadataCache.updateCache for LeaderDuringDelete: a deletion);
    # controller 2's list at its failover, controller.log.2017-06-26-15.gz:19 (16:06:43.620), names __consumer_offsets
    # only. The replay held the my-replicated-topic* partitions on, and made outages of them when broker 2 failed at
    # 23:42:24 (controller.log.2017-06-26-22.gz:3518), with an unknown cause.
    cluster, logs = "pmitra43__kafka_load_generator", "kafka_2.11-0.10.2.0/logs"
    dropped = _line("state-change.log.2017-06-26-16.gz", 15, cluster, logs)
    listed = _line("controller.log.2017-06-26-15.gz", 19, cluster, logs)
    assert "deleted partition my-replicated-topic-1-1 from metadata cache" in dropped
    topics = set(re.search(r"Current list of topics in the cluster: Set\(([^)]*)\)", listed).group(1).split(", "))
    assert topics == {"__consumer_offsets"}
    res = _replayed_part("controller.log.2017-06-26-15.gz", 19, cluster, logs)
    held = {iv.topic for iv in res.intervals if iv.start < _ts(listed)} - topics  # before the list, not in it
    assert "my-replicated-topic-1" in held
    after = [lp for lp in res.leaderless if lp.episode.topic in held and lp.episode.start >= _ts(listed)]
    assert after == []
    assert not [lp for lp in res.leaderless if lp.cause.kind == UNKNOWN and lp.cause.details.get("replicas")]


def test_a_deletion_the_0_9_deletion_thread_logs_explains_the_outage():
    # danisharora (0.9.0.0) controller.log.2016-11-22-11.gz:829 "[DeleteTopicsListener on 0]: Starting topic deletion
    # for topics topic55", :839 "[delete-topics-thread-0], Deletion of topic topic55 (re)started" (0.9.0.0
    # PartitionStateMachine.DeleteTopicsListener, TopicDeletionManager.DeleteTopicsThread.doWork); :845 writes
    # topic55-1's leader -1 as part of it (OfflineReplica for the deletion): the outage is the deletion's.
    from replay_engine.causes.cases import DELETED

    cluster, logs = "danisharora__helloworld", "kafka_2.11-0.9.0.0/logs"
    asked = _line("controller.log.2016-11-22-11.gz", 829, cluster, logs)
    started = _line("controller.log.2016-11-22-11.gz", 839, cluster, logs)
    written = _line("controller.log.2016-11-22-11.gz", 845, cluster, logs)
    assert "[DeleteTopicsListener on 0]: Starting topic deletion for topics topic55" in asked
    assert "[delete-topics-thread-0], Deletion of topic topic55 (re)started" in started
    assert 'New leader and ISR for partition [topic55,1] is {"leader":-1' in written
    res = replayed_cluster(cluster, "real_logs2")
    got = [lp.cause for lp in res.leaderless if (lp.episode.topic, lp.episode.partition) == ("topic55", 1)
           and lp.episode.start <= _ts(written) and (lp.episode.end is None or _ts(written) <= lp.episode.end)]
    assert len(got) == 1 and got[0].kind == DELETED


def test_a_failed_election_of_a_deleted_topics_partition_agrees_with_no_state():
    # Raghavendralacharya (2.3.0): controller 2's list at 11:16:57.647 (controller.log.2019-08-30-10.gz:11) leaves
    # topic125 out; controller 0 (epoch 101) then fails topic125-2's election for want of its LeaderAndIsr
    # (state-change.log.2019-08-29-22.gz:2283-2284, 11:16:57.805): the replay, holding the topic deleted, agrees.
    cluster, logs = "Raghavendralacharya__kafka-node", "kafka_2.12-2.3.0/logs"
    listed = _line("controller.log.2019-08-30-10.gz", 11, cluster, logs)
    failed = _line("state-change.log.2019-08-29-22.gz", 2283, cluster, logs)
    assert "Current list of topics in the cluster: Set(" in listed and " topic125," not in listed
    assert "failed to change state for partition topic125-2" in failed and _ts(listed) < _ts(failed)
    res = replayed_cluster(cluster, "real_logs2")
    got = [c for c in res.comparisons if c.record.source_file == f"{cluster}/{logs}/state-change.log.2019-08-29-22.gz"
           and c.record.source_pos == 2283]
    assert len(got) == 1 and got[0].agreed


def test_a_deletions_retry_that_keeps_the_last_isr_member_is_rederived():
    # RzethonUMnieDziala (1.0.0) controller.log.gz:76-78: a topic deletion's retry takes humidity-0's replica 3
    # offline: "Removing replica 3 from ISR 3", "Retaining last ISR 3 ... since unclean leader election is disabled",
    # "New leader and ISR for partition humidity-0 is {"leader":-1,"leader_epoch":2,"isr":[3]}" (1.0.0
    # KafkaController.removeReplicaFromIsr). The write names no replica; keeping a leaderless partition's one ISR
    # member is what removing that member does with unclean election off: re-derived, and agreed.
    removing = _line("controller.log.gz", 76, RZETHON, RZETHON_LOGS)
    retained = _line("controller.log.gz", 77, RZETHON, RZETHON_LOGS)
    written = _line("controller.log.gz", 78, RZETHON, RZETHON_LOGS)
    assert "Removing replica 3 from ISR 3 for partition humidity-0" in removing
    assert "Retaining last ISR 3 of partition humidity-0 since unclean leader election is disabled" in retained
    assert 'New leader and ISR for partition humidity-0 is {"leader":-1,"leader_epoch":2,"isr":[3]}' in written
    res = replayed_cluster(RZETHON, "real_logs2")
    got = [c for c in res.comparisons
           if c.record.source_file == f"{RZETHON}/{RZETHON_LOGS}/controller.log.gz" and c.record.source_pos == 78]
    assert len(got) == 1 and got[0].agreed and got[0].replayed["isr"] == [3]
