"""sample_logs/restart_refused against its hand-written expected.json (see its README.md): a leaderless outage
prolonged by two refused restarts (InconsistentClusterIdException), each named with its proving line."""
from __future__ import annotations

import datetime as dt
import gzip
import json

import pytest

from conftest import SAMPLES, sample_events

NAME = "restart_refused"


def us(iso: str) -> int:
    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1_000_000)


@pytest.fixture(scope="module")
def sample():
    from replay_engine.api import replay_cluster

    events = sample_events(NAME)
    return json.loads((SAMPLES / NAME / "expected.json").read_text()), events, replay_cluster(events, NAME)


def _line(rel: str, pos: int) -> str:
    data = (SAMPLES / NAME / rel).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode().splitlines()[pos - 1]


def test_each_refused_restart_is_found_with_its_proving_line(sample):
    exp, _, res = sample
    got = res.restarts["failed_starts"]
    assert len(got) == len(exp["failed_starts"])
    for f, want in zip(got, exp["failed_starts"]):
        assert f["broker"] == want["broker"] and f["cause"] == want["cause"]
        assert 0 <= us(f["start"]) - us(want["started"]) <= exp["start_tolerance_ms"] * 1000
        line = _line(f["proof"]["source_file"], f["proof"]["source_pos"])
        assert line.startswith("kafka.common.InconsistentClusterIdException: The Cluster ID "
                               f"{want['found_cluster_id']} doesn't match stored clusterId "
                               f"Some({want['stored_cluster_id']})")
        assert us(f["recovered_at"]) > us(exp["later_start"])  # the third start, with the right configuration


def test_the_outage_names_the_refused_restarts(sample):
    exp, _, res = sample
    g = exp["leaderless"][0]
    eps = [lp for lp in res.leaderless if lp.episode.topic == g["topic"]]
    assert sorted(lp.episode.partition for lp in eps) == g["partitions"]
    for lp in eps:
        assert abs(lp.episode.start - us(g["start"])) <= g["tolerance_ms"] * 1000
        assert abs(lp.episode.end - us(g["end"])) <= g["tolerance_ms"] * 1000
        assert lp.cause.kind == g["cause"]
        s = lp.cause.summary
        for want in exp["failed_starts"]:
            hhmm = want["started"][:16]  # 2021-12-09T09:41
            assert f"Broker 3 tried to restart at {hhmm}" in s
        assert s.count("failed: InconsistentClusterIdException: The Cluster ID sTg8Qe1UR2aWv5xHk3Lm0n") == 2
        assert "(server.log.2021-12-09-09.gz:" in s


def test_postmortem_shows_them_as_findings(sample):
    from forensics.report.build import build_report
    from forensics.report.render import render_text

    exp, events, res = sample
    rep = build_report([res], {}, events, sources=[NAME])
    found = [f for f in rep["findings"] if f["kind"] == "failed_start"]
    assert len(found) == len(exp["failed_starts"])
    assert render_text(rep).count("Finding: broker 3 tried to restart at") == 2
