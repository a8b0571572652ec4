"""A broker log read by parts gives what the same bytes read whole give.

Real Kafka lines (``../shared/real_logs``, read here, never copied into the repo): a server.log
with a stack trace, one with ``HashMap(...)`` partition assignments and a ``KafkaConfig values:``
dump, a controller.log with elections, joined; part of it with CRLF line ends, one line with a Latin-1 byte, no newline after the
last line. The same bytes are then read (a) whole by ``parse_broker_log``, (b) by byte ranges,
tiny ones and ones cut at the awkward places (inside the stack trace, inside the HashMap
dump, inside the config dump, right after a CRLF, between CR and LF, on the Latin-1 byte), (c) as
several files cut between entries near those places, as rotation cuts, and (d) as one gzip
stream. (a), (b) and (d) agree on every event field, every quarantined line and the whole file
summary; (c) on the events (but for their file and line) and the accounting.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.broker_logs.broker_log import parse_broker_log
from parsers.broker_logs.broker_log_ranges import OWN_ALL, finish_file_events, merge_parts, read_part
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems, decode_line, decompressed_chunks, iter_raw_lines
from parsers.common.textranges import gunzip_stream, line_blocks, plan_ranges
from tests.conftest import REAL_LOGS

STACK = "NikhilDighe9975__kafka_setup/logs/server.log.2024-07-29-12.gz"
HASHMAP = "NikhilDighe9975__kafka_setup/logs/server.log.2024-07-18-19.gz"
# 0.10: elections whose epoch comes on a later line (finished over the file, templates.finish)
CONTROLLER = "Aminoid__basic-sentiment-analysis/kafka_2.11-0.10.0.0/logs/controller.log.2017-01-19-10.gz"
PATH = "b/server.log"


def _content() -> tuple[bytes, dict[str, int]]:
    parts = [gzip.decompress((REAL_LOGS / name).read_bytes()) for name in (HASHMAP, CONTROLLER, STACK)]
    lines = b"".join(p if p.endswith(b"\n") else p + b"\n" for p in parts).split(b"\n")[:-1]
    # CRLF from a Windows box for a stretch of lines, one Latin-1 host name, a last line without newline
    crlf = range(len(lines) // 3, len(lines) // 3 + 200)
    latin = next(i for i in range(len(lines) // 2, len(lines)) if b"] INFO " in lines[i])
    lines[latin] = lines[latin].replace(b"] INFO", b"] INFO h\xf4te", 1)
    out = bytearray()
    for i, line in enumerate(lines):
        out += line + (b"\r\n" if i in crlf else b"\n")
    data = bytes(out[:-1])
    text = data.decode("latin-1")
    at = {
        "stack": text.index("\n\tat ", text.index("\n\tat ") + 1) + 4,  # inside the second frame line
        "hashmap": text.index("HashMap(") + 11,
        "config": text.index("\n", text.index("KafkaConfig values:") + 400) + 1,
        "after_crlf": text.index("\r\n", text.index("\r\n") + 1) + 2,
        "cr_lf": text.index("\r\n", text.index("\r\n") + 5000) + 1,
        "latin1": data.index(b"\xf4"),
    }
    assert text.count("\n\tat ") > 5 and "HashMap(" in text and data.count(b"\r\n") == 200
    return data, at


def _whole(data: bytes):
    s = FileSummary(path=PATH, kind="broker_log", cluster="c", bytes=len(data))
    events = parse_broker_log(data, SourceContext(PATH, "c", None), s)
    return events, s


def _by_parts(path: Path, plan: list[tuple[int, int, int, int]], gz: bool = False):
    size = path.stat().st_size
    events, parts = [], []
    for start, _end, first_no, owned in plan:
        for kind, got in read_part(str(path), size, SourceContext(PATH, "c", None), start, first_no, owned, gz):
            if kind == "events":
                events.extend(got)
            else:
                parts.append(got)
    s = merge_parts(PATH, None, "c", size, parts)
    events.sort(key=lambda e: (e.source_pos, e.source_sub))
    events = list(finish_file_events(events, s.broker_id))
    for ev in events:
        s.event_counts[ev.event_type] += 1
    s.events = len(events)
    s.samples = [q for p in parts for q in p["samples"]]
    return events, s


def _rows(events) -> list[str]:
    return sorted(json.dumps(e.as_row(), sort_keys=True) for e in events)


def _doc(s: FileSummary) -> dict:
    doc = s.to_json()
    doc["samples"] = sorted((q.source_pos, q.category, q.reason, q.raw) for q in s.samples)
    return doc


@pytest.fixture(scope="module")
def content(tmp_path_factory):
    data, at = _content()
    path = tmp_path_factory.mktemp("big") / "server.log"
    path.write_bytes(data)
    events, s = _whole(data)
    assert s.balanced() and s.events > 20 and s.event_counts["controller_elected"] and s.other > 1000
    assert any("not valid UTF-8" in n for n in s.notes)  # the Latin-1 line went through the slow decode
    return data, at, path, events, s


@pytest.mark.parametrize("range_bytes", [997, 4096, 65536])
def test_tiny_byte_ranges_read_what_the_whole_file_reads(content, range_bytes):
    data, _at, path, events, s = content
    with open(path, "rb") as fh:
        plan = plan_ranges(fh, len(data), range_bytes)
    assert len(plan) > len(data) // range_bytes // 2  # many parts, none lost to long lines
    assert sum(owned for *_x, owned in plan) == s.lines
    got_events, got = _by_parts(path, plan)
    assert _doc(got) == _doc(s)
    assert _rows(got_events) == _rows(events)


def test_events_handed_on_in_small_batches_are_all_there(content, monkeypatch):
    """A range hands its events on in batches (a big range has very many): none is lost between them."""
    from parsers.broker_logs import broker_log
    from parsers.common import textranges

    monkeypatch.setattr(broker_log, "EVENT_BATCH", 3)
    monkeypatch.setattr(textranges, "READ_BLOCK", 5000)  # many blocks: a hand-on after each
    data, _at, path, events, s = content
    with open(path, "rb") as fh:
        plan = plan_ranges(fh, len(data), 1 << 20)
    assert len(plan) == 1
    got_events, got = _by_parts(path, plan)
    assert _doc(got) == _doc(s)
    assert _rows(got_events) == _rows(events)


def test_ranges_cut_at_the_awkward_places_read_what_the_whole_file_reads(content):
    data, at, path, events, s = content
    assert data[at["cr_lf"] - 1:at["cr_lf"] + 1] == b"\r\n" and data[at["after_crlf"] - 2:at["after_crlf"]] == b"\r\n"
    with open(path, "rb") as fh:
        plan = plan_ranges(fh, len(data), 0, cuts=sorted(at.values()))
    assert len(plan) == len(at) + 1
    got_events, got = _by_parts(path, plan)
    assert _doc(got) == _doc(s)
    assert _rows(got_events) == _rows(events)
    # the line numbers are the file's: the range after the stack-trace cut starts after the trace's entry
    lines_before = data[:at["stack"]].replace(b"\r\n", b"\n").count(b"\n")
    assert plan[[p for p, *_ in plan].index(min(p for p, *_ in plan if p >= at["stack"]))][2] == lines_before + 2


def test_gzip_stream_reads_what_the_whole_file_reads(content, tmp_path):
    data, _at, _path, events, s = content
    gz = tmp_path / "server.log.gz"
    gz.write_bytes(gzip.compress(data[: len(data) // 2]) + gzip.compress(data[len(data) // 2:]))  # two members
    whole_events, whole = _whole(gz.read_bytes())
    assert whole.lines == s.lines
    got_events, got = _by_parts(gz, [(0, gz.stat().st_size, 1, OWN_ALL)], gz=True)
    assert _doc(got) == _doc(whole)
    assert _rows(got_events) == _rows(whole_events) == _rows(events)


@pytest.mark.parametrize("damage", ["cut", "garbage", "zeros"])
def test_damaged_gzip_stream_says_what_the_whole_file_says(content, tmp_path, damage):
    data = content[0]
    packed = gzip.compress(data)
    bad = {"cut": packed[: len(packed) * 2 // 3], "garbage": packed + b"not gzip at all",
           "zeros": packed + b"\0" * 300}[damage]
    gz = tmp_path / "server.log.gz"
    gz.write_bytes(bad)
    want = ReadProblems()
    payload = b"".join(decompressed_chunks(bad, want))
    got = ReadProblems()
    with open(gz, "rb") as fh:
        streamed = b"".join(gunzip_stream(fh, len(bad), got, block=4096))
    assert streamed == payload and got.errors == want.errors
    assert bool(got.errors) == (damage != "zeros")
    whole_events, whole = _whole(bad)
    got_events, parts = _by_parts(gz, [(0, len(bad), 1, OWN_ALL)], gz=True)
    assert _doc(parts) == _doc(whole)
    assert _rows(got_events) == _rows(whole_events)


def _strip_place(events) -> list[str]:
    out = []
    for e in events:
        row = e.as_row()
        for k in ("source_file", "source_pos"):
            row.pop(k)
        if row.get("detail") and "epoch_from_line" in row["detail"]:
            row["detail"] = None
        out.append(json.dumps(row, sort_keys=True))
    return sorted(out)


def test_the_same_content_in_several_files_gives_the_same_events_and_accounting(content):
    """As rotation cuts: between entries, at the first header after each awkward place."""
    data, at, _path, events, s = content
    import re

    header = re.compile(rb"(?:\r\n|\n)(?=\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] )")
    cuts = sorted({header.search(data, x).end() for x in at.values()})
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    assert len(pieces) == len(set(cuts)) + 1 and b"".join(pieces) == data
    evs, totals, counts = [], {}, {}
    for i, piece in enumerate(pieces):
        ps = FileSummary(path=f"b/server.log.{i}", kind="broker_log", cluster="c")
        evs.extend(parse_broker_log(piece, SourceContext(f"b/server.log.{i}", "c", s.broker_id), ps))
        for k in ("lines", "parsed", "other", "unrecognized", "quarantined", "events"):
            totals[k] = totals.get(k, 0) + getattr(ps, k)
        for k, v in ps.event_counts.items():
            counts[k] = counts.get(k, 0) + v
    assert totals == {k: getattr(s, k) for k in totals}
    assert counts == dict(s.event_counts)
    assert _strip_place(evs) == _strip_place(events)


_BYTES = st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", b"\xe9", "\u00e9".encode(), b"x" * 9]),
                  max_size=60).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(data=_BYTES, cuts=st.lists(st.integers(0, 200), max_size=8))
def test_line_blocks_over_any_chunking_are_the_streaming_readers_lines(data, cuts):
    """CR at a chunk's end, CRLF split across chunks, lines longer than max_line across chunks,
    Latin-1 bytes, no final newline: the lines and problems of textio's reader, whatever the chunks."""
    want = ReadProblems()
    ref = [decode_line(r, i, want) for i, r in enumerate(iter_raw_lines(data, want, max_line=8), 1)]
    bounds = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    got = ReadProblems()
    blocks = list(line_blocks([data[a:b] for a, b in zip(bounds, bounds[1:])], got, 8))
    assert [line for _, block in blocks for line in block] == ref
    assert all(first == 1 + sum(len(b) for _, b in blocks[:i]) for i, (first, _) in enumerate(blocks))
    assert (got.long_lines, got.non_utf8_lines, got.first_non_utf8_line, got.unterminated_line) == \
        (want.long_lines, want.non_utf8_lines, want.first_non_utf8_line, want.unterminated_line)


@settings(max_examples=200, deadline=None)
@given(data=_BYTES, range_bytes=st.integers(1, 30), block=st.integers(1, 7))
def test_ranges_own_every_line_once_with_their_numbers(data, range_bytes, block):
    """Whatever the range size and read size: each line belongs to one range, numbered as read whole."""
    import io

    from parsers.common import textranges

    ref = list(iter_raw_lines(data, ReadProblems()))
    old = textranges.READ_BLOCK, textranges._SMALL
    textranges.READ_BLOCK = textranges._SMALL = block
    try:
        plan = plan_ranges(io.BytesIO(data), len(data), range_bytes)
    finally:
        textranges.READ_BLOCK, textranges._SMALL = old
    assert [first for _, _, first, _ in plan] == [1 + sum(n for *_x, n in plan[:i]) for i in range(len(plan))]
    assert sum(n for *_x, n in plan) == len(ref)
    for start, end, first, n in plan:
        got = [line for _, block_ in line_blocks([data[start:end]], ReadProblems(), 1 << 20, first) for line in block_]
        assert len(got) == n
        assert got == \
            [decode_line(r, i, ReadProblems()) for i, r in enumerate(ref[first - 1:first - 1 + n], first)]


@pytest.mark.spark
def test_ingest_of_a_big_file_by_parts_writes_what_the_whole_file_gives(spark, content, tmp_path, monkeypatch):
    """Through Spark: the same file (with a gzip copy beside it) read whole, then by ~60 KB ranges and as a
    gzip stream, gives the same ingest_summary.json, the same events and the same quarantined lines."""
    import pyarrow.parquet as pq

    from forensics import bigfiles
    from forensics.ingest import release, run_ingest, write_outputs
    from forensics.sources import collect_inputs

    data = content[0]
    src = tmp_path / "in" / "broker-1"
    src.mkdir(parents=True)
    (src / "server.log").write_bytes(data)
    (src / "server.log.1.gz").write_bytes(gzip.compress(data))
    outs = []
    for name, range_bytes, gz_bytes in (("whole", 1 << 40, 1 << 40), ("parts", 60_000, 1000)):
        monkeypatch.setattr(bigfiles, "RANGE_BYTES", range_bytes)
        monkeypatch.setattr(bigfiles, "GZIP_STREAM_BYTES", gz_bytes)
        inputs = collect_inputs([str(tmp_path / "in")], tmp_path / f"work-{name}")
        big = bigfiles.plan_big_files(inputs.files)[1]
        assert len(big.rows) == (0 if name == "whole" else len(data) // 60_000 + 2)
        result = run_ingest(spark, inputs, cluster="c")
        write_outputs(result, tmp_path / name)
        release(result)
        outs.append(tmp_path / name)
    whole, parts = outs
    assert (whole / "ingest_summary.json").read_text() == (parts / "ingest_summary.json").read_text()
    for table in ("events", "quarantine"):
        a, b = pq.read_table(whole / table).to_pylist(), pq.read_table(parts / table).to_pylist()
        assert a == b and (a or table == "quarantine")
    summary = json.loads((whole / "ingest_summary.json").read_text())
    assert summary["totals"]["events"] > 40 and summary["totals"]["files"] == 2


# 1.0: elections whose epoch line follows ("Epoch incremented to"), three of them (finish folds the epoch in)
FOLDS = "chase-lewis__JIE7351/logs/controller.log.2017-11-29-12.gz"


def test_parts_finished_alone_and_settled_give_the_whole_files_events(content, tmp_path):
    """Each part of a file finished on its own (templates.finish.PartEnds), what they leave open settled in file
    order (settle_parts) and the file's broker given later (attribute): the events finish_file_events gives the
    whole file. Cut between every election and its epoch line, and before the epoch line no election precedes."""
    import copy

    from parsers.broker_logs.broker_log_ranges import PartFinisher, attribute
    from parsers.broker_logs.templates.finish import PartEnds, settle_parts

    data = gzip.decompress((REAL_LOGS / FOLDS).read_bytes()) + content[0]
    path = tmp_path / "server.log"
    path.write_bytes(data)
    whole, s = _whole(data)
    unfinished = [ev for kind, got in read_part(str(path), len(data), SourceContext(PATH, "c", None), 0, 1, OWN_ALL,
                                                False) if kind == "events" for ev in got]
    elected = [i + 1 for i, ev in enumerate(unfinished)
               if ev.event_type == "controller_elected" and ev.controller_epoch is None]
    epoch_lines = [i for i, ev in enumerate(unfinished) if ev.detail and ev.detail.get("kind") == "epoch"]
    assert len(elected) >= 3 and len(epoch_lines) >= 4 and s.broker_id is not None
    for cuts in (sorted({*elected, *epoch_lines}), elected, [len(unfinished) // 2], []):
        bounds = [0, *cuts, len(unfinished)]
        events = copy.deepcopy(unfinished)
        got, ends_list = [], []
        for k, (a, b) in enumerate(zip(bounds, bounds[1:])):
            ends = PartEnds(first=k == 0)
            f = PartFinisher(ends)
            for evs, attrs in (f.feed(events[a:b]), f.close()):
                got.extend(zip(evs, attrs))
            ends_list.append(ends.to_json())
        changes = {(pos, sub): vals for pos, sub, vals in settle_parts(ends_list)}
        if cuts == elected:
            assert sum("controller_epoch" in v for v in changes.values()) >= 3  # folds across parts
        for ev, attr in got:
            for name, value in changes.pop((ev.source_pos, ev.source_sub), {}).items():
                setattr(ev, name, value)
            attribute(ev, attr, s.broker_id)
        assert not changes
        assert _rows(ev for ev, _ in got) == _rows(whole)
