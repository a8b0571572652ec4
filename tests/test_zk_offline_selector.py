"""The 0.8-0.10 OfflinePartitionLeaderSelector's own lines, judged by the rule they state (issue 15).

Kafka 0.10.2 core/src/main/scala/kafka/controller/PartitionLeaderSelector.scala, OfflinePartitionLeaderSelector:
- it is called for partitions in OfflinePartition or NewPartition only, and logs "Selected new leader and ISR
  {json} for offline partition [t,p]" with ``currentLeaderEpoch + 1`` (every election raises the leader epoch);
- with no ISR member alive and unclean election allowed it logs (WARN) "No broker in ISR is alive for [t,p]. Elect
  leader B from live brokers ... There's potential data loss." and elects B with ISR [B].
Expectations come from those rules and the real lines of ../shared/real_logs named below.
"""
import pytest

from test_replay_real_logs import load


@pytest.fixture(scope="module")
def agamsidhu():
    return load("agamsidhu__Kafka")


@pytest.fixture(scope="module")
def andrei():
    return load("andreinedelciu__kafka-brokers-public")


def test_an_offline_selection_is_judged_as_the_election_the_replay_took(agamsidhu):
    # 0.9.0: controller 2 (epoch 4) sees broker 0 back at 20:59:21,637 (BrokerChangeListener) and its
    # OfflinePartitionLeaderSelector records Hello-Kafka-0 at 20:59:21,690: {"leader":0,"leader_epoch":1,"isr":[0]}
    # (controller.log.2017-10-06-20.gz line 241), from leader epoch 0 (created at epoch 0). Judged against the
    # replay's own election (epoch 0 + 1), not re-derived from the state that election already changed.
    line = "agamsidhu__Kafka/kafka_2.11-0.9.0.0/logs/controller.log.2017-10-06-20.gz:241"
    hits = [c for c in agamsidhu.comparisons if c.record.cite() == line]
    assert len(hits) == 1, hits
    c = hits[0]
    assert c.agreed and c.recorded == {"leader": 0, "isr": [0], "leader_epoch": 1}
    assert c.replayed["leader_epoch"] == 1 and "preferred" not in (c.how or "")


def test_an_election_on_a_new_history_the_controller_stated_is_judged(andrei):
    # 0.10.2, 2021-04-28 16:41:34,236 (controller.log.gz line 114): dns_kafka_topic-1 elected at leader epoch 1 with
    # leader 1, while the last election the evidence gave it (2020) was leader 0 at epoch 1: the topic was recreated.
    # The new history is stated by the controller itself before the election: 16:41:33,629 "Controller 1 epoch 58
    # sending UpdateMetadata request (Leader:1010,ISR:1010,LeaderEpoch:0,ControllerEpoch:56)" (state-change.log.gz
    # line 22). From it, OfflinePartitionLeaderSelector (0.10.2) finds no ISR member alive and, unclean election
    # allowed, elects the live assigned replica 1 with ISR [1] at epoch 0 + 1: the record agrees.
    line = "andreinedelciu__kafka-brokers-public/logs/controller.log.gz:114"
    hits = [c for c in andrei.comparisons if c.record.cite() == line]
    assert len(hits) == 1 and hits[0].agreed, hits
    assert hits[0].replayed == {"leader": 1, "isr": [1], "leader_epoch": 1}


def test_an_election_at_the_epoch_already_held_starts_a_new_history():
    # The same election with the controller's UpdateMetadata lines left out (a state-change.log without its TRACE
    # requests): nothing states the new history, and an election writes epoch + 1, so one stating the epoch already
    # held was taken on a new history (its siblings' LeaderAndIsr at 16:41:34,278, state-change.log.gz, state
    # leaderEpoch=0 zkVersion=0). An evidence gap, not a divergence.
    from conftest import real_cluster_events
    from replay_engine.api import replay_cluster

    cluster = "andreinedelciu__kafka-brokers-public"
    events = [e for e in real_cluster_events(cluster) if "sending UpdateMetadata request" not in (e.raw or "")]
    res = replay_cluster(events, cluster)
    line = f"{cluster}/logs/controller.log.gz:114"
    hits = [c for c in res.comparisons if c.record.cite() == line]
    assert len(hits) == 1 and hits[0].verdict == "unknown" and "history restarted" in hits[0].reason, hits
    assert any(f["kind"] == "partition_history_restarted" and f["topic"] == "dns_kafka_topic" and f["partition"] == 1
               for f in res.to_json()["findings"])


def test_the_controllers_unclean_election_lines_are_unclean_elections(andrei):
    # controller.log.gz lines 113, 128, 137 (WARN "No broker in ISR is alive for [dns_kafka_topic,P]. Elect leader 1
    # from live brokers 1. There's potential data loss.") at 16:41:34,236 / ,313 / ,357.
    out = andrei.to_json()
    unclean = {(d["topic"], d["partition"]): d for d in out["unclean_elections"] if d["topic"] == "dns_kafka_topic"}
    assert set(unclean) == {("dns_kafka_topic", p) for p in (0, 1, 2)}
    assert all(d["new_leader"] == 1 and d["possible_data_loss"] for d in unclean.values()), unclean
    assert {d["evidence"][0]["source_pos"] for d in unclean.values()} == {113, 128, 137}
    causes = {(e["topic"], e["partition"]): e["cause"]["kind"] for e in out["leaderless"]
              if e["topic"] == "dns_kafka_topic" and e["start"].startswith("2021-04-28T16:41")}
    assert causes and set(causes.values()) == {"unclean_election"}, causes
