"""The cluster a broker, a log directory or a ZooKeeper ensemble names (``cluster_identity`` events), read from real
lines and files of ../shared (each cited), every wording Kafka has used."""
from __future__ import annotations

import gzip

from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from conftest import REAL_LOGS, REAL_LOGS2


def _line(path, n: int) -> str:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if i == n:
                return line
    raise AssertionError(f"{path} has no line {n}")


def _identities(text: str, path: str = "server.log"):
    events, summary = parse_source(text.encode(), SourceContext(path=path))
    assert summary.balanced() and summary.unrecognized == 0, summary.samples
    return [(e.subject_broker, e.detail["via"], e.detail.get("cluster_id") or e.detail.get("zk_chroot"))
            for e in events if e.event_type == "cluster_identity"]


def test_kafka_server_cluster_id_line():
    # 0.10.1+ KafkaServer.startup, after getOrGenerateClusterId read /cluster/id
    line = _line(REAL_LOGS2 / "cesaralcancio__study-kafka/logs/server.log.2021-02-16-13.gz", 239)
    assert "Cluster ID = PGrasPKoQXKGyyDm5VosPQ" in line
    assert _identities(line) == [(None, "kafka_server", "PGrasPKoQXKGyyDm5VosPQ")]


def test_quorum_controller_lines_of_35_and_40():
    # 3.3-3.6 "... with clusterId X, authorizer A." and the 4.0 line without the authorizer
    d = REAL_LOGS2 / "Danielowo2000__BigDataTechnologies-Version-2/kafka_2.13-3.5.0/logs"
    line = _line(d / "controller.log.2023-08-14-10.gz", 1)
    assert _identities(line, "controller.log") == [(1, "quorum_controller", "ZP2ltPx0So-u7ZsfIzft0Q")]
    line = _line(REAL_LOGS / "Ammar777782439__kafka_2.13-4.0.0/logs/controller.log.2025-05-17-12.gz", 7)
    assert "clusterId 1-1747472745 (" in line  # an id the operator chose (kafka-storage.sh format -t)
    assert _identities(line, "controller.log") == [(1, "quorum_controller", "1-1747472745")]


def test_broker_lifecycle_incarnation_line():
    d = REAL_LOGS2 / "Danielowo2000__BigDataTechnologies-Version-2/kafka_2.13-3.5.0/logs"
    line = _line(d / "server.log.2023-08-14-10.gz", 68)
    events, _ = parse_source(line.encode(), SourceContext(path="server.log"))
    (ev,) = [e for e in events if e.event_type == "cluster_identity"]
    assert (ev.subject_broker, ev.detail["cluster_id"], ev.detail["incarnation_id"]) == (
        1, "ZP2ltPx0So-u7ZsfIzft0Q", "62Zoq34uRD6Mu_RgdD2c9w")


def test_zookeeper_chroot_from_the_configuration_dump():
    # LeeSangShin server.log.2019-04-02-17:269 'zookeeper.connect = master:2181,...,slave03:2181/ras-kafka'
    path = REAL_LOGS2 / "LeeSangShin__kafka/logs/server.log.2019-04-02-17.gz"
    assert "/ras-kafka" in _line(path, 269)
    events, _ = parse_source(path.read_bytes(), SourceContext(path="server.log"))
    chroots = {(e.subject_broker, e.detail["zk_chroot"]) for e in events
               if e.event_type == "cluster_identity" and "zk_chroot" in e.detail}
    assert chroots and {c for _, c in chroots} == {"/ras-kafka"}
    # no path: the root (cesaralcancio server.log.2021-02-16-13:438 'zookeeper.connect = localhost:2181')
    path = REAL_LOGS2 / "cesaralcancio__study-kafka/logs/server.log.2021-02-16-13.gz"
    assert _line(path, 438).strip() == "zookeeper.connect = localhost:2181"
    events, _ = parse_source(path.read_bytes(), SourceContext(path="server.log"))
    assert {e.detail["zk_chroot"] for e in events if e.event_type == "cluster_identity" and "zk_chroot" in e.detail} \
        == {"/"}


def test_meta_properties_names_the_directory_cluster_and_node():
    path = REAL_LOGS2 / "ogs59__docker-compose-kafka4.10/data/kafka-1/meta.properties.gz"
    text = gzip.decompress(path.read_bytes()).decode()
    assert "cluster.id=ohEfzflmT6-TloTKzfp5YA" in text and "node.id=1" in text
    events, summary = parse_source(path.read_bytes(), SourceContext(path="data/kafka-1/meta.properties.gz"))
    assert summary.kind == "meta_properties" and summary.balanced() and summary.parsed == 1
    (ev,) = events
    assert (ev.event_type, ev.source_kind, ev.subject_broker, ev.detail["cluster_id"]) == (
        "cluster_identity", "log_dir", 1, "ohEfzflmT6-TloTKzfp5YA")
    assert text.splitlines()[ev.source_pos - 1] == "cluster.id=ohEfzflmT6-TloTKzfp5YA"


def test_zookeeper_snapshot_cluster_id_is_the_brokers():
    """/cluster/id in a real snapshot holds the id the brokers of that folder logged ('Cluster ID = X')."""
    root = REAL_LOGS / "NikhilDighe9975__kafka_setup"
    events, _ = parse_source((root / "zookeeper-data/version-2/snapshot.10b.gz").read_bytes(),
                             SourceContext(path="zookeeper-data/version-2/snapshot.10b.gz"))
    ids = {e.detail["cluster_id"] for e in events if e.event_type == "cluster_identity"}
    logged = {line.split("Cluster ID = ")[1].split()[0]
              for f in sorted((root / "logs").glob("server.log*.gz"))
              for line in gzip.open(f, "rt", encoding="utf-8", errors="replace") if "Cluster ID = " in line}
    assert ids and ids <= logged
