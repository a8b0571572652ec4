"""Record batch v2 reader: CRC-32C, varints, headers and records, against published CRC values,
hand-decoded bytes of a real KRaft segment and the real segments' own CRCs."""
import gzip
import struct

import pytest

from conftest import REAL_LOGS
from parsers.kraft import kafka_batches as kb
from samplegen.kafka.kraft_encode import RecordSpec, encode_batch

NILOUFAR = REAL_LOGS / "Niloufar1171__LDI-POC" / "__cluster_metadata-0"
RUPIA = REAL_LOGS / "ronem123__rupia-transaction-service" / "kafka-logs" / "__cluster_metadata-0"
REAL_FILES = [
    NILOUFAR / "00000000000000000000.log.gz",
    RUPIA / "00000000000001725413.log.gz",
    RUPIA / "00000000000001727631-0000000001.checkpoint.gz",
    RUPIA / "00000000000001734780-0000000001.checkpoint.gz",
]


def real(path):
    return gzip.decompress(path.read_bytes())


# CRC-32C check values: "123456789" (the CRC catalogue's check value) and RFC 3720 appendix B.4.
CRC_VECTORS = [
    (b"123456789", 0xE3069283),
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]


@pytest.mark.parametrize("data,expected", CRC_VECTORS)
def test_crc32c_matches_published_values(data, expected):
    assert kb.crc32c_pure(data) == expected
    assert kb.crc32c(data) == expected


def test_fast_crc_is_the_c_build():
    # pyproject depends on google-crc32c; without its C build a 1 GB segment takes over a minute.
    assert kb.CRC32C_IMPLEMENTATION == "google-crc32c"


@pytest.mark.parametrize("value,encoded", [
    (0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (-2, b"\x03"), (63, b"\x7e"), (-64, b"\x7f"), (64, b"\x80\x01"),
    (2**31 - 1, b"\xfe\xff\xff\xff\x0f"), (-(2**31), b"\xff\xff\xff\xff\x0f"),
])
def test_zigzag_varints_as_protobuf_defines_them(value, encoded):
    assert kb.varint_bytes(value) == encoded
    assert kb.read_varint(encoded, 0) == (value, len(encoded))


def test_unsigned_varint():
    assert kb.uvarint_bytes(300) == b"\xac\x02"
    assert kb.read_uvarint(b"\xac\x02", 0) == (300, 2)
    with pytest.raises(kb.FormatError):
        kb.read_uvarint(b"\x80\x80", 0)


def test_first_batch_of_a_real_segment_as_decoded_by_hand():
    # bytes 0..90 of LDI-POC's metadata log (Kafka 3.7.0), read off a hex dump:
    # baseOffset 0, batchLength 0x4f, epoch 1, magic 2, crc e56b38b5, attributes 0x0020 (control),
    # baseTimestamp 0x19c0fca2e6d, recordsCount 1; the record: key 00000002 (LEADER_CHANGE), 19-byte value.
    data = real(NILOUFAR / "00000000000000000000.log.gz")
    first = next(kb.read_batches(data))
    h = first.header
    assert (h.base_offset, h.length, h.partition_leader_epoch, h.magic) == (0, 0x4F, 1, 2)
    assert h.crc == 0xE56B38B5 and h.attributes == 0x20 and h.is_control
    assert h.base_timestamp == h.max_timestamp == 0x19C0FCA2E6D
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.records_count) == (-1, -1, -1, 1)
    assert h.size == 91 and h.compression_name == "none" and h.timestamp_type == "CreateTime"
    (rec,) = first.records
    assert rec.offset == 0 and rec.pos == 61 and rec.timestamp == 0x19C0FCA2E6D
    assert rec.key == b"\x00\x00\x00\x02"
    assert rec.value == bytes.fromhex("0000" "00000001" "02" "00000001" "00" "02" "00000001" "00" "00")
    second = list(kb.read_batches(data))[1]
    assert second.header.pos == 91 and second.header.base_offset == 1


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_every_batch_of_the_real_files_passes_its_crc_and_offsets_are_contiguous(path):
    data = real(path)
    items = list(kb.read_batches(data))
    assert all(isinstance(i, kb.Batch) and i.damage is None for i in items)
    assert sum(i.header.size for i in items) == len(data)
    offsets = [r.offset for b in items for r in b.records]
    assert offsets == list(range(offsets[0], offsets[0] + len(offsets)))
    assert offsets[0] == (int(path.name[:20]) if path.name.endswith(".log.gz") else 0)


def test_records_with_keys_headers_and_timestamps():
    specs = [RecordSpec(b"k", b"v" * 300, 5, (("h1", b"x"), ("h2", None))), RecordSpec(None, None, 9)]
    data = encode_batch(40, specs, epoch=3, timestamp=1_000, producer_id=7, producer_epoch=1, base_sequence=10)
    (batch,) = kb.read_batches(data)
    a, b = batch.records
    assert (a.offset, a.timestamp, a.key, a.value, a.sequence) == (40, 1_005, b"k", b"v" * 300, 10)
    assert [(h.key, h.value) for h in a.headers] == [("h1", b"x"), ("h2", None)]
    assert (b.offset, b.timestamp, b.key, b.value, b.sequence) == (41, 1_009, None, None, 11)
    assert batch.header.max_timestamp == 1_009 and batch.header.last_offset == 41


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches_read_back(codec):
    specs = [RecordSpec(None, bytes([i]) * 50) for i in range(20)]
    data = encode_batch(0, specs, epoch=1, timestamp=5, compression=codec)
    (batch,) = kb.read_batches(data)
    assert batch.damage is None and batch.header.compression_name == codec
    assert [r.value for r in batch.records] == [s.value for s in specs]
    assert all(r.pos is None for r in batch.records)  # no file position inside compressed data


def test_snappy_uses_kafkas_xerial_framing():
    data = encode_batch(0, [RecordSpec(None, b"x" * 100)], epoch=1, timestamp=5, compression="snappy")
    payload = data[kb.HEADER_SIZE:]
    assert payload[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)


def test_compression_without_a_codec_library_is_quarantined_not_fatal(monkeypatch):
    data = encode_batch(0, [RecordSpec(None, b"a"), RecordSpec(None, b"b")], epoch=1, timestamp=5, compression="zstd")
    data += encode_batch(2, [RecordSpec(None, b"c")], epoch=1, timestamp=6)
    monkeypatch.setattr(kb, "_cramjam", lambda: None)
    first, second = kb.read_batches(data)
    assert first.records == [] and first.damage.kind == "compression" and first.damage.records == 2
    assert "unsupported compression zstd" in first.damage.reason
    assert [r.value for r in second.records] == [b"c"]


def test_corrupt_gzip_payload_with_a_valid_crc_is_reported():
    good = encode_batch(0, [RecordSpec(None, b"abc" * 30)], epoch=1, timestamp=5, compression="gzip")
    payload = bytearray(good[kb.HEADER_SIZE:])
    payload[12] ^= 0xFF
    body = bytearray(good[:kb.HEADER_SIZE]) + payload
    struct.pack_into(">I", body, 17, kb.crc32c(bytes(body[kb.CRC_START:])))
    (batch,) = kb.read_batches(bytes(body))
    assert batch.damage.kind == "compression" and batch.damage.records == 1
