"""The page as a file: escaping, determinism, report directories, caps, what-if layout, the command.

Truth: the strings we put in (hostile topic names and log lines must come out as escaped text only),
the report directory postmortem writes (a dashboard of it must be byte-identical to report.html), and
hand-derived counts on hand-written traces.
"""
from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from browser import bars, figure, page_blob, tp_of, trace
from conftest import ZK_REAL
from dashboards.model import cluster_view
from dashboards.page import report_page, results_page, whatif_page
from dashboards.rank import select_rows
from dashboards.safe import script_json
from forensics.cli import main
from forensics.pipeline import write_timeline
from forensics.report.build import build_report
from replay_engine.api import replay_cluster
from test_dashboard_figures import S, T0, Trace, hand_trace, steps_at, zk_scenario

EVIL_TOPIC = "<script>window.__pwned=1</script>"
EVIL_TOPIC2 = '<img src=x onerror="window.__pwned=2">'
EVIL_LINE = ('</script><script>window.__pwned=3</script><img src=x onerror="window.__pwned=4"> '
             '& <b>bold</b> <a href="javascript:window.__pwned=5">link</a>')


def evil_results():
    tr = hand_trace(dw=EVIL_TOPIC)
    tr.topic(3, EVIL_TOPIC2, {0: [1]})
    tr.state(3.1, EVIL_TOPIC2, 0, 1, [1], 0, created=True, raw=EVIL_LINE)
    tr.state(100.2, EVIL_TOPIC2, 0, -1, [1], 1, raw=EVIL_LINE)
    return [replay_cluster(tr.events, '<b>cluster</b>"&')]


def evil_page() -> str:
    return results_page(evil_results())


def test_hostile_strings_never_reach_the_page_as_markup():
    page = evil_page()
    low = page.lower()
    assert low.count("</script") == 3  # plotly.js, the data island, the page script: nothing else closes one
    ours = page.split("</script>", 1)[1]  # everything after the embedded plotly.js
    assert "<img" not in ours.lower()
    for bad in ("<script>window.__pwned", "<img src=x", "<b>bold</b>", "<a href=\"javascript", "<b>cluster</b>"):
        assert bad not in page, bad
    # the log line is in the evidence table as text
    assert html.escape(EVIL_LINE, quote=True) in page


def test_hostile_strings_are_escaped_plotly_labels():
    blob = page_blob(evil_page())
    gantt = figure(blob, "c0-gantt")
    labels = gantt["layout"]["yaxis"]["categoryarray"]
    assert html.escape(EVIL_TOPIC) + "-0" in labels and html.escape(EVIL_TOPIC2, quote=False) + "-0" in labels
    assert {tp_of(html.unescape(y))[0] for y in labels} >= {EVIL_TOPIC, EVIL_TOPIC2}
    texts = []
    for f in blob["figures"]:
        for t in f["data"]:
            texts += [str(x) for x in t.get("hovertext") or []] + [str(x) for x in t.get("y") or []]
            texts.append(str(t.get("name")))
        for m in f["layout"].get("updatemenus") or []:
            texts += [b["label"] for b in m["buttons"]]
        texts.append(f["layout"]["title"]["text"])
    for s in texts:
        # only the tags we write ourselves, never one that came from the data
        stripped = s
        for ok in ("<br>", "<b>", "</b>", "<i>", "</i>", "<span style='font-size:11px;color:#666'>", "</span>"):
            stripped = stripped.replace(ok, "")
        assert "<" not in stripped and ">" not in stripped, s
    menu = [b["label"] for b in gantt["layout"]["updatemenus"][0]["buttons"]]
    assert html.escape(EVIL_TOPIC) in menu


def test_script_json_cannot_break_out_and_round_trips():
    value = {"a": "</script><!-- ]]> & \u2028 <b>"}
    s = script_json(value)
    assert "<" not in s and ">" not in s and "&" not in s and "\u2028" not in s
    assert json.loads(s) == value


def test_same_inputs_same_bytes():
    res, _ = zk_scenario("s1_single_replica_kill")
    a = results_page([res])
    res2, _ = zk_scenario("s1_single_replica_kill")
    assert results_page([res2]) == a
    assert "uuid" not in a.split("</script>", 1)[1].lower()  # our part: ids are derived, not random


def write_report_dir(out: Path, res, events=()) -> dict:
    """What ``postmortem --out`` writes (report.json, replay.json, partition_timeline/), without Spark."""
    report = build_report([res], {}, list(events), sources=["evidence"], tz="UTC")
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    (out / "replay.json").write_text(json.dumps(report["replay"], indent=2, ensure_ascii=False) + "\n")
    write_timeline(res.timeline_rows(), out / "partition_timeline")
    return report


@pytest.mark.parametrize("scen", ["s1_single_replica_kill", "s4_controlled_shutdown_preferred_election"])
def test_dashboard_of_a_report_dir_is_report_html(tmp_path, scen):
    if not (ZK_REAL / scen).exists():
        pytest.fail(f"{scen} missing from the shared evidence")
    res, _ = zk_scenario(scen)
    report = write_report_dir(tmp_path / "out", res)
    with pytest.raises(SystemExit) as ex:
        main(["dashboard", str(tmp_path / "out"), "--out", str(tmp_path / "incident.html"), "-q"])
    assert ex.value.code == 0
    built = (tmp_path / "incident.html").read_text(encoding="utf-8")
    assert built == report_page(report, [res], "UTC")
    blob = page_blob(built)
    assert [f["kind"] for f in blob["figures"]] == ["lanes", "gantt", "heatmap", "counts"]


def test_report_dir_in_another_zone_shows_local_times(tmp_path):
    res = replay_cluster(hand_trace().events, "c")
    write_report_dir(tmp_path / "out", res)
    with pytest.raises(SystemExit):
        main(["dashboard", str(tmp_path / "out"), "--out", str(tmp_path / "x.html"), "--tz", "Asia/Kolkata", "-q"])
    gantt = figure(page_blob((tmp_path / "x.html").read_text()), "c0-gantt")
    red = bars(trace(gantt, "no leader"), tz="Asia/Kolkata")
    assert (("orders-0", T0 + 100 * S, T0 + int(100.3 * S)) in red)
    assert gantt["layout"]["xaxis"]["title"]["text"] == "time (Asia/Kolkata)"


@pytest.mark.parametrize("setup, message", [
    (lambda d: None, "no such file or directory"),
    (lambda d: (d.mkdir(), (d / "report.json").write_text("{}")), "not a report directory"),
    (lambda d: (d.mkdir(), (d / "replay.json").write_text("{nope"), (d / "partition_timeline").mkdir()),
     "not a readable JSON document"),
    (lambda d: (d.mkdir(), (d / "replay.json").write_text("{\"leaderless\": []}"), (d / "partition_timeline").mkdir()),
     "no Parquet files"),
    (lambda d: d.mkdir(), "empty folder"),
])
def test_user_errors_are_one_line_and_exit_2(tmp_path, capsys, setup, message):
    d = tmp_path / "report"
    setup(d)
    with pytest.raises(SystemExit) as ex:
        main(["dashboard", str(d), "--out", str(tmp_path / "x.html")])
    assert ex.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "x.html").exists()


def test_gantt_is_capped_and_the_rest_summarised():
    tr = Trace()
    for b in (1, 2, 3):
        tr.up(b * 0.1, b)
    tr.controller(0.5, 2, 1)
    tr.topic(1, "big", {p: [p % 3 + 1] for p in range(900)})
    for p in range(900):
        tr.state(1.1, "big", p, p % 3 + 1, [p % 3 + 1], 0, created=True)
    tr.down(100, 1)
    for k, p in enumerate(range(0, 900, 3)):
        tr.state(100.2 + k * 0.001, "big", p, -1, [1], 1)
    tr.up(200, 1)
    for k, p in enumerate(range(0, 900, 3)):  # the longest outages are the last to recover
        tr.state(200.5 + k * 0.001, "big", p, 1, [1], 2)
    res = replay_cluster(tr.events, "c")
    page = results_page([res], max_rows=100)
    gantt = figure(page_blob(page), "c0-gantt")
    rows = [tp_of(html.unescape(y)) for y in gantt["layout"]["yaxis"]["categoryarray"]]
    # the 100 most affected: broker 1's partitions, the last to get their leader back first
    assert rows == [("big", p) for p in range(897, -1, -3)][:100]
    assert "100 of 900 partitions drawn" in page and "800 partition(s) are not drawn (200 of them affected" in page
    assert "The 200 affected partition(s) without a Gantt row" in page
    counts = figure(page_blob(page), "c0-counts")
    assert steps_at(trace(counts, "no leader (offline)"), T0 + 150 * S) == 300  # counts cover every partition


def test_bar_budget_limits_rows():
    res = replay_cluster(hand_trace().events, "c")
    view = cluster_view(res.to_json(), res.timeline_rows())
    per = {}
    for s in view.spans:
        per[s.tp] = per.get(s.tp, 0) + 1
    sel = select_rows(view, max_rows=100, max_bars=per[("orders", 0)] + per[("dw", 0)] + per[("dw", 3)])
    assert sorted(sel.rows) == [("dw", 0), ("dw", 3), ("orders", 0)]
    assert sel.hidden == len(per) - 3 and sel.hidden_affected == 0


def test_whatif_page_shows_two_replays_on_one_axis():
    base = replay_cluster(hand_trace().events, "c")
    tr = hand_trace()
    tr.up(150, 1)  # the variant: broker 1 is back at 150 and its partitions with it
    for p in (0, 3):
        tr.state(150.2, "dw", p, 1, [1], 2)
    var = replay_cluster(tr.events, "c")
    doc = {"verdict": "With <b>broker 1 back</b>: fewer outages", "changes": [{"description": "restart broker 1"}],
           "baseline": {"leaderless_partition_seconds": 200}, "variant": {"leaderless_partition_seconds": 100.4},
           "delta": {"leaderless_partition_seconds": -99.6}}
    page = whatif_page([base], [var], doc, "UTC")
    blob = page_blob(page)
    assert "&lt;b&gt;broker 1 back&lt;/b&gt;" in page and "<b>broker 1 back" not in page
    g_b, g_v = figure(blob, "w0b-gantt"), figure(blob, "w0v-gantt")
    assert g_b["layout"]["yaxis"]["categoryarray"] == g_v["layout"]["yaxis"]["categoryarray"]
    assert g_b["layout"]["xaxis"]["range"] == g_v["layout"]["xaxis"]["range"] == blob["windows"]["w0"]
    assert {f["group"] for f in blob["figures"]} == {"w0"}
    counts = figure(blob, "w0-counts")
    b_line, v_line = trace(counts, "baseline: no leader (offline)"), trace(counts, "variant: no leader (offline)")
    assert [steps_at(b_line, T0 + t * S) for t in (99, 120, 160)] == [0, 2, 2]
    assert [steps_at(v_line, T0 + t * S) for t in (99, 120, 160)] == [0, 2, 0]
    red_v = {tp_of(y): (a, b) for y, a, b in bars(trace(g_v, "no leader")) if tp_of(y)[0] == "dw" and a >= T0 + 100 * S}
    assert max(b for _, b in red_v.values()) == T0 + int(150.2 * S)


def test_postmortem_writes_the_dashboard_as_report_html():
    from forensics.commands.postmortem import _html
    from forensics.report.render import render_html

    res = replay_cluster(hand_trace().events, "c")
    report = build_report([res], {}, [], sources=["x"], tz="UTC")
    assert _html(report, [res], "UTC", render_html) == report_page(report, [res], "UTC")


def test_two_clusters_two_linked_groups():
    from replay_engine.api import replay

    a = hand_trace().events
    b = hand_trace(dw="other").events
    for ev in b:
        ev.cluster = "d"
    results = replay(a + b)
    blob = page_blob(results_page(results))
    assert {f["group"] for f in blob["figures"]} == {"c0", "c1"}
    assert [f["div"] for f in blob["figures"] if f["kind"] == "gantt"] == ["c0-gantt", "c1-gantt"]
    rows0 = figure(blob, "c0-gantt")["layout"]["yaxis"]["categoryarray"]
    rows1 = figure(blob, "c1-gantt")["layout"]["yaxis"]["categoryarray"]
    assert "dw-0" in rows0 and "other-0" not in rows0 and "other-0" in rows1 and "dw-0" not in rows1


def test_max_partitions_option(tmp_path):
    res = replay_cluster(hand_trace().events, "c")
    write_report_dir(tmp_path / "out", res)
    with pytest.raises(SystemExit) as ex:
        main(["dashboard", str(tmp_path / "out"), "--out", str(tmp_path / "x.html"), "--max-partitions", "2", "-q"])
    assert ex.value.code == 0
    gantt = figure(page_blob((tmp_path / "x.html").read_text()), "c0-gantt")
    assert [tp_of(y) for y in gantt["layout"]["yaxis"]["categoryarray"]] == [("dw", 0), ("dw", 3)]
