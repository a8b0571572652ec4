"""Clock skew from causally ordered pairs, on a hand-built trace with a known offset."""
from parsers.schema import Event
from replay_engine.estimates.skew import estimate_skew

S = 1_000_000
T = 1_700_000_000 * S
SKEW = 120 * S  # broker 2's clock is two minutes behind broker 1's


def ev(t, et, broker, **kw):
    return Event(et, ts=t, source_kind="broker_log", broker_id=broker, source_file=f"b{broker}/state-change.log",
                 source_pos=1, **kw)


def test_effect_logged_by_a_slow_clock_bounds_its_skew():
    events = [
        # controller 1 writes the election at true time T ...
        ev(T, "partition_state_change", 1, topic="t", partition=0, to_state="OnlinePartition", leader=2,
           leader_epoch=5),
        # ... broker 2 becomes leader 10 ms later (true), but its clock shows T + 10 ms - 120 s
        ev(T + 10_000 - SKEW, "become_leader", 2, topic="t", partition=0, leader_epoch=5),
        # broker 2 registers itself (its clock) and the controller sees it 30 ms later (true)
        ev(T + 5 * S - SKEW, "broker_registered", 2, subject_broker=2, detail={"via": "broker_self"}),
        ev(T + 5 * S + 30_000, "broker_registered", 1, subject_broker=2, detail={"via": "controller_broker_change"}),
    ]
    est = {(e.clock_a, e.clock_b): e for e in estimate_skew(events)}
    e = est[("broker 1", "broker 2")]
    # offset(1) - offset(2) is in [120 s - 10 ms, 120 s + 30 ms]
    assert e.low_us == SKEW - 10_000 and e.high_us == SKEW + 30_000
    assert e.significant and "at least 120.0 s ahead of broker 2" in e.text()


def test_no_skew_no_finding():
    events = [
        ev(T, "partition_state_change", 1, topic="t", partition=0, to_state="OnlinePartition", leader=2, leader_epoch=5),
        ev(T + 10_000, "become_leader", 2, topic="t", partition=0, leader_epoch=5),
    ]
    (e,) = estimate_skew(events)
    assert not e.significant
