"""A duration is printed one way everywhere: the report's incident, the replay's sentence and the dashboard's
evidence table say the same for one outage (issue 45: the dashboard said '14.6 s' where the report said '15 s')."""
from __future__ import annotations

import re

from conftest import real_cluster_events
from dashboards.page import report_page
from forensics.report.build import build_report
from replay_engine.api import replay


def test_report_and_dashboard_print_an_outage_duration_alike():
    # Saurabh7064: 54 partitions without a leader for 14.624 s each, the one outage between 10 s and a minute
    name = "Saurabh7064__kafka"
    events = real_cluster_events(name)
    results = replay(events)
    lasted = {lp.episode.duration_us for r in results for lp in r.leaderless
              if lp.episode.duration_us is not None and 10e6 <= lp.episode.duration_us < 60e6}
    assert lasted == {14_624_000}
    report = build_report(results, {}, events, sources=[name])
    said = {m for i in report["incidents"] for m in re.findall(r"\((\d+(?:\.\d)? s)\)", i["summary"])}
    page = report_page(report, results)
    drawn = set(re.findall(r"no leader [^(<]* \((\d+(?:\.\d)? s)\)", page))
    assert said == drawn == {"15 s"}
