"""The page's own CSS and script (small, no libraries besides the embedded plotly.js).

The script draws the figures from the JSON island, links the time axes of a
group (zoom one, all follow), and on a click on a Gantt bar shows the events
behind it. It never builds HTML from data: it clones the server-escaped
evidence rows or sets ``textContent``.
"""
from __future__ import annotations

from functools import lru_cache

CSS = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1500px;padding:0 1.2em 3em;color:#222}
h1{font-size:1.5em;margin:.8em 0 .2em}h2{font-size:1.25em;margin:1.4em 0 .3em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:1em 0 .3em}.note{color:#666;font-size:.9em}
.fig{width:100%}.gantt-box{max-height:78vh;overflow-y:auto;border:1px solid #eee}
table{border-collapse:collapse;font-size:.85em;width:100%}td,th{border-bottom:1px solid #e5e5e5;padding:2px 6px;
text-align:left;vertical-align:top}th{background:#fafafa}code{font-size:95%;word-break:break-all}
td.t{white-space:nowrap}.kind{color:#b00;font-family:monospace}tbody.ep tr.head td{background:#fff4f4}
tbody.ep.hl tr td{background:#fff1c9}tbody.ep tr.head{cursor:pointer}
.selected{border:2px solid #f0c36d;background:#fffbea;padding:.4em .6em;margin:.4em 0 1em}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:1em}.cols>div{min-width:0}
.evidence-box{max-height:60vh;overflow-y:auto}ul.incidents li{margin:.3em 0}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var blob = JSON.parse(document.getElementById("kf-data").textContent);
  var status = document.getElementById("kf-status");
  if (typeof Plotly === "undefined") {
    status.textContent = "The charts could not be drawn (plotly.js did not load).";
    return;
  }
  var groups = {};
  var config = {displaylogo: false, responsive: true, scrollZoom: false,
                modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"]};
  blob.figures.forEach(function (f) {
    var gd = document.getElementById(f.div);
    Plotly.newPlot(gd, f.data, f.layout, config);
    gd.setAttribute("data-group", f.group);
    (groups[f.group] = groups[f.group] || []).push(gd);
    if (f.kind === "gantt") { gd.on("plotly_click", function (ev) { onBar(f.section, ev); }); }
  });
  // Linked time axes: a zoom or pan on one figure of a group moves the others; a reset goes back to the window.
  var busy = false;
  function follow(group, source, range) {
    if (busy) { return; }
    busy = true;
    var done = groups[group].map(function (gd) {
      if (gd === source && range === null) { return null; }
      return Plotly.relayout(gd, {"xaxis.range": (range || blob.windows[group]).slice(), "xaxis.autorange": false});
    });
    Promise.all(done).then(function () { busy = false; }, function () { busy = false; });
  }
  Object.keys(groups).forEach(function (group) {
    groups[group].forEach(function (gd) {
      gd.on("plotly_relayout", function (ev) {
        if (busy) { return; }
        if (ev["xaxis.range[0]"] !== undefined) {
          follow(group, gd, [ev["xaxis.range[0]"], ev["xaxis.range[1]"]]);
        } else if (ev["xaxis.range"] !== undefined) {
          follow(group, gd, ev["xaxis.range"]);
        } else if (ev["xaxis.autorange"]) {
          follow(group, gd, blob.windows[group]);
        }
      });
    });
  });
  function clear(el) { while (el.firstChild) { el.removeChild(el.firstChild); } }
  function cell(tr, text, cls) {
    var td = document.createElement("td");
    if (cls) { td.className = cls; }
    td.textContent = text;
    tr.appendChild(td);
  }
  var lit = null;
  function onBar(section, ev) {
    var p = ev && ev.points && ev.points[0];
    if (!p || !p.customdata) { return; }
    var panel = document.getElementById(section + "-selected");
    clear(panel);
    var table = document.createElement("table");
    var ep = p.customdata[1];
    var src = ep >= 0 ? document.getElementById(section + "-ep-" + ep) : null;
    if (lit) { lit.classList.remove("hl"); lit = null; }
    if (src) {
      table.appendChild(src.cloneNode(true));
      src.classList.add("hl");
      lit = src;
    } else {
      var c = blob.cites[section][p.customdata[0]];
      var head = document.createElement("p");
      head.textContent = "This interval began with:";
      panel.appendChild(head);
      var tr = document.createElement("tr");
      cell(tr, c[0], "t"); cell(tr, c[2]); cell(tr, c[1]); cell(tr, c[3]);
      table.appendChild(tr);
    }
    panel.appendChild(table);
  }
  // An outage's heading in the evidence table zooms its group to the outage.
  Array.prototype.forEach.call(document.querySelectorAll("tbody.ep tr.head"), function (tr) {
    tr.addEventListener("click", function () {
      var tb = tr.parentNode;
      var group = tb.getAttribute("data-group");
      if (groups[group]) { follow(group, null, [tb.getAttribute("data-x0"), tb.getAttribute("data-x1")]); }
    });
  });
  status.textContent = "";
  document.body.setAttribute("data-drawn", String(blob.figures.length));
})();
"""


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js as shipped with the plotly package (so the page needs no network)."""
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs()
    if "</script" in js.lower():  # would end the inline <script> early
        raise RuntimeError("the bundled plotly.js contains '</script'; it cannot be inlined")
    return js
