"""kafka-dump-log.sh --cluster-metadata-decoder text -> the same events as the binary log, and
the ``kraft-dump`` command that prints a metadata log in that format or as JSON lines."""
import gzip
import json

import pytest

from conftest import REAL_LOGS
from forensics.cli import main
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.kraft.kafka_batches import read_batches
from parsers.kraft.records import read_metadata_log

LDI = REAL_LOGS / "Niloufar1171__LDI-POC" / "__cluster_metadata-0" / "00000000000000000000.log.gz"
SNAP = (REAL_LOGS / "ronem123__rupia-transaction-service" / "kafka-logs" / "__cluster_metadata-0"
        / "00000000000001734780-0000000001.checkpoint.gz")

# The shape DumpLogSegments prints (binary-formats.md §6), values made up for the test.
KAFKA_TEXT = """\
Dumping /var/lib/kafka/meta/__cluster_metadata-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 3 isTransactional: false isControl: true deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000000 size: 91 magic: 2 compresscodec: none crc: 123456789 isvalid: true
| offset: 0 CreateTime: 1700000000000 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)
baseOffset: 1 lastOffset: 3 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 3 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 91 CreateTime: 1700000000123 size: 300 magic: 2 compresscodec: none crc: 987654321 isvalid: true
| offset: 1 CreateTime: 1700000000123 keySize: -1 valueSize: 90 sequence: -1 headerKeys: [] payload: {"type":"REGISTER_BROKER_RECORD","version":1,"data":{"brokerId":2,"incarnationId":"5zoAlv-xEh9xRANKXt1Lbg","brokerEpoch":1,"endPoints":[{"name":"PLAINTEXT","host":"b2","port":9092,"securityProtocol":0}],"features":[],"rack":null,"fenced":true,"inControlledShutdown":false}}
| offset: 2 CreateTime: 1700000000123 keySize: -1 valueSize: 30 sequence: -1 headerKeys: [] payload: {"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,"topicId":"5zoAlv-xEh9xRANKXt1Lbg","isr":[2],"leader":-1}}
| offset: 3 CreateTime: 1700000000123 keySize: -1 valueSize: 30 sequence: -1 headerKeys: [] payload: {"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":1,"topicId":"5zoAlv-xEh9xRANKXt1Lbg","isr":[2]}}
"""


def parse_text(text, name="incident/dump-meta.txt"):
    events, s = parse_source(text.encode(), SourceContext(path=name, cluster="c"))
    assert s.kind == "kraft_dump_text" and s.balanced()
    return events, s


def test_kafka_dump_text_gives_the_kraft_events():
    events, s = parse_text(KAFKA_TEXT)
    assert (s.lines, s.parsed, s.other, s.unrecognized, s.quarantined) == (8, 4, 4, 0, 0)
    lc, reg, offline, shrink = events
    assert (lc.event_type, lc.controller_id, lc.controller_epoch, lc.source_pos) == ("kraft_leader_change", None, 3, 0)
    assert "leader_unknown" in lc.detail  # Kafka prints no LEADER_CHANGE body
    assert (reg.event_type, reg.subject_broker, reg.ts) == ("broker_registered", 2, 1_700_000_000_123_000)
    assert reg.detail["endpoints"] == ["PLAINTEXT://b2:9092"] and reg.detail["fenced"] is True
    assert (offline.partition, offline.leader, offline.isr) == (0, -1, [2])
    assert (shrink.partition, shrink.leader, shrink.isr, shrink.detail["changed"]) == (1, None, [2], ["isr"])
    assert [e.source_pos for e in events] == [0, 1, 2, 3] and offline.detail["line"] == 7
    assert all(e.source_kind == "kraft_metadata" and e.controller_epoch == 3 for e in events)


def test_skip_record_metadata_lines_count_offsets_from_the_batch():
    lines = KAFKA_TEXT.splitlines()
    bare = [ln if not ln.startswith("| ") else (" " + ln[ln.index("payload: "):] if "payload: " in ln else "")
            for ln in lines]
    events, s = parse_text("\n".join(bare) + "\n")
    assert [e.source_pos for e in events] == [1, 2, 3]  # the control record line is empty: counted, no event
    assert s.other == 5 and events[0].ts == 1_700_000_000_123_000


def test_decode_errors_and_foreign_lines_are_counted_with_their_line():
    text = KAFKA_TEXT + (
        "| offset: 4 CreateTime: 1700000000200 keySize: -1 valueSize: 9 sequence: -1 headerKeys: [] "
        "payload: Error at 4, skipping. Unknown metadata id 99\n"
        "some stray line pasted into the file\n"
        "Found 12 invalid bytes at the end of 00000000000000000000.log\n"
    )
    events, s = parse_text(text)
    assert len(events) == 4 and (s.quarantined, s.unrecognized) == (1, 1)
    assert any("line 9" in e and "Unknown metadata id 99" in e for e in s.errors)
    assert any("12 invalid bytes" in e for e in s.errors)
    assert {q.source_pos for q in s.samples} == {9, 10}


def kraft_dump(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(["kraft-dump", *map(str, args)])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _comparable(events):
    drop = {"byte_pos", "line", "batch_byte_pos"}
    return [
        (e.event_type, e.source_pos, e.source_sub, e.ts, e.controller_epoch, e.controller_id, e.topic, e.partition,
         e.leader, e.isr, e.replicas, e.subject_broker, {k: v for k, v in e.detail.items() if k not in drop})
        for e in events
    ]


@pytest.mark.parametrize("path", [LDI, SNAP], ids=["segment", "snapshot"])
def test_kraft_dump_text_reads_back_as_the_same_events_as_the_binary(capsys, tmp_path, path):
    code, out, err = kraft_dump(capsys, path)
    assert code == 0 and err == ""
    assert out.startswith(f"Dumping {path}\n")
    text_file = tmp_path / "dump.txt"
    text_file.write_text(out)
    from_text, s = parse_source(text_file.read_bytes(), SourceContext(path=path.name[:-3] + ".txt", cluster="c"))
    from_binary, _ = parse_source(path.read_bytes(), SourceContext(path=str(path), cluster="c"))
    assert s.kind == "kraft_dump_text" and s.balanced() and s.unrecognized == s.quarantined == 0
    if path is SNAP:  # the snapshot's place in the log comes from the "Snapshot end offset" line
        assert "Snapshot end offset: 1734780, epoch: 1" in out
    assert _comparable(from_text) == _comparable(from_binary)


def test_kraft_dump_json_has_one_object_per_record_control_records_included(capsys):
    code, out, _ = kraft_dump(capsys, LDI, "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    records = [r for r in read_metadata_log(gzip.decompress(LDI.read_bytes()))]
    assert code == 0 and len(rows) == len(records) == 4929
    first = rows[0]
    assert first["type"] == "LEADER_CHANGE" and first["control"] is True and first["data"]["leaderId"] == 1
    assert (first["offset"], first["batch_base_offset"], first["leader_epoch"], first["version"]) == (0, 0, 1, 0)
    assert first["append_time"] == 0x19C0FCA2E6D  # baseTimestamp of the first batch, read off the hex
    assert [r["offset"] for r in rows] == list(range(4929))
    kinds = {r["type"] for r in rows}
    assert {"REGISTER_BROKER_RECORD", "PARTITION_CHANGE_RECORD", "NO_OP_RECORD", "TOPIC_RECORD"} <= kinds
    pc = next(r for r in rows if r["type"] == "PARTITION_CHANGE_RECORD")
    assert pc["data"]["leader"] == -1 and "isr" not in pc["data"] and pc["version"] == 1


def test_kraft_dump_user_errors_are_one_line(capsys, tmp_path):
    code, out, err = kraft_dump(capsys, tmp_path / "missing.log")
    assert code == 2 and out == "" and err.strip().count("\n") == 0 and "no such file" in err
    junk = tmp_path / "00000000000000000000.log"
    junk.write_bytes(b"hello, this is not a metadata log at all\n" * 3)
    code, out, err = kraft_dump(capsys, junk)
    assert code == 2 and out == "" and "not a readable KRaft metadata log" in err and "byte 0" in err
    assert "Traceback" not in err


def test_kraft_dump_goes_on_past_damage_and_warns(capsys, tmp_path):
    data = bytearray(gzip.decompress(LDI.read_bytes()))
    batch = list(read_batches(bytes(data)))[50].header
    data[batch.pos + 64] ^= 0xFF  # inside its records, so under the CRC
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(bytes(data))
    code, out, err = kraft_dump(capsys, f, "--json")
    assert code == 0 and f"warning: {f}: byte {batch.pos}: CRC-32C mismatch" in err
    assert len(out.splitlines()) == 4929 - batch.records_count
