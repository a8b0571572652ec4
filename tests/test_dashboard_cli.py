"""``kafka-forensics dashboard SOURCE`` end to end (Spark ingest, replay, page) on the bundled sample.

Truth: ``sample_logs/rf1_broker_kill/expected.json``, written from the scenario script, not from our
output: which partitions lost their leader and when, when broker 1 went and came back, who was
controller with which epoch.
"""
from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict

import pytest

from browser import bars, figure, page_blob, tp_of, trace
from conftest import SAMPLES
from dashboards.timefmt import from_axis_time
from forensics.cli import main

SAMPLE = SAMPLES / "rf1_broker_kill"


def us(iso: str) -> int:
    d = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(d.timestamp()) * 1_000_000 + d.microsecond


@pytest.fixture(scope="module")
def sample(tmp_path_factory, spark):
    out = tmp_path_factory.mktemp("rf1") / "incident.html"
    with pytest.raises(SystemExit) as ex:
        main(["dashboard", str(SAMPLE), "--out", str(out), "--master", "local[2]", "-q"])
    assert ex.value.code == 0
    return page_blob(out.read_text(encoding="utf-8")), json.loads((SAMPLE / "expected.json").read_text())


def test_outages_are_the_expected_partitions_and_times(sample):
    blob, exp = sample
    want = exp["leaderless"][0]
    tol = want["tolerance_ms"] * 1000
    red = defaultdict(list)
    for y, a, b in bars(trace(figure(blob, "c0-gantt"), "no leader")):
        red[tp_of(y)].append((a, b))
    long = {tp: (min(a for a, _ in v), max(b for _, b in v)) for tp, v in red.items()
            if max(b for _, b in v) - min(a for a, _ in v) > 1_000_000}
    assert sorted(long) == [(want["topic"], p) for p in want["partitions"]]
    for start, end in long.values():
        assert abs(start - us(want["start"])) <= tol and abs(end - us(want["end"])) <= tol
    line = trace(figure(blob, "c0-counts"), "no leader (offline)")
    at = lambda t: [y for x, y in zip(line["x"], line["y"]) if from_axis_time(x) <= us(t)][-1]  # noqa: E731
    assert at(exp["zkcli"]["taken_at"]) == exp["leaderless_total"]  # the operator's zkCli look at 10:50:12
    assert at("2021-08-16T10:00:00Z") == 0 and at("2021-08-16T11:30:00Z") == 0


def test_lanes_show_the_kill_and_the_controller(sample):
    blob, exp = sample
    lanes = figure(blob, "c0-lanes")
    f = exp["broker_failures"][0]
    down = [(y, a, b) for y, a, b in bars(trace(lanes, "down"))]
    assert len(down) == 1 and down[0][0] == f"broker {f['broker']}"
    assert abs(down[0][1] - us(f["session_expired_at"])) <= 1000 and abs(down[0][2] - us(f["registered_at"])) <= 1000
    marks = trace(lanes, "session expired")
    assert [(y, abs(from_axis_time(x) - us(f["session_expired_at"])) <= 1000) for x, y in
            zip(marks["x"], marks["y"])] == [(f"broker {f['broker']}", True)]
    c = exp["controllers"][0]
    tenures = [t for t in lanes["data"] if t["name"].startswith("controller broker")]
    assert [(t["name"], t["text"]) for t in tenures] == [(f"controller broker {c['broker']}",
                                                         [f"b{c['broker']} e{c['epoch']}"])]
    assert abs(from_axis_time(tenures[0]["base"][0]) - us(c["from"])) <= c["tolerance_ms"] * 1000
    assert trace(lanes, "no controller") is None
