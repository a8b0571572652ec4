"""``audit_summary.json`` and ``audit.html`` from the per-cluster states of every run so far.

Nothing here reads a clock: the same tables give the same bytes.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from dashboards import safe
from dashboards.document import Page

TOP = 20


def build_summary(states: dict[str, dict[str, Any]], run: dict[str, Any],
                  told: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``told``: per folder that holds several clusters, what told them apart (``Told.record``, as postmortem's
    ``clusters_told_apart``): its clusters, and the events left out of every replay with their file and position."""
    secs: Counter = Counter()
    for st in states.values():
        secs.update(st["leaderless_partition_seconds_by_cause"])
    return {
        "files_processed": run["files_processed"],
        "files_skipped": run["files_skipped"],
        "files_removed": run["files_removed"],
        "files_with_errors": run["files_with_errors"],
        "lines": run["lines"],
        "events_added": run["events"],
        "unrecognized": run["unrecognized"],
        "quarantined": run["quarantined"],
        "days_rewritten": run["days_rewritten"],
        "clusters_replayed": run["clusters_replayed"],
        "input_problems": run["input_problems"],
        "clusters": sorted(states),
        "incidents": sum(st["incidents"] for st in states.values()),
        "failovers": sum(st["failovers"] for st in states.values()),
        "leaderless_partition_seconds": {k: round(v, 3) for k, v in sorted(secs.items())},
        "leaderless_partition_seconds_total": round(sum(secs.values()), 3),
        "by_cluster": {c: states[c] for c in sorted(states)},
        "clusters_told_apart": sorted(told or [], key=lambda r: r["folder"] or ""),
    }


def _bar(x: list, ys: dict[str, list], title: str, xtitle: str, ytitle: str, horizontal: bool = False) -> dict[str, Any]:
    data = []
    for name, y in ys.items():
        tr = {"type": "bar", "name": safe.label(name)}
        if horizontal:
            tr.update({"y": [safe.label(v) for v in x], "x": y, "orientation": "h"})
        else:
            tr.update({"x": [safe.label(v) for v in x], "y": y})
        data.append(tr)
    layout = {"title": {"text": safe.label(title)}, "barmode": "stack", "height": 360 if not horizontal else
              max(260, 26 * len(x) + 120), "margin": {"l": 260 if horizontal else 60, "r": 20, "t": 50, "b": 60},
              "xaxis": {"title": {"text": safe.label(ytitle if horizontal else xtitle)}},
              "yaxis": {"title": {"text": safe.label(xtitle if horizontal else ytitle)},
                        **({"autorange": "reversed"} if horizontal else {})}}
    return {"data": data, "layout": layout}


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{safe.text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{safe.text(v)}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def audit_page(summary: dict[str, Any]) -> str:
    page = Page("kafka-forensics audit")
    states = summary["by_cluster"]
    page.body.append(
        f"<p>{len(states)} cluster(s); {summary['incidents']} outage(s) "
        f"({summary['leaderless_partition_seconds_total'] / 3600:,.1f} leaderless partition-hours), "
        f"{summary['failovers']} brief failover group(s). This run: {summary['files_processed']} file(s) read, "
        f"{summary['files_skipped']} unchanged and skipped.</p>")
    for told in summary.get("clusters_told_apart", []):  # said first, as postmortem's report says it
        page.body.append(f"<p>{safe.text(told['statement'])}</p>")
        page.body.extend(f"<p>{safe.text(f['text'])}</p>" for f in told["findings"])
    # incidents per day, stacked by cause
    per_day: dict[str, Counter] = {}
    for st in states.values():
        for d, c in st["incidents_by_day"].items():
            per_day.setdefault(d, Counter()).update(c)
    days = sorted(per_day)
    causes = sorted({k for c in per_day.values() for k in c})
    fig = _bar(days, {k: [per_day[d].get(k, 0) for d in days] for k in causes}, "Outages per day, by cause", "day",
               "outages")
    page.body.append(page.figure("audit-days", "audit-days", "bar", "audit", fig))
    # leaderless partition-hours per topic and per cause
    by_topic: Counter = Counter()
    for c, st in states.items():
        for t, s in st["leaderless_partition_seconds_by_topic"].items():
            by_topic[f"{c} / {t}"] += s / 3600
    top = sorted(by_topic.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
    fig = _bar([k for k, _ in top], {"partition-hours": [round(v, 3) for _, v in top]},
               "Leaderless partition-hours per topic (top 20)", "cluster / topic", "partition-hours", horizontal=True)
    page.body.append(page.figure("audit-topics", "audit-topics", "bar", "audit", fig))
    cause_hours = {k: round(v / 3600, 3) for k, v in summary["leaderless_partition_seconds"].items()}
    fig = _bar(list(cause_hours), {"partition-hours": list(cause_hours.values())}, "Leaderless partition-hours per cause",
               "cause", "partition-hours")
    page.body.append(page.figure("audit-causes", "audit-causes", "bar", "audit", fig))
    # brokers with the most failures
    fails: Counter = Counter()
    for c, st in states.items():
        for f in st["broker_failures"]:
            fails[(f"{c} / broker {f['broker']}", f["how"])] += f["count"]
    brokers = sorted({b for b, _ in fails}, key=lambda b: (-sum(n for (x, _), n in fails.items() if x == b), b))[:TOP]
    hows = sorted({h for _, h in fails})
    fig = _bar(brokers, {h: [fails.get((b, h), 0) for b in brokers] for h in hows},
               "Brokers with the most failures (how each up-period ended)", "cluster / broker", "failures",
               horizontal=True)
    page.body.append(page.figure("audit-brokers", "audit-brokers", "bar", "audit", fig))
    # controller churn per day
    churn_days = sorted({d for st in states.values() for d in st["controller_changes_by_day"]})
    fig = _bar(churn_days, {c: [st["controller_changes_by_day"].get(d, 0) for d in churn_days]
                            for c, st in sorted(states.items())}, "Controller changes per day", "day", "elections")
    page.body.append(page.figure("audit-churn", "audit-churn", "bar", "audit", fig))
    # topics at risk: replication factor 1, or ISR of one most of the time
    risky = []
    for c, st in sorted(states.items()):
        for t, ts in st["topics"].items():
            isr1 = ts["isr1_s"] / ts["covered_s"] if ts["covered_s"] else 0.0
            if ts["rf1_partitions"] or isr1 > 0.5:
                risky.append([c, t, ts["partitions"], ts["rf_min"], ts["rf1_partitions"], f"{isr1:.0%}",
                              f"{ts['leaderless_s'] / 3600:,.2f}"])
    risky.sort(key=lambda r: (-(r[4] or 0), r[0], r[1]))
    page.body.append("<h2>Topics with replication factor 1 or ISR = 1 most of the time</h2>")
    page.body.append(_table(["cluster", "topic", "partitions", "min RF", "RF=1 partitions", "time with ISR=1",
                             "leaderless partition-hours"], risky[:200]) if risky else "<p>None.</p>")
    page.body.append("<h2>Clusters</h2>")
    page.body.append(_table(
        ["cluster", "mode", "Kafka", "window", "outages", "controller decisions agreed", "replay"],
        [[c, st["mode"], st["kafka_version"] or "?", f"{st['window']['start']} .. {st['window']['end']}",
          st["incidents"], f"{st['agreement']['agreed']}/{st['agreement']['compared']}",
          st["replayed_whole"] or f"{st['shards']} shard(s)"] for c, st in sorted(states.items())]))
    for fid in ("audit-days", "audit-topics", "audit-causes", "audit-brokers", "audit-churn"):
        page.windows[fid] = []
    return page.html()
