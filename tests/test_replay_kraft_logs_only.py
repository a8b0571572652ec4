"""KRaft with logs only (issue 15): every leader epoch a broker states it started is judged or listed with a reason.

With the metadata log absent and the quorum controller's PartitionChangeRecords logged at DEBUG
(ReplicationControlManager.replay, 3.3 to 4.x: "Replayed partition change ..." at debug), the decisions the evidence
records are the brokers' own lines: Partition.makeLeader logs "Leader <tp> ... starts at leader epoch E" and
Partition.makeFollower "Follower <tp> starts at leader epoch E ... Current leader is L" once per new leader epoch
(3.9 core/src/main/scala/kafka/cluster/Partition.scala; an unchanged epoch logs "Skipped the become-...").
Expectations come from the real lines (file and line named) or from Kafka's source.
"""
import gzip
import re

from test_replay_real_logs import REAL_LOGS, load

_STARTS = re.compile(r"\] (?:Leader|Follower) \S+ .*starts at leader epoch -?\d+")


def _starts_lines(name):
    out = set()
    for f in sorted((REAL_LOGS / name).rglob("state-change.log*")):
        opener = gzip.open if f.suffix == ".gz" else open
        with opener(f, "rt", errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if _STARTS.search(line):
                    out.add(f"{f.relative_to(REAL_LOGS)}:{i}")
    return out


def test_every_broker_stated_leader_epoch_is_judged_or_listed():
    res = load("BetrajJ__kafka-kraft")
    stated = _starts_lines("BetrajJ__kafka-kraft")
    assert len(stated) > 1000
    judged = {c.record.cite() for c in res.comparisons if c.verdict != "unknown"}
    listed = {c.record.cite(): c.reason for c in res.comparisons if c.verdict == "unknown"}
    missing = sorted(stated - judged - set(listed))
    assert not missing, missing[:5]
    # Broker 1's "Leader __consumer_offsets-21 ... starts at leader epoch 56" at 2025-02-26 10:19:01,674
    # (state-change.log.2025-02-25-23.gz line 66): no controller line exists between 10:18:29 and 11:01:37
    # (controller.log.2025-02-25-23.gz ends, controller.log.2025-02-26-10.gz begins), so the step that elected
    # it (an unfence, handleBrokerUnfenced) is not in the evidence: still judged or listed, not silently skipped.
    line = "BetrajJ__kafka-kraft/kafka/logs/state-change.log.2025-02-25-23.gz:66"
    assert line in judged or listed[line].startswith("leader epoch:")


def test_rederive_stated_leader_follows_partition_change_builder():
    from replay_engine.kraft.point import rederive_stated_leader
    V39 = (3, 9, 0)
    # handleBrokerUnfenced (3.9 ReplicationControlManager): partitionsWithNoLeader, the unfenced broker acceptable
    # (brokerToAdd); electLeader takes the first replica in replica order that is in the ISR and acceptable.
    assert rederive_stated_leader((1, 2, 3), (1,), -1, 1, frozenset(), False, version=V39)[0] == 1
    # 1 not in the ISR: no clean leader
    assert rederive_stated_leader((1, 2, 3), (2,), -1, 1, frozenset(), False, version=V39)[0] == -1
    # handleBrokerFenced / enterControlledShutdown of the leader (brokerToRemove, never acceptable): the target ISR
    # drops it, the next acceptable ISR member in replica order leads; a last ISR member stays and no one leads.
    assert rederive_stated_leader((1, 2, 3), (1, 2, 3), 1, 2, frozenset({2, 3}), False, version=V39)[0] == 2
    assert rederive_stated_leader((1, 2, 3), (1,), 1, -1, frozenset({2, 3}), False, version=V39)[0] == -1
    # Election.PREFERRED (maybeBalancePartitionLeaders): the old leader still acceptable, the first replica leads.
    assert rederive_stated_leader((1, 2, 3), (1, 2, 3), 2, 1, frozenset({1, 2, 3}), False, version=V39)[0] == 1
    assert rederive_stated_leader((1, 2, 3), (), 2, 1, frozenset({1, 2, 3}), False, version=V39)[0] is None


def test_stated_leader_epoch_judged_from_the_registration_before_it():
    # Ammar (4.0.0), state-change.log.gz: broker 1 states ssl-test-topic-0 at leader epoch 26 as leader with ISR [1]
    # (line 42), then epoch 27 with "Current leader is -1" (line 162: it left, and the last ISR member stays without
    # ELR, so no one leads), then epoch 28 as leader with ISR [1] (line 222: its unfence elected it). Both are
    # judged from the registration before them, whichever step made them.
    res = load("Ammar777782439__kafka_2.13-4.0.0")
    for line, leader in ((162, -1), (222, 1)):
        hits = [c for c in res.comparisons
                if c.record.cite().endswith(f"Ammar777782439__kafka_2.13-4.0.0/logs/state-change.log.gz:{line}")]
        assert len(hits) == 1 and hits[0].agreed and hits[0].replayed == {"leader": leader}, (line, hits)


def test_isr_only_changes_between_two_stated_registrations():
    from replay_engine.kraft.evidence import unseen_partition_changes
    from replay_engine.kraft.point import stated_leader_whatever_the_isr
    # PartitionRegistration.merge (3.9): every PartitionChangeRecord raises the partition epoch by one.
    assert unseen_partition_changes(252, 0, 253) == 0
    assert unseen_partition_changes(252, 0, 255) == 2
    assert unseen_partition_changes(252, 2, 255) == 0  # the replay wrote the two records itself
    assert unseen_partition_changes(None, 0, 255) is None
    # electLeader: the first acceptable replica of the ISR in replica order. With 1 leaving and nobody else known
    # acceptable, 2 (the stated leader) is elected whatever the ISR held; 3 could not be, had 2 been in it.
    assert stated_leader_whatever_the_isr((1, 2, 3), 1, 2, frozenset(), False)
    assert not stated_leader_whatever_the_isr((1, 2, 3), 1, 3, frozenset({2}), False)
    assert stated_leader_whatever_the_isr((1, 2, 3), 1, -1, frozenset(), False)
    assert not stated_leader_whatever_the_isr((1, 2, 3), 1, -1, frozenset(), True)  # unclean: any replica may lead
    # BetrajJ (3.9): broker 3 states kraft-test-0 at leader epoch 130, partition epoch 252, leader 1
    # (state-change.log.2025-03-05-18.gz line 47); broker 1 states epoch 131 at partition epoch 255 with leader 2
    # (state-change.log.2025-03-28-18.gz line 5): two ISR-only records between are in no line, and 2, the first
    # replica after 1 in replica order [1, 2, 3], is the leader whatever the ISR was.
    res = load("BetrajJ__kafka-kraft")
    hits = [c for c in res.comparisons if c.record.cite().endswith("state-change.log.2025-03-28-18.gz:5")]
    assert len(hits) == 1 and hits[0].agreed and "whatever the ISR" in hits[0].how, hits


def test_skipped_become_leader_states_the_registration():
    # Partition.makeLeader (3.9): an unchanged leader epoch logs "Skipped the become-leader state change for <tp>
    # with topic id ... and partition state LeaderAndIsrPartitionState(...)" with the whole registration; in KRaft it
    # is the ISR-only PartitionChangeRecord the broker took up (BetrajJ state-change.log.2025-02-25-18.gz line 96).
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source
    line = ("[2025-02-25 19:40:10,674] INFO [Broker id=2] Skipped the become-leader state change for kraft-test-0 with "
            "topic id Some(WLjTDIMVTMiyaNabGbe6cQ) and partition state LeaderAndIsrPartitionState(topicName="
            "'kraft-test', partitionIndex=0, controllerEpoch=-1, leader=2, leaderEpoch=74, isr=[2, 1], "
            "partitionEpoch=139, replicas=[1, 2, 3], addingReplicas=[], removingReplicas=[], isNew=false, "
            "leaderRecoveryState=0) since it is already the leader with leader epoch 74. Current high watermark 2582, "
            "ISR [2,1], adding replicas [] and removing replicas []. (state.change.logger)\n")
    evs, summary = parse_source(line.encode(), SourceContext(path="logs/state-change.log"))
    assert summary.unrecognized == 0 and len(evs) == 1
    e = evs[0]
    assert (e.event_type, e.broker_id, e.topic, e.partition, e.leader, e.leader_epoch, e.isr, e.replicas,
            e.zk_version) == ("leader_and_isr_received", 2, "kraft-test", 0, 2, 74, [2, 1], [1, 2, 3], 139)
    assert e.detail["topic_id"] == "WLjTDIMVTMiyaNabGbe6cQ" and e.detail["skipped"] == "leader"


def test_isr_forgotten_when_a_line_skips_changes_the_replay_never_saw():
    # BetrajJ (3.9), kafka-topic-0: broker 2 states leader epoch 31 at partition epoch 58 (state-change.log.2025-02-07-10.gz
    # line 33); broker 3 then states epoch 36 at partition epoch 65 with "Current leader is -1" (state-change.log.
    # 2025-02-07-11.gz line 33): seven records between, in no line, so the ISR the replay held is stale. Epoch 37 with
    # leader 1 (line 64) was judged on that stale ISR ([2]: 'no leader') and diverged; it is now judged only as far as
    # it holds whatever the ISR was.
    res = load("BetrajJ__kafka-kraft")
    hits = [c for c in res.comparisons if c.record.cite().endswith("state-change.log.2025-02-07-11.gz:64")]
    assert len(hits) == 1 and hits[0].agreed and "not in the evidence" in hits[0].how, hits


def test_a_broker_elected_leader_was_active_then():
    # generateLeaderAndIsrUpdates (3.9 ReplicationControlManager): isAcceptableLeader = the broker being unfenced or
    # clusterControl.isActive (registered, unfenced, not in controlled shutdown); a broker that states it leads at a
    # new epoch was active at that step. BetrajJ 2025-02-13 10:08: broker 1, back after a restart whose unfence line
    # is in no file, states it leads at new epochs; test-topic1-2's epoch 71 with leader 1 (state-change.log.
    # 2025-02-11-16.gz line 62, ISR [3,1]) was a divergence (the replay, holding broker 1 fenced, elected no one).
    res = load("BetrajJ__kafka-kraft")
    hits = [c for c in res.comparisons if c.record.cite().endswith("state-change.log.2025-02-11-16.gz:62")]
    assert len(hits) == 1 and hits[0].agreed and hits[0].replayed == {"leader": 1}, hits
