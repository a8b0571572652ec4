"""postmortem on the bundled KRaft sample through the real pipeline (Spark ingest, KRaft replay, report),
checked against sample_logs/kraft_broker_fenced/expected.json, which its author derived by hand from the
scenario, independently of the replay."""
import pytest

from test_postmortem_samples import analyse, expected, ms

pytestmark = pytest.mark.spark

NAME = "kraft_broker_fenced"


@pytest.fixture(scope="module")
def outcome(spark, tmp_path_factory):
    return analyse(spark, tmp_path_factory.mktemp("kraft"), NAME)


def test_every_line_and_record_is_read(outcome):
    report, _ = outcome
    totals = report["inputs"]["totals"]
    assert totals["files_with_errors"] == 0 and totals["unrecognized"] == 0 and totals["quarantined"] == 0
    kinds = report["inputs"]["file_kinds"]
    assert (kinds["broker_log"], kinds["kraft_metadata"]) == (15, 1)  # README.md and expected.json are notes


def test_leaderless_partitions_and_causes_match_expected(outcome):
    report, results = outcome
    exp = expected(NAME)
    (res,) = results
    assert res.mode == "kraft"
    got = {(lp.episode.topic, lp.episode.partition): lp for lp in res.leaderless}
    want = {(g["topic"], p): g for g in exp["leaderless"] for p in g["partitions"]}
    assert set(got) == set(want)
    assert len(got) == exp["leaderless_total"]
    for key, g in want.items():
        lp, tol = got[key], g["tolerance_ms"]
        assert lp.cause.kind == g["cause"], lp.cause.summary
        assert abs(lp.episode.start / 1000 - ms(g["start"])) <= tol
        assert abs(lp.episode.end / 1000 - ms(g["end"])) <= tol
        assert lp.cause.details["replicas"] == [2] and lp.cause.details["isr_at_loss"] == g["state_while_leaderless"]["isr"]
        assert "fenced by the controller" in lp.cause.summary
    (incident,) = report["incidents"]
    g = exp["leaderless"][0]
    assert (incident["topic"], sorted(incident["partitions"]), incident["count"], incident["cause_kind"]) == \
        (g["topic"], g["partitions"], g["count"], g["cause"])
    assert report["summary"]["by_cause"] == {g["cause"]: exp["leaderless_total"]}
    # clients lost the partitions at the kill, a session timeout before the fence
    assert abs(ms(incident["unavailable_from"]["ts"]) - ms(g["unavailable_from"])) <= 1000


def test_orders_has_no_outage_not_even_a_failover_window(outcome):
    report, results = outcome
    assert not [lp for lp in results[0].leaderless if lp.episode.topic == "orders"]
    assert report["failovers"] == []


def test_replay_agrees_with_every_recorded_decision(outcome):
    report, results = outcome
    exp = expected(NAME)["agreement"]
    ag = results[0].agreement()
    assert ag["divergences"] == []
    assert (ag["compared"], ag["agreed"]) == (exp["compared"], exp["agreed"])
    assert report["summary"]["agreement"]["ratio"] == 1.0


def test_controller_and_broker_2s_periods(outcome):
    _, results = outcome
    exp = expected(NAME)
    img = results[0].image
    c = exp["controllers"][0]
    assert [(t.controller, t.epoch) for t in img.tenures] == [(c["node"], c["epoch"])]
    assert abs(img.tenures[0].start / 1000 - ms(c["from"])) <= c["tolerance_ms"]
    f = exp["broker_failures"][0]
    downs = [p for p in img.periods[f["broker"]] if p.state == "down" and p.start / 1000 > ms(f["died_at"])]
    assert len(downs) == 1
    assert abs(downs[0].start / 1000 - ms(f["fenced_at"])) <= f["tolerance_ms"]
    assert abs(downs[0].end / 1000 - ms(f["unfenced_at"])) <= f["tolerance_ms"]
