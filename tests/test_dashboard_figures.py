"""The dashboard's figures say what the replay says: read back from the page's data, not from our builders.

Truth: the replay's own intervals, broker periods and controller tenures (the figures must draw exactly
those), the real ZooKeeper scenarios' ground_truth.json (who was elected with which epoch at which
zxid, whose session expired, what was leaderless at the end), and hand-derived expectations on
small hand-written traces.
"""
from __future__ import annotations

import html
import json
import re
import sys
from collections import defaultdict

import plotly.graph_objects as go
import pytest

from browser import bars, figure, page_blob, tp_of, trace
from conftest import REPO, ZK_REAL
from dashboards.page import results_page
from dashboards.series import step_counts
from dashboards.timefmt import from_axis_time
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import Event
from replay_engine.api import replay_cluster

S = 1_000_000
T0 = 1_700_000_000 * S
SCENARIOS = sorted(p.name for p in ZK_REAL.iterdir() if (p / "ground_truth.json").exists())


def zk_scenario(name):
    events = []
    for f in sorted((ZK_REAL / name / "version-2").iterdir()):
        evs, _ = parse_source(f.read_bytes(), SourceContext(str(f), cluster="zk"))
        events += evs
    truth = json.loads((ZK_REAL / name / "ground_truth.json").read_text())
    return replay_cluster([e for e in events if e.event_type != "zk_txn"], "zk"), truth


@pytest.fixture(scope="module", params=SCENARIOS)
def scenario(request):
    res, truth = zk_scenario(request.param)
    page = results_page([res])
    return request.param, res, truth, page_blob(page)


def steps_at(tr, t_us, tz="UTC"):
    """The value a step line ('hv') shows at instant t: the last point at or before t."""
    v = None
    for x, y in zip(tr["x"], tr["y"]):
        if from_axis_time(x, tz) <= t_us:
            v = y
    return v


def test_every_figure_is_valid_plotly(scenario):
    _, _, _, blob = scenario
    assert {f["kind"] for f in blob["figures"]} == {"lanes", "counts", "gantt", "heatmap"}
    for f in blob["figures"]:
        go.Figure({"data": f["data"], "layout": f["layout"]})  # raises on any attribute Plotly does not know


def test_red_gantt_bars_are_exactly_the_leaderless_intervals(scenario):
    _, res, _, blob = scenario
    gantt = figure(blob, "c0-gantt")
    end = res.stream.trace_end
    got = sorted((*tp_of(y), a, b) for y, a, b in bars(trace(gantt, "no leader")))
    want = sorted((iv.topic, iv.partition, iv.start, iv.end if iv.end is not None else end)
                  for iv in res.intervals if iv.view.leaderless)
    assert got == want
    if name_of(scenario) != "s4_controlled_shutdown_preferred_election":  # s4: the shutdown loses no leader
        assert want


def name_of(scenario):
    return scenario[0]


def test_leader_bars_are_exactly_the_led_intervals_coloured_by_leader(scenario):
    _, res, _, blob = scenario
    gantt = figure(blob, "c0-gantt")
    end = res.stream.trace_end
    leaders = {iv.view.leader for iv in res.intervals if not iv.view.leaderless and iv.view.leader is not None}
    colours = set()
    for b in leaders:
        tr = trace(gantt, f"leader {b}")
        colours.add(tr["marker"]["color"])
        got = sorted((*tp_of(y), s, e) for y, s, e in bars(tr))
        want = sorted((iv.topic, iv.partition, iv.start, iv.end if iv.end is not None else end)
                      for iv in res.intervals if not iv.view.leaderless and iv.view.leader == b)
        assert got == want, b
    assert len(colours) == len(leaders)  # one colour per leader broker
    red = trace(gantt, "no leader")
    if red is not None:  # hatched, on a red ground (Plotly leaves the ground transparent unless told)
        assert red["marker"]["pattern"]["bgcolor"] == red["marker"]["color"] == "#d62728"


def test_affected_partitions_come_first(scenario):
    _, res, _, blob = scenario
    gantt = figure(blob, "c0-gantt")
    rows = [tp_of(html.unescape(y)) for y in gantt["layout"]["yaxis"]["categoryarray"]]
    affected = {(lp.episode.topic, lp.episode.partition) for lp in res.leaderless}
    assert len(rows) == len({(iv.topic, iv.partition) for iv in res.intervals})  # all drawn: < 500 partitions
    assert set(rows[:len(affected)]) == affected


def test_broker_lanes_equal_the_replay_periods(scenario):
    _, res, _, blob = scenario
    lanes = figure(blob, "c0-lanes")
    end = res.stream.trace_end
    drawn = defaultdict(list)
    for name, state in (("up", "up"), ("shutting down (controlled shutdown)", "up"), ("down", "down")):
        for y, a, b in bars(trace(lanes, name)):
            drawn[(int(y.split()[1]), state)].append((a, b))
    want = defaultdict(list)
    for b, periods in res.image.periods.items():
        for p in periods:
            want[(b, p.state)].append((p.start, p.end if p.end is not None else end))
    merged = {}
    for k, spans in drawn.items():  # an 'up' period split by a controlled shutdown is drawn as two bars
        spans.sort()
        out = [list(spans[0])]
        for a, b in spans[1:]:
            if a == out[-1][1]:
                out[-1][1] = b
            else:
                out.append([a, b])
        merged[k] = [tuple(x) for x in out]
    assert merged == {k: sorted(v) for k, v in want.items()}


def test_session_expiry_marks_and_controller_lane_match_ground_truth(scenario):
    name, res, truth, blob = scenario
    lanes = figure(blob, "c0-lanes")
    expired = trace(lanes, "session expired")
    marks = sorted((int(y.split()[1]), re.search(r"zxid (0x[0-9a-f]+)", h).group(1))
                   for y, h in zip(expired["y"], expired["hovertext"])) if expired else []
    # every session the ZooKeeper server expired (a closeSession with cxid 0), by the zxid that closed it
    want = sorted((int(b), s["closeSession_zxid"]) for b, info in truth["brokers"].items()
                  for s in info["sessions"] if s.get("end") == "expired")
    assert marks == want
    for x, h in zip(expired["x"] if expired else [], expired["hovertext"] if expired else []):
        zxid = re.search(r"zxid (0x[0-9a-f]+)", h).group(1)
        t_ms = [s.get("end_observed_t_ms") for info in truth["brokers"].values() for s in info["sessions"]
                if s.get("closeSession_zxid") == zxid][0]
        if t_ms is not None:  # the server's txn time vs the driver's clock
            assert abs(from_axis_time(x) / 1000 - t_ms) < 500
    # controller lane: the elections of the ground truth, same broker, epoch and zxid, in order
    elected = [e for e in truth["events"] if e["kind"] == "controller_elected"]
    tenures = [t for t in lanes["data"] if t.get("name", "").startswith("controller broker")]
    drawn = sorted((s, int(t["name"].split()[-1]), txt, hover) for t in tenures
                   for s, txt, hover in zip([from_axis_time(b) for b in t["base"]], t["text"], t["hovertext"]))
    assert [(c, txt.split()[1]) for _, c, txt, _ in drawn] == [(e["broker"], f"e{e['controller_epoch']}")
                                                              for e in elected]
    for (_, _, _, hover), e in zip(drawn, elected):
        assert f"zxid {e['zxid']}" in hover
    assert [(s, c) for s, c, _, _ in drawn] == [(t.start, t.controller) for t in res.image.tenures]


def test_leaderless_count_at_the_end_is_the_ground_truth(scenario):
    _, res, truth, blob = scenario
    counts = figure(blob, "c0-counts")
    line = trace(counts, "no leader (offline)")
    registered = {int(b) for b in truth["final_state"]["registered_brokers"]}
    at_end = sum(1 for st in truth["final_state"]["partition_states"].values()
                 if st["state"]["leader"] == -1 or st["state"]["leader"] not in registered)
    assert steps_at(line, res.stream.trace_end) == at_end
    stops = [e["t_ms"] for e in truth["events"] if e["kind"] in ("broker_kill9", "controlled_shutdown_begin")]
    assert stops
    assert steps_at(line, min(stops) * 1000) == 0  # nothing was leaderless before the first broker was stopped


# ------------------------------------------------------------------------------- hand-written trace


class Trace:
    def __init__(self):
        self.events, self.zxid = [], 0

    def add(self, t, event_type, **kw):
        self.zxid += 1
        self.events.append(Event(event_type, cluster="c", ts=T0 + int(round(t * S)), source_kind="zk_txnlog",
                                 source_file="log.1", source_pos=self.zxid * 100, zxid=self.zxid,
                                 raw=kw.pop("raw", f"{event_type}"), **kw))

    def up(self, t, b):
        self.add(t, "broker_registered", subject_broker=b, session_id=0x100 + b,
                 detail={"via": "zk_create", "broker_epoch": b})

    def down(self, t, b):
        self.add(t, "broker_deregistered", subject_broker=b, session_id=0x100 + b,
                 detail={"cause": "session_expired"})

    def controller(self, t, c, epoch):
        self.add(t, "controller_znode_created", controller_id=c)
        self.add(t, "controller_epoch_set", controller_epoch=epoch)

    def topic(self, t, name, asg):
        self.add(t, "topic_assignment_written", topic=name, detail={"assignment": {str(p): r for p, r in asg.items()}})

    def state(self, t, topic, p, leader, isr, le, writer="controller", created=False, raw=None):
        self.add(t, "partition_state_written", topic=topic, partition=p, leader=leader, isr=isr, leader_epoch=le,
                 controller_epoch=1, detail={"writer": writer, "created": created},
                 raw=raw or f"set {topic}/{p} leader {leader}")


def hand_trace(dw="dw"):
    """Brokers 1-3; RF=1 topic dw (partition p on broker p%3+1); RF=3 'orders' led by 1.
    t=20 leader 1 shrinks orders-0 to [1,2]; t=30 expands it back. t=100 broker 1 dies: dw-0 and
    dw-3 have no leader until the end (t=200), orders-0 fails over to 2 at t=100.3 with ISR [2,3]."""
    tr = Trace()
    for b in (1, 2, 3):
        tr.up(b * 0.1, b)
    tr.controller(0.5, 2, 1)
    tr.topic(1, dw, {p: [p % 3 + 1] for p in range(6)})
    for p in range(6):
        tr.state(1.1, dw, p, p % 3 + 1, [p % 3 + 1], 0, created=True)
    tr.topic(2, "orders", {0: [1, 2, 3]})
    tr.state(2.1, "orders", 0, 1, [1, 2, 3], 0, created=True)
    tr.state(20, "orders", 0, 1, [1, 2], 0, writer="leader")
    tr.state(30, "orders", 0, 1, [1, 2, 3], 0, writer="leader")
    tr.down(100, 1)
    for p in (0, 3):
        tr.state(100.2, dw, p, -1, [1], 1)
    tr.state(100.3, "orders", 0, 2, [2, 3], 1)
    tr.up(200, 3)  # evidence until t=200 (broker 3 is already up: a no-op)
    return tr


def test_hand_trace_counts_and_bars():
    res = replay_cluster(hand_trace().events, "c")
    blob = page_blob(results_page([res]))
    counts = figure(blob, "c0-counts")
    down = trace(counts, "no leader (offline)")
    under = trace(counts, "under-replicated (ISR below replica count), right axis")
    at = lambda tr, t: steps_at(tr, T0 + int(t * S))  # noqa: E731
    assert [at(down, t) for t in (99, 100.1, 100.25, 100.4, 199)] == [0, 3, 3, 2, 2]
    assert [at(under, t) for t in (19, 25, 35, 100.1, 100.4)] == [0, 1, 0, 0, 1]
    gantt = figure(blob, "c0-gantt")
    red = defaultdict(list)
    for y, a, b in bars(trace(gantt, "no leader")):
        red[tp_of(y)].append((a, b))
    merged = {tp: (min(a for a, _ in v), max(b for _, b in v)) for tp, v in red.items()}
    assert merged == {("dw", 0): (T0 + 100 * S, T0 + 200 * S), ("dw", 3): (T0 + 100 * S, T0 + 200 * S),
                      ("orders", 0): (T0 + 100 * S, T0 + int(100.3 * S))}
    rows = [tp_of(html.unescape(y)) for y in gantt["layout"]["yaxis"]["categoryarray"]]
    assert rows[:3] == [("dw", 0), ("dw", 3), ("orders", 0)]  # longest outage first
    # the topic dropdown: choosing 'orders' lists its row only
    menu = gantt["layout"]["updatemenus"][0]
    orders = [b for b in menu["buttons"] if b["label"] == "orders"][0]
    assert orders["args"][0]["yaxis.categoryarray"] == ["orders-0"]
    lanes = figure(blob, "c0-lanes")
    assert [(y, a, b) for y, a, b in bars(trace(lanes, "down"))] == [("broker 1", T0 + 100 * S, T0 + 200 * S)]
    heat = figure(blob, "c0-heat")["data"][0]
    orders_row = heat["z"][heat["y"].index("orders-0")]
    assert min(v for v in orders_row if v is not None) == 2 and orders_row[-1] == 2  # shrink at 20, failover at 100.3


def test_hover_carries_leader_isr_epochs_and_the_cause():
    res = replay_cluster(hand_trace().events, "c")
    gantt = figure(page_blob(results_page([res])), "c0-gantt")
    red = trace(gantt, "no leader")
    i = [k for k, y in enumerate(red["y"]) if y == "orders-0"][0]
    hover = red["hovertext"][i]
    lp = [x for x in res.leaderless if x.episode.topic == "orders"][0]
    assert "no working leader: leader 1 is down" in hover and "ISR [1, 2, 3] of 3 replicas" in hover
    assert "leader epoch 0" in hover and "controller epoch 1" in hover
    assert lp.cause.kind in hover
    assert html.unescape(hover.replace("<br>", " ")).count("elected a new leader") == 1
    led = trace(gantt, "leader 2")
    j = [k for k, y in enumerate(led["y"]) if y == "orders-0"][0]
    assert "ISR [2, 3] of 3 replicas" in led["hovertext"][j] and "leader epoch 1" in led["hovertext"][j]


def test_controlled_shutdown_lane():
    """The benchmark's day (scaled down): the controller logs 'Shutting down broker 5' at 18:00 and the
    broker's session closes at 18:00:10."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from dashboard_bench import T0 as B0, synthetic_incident

    res = replay_cluster(synthetic_incident(600, 24), "bench")
    lanes = figure(page_blob(results_page([res])), "c0-lanes")
    sd = bars(trace(lanes, "shutting down (controlled shutdown)"))
    assert sd == [("broker 5", B0 + 18 * 3600 * S, B0 + (18 * 3600 + 10) * S)]
    ctrl = [t for t in lanes["data"] if t["name"] == "no controller"][0]
    assert bars(ctrl) == [("controller", B0 + 14 * 3600 * S, B0 + (14 * 3600 + 6) * S)]


def test_step_counts_exact_then_binned_keeps_peaks():
    spans = [(0, 10), (5, 15), (7, 8), (20, 30)]
    s = step_counts(spans, 0, 40, max_points=100)
    assert s.bin_us is None
    assert [s.at(t) for t in (0, 5, 7, 8, 10, 15, 20, 30, 39)] == [1, 2, 3, 2, 1, 0, 1, 0, 0]
    b = step_counts(spans, 0, 40, max_points=4)  # 4 bins of 10: maxima 3 (at 7), 1 (at 10), 1, 0
    assert b.bin_us == 10 and [b.at(t) for t in (0, 10, 20, 30)] == [3, 1, 1, 0]


def test_kraft_fenced_broker_gets_its_own_lane_state():
    """A KRaft replay ends a broker's 'up' period with cause 'fenced': the lane shows it fenced, not just down
    (a hand-written replay document: the shape ReplayResult.to_json gives)."""
    from dashboards.lanes import lanes_figure
    from dashboards.model import cluster_view

    doc = {"cluster": "k", "window": {"start": "2024-01-01T00:00:00.000Z", "end": "2024-01-01T01:00:00.000Z"},
           "brokers": [{"broker": 1, "periods": [
               {"state": "up", "start": "2024-01-01T00:00:00.000Z", "end": "2024-01-01T00:10:00.000Z",
                "end_cause": "fenced"},
               {"state": "down", "start": "2024-01-01T00:10:00.000Z", "end": "2024-01-01T00:20:00.000Z",
                "end_cause": None},
               {"state": "up", "start": "2024-01-01T00:20:00.000Z", "end": "2024-01-01T00:30:00.000Z",
                "end_cause": "session_expired"},
               {"state": "down", "start": "2024-01-01T00:30:00.000Z", "end": None, "end_cause": None}]}],
           "controllers": [], "leaderless": []}
    lanes = lanes_figure(cluster_view(doc, []), "UTC", "k")
    t0 = 1_704_067_200 * S
    assert bars(trace(lanes, "fenced")) == [("broker 1", t0 + 600 * S, t0 + 1200 * S)]
    assert bars(trace(lanes, "down")) == [("broker 1", t0 + 1800 * S, t0 + 3600 * S)]
    assert "began: fenced" in trace(lanes, "fenced")["hovertext"][0]
