"""sample_logs/under_min_isr against its hand-written expected.json (derived from the scenario's script and
the simulator's rules, see its README.md): the write outage with a leader present, its cause, its clients."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from conftest import SAMPLES, sample_events

NAME = "under_min_isr"


def us(iso: str) -> int:
    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1_000_000)


@pytest.fixture(scope="module")
def sample():
    from replay_engine.api import replay_cluster

    events = sample_events(NAME)
    return json.loads((SAMPLES / NAME / "expected.json").read_text()), events, replay_cluster(events, NAME)


def test_no_leaderless_outage_but_every_partition_refuses_acks_all(sample):
    exp, _, res = sample
    x = exp["under_min_isr"]
    assert [lp for lp in res.leaderless if lp.episode.end is None or lp.episode.end - lp.episode.start >= 1_000_000] == []
    got = [o for o in res.under_min_isr if o.topic == x["topic"]]
    assert sorted(o.partition for o in got) == x["partitions"]
    assert [o for o in res.under_min_isr if o.topic != x["topic"]] == []
    for o in got:
        assert abs(o.start - us(x["start"])) <= x["start_tolerance_ms"] * 1000, o.summary
        assert us(x["end_after"]) < o.end < us(x["end_before"]), o.summary
        assert (o.leader, list(o.isr), o.min_isr, o.min_isr_source) == \
            (x["leader"], x["isr"], x["min_insync_replicas"], x["min_insync_replicas_source"])
        assert [(d.replica, d.why) for d in o.dropped] == [(x["dropped"]["replica"], x["dropped"]["why"])]
        assert "had already left the ISR" in o.summary and f"replica {x['already_out'][0]}" in o.summary


def test_client_errors_are_tied_to_their_partitions(sample):
    exp, _, res = sample
    x = exp["under_min_isr"]
    by_p = {o.partition: o for o in res.under_min_isr}
    for c in x["client_errors"].values():
        for p in c["partitions"]:
            o = by_p[p]
            assert sorted(o.error_counts) == sorted(c["errors"]), (p, o.error_counts)
            assert all(r.source_file == c["file"] for r in o.client_errors)
    for p in x["no_client_errors"]:
        assert by_p[p].error_counts == {}


def test_postmortem_headline_leads_with_the_write_outage(sample):
    from forensics.report.build import build_report

    _, events, res = sample
    rep = build_report([res], {}, events, sources=[NAME])
    assert rep["summary"]["leaderless_partitions"] == 0
    assert rep["summary"]["under_min_isr_partitions"] == 6
    assert rep["summary"]["headline"].startswith("6 partition(s) refused acks=all writes")
    assert rep["replay"]["under_min_isr"][0]["min_insync_replicas"] == 2
