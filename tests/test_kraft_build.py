"""PartitionChangeBuilder.build as the replay models it (replay_engine/kraft/build.py), ELR and last known ELR included.

Independent truth: the records a 4.2.0 quorum controller logged (``UNCLEAN partition change for ...``,
PartitionRegistration.maybeLogPartitionChange, INFO) in ../shared/real_logs2/BMTushyath__RFIDSAS, each cited by
file:line, and Kafka's source (3.8.0 .. trunk metadata/.../controller/PartitionChangeBuilder.java build,
maybePopulateTargetElr, maybeUpdateRecordElr, maybeUpdateLastKnownLeader; ReplicationControlManager
.generateLeaderAndIsrUpdates, handleBrokerUncleanShutdown).
"""
from __future__ import annotations

import pytest

from conftest import real_cluster_events
from replay_engine.kraft.build import BrokerEvent, ChangeRecord, Registration, build

BMT = "BMTushyath__RFIDSAS"
V42 = (4, 2, 0)


def test_a_fence_empties_the_isr_into_the_elr_and_keeps_the_last_leader():
    # controller.log.2026-03-16-11.gz:434, after "Fencing broker 1 at epoch 635 because its session has timed out"
    # (:432): "rfid-events-0 ...: isr: [1] -> [], leader: 1 -> -1, leaderEpoch: 2 -> 3, elr: [] -> [1],
    # lastKnownElr: [] -> [1]" (handleBrokerFenced, brokerToRemove 1, min.insync.replicas 1)
    rec = build(Registration((1,), (1,), 1), frozenset(), BrokerEvent(to_remove=1), version=V42, elr_enabled=True)
    assert (rec.leader, rec.isr, rec.elr, rec.last_known_elr) == (-1, (), (1,), (1,))


def test_a_new_incarnation_clears_its_elr_and_is_not_elected_as_the_last_known_leader():
    # controller.log.2026-03-16-11.gz:487 "Registering a new incarnation of broker 1 ... Generated 51 record(s)", then
    # :488 "rfid-events-0 ...: elr: [1] -> [], partitionEpoch: 4 -> 5": handleBrokerUncleanShutdown's record. Broker 1
    # is brokerWithUncleanShutdown: out of the ELR (maybePopulateTargetElr) and no acceptable leader, so the last known
    # leader is not elected (KAFKA-19522, 4.2); the last known ELR stays while leaderless (maybeUpdateRecordElr).
    reg = Registration((1,), (), -1, (1,), (1,))
    rec = build(reg, frozenset(), BrokerEvent(unclean_shutdown=1), version=V42, elr_enabled=True)
    assert rec == ChangeRecord(elr=(), how="none")
    # before KAFKA-19522 canElectLastKnownLeader only logged the last known leader's liveness (3.9.0-rc3): elected
    old = build(reg, frozenset(), BrokerEvent(unclean_shutdown=1), version=(3, 9, 0), elr_enabled=True)
    assert (old.leader, old.isr, old.how) == (1, (1,), "unclean")


def test_an_unfence_elects_the_last_known_leader_uncleanly_or_an_elr_member_cleanly():
    # :541 "Setting new leader for topicId Ty2X_8UqQsWnVzSrXi8Elw, partition 0 to 1 using an unclean election.
    # Previous partition: PartitionRegistration(replicas=[1], ..., isr=[], ..., elr=[], lastKnownElr=[1], leader=-1"
    # (handleBrokerUnfenced, brokerToAdd 1): canElectLastKnownLeader; the record clears the last known ELR
    rec = build(Registration((1,), (), -1, (), (1,)), frozenset(), BrokerEvent(to_add=1), version=V42,
                elr_enabled=True)
    assert (rec.leader, rec.isr, rec.elr, rec.last_known_elr, rec.how) == (1, (1,), None, (), "unclean")
    # controller.log.2026-06-12-16.gz:321 (restated at a reload): "isr: [] -> [1], leader: -1 -> 1, ... elr: [1] -> [],
    # lastKnownElr: [1] -> []": with 1 still in the ELR it is elected from it, a clean election (tryElection)
    rec = build(Registration((1,), (), -1, (1,), (1,)), frozenset(), BrokerEvent(to_add=1), version=V42,
                elr_enabled=True)
    assert (rec.leader, rec.isr, rec.elr, rec.last_known_elr, rec.how) == (1, (1,), (), (), "elr")


def test_without_elr_a_single_replica_keeps_its_isr_and_before_3_6_bumps_on_the_emptied_target():
    reg = Registration((1,), (1,), 1)
    assert build(reg, frozenset(), BrokerEvent(to_remove=1), version=(3, 6, 0)) == ChangeRecord(leader=-1, how="none")
    # an election that changes nothing writes no record (changeRecordIsNoOp)
    assert build(Registration((1, 2), (1, 2), 1), frozenset({1, 2}), version=(3, 6, 0)) is None
    # 3.5: an ISR shrink sets the leader field again (triggerLeaderEpochBumpIfNeeded), a new leader epoch
    rec = build(Registration((1, 2, 3), (1, 2, 3), 1), frozenset({1, 2}), BrokerEvent(to_remove=3), version=(3, 5, 0))
    assert (rec.leader, rec.isr) == (1, (1, 2))
    rec = build(Registration((1, 2, 3), (1, 2, 3), 1), frozenset({1, 2}), BrokerEvent(to_remove=3), version=(3, 6, 0))
    assert (rec.leader, rec.isr) == (None, (1, 2))


@pytest.fixture(scope="module")
def bmt():
    from conftest import replayed_cluster

    return replayed_cluster(BMT, folder="real_logs2")


def test_the_changes_of_an_unclean_shutdown_are_judged(bmt):
    logs = BMT + "/logs/"
    [c] = [c for c in bmt.comparisons if c.record.cite() == logs + "controller.log.2026-03-16-11.gz:488"]
    assert (c.verdict, c.recorded, c.replayed) == ("agreed", {"elr": []}, {"elr": []})
    assert "handleBrokerUncleanShutdown" in c.how
    # all 51 of that event (:488 .. :538), none left out
    event = [c for c in bmt.comparisons if c.record.source_file == logs + "controller.log.2026-03-16-11.gz"
             and 488 <= c.record.source_pos <= 538]
    assert len(event) == 51 and all(c.verdict == "agreed" for c in event)


def test_the_replays_own_steps_keep_elr_and_elect_the_last_known_leader():
    from replay_engine.api import replay_cluster

    # The controller's change lines left out (a cluster logging them at DEBUG, as 3.x-4.x do for clean elections), the
    # replay's own steps decide: the fence of :432 (handleBrokerFenced) empties rfid-events-0's ISR into ELR [1] and
    # last known ELR [1], the new incarnation of :487 (handleBrokerUncleanShutdown) clears the ELR, and the unfence
    # granted at :540 (handleBrokerUnfenced, broker 1 brokerToAdd) elects the last known leader uncleanly -- what the
    # left-out lines :434, :488 and :541 ("... to 1 using an unclean election") state.
    events = [e for e in real_cluster_events(BMT, folder="real_logs2")
              if not (e.event_type in ("partition_change", "unclean_leader_election")
                      and (e.detail or {}).get("via") == "log")]
    res = replay_cluster(events, BMT)
    logs = BMT + "/logs/controller.log.2026-03-16-11.gz:"
    mine = [d for d in res.decisions if d.tp == ("rfid-events", 0) and d.strategy == "KRaft (replayed)"
            and d.trigger.cite() in (logs + "432", logs + "487", logs + "540")]
    assert [(d.trigger.cite()[len(logs):], d.after["leader"], d.unclean) for d in mine] == \
        [("432", -1, False), ("487", -1, False), ("540", 1, True)]


def test_one_broker_events_partitions_each_read_their_own_topics_unclean_setting():
    # ReplicationControlManager.generateLeaderAndIsrUpdates (3.7.0 metadata/.../controller/ReplicationControlManager
    # .java) builds each partition's change with Election.UNCLEAN where uncleanLeaderElectionEnabledForTopic(topic):
    # broker 1, the only ISR member of a-0 and b-0, fenced, the out-of-sync replica 2 leads a-0 (unclean.leader.election
    # .enable=true on topic a) and b-0 stays leaderless. The replay builds the record once per registration and
    # setting alike within the event: two topics alike but for the setting are two records.
    from replay_engine.common import facts as F
    from replay_engine.common.config import ConfigState
    from replay_engine.kraft.facts import KraftStream
    from replay_engine.kraft.replay import KraftReplay

    def ref(pos, event):
        return F.Ref(pos, event, "controller.log", pos, event)

    facts = [F.BrokerRegistered(b, ref(b, "broker_registered"), broker=b, epoch=10 + b, via="kraft_record",
                                view="controller", fenced=False) for b in (1, 2)]
    facts.append(F.TopicConfig(3, ref(3, "config_record"), topic="a", config={"unclean.leader.election.enable": "true"}))
    facts += [F.PartitionRegistration(4 + i, ref(4 + i, "partition_record"), tp=(t, 0), leader=1, isr=(1,),
                                      leader_epoch=0, zk_version=0, replicas=(1, 2), snapshot=True)
              for i, t in enumerate(("a", "b"))]
    facts.append(F.BrokerDown(10, ref(10, "broker_fenced"), broker=1, cause="fenced", view="controller"))
    replay = KraftReplay(ConfigState(version=(3, 7, 0)))
    replay.run(KraftStream(facts))
    assert {d.tp: (d.after["leader"], d.unclean) for d in replay.decisions} == {("a", 0): (2, True), ("b", 0): (-1, False)}
