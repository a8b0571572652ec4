"""The bad-input matrix (docs/robustness.md) at parser level: real files from ../shared, damaged
the way evidence arrives damaged. For each: no exception, a message that names the position (the
file is the summary's path, shown beside it in report.json and ingest_summary.json), what is
valid still parses to exactly the events of the undamaged file, and the accounting balances."""
from __future__ import annotations

import gzip
import os
import re
import struct
import time
import zlib
from datetime import datetime, timedelta

import pytest

from conftest import REAL_LOGS, SAMPLES, ZK_REAL
from forensics.errors import UserError
from forensics.ingest import IngestResult, build_summary_json, require_evidence
from forensics.pipeline import drop_log_copies
from forensics.report.build import build_report
from forensics.sources import Inputs, broker_hint_from_path, collect_inputs
from parsers.broker_logs.broker_log import MAX_LINE_CHARS
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.zookeeper.snapshot import read_snapshot
from parsers.zookeeper.txnlog import read_txnlog
from replay_engine.api import replay

# A Kafka 3.0 controller log: 542 lines, 361 events of 11 types, one continuation line.
CONTROLLER_LOG = REAL_LOGS / "CodingCookieRookie__CS3219_TASKD" / "logs" / "controller.log.2021-11-12-22.gz"
NAME = "broker-2/controller.log"


def parse(data: bytes, name: str = NAME, broker: int | None = 2):
    events, s = parse_source(data, SourceContext(name, "c", broker))
    assert s.balanced(), (s.lines, s.parsed, s.other, s.unrecognized, s.quarantined)
    assert s.events == len(events)
    return events, s


def key(e):
    """What an event says, without where it was read from (file name, raw text as written)."""
    return (e.event_type, e.ts, e.source_pos, e.source_sub, e.broker_id, e.subject_broker, e.controller_id,
            e.controller_epoch, e.topic, e.partition, e.leader, tuple(e.isr or ()), tuple(e.replicas or ()),
            e.leader_epoch, e.zk_version, e.from_state, e.to_state, e.level, e.logger, e.detail_json())


@pytest.fixture(scope="module")
def text():
    return gzip.decompress(CONTROLLER_LOG.read_bytes())


@pytest.fixture(scope="module")
def clean(text):
    events, s = parse(text)
    # the clean file: every line accounted for, none quarantined, events read (the cut files below are held to it)
    assert not s.errors and s.quarantined == 0 and s.balanced() and s.lines == 542 and events
    return [key(e) for e in events]


def before(keys, line_no):
    return [k for k in keys if k[2] < line_no]


# ---------------------------------------------------------------- compressed and cut files

def test_truncated_gzip_keeps_every_entry_before_the_cut(text, clean):
    gz = gzip.compress(text)
    events, s = parse(gz[: len(gz) * 2 // 3], NAME + ".gz")
    gz_err = next(e for e in s.errors if "gzip stream truncated" in e)
    assert re.search(rf"at compressed byte {len(gz) * 2 // 3}, after \d+ decompressed bytes", gz_err)
    (cut_err,) = [e for e in s.errors if "cut mid-line" in e]
    cut_line = int(re.match(r"line (\d+): ", cut_err).group(1))
    assert cut_line == s.lines and s.quarantined == 1 and 100 < cut_line < 542
    assert [key(e) for e in events] == before(clean, cut_line)


def test_gzip_with_trailing_garbage_reads_the_whole_stream(text, clean):
    gz = gzip.compress(text)
    garbage = b"\x00\x01not gzip at all" * 50
    events, s = parse(gz + garbage, NAME + ".gz")
    assert s.errors == [f"trailing garbage after gzip data at byte {len(gz)} ({len(garbage)} bytes ignored)"]
    assert [key(e) for e in events] == clean


def test_log_cut_mid_line_quarantines_only_the_cut_entry(text, clean):
    lines = text.split(b"\n")
    # cut inside a number: 'broker epochs cache: HashMap(2 -> 242)' read as it stands would say epoch 24
    i = next(n for n, ln in enumerate(lines) if b"HashMap(2 -> 242)" in ln)
    cut = b"\n".join(lines[:i]) + b"\n" + lines[i][: lines[i].index(b"242") + 2]
    events, s = parse(cut)
    assert s.errors == [f"line {i + 1}: the file ends inside this line (cut mid-line); quarantined"]
    assert s.samples[0].source_pos == i + 1 and s.samples[0].category == "quarantined"
    assert [key(e) for e in events] == before(clean, i + 1)
    # ... while a whole last line that only lacks its line break is evidence like any other
    events, s = parse(b"\n".join(lines[: i + 1]))
    assert not s.errors and [key(e) for e in events] == before(clean, i + 2)


def test_crlf_and_mixed_line_endings_read_the_same(text, clean):
    lines = text.split(b"\n")
    for data in (text.replace(b"\n", b"\r\n"),
                 b"".join(ln + (b"\r\n", b"\r", b"\n")[n % 3] for n, ln in enumerate(lines[:-1]))):
        events, s = parse(data)
        assert s.lines == 542 and not s.errors
        assert [key(e) for e in events] == clean


# ---------------------------------------------------------------- bytes that are not text

def test_latin1_hostname_is_read_and_noted_with_its_line(text):
    line = (b"[2021-11-12 22:10:03,600] INFO [Controller id=2] Newly added brokers: 1, deleted brokers: , "
            b"bounced brokers: , all live brokers: 1,2 (kafka.controller.KafkaController)")
    reg = b"[2021-11-12 22:10:03,601] INFO Registered broker 1 at path /brokers/ids/1 with addresses: " \
          b"PLAINTEXT://k\xe4fka-m\xfcnchen:9092, czxid (broker epoch): 300 (kafka.zk.KafkaZkClient)"
    lines = text.split(b"\n")
    events, s = parse(b"\n".join(lines[:30] + [line, reg] + lines[30:]))
    assert s.notes[-1] == "1 line(s) were not valid UTF-8 (first at line 32); read as Latin-1"
    (ev,) = [e for e in events if e.source_pos == 32]
    assert ev.event_type == "broker_registered" and "käfka-münchen" in ev.raw
    assert [e.subject_broker for e in events if e.source_pos == 31] == [1]


def test_binary_junk_lines_are_quarantined_alone(text, clean):
    lines = text.split(b"\n")
    junk = b"\x00\x01\x02\x89PNG\r\x1a\x00\x00\x00\rIHDR\x00\x00\x03\x00"  # CR inside: also a line break
    damaged = lines[:20] + [junk] + lines[20:40] + [lines[40] + b"\x00\x07\x08\x1b\x00\x01\x02\x03\x04\x05\x06"] + lines[41:]
    events, s = parse(b"\n".join(damaged))
    # the PNG bytes hold two CRs: 3 physical lines of junk, then line 41 of the original as line 44
    assert s.lines == 545 and s.quarantined == 4
    assert s.errors == ["line 21: binary data in a text log (4 lines quarantined)"]
    assert [q.source_pos for q in s.samples] == [21, 22, 23, 44]
    shift = {n: n + (3 if n > 20 else 0) for n in range(1, 543)}
    expected = [k[:2] + (shift[k[2]],) + k[3:] for k in clean if k[2] != 41]
    assert [key(e) for e in events] == expected


def test_a_crash_that_zeroed_the_start_of_the_file_is_still_a_log(text, clean):
    # the zeros land inside the first 8 kB, where file kinds are sniffed
    events, s = parse(b"\x00" * 3000 + b"\n" + text)
    assert s.kind == "broker_log" and s.errors == ["line 1: binary data in a text log; quarantined"]
    assert [k[2] for k in map(key, events)] == [k[2] + 1 for k in clean]


def test_ten_megabyte_single_line(text, clean):
    lines = text.split(b"\n")
    huge = b"[2021-11-12 22:10:03,600] INFO " + b"Set(" + b"1, " * 3_500_000 + b") (kafka.controller.KafkaController)"
    t0 = time.monotonic()
    events, s = parse(b"\n".join(lines[:100] + [huge] + lines[100:]))
    assert time.monotonic() - t0 < 10
    assert s.errors == [f"line 101: {len(huge)} bytes long; only the first {MAX_LINE_CHARS} were parsed"]
    shift = {n: n + (1 if n > 100 else 0) for n in range(1, 543)}
    assert [key(e) for e in events if e.source_pos != 101] == [k[:2] + (shift[k[2]],) + k[3:] for k in clean]


def test_a_gzip_bomb_line_is_counted_not_held():
    """200 MB without a line break, 200 kB compressed: linear time, and the line kept is capped
    (a line assembled from its 1 MB pieces by concatenation took minutes and all the memory)."""
    bomb = gzip.compress(b"[2021-11-12 22:10:03,600] INFO " + b"x" * (200 << 20) + b"\n[2021-11-12 22:10:04,000] "
                         b"INFO [Controller id=2] Resigned (kafka.controller.KafkaController)\n", 1)
    t0 = time.monotonic()
    events, s = parse(bomb, NAME + ".gz")
    assert time.monotonic() - t0 < 20
    assert s.lines == 2 and s.errors[0].startswith(f"line 1: {(200 << 20) + 31} bytes long")
    assert [e.event_type for e in events] == ["controller_resigned"]


# ---------------------------------------------------------------- time

def test_lines_out_of_time_order_are_noted_and_keep_their_own_time(text, clean):
    lines = text.split(b"\n")
    swapped = lines[:200] + lines[300:400] + lines[200:300] + lines[400:]
    events, s = parse(b"\n".join(swapped))
    (note,) = [n for n in s.notes if "dated" in n]
    back = (datetime.strptime(lines[399][1:24].decode(), "%Y-%m-%d %H:%M:%S,%f")
            - datetime.strptime(lines[200][1:24].decode(), "%Y-%m-%d %H:%M:%S,%f")).total_seconds()
    assert back > 1 and note.startswith(f"line 301: entry dated {back:.1f} s before an entry above it")
    where = {n + 1: i + 1 for i, n in enumerate(list(range(200)) + list(range(300, 400)) + list(range(200, 300))
                                                 + list(range(400, 542)))}
    assert sorted((k[0], k[1], where[k[2]]) for k in map(key, events)) == sorted((k[0], k[1], k[2]) for k in clean)


def _sample_events(root, files=None, mutate=None):
    events = []
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.suffix in (".md", ".json"):
            continue
        rel = p.relative_to(root.parent).as_posix()
        data = mutate(rel, p.read_bytes()) if mutate else p.read_bytes()
        events += parse(data, rel, broker_hint_from_path(rel))[0]
    for rel, data in files or ():
        events += parse(data, rel, broker_hint_from_path(rel))[0]
    events = [e for e in events if e.event_type != "zk_txn"]
    events.sort(key=lambda e: (e.ts or 0, e.source_file, e.source_pos, e.source_sub))
    return events


_STAMP = re.compile(rb"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),", re.MULTILINE)


def test_a_broker_clock_minutes_ahead_is_measured_and_reported_with_evidence():
    def five_minutes_ahead(rel, data):
        if "kafka-broker-2/" not in rel:
            return data
        plain = gzip.decompress(data) if rel.endswith(".gz") else data
        shifted = _STAMP.sub(lambda m: b"[" + (datetime.strptime(m.group(1).decode(), "%Y-%m-%d %H:%M:%S")
                                               + timedelta(minutes=5)).strftime("%Y-%m-%d %H:%M:%S").encode() + b",",
                             plain)
        return gzip.compress(shifted) if rel.endswith(".gz") else shifted

    root = SAMPLES / "unclean_election"
    assert not [s for s in replay(_sample_events(root))[0].skew if s.significant]
    events = _sample_events(root, mutate=five_minutes_ahead)
    results = replay(events)
    (skew,) = [s for s in results[0].skew if s.significant]
    assert {skew.clock_a, skew.clock_b} == {"broker 2", "broker 3"} and skew.pairs >= 10
    # the same election seen by the controller (3) and by the new leader (2): 300 s apart, +- the real delay
    offset = skew.low_us if skew.clock_a == "broker 2" else -skew.high_us
    assert 299_000_000 < offset <= 300_000_000
    report = build_report(results, {}, events, sources=["x"])
    (finding,) = [f for f in report["findings"] if f["kind"] == "clock_skew"]
    assert "broker 2's clock runs at least 300.0 s ahead of broker 3's" in finding["text"] or \
        "broker 3's clock runs at least 300.0 s behind broker 2's" in finding["text"]
    cited = {(e["source_file"].split("/")[1], e["event"]) for e in finding["evidence"]}
    assert ("kafka-broker-2", "become_leader") in cited and ("kafka-broker-3", "partition_state_change") in cited


def test_duplicated_rotation_counts_once_and_says_which_files():
    root = SAMPLES / "unclean_election"
    base = _sample_events(root)
    copies = [("unclean_election/kafka-broker-3/state-change.log.2021-10-21-15",
               (root / "kafka-broker-3" / "state-change.log").read_bytes()),
              # the same hour once more, rotated under a name that sorts first: that copy is the one kept
              ("unclean_election/kafka-broker-1/server.log.2021-10-21-14-copy",
               (root / "kafka-broker-1" / "server.log.2021-10-21-14.gz").read_bytes())]
    doubled = _sample_events(root, copies)
    assert len(doubled) > len(base)
    raw_agreement = replay(doubled)[0].agreement()
    assert raw_agreement["compared"] > replay(base)[0].agreement()["compared"]  # what duplicates did
    kept, dropped = drop_log_copies(doubled)
    # the same result whatever the order the events came in
    assert [key(e) + (e.source_file,) for e in drop_log_copies(doubled[::-1])[0][::-1]] == \
        [key(e) + (e.source_file,) for e in kept]
    assert len(kept) == len(base)
    a, b = replay(base)[0], replay(kept)[0]
    assert a.agreement()["compared"] == b.agreement()["compared"]
    assert [(x.episode.topic, x.episode.partition, x.episode.start, x.episode.end) for x in a.leaderless] == \
        [(x.episode.topic, x.episode.partition, x.episode.start, x.episode.end) for x in b.leaderless]
    assert [(d["copy"].rsplit("/", 2)[1:], d["kept"].rsplit("/", 1)[1]) for d in dropped] == [
        (["kafka-broker-1", "server.log.2021-10-21-14.gz"], "server.log.2021-10-21-14-copy"),
        (["kafka-broker-3", "state-change.log.2021-10-21-15"], "state-change.log")]
    assert dropped[1]["text"].startswith(f"{dropped[1]['entries']} entries of ")
    first = min(e.source_pos for e in doubled if e.source_file.endswith("state-change.log.2021-10-21-15"))
    assert f"(first at line {first}) repeat unclean_election/kafka-broker-3/state-change.log (line {first})" \
        in dropped[1]["text"]
    report = build_report(replay(kept), {"log_copies": dropped}, kept, sources=["x"])
    found = [f for f in report["findings"] if f["kind"] == "log_copy"]
    assert [f["text"] for f in found] == [d["text"] for d in dropped] and all(len(f["evidence"]) == 2 for f in found)


# ---------------------------------------------------------------- log4j layouts

def _relayout(text: bytes, fmt) -> bytes:
    out = []
    for ln in text.decode().split("\n"):
        m = re.match(r"^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),(\d{3})\] (\w+) (.*) \(([\w.$]+)\)$", ln)
        out.append(fmt(*m.groups()) if m else ln)
    return "\n".join(out).encode()


def _iso_plus_two(d, t, ms):
    local = datetime.fromisoformat(f"{d}T{t}") + timedelta(hours=2)
    return local.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms}+02:00"


@pytest.mark.parametrize("fmt", [
    lambda d, t, ms, lv, msg, lg: f"[{d} {t}.{ms}] {lv} {msg} ({lg})",  # '.' before the millis
    lambda d, t, ms, lv, msg, lg: f"[{_iso_plus_two(d, t, ms)}] {lv} {msg} ({lg})",  # ISO-8601, another zone
    lambda d, t, ms, lv, msg, lg: f"{d} {t},{ms} {lv} [controller-event-thread] {lg} - {msg}",  # logback style
    lambda d, t, ms, lv, msg, lg: __import__("json").dumps(  # log4j2 JsonLayout
        {"timestamp": f"{d}T{t}.{ms}Z", "level": lv, "loggerName": lg, "message": msg, "thread": "main"}),
], ids=["dot-millis", "iso8601-zone", "logback-dash", "json-layout"])
def test_layout_variants_give_the_same_events(text, clean, fmt):
    events, s = parse(_relayout(text, fmt))
    assert not s.errors and s.quarantined == 0
    assert [key(e) for e in events] == clean


# ---------------------------------------------------------------- ZooKeeper files

S3_LOG = ZK_REAL / "s3_unclean_election" / "version-2" / "log.48"
S3_SNAP = ZK_REAL / "s3_unclean_election" / "version-2" / "snapshot.46"


def zk_keys(events):
    return [(e.zxid, e.source_pos, e.source_sub, e.event_type, e.topic, e.partition, e.leader, tuple(e.isr or ()),
             e.session_id, e.subject_broker, e.controller_id) for e in events]


def _entries(data):
    return [t for t in read_txnlog(data).txns]


def test_txn_log_bad_checksum_in_the_middle_costs_that_entry_only():
    data = S3_LOG.read_bytes()
    good, _ = parse(data, "zk/log.48", None)
    victim = _entries(data)[16]
    bad = bytearray(data)
    bad[victim.offset + 12 + 30] ^= 0x20  # inside the txn body: only the Adler-32 notices
    events, s = parse(bytes(bad), "zk/log.48", None)
    assert s.errors[0].startswith(f"byte {victim.offset} (zxid {hex(victim.zxid)}): checksum mismatch")
    assert s.errors[0].endswith("; entry skipped") and s.quarantined == 1 and s.lines == 33
    assert zk_keys(events) == [k for k in zk_keys(good) if k[1] != victim.offset]


def test_txn_log_truncated_last_entry_and_wrong_magic():
    data = S3_LOG.read_bytes()
    good, _ = parse(data, "zk/log.48", None)
    last = _entries(data)[-1]
    events, s = parse(data[: last.offset + 40], "zk/log.48", None)
    assert s.errors == [f"bytes {last.offset}-{last.offset + 40}: entry length {last.length} runs past the end of "
                        "the file; no readable entry after it"]
    assert s.quarantined == 1 and zk_keys(events) == [k for k in zk_keys(good) if k[1] != last.offset]
    events, s = parse(b"ZKXX" + data[4:], "zk/log.48", None)
    assert s.kind == "zk_txnlog" and s.errors == ["wrong magic 0x5a4b5858 at byte 0 (expected ZKLG); reading entries anyway"]
    assert zk_keys(events) == zk_keys(good)


def test_snapshot_cut_short_keeps_the_znodes_before_the_cut():
    data = S3_SNAP.read_bytes()
    whole = read_snapshot(data)
    good, _ = parse(data, "zk/snapshot.46", None)
    cut = whole.nodes[len(whole.nodes) // 2].offset + 7
    events, s = parse(data[:cut], "zk/snapshot.46", None)
    assert s.errors and all(re.search(r"\bbyte \d+|\bat \d+|offset \d+", e) for e in s.errors), s.errors
    assert s.quarantined >= 1
    assert zk_keys(events) == [k for k in zk_keys(good) if k[1] < cut]
    assert len(events) > 5


def _with_bad_json(data: bytes, path_part: bytes):
    """A state znode write (plain or in a multi) whose JSON does not parse, checksum recomputed: only the
    payload is wrong."""
    def body_of(t):
        return data[t.offset + 12: t.offset + 12 + t.length]

    t = next(t for t in _entries(data) if path_part in body_of(t) and b'{"controller_epoch"' in body_of(t))
    body = bytearray(body_of(t))
    body[body.index(b'{"controller_epoch"')] = ord("#")
    out = bytearray(data)
    out[t.offset + 12: t.offset + 12 + t.length] = body
    struct.pack_into(">q", out, t.offset, zlib.adler32(bytes(body)))
    return bytes(out), t


def test_znode_json_that_does_not_parse_is_quarantined_with_its_position():
    data = S3_LOG.read_bytes()
    good, _ = parse(data, "zk/log.48", None)
    bad, t = _with_bad_json(data, b"/ledger/partitions/1/state")
    events, s = parse(bad, "zk/log.48", None)
    assert s.quarantined == 1 and len(s.errors) == 1
    assert "/brokers/topics/ledger/partitions/1/state" in s.errors[0] and hex(t.zxid) in s.errors[0], s.errors
    assert s.samples[0].source_pos == t.offset
    # the raw txn stays for forensics; its Kafka meaning is not guessed
    assert [e.event_type for e in events if e.source_pos == t.offset] == ["zk_txn"]
    assert zk_keys(e for e in events if e.source_pos != t.offset) == \
        zk_keys(e for e in good if e.source_pos != t.offset)


# ---------------------------------------------------------------- folders

def _ingest_result(paths_and_data):
    """What run_ingest gives the driver, without Spark: one parse per file."""
    summaries = [parse_source(data, SourceContext(p, "c"))[1] for p, data in paths_and_data]
    inputs = Inputs()
    return IngestResult(summaries, None, build_summary_json(summaries, inputs), [])


def test_an_empty_folder_is_a_one_line_user_error(tmp_path):
    (tmp_path / "in").mkdir()
    inputs = collect_inputs([str(tmp_path / "in")], tmp_path / "work")
    assert inputs.files == [] and inputs.problems == []
    with pytest.raises(UserError, match=r"^no input files found$"):
        require_evidence(IngestResult([], None, {}, []))


def test_a_folder_of_unrelated_files_is_refused_naming_why(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    (d / "shopping.txt").write_text("milk\neggs\n")
    (d / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + os.urandom(4000))
    (d / "notes.md").write_text("# what happened\n")
    (d / "empty.log").write_bytes(b"")
    inputs = collect_inputs([str(d)], tmp_path / "work")
    res = _ingest_result([(f.display, open(f.read_path, "rb").read()) for f in inputs.files])
    assert [(s.path.rsplit("/", 1)[1], s.kind) for s in res.summaries] == [
        ("empty.log", "empty"), ("notes.md", "doc"), ("photo.jpg", "binary"), ("shopping.txt", "broker_log")]
    assert res.summaries[3].unrecognized == 2 and res.summaries[3].balanced()
    with pytest.raises(UserError) as e:
        require_evidence(res)
    msg = str(e.value)
    assert msg.startswith("no Kafka or ZooKeeper evidence found in 4 file(s)")
    assert "no line has a log header" in msg and "binary file of unknown format" in msg


def test_symlink_loops_are_reported_and_the_rest_is_read(tmp_path):
    d = tmp_path / "in" / "broker-1"
    d.mkdir(parents=True)
    (d / "server.log").write_bytes(b"[2021-01-01 00:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n")
    (d / "again").symlink_to("..")  # a folder loop
    (d / "self.log").symlink_to("self.log")  # a file loop
    inputs = collect_inputs([str(tmp_path / "in")], tmp_path / "work")
    assert [f.display.rsplit("/", 2)[-2:] for f in inputs.files] == [["broker-1", "server.log"]]
    assert any("symlink loop, not followed again" in p for p in inputs.problems), inputs.problems
    assert any(p.endswith("self.log: cannot read (Too many levels of symbolic links)") for p in inputs.problems)
