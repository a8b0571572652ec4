"""KRaft with logs only: the divergences the replay caused itself, judged again from the recorded decisions.

Each expectation is a decision a broker recorded ("Follower <tp> starts at leader epoch E ... Current leader is L",
3.9 core/src/main/scala/kafka/cluster/Partition.scala makeFollower), named by file and line, or Kafka's source.
"""
from test_replay_real_logs import load

CLUSTER = "BetrajJ__kafka-kraft"
LOGS = f"{CLUSTER}/kafka/logs/"


def _verdicts(res, cite):
    return [(c.verdict, c.replayed) for c in res.comparisons if c.record.cite() == cite]


def test_a_broker_catching_up_on_the_replays_own_steps_does_not_undo_them():
    from replay_engine.kraft.evidence import stated_within_replayed
    # Every PartitionChangeRecord raises the partition epoch by one (3.9 PartitionRegistration.merge): with the
    # partition epoch last stated at 134 and two changes replayed since (135, 136), a line at 135 is the first one.
    assert stated_within_replayed(134, 135, 2)
    assert not stated_within_replayed(134, 136, 2)  # the replay's own latest: not older
    assert not stated_within_replayed(134, 135, 0)  # nothing replayed: the line is simply news
    assert not stated_within_replayed(None, 135, 2)
    res = load(CLUSTER)
    # 2025-02-13 10:08:26: broker 2 then broker 1 fenced (controller.log.2025-02-12-17.gz lines 90, 91), broker 1
    # restates test-topic-2 at partition epoch 135 ("Skipped the become-leader ...", ISR [3,1], line 66) after both;
    # broker 3 unfenced at 10:08:27.448 (line 94), and broker 1 records leader 3 at epoch 68 (line 110): the ISR
    # after the second fence was [3] (handleBrokerFenced drops broker 1), so handleBrokerUnfenced elects 3.
    assert _verdicts(res, LOGS + "state-change.log.2025-02-11-16.gz:110") == [("agreed", {"leader": 3})]


def test_a_leader_stated_at_the_next_epoch_was_acceptable_when_elected():
    res = load(CLUSTER)
    # test-topic-2: broker 1 leads epoch 77 (stated 2025-02-13 13:19:21, state-change.log.2025-02-13-12.gz),
    # no fence or shutdown of broker 1 in any line after it until 15:27:25.006, when broker 1 enters controlled
    # shutdown (controller.log.2025-02-13-14.gz line 44): enterControlledShutdown moves leadership to the next
    # acceptable ISR member, broker 2 (3.9 ReplicationControlManager.generateLeaderAndIsrUpdates), as broker 3
    # records at epoch 78 (state-change.log.2025-02-13-13.gz line 9).
    got = _verdicts(res, LOGS + "state-change.log.2025-02-13-13.gz:9")
    assert got and all(v == "agreed" for v, _ in got), got


def test_isr_after_a_stated_move_is_unknown_when_a_preferred_election_explains_it_too():
    from replay_engine.kraft.point import isr_after_leader_left
    # handleBrokerFenced / enterControlledShutdown (3.9 ReplicationControlManager.generateLeaderAndIsrUpdates): the
    # leaving broker is removed from the target ISR.
    assert isr_after_leader_left((1, 2, 3), (1, 2, 3), 2, 1, frozenset({1, 3}), version=(3, 9, 0)) == (1, 3)
    # The old leader still acceptable and the new one the first replica: maybeBalancePartitionLeaders
    # (Election.PREFERRED, PartitionChangeBuilder.electPreferredLeader) makes the same move and leaves the ISR alone.
    assert isr_after_leader_left((1, 2, 3), (1, 2, 3), 2, 1, frozenset({1, 2, 3}), version=(3, 9, 0)) is None
    # Not the first replica: no preferred election elects it, the leader left.
    assert isr_after_leader_left((1, 2, 3), (1, 2, 3), 1, 3, frozenset({2, 3}), version=(3, 9, 0)) == (2, 3)


def test_records_a_failed_write_applied_are_discarded_on_renounce():
    res = load(CLUSTER)
    # controller.log.2025-03-04-16.gz: QuorumController 3, active at epoch 9939, fences broker 3 (line 13, "Fencing
    # broker 3 because its session has timed out"), applies the BrokerRegistrationChangeRecord (line 15, 17:08:39,752),
    # and 1 ms later maybeFenceReplicas "failed with NotLeaderException ... in 2508716 microseconds. Renouncing
    # leadership and reverting to the last committed offset 636278" (line 16). 3.9 QuorumController: replay() runs
    # before raftClient.schedulePreparedAppend, handleEventException -> renounce() -> revertToSnapshot: never committed.
    fenced = LOGS + "controller.log.2025-03-04-16.gz:15"
    assert not [d for d in res.decisions if d.trigger.cite() == fenced]
    f = [x for x in res.to_json()["findings"] if x["kind"] == "kraft_uncommitted_reverted"]
    cites = [e["source_file"] + ":" + str(e["source_pos"]) for x in f for e in x["evidence"]]
    assert fenced in cites and LOGS + "controller.log.2025-03-04-16.gz:16" in cites
    # The recorded decision: broker 2 states kraft-test-2 at epoch 126 with no leader (state-change.log.2025-03-04-17.gz
    # line 50), not the move to broker 1 the undone fence would have made.
    assert all(v != "diverged" for v, _ in _verdicts(res, LOGS + "state-change.log.2025-03-04-17.gz:50"))


def test_which_failed_writes_are_undone_follows_the_release():
    from replay_engine import rules as R
    from replay_engine.rules import kraft as KR
    # 3.3+ ControllerWriteEvent.run applies records before Raft takes them; NotLeaderException is Raft refusing them.
    assert R.decide(KR.RENOUNCE_FAILED_WRITE, (3, 9, 0), "NotLeaderException")
    assert not R.decide(KR.RENOUNCE_FAILED_WRITE, (3, 9, 0), "RuntimeException")
    # 3.0-3.2: scheduleAppend before replay: the lines cannot tell.
    assert not R.decide(KR.RENOUNCE_FAILED_WRITE, (3, 2, 0), "NotLeaderException")


def test_only_the_failed_events_own_window_and_controller_are_reverted():
    from parsers.schema import Event
    from replay_engine.kraft.evidence import reverted_on_renounce

    def line(ts_ms, cid, raw="Replayed BrokerRegistrationChangeRecord modifying the registration for broker 3"):
        return Event("broker_fenced", ts=ts_ms * 1000, broker_id=cid, source_kind="broker_log", raw=raw)
    fail = Event("kraft_renounce_on_error", ts=10_000 * 1000, controller_id=3, source_kind="broker_log",
                 detail={"renounced_by": 3, "processing_us": 2_000_000, "exception": "NotLeaderException"})
    evs = [line(7_000, 3), line(8_500, 3), line(9_999, 2), line(10_000, 3), fail, line(10_001, 3)]
    # 8.5 s and 10.0 s fall in the event's 2 s on controller 3's event thread; 7 s before it, 10.001 s after it,
    # and controller 2's line are other events.
    assert reverted_on_renounce(evs) == {1: 4, 3: 4}


def test_quorum_epochs_no_line_names_are_a_hole_in_the_evidence():
    from parsers.schema import Event
    from replay_engine.kraft.evidence import hole_between, quorum_epoch_holes

    def epoch(ts_s, e, t="kraft_leader_change"):
        return Event(t, ts=ts_s * 1_000_000, controller_epoch=e, source_kind="broker_log")
    # Raft epochs grow one at a time and each is begun by a node logging its transition: 5 and 6 are in no line.
    evs = [epoch(10, 3), epoch(11, 4, "kraft_quorum_epoch"), epoch(12, 4), epoch(40, 7), epoch(41, 8)]
    assert quorum_epoch_holes(evs) == [(12_000_000, 40_000_000, 5, 6)]
    # a transition line names the epoch it left too ("... from CandidateState(... epoch=6 ...)")
    left = Event("kraft_leader_change", ts=40_000_000, controller_epoch=7, source_kind="broker_log",
                 detail={"from_epoch": 6})
    assert quorum_epoch_holes(evs + [left]) == [(12_000_000, 40_000_000, 5, 5)]
    h = quorum_epoch_holes(evs)
    assert hole_between(h, 11_000_000, 50_000_000) == h[0]
    assert hole_between(h, 40_000_000, 50_000_000) is None  # known after the hole: the steps came after it
    assert hole_between(h, None, 50_000_000) is None  # never known: not a gap, the partition is unknown


def test_unseen_steps_across_a_hole_are_gaps_and_without_one_stay_uncompared():
    res = load(CLUSTER)
    reasons = [c.reason for c in res.comparisons if c.verdict == "unknown"]
    gaps = [r for r in reasons if r.startswith("evidence gap (quorum epochs")]
    still = [r for r in reasons if r.startswith("leader epoch: the epochs before it were decided in steps")]
    # No line of the cluster names quorum epochs 291-326 (zcat *.gz | grep -E '[Ee]poch[=: ]+N' finds none, for
    # leader epochs neither), while 290 ends at 2025-02-06 11:01:41 and 327 is left at 12:08:05 ("Completed
    # transition to CandidateState(... epoch=328 ...) from ...(epoch=327 ...)"): 36 elections' lines were lost.
    assert any(r.startswith("evidence gap (quorum epochs 291-326, 2025-02-06T11:01:41") for r in gaps)
    assert gaps and still  # both kinds exist: a hole is not assumed where the evidence shows none
    # Broker 1 restarting on 2025-02-13 10:08 states __consumer_offsets-1 at epoch 40 (state-change.log.2025-02-11-16.gz
    # line 39), an epoch no earlier line states, after the replay knew a later one: it was decided after the latest
    # earlier epoch a line states, and quorum epochs 3101-3126 (2025-02-11 15:41-17:31) in between are in no line.
    got = [c.reason for c in res.comparisons if c.record.cite() == LOGS + "state-change.log.2025-02-11-16.gz:39"]
    assert got and got[0].startswith("evidence gap (quorum epochs 3101-3126") and "stated again" in got[0]


def test_a_leader_the_replay_held_fenced_across_a_hole_is_a_gap_not_a_divergence():
    res = load(CLUSTER)
    # 2025-02-25 17:12:09: broker 1's controlled shutdown (controller.log.2025-02-25-16.gz line 1); broker 2, whose
    # last registration line is its fence at 2025-02-13 15:27:27 (controller.log.2025-02-13-14.gz line 49), is
    # elected (state-change.log.2025-02-24-13.gz line 4: "Leader test-topic-2 ... starts at leader epoch 87"). An
    # elected leader was acceptable (PartitionChangeBuilder.isAcceptableLeader): broker 2 registered again in a
    # stretch no line shows (quorum epochs 3629-3647 are in no line).
    got = [c for c in res.comparisons if c.record.cite() == LOGS + "state-change.log.2025-02-24-13.gz:4"]
    assert [c.verdict for c in got] == ["unknown"]
    assert got[0].reason.startswith("evidence gap (broker 2, held fenced or shutting down from 2025-02-13T15:27:27")


def test_lines_behind_a_leader_change_the_replay_could_not_derive_do_not_rebase_it():
    res = load(CLUSTER)
    # 2025-03-05 18:38:53.490: broker 3, leader of kraft-test-2 at epoch 128 with the ISR unknown to the replay,
    # enters controlled shutdown (controller.log.2025-03-05-17.gz line 285): a new leader epoch follows. Broker 3's
    # "Skipped the become-leader ... leaderEpoch=128" at 18:38:53.929 is a broker behind it; the fence of broker 1
    # at 18:38:53.972 (line 294) is not replayed on that stale registration (it would give epoch 129, no leader).
    assert not [d for d in res.decisions if d.tp == ("kraft-test", 2)
                and d.trigger.cite() == LOGS + "controller.log.2025-03-05-17.gz:294"]
    # and broker 3's later "leader epoch 131 ... Current leader is 1" (state-change.log.2025-03-05-18.gz line 49)
    # is not judged diverged from an ISR the replay never knew
    assert all(c.verdict != "diverged" for c in res.comparisons
               if c.record.cite() == LOGS + "state-change.log.2025-03-05-18.gz:49")


def test_a_kraft_divergence_is_a_finding_naming_its_rule():
    from parsers.schema import Event
    from replay_engine.zk.from_events import ref_of
    from replay_engine.common.judge import judge_kraft
    from replay_engine.kraft.evidence import departure_findings
    ev = Event("become_leader", ts=1, source_file="x/state-change.log", source_pos=7)
    c = judge_kraft(("t", 0), 1, ref_of(ev), {"leader": 2}, {"leader": 3}, "point: leader 1 left")
    [f] = departure_findings([c], (3, 9, 0))
    assert (f["kind"], f["rule"], f["rule_name"]) == ("rule_departure", "kraft.election", "PartitionChangeBuilder with ELR (KIP-966)")
    assert f["cite"].startswith("3.7.0 metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java")
    assert departure_findings([judge_kraft(("t", 0), 1, ref_of(ev), {"leader": 3}, {"leader": 3}, "x")], (3, 9, 0)) == []


def test_metadata_records_past_a_renounce_are_discarded_unless_a_later_epoch_kept_them():
    from parsers.schema import Event
    from replay_engine import rules as R
    from replay_engine.kraft.evidence import uncommitted_in_metadata_log
    from replay_engine.rules import kraft as KR

    def rec(offset, epoch, log="n1/__cluster_metadata-0/00000000000000000000.log"):
        return Event("partition_change", ts=offset * 1000, controller_epoch=epoch, source_pos=offset,
                     source_kind="kraft_metadata", source_file=log)
    keep = lambda offsets, n: R.decide(KR.RENOUNCE, (3, 9, 0), offsets, n)  # noqa: E731
    # "We were the leader at epoch 7 ... Reverting to last stable offset 11" (QuorumController.renounce ->
    # revertToSnapshot): offsets 12 and 13 of epoch 7 were not committed when it renounced.
    ren = Event("kraft_leader_change", ts=20_000, controller_id=-1, controller_epoch=8, source_kind="broker_log",
                detail={"via": "renounced", "previous_epoch": 7, "renounced_by": 1, "reverted_to_offset": 11})
    tail = [rec(10, 7), rec(11, 7), rec(12, 7), rec(13, 7)]
    assert uncommitted_in_metadata_log(tail + [ren], keep) == {2: 4, 3: 4}
    # The same records followed by a batch of epoch 8 in that log: the next leader had them (log matching), and
    # committed them with its own: nothing is discarded.
    kept = tail + [rec(14, 8), ren]
    assert uncommitted_in_metadata_log(kept, keep) == {}
    # No renounce line: nothing is known to be uncommitted
    assert uncommitted_in_metadata_log(tail, keep) == {}


def test_replay_discards_the_metadata_log_tail_a_renounce_left_uncommitted():
    from pathlib import Path

    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source
    from parsers.schema import Event
    from replay_engine.api import replay_cluster
    from test_replay_real_logs import REAL_LOGS

    name = "Niloufar1171__LDI-POC"
    events = []
    for f in sorted(Path(REAL_LOGS / name).rglob("*")):
        if f.is_file():
            events += parse_source(f.read_bytes(), SourceContext(str(f.relative_to(REAL_LOGS)), cluster=name))[0]
    meta = [e for e in events if e.source_kind == "kraft_metadata" and (e.detail or {}).get("snapshot_offset") is None]
    judged = {c.record.cite() for c in replay_cluster(events, name).comparisons}
    # the last record of the log's last epoch that the replay judges (a leader change, PartitionChangeBuilder)
    top = max(e.controller_epoch for e in meta)
    last = max((e for e in meta if e.controller_epoch == top and f"{e.source_file}:{e.source_pos}" in judged),
               key=lambda e: e.source_pos)
    tail = [e for e in meta if e.controller_epoch == last.controller_epoch and e.source_pos >= last.source_pos]
    # A renounce of that epoch's leadership, reverting to the offset just before that record: it and the records
    # after it are past it, and nothing of a later epoch follows them (QuorumController.renounce ->
    # revertToSnapshot): never committed, so not judged.
    ren = Event("kraft_leader_change", ts=(last.ts or 0) + 1000, controller_id=-1,
                controller_epoch=last.controller_epoch + 1, source_kind="broker_log", source_file="x/controller.log",
                source_pos=1, detail={"via": "renounced", "previous_epoch": last.controller_epoch, "renounced_by": 1,
                                      "reverted_to_offset": last.source_pos - 1})
    res = replay_cluster(events + [ren], name)
    f = [x for x in res.to_json()["findings"] if x["kind"] == "kraft_uncommitted_reverted"]
    assert len(f) == 1 and f[0]["rule"] == "kraft.renounce" and len(f[0]["evidence"]) == 1 + len(tail)
    cite = f"{last.source_file}:{last.source_pos}"
    assert not [c for c in res.comparisons if c.record.cite() == cite]
    assert cite in [e["source_file"] + ":" + str(e["source_pos"]) for e in f[0]["evidence"]]
