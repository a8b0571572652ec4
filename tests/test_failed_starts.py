"""Brokers that did not come back: the fatal start-up / registration / stop lines of real logs in
../shared/real_logs (each case names its file and line, read by hand with zcat | sed -n), the
proving line found in the stack trace, and the outages those failed restarts prolonged.

Message texts the templates expect are Kafka's own (see parsers/broker_logs/templates/fatal.py for
tag:file of each); the cases without a real occurrence use those texts verbatim.
"""
from __future__ import annotations

import gzip

import pytest

from conftest import REAL_LOGS
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.causes.restarts import failed_starts, generated_ids


def _lines(rel: str) -> list[str]:
    data = (REAL_LOGS / rel).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", "replace").splitlines()


def _events(rel: str):
    events, _ = parse_source((REAL_LOGS / rel).read_bytes(), SourceContext(path=rel, cluster=rel.split("/")[0]))
    return events


# (file, line of the fatal entry, cause, the text the proving line must hold)
REAL = [
    # 2.8.0: "Fatal error during KafkaServer startup. Prepare to shutdown" then
    # "kafka.common.InconsistentClusterIdException: The Cluster ID tLQCj8dlQWmP3TSWp37_cg doesn't match stored ..."
    ("AndreasTraut__kafka_2.13-2.8.0/logs/server.log.2021-04-28-16.gz", 1841, "inconsistent_cluster_id",
     "InconsistentClusterIdException: The Cluster ID"),
    # 0.10: "FATAL [Kafka Server 0], Fatal error during KafkaServer startup", a KafkaException "Socket server failed
    # to bind to 0.0.0.0:9092", and 13 lines down "Caused by: java.net.BindException: Address already in use: bind"
    ("andreinedelciu__kafka-brokers-public/logs/server.log.2020-10-28-17.gz", 159, "port_in_use",
     "Caused by: java.net.BindException: Address already in use"),
    # 3.x ZooKeeper mode: KafkaZkClient$CheckedEphemeral's "node already exists" on /brokers/ids/0 ...
    ("NikhilDighe9975__kafka_setup/logs/server.log.gz", 2652, "broker_id_in_use",
     "Error while creating ephemeral at /brokers/ids/0, node already exists"),
    # ... then KafkaServer's fatal line, "KeeperException$NodeExistsException: KeeperErrorCode = NodeExists" under it
    ("NikhilDighe9975__kafka_setup/logs/server.log.gz", 2653, "broker_id_in_use", "NodeExistsException"),
    # LogManager: "Shutdown broker because all log dirs in C:\kafka\kafka-logs have failed" (after a
    # KafkaStorageException deleting segments on Windows)
    ("NikhilDighe9975__kafka_setup/logs/server.log.2024-07-29-18.gz", 1476, "log_dirs_failed",
     "Shutdown broker because all log dirs in C:\\kafka\\kafka-logs have failed"),
    # the same on Linux: the checkpoint file under /tmp/kafka-logs was gone (KafkaStorageException at line 33)
    ("YehorYehorychev__Kafka/logs/server.log.2024-11-29-09.gz", 63, "log_dirs_failed",
     "Shutdown broker because all log dirs in /tmp/kafka-logs have failed"),
    # 4.0 KRaft: ProcessTerminatingFaultHandler "Encountered fatal fault: caught exception"; the BindException of
    # the CONTROLLER listener is 38 lines under it
    ("Ammar777782439__kafka_2.13-4.0.0/logs/server.log.2025-05-14-23.gz", 1460, "port_in_use",
     "Caused by: java.net.BindException: Address already in use"),
    # 4.0 KRaft: "[BrokerLifecycleManager id=10] Unable to register broker 10 because the controller returned error
    # DUPLICATE_BROKER_REGISTRATION" (the previous incarnation's registration had not expired)
    ("Ammar777782439__kafka_2.13-4.0.0/logs/server.log.2025-05-14-23.gz", 295, "broker_id_in_use",
     "returned error DUPLICATE_BROKER_REGISTRATION"),
]


@pytest.mark.parametrize("rel,line,cause,proof", REAL, ids=[f"{r.split('/')[0]}:{n}" for r, n, _, _ in REAL])
def test_real_fatal_line_becomes_its_cause_and_points_at_the_proving_line(rel, line, cause, proof):
    evs = [e for e in _events(rel) if e.event_type == "broker_fatal_error" and e.source_pos == line]
    assert len(evs) == 1, f"{rel}:{line}"
    d = evs[0].detail
    assert d["cause"] == cause
    proving = _lines(rel)[line + d["proof_offset"] - 1]
    assert proof in proving, proving


def test_a_failed_restart_is_told_in_the_outages_it_prolonged():
    """NikhilDighe9975 server.log.gz, read by hand: broker 0 (RF 1 everywhere) tried to start at 10:27:36,599,
    NodeExists on /brokers/ids/0 (line 2652), shut down completed 10:27:37,481 (line 2731); tried again at
    10:27:50,734 with the same error (line 3305); the file ends at 10:27:51,524 with broker 0 still down."""
    from replay_engine.api import replay_cluster

    cluster = "NikhilDighe9975__kafka_setup"
    events = []
    for p in sorted((REAL_LOGS / cluster).rglob("*")):
        if p.is_file() and p.suffix in (".gz", ".log"):
            events += _events(p.relative_to(REAL_LOGS).as_posix())
    res = replay_cluster(events, cluster)
    fails = [f for f in res.restarts["failed_starts"] if f["cause"] == "broker_id_in_use"]
    starts = [(f["start"], f["proof"]["source_pos"], f["recovered_at"]) for f in fails
              if f["proof"]["source_file"].endswith("logs/server.log.gz")]
    assert ("2024-08-06T10:27:36.599Z", 2652, None) in starts
    assert ("2024-08-06T10:27:50.734Z", 3305, None) in starts
    after = [lp for lp in res.leaderless if lp.episode.start >= 1722940057000000 and lp.episode.end is None]
    assert after, "broker 0's partitions were leaderless to the end"
    for lp in after:
        assert "Broker 0 tried to restart at 2024-08-06T10:27:50.734Z and failed: NodeExistsException: " \
               "/brokers/ids/0 was still held by ZooKeeper session 0x10004f7cc460000" in lp.cause.summary
        assert "(server.log.gz:3305)" in lp.cause.summary
        assert any(r.source_pos == 3305 for r in lp.cause.chain)
    from forensics.report.build import build_report
    from forensics.report.render import render_text

    text = render_text(build_report([res], {}, events, sources=[cluster]))
    assert "Finding: broker 0 tried to restart at 2024-08-06T10:27:50.734Z and failed: NodeExistsException" in text


def _entry_events(text: str, rel: str = "b/server.log"):
    events, _ = parse_source(text.encode(), SourceContext(path=rel, cluster="c"))
    return [e for e in events if e.event_type == "broker_fatal_error"]


# Messages with no real occurrence in the corpus, verbatim from Kafka's source:
CONSTRUCTED = [
    # 2.8.0 KafkaServer.getBrokerIdAndOfflineDirs: InconsistentBrokerIdException
    ("[2024-01-01 10:00:00,000] ERROR [KafkaServer id=3] Fatal error during KafkaServer startup. Prepare to shutdown "
     "(kafka.server.KafkaServer)\n"
     "kafka.common.InconsistentBrokerIdException: Configured broker.id 3 doesn't match stored broker.id Some(4) in "
     "meta.properties. If you moved your data, make sure your configured broker.id matches. If you intend to create "
     "a new broker, you should remove all data in your data directories (log.dirs).\n"
     "\tat kafka.server.KafkaServer.getOrGenerateBrokerId(KafkaServer.scala:1045)\n", "inconsistent_broker_id", 3),
    # 3.7.0 MetaPropertiesEnsemble.verify (KRaft cluster-id mismatch), thrown out of BrokerServer start-up
    ("[2024-01-01 10:00:00,000] ERROR [BrokerServer id=2] Fatal error during broker startup. Prepare to shutdown "
     "(kafka.server.BrokerServer)\n"
     "java.lang.RuntimeException: Invalid cluster.id in: /var/lib/kafka/meta.properties. Expected AAAA, but read "
     "BBBB\n", "inconsistent_cluster_id", 2),
    # 3.6.0 BrokerLifecycleManager: the controller refused the registration (ClusterControlManager: "Unable to
    # register because the broker does not support version X of metadata.version")
    ("[2024-01-01 10:00:00,000] INFO [BrokerLifecycleManager id=5] Unable to register broker 5 because the "
     "controller returned error UNSUPPORTED_VERSION (kafka.server.BrokerLifecycleManager)\n",
     "registration_refused", 5),
    # an OutOfMemoryError thrown in a request handler
    ("[2024-01-01 10:00:00,000] ERROR [KafkaServer id=1] ... (kafka.server.KafkaServer)\n"
     "[2024-01-01 10:00:01,000] ERROR Uncaught exception in thread 'kafka-request-handler-3': "
     "(org.apache.kafka.common.utils.KafkaThread)\njava.lang.OutOfMemoryError: Java heap space\n",
     "out_of_memory", None),
]


@pytest.mark.parametrize("text,cause,broker", CONSTRUCTED, ids=[c for _, c, _ in CONSTRUCTED])
def test_kafka_source_messages_become_their_cause(text, cause, broker):
    evs = _entry_events(text)
    assert [e.detail["cause"] for e in evs] == [cause]
    if broker is not None:
        assert evs[0].subject_broker == broker


def test_repeated_refusals_are_one_attempt_and_a_later_start_makes_it_a_delay():
    text = "".join(
        f"[2024-01-01 10:00:0{i},000] INFO [BrokerLifecycleManager id=5] Unable to register broker 5 because the "
        "controller returned error UNSUPPORTED_VERSION (kafka.server.BrokerLifecycleManager)\n" for i in range(3))
    fails = failed_starts(_entry_events(text))
    assert [(f.broker, f.lines, f.cause, f.recovered_at) for f in fails] == [(5, 3, "registration_refused", None)]
    started = text + ("[2024-01-01 10:00:09,000] INFO [BrokerServer id=5] Transition from STARTING to STARTED "
                      "(kafka.server.BrokerServer)\n")
    events, _ = parse_source(started.encode(), SourceContext(path="b/server.log", cluster="c"))
    fails = failed_starts(events)
    assert len(fails) == 1 and fails[0].recovered_at is not None


def test_a_broker_with_a_generated_id_that_owns_no_replica_is_named():
    """reserved.broker.max.id (default 1000, KafkaConfig 0.9+): an id above it was generated from /brokers/seqid."""
    from parsers.schema import Event

    evs = [Event("broker_registered", ts=1_000_000, subject_broker=1001, source_file="zk", source_pos=1,
                 detail={"via": "zk_create"}),
           Event("broker_registered", ts=1_000_000, subject_broker=2, source_file="zk", source_pos=2,
                 detail={"via": "zk_create"})]
    found = generated_ids(evs, {("t", 0): [(0, (1, 2))]})
    assert [g["broker"] for g in found] == [1001]
    assert generated_ids(evs, {("t", 0): [(0, (1001, 2))]}) == []
