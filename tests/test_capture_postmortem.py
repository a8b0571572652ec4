"""``postmortem`` on a capture taken while an RF=1 broker was lost (a real ZooKeeper server).

The test plays the cluster: brokers register ephemeral znodes (broker 1 in its own process, so a
SIGKILL lets its session expire as a crashed broker's does), and the test, as controller 2,
writes what Kafka's controller writes when it loses broker 1: leader -1 for partitions whose only
replica was on broker 1, a new leader from the ISR elsewhere. The truth is what was written.
"""
from __future__ import annotations

import json

import pytest

from forensics.ingest import release, run_ingest
from forensics.pipeline import collect_events
from forensics.report.build import build_report
from forensics.sources import collect_inputs
from replay_engine.api import replay
from test_capture_zk import WatchRun, client, find, options
from zk_server import BrokerProcess, load_kafka_tree, register_broker, state_json, zk_server  # noqa: F401

pytestmark = pytest.mark.spark

TOPICS = {"rf1": {0: [1], 1: [2], 2: [1], 3: [3]}, "rf3": {0: [1, 2, 3], 1: [2, 3, 1]}}


def test_postmortem_on_a_capture_of_an_rf1_broker_loss(spark, zk_server, tmp_path):
    chroot = "/loss"
    root = client(zk_server.hosts)
    root.create(chroot, None)
    root.stop()
    root.close()
    c = client(zk_server.hosts + chroot)
    load_kafka_tree(c, TOPICS, controller=2)
    for b in (2, 3):
        register_broker(c, b)
    broker1 = BrokerProcess(zk_server.hosts + chroot, 1)
    out = tmp_path / "capture"
    run = WatchRun(options(zk_server, chroot, out, watch_s=120))
    try:
        run.wait_snapshot()
        broker1.kill()
        run.wait_for(lambda ls: find(ls, "deleted", "/brokers/ids/1"), timeout=60)
        # controller 2 handles the failure: RF=1 partitions on broker 1 lose their leader; rf3-0 moves to 2
        for p in (0, 2):
            c.set(f"/brokers/topics/rf1/partitions/{p}/state", state_json(-1, [1], leader_epoch=1))
        c.set("/brokers/topics/rf3/partitions/0/state", state_json(2, [2, 3], leader_epoch=1))
        c.set("/brokers/topics/rf3/partitions/1/state", state_json(2, [2, 3], leader_epoch=1))
        run.wait_for(lambda ls: len([ln for ln in ls if ln["kind"] == "changed" and "/state" in ln.get("path", "")]) >= 4)
    finally:
        broker1.kill()
        result = run.finish()
        c.stop()
        c.close()
    assert result.manifest["watch"]["gaps"] == []

    inputs = collect_inputs([str(out)], tmp_path / "x")
    ing = run_ingest(spark, inputs, cluster="loss")
    try:
        events = collect_events(ing)
    finally:
        release(ing)
    assert ing.summary_json["totals"]["unrecognized"] == 0
    results = replay(events)
    report = build_report(results, ing.summary_json, events, sources=[str(out)])
    (incident,) = report["incidents"]
    assert (incident["topic"], incident["partitions"], incident["cause_kind"]) == ("rf1", [0, 2], "all_replicas_offline")
    assert incident["replicas"] == [1] and incident["cause_brokers"] == [1]
    assert "replication factor 1" in incident["summary"]
    assert incident["end"] is None  # broker 1 never came back in the capture
    # rf3 kept a leader: at most the moment between the expiry and the controller's write
    assert all(f["topic"] == "rf3" for f in report["failovers"])
    json.dumps(report)
