"""The readers of growing files (``watch``) give the whole-file parser's events, whatever the sizes of the pieces
the file is read in: real broker logs (a sample's rotated parts, a real cluster's), a ZooKeeper txn log written in
place, a KRaft metadata segment, a container stream. Cut points are drawn at random (seeded), as a tailer meets
them."""
from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from conftest import REAL_LOGS, SAMPLES
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source


def _rows(events) -> list[str]:
    return sorted(repr(e.as_row()) for e in events)


def _bytes(p: Path) -> bytes:
    data = p.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _one_writer(p: Path) -> bool:
    """A file one broker wrote (several brokers writing one file is the case the growing reader cannot settle as
    the whole file does: until a second broker names itself, the unnamed lines are taken as the first's)."""
    _, summary = parse_source(_bytes(p), SourceContext(p.name, "c"))
    return len(summary.writer_ids) == 1


def _broker_log_files():
    files = sorted(p for p in (SAMPLES / "controller_failover").rglob("*.log*"))
    # a real single-broker cluster (Kafka 1.0.0): its server, controller and state-change logs
    logs = REAL_LOGS / "zhanglong318__kafka" / "kafka_2.11-1.0.0" / "logs"
    files += [p for kind in ("server", "controller", "state-change") for p in sorted(logs.glob(f"{kind}.log.*"))[:3]
              if _one_writer(p)]
    return files


@pytest.mark.parametrize("path", _broker_log_files(), ids=lambda p: "/".join(p.parts[-2:]))
def test_growing_broker_log_gives_the_whole_files_events(path):
    from parsers.broker_logs.growing import GrowingLog, decode_lines

    data = _bytes(path)
    ctx = SourceContext(path.name, "c", 1 if "broker" in str(path.parent) else None)
    whole, summary = parse_source(data, ctx)
    lines = decode_lines(data if data.endswith(b"\n") else data + b"\n")
    rnd = random.Random(len(lines))
    g, got, i = GrowingLog(ctx), [], 0
    while i < len(lines):
        k = rnd.randint(1, 60)
        got += g.feed(lines[i:i + k])[0]
        i += k
    got += g.feed([], quiet=True)[0]
    assert _rows(got) == _rows(whole)
    assert g.summary.lines == summary.lines and g.summary.parsed == summary.parsed


def _txn_logs():
    return sorted(SAMPLES.glob("*/zookeeper/version-2/log.*")) + sorted((REAL_LOGS.parent / "zk_real").glob(
        "s[1-3]*/version-2/log.*"))


@pytest.mark.parametrize("path", _txn_logs(), ids=lambda p: "/".join(p.parts[-4:]))
def test_txn_log_written_in_place_gives_the_whole_files_events(path):
    """ZooKeeper preallocates the file and writes entries over its zeros: the reader is handed the bytes up to the
    last non-zero byte, as the tailer finds them, in pieces cut anywhere (inside entries too)."""
    from parsers.zookeeper.growing import GrowingTxnLog

    data = path.read_bytes()
    ctx = SourceContext(path.name, "c")
    whole, _ = parse_source(data, ctx)
    end = len(data.rstrip(b"\0"))
    rnd = random.Random(end)
    g, got, i = GrowingTxnLog(ctx), [], 0
    while i < end:
        j = min(end, i + rnd.randint(1, 4000))
        evs, problems = g.feed(data[i:j])
        assert problems == []
        got += evs
        i = j
    spans = [e for e in got if e.event_type == "zk_txnlog_span"]
    got = [e for e in got if e.event_type != "zk_txnlog_span"] + spans[-1:]  # the last statement of the span holds
    assert _rows(got) == _rows(whole)


def test_metadata_segment_appended_batch_by_batch_gives_the_whole_files_events():
    from parsers.kraft.growing import GrowingMetadataLog

    path = next((SAMPLES / "kraft_broker_fenced").rglob("__cluster_metadata-0/*.log"))
    data = path.read_bytes()
    ctx = SourceContext("kafka-controller-3000/__cluster_metadata-0/" + path.name, "c")
    whole, _ = parse_source(data, ctx)
    rnd = random.Random(7)
    g, got, i = GrowingMetadataLog(ctx), [], 0
    while i < len(data):
        j = min(len(data), i + rnd.randint(1, 6000))
        evs, problems = g.feed(data[i:j])
        assert problems == []
        got += evs
        i = j
    assert len(whole) > 1000 and _rows(got) == _rows(whole)


def test_container_stream_appended_gives_the_whole_streams_incident(tmp_path):
    """``docker compose logs -f > f`` of the rf1 sample (samplegen.containers writes it as compose does): read as
    it grows, each source's broker is found from its own lines and the events are the whole stream's."""
    from parsers.container_streams.growing import GrowingStream
    from samplegen import containers as C

    path = C.write_compose(SAMPLES / "rf1_broker_kill", tmp_path)
    data = path.read_bytes()
    ctx = SourceContext(path.name, "c")
    whole, _ = parse_source(data, ctx)
    lines = data.splitlines(keepends=True)
    rnd = random.Random(3)
    g, got, i = GrowingStream(ctx), [], 0
    while i < len(lines):
        k = rnd.randint(50, 400)
        got += g.feed(b"".join(lines[i:i + k]))[0]
        i += k
    got += g.feed(b"", quiet=True)[0]
    assert len(whole) > 1000
    assert _rows(got) == _rows(whole)
