"""A container stream read by ranges (and a gzip one as a stream, in parts of a few lines) gives what the
whole read gives: every event field, the file summary with its per-source streams, the quarantined lines.

The bundled rf1_broker_kill incident (real-format Kafka lines: stack traces, ``HashMap(...)`` dumps, the
config dump that names each broker) is written by samplegen.containers in each collector's format, then
damaged as files are found: a stretch of CRLF line ends, a Latin-1 byte, a record that is not the
format's, and a last line cut short. The truth is ``parse_container_stream`` over the same bytes
(tests/test_container_streams.py holds that against the sample's hand-derived expected.json). Cuts are
placed inside a stack trace, inside a ``HashMap`` dump, inside a CRI ``P`` partial run and a json-file
16 KiB split (the survey must move those), right after a CRLF, between its CR and LF, on the Latin-1
byte; and every 6000 bytes. Sources' buffers are cut every few lines (``chunk_lines``) so that a
source's parts inside one range are merged too.
"""
from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import re
from pathlib import Path

import pytest
from conftest import SAMPLES

from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.container_streams.demux import parse_container_stream
from parsers.container_streams.detect import GRAMMARS
from parsers.container_streams.plan import plan_stream
from parsers.container_streams.ranges import read_range
from parsers.container_streams.stream_merge import (
    add_event_counts,
    finish_source_events,
    merge_stream,
)
from samplegen import containers as C

SAMPLE = SAMPLES / "rf1_broker_kill"


def _kafka2(paths: list[Path]) -> Path:
    """The file of the broker that logs the most (the one with the stack traces)."""
    return max(paths, key=lambda p: p.stat().st_size)


def _forward_loki(out: Path, jsonl: bool) -> Path:
    """logcli with --forward: the newest-first output turned around."""
    path = C.write_loki(SAMPLE, out, jsonl=jsonl)
    lines = path.read_text().split("\n")[:-1]
    path.write_text("\n".join(reversed(lines)) + "\n")
    return path


WRITERS = {
    "compose": lambda o: C.write_compose(SAMPLE, o),
    "compose_colour": lambda o: C.write_compose(SAMPLE, o, colour=True),
    "docker_json": lambda o: _kafka2(C.write_docker_json(SAMPLE, o, split_at=150)),
    "cri": lambda o: _kafka2(C.write_cri(SAMPLE, o, split_at=150)),
    "kubectl_prefix": lambda o: C.write_kubectl(SAMPLE, o, prefix=True, timestamps=True)[0],
    "kubectl_timestamps": lambda o: _kafka2(C.write_kubectl(SAMPLE, o, prefix=False, timestamps=True)),
    "loki_jsonl_forward": lambda o: _forward_loki(o, jsonl=True),
    "loki_default_forward": lambda o: _forward_loki(o, jsonl=False),
}
# A record no collector writes, put in the middle of the file.
_ALIEN = b"this line was typed into the file by hand"


def _damaged(data: bytes) -> bytes:
    lines = data.split(b"\n")[:-1]
    n = len(lines)
    crlf = range(n // 3, n // 3 + 200)
    latin = next(i for i in range(n // 2, n) if b"INFO" in lines[i])
    lines[latin] = lines[latin].replace(b"INFO", b"INFO h\xf4te", 1)
    lines.insert(n // 4, _ALIEN)
    out = bytearray()
    for i, line in enumerate(lines):
        out += line + (b"\r\n" if i in crlf else b"\n")
    return bytes(out[:-25])  # the last line cut short


def _awkward(data: bytes) -> dict[str, int]:
    text = data.decode("latin-1")
    frames = [m.start() for m in re.finditer(r"\tat |\\tat ", text)]  # a tab, or JSON's \\t
    at = {
        "stack": frames[len(frames) // 2] + 4,
        "hashmap": text.index("HashMap(", len(text) // 3) + 11,
        "after_crlf": text.index("\r\n", text.index("\r\n") + 1) + 2,
        "cr_lf": text.index("\r\n", text.index("\r\n") + 3000) + 1,
        "latin1": data.index(b"\xf4"),
    }
    partial = re.search(r" stdout P [^\n]*\n[^\n]*stdout P ", text[len(text) // 2:]) or \
        re.search(r'"log":"[^\n]*[^n]","stream[^\n]*\n', text[len(text) // 2:])
    if partial:  # the second line of a record split in several
        at["split"] = len(text) // 2 + text.index("\n", len(text) // 2 + partial.start()) + 6
    return at


@pytest.fixture(scope="module")
def streams(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("streams")
    out = {}
    for name, write in WRITERS.items():
        path = write(root / name)
        damaged = path.with_name(path.name)  # the file's own name: it names the source of one-container files
        damaged.write_bytes(_damaged(path.read_bytes()))
        out[name] = damaged
    return out


def _ctx(path: Path) -> SourceContext:
    rel = "/".join(path.parts[-6:])
    return SourceContext(rel, "c", None, "UTC")


@functools.cache
def _whole(path: Path):
    data = path.read_bytes()
    ctx = _ctx(path)
    s = FileSummary(path=ctx.path, kind="container_stream", broker_id=None, cluster="c", bytes=path.stat().st_size)
    events = parse_container_stream(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data, ctx, s)
    return events, s


def _by_ranges(path: Path, range_bytes: int = 1 << 40, cuts=None, chunk_lines: int = 7):
    size = path.stat().st_size
    gz = path.read_bytes()[:2] == b"\x1f\x8b"
    ctx = _ctx(path)
    survey, plan = plan_stream(str(path), ctx.path, size, gz, range_bytes, cuts)
    assert survey["ranged"], survey
    ranges, parts, events = [], {}, {}
    for start, _end, first_no, owned in plan:
        for kind, name, got in read_range(str(path), size, ctx, survey, start, first_no, owned, gz, chunk_lines):
            if kind == "events":
                events.setdefault(name, []).extend(got)
            elif kind == "part":
                parts.setdefault(name, []).append(got)
            else:
                ranges.append(got)
    s = merge_stream(ctx, size, survey, ranges, parts)
    brokers = {x["name"]: x["broker_id"] for x in s.streams}
    out = [ev for name in sorted(events) for ev in finish_source_events(events[name], brokers[name])]
    add_event_counts(s, out)
    return out, s, plan, survey


def _same(whole, ranged):
    (we, ws), (re_, rs) = whole, ranged
    key = lambda d: (d["source_pos"], d["source_sub"], d["event_type"])
    assert sorted(map(dataclasses.asdict, we), key=key) == sorted(map(dataclasses.asdict, re_), key=key)
    assert ws.to_json() == rs.to_json()
    assert sorted(map(dataclasses.astuple, ws.samples)) == sorted(map(dataclasses.astuple, rs.samples))


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_cut_at_awkward_places(streams, fmt):
    path = streams[fmt]
    data = path.read_bytes()
    at = _awkward(data)
    whole = _whole(path)
    events, s, plan, survey = _by_ranges(path, cuts=sorted(at.values()))
    assert len(plan) >= len(at) - 1
    if fmt in ("cri", "docker_json"):
        assert "split" in at and survey["moved"], "a cut inside a split record is moved past its last part"
    # the damage is there to be read alike: a quarantined record or collector line, a cut last line
    assert any("cut mid-line" in e or "ends before the last part" in e or "JSON record" in e for e in s.errors)
    assert s.lines == s.parsed + s.other + s.unrecognized + s.quarantined and s.events > 1000
    _same(whole, (events, s))


# their grammars: above; kubectl's and Loki's ranges (cut at awkward places above) in the opt-in tier
@pytest.mark.parametrize("fmt", [f if f in ("compose", "cri", "docker_json") else
                                 pytest.param(f, marks=pytest.mark.slow)
                                 for f in sorted(set(WRITERS) - {"compose_colour", "loki_default_forward"})])
def test_small_ranges(streams, fmt):
    path = streams[fmt]
    events, s, plan, _ = _by_ranges(path, range_bytes=6000)
    assert len(plan) > 50
    _same(_whole(path), (events, s))


@pytest.mark.parametrize("fmt", ["compose", "cri"])
def test_gzip_stream_in_bounded_parts(streams, fmt, tmp_path):
    src = streams[fmt]
    path = tmp_path / (src.name + ".gz")
    path.write_bytes(gzip.compress(src.read_bytes()))
    events, s, plan, _ = _by_ranges(path, chunk_lines=5)
    assert len(plan) == 1
    _same(_whole(path), (events, s))


def test_identity_named_in_another_range(streams):
    """A broker names itself at start-up ('[KafkaServer id=N]', 'broker.id = N' in the config dump); ranges
    that never see those lines still give its events the broker id. Truth: the sample's folders
    (kafka-broker-N) are broker N's files."""
    path = streams["compose"]
    events, s, plan, _ = _by_ranges(path, range_bytes=10_000)
    ids = {x["name"]: x["broker_id"] for x in s.streams if x["kafka"]}
    assert ids == {"kafka-1": 1, "kafka-2": 2, "kafka-3": 3}
    by_line = {ev.source_pos: ev for ev in events}
    text = path.read_text(errors="replace").split("\n")
    later = [(n, by_line[n]) for n in sorted(by_line) if n > plan[len(plan) // 2][2]]
    assert len(later) > 100
    for n, ev in later:
        name = text[n - 1].split("|", 1)[0].strip()
        if ev.source_kind == "broker_log":
            assert ev.broker_id == ids[name], (n, text[n - 1])


@pytest.mark.spark
@pytest.mark.slow  # ranged ingest through Spark: tests/test_bigfiles.py (broker logs); the ranges: the tests above
def test_ingest_by_parts_writes_what_the_whole_stream_gives(spark, streams, tmp_path, monkeypatch):
    """Through Spark: a compose stream, a CRI pod file and a gzip json-file read whole, then by ~200 KB
    ranges and as a gzip stream: the same ingest_summary.json, events and quarantined lines. (Cuts at every kind of
    awkward place, with ranges down to a few bytes: the tests above, without Spark.)"""
    import shutil

    import pyarrow.parquet as pq

    from forensics import bigfiles
    from forensics.ingest import release, run_ingest, write_outputs
    from forensics.sources import collect_inputs

    src = tmp_path / "in"
    (src / "compose").mkdir(parents=True)
    shutil.copy(streams["compose_colour"], src / "compose" / "incident.txt")
    pod = src / "var/log/pods/kafka_kafka-2_eb304ccb-3696-9bf4-b0a1-e34b0b3ccbeb/kafka"
    pod.mkdir(parents=True)
    shutil.copy(streams["cri"], pod / "0.log")
    docker = src / "containers" / ("ab" * 32)
    docker.mkdir(parents=True)
    (docker / f"{'ab' * 32}-json.log.1.gz").write_bytes(gzip.compress(streams["docker_json"].read_bytes()))
    outs = []
    for name, range_bytes, gz_bytes in (("whole", 1 << 40, 1 << 40), ("parts", 200_000, 1000)):
        monkeypatch.setattr(bigfiles, "RANGE_BYTES", range_bytes)
        monkeypatch.setattr(bigfiles, "GZIP_STREAM_BYTES", gz_bytes)
        inputs = collect_inputs([str(src)], tmp_path / f"work-{name}")
        big = bigfiles.plan_big_files(inputs.files)[1]
        assert len(big.surveys) == (0 if name == "whole" else 3)
        assert name == "whole" or len(big.rows) > 15
        result = run_ingest(spark, inputs, cluster="c")
        write_outputs(result, tmp_path / name)
        release(result)
        outs.append(tmp_path / name)
    whole, parts = outs
    assert (whole / "ingest_summary.json").read_text() == (parts / "ingest_summary.json").read_text()
    for table in ("events", "quarantine"):
        a, b = pq.read_table(whole / table).to_pylist(), pq.read_table(parts / table).to_pylist()
        assert a == b and a
    summary = json.loads((whole / "ingest_summary.json").read_text())
    streams_seen = {s["name"]: s["broker_id"] for f in summary["files"] for s in f.get("streams") or []}
    assert streams_seen["kafka-1"] == 1 and streams_seen["kafka-2/kafka"] == 2


def test_cut_inside_a_split_record_whose_next_part_looks_like_a_header(tmp_path):
    """The runtime splits at a byte count, not at a word: a part may begin with what reads as a log header
    (here a message quoting another entry). A range starting at that part would take it for an entry of its
    own; the survey moves the cut past the record's last part, so the joined line stays one entry."""
    head = "[2021-08-16 09:00:13,000] INFO [KafkaServer id=1] quoted: "
    quoted = "[2021-08-16 09:00:14,000] INFO something else (kafka.server.KafkaServer)"
    lines = [f"2021-08-16T09:00:1{i}.000000000Z stdout F [2021-08-16 09:00:1{i},000] INFO [KafkaServer id=1] "
             f"line {i} (kafka.server.KafkaServer)" for i in range(3)]
    lines += ["2021-08-16T09:00:13.000000000Z stdout P " + head,
              "2021-08-16T09:00:13.000000000Z stderr F OpenJDK 64-Bit Server VM warning: something",
              "2021-08-16T09:00:13.000000000Z stdout F " + quoted]
    lines += [f"2021-08-16T09:00:2{i}.000000000Z stdout F [2021-08-16 09:00:2{i},000] INFO [KafkaServer id=1] "
              f"line {i} (kafka.server.KafkaServer)" for i in range(3)]
    pod = tmp_path / "var/log/pods/kafka_kafka-0_0123abcd-0000-0000-0000-000000000000/kafka"
    pod.mkdir(parents=True)
    path = pod / "0.log"
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    cut = data.index(b"2021-08-16T09:00:13.000000000Z stdout F [2021-08-16 09:00:14")  # the quoted entry's part
    events, s, plan, survey = _by_ranges(path, cuts=[cut], chunk_lines=7)
    assert survey["moved"] == {"6": 7} and [p[2] for p in plan] == [1, 7]
    _same(_whole(path), (events, s))
    assert s.streams[0]["joined_records"] == 1 and s.lines == 8


@pytest.mark.parametrize("fmt", sorted(WRITERS))
@pytest.mark.parametrize("range_bytes", [997, 1 << 40])
def test_survey_by_ranges_is_the_one_pass_survey(streams, fmt, range_bytes, tmp_path):
    """What every range must know beforehand (each source's first lines, its ids, its stamps' order, where a
    split record moves a cut) surveyed range by range in parallel (plan.survey_part, merged by
    survey.merge_surveys) gives what one pass over the stream gives (plan_stream), for every format, damage
    included; where a split record crosses a range's end, by falling back on that one pass."""
    from parsers.container_streams.plan import plan_from_parts, stream_head, survey_part

    for path, gz in ((streams[fmt], False), (tmp_path / (streams[fmt].name + ".gz"), True)):
        if gz:
            path.write_bytes(gzip.compress(streams[fmt].read_bytes()))
        size = path.stat().st_size
        want = plan_stream(str(path), "x", size, gz, range_bytes)
        key, ranges = stream_head(str(path), size, gz, range_bytes)
        parts = [survey_part(str(path), "x", size, gz, key, a, b) for a, b in ranges]
        assert plan_from_parts(str(path), "x", size, gz, range_bytes, key, ranges, parts) == want
        assert key is None or GRAMMARS[key].reorder or len(ranges) > (50 if range_bytes == 997 and not gz else 0)
        if fmt.startswith(("compose", "kubectl")):  # no split records: the ranges' surveys are merged
            assert ranges and not any(p["crossing"] for p in parts)


@pytest.mark.spark
def test_spark_survey_in_a_few_tasks_is_the_survey_of_each_range(spark, streams):
    """Through Spark, the surveys of a compose stream's ~100 ranges run in consecutive slices, at most two tasks a
    core (each task costs its worker before any range is surveyed): every range's survey is still its own, in
    file order, as plan.survey_part gives it alone."""
    from forensics import bigfiles
    from parsers.container_streams.plan import stream_head, survey_part

    path = streams["compose"]
    size = path.stat().st_size
    key, ranges = stream_head(str(path), size, False, 997)
    ref = dataclasses.make_dataclass("Ref", ["display", "size"])("x", size)
    jobs = bigfiles.survey_jobs([(ref, str(path), False, key, ranges)])
    assert len(jobs) > 50
    frame = bigfiles.survey_frame(spark, jobs)
    assert frame.rdd.getNumPartitions() == 2 * spark.sparkContext.defaultParallelism
    assert bigfiles.spark_surveyor(spark)(jobs) == [json.loads(json.dumps(survey_part(*job))) for job in jobs]
