"""Metadata record frame and bodies: the reference's worked example, byte-exact re-encoding of
every record real Kafka wrote, and round trips over every record type and version we know."""
import gzip
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REAL_LOGS
from parsers.kraft.kafka_batches import CONTROL_TYPES, read_batches
from parsers.kraft.records import (
    RecordDecodeError,
    decode_body,
    decode_control,
    decode_metadata_value,
    read_metadata_log,
    uuid_text,
)
from parsers.kraft.record_schema import BY_NAME, CONTROL, METADATA, upper_snake
from samplegen.kafka.kraft_encode import encode_batch, encode_body, encode_control, encode_metadata_value, RecordSpec

META = REAL_LOGS / "ronem123__rupia-transaction-service" / "kafka-logs" / "__cluster_metadata-0"
REAL_FILES = [
    REAL_LOGS / "Niloufar1171__LDI-POC" / "__cluster_metadata-0" / "00000000000000000000.log.gz",
    META / "00000000000001725413.log.gz",
    META / "00000000000001727631-0000000001.checkpoint.gz",
]
TOPIC_ID = bytes(range(16))


def test_worked_partition_change_example_from_the_reference():
    # binary-formats.md §5: 01 05 00 + int32 partitionId + uuid topicId + tagged section
    # 01 (one field) 01 (tag 1 = Leader) 04 (size) ff ff ff ff.
    value = bytes.fromhex("010500") + (7).to_bytes(4, "big") + TOPIC_ID + bytes.fromhex("010104ffffffff")
    rec = decode_metadata_value(value)
    assert (rec.name, rec.api_key, rec.version) == ("PartitionChangeRecord", 5, 0)
    assert rec.fields == {"partitionId": 7, "topicId": uuid_text(TOPIC_ID), "leader": -1}
    assert encode_metadata_value("PartitionChangeRecord", 0, rec.fields) == value


def test_leader_minus_two_is_the_default_and_never_written():
    value = encode_metadata_value("PartitionChangeRecord", 0, {"partitionId": 0, "topicId": uuid_text(TOPIC_ID),
                                                               "leader": -2, "isr": [1, 2]})
    # isr is tag 0: 01 (one tagged field) 00 (tag) 09 (size) 03 (2 items) 00000001 00000002
    assert value.endswith(bytes.fromhex("010009" "03" "00000001" "00000002"))
    assert decode_metadata_value(value).fields == {"partitionId": 0, "topicId": uuid_text(TOPIC_ID), "isr": [1, 2]}


def test_uuid_text_is_kafkas_url_safe_base64():
    # Kafka prints Uuid with Base64.getUrlEncoder().withoutPadding(); the zero uuid is "AAAAAAAAAAAAAAAAAAAAAA".
    assert uuid_text(bytes(16)) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert uuid_text(b"\xfb\xff" + bytes(14)) == "-_8AAAAAAAAAAAAAAAAAAA"


def test_type_names_are_kafkas():
    assert {upper_snake(s.name) for s in METADATA.values()} >= {
        "REGISTER_BROKER_RECORD", "PARTITION_CHANGE_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD",
        "NO_OP_RECORD", "ZK_MIGRATION_STATE_RECORD", "CLEAR_ELR_RECORD", "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
    }


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_every_real_record_decodes_and_reencodes_to_the_same_bytes(path):
    data = gzip.decompress(path.read_bytes())
    seen = set()
    rebuilt = []
    for batch in read_batches(data):
        h = batch.header
        specs = []
        for r in batch.records:
            if h.is_control:
                rec = decode_control(r.key, r.value)
                key, value = encode_control(CONTROL_TYPES[rec.control_type], rec.fields)
            else:
                rec = decode_metadata_value(r.value)
                key, value = None, encode_metadata_value(rec.name, rec.version, rec.fields)
            assert not rec.unknown_tags and rec.undecoded is None
            assert (key, value) == (r.key, r.value), (r.offset, rec.name)
            seen.add((rec.name, rec.version))
            specs.append(RecordSpec(key, value, r.timestamp - h.base_timestamp))
        rebuilt.append(encode_batch(h.base_offset, specs, epoch=h.partition_leader_epoch, timestamp=h.base_timestamp,
                                    control=h.is_control))
    assert b"".join(rebuilt) == data  # the writer writes what Kafka writes, CRCs included
    assert len(seen) >= 3


def test_the_real_files_hold_the_versions_kafka_3_7_to_4_1_write():
    seen = set()
    for path in REAL_FILES:
        for item in read_metadata_log(gzip.decompress(path.read_bytes())):
            seen.add((item.decoded.name, item.decoded.version))
    assert {("RegisterBrokerRecord", 3), ("PartitionRecord", 1), ("PartitionRecord", 2), ("PartitionChangeRecord", 1),
            ("PartitionChangeRecord", 2), ("BrokerRegistrationChangeRecord", 0), ("BrokerRegistrationChangeRecord", 1),
            ("RegisterControllerRecord", 0), ("LeaderChangeMessage", 0), ("SnapshotHeaderRecord", 0),
            ("KRaftVersionRecord", 0), ("VotersRecord", 0), ("SnapshotFooterRecord", 0)} <= seen


# ---------------------------------------------------------------------------- round trips

_INT = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


def _value(field, version):
    t = field.type
    if t == "{}":
        return _struct(field.fields, version)
    if t.startswith("[]"):
        item = _struct(field.fields, version) if t == "[]" else _primitive(t[2:])
        s = st.lists(item, max_size=4)
    else:
        s = _primitive(t)
    if field.nullable_in(version):
        s = st.none() | s
    return s


def _primitive(t):
    if t in _INT:
        bits = _INT[t]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return {
        "uint16": st.integers(0, 65535),
        "bool": st.booleans(),
        "uuid": st.binary(min_size=16, max_size=16).map(uuid_text),
        "string": st.text(max_size=12),
        "bytes": st.binary(max_size=12),
        "float64": st.floats(allow_nan=False),
    }[t]


def _struct(fields, version):
    required, optional = {}, {}
    for fld in fields:
        if not fld.present_in(version):
            continue
        if fld.tag is None:
            required[fld.key] = _value(fld, version)
        else:  # a tagged field equal to its default is not written, so Kafka (and we) read it back as absent
            default = fld.default_value()
            optional[fld.key] = _value(fld, version).filter(lambda v, d=default: v != d)
    return st.fixed_dictionaries(required, optional=optional)


CASES = [("metadata", s.name, v) for s in METADATA.values() for v in range(s.max_version + 1)]
CASES += [("control", t, s.max_version) for t, s in CONTROL.items()]


@pytest.mark.parametrize("kind,name,version", CASES, ids=lambda x: str(x))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip_every_record_type_and_version(kind, name, version, data):
    if kind == "metadata":
        schema = BY_NAME[name]
        fields = data.draw(_struct(schema.fields, version))
        value = encode_metadata_value(name, version, fields)
        rec = decode_metadata_value(value)
        assert (rec.name, rec.version, rec.api_key) == (name, version, schema.api_key)
    else:
        schema = CONTROL[name]
        fields = data.draw(_struct(schema.fields, version))
        key, value = encode_control(CONTROL_TYPES[name], fields)
        rec = decode_control(key, value)
        assert rec.control_type == name and rec.name == schema.name
    assert _same(rec.fields, fields)
    assert list(rec.fields) == [k for k in (f.key for f in schema.fields) if k in fields]  # Kafka's field order


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


# ---------------------------------------------------------------------------- what is not decoded

def test_unknown_api_key_and_newer_versions_are_named_not_fatal():
    rec = decode_metadata_value(bytes([1, 99, 0, 0]))
    assert rec.fields is None and rec.name == "UnknownRecord(apiKey=99)" and "unknown apiKey 99" in rec.undecoded
    rec = decode_metadata_value(bytes([1, 5, 3]) + b"\x00" * 30)
    assert rec.name == "PartitionChangeRecord" and rec.version == 3 and rec.fields is None
    assert "newer than this tool knows" in rec.undecoded


def test_unknown_tags_are_kept_not_lost():
    body = encode_body(BY_NAME["FenceBrokerRecord"], 0, {"id": 3, "epoch": 9})
    value = bytes([1, 7, 0]) + body[:-1] + bytes([1, 40, 2, 0xAB, 0xCD])  # one tagged field, tag 40, 2 bytes
    rec = decode_metadata_value(value)
    assert rec.fields == {"id": 3, "epoch": 9} and rec.unknown_tags == {40: "abcd"}


@pytest.mark.parametrize("value,why", [
    (bytes([0, 5, 0]), "frame version 0"),
    (bytes([1, 7, 0]) + b"\x00\x00\x00\x03", "needs 8 bytes"),  # FenceBrokerRecord cut inside its epoch
    (bytes([1, 2, 0]) + bytes([50]) + b"ab", "impossible length"),  # string claims 49 bytes
    (bytes([1, 8, 0]) + bytes(12) + b"\x00\xff", "bytes left after"),
])
def test_malformed_values_raise_with_a_position(value, why):
    with pytest.raises(RecordDecodeError, match=why) as exc:
        decode_metadata_value(value)
    assert isinstance(exc.value.pos, int)


def test_a_null_where_kafka_forbids_it_is_an_error():
    schema = BY_NAME["TopicRecord"]
    with pytest.raises(RecordDecodeError, match="not nullable"):
        decode_body(schema, 0, b"\x00" + TOPIC_ID + b"\x00")
