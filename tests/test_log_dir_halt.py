"""A broker whose last log directory failed halts at once: 1.0+ LogManager.handleLogDirFailure logs
"Shutdown broker because all log dirs in <dirs> have failed" (fatal) and calls Exit.halt(1) (1.1.0, 2.8.0,
3.7.0 core/src/main/scala/kafka/log/LogManager.scala). No shutdown hook runs, so its ZooKeeper session and
/brokers/ids entry outlive the process: the partitions it led keep it as leader, in ZooKeeper and in the
controller's view, while nothing serves them until the broker starts again (or the session expires and the
controller elects elsewhere).

Truth here: the raw lines of ../shared/real_logs/NikhilDighe9975__kafka_setup (a one-broker 3.7.1 cluster on
Windows whose log directory failed again and again) read with gzip, independently of the parsers.
"""
from __future__ import annotations

import gzip
import re

import pytest

from conftest import REAL_LOGS, log4j_us, real_cluster_events
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import iso_utc, us_of_iso
from replay_engine.common import facts as F
from replay_engine.api import replay_cluster
from replay_engine.causes.text import fmt_duration
from replay_engine.zk.from_events import build_facts

CLUSTER = "NikhilDighe9975__kafka_setup"
_TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] ")

pytestmark = pytest.mark.skipif(not (REAL_LOGS / CLUSTER).is_dir(), reason="../shared/real_logs absent")


def _raw(pattern: str) -> list[int]:
    """Times (µs, the files' clock is UTC) of the server.log lines holding ``pattern``."""
    out = []
    for f in sorted((REAL_LOGS / CLUSTER / "logs").glob("server.log*")):
        for line in gzip.decompress(f.read_bytes()).decode("utf-8", "replace").splitlines():
            m = _TS.match(line)
            if m and pattern in line:
                out.append(log4j_us(m.group(1)))
    return sorted(out)


@pytest.fixture(scope="module")
def events():
    return real_cluster_events(CLUSTER)


def test_each_halt_line_stops_the_broker_there(events):
    halts = _raw("Shutdown broker because all log dirs in")
    assert len(halts) > 5
    stopped = sorted(f.ts for f in build_facts(events).facts if isinstance(f, F.BrokerStopped))
    assert stopped == halts
    # a start-up that fails does not halt a running broker: only LogManager's line does
    assert not any(isinstance(f, F.BrokerStopped) for f in build_facts(
        [e for e in events if (e.detail or {}).get("via") != "log_manager"]).facts)


def test_what_a_halt_left_is_told_and_ends_no_earlier_than_the_next_start(events):
    result = replay_cluster(events, CLUSTER)
    halts = _raw("Shutdown broker because all log dirs in")
    starts = _raw("INFO starting (kafka.server.KafkaServer)")
    told = {f["start"]: f for f in result.restarts["failed_starts"]}
    with_outage = 0
    for h in halts:
        f = told[iso_utc(h)]
        if f["phase"] != "running" or not f["unserved_partitions"]:
            continue  # halted while (re)starting, or it led nothing then
        with_outage += 1
        assert "had no serving leader until" in f["sentence"]
        if f["unserved_until"] is not None:
            # printed as every output prints a duration (issue 45: one implementation; the report's own)
            lasted = us_of_iso(f["unserved_until"]) - h
            assert f"{f['unserved_until']} ({fmt_duration(lasted)})" in f["sentence"], f["sentence"]
        nxt = next((s for s in starts if s > h), None)
        if f["unserved_until"] is None:
            continue  # to the end of the evidence
        until = us_of_iso(f["unserved_until"])
        # a halted process serves nothing until it is started again
        assert nxt is not None and until >= nxt, (f["sentence"], nxt)
    assert with_outage >= 5


def _fatal(text: str):
    events, _ = parse_source(text.encode(), SourceContext(path="kafka-1/server.log", cluster="c", broker_hint=1))
    return [e for e in events if e.event_type == "broker_fatal_error"]


# Lines Kafka writes right before Exit.halt / Runtime.halt (verbatim from the source named; no real occurrence
# in ../shared), in the layout of the release that writes them, with the cause and broker they must give.
HALTS = [
    # 1.0.0-3.7.0 ReplicaManager.LogDirFailureHandler.doWork (inter.broker.protocol.version below 1.0)
    ("[2019-01-01 10:00:00,000] FATAL [ReplicaManager broker=1] Halting broker because dir /data/k1 is offline "
     "(kafka.server.ReplicaManager)\n", "log_dirs_failed", 1),
    # 3.7.0 ReplicaManager.handleLogDirFailure (KRaft or migration: the metadata log's directory failed)
    ("[2024-01-01 10:00:00,000] ERROR [ReplicaManager broker=1] Shutdown broker because the metadata log dir "
     "/data/meta has failed (kafka.server.ReplicaManager)\n", "log_dirs_failed", 1),
    ("[2024-01-01 10:00:00,000] ERROR [ReplicaManager broker=1] Shutdown broker because some log directory has "
     "failed during migration mode: /data/k2 (kafka.server.ReplicaManager)\n", "log_dirs_failed", 1),
    # 0.10.2.0 ReplicaFetcherThread.processPartitionData (KafkaStorageException), with its trace
    ("[2017-01-01 10:00:00,000] FATAL [ReplicaFetcherThread-0-2], Disk error while replicating data for t-0 "
     "(kafka.server.ReplicaFetcherThread)\nkafka.common.KafkaStorageException: I/O exception in append to log 't-0'\n"
     "\tat kafka.log.Log.append(Log.scala:349)\n", "disk_error", 1),
    # 0.8.0 ReplicaFetcherThread: the same without the partition
    ("[2013-01-01 10:00:00,000] FATAL [ReplicaFetcherThread-0-2], Disk error while replicating data. "
     "(kafka.server.ReplicaFetcherThread)\n", "disk_error", 1),
    # 0.11.0.0 KafkaApis.handleLeaderAndIsrRequest
    ("[2017-06-01 10:00:00,000] FATAL [KafkaApi-1] Disk error during leadership change. (kafka.server.KafkaApis)\n",
     "disk_error", 1),
    # 0.10.2.0 Partition.delete (IOException)
    ("[2017-01-01 10:00:00,000] FATAL Partition [t,0] on broker 1: Error deleting the log for partition t-0 "
     "(kafka.cluster.Partition)\n", "disk_error", 1),
    # 0.8.2.0 ReplicaManager.checkpointHighWatermarks (IOException)
    ("[2015-01-01 10:00:00,000] FATAL [Replica Manager on Broker 1]: Error writing to highwatermark file:  "
     "(kafka.server.ReplicaManager)\njava.io.IOException: No space left on device\n", "disk_error", 1),
]


@pytest.mark.parametrize("text,cause,broker", HALTS, ids=[f"{i}-{c}" for i, (_, c, _) in enumerate(HALTS)])
def test_lines_before_a_halt_stop_the_broker(text, cause, broker):
    evs = _fatal(text)
    assert [(e.detail["cause"], e.detail["phase"], e.detail.get("halt")) for e in evs] == [(cause, "running", True)]
    stopped = [f for f in build_facts(evs).facts if isinstance(f, F.BrokerStopped)]
    assert [(f.broker, f.ts) for f in stopped] == [(broker, evs[0].ts)]


def test_a_fatal_start_up_does_not_stop_a_running_broker():
    # 2.8.0 KafkaServer.startup: the process exits through main's Exit.exit, and only a started broker serves
    evs = _fatal("[2021-01-01 10:00:00,000] ERROR [KafkaServer id=1] Fatal error during KafkaServer startup. Prepare "
                 "to shutdown (kafka.server.KafkaServer)\njava.net.BindException: Address already in use\n")
    assert len(evs) == 1 and not evs[0].detail.get("halt")
    assert not any(isinstance(f, F.BrokerStopped) for f in build_facts(evs).facts)


def test_the_broker_is_down_from_the_halt_line(events):
    """Its down period starts at the halt (the process is gone), not at the restart that ZooKeeper sees later."""
    result = replay_cluster(events, CLUSTER)
    halts = _raw("Shutdown broker because all log dirs in")
    starts = _raw("INFO starting (kafka.server.KafkaServer)")
    running = {us_of_iso(f["start"]) for f in
               result.restarts["failed_starts"] if f["phase"] == "running"}
    downs = {p.start: p for p in result.image.periods[0] if p.state == "down"}
    checked = 0
    for h in halts:
        nxt = next((s for s in starts if s > h), None)
        if h not in running or nxt is None:
            continue  # halted while starting (not up yet), or never started again in the evidence
        p = downs.get(h)
        assert p is not None, h
        assert p.end is None or p.end >= nxt  # down until it started again, at least
        checked += 1
    assert checked >= 5


def test_the_report_lists_what_each_halt_left_among_the_outages(events):
    from forensics.report.build import build_report
    from forensics.report.render import render_html, render_text

    result = replay_cluster(events, CLUSTER)
    report = build_report([result], {}, events, sources=[CLUSTER])
    groups = report["dead_leaders"]
    halts = set(_raw("Shutdown broker because all log dirs in"))
    assert groups and all(us_of_iso(g["start"]) in halts for g in groups)
    end = result.stream.trace_end
    for g in groups:
        start = us_of_iso(g["start"])
        assert 0 < g["partition_seconds"] <= g["count"] * (end - start) / 1e6 + 1e-3
    s = report["summary"]
    assert s["dead_leader_partitions"] == sum(g["count"] for g in groups)
    # each halt is told once: among the outages, not again among the findings
    told = {g["summary"].rstrip(".") for g in groups}
    assert not [f for f in report["findings"] if f["text"] in told]
    text = render_text(report)
    assert "Partitions led by a broker whose process had died (ZooKeeper still listed it)" in text
    assert all(g["summary"] in text for g in groups)
    # the largest outage of this evidence by far: broker 0 down for days after a halt, its partitions unserved
    assert s["dead_leader_partition_seconds"] > s["leaderless_partition_seconds"]
    assert s["headline"].startswith(f"{s['dead_leader_partitions']} partition outage(s) with a leader whose process")
    assert "C:\\kafka\\kafka-logs" in render_html(report)


def test_a_shutdown_that_threw_halts_the_broker():
    """2.8+ kafka.Kafka: the shutdown hook's server.shutdown() threw, so main logs "Halting Kafka." and calls
    Exit.halt(1). Real line: YehorYehorychev__Kafka/logs/server.log.2024-11-28-10.gz:112."""
    rel = "YehorYehorychev__Kafka/logs/server.log.2024-11-28-10.gz"
    if not (REAL_LOGS / rel).is_file():
        pytest.skip("../shared/real_logs absent")
    lines = gzip.decompress((REAL_LOGS / rel).read_bytes()).decode("utf-8", "replace").splitlines()
    (pos,) = [i + 1 for i, line in enumerate(lines) if "ERROR Halting Kafka. (kafka.Kafka$)" in line]
    evs, _ = parse_source((REAL_LOGS / rel).read_bytes(), SourceContext(rel, cluster="y", broker_hint=0))
    (ev,) = [e for e in evs if e.event_type == "broker_fatal_error" and e.source_pos == pos]
    assert ev.detail["halt"] is True and ev.detail["via"] == "main"
    assert [f.ts for f in build_facts([ev]).facts if isinstance(f, F.BrokerStopped)] == [ev.ts]


def test_the_timeline_table_shows_the_unserved_windows(events, tmp_path):
    """partition_timeline carries leader_serving: false from each running halt until the broker is back."""
    import pyarrow.parquet as pq

    from forensics.pipeline import write_timeline

    result = replay_cluster(events, CLUSTER)
    write_timeline(result.timeline_rows(), tmp_path / "t")
    table = pq.read_table(tmp_path / "t").to_pylist()
    halts = set(_raw("Shutdown broker because all log dirs in"))
    unserved = [r for r in table if r["leader_serving"] is False]
    assert unserved
    starts = {round(r["start"].timestamp() * 1_000_000) for r in unserved}
    assert starts & halts  # windows open at the halt lines themselves
    assert all(r["leader"] == 0 and not r["leaderless"] for r in unserved)  # led, in ZooKeeper's eyes, by the dead broker
