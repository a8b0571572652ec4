"""postmortem on the bundled samples, checked against each sample's expected.json (hand-derived by its author
from the scenario, independently of the replay), and the README's main command run as a user would."""
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from conftest import REPO, SAMPLES
from forensics.ingest import run_ingest
from forensics.pipeline import collect_events
from forensics.report.build import build_report
from forensics.sources import collect_inputs
from replay_engine.api import replay

pytestmark = pytest.mark.spark


def ms(iso):
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000


def expected(name):
    return json.loads((SAMPLES / name / "expected.json").read_text())


def analyse(spark, tmp_path, name):
    inputs = collect_inputs([str(SAMPLES / name)], tmp_path / "x")
    ing = run_ingest(spark, inputs, cluster=name)
    events = collect_events(ing)
    results = replay(events)
    return build_report(results, ing.summary_json, events, sources=[name]), results


def check_leaderless(report, exp):
    # short windows that ended by an election (clean, or unclean: listed under data_loss) are not outages here
    incidents = {i["topic"]: i for i in report["incidents"] if i["cause_kind"] not in ("leader_failover", "unclean_election")}
    for want in exp["leaderless"]:
        got = incidents[want["topic"]]
        assert sorted(got["partitions"]) == sorted(want["partitions"])
        assert got["cause_kind"] == want["cause"]
        tol = want["tolerance_ms"]
        assert abs(ms(got["start"]) - ms(want["start"])) <= tol
        assert abs(ms(got["end"]) - ms(want["end"])) <= tol
        if "unavailable_from" in want:  # a kill -9: clients lost the partitions before the cluster noticed
            assert got["unavailable_from"] is not None
            assert abs(ms(got["unavailable_from"]["ts"]) - ms(want["unavailable_from"])) <= 1000
    assert sum(i["count"] for i in incidents.values()) == exp["leaderless_total"]


# The error words each client's log uses for the symptoms listed in expected.json (the client's own vocabulary).
CLIENT_WORDS = {"NETWORK_EXCEPTION": "NETWORK_EXCEPTION", "TimeoutException: Expiring N record(s)": "Expiring",
                "connection refused": "connection refused",
                "In the middle of a leadership election, there is currently no leader for this partition":
                    "In the middle of a leadership election"}


def check_clients(report, exp):
    """Each client's failures show up under the outage that caused them: same partitions, same errors, in time."""
    symptoms = [c for i in report["incidents"] for c in i["client_symptoms"]]
    for want in exp["client_errors"]:
        mine = [c for c in symptoms if c["example"]["source_file"].endswith(want["file"])]
        assert mine, want["file"]
        assert sorted({p for c in mine for p in c["partitions"]}) == want["partitions"]
        for err in want["errors"]:
            word = CLIENT_WORDS[err]
            hits = [c for c in mine if word in c["example"]["text"] or word == c["error"]]
            assert hits, (want["file"], err, [(c["error"], c["example"]["text"]) for c in mine])
        assert min(ms(c["first"]) for c in mine) >= ms(want["from"])
        assert max(ms(c["last"]) for c in mine) <= ms(want["until"]) + 60_000


def readme_sample() -> str:
    cmd = re.search(r"\.venv/bin/kafka-forensics postmortem (\S+)", (REPO / "README.md").read_text())
    assert cmd, "the README shows the main command"
    return cmd.group(1)


@pytest.mark.slow
def test_readme_main_command_as_a_user_runs_it(tmp_path):
    # a process of its own: Spark started, run and stopped as the user's command does
    sample, out = readme_sample(), tmp_path / "report"
    exe = Path(sys.executable).with_name("kafka-forensics")
    env = {**os.environ, "KAFKA_FORENSICS_SHUFFLE_PARTITIONS": "4"}
    proc = subprocess.run([str(exe), "postmortem", sample, "--out", str(out), "--master", "local[2]"],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    check_readme_report(sample, out, proc)


def test_readme_main_command(cli, tmp_path, monkeypatch):
    # the same command's main in this process, on the shared session
    monkeypatch.chdir(REPO)
    sample, out = readme_sample(), tmp_path / "report"
    check_readme_report(sample, out, cli("postmortem", sample, "--out", out, "--master", "local[2]"))


def check_readme_report(sample, out, proc):
    assert proc.returncode == 1, proc.stderr[-2000:]  # 1 = analysed, leaderless partitions found
    assert "Traceback" not in proc.stderr
    report = json.loads((out / "report.json").read_text())
    for f in ("report.md", "report.html", "replay.json"):
        assert (out / f).stat().st_size > 0
    exp = expected(Path(sample).name)
    check_leaderless(report, exp)
    check_clients(report, exp)
    assert "replication factor 1" in proc.stdout and "dw_test_kafka_0816000" in proc.stdout
    assert report["summary"]["agreement"]["agreed"] == report["summary"]["agreement"]["compared"]


def test_controller_failover_sample_has_no_lasting_outage(spark, tmp_path):
    report, results = analyse(spark, tmp_path, "controller_failover")
    exp = expected("controller_failover")
    assert exp["leaderless_total"] == 0
    assert [i for i in report["incidents"] if i["cause_kind"] != "leader_failover"] == []
    tenures = results[0].image.tenures
    assert [(t.controller, t.epoch) for t in tenures] == [(c["broker"], c["epoch"]) for c in exp["controllers"]]
    for t, c in zip(tenures, exp["controllers"]):
        assert abs(t.start / 1000 - ms(c["from"])) <= c["tolerance_ms"]
    assert report["summary"]["agreement"]["agreed"] == report["summary"]["agreement"]["compared"] > 0


def test_unclean_election_sample_loss_and_unavailability(spark, tmp_path):
    report, _ = analyse(spark, tmp_path, "unclean_election")
    exp = expected("unclean_election")
    check_leaderless(report, exp)
    (want,) = exp["unclean_elections"]
    (got,) = report["data_loss"]
    assert (got["topic"], got["partition"], got["new_leader"]) == (want["topic"], want["partition"], want["new_leader"])
    assert got["lost_messages"] == want["lost_messages"]
    assert got["lost_offsets"] == want["lost_offsets"]
    assert abs(ms(got["ts"]) - ms(want["at"])) <= want["tolerance_ms"]
