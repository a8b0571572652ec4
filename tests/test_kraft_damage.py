"""Damaged metadata logs: every record is still accounted for, the damage is named with file
and byte position, and the valid batches around it still decode. Real segments, cut and
corrupted by hand, then by hypothesis."""
import gzip
import struct

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import REAL_LOGS
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.kraft.kafka_batches import HEADER_SIZE, read_batches
from samplegen.kafka.kraft_encode import RecordSpec, encode_batch

LDI_SEGMENT = REAL_LOGS / "Niloufar1171__LDI-POC" / "__cluster_metadata-0" / "00000000000000000000.log.gz"
CHECKPOINT = (REAL_LOGS / "ronem123__rupia-transaction-service" / "kafka-logs" / "__cluster_metadata-0"
              / "00000000000001727631-0000000001.checkpoint.gz")
NAME = "cluster-a/__cluster_metadata-0/00000000000000000000.log"


@pytest.fixture(scope="module")
def segment():
    return gzip.decompress(LDI_SEGMENT.read_bytes())


@pytest.fixture(scope="module")
def headers(segment):
    return [b.header for b in read_batches(segment)]


def parse(data, name=NAME):
    events, s = parse_source(data, SourceContext(path=name, cluster="c"))
    assert s.kind == ("kraft_metadata" if data else "empty")
    assert s.balanced(), (s.lines, s.parsed, s.other, s.unrecognized, s.quarantined)
    return events, s


def biggest_middle_batch(headers):
    middle = headers[len(headers) // 4 : 3 * len(headers) // 4]
    return max(middle, key=lambda h: h.records_count)


def test_crc_mismatch_in_the_middle_quarantines_that_batch_only(segment, headers):
    total = sum(h.records_count for h in headers)
    bad = biggest_middle_batch(headers)
    data = bytearray(segment)
    data[bad.pos + HEADER_SIZE + 3] ^= 0x55  # inside the records: covered by the CRC
    events, s = parse(bytes(data))
    assert s.lines == total and s.quarantined == bad.records_count and s.parsed == total - bad.records_count
    (msg,) = s.errors
    assert NAME in msg and f"byte {bad.pos}:" in msg and "CRC-32C mismatch" in msg
    assert f"reading went on at byte {bad.pos + bad.size}" in msg
    offsets = {e.source_pos for e in events}
    assert offsets.isdisjoint(range(bad.base_offset, bad.last_offset + 1))
    assert bad.base_offset - 1 in offsets and bad.last_offset + 1 in offsets
    assert s.samples[0].source_pos == bad.pos and s.samples[0].category == "quarantined"


def test_corrupt_batch_length_resyncs_on_the_next_valid_batch(segment, headers):
    i = len(headers) // 2
    bad, after = headers[i], headers[i + 1]
    data = bytearray(segment)
    struct.pack_into(">i", data, bad.pos + 8, bad.length + 1000)  # now overlaps the next batches
    events, s = parse(bytes(data))
    assert any(f"byte {bad.pos}:" in e for e in s.errors)
    offsets = {e.source_pos for e in events}
    assert after.base_offset in offsets  # found again by scanning for a batch whose CRC holds
    assert set(range(bad.base_offset, bad.last_offset + 1)).isdisjoint(offsets)
    assert s.quarantined == 1  # the header's count cannot be trusted here: counted as one


def test_wrong_magic_in_the_middle(segment, headers):
    i = len(headers) // 3
    bad = headers[i]
    data = bytearray(segment)
    data[bad.pos + 16] = 7
    events, s = parse(bytes(data))
    assert any(f"byte {bad.pos}: not a record batch: magic byte 7" in e for e in s.errors)
    assert headers[i + 1].base_offset in {e.source_pos for e in events}
    assert s.parsed == sum(h.records_count for h in headers) - bad.records_count


def test_truncated_last_batch_is_counted_and_noted_not_an_error(segment, headers):
    last = max(headers[-40:], key=lambda h: h.records_count)
    cut = segment[: last.pos + last.size // 2]
    events, s = parse(cut)
    assert not s.errors
    assert any("cut short" in n and f"byte {last.pos}" in n for n in s.notes)
    assert s.quarantined == last.records_count
    assert s.parsed == sum(h.records_count for h in headers if h.pos < last.pos)
    assert max(e.source_pos for e in events) == last.base_offset - 1


def test_file_cut_inside_a_batch_header(segment, headers):
    h = headers[5]
    events, s = parse(segment[: h.pos + 30])
    assert s.quarantined == 1 and any("inside a batch header" in n for n in s.notes)
    assert len(events) == sum(x.records_count for x in headers[:5])


def test_zero_padding_after_the_last_batch_is_not_damage(segment, headers):
    events, s = parse(segment[: headers[10].pos] + bytes(4096))
    assert s.quarantined == 0 and not s.errors and any("zero bytes" in n for n in s.notes)
    assert len(events) == sum(h.records_count for h in headers[:10])


def test_garbage_named_like_a_segment():
    junk = b"this is not a kafka log, it is a text file someone renamed\n" * 20
    events, s = parse(junk)
    assert events == [] and s.lines == s.quarantined == 1
    assert s.errors == [f"{NAME}: byte 0: not a record batch: magic byte {junk[16]} (expected 2); 1 record(s) quarantined"]


def test_a_record_that_breaks_the_metadata_grammar_costs_only_itself():
    good = bytes([1, 20, 0, 0])  # NoOpRecord
    bad = bytes([1, 7, 0, 0, 0])  # FenceBrokerRecord cut short
    data = encode_batch(10, [RecordSpec(None, good), RecordSpec(None, bad), RecordSpec(None, good)],
                        epoch=2, timestamp=5)
    events, s = parse(data)
    assert [e.source_pos for e in events] == [10, 12] and s.quarantined == 1
    (msg,) = s.errors
    # the first record is 11 bytes: length, attributes, timestamp and offset deltas, key -1, value length, 4 bytes, 0 headers
    assert "record at offset 11" in msg and f"(byte {HEADER_SIZE + 11})" in msg


def test_a_gzip_file_cut_short_keeps_what_it_can(segment):
    gz = gzip.compress(segment[:50_000], mtime=0)
    events, s = parse(gz[: len(gz) * 3 // 4], NAME + ".gz")
    assert any("gzip stream truncated" in e for e in s.errors)
    assert len(events) > 100 and s.quarantined >= 1


MUTATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("flip"), st.integers(0, 10**9), st.integers(1, 255)),
        st.tuples(st.just("cut"), st.integers(0, 10**9), st.integers(1, 400)),
        st.tuples(st.just("insert"), st.integers(0, 10**9), st.binary(min_size=1, max_size=80)),
        st.tuples(st.just("truncate"), st.integers(0, 10**9), st.just(0)),
    ),
    min_size=1,
    max_size=6,
)


def mutate(data, ops):
    b = bytearray(data)
    for op, where, arg in ops:
        if not b:
            break
        i = where % len(b)
        if op == "flip":
            b[i] ^= arg
        elif op == "cut":
            del b[i : i + arg]
        elif op == "insert":
            b[i:i] = arg
        else:
            del b[i:]
    return bytes(b)


def small_segment():
    # leader change, registrations, topics, partitions, no-ops: the first 150 batches
    data = gzip.decompress(LDI_SEGMENT.read_bytes())
    return data[: [b.header for b in read_batches(data)][150].pos]


SMALL = small_segment()


@settings(max_examples=60, deadline=3000)
@given(ops=MUTATIONS)
def test_mutated_real_segment_never_crashes_and_accounts_for_everything(ops):
    events, s = parse(mutate(SMALL, ops))
    assert not any("internal parser error" in e for e in s.errors)
    assert s.parsed == len(events)
    assert all(e.source_kind == "kraft_metadata" for e in events)


@settings(max_examples=40, deadline=3000)
@given(ops=MUTATIONS)
def test_mutated_real_snapshot_never_crashes(ops):
    data = mutate(gzip.decompress(CHECKPOINT.read_bytes()), ops)
    events, s = parse(data, "m/00000000000001727631-0000000001.checkpoint")
    assert not any("internal parser error" in e for e in s.errors)
    assert s.parsed == len(events) <= 68 + 6 * 2


SMALL_HEADERS = [b.header for b in read_batches(SMALL)]


def _by_byte(events):
    """Events by where their record sits in the file (a damaged baseOffset moves offsets, not bytes)."""
    out = {}
    for e in events:
        out.setdefault(e.detail["byte_pos"], []).append((e.source_pos, e.event_type, e.topic, e.partition, e.leader,
                                                         e.isr, e.subject_broker, e.detail_json()))
    return out


CLEAN_SMALL = _by_byte(parse(SMALL)[0])


@settings(max_examples=200, deadline=3000)
@given(pos=st.integers(min_value=0), flip=st.integers(1, 255))
# a flipped length byte whose claimed end looks like a batch by chance (found by a random search)
@example(pos=1685, flip=9)
def test_one_damaged_byte_costs_only_its_batch_200_cases(pos, flip):
    """Wherever the damage lands (records: CRC; header: length, magic, CRC field), every other batch
    decodes exactly as before: found again by resynchronisation when the length is what broke."""
    pos %= len(SMALL)
    bad = bytearray(SMALL)
    bad[pos] ^= flip
    events, s = parse(bytes(bad))
    got = _by_byte(events)
    (hit,) = [h for h in SMALL_HEADERS if h.pos <= pos < h.pos + h.size]
    others = [at for at in CLEAN_SMALL if not hit.pos <= at < hit.pos + hit.size]
    assert len(others) >= 140
    for at in others:
        assert got.get(at) == CLEAN_SMALL[at], (pos, at)
    # only partitionLeaderEpoch (bytes 12-15) is neither under the CRC nor checkable against its neighbours
    if not 12 <= pos - hit.pos < 16:
        assert s.errors, (pos - hit.pos, s.notes)


def test_a_damaged_length_in_the_last_batch_is_damage_not_a_cut_file():
    # hypothesis found it: one flipped bit in the last batch's length field makes it claim 16 MB with 72 bytes
    # left. Those 72 bytes are the whole batch (its CRC-32C still matches), so the file was not cut short.
    last = SMALL_HEADERS[-1]
    bad = bytearray(SMALL)
    bad[last.pos + 8] ^= 1
    events, s = parse(bytes(bad))
    assert any("is damaged" in e and "CRC-32C matches" in e for e in s.errors), (s.errors, s.notes)
    assert not any("cut short" in note for note in s.notes)
    got = _by_byte(events)
    for at, ev in CLEAN_SMALL.items():
        if at < last.pos:
            assert got.get(at) == ev
    cut = bytes(SMALL[: last.pos + last.size - 5])  # a real cut still reads as one
    _, s2 = parse(cut)
    assert any("cut short" in note for note in s2.notes) and not s2.errors
