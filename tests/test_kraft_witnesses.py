"""KRaft with logs only: a stated leader epoch is compared where a line shows the registration before it, and left
unjudged as an evidence gap only where the evidence shows no witness of the steps before it could have logged them.

Expectations come from the recorded decisions (lines named by file and line) and from Kafka's source (tag, file,
function); none from the replay's own output.
"""
from test_replay_real_logs import load
from test_templates_replica import parse as parse_text

BETRAJ = "BetrajJ__kafka-kraft"
B = f"{BETRAJ}/kafka/logs/"
AMMAR = "Ammar777782439__kafka_2.13-4.0.0"
A = f"{AMMAR}/logs/"


def _at(res, cite):
    return [c for c in res.comparisons if c.record.cite() == cite]


# ---------------------------------------------------------------- the leader's own line names the epoch before


def test_only_a_leaders_line_names_the_registration_it_had_before():
    # 3.9.0-rc3 core/src/main/scala/kafka/cluster/Partition.scala: makeLeader logs "Previous leader
    # $leaderReplicaIdOpt and previous leader epoch was $leaderEpoch" before assigning either; makeFollower assigns
    # leaderReplicaIdOpt and leaderEpoch first, so its line repeats the new values.
    leader = ("[2025-02-06 15:03:12,932] INFO [Broker id=2] Leader kafka-topic-0 with topic id Some(DUc4knVDQMGKcHKxYw3MQQ)"
              " starts at leader epoch 27 from offset 3 with partition epoch 48, high watermark 3, ISR [3,2], adding "
              "replicas [] and removing replicas [] . Previous leader Some(3) and previous leader epoch was 26. "
              "(state.change.logger)")
    follower = ("[2025-02-06 15:20:47,718] INFO [Broker id=2] Follower test-topic-2 starts at leader epoch 28 from offset"
                " 0 with partition epoch 59 and high watermark 0. Current leader is 1. Previous leader Some(1) and "
                "previous leader epoch was 28. (state.change.logger)")
    [lev] = parse_text(leader, "state-change.log")
    [fev] = parse_text(follower, "state-change.log")
    assert (lev.detail["previous_leader"], lev.detail["previous_leader_epoch"]) == (3, 26)
    assert "previous_leader" not in fev.detail


def test_the_previous_leader_is_taken_only_for_the_epoch_just_before():
    from replay_engine.kraft.point import previous_from_leader_line
    assert previous_from_leader_line((3, 26), 27, 25)  # the replay knew 25: 26 is news
    assert previous_from_leader_line((3, 26), 27, None)
    assert not previous_from_leader_line((3, 26), 27, 26)  # the replay knows 26 already
    assert not previous_from_leader_line((3, 25), 27, None)  # not the epoch just before the one started
    assert not previous_from_leader_line((-1, -1), 0, None)  # "Previous leader None ... was -1": a new Partition
    assert not previous_from_leader_line(None, 27, 25)


def test_an_election_is_compared_from_the_leaders_own_previous_epoch():
    res = load(BETRAJ)
    # state-change.log.2025-02-06-14.gz line 2: broker 2 leads kafka-topic-0 at epoch 27, "Previous leader Some(3)
    # and previous leader epoch was 26"; the evidence's last earlier statement is epoch 25 (broker 1,
    # state-change.log.2025-02-06-12.gz). The controller's maybeBalancePartitionLeaders generated the change
    # (controller.log.2025-02-06-14.gz line 1); replicas [2, 3, 1] (state-change.log.2025-02-06-14.gz line 7):
    # broker 2 is the first replica, elected whatever the ISR (PartitionChangeBuilder.electLeader, 3.9.0-rc3).
    [c] = _at(res, B + "state-change.log.2025-02-06-14.gz:2")
    assert (c.verdict, c.replayed) == ("agreed", {"leader": 2})


# ---------------------------------------------------------------- no broker acceptable


def test_no_broker_acceptable_means_no_leader_whatever_the_registration():
    from replay_engine.kraft.point import no_broker_acceptable
    assert no_broker_acceptable(frozenset(), {1, 2, 3}, False)
    assert not no_broker_acceptable(frozenset({2}), {1, 2, 3}, False)
    assert not no_broker_acceptable(frozenset(), set(), False)  # no broker known: nothing to say
    # ELR (3.7+ canElectLastKnownLeader) elects the last known leader without isAcceptableLeader
    assert not no_broker_acceptable(frozenset(), {1, 2, 3}, True)


def test_a_leaderless_epoch_while_every_broker_shuts_down_is_compared():
    res = load(BETRAJ)
    # server.log.2025-02-06-00.gz: QuorumController 1 replays BrokerRegistrationChangeRecord inControlledShutdown=1
    # for brokers 1, 2 and 3 at 01:02:37.669-.672; broker 1 then states test-topic1-1 at epoch 12 with "Current
    # leader is -1" (state-change.log.2025-02-06-00.gz line 2), the first line naming that partition. No broker is
    # acceptable (3.9.0-rc3 PartitionChangeBuilder.isAcceptableLeader), so no election can give a leader.
    [c] = _at(res, B + "state-change.log.2025-02-06-00.gz:2")
    assert (c.verdict, c.replayed) == ("agreed", {"leader": -1})


def test_a_stated_leader_is_not_judged_against_liveness_held_after_its_election():
    res = load(BETRAJ)
    # state-change.log.2025-02-13-10.gz line 3: broker 2, in controlled shutdown, takes up test-topic1-1 at epoch 83
    # with leader 3 in one metadata delta; broker 3 was elected before the shutdowns the replay holds, so the line is
    # not judged by the liveness at the line.
    assert all(c.verdict != "diverged" and "no known broker acceptable" not in (c.how or "")
               for c in _at(res, B + "state-change.log.2025-02-13-10.gz:3"))


def test_a_stated_leader_while_none_is_acceptable_is_not_counted_as_agreement():
    res = load(BETRAJ)
    # The same line: the replay holds broker 3 shutting down since 12:50:27 and no line of its return; KRaft elects
    # only acceptable brokers (3.9.0-rc3 PartitionChangeBuilder.isAcceptableLeader), so the lines of its return were
    # lost: an evidence gap naming the broker, not an agreement and not a departure of the controller.
    [c] = _at(res, B + "state-change.log.2025-02-13-10.gz:3")
    assert c.verdict == "unknown" and c.reason.startswith("evidence gap") and "broker 3 leads at this epoch" in c.reason
    # state-change.log.2025-02-13-15.gz line 3: leader 1 stated after the replay holds broker 1 shutting down
    # (15:27:25), but broker 1 was up from 13:19:21 since the epoch before was known: the election may have been
    # taken then; left uncompared with that reason.
    [c] = _at(res, B + "state-change.log.2025-02-13-15.gz:3")
    assert c.verdict == "unknown" and "decided while broker 1 was acceptable" in c.reason


# ---------------------------------------------------------------- a partition no line named before


def test_a_partition_first_named_after_a_hole_is_a_gap():
    res = load(BETRAJ)
    # __consumer_offsets-0 is first named at 2025-02-06 11:22:24 (state-change.log.2025-02-06-01.gz line 41, broker 3
    # back after a restart): no line names quorum epochs 205-206, between 01:02:39 and 10:55:30, after the evidence
    # begins (01:02:37): the epochs before the one it states may have been decided there.
    [c] = _at(res, B + "state-change.log.2025-02-06-01.gz:41")
    assert c.verdict == "unknown"
    assert c.reason.startswith("evidence gap (quorum epochs 205-206, 2025-02-06T01:02:39")
    assert c.reason.endswith("partition unknown before the line)")


def test_state_unknown_without_a_hole_is_not_a_gap():
    from replay_engine.common.config import ConfigState
    from replay_engine.kraft.replay import UNKNOWN_BEFORE, KraftReplay
    from replay_engine.common.partition import PState
    from replay_engine.common.facts import ObservedState
    from parsers.schema import Event
    from replay_engine.zk.from_events import ref_of

    r = KraftReplay(ConfigState())
    r.began = 1_000_000
    f = ObservedState(50_000_000, ref_of(Event("become_leader", ts=50_000_000)), tp=("t", 0), leader=1,
                      leader_epoch=4, became="leader")
    r.lines._unknown(PState(("t", 0)), f, 1, UNKNOWN_BEFORE)
    assert r.comparisons[-1].reason == UNKNOWN_BEFORE  # no stretch lost: stays uncompared
    r.holes = [(10_000_000, 20_000_000, 7, 9)]
    r.lines._unknown(PState(("t", 0)), f, 1, UNKNOWN_BEFORE)
    assert r.comparisons[-1].reason.startswith("evidence gap (quorum epochs 7-9")
    r.holes = [(60_000_000, 70_000_000, 7, 9)]  # lost after the line: says nothing of what came before it
    r.lines._unknown(PState(("t", 0)), f, 1, UNKNOWN_BEFORE)
    assert r.comparisons[-1].reason == UNKNOWN_BEFORE


def test_a_known_registration_with_its_isr_unstated_and_no_hole_stays_uncompared():
    res = load(BETRAJ)
    # state-change.log.2025-02-06-14.gz line 5: broker 2 leads kraft-test-1 at epoch 14, "Previous leader Some(3) and
    # previous leader epoch was 13": the ISR at 13 is in no line. The last earlier line about the partition is broker
    # 1's epoch 12 at 14:57:59 (state-change.log.2025-02-06-12.gz line 23), and every quorum epoch between (the holes
    # are 332-346 before 13:01:40 and 417-422 from 15:37:47) is named by some line: no stretch was lost, so the
    # record stays unjudged, not an evidence gap (a rule "state unknown => gap" would fail here).
    [c] = _at(res, B + "state-change.log.2025-02-06-14.gz:5")
    assert c.verdict == "unknown" and not c.reason.startswith("evidence gap")


# ---------------------------------------------------------------- registrations loaded from a snapshot


def test_snapshot_load_lines_are_read():
    # 3.9.0-rc3 metadata/src/main/java/org/apache/kafka/controller/OffsetControlManager.java beginLoadSnapshot /
    # endLoadSnapshot; the snapshot id is Snapshots.filenameFromSnapshotId: 20-digit offset, 10-digit epoch
    [s] = parse_text("[2025-05-29 17:02:39,747] INFO [QuorumController id=1] Starting to load snapshot "
                     "00000000000000065880-0000000286. Previous lastCommittedOffset was -1. Previous "
                     "transactionStartOffset was -1. (org.apache.kafka.controller.OffsetControlManager)", "controller.log")
    [e] = parse_text("[2025-05-29 17:02:39,941] INFO [QuorumController id=1] Successfully loaded snapshot "
                     "00000000000000065880-0000000286. (org.apache.kafka.controller.OffsetControlManager)",
                     "controller.log")
    assert (s.event_type, s.controller_id, s.detail["phase"], s.detail["loaded_offset"], s.detail["loaded_epoch"]) == (
        "kraft_snapshot_load", 1, "start", 65880, 286)
    assert (e.event_type, e.detail["phase"]) == ("kraft_snapshot_load", "end")


def test_a_hole_counts_after_a_snapshot_only_from_its_quorum_epoch_on():
    from replay_engine.kraft.evidence import hole_since_quorum_epoch
    holes = [(10, 20, 11, 475), (30, 30, 477, 480)]
    assert hole_since_quorum_epoch(holes, 286, 100) == holes[0]
    assert hole_since_quorum_epoch(holes, 476, 100) == holes[1]
    assert hole_since_quorum_epoch(holes, 481, 100) is None  # every epoch since the snapshot is in some line
    assert hole_since_quorum_epoch(holes, 286, 5) is None  # lost after the line


def test_epochs_decided_after_a_loaded_snapshot_in_lost_quorum_epochs_are_gaps():
    res = load(AMMAR)
    # controller.log.gz line 31: QuorumController 1 "Starting to load snapshot 00000000000000065880-0000000286"; line
    # 65 restates __consumer_offsets-13 at leaderEpoch=10 from it; 3.9.0-rc3 / trunk ReplicationControlManager.replay
    # logs each PartitionChangeRecord after it at DEBUG only. Broker 1 states epoch 22 (state-change.log.gz line 30):
    # the changes 11-22 were written in quorum epochs 286 or later, and 286-475 are named by no line (the hourly files
    # jump from 2025-05-17-14 to 2025-05-29).
    [c] = _at(res, A + "state-change.log.gz:30")
    assert c.verdict == "unknown"
    assert c.reason.startswith("evidence gap (after snapshot 65880-286: the registration held is the one controller 1 "
                               "loaded from it")
    assert "quorum epochs 286-475" in c.reason
    # my-topic-0 at epoch 19 is first stated by broker 3's "Skipped the become-follower ... leaderEpoch=19" at 17:02:43
    # (state-change.log.gz line 2), after the snapshot restated it at epoch 4 (controller.log.gz line 42); its first
    # "Follower ... starts at leader epoch 19" (line 8) restates that decision, taken after the snapshot.
    [c] = _at(res, A + "state-change.log.gz:8")
    assert c.reason.startswith("evidence gap (after snapshot 65880-286")


# ---------------------------------------------------------------- a partition as created


def test_the_creation_rule():
    from replay_engine.kraft.point import created_leader, states_the_creation
    # 3.9.0-rc3 ReplicationControlManager.createTopic: ISR = the usable replicas, leader the first; epochs 0 and 0
    assert created_leader((2, 1), frozenset({1}), version=(3, 9, 0)) == (1, (1,))
    assert created_leader((2,), frozenset({1}), version=(3, 9, 0)) == (-1, (2,))
    assert states_the_creation(0, 0)
    assert not states_the_creation(0, 1)  # a PartitionChangeRecord raised the partition epoch
    assert not states_the_creation(1, 1)


def test_a_brokers_first_line_of_a_new_partition_is_judged_as_its_creation():
    res = load(AMMAR)
    # controller.log.2025-05-17-12.gz line 81: CreateTopics ssl-test-topic SUCCESS; line 83: PartitionRecord
    # replicas=[1]; broker 1 then states "Leader ssl-test-topic-0 ... starts at leader epoch 0 ... with partition
    # epoch 0" (stage-change.log.2025-05-17-12.gz line 7): broker 1 is the first usable replica.
    [c] = _at(res, A + "stage-change.log.2025-05-17-12.gz:7")
    assert (c.verdict, c.replayed) == ("agreed", {"leader": 1})
