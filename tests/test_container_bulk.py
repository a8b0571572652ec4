"""A ``docker compose logs`` stream read in bulk gives what the line-by-line reading gives.

In bulk, ``compose.route`` hands each line of a block to its service at once (source, text, stamp), and a
range (``ranges.read_range``) or a range's survey (``plan.survey_part``) puts a plain line straight into its
source's buffer or survey, with no Piece per line; with ``detect.ROUTED`` off every line goes through
``compose.pieces`` and the per-piece reading. The stream is one real cluster's logs
(../shared/real_logs/AndreasTraut__kafka_2.13-2.8.0: its server, controller and state-change logs as three
services, stack traces of 20+ lines in the state-change log), interleaved at random, with what Compose and
operators add around them: Compose's own lines, colour codes, ``--timestamps`` stamps, a service of echo
lines with no log header (read with the collector's stamp put before it), an unprefixed pasted log line, an
empty service line, a '|' in a message, and a last line cut short. Ranges are cut small (a multi-line entry
then spans a cut, and blocks end inside a source's entry) and sources' buffers are read every few hundred
lines (``chunk_lines``), so every branch of the range reading is taken by both readings.
"""
from __future__ import annotations

import dataclasses
import gzip
import random
import re
from pathlib import Path

import pytest
from conftest import REAL_LOGS

from parsers.common.context import SourceContext
from parsers.container_streams import compose, detect
from parsers.container_streams.identity import named_ids, self_named
from parsers.container_streams.plan import plan_from_parts, stream_head, survey_part
from parsers.container_streams.ranges import read_range
from parsers.schema import Event

CLUSTER = REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0" / "logs"
SERVICES = {"kafka-1": "server.log", "kafka-2": "controller.log", "kafka-3": "state-change.log"}


def _lines(prefix: str) -> list[str]:
    out = []
    for p in sorted(CLUSTER.glob(prefix + "*")):
        data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        out.extend(data.decode("utf-8", "replace").splitlines())
    return out


def _stream(timestamps: bool, seed: int) -> str:
    """The services' lines interleaved at random (each service's own order kept), as Compose prints them."""
    rng = random.Random(seed)
    queues = {name: _lines(prefix) for name, prefix in SERVICES.items()}
    queues["init-1"] = [f"waiting for zookeeper ({i})" for i in range(40)]  # no log header of its own
    width = max(map(len, queues))
    at = {name: 0 for name in queues}
    out = ["Attaching to init-1, kafka-1, kafka-2, kafka-3"]
    second = 0
    while at:
        name = rng.choice(sorted(at))
        line = queues[name][at[name]]
        at[name] += 1
        if at[name] == len(queues[name]):
            del at[name]
        second += 1
        stamp = f"2021-05-03T10:{second // 3600 % 60:02d}:{second % 60:02d}.{second % 1000:03d}000000Z "
        prefix = f"{name.ljust(width)} |"
        if rng.random() < 0.01:
            prefix = f"\x1b[36m{prefix}\x1b[0m"  # a coloured prefix (a terminal)
        out.append(f"{prefix} {stamp if timestamps else ''}{line}")
        if rng.random() < 0.002:
            out.append(rng.choice([
                "kafka-2 exited with code 137",  # Compose's own
                "",
                f"{'kafka-1'.ljust(width)} |",  # an empty line of the service: the bar ends the line
                f"{'kafka-3'.ljust(width)} | a message | with bars | in it",
                f"{'kafka-9'.ljust(width)} |no space after the bar",
                "[2021-05-03 10:00:00,000] INFO pasted without its prefix (kafka.server.KafkaServer)",
                f"{'kafka-1'.ljust(width)} | \x1b[31m[2021-05-03 10:00:00,001] ERROR coloured text (kafka.x)\x1b[0m",
            ]))
    return "\n".join(out)[:-7]  # the last line cut short: no line end


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "timestamps"])
def stream(request, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bulk") / "compose.log"
    path.write_text(_stream(request.param, seed=48), encoding="utf-8")
    return path


def test_route_reads_every_line_as_pieces_does(stream):
    lines = stream.read_text(encoding="utf-8").split("\n")
    names, texts, stamps = compose.route(lines)
    taken = 0
    for n, (line, name, text, stamp) in enumerate(zip(lines, names, texts, stamps), 1):
        (piece,) = compose.pieces([(n, line)], "x")
        if name is None:
            assert text == line
            continue
        taken += 1
        assert (piece.kind, piece.source, piece.text, piece.stamp) == ("line", name, text, stamp), line
    # Every line of a service with a plain prefix is taken in bulk; only the odd ones are left to pieces.
    plain = sum(1 for line in lines if re.match(r"^[a-z0-9-]+ +\|( |$)", line) and "\x1b" not in line)
    assert taken == plain > 0.9 * len(lines)


def _plain(item):
    """A value read back as plain data: events as their rows, dataclasses as dicts."""
    if isinstance(item, Event):
        return item.as_row()
    if dataclasses.is_dataclass(item):
        return dataclasses.asdict(item)
    if isinstance(item, dict):
        return {k: _plain(v) for k, v in item.items()}
    if isinstance(item, (list, tuple)):
        return [_plain(v) for v in item]
    return item


def _read(path: Path, range_bytes: int, chunk_lines: int) -> list:
    size = path.stat().st_size
    key, ranges = stream_head(str(path), size, False, range_bytes)
    assert key == "compose"
    parts = [survey_part(str(path), "x", size, False, key, a, b) for a, b in ranges]
    survey, ranges = plan_from_parts(str(path), "x", size, False, range_bytes, key, ranges, parts)
    assert survey["ranged"]
    out = [parts, survey]
    for a, _e, f, o in ranges:
        out.append([(kind, name, _plain(got)) for kind, name, got in
                    read_range(str(path), size, SourceContext("x", "c", None, "UTC"), survey, a, f, o, False,
                               chunk_lines=chunk_lines)])
    return out


@pytest.mark.parametrize("range_bytes,chunk_lines", [(1 << 40, 200_000), (150_000, 300), (40_000, 60)])
def test_ranges_read_in_bulk_as_line_by_line(stream, monkeypatch, range_bytes, chunk_lines):
    bulk = _read(stream, range_bytes, chunk_lines)
    monkeypatch.setattr(detect, "ROUTED", False)
    by_line = _read(stream, range_bytes, chunk_lines)
    assert len(bulk) == len(by_line) > 2
    for a, b in zip(bulk, by_line):
        assert a == b
    events = sum(len(got) for rng in bulk[2:] for kind, _n, got in rng if kind == "events")
    assert events > 1000
    assert bulk[1]["sources"]["kafka-2"]["ids"]  # the controller names itself ([Controller id=N])


def test_self_named_finds_what_the_one_pattern_found():
    """``identity.self_named`` (a bracket search and a dump-line match) against the single pattern it replaced,
    on every line of the cluster's logs that holds "id" and on made-up lines of each form."""
    old = re.compile(
        r"\[(?:KafkaServer|BrokerServer|ControllerServer|QuorumController) id=(\d+)\]"
        r"|\[KafkaRaftServer nodeId=(\d+)\]"
        r"|\[Controller id=(\d+)[\] ]"
        r"|^\s*(?:broker|node)\.id = (\d+)\s*$")
    made_up = ["\tbroker.id = 2", "node.id = 3 ", "  broker.id = 4\x0b", "broker.id = 5 [Controller id=6]",
               "[KafkaRaftServer nodeId=7] x [QuorumController id=8] [Controller id=9 epoch=1]",
               "[Controller id=10]x[Controller id=11]", "xbroker.id = 12", "[ControllerServer id=13]",
               "[BrokerServer id=14] broker.id = 15", "[Controller id=]", "broker.id = "]
    lines = [t for prefix in SERVICES.values() for t in _lines(prefix) if "id" in t] + made_up
    assert len(lines) > 1000
    for t in lines:
        assert [(m.group(0), next(g for g in m.groups() if g is not None)) for m in self_named(t)] == \
               [(m.group(0), next(g for g in m.groups() if g is not None)) for m in old.finditer(t)], t
    assert named_ids(made_up, list(range(len(made_up)))) == {
        2: ("broker.id = 2", 0), 3: ("node.id = 3", 1), 4: ("broker.id = 4", 2), 6: ("[Controller id=6]", 3),
        7: ("[KafkaRaftServer nodeId=7]", 4), 8: ("[QuorumController id=8]", 4), 9: ("[Controller id=9", 4), 10: ("[Controller id=10]", 5),
        11: ("[Controller id=11]", 5), 13: ("[ControllerServer id=13]", 7), 14: ("[BrokerServer id=14]", 8)}


def test_a_range_reads_on_only_up_to_the_last_record_of_its_open_sources(tmp_path, monkeypatch):
    """kafka-3 (the state-change log) logs only in the first fifth of the stream. A range that took its lines
    reads on past its end for kafka-3's entry to finish; once past kafka-3's last record (the survey knows
    it) nothing is left for it to read, where before it read on to the end of the file. What the ranges give
    is what the whole stream gives (``parse_container_stream``), by either survey (one pass, by ranges)."""
    from test_container_ranges import _ctx, _same, _whole

    from parsers.container_streams import ranges as R
    from parsers.container_streams.plan import plan_stream
    from parsers.container_streams.stream_merge import add_event_counts, finish_source_events, merge_stream

    rng = random.Random(3)
    one, three = _lines(SERVICES["kafka-1"]), _lines(SERVICES["kafka-3"])[:400]
    rows, k3 = [], 0
    for i, line in enumerate(one):
        rows.append(f"kafka-1 | {line}")
        if k3 < len(three) and i < len(one) // 5 and rng.random() < 0.2:
            rows.append(f"kafka-3 | {three[k3]}")
            k3 += 1
    path = tmp_path / "compose.log"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    last3 = max(n for n, r in enumerate(rows, 1) if r.startswith("kafka-3"))
    read_on = []
    piece = R._RangeReader.piece

    def counted(self, p):
        if p.pos >= self.end:
            read_on.append(p.pos)
        return piece(self, p)

    monkeypatch.setattr(R._RangeReader, "piece", counted)
    size = path.stat().st_size
    ctx = _ctx(path)
    for by_parts in (False, True):
        if by_parts:
            key, plan = stream_head(str(path), size, False, 60_000)
            parts = [survey_part(str(path), ctx.path, size, False, key, a, b) for a, b in plan]
            survey, plan = plan_from_parts(str(path), ctx.path, size, False, 60_000, key, plan, parts)
        else:
            survey, plan = plan_stream(str(path), ctx.path, size, False, 60_000)
        assert survey["sources"]["kafka-3"]["last"] == last3 and len(plan) > 10
        read_on.clear()
        got_ranges, got_parts, events = [], {}, {}
        for a, _e, f, o in plan:
            for kind, name, got in read_range(str(path), size, ctx, survey, a, f, o, False, chunk_lines=50):
                if kind == "events":
                    events.setdefault(name, []).extend(got)
                elif kind == "part":
                    got_parts.setdefault(name, []).append(got)
                else:
                    got_ranges.append(got)
        assert len(read_on) < len(rows) // 8, len(read_on)  # up to the open sources' next headers, not the rest
        s = merge_stream(ctx, size, survey, got_ranges, got_parts)
        brokers = {x["name"]: x["broker_id"] for x in s.streams}
        out = [ev for name in sorted(events) for ev in finish_source_events(events[name], brokers[name])]
        add_event_counts(s, out)
        _same(_whole(path), (out, s))


def _clean_stream(seed: int) -> str:
    """The three services' lines interleaved at random with nothing else, but for a short stretch of what
    Compose and terminals add (a coloured prefix, Compose's own line, an empty service line): the blocks
    ``compose.split`` takes whole, and a few it leaves to ``route``."""
    queues = {name: _lines(prefix) for name, prefix in SERVICES.items()}
    width = max(map(len, queues))

    def extra(out: list[str]) -> None:
        if len(out) == 20_000:
            out += [f"\x1b[36m{'kafka-1'.ljust(width)} |\x1b[0m coloured", "kafka-2 exited with code 137",
                    f"{'kafka-3'.ljust(width)} |"]
    return _interleaved(random.Random(seed), queues, width, extra)


def _interleaved(rng: random.Random, queues: dict[str, list[str]], width: int, extra) -> str:
    """The services' lines as Compose prints them, the next line's service picked at random; ``extra(out)``
    runs after each line, to add what else a stream holds at that point."""
    at = {name: 0 for name in queues}
    out: list[str] = []
    while at:
        name = rng.choice(sorted(at))
        out.append(f"{name.ljust(width)} | {queues[name][at[name]]}")
        at[name] += 1
        if at[name] == len(queues[name]):
            del at[name]
        extra(out)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("range_bytes,chunk_lines", [(1 << 40, 200_000), (1 << 40, 2_000), (700_000, 400)])
def test_blocks_split_whole_read_as_line_by_line(tmp_path, monkeypatch, range_bytes, chunk_lines):
    """A block of plain service lines (``compose.split``) is surveyed and read by C loops: a source's lines
    picked by a mask (a whole block a range owns, as bytes: ``compose.split_raw``'s masks), the ids its lines
    name by one search over them. Surveys and ranges equal the line by
    line reading (``route``), with small blocks so that most blocks are split and sources' heads, skips and
    full buffers fall across them; kafka-1 (server.log) names two broker ids, by idents and config dumps, in
    lines past its head; each source's ids are those ``named_ids`` finds in its own lines."""
    from parsers.common import textranges
    from parsers.container_streams import ranges, survey

    path = tmp_path / "compose.log"
    path.write_text(_clean_stream(seed=5), encoding="utf-8")
    monkeypatch.setattr(textranges, "READ_BLOCK", 1 << 16)  # blocks of ~300 lines, tried 100 at a time
    monkeypatch.setattr(survey, "SPLIT_LINES", 100)
    monkeypatch.setattr(ranges, "SPLIT_LINES", 100)
    split = compose.split
    taken = [0, 0]

    def counted(lines):
        got = split(lines)
        taken[got is None] += len(lines)
        return got

    monkeypatch.setitem(detect.GRAMMARS, "compose", dataclasses.replace(detect.GRAMMARS["compose"], split=counted))
    take_block = ranges._RangeReader.take_block
    whole = [0, 0]

    def taken_whole(self, first, lines, *args):
        got = take_block(self, first, lines, *args)
        whole[got] += 1
        taken[0] += len(lines) if got else 0
        return got

    monkeypatch.setattr(ranges._RangeReader, "take_block", taken_whole)
    take_texts = ranges._RangeReader.take_texts
    cut = [0, 0]

    def taken_cut(self, by_source, last):
        got = take_texts(self, by_source, last)
        cut[got] += 1
        taken[0] += sum(len(t) for t, _n in by_source.values()) if got else 0
        return got

    monkeypatch.setattr(ranges._RangeReader, "take_texts", taken_cut)
    bulk = _read(path, range_bytes, chunk_lines)
    assert taken[0] > 20 * taken[1] > 0  # most lines split (by stretches or whole blocks), a few stretches not
    # Blocks a range owns whole, split as bytes, put in the buffers at once: their lines cut from their prefixes
    # in C (compose.split_texts), or without it picked from the decoded lines by split_raw's masks.
    if compose._demux is not None:
        assert cut[1] > 10 and whole[1] == 0
        monkeypatch.setattr(compose, "COMPILED", False)
        by_masks = _read(path, range_bytes, chunk_lines)
        assert whole[1] > 10
        assert bulk == by_masks
    else:
        assert whole[1] > 10
    monkeypatch.setattr(detect, "SPLIT", False)
    by_line = _read(path, range_bytes, chunk_lines)
    assert len(bulk) == len(by_line) > 2
    for a, b in zip(bulk, by_line):
        assert a == b
    rows = path.read_text(encoding="utf-8").split("\n")
    for name in SERVICES:
        mine = [(n, r[len(name) + 3:]) for n, r in enumerate(rows, 1) if r.startswith(name + " |")]
        found = named_ids([t for _, t in mine], [n for n, _ in mine])
        assert bulk[1]["sources"][name]["ids"] == {str(b): [w, n] for b, (w, n) in found.items()}
    assert set(bulk[1]["sources"]["kafka-1"]["ids"]) == {"0", "1"}


def _raw_stream(seed: int) -> str:
    """Three services' lines interleaved at random, with in a few places what a block read as bytes must
    leave to decoding (a CR, a non-ASCII line, a bar and stamp inside a message, a text starting with a
    date, Compose's own line) and a fourth service met only late, with a few lines (its head is short in
    the middle of a block); kafka-3 names a broker the others never name ([Controller id=7]), kafka-2 states
    its broker id by a configuration dump line past its head."""
    rng = random.Random(seed)
    queues = {name: _lines(prefix)[:6000] for name, prefix in SERVICES.items()}
    queues["kafka-3"][3000:3000] = ["[2021-05-03 10:00:00,000] INFO [Controller id=7] Resigning (kafka.x)"] * 30
    queues["kafka-2"][2500:2500] = ["\tbroker.id = 4", "\tnode.id = 5"]
    width = len("kafka-44")
    late = [True]
    odd = ["kafka-1 exited with code 137", "\u00e9t\u00e9 d\u00e9j\u00e0 vu", "2021-05-03 plain text after the bar",
           "a message | 2021-05-03T10:00:00Z with a bar and stamp", "a line with a CR\r"]

    def extra(out: list[str]) -> None:
        if len(out) % 3000 == 0:
            kind = odd[len(out) // 3000 % len(odd)]
            out.append(kind if kind.startswith("kafka-1 exited") else f"{'kafka-1'.ljust(width)} | {kind}")
        if late[0] and len(out) >= 12_000:
            late[0] = False
            out.extend(f"{'kafka-44'.ljust(width)} | [2021-05-03 10:00:00,000] INFO [KafkaServer id=9] started "
                       f"(kafka.server.KafkaServer) {i}" for i in range(3))
    return _interleaved(rng, queues, width, extra)


def test_blocks_surveyed_as_bytes_as_when_decoded(tmp_path, monkeypatch):
    """A survey reads a block of plain service lines as bytes (``compose.split_raw``: each line's prefix by
    numpy, idents and dump lines by byte searches), decoding only the stretches where a source's head is
    short. Surveys of every range equal those of the decoded blocks (``split``) and of the lines read one by
    one (``route``), with small blocks and ranges; most blocks are read as bytes; each source's first and last
    line, head and ids are those of its own lines (``named_ids``)."""
    from parsers.common import textranges
    from parsers.container_streams import survey

    path = tmp_path / "compose.log"
    text = _raw_stream(seed=11)
    path.write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(textranges, "READ_BLOCK", 1 << 16)
    monkeypatch.setattr(survey, "SPLIT_LINES", 100)
    split_raw = compose.split_raw
    taken = [0, 0]

    def counted(block):
        got = split_raw(block)
        taken[got is None] += 1
        return got

    monkeypatch.setitem(detect.GRAMMARS, "compose",
                        dataclasses.replace(detect.GRAMMARS["compose"], split_raw=counted))
    size = path.stat().st_size
    readings = []
    for flags in ({}, {"RAW": False}, {"SPLIT": False}):
        for flag, value in flags.items():
            monkeypatch.setattr(detect, flag, value)
        key, ranges = stream_head(str(path), size, False, 300_000)
        parts = [survey_part(str(path), "x", size, False, key, a, b) for a, b in ranges]
        survey_got, _ranges = plan_from_parts(str(path), "x", size, False, 300_000, key, ranges, parts)
        readings.append((parts, survey_got))
    assert len(readings[0][0]) > 5
    assert taken[0] > 4 * taken[1] > 0  # most blocks as bytes; the odd lines' blocks decoded
    assert readings[0] == readings[1] == readings[2]
    got = readings[0][1]["sources"]
    rows = text.split("\n")
    for name in ("kafka-1", "kafka-2", "kafka-3", "kafka-44"):
        mine = [(n, r.removesuffix("\r")[len("kafka-44") + 3:]) for n, r in enumerate(rows, 1)
                if r.startswith(name.ljust(len("kafka-44")) + " |")]
        found = named_ids([t for _, t in mine], [n for n, _ in mine])
        assert got[name]["ids"] == {str(b): [w, n] for b, (w, n) in found.items()}, name
        assert (got[name]["first"], got[name]["last"]) == (mine[0][0], mine[-1][0])
        assert [t for t, _s in got[name]["head"]] == [t for _, t in mine[:400]]
    assert set(got["kafka-3"]["ids"]) >= {"7"} and set(got["kafka-2"]["ids"]) >= {"4", "5"}
    assert "7" not in got["kafka-1"]["ids"] and list(got["kafka-44"]["ids"]) == ["9"]


@pytest.mark.skipif(compose._demux is None, reason="the compiled _demux is not built")
def test_block_texts_cut_in_c_are_split_raws_masks():
    """``compose.split_texts`` (each line's text made once, from the bytes, in C) gives each service the lines
    ``split_raw``'s mask picks from the decoded block, cut from their prefix, with their numbers; it leaves to
    ``split_raw`` (None) every block ``split_raw`` leaves to decoding: a short line, a line of no known prefix,
    non-ASCII text, a colour code, a collector's stamp after the bar (first or later line); a text that starts
    with a digit or holds a bar with no stamp after it is still taken."""
    from parsers.common.textio import ReadProblems
    from parsers.common.textranges import raw_line_blocks

    width = len("kafka-1 | ")
    for name in ("kafka-1", "kafka-2", "kafka-3"):
        compose._learn(f"{name} | ")

    def block(lines: list[str]):
        (got,) = list(raw_line_blocks(["".join(line + "\n" for line in lines).encode()], ReadProblems(), 1000, 7))
        return got[1]

    plain = [f"kafka-{1 + i * 7 % 3} | [2021-05-03 10:00:{i % 60:02d},000] INFO line {i} (kafka.x)" for i in range(50)]
    odd = ["kafka-2 | ", "kafka-3 | 2021 starts with a digit", "kafka-1 | a | bar in the text"]
    for lines in (plain, plain[:1], plain + odd, odd + plain):
        b = block(lines)
        split_raw = compose.split_raw(b)
        assert split_raw is not None
        w, present = split_raw
        want = {name: ([t[w:] for t, m in zip(lines, mine) if m], [n for n, m in enumerate(mine, 7) if m])
                for name, mine in present.values()}
        got, last = compose.split_texts(b, 7)
        assert (got, last) == (want, lines[-1][:width - 3])
    for bad in (["kafka-1 |"], ["zzzzz-9 | unknown"], ["kafka-1 | d\u00e9j\u00e0 vu"], ["kafka-1 | \x1b[31mred"],
                ["kafka-1 | x | 2021-05-03T10:00:00.000000000Z y"], ["kafka-1 | 2021-05-03T10:00:00.000000000Z y"]):
        for lines in (bad + plain, plain + bad):
            b = block(lines)
            assert compose.split_raw(b) is None
            assert compose.split_texts(b, 7) is None
