"""Data lost by an unclean election, counted from the offsets the brokers logged (hand-derived expectations)."""
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.estimates.dataloss import estimate
from replay_engine.common.facts import Ref
from replay_engine.common.partition import Decision


def events_of(text: str, path: str):
    events, summary = parse_source(text.encode(), SourceContext(path=path))
    assert summary.unrecognized == 0, summary.samples
    return events


def decision(ts_events, tp=("orders", 0)):
    ts = max(e.ts for e in ts_events) + 1_000_000
    return Decision(1, ts, tp, "election", "OfflinePartitionLeaderElection", Ref(ts, "broker_deregistered", None, None, "broker 1 gone"),
                    {"leader": 1, "isr": [1]}, {"leader": 2, "isr": [2], "leader_epoch": 7}, unclean=True)


SHRINK = ("[2021-10-21 14:30:39,000] INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: "
          "(highWatermark: 30000, endOffset: 30010). Out of sync replicas: (brokerId: 2, endOffset: 30000). "
          "(kafka.cluster.Partition)\n")


def test_lower_bound_from_isr_shrink_lines_only():
    # Broker 2 left the ISR at offset 30000 while the leader was at 30010: at least 10 messages existed only on 1.
    evs = events_of(SHRINK, "kafka-1/server.log")
    got = estimate(decision(evs), evs)
    assert (got["old_leader_log_end_offset"], got["new_leader_log_end_offset"], got["lost_messages"]) == (30010, 30000, 10)
    assert got["lost_offsets"] == {"from": 30000, "to_exclusive": 30010}


def test_offsets_logged_at_the_election_win_over_the_shrink():
    evs = events_of(SHRINK, "kafka-1/server.log")
    d = decision(evs)
    later = events_of(
        "[2021-10-21 14:31:00,000] INFO [Broker id=2] Leader orders-0 starts at leader epoch 7 from offset 30000 with "
        "high watermark 30000 ISR [2] addingReplicas [] removingReplicas []. Previous leader epoch was 6. "
        "(state.change.logger)\n"
        "[2021-10-21 14:40:00,000] INFO [Broker id=1] Follower orders-0 starts at leader epoch 7 from offset 43340 with "
        "high watermark 30000. Previous leader epoch was 6. (state.change.logger)\n",
        "kafka-x/state-change.log")
    d.ts = later[0].ts - 1
    got = estimate(d, evs + later)
    assert (got["old_leader_log_end_offset"], got["new_leader_log_end_offset"], got["lost_messages"]) == (43340, 30000, 13340)


def test_no_offsets_means_possible_loss_not_a_number():
    got = estimate(decision(events_of(SHRINK.replace("orders-0", "other-0"), "kafka-1/server.log")), [])
    assert got["lost_messages"] is None and got["possible_data_loss"] is True


def test_indexed_lines_find_what_a_scan_finds():
    # ``estimates`` asks each writer's lines by bisection (_Offsets): the same line as _after's scan of them, whatever
    # order their times come in (lines of several files merged) and whatever epochs they state
    import random
    from types import SimpleNamespace

    from replay_engine.estimates.dataloss import _after, _Offsets

    rng = random.Random(45)
    for _ in range(300):
        lines = [SimpleNamespace(event_type="become_leader", broker_id=2, topic="orders", partition=0,
                                 ts=rng.choice([None, *range(0, 40, 3)]), leader_epoch=rng.choice([None, 5, 6, 7, 8]),
                                 detail=rng.choice([None, {}, {"offset": rng.randrange(100)}]))
                 for _ in range(rng.randrange(12))]
        index = _Offsets(lines)
        for ts in range(-1, 42, 2):
            for epoch in (None, 6, 7):
                assert index.after(ts, epoch) is _after(lines, ("orders", 0), 2, ts, ("become_leader",), epoch)
