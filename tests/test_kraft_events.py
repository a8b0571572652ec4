"""KRaft metadata -> events: real segments and snapshots (checked against quorum-state, the
snapshot headers and the segment itself), and crafted logs for each record's event contract."""
import gzip
import json

import pytest

from conftest import REAL_LOGS
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source, sniff_kind
from parsers.kraft.records import uuid_text
from parsers.schema import EVENT_TYPES
from samplegen.kafka.kraft_encode import (MetadataBatch, RecordSpec, encode_batch, encode_log, encode_snapshot,
                                          leader_change)

LDI = REAL_LOGS / "Niloufar1171__LDI-POC" / "__cluster_metadata-0"
RUPIA = REAL_LOGS / "ronem123__rupia-transaction-service" / "kafka-logs" / "__cluster_metadata-0"
T1 = uuid_text(bytes(range(1, 17)))
T2 = uuid_text(bytes(range(2, 18)))


def parse_file(path, name=None):
    return parse_source(path.read_bytes(), SourceContext(path=name or str(path), cluster="c"))


def parse_bytes(data, name="meta/__cluster_metadata-0/00000000000000000000.log"):
    return parse_source(data, SourceContext(path=name, cluster="c"))


def by_type(events, t):
    return [e for e in events if e.event_type == t]


# ---------------------------------------------------------------------------- real files

def test_real_segment_leader_matches_quorum_state_and_every_record_is_an_event():
    quorum = json.loads(gzip.decompress((LDI / "quorum-state.gz").read_bytes()))
    events, s = parse_file(LDI / "00000000000000000000.log.gz")
    assert s.kind == "kraft_metadata" and s.balanced() and not s.errors
    assert s.lines == s.parsed == len(events) and s.quarantined == 0
    (lc,) = by_type(events, "kraft_leader_change")
    assert (lc.controller_id, lc.controller_epoch) == (quorum["leaderId"], quorum["leaderEpoch"])
    assert lc.source_pos == 0 and lc.detail["voters"] == [v["voterId"] for v in quorum["currentVoters"]]
    assert all(e.controller_epoch == quorum["leaderEpoch"] for e in events)
    assert {e.event_type for e in events} <= set(EVENT_TYPES)
    positions = [e.source_pos for e in events]
    assert positions == sorted(positions) == list(range(len(events)))
    assert all(e.source_kind == "kraft_metadata" and e.ts and e.raw for e in events)


def test_real_segment_kafka_3_7_metadata_version_and_broker_lifecycle():
    events, _ = parse_file(LDI / "00000000000000000000.log.gz")
    (mv,) = by_type(events, "feature_level")
    # MANIFEST: bitnami kafka 3.7.0, whose newest metadata.version is 3.7-IV4 = feature level 19
    assert mv.detail["name"] == "metadata.version" and mv.detail["level"] == 19
    regs = by_type(events, "broker_registered")
    assert [r.subject_broker for r in regs] == [1, 1] and all(r.detail["fenced"] is True for r in regs)
    assert regs[0].detail["endpoints"] == ["PLAINTEXT://kafka:9092"]
    # the broker's epoch is the offset of its registration record (controller-semantics §10)
    assert [r.detail["broker_epoch"] for r in regs] == [r.source_pos for r in regs]
    # unfenced once caught up, then a controlled shutdown, at whose end the broker is fenced
    changes = by_type(events, "broker_registration_change")
    assert [(c.detail["fenced"], c.detail["in_controlled_shutdown"]) for c in changes] == [(-1, 0), (0, 1), (1, 0)]
    assert changes[1].source_pos < min(e.source_pos for e in by_type(events, "partition_change")) < changes[2].source_pos


def test_real_segment_controlled_shutdown_leaves_partitions_leaderless_with_names_resolved():
    events, _ = parse_file(LDI / "00000000000000000000.log.gz")
    names = {e.detail["topic_id"]: e.topic for e in by_type(events, "topic_record")}
    pcs = by_type(events, "partition_change")
    assert len(pcs) == 54
    for e in pcs:
        assert e.leader == -1 and e.isr is None and e.replicas is None and e.detail["changed"] == ["leader"]
        assert e.topic == names[e.detail["topic_id"]]
    assert {e.topic for e in pcs} == set(names.values())


def test_real_segment_with_elr_and_snapshot_resolving_topics_across_files():
    seg, s = parse_file(RUPIA / "00000000000001725413.log.gz")
    snap, _ = parse_file(RUPIA / "00000000000001734780-0000000001.checkpoint.gz")
    pcs = by_type(seg, "partition_change")
    assert len(pcs) == 51 and s.balanced() and not s.errors
    assert all(e.topic is None for e in pcs)  # no TopicRecord in this segment: ids kept for the replay
    names = {e.detail["topic_id"]: e.topic for e in by_type(snap, "topic_record")}
    assert {names[e.detail["topic_id"]] for e in pcs} <= set(names.values())
    e = pcs[0]
    assert e.leader == -1 and e.isr == [] and e.detail["elr"] == [1] and e.detail["last_known_elr"] == [1]
    assert e.detail["changed"] == ["isr", "leader", "eligibleLeaderReplicas", "lastKnownElr"]
    fence = by_type(seg, "broker_registration_change")[-1]
    assert fence.detail["fenced"] == 1 and fence.subject_broker == 1
    assert max(x.source_pos for x in seg) == 1737568


@pytest.mark.parametrize("name", ["00000000000001727631-0000000001", "00000000000001734780-0000000001"])
def test_snapshot_records_take_the_snapshot_place_and_time_in_the_log(name):
    end = int(name[:20])
    snap, s = parse_file(RUPIA / f"{name}.checkpoint.gz")
    seg, _ = parse_file(RUPIA / "00000000000001725413.log.gz")
    last_in_snapshot = next(e for e in seg if e.source_pos == end - 1)
    assert s.balanced() and s.lines == len(snap) == 68
    assert all(e.source_pos == end - 1 for e in snap)
    assert [e.source_sub for e in snap] == sorted(e.source_sub for e in snap)
    # the header's lastContainedLogTimestamp is the append time of offset end-1 in the segment
    assert all(e.ts == last_in_snapshot.ts for e in snap)
    assert all(e.detail["snapshot"] == {"end_offset": end, "epoch": int(name[21:])} for e in snap)
    parts = by_type(snap, "partition_record")
    assert len(parts) == 51 and all(p.topic for p in parts)
    p = parts[0]
    assert (p.replicas, p.isr, p.leader) == ([1], [1], 1) and p.zk_version == p.leader_epoch == 10
    assert [e.detail["record"] for e in snap if e.event_type == "metadata_record"][0] == "SnapshotHeaderRecord"


def test_quorum_state_and_index_files_are_not_read_as_metadata():
    assert sniff_kind(str(LDI / "quorum-state.gz"), (LDI / "quorum-state.gz").read_bytes()) == "aux"
    idx = RUPIA / "00000000000001725413.index.gz"
    assert sniff_kind(str(idx), idx.read_bytes()) == "aux"


def test_a_renamed_metadata_folder_is_still_found_but_a_topic_segment_is_not():
    data = (RUPIA / "00000000000001725413.log.gz").read_bytes()
    assert sniff_kind("backup/meta-copy/00000000000001725413.log.gz", data) == "kraft_metadata"
    topic_segment = encode_batch(0, [RecordSpec(b"order-1", b'{"amount": 3}')], epoch=0, timestamp=1)
    assert sniff_kind("data/orders-0/00000000000000000000.log", topic_segment) != "kraft_metadata"
    assert sniff_kind("data/__cluster_metadata-0/00000000000000000000.log", topic_segment) == "kraft_metadata"


# ---------------------------------------------------------------------------- the contract, record by record

def _log(*batches):
    return encode_log([leader_change(4, 1_000, leader=2, voters=[1, 2, 3], granting=[2, 3]), *batches])


def test_partition_change_sets_only_what_the_record_changes():
    data = _log(MetadataBatch(4, 2_000, records=[
        ("TopicRecord", 0, {"name": "orders", "topicId": T1}),
        ("PartitionRecord", 0, {"partitionId": 0, "topicId": T1, "replicas": [1, 2], "isr": [1, 2], "leader": 1,
                                "leaderEpoch": 0, "partitionEpoch": 0}),
        ("PartitionChangeRecord", 0, {"partitionId": 0, "topicId": T1, "isr": [2]}),
        ("PartitionChangeRecord", 0, {"partitionId": 0, "topicId": T1, "leader": -1}),
        ("PartitionChangeRecord", 0, {"partitionId": 0, "topicId": T2, "leader": 3, "replicas": [3, 1],
                                      "leaderRecoveryState": 1}),
        ("RemoveTopicRecord", 0, {"topicId": T1}),
    ]))
    events, s = parse_bytes(data)
    assert s.balanced() and s.parsed == 7
    lc, topic, part, shrink, offline, other, removed = events
    assert (lc.event_type, lc.controller_id, lc.controller_epoch) == ("kraft_leader_change", 2, 4)
    assert lc.detail["granting_voters"] == [2, 3] and lc.ts == 1_000_000
    assert (part.topic, part.partition, part.leader, part.isr, part.replicas) == ("orders", 0, 1, [1, 2], [1, 2])
    assert part.detail["leader_recovery_state"] == 0 and part.detail["elr"] is None
    assert (shrink.isr, shrink.leader, shrink.replicas, shrink.detail["changed"]) == ([2], None, None, ["isr"])
    assert (offline.leader, offline.isr, offline.detail["changed"]) == (-1, None, ["leader"])
    assert other.topic is None and other.detail["topic_id"] == T2  # unknown in this file
    assert (other.leader, other.replicas, other.detail["leader_recovery_state"]) == (3, [3, 1], 1)
    assert (removed.event_type, removed.topic) == ("topic_removed", "orders")
    assert [e.source_pos for e in events] == list(range(7)) and all(e.ts == 2_000_000 for e in events[1:])


def test_broker_records_config_features_and_the_rest():
    data = _log(MetadataBatch(4, 3_000, records=[
        ("RegisterBrokerRecord", 1, {"brokerId": 5, "incarnationId": T1, "brokerEpoch": 77, "rack": "r1",
                                     "endPoints": [{"name": "PLAINTEXT", "host": "b5", "port": 9092, "securityProtocol": 0}],
                                     "fenced": True}),
        ("UnfenceBrokerRecord", 0, {"id": 5, "epoch": 77}),
        ("FenceBrokerRecord", 0, {"id": 5, "epoch": 77}),
        ("BrokerRegistrationChangeRecord", 0, {"brokerId": 5, "brokerEpoch": 77, "fenced": -1}),
        ("UnregisterBrokerRecord", 0, {"brokerId": 5, "brokerEpoch": 77}),
        ("ConfigRecord", 0, {"resourceType": 2, "resourceName": "orders", "name": "min.insync.replicas", "value": "2"}),
        ("ConfigRecord", 0, {"resourceType": 4, "resourceName": "5", "name": "log.retention.ms", "value": None}),
        ("ConfigRecord", 0, {"resourceType": 4, "resourceName": "", "name": "unclean.leader.election.enable",
                             "value": "true"}),
        ("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 7}),
        ("ProducerIdsRecord", 0, {"brokerId": 5, "brokerEpoch": 77, "nextProducerId": 2000}),
        ("ClearElrRecord", 0, {"topicName": "orders"}),
        ("NoOpRecord", 0, {}),
    ]))
    events, s = parse_bytes(data)
    assert s.balanced() and s.parsed == 13
    _, reg, unf, fen, brc, unreg, tcfg, bcfg, dflt, feat, pids, elr, noop = events
    assert (reg.event_type, reg.subject_broker, reg.broker_id) == ("broker_registered", 5, None)
    assert reg.detail["broker_epoch"] == 77 and reg.detail["rack"] == "r1" and reg.detail["via"] == "kraft_record"
    assert reg.detail["incarnation_id"] == T1 and reg.detail["endpoints"] == ["PLAINTEXT://b5:9092"]
    assert (unf.event_type, unf.subject_broker, unf.detail["via"]) == ("broker_unfenced", 5, "record")
    assert (fen.event_type, fen.subject_broker, fen.detail["broker_epoch"]) == ("broker_fenced", 5, 77)
    assert (brc.event_type, brc.detail["fenced"], brc.detail["in_controlled_shutdown"]) == \
        ("broker_registration_change", -1, 0)
    assert (unreg.event_type, unreg.subject_broker) == ("broker_unregistered", 5)
    assert (tcfg.topic, tcfg.subject_broker, tcfg.detail["resource_type"], tcfg.detail["value"]) == \
        ("orders", None, "TOPIC", "2")
    assert (bcfg.topic, bcfg.subject_broker, bcfg.detail["value"]) == (None, 5, None)
    assert (dflt.subject_broker, dflt.detail["resource_name"]) == (None, "")
    assert feat.detail == {"name": "metadata.version", "level": 7, "byte_pos": feat.detail["byte_pos"],
                           "batch_base_offset": 1}
    assert pids.event_type == "metadata_record" and pids.detail["record"] == "ProducerIdsRecord"
    assert pids.detail["fields"] == {"brokerId": 5, "brokerEpoch": 77, "nextProducerId": 2000}
    assert (elr.event_type, elr.topic) == ("metadata_record", "orders")
    assert noop.detail["record"] == "NoOpRecord" and noop.detail["fields"] == {}


def test_records_newer_than_we_know_are_kept_by_name_and_noted():
    value = bytes([1, 5, 3]) + bytes(40)  # PartitionChangeRecord v3: not in any Kafka we know
    data = _log() + encode_batch(1, [RecordSpec(None, value)], epoch=4, timestamp=9)
    events, s = parse_bytes(data)
    assert s.balanced() and s.parsed == 2
    assert events[1].event_type == "metadata_record" and events[1].detail["record"] == "PartitionChangeRecord"
    assert events[1].detail["version"] == 3 and "newer" in events[1].detail["undecoded"]
    assert any("PartitionChangeRecord v3" in n for n in s.notes)


def test_bootstrap_snapshot_sorts_before_the_log():
    data = encode_snapshot([("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 19})],
                           epoch=0, timestamp=500, last_contained_timestamp=-1)
    events, s = parse_bytes(data, "meta/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint")
    assert s.balanced() and len(events) == 3
    assert [e.source_pos for e in events] == [-1, -1, -1]
    assert events[1].event_type == "feature_level" and events[1].ts == 500_000  # no contained time: batch time


@pytest.mark.spark
def test_spark_ingest_of_a_metadata_folder(spark, tmp_path):
    from forensics.ingest import run_ingest
    from forensics.sources import collect_inputs

    inputs = collect_inputs([str(LDI)], tmp_path / "work")
    result = run_ingest(spark, inputs, cluster="ldi")
    files = {f["path"].rsplit("/", 1)[1]: f for f in result.summary_json["files"]}
    seg = files["00000000000000000000.log.gz"]
    direct, s = parse_file(LDI / "00000000000000000000.log.gz")
    assert seg["kind"] == "kraft_metadata" and seg["lines"] == seg["parsed"] == s.lines == 4929
    assert seg["event_counts"] == dict(sorted(s.event_counts.items()))
    assert files["quorum-state.gz"]["kind"] == "aux"
    assert result.summary_json["event_counts"]["partition_change"] == 54
