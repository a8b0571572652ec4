"""The page in a real browser (headless Chromium, file://, no network): it draws, it links, it is safe.

A probe script is appended to a copy of the page (the product page is not changed): after the page
has drawn, it moves the mouse over a red bar, clicks it, zooms one chart, and writes what it saw
into the DOM, which Chromium dumps. Truth: the replay's leaderless intervals (the hovered/clicked bar
is one of them) and the hostile strings we put in (they must show up as text, and never run).
"""
from __future__ import annotations

import html
import json
import re

from browser import count_colour, load, page_blob, with_probe
from dashboards.page import results_page
from test_dashboard_figures import zk_scenario
from test_dashboard_page import EVIL_LINE, EVIL_TOPIC, EVIL_TOPIC2, evil_page

PROBE = r"""
window.addEventListener("load", function () { setTimeout(function () {
  var out = {pwned: typeof window.__pwned, errors: []};
  try {
    var g = document.getElementById("c0-gantt");
    out.drawn = document.body.getAttribute("data-drawn");
    out.mainSvg = document.querySelectorAll(".main-svg").length;
    out.status = document.getElementById("kf-status").textContent;
    out.imgs = document.querySelectorAll("img").length;
    out.ticks = Array.prototype.map.call(g.querySelectorAll(".ytick text"), function (t) { return t.textContent; });
    // open the Gantt's topic dropdown and read its items
    g.querySelector(".updatemenu-header").dispatchEvent(new MouseEvent("click", {bubbles: true}));
    out.menu = Array.prototype.map.call(g.querySelectorAll(".updatemenu-item-text"),
                                        function (t) { return t.textContent; });
    g.querySelector(".updatemenu-header").dispatchEvent(new MouseEvent("click", {bubbles: true}));
    var red = -1;
    g._fullData.forEach(function (t, i) { if (t.name === "no leader") { red = i; } });
    var traces = g.querySelectorAll(".barlayer .trace");
    out.redBars = traces[red].querySelectorAll(".point path").length;
    out.points = g.querySelectorAll(".barlayer .point path").length;
    // the longest red bar of TARGET (a y label), hovered and clicked with real mouse events
    var k = -1;
    g.data[red].y.forEach(function (lab, i) {
      if (lab === TARGET && (k < 0 || g.data[red].x[i] > g.data[red].x[k])) { k = i; }
    });
    var box = traces[red].querySelectorAll(".point")[k].querySelector("path").getBoundingClientRect();
    var x = box.left + Math.max(1, box.width / 2), y = box.top + box.height / 2;
    var drag = g.querySelector(".nsewdrag");
    function fire(type, target) {
      (target || drag).dispatchEvent(new MouseEvent(type, {bubbles: true, cancelable: true, view: window,
        clientX: x, clientY: y, buttons: type === "mousedown" ? 1 : 0}));
    }
    fire("mousemove");
    out.hover = g.querySelector(".hoverlayer") ? g.querySelector(".hoverlayer").textContent : null;
    fire("mousedown"); fire("mouseup", document); fire("click");
    out.selected = document.getElementById("c0-selected").textContent;
    // linked time axes: zoom the Gantt, the lanes follow
    var lanes = document.getElementById("c0-lanes");
    var heat = document.getElementById("c0-heat");
    Plotly.relayout(g, {"xaxis.range": [RANGE0, RANGE1]}).then(function () {
      setTimeout(function () {
        out.lanesRange = lanes.layout.xaxis.range;
        out.heatRange = heat.layout.xaxis.range;
        // the topic filter: choose FILTER in both dropdowns, read the rows left
        [g, heat].forEach(function (fig) {
          fig.querySelector(".updatemenu-header").dispatchEvent(new MouseEvent("click", {bubbles: true}));
          Array.prototype.forEach.call(fig.querySelectorAll(".updatemenu-dropdown-button"), function (b) {
            if (b.textContent === FILTER) { b.dispatchEvent(new MouseEvent("click", {bubbles: true})); }
          });
        });
        setTimeout(function () {
          function ticks(fig) {
            return Array.prototype.map.call(fig.querySelectorAll(".ytick text"),
                                            function (t) { return t.textContent; });
          }
          out.filteredGantt = ticks(g);
          out.ganttCats = g.layout.yaxis.categoryarray;
          out.filteredHeat = ticks(heat);
          write();
        }, 300);
      }, 200);
    });
  } catch (e) { out.errors.push(String(e && e.stack || e)); write(); }
  function write() {
    var pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
}, 300); });
"""


def _js(value) -> str:
    return json.dumps(value).replace("<", "\\u003c")  # the probe is a <script> too


def probe_page(page: str, target: str, zoom: tuple[str, str], topic: str) -> str:
    js = PROBE.replace("TARGET", _js(target)).replace("RANGE0", _js(zoom[0])).replace("RANGE1", _js(zoom[1])) \
        .replace("FILTER", _js(topic))
    return with_probe(page, js)


def probe_result(dom: str) -> dict:
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert m, "the probe did not run (the page's scripts failed?)"
    out = json.loads(html.unescape(m.group(1)))
    assert out["errors"] == [], out["errors"]
    return out


def test_real_replay_draws_links_and_explains_in_chromium(tmp_path):
    res, _ = zk_scenario("s1_single_replica_kill")
    page = results_page([res])
    blob = page_blob(page)
    lp = [x for x in res.leaderless if x.episode.topic == "dw_test"][0]
    target = f"dw_test-{lp.episode.partition}"
    zoom = ("2026-11-22 04:48:31.5", "2026-11-22 04:48:31.9")
    path = tmp_path / "s1.html"
    path.write_text(probe_page(page, target, zoom, "dw_test"), encoding="utf-8")
    got = load(path, tmp_path)
    assert got.console == [], got.console  # no errors, no warnings, nothing logged
    out = probe_result(got.dom)
    assert out["pwned"] == "undefined" and out["status"] == ""
    assert out["drawn"] == str(len(blob["figures"])) == "4"
    assert out["mainSvg"] >= 2 * len(blob["figures"])  # plotly draws each figure into its own SVG layers
    red = [t for f in blob["figures"] if f["kind"] == "gantt" for t in f["data"] if t["name"] == "no leader"][0]
    assert out["redBars"] == len(red["y"]) == sum(1 for iv in res.intervals if iv.view.leaderless)
    assert target in out["ticks"]
    # the hover and the click show the replay's own explanation of that outage
    assert target in out["hover"] and lp.cause.kind in out["hover"]
    assert lp.cause.summary in out["selected"]
    for ref in lp.cause.chain:
        assert ref.text[:80] in out["selected"]
    assert out["lanesRange"] == list(zoom) and out["heatRange"] == list(zoom)
    # the topic filter leaves dw_test's partitions only, in both charts, affected first
    dw = sorted(f"dw_test-{p}" for p in {iv.partition for iv in res.intervals if iv.topic == "dw_test"})
    assert sorted(out["filteredGantt"]) == dw and sorted(out["filteredHeat"]) == dw
    assert set(out["ganttCats"][:2]) == {f"dw_test-{x.episode.partition}" for x in res.leaderless
                                         if x.episode.topic == "dw_test"}
    # the screenshot: written, and the hatched red of leaderless bars is on it
    assert got.png is not None and got.png.stat().st_size > 10_000
    assert count_colour(got.png, (214, 39, 40)) > 500


def test_hostile_names_and_lines_render_as_text_and_never_run(tmp_path):
    page = evil_page()
    target = html.escape(EVIL_TOPIC2, quote=False) + "-0"  # the y label as the figure holds it
    path = tmp_path / "evil.html"
    path.write_text(probe_page(page, target, ("2023-11-14 22:13:00", "2023-11-14 22:16:00"), EVIL_TOPIC),
                    encoding="utf-8")
    got = load(path, tmp_path, screenshot=False)
    assert got.console == [], got.console
    out = probe_result(got.dom)
    assert out["pwned"] == "undefined"  # no payload ran: not the <script>, not an onerror, not a javascript: link
    assert out["imgs"] == 0
    assert EVIL_TOPIC + "-0" in out["ticks"] and EVIL_TOPIC2 + "-0" in out["ticks"]  # shown as the text it is
    assert EVIL_TOPIC in out["menu"]
    assert EVIL_TOPIC2 + "-0" in out["hover"]
    assert EVIL_LINE in out["selected"]  # the log line, verbatim, as text
    assert sorted(out["filteredGantt"]) == sorted(f"{EVIL_TOPIC}-{p}" for p in range(6))
    assert "window.__pwned=3" in got.dom and "<script>window.__pwned" not in got.dom.split("</script>", 1)[1]


def test_whatif_page_links_both_replays_in_chromium(tmp_path):
    from test_dashboard_figures import hand_trace
    from dashboards.page import whatif_page
    from replay_engine.api import replay_cluster
    from browser import with_probe

    base = replay_cluster(hand_trace().events, "c")
    tr = hand_trace()
    tr.up(150, 1)
    var = replay_cluster(tr.events, "c")
    page = whatif_page([base], [var], {"verdict": "a verdict"}, "UTC")
    zoom = ["2023-11-14 22:14:30", "2023-11-14 22:15:30"]
    probe = """
    window.addEventListener("load", function () { setTimeout(function () {
      Plotly.relayout(document.getElementById("w0b-gantt"), {"xaxis.range": ZOOM}).then(function () {
        setTimeout(function () {
          var out = {};
          ["w0v-gantt", "w0-counts", "w0b-lanes", "w0v-heat"].forEach(function (id) {
            out[id] = document.getElementById(id).layout.xaxis.range;
          });
          out.drawn = document.body.getAttribute("data-drawn");
          var pre = document.createElement("pre"); pre.id = "probe"; pre.textContent = JSON.stringify(out);
          document.body.appendChild(pre);
        }, 200);
      });
    }, 300); });
    """.replace("ZOOM", json.dumps(zoom))
    path = tmp_path / "whatif.html"
    path.write_text(with_probe(page, probe), encoding="utf-8")
    got = load(path, tmp_path, screenshot=False)
    assert got.console == [], got.console
    out = json.loads(html.unescape(re.search(r'<pre id="probe">(.*?)</pre>', got.dom, re.S).group(1)))
    assert out.pop("drawn") == str(len(page_blob(page)["figures"])) == "7"
    assert out == {k: zoom for k in ("w0v-gantt", "w0-counts", "w0b-lanes", "w0v-heat")}
