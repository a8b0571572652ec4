"""Under-min-ISR write outages on the Gantt: a lane segment per outage, read back from the page's data.

Truth: the bundled sample ``sample_logs/under_min_isr`` (README, read by hand: the six ``payments``
partitions keep leader 1 but have ISR [1] < min.insync.replicas=2, a topic config, from the controller's
ISR write after broker 3's expiry at 10:25:18 until broker 2 rejoins at 10:40:05-06; nothing else
refuses acks=all), and the replay's own ``under_min_isr`` records, which the bars must equal exactly.
"""
from __future__ import annotations

import html
import json

import pytest

from browser import bars, figure, page_blob, tp_of, trace
from conftest import SAMPLES
from dashboards.gantt import WRITE_OUTAGE_TRACE
from dashboards.page import dashboard_page, results_page
from forensics.cli import main
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from test_dashboard_page import EVIL_LINE, EVIL_TOPIC, write_report_dir

SAMPLE = SAMPLES / "under_min_isr"
S = 1_000_000


def _events():
    out = []
    for p in sorted(SAMPLE.rglob("*")):
        if p.is_file() and p.name not in ("README.md", "expected.json"):
            evs, _ = parse_source(p.read_bytes(), SourceContext(path=p.relative_to(SAMPLE).as_posix(),
                                                                 cluster="under_min_isr"))
            out += evs
    return out


@pytest.fixture(scope="module")
def res():
    return replay_cluster(_events(), "under_min_isr")


def _segments(page: str, trace_end: int) -> list[tuple[str, int, int, int]]:
    gantt = figure(page_blob(page), "c0-gantt")
    return sorted((*tp_of(y), a, b) for y, a, b in bars(trace(gantt, WRITE_OUTAGE_TRACE)))


def _want(res) -> list[tuple[str, int, int, int]]:
    end = res.stream.trace_end
    return sorted((o.topic, o.partition, o.start, o.end if o.end is not None else end) for o in res.under_min_isr)


def test_the_sample_has_the_hand_read_outages(res):
    # README: all six payments partitions, 10:25:18.0xx -> 10:40:05-06, ISR [1], min.insync.replicas=2 (topic)
    got = {(o.topic, o.partition): o for o in res.under_min_isr}
    assert sorted(got) == [("payments", p) for p in range(6)]
    day = res.under_min_isr[0].start // (86400 * S) * 86400 * S
    at = lambda h, m, s: day + ((h * 60 + m) * 60 + s) * S  # noqa: E731
    for o in got.values():
        assert at(10, 25, 18) <= o.start < at(10, 25, 18.3) and at(10, 40, 5) <= o.end < at(10, 40, 7)
        assert o.isr == (1,) and o.leader == 1 and o.min_isr == 2 and "topic" in o.min_isr_source


def test_gantt_write_outage_bars_are_the_replays_intervals_live_and_from_a_report_dir(res, tmp_path):
    want = _want(res)
    assert _segments(results_page([res]), res.stream.trace_end) == want
    write_report_dir(tmp_path / "out", res)
    with pytest.raises(SystemExit) as ex:
        main(["dashboard", str(tmp_path / "out"), "--out", str(tmp_path / "d.html"), "-q"])
    assert ex.value.code == 0
    assert _segments((tmp_path / "d.html").read_text(encoding="utf-8"), res.stream.trace_end) == want


def test_partitions_without_a_write_outage_have_no_such_bar_and_the_hover_says_why(res):
    blob = page_blob(results_page([res]))
    gantt = figure(blob, "c0-gantt")
    tr = trace(gantt, WRITE_OUTAGE_TRACE)
    drawn = [tp_of(html.unescape(y)) for y in gantt["layout"]["yaxis"]["categoryarray"]]
    assert sorted(drawn[:6]) == [("payments", p) for p in range(6)]  # the refusing partitions are ranked first
    assert any(t == "__consumer_offsets" for t, _ in drawn)  # drawn too, but with no write-outage bar
    assert {tp_of(html.unescape(y)) for y in tr["y"]} == {("payments", p) for p in range(6)}
    for h in tr["hovertext"]:
        flat = html.unescape(h.replace("<br>", " "))
        assert "ISR [1] below min.insync.replicas=2" in flat and "topic" in flat and "leader 1" in flat
        assert "broker 3" in flat  # the cause summary: broker 3 left the ISR
    assert tr["name"] in [t["name"] for t in gantt["data"] if t.get("showlegend", True)]


def test_hostile_topic_and_summary_are_escaped_in_the_write_outage_hover(res):
    doc = json.loads(json.dumps(res.to_json()))
    for o in doc["under_min_isr"]:
        o["topic"] = EVIL_TOPIC
        o["summary"] = EVIL_LINE
        o["min_insync_replicas_source"] = EVIL_LINE
    rows = [dict(r, topic=EVIL_TOPIC if r["topic"] == "payments" else r["topic"]) for r in res.timeline_rows()]
    page = dashboard_page([doc], rows)
    tr = trace(figure(page_blob(page), "c0-gantt"), WRITE_OUTAGE_TRACE)
    assert len(tr["y"]) == 6 and all(html.unescape(y).startswith(EVIL_TOPIC) for y in tr["y"])
    for h in tr["hovertext"]:
        stripped = h
        for ok in ("<br>", "<b>", "</b>"):
            stripped = stripped.replace(ok, "")
        assert "<" not in stripped and ">" not in stripped, h
        assert html.escape(EVIL_TOPIC, quote=False) in h
    for bad in ("<script>window.__pwned", "<img src=x", "<b>bold</b>"):
        assert bad not in page, bad
