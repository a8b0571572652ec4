"""A LeaderAndIsr request a broker ignores because it carries the leader epoch the broker already holds states the
partition's leader epoch then.

ReplicaManager.becomeLeaderOrFollower (2.8.0 core/src/main/scala/kafka/server/ReplicaManager.scala) logs "Ignoring
LeaderAndIsr request from controller C with correlation id X epoch CE for partition P since its associated leader
epoch E matches the current leader epoch" (INFO from 2.6; 0.10.1.0-2.3 "... is not higher than the current leader epoch
E2", 0.8.2.2-0.10.0 "... is old. Current leader epoch is E2", both WARN). The request's leader epoch is the controller's
context for the partition (ControllerChannelManager.addLeaderAndIsrRequestForBrokers), so with E equal to the broker's
own the line states the partition's leader epoch. It states neither leader nor ISR, and not which controller epoch
wrote the state.
"""
import copy

import pytest

from conftest import REAL_LOGS, real_cluster_events
from forensics.pipeline import split_clusters
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from replay_engine.common import judge as J

NAME = "AndreasTraut__kafka_2.13-2.8.0"


def parse(line: str, name: str = "state-change.log"):
    events, summary = parse_source(line.encode(), SourceContext(path=name))
    assert summary.balanced()
    return events


def test_the_2_8_line_states_the_leader_epoch():
    # AndreasTraut__kafka_2.13-2.8.0/logs/state-change.log.2021-04-28-16.gz:19
    (ev,) = parse("[2021-04-28 11:31:38,422] INFO [Broker id=1] Ignoring LeaderAndIsr request from controller 1 with "
                  "correlation id 1 epoch 6 for partition __consumer_offsets-21 since its associated leader epoch 7 "
                  "matches the current leader epoch (state.change.logger)")
    assert (ev.event_type, ev.broker_id, ev.topic, ev.partition) == ("leader_and_isr_received", 1,
                                                                      "__consumer_offsets", 21)
    assert (ev.leader_epoch, ev.leader, ev.isr, ev.controller_epoch) == (7, None, None, None)
    assert (ev.detail["sender"], ev.detail["sender_epoch"]) == (1, 6)


def test_older_forms_state_it_only_where_both_epochs_are_equal():
    # Eniyanilavan__Kafka/logs/state-change.log.2019-07-01-11.gz:35 (2.2.1)
    (ev,) = parse("[2019-07-02 07:03:08,232] WARN [Broker id=1] Ignoring LeaderAndIsr request from controller 1 with "
                  "correlation id 1 epoch 19 for partition dcode_fileParse-1 since its associated leader epoch 2 is "
                  "not higher than the current leader epoch 2 (state.change.logger)")
    assert (ev.event_type, ev.topic, ev.partition, ev.leader_epoch, ev.detail["sender_epoch"]) == (
        "leader_and_isr_received", "dcode_fileParse", 1, 2, 19)
    # so3500__volttron-kafka/kafka_2.12-0.10.2.1/logs/state-change.log.2017-09-21-08.gz:1715 (0.10.2.1)
    (ev,) = parse("[2017-09-24 16:59:28,079] WARN Broker 1 ignoring LeaderAndIsr request from controller 1 with "
                  "correlation id 1 epoch 7 for partition [__consumer_offsets,13] since its associated leader epoch 6 "
                  "is not higher than the current leader epoch 6 (state.change.logger)")
    assert (ev.broker_id, ev.topic, ev.partition, ev.leader_epoch) == (1, "__consumer_offsets", 13, 6)
    # a request behind the broker states an older context, not the partition's state
    assert parse("[2017-09-24 16:59:28,079] WARN Broker 1 ignoring LeaderAndIsr request from controller 1 with "
                 "correlation id 1 epoch 7 for partition [__consumer_offsets,13] since its associated leader epoch 5 "
                 "is not higher than the current leader epoch 6 (state.change.logger)") == []


def _replayed(at):
    events, _ = split_clusters([copy.copy(e) for e in real_cluster_events(NAME)])
    (mine,) = {e.cluster for e in events if e.source_file.endswith("/" + at[0]) and e.source_pos == at[1]}
    res = replay_cluster([e for e in events if e.cluster == mine], mine)
    return res


@pytest.mark.skipif(not (REAL_LOGS / NAME).is_dir(), reason="../shared/real_logs absent")
def test_a_record_after_the_epoch_a_broker_stated_is_judged_from_it():
    """__consumer_offsets-21: the replay held leader epoch 6 (broker 1's "Leader ... starts at leader epoch 6",
    2021-04-27 12:00:18); controller 1's failover request at 2021-04-28 11:31:38 carries epoch 7, which broker 1 already
    holds (state-change.log.2021-04-28-16.gz:19); controller 0 (epoch 7) then removes replica 1: "(Leader:-1,ISR:1,
    LeaderEpoch:8,ControllerEpoch:7)" (:782). Judged from the stated epoch 7 the removal agrees; on main it was
    'decided on a state the evidence does not show'."""
    at = ("state-change.log.2021-04-28-16.gz", 782)
    res = _replayed(at)
    (c,) = [c for c in res.comparisons if c.record.source_file.endswith("/" + at[0]) and c.record.source_pos == at[1]]
    assert c.tp == ("__consumer_offsets", 21) and c.recorded["leader_epoch"] == 8
    assert c.verdict == J.AGREED, c.reason
