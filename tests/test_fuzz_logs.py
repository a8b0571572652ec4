"""Damaged broker-log lines, by hypothesis, seeded from the real logs in ../shared/real_logs: a line
of a real file is mutated (bytes changed, junk inserted, cut short, split) between its real
neighbours. Nothing may raise or hang, the accounting must balance, and the neighbours must
still give exactly the events they gave undamaged. Case counts are in the test names; each
run prints its count too."""
from __future__ import annotations

import gzip
import time
from functools import lru_cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REAL_LOGS
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems, iter_raw_lines
from parsers.dispatch import parse_source

CASES = 500
WHOLE_CASES = 300
FUZZ = settings(max_examples=CASES, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
SIDE = 3  # real lines kept on each side of the damaged one
NAME = "broker-1/server.log"


def _parse(data: bytes):
    t0 = time.monotonic()
    events, s = parse_source(data, SourceContext(NAME, "c", 1))  # the broker is known: attribution is not in play
    assert time.monotonic() - t0 < 5
    assert s.balanced(), (s.lines, s.parsed, s.other, s.unrecognized, s.quarantined)
    assert not any("internal parser error" in e for e in s.errors), s.errors
    assert s.kind == "broker_log", (s.kind, s.errors)
    return events, s


def _key(e):
    return (e.event_type, e.ts, e.source_pos, e.source_sub, e.broker_id, e.subject_broker, e.controller_id,
            e.controller_epoch, e.topic, e.partition, e.leader, tuple(e.isr or ()), e.leader_epoch, e.zk_version,
            e.from_state, e.to_state, e.level, e.logger, e.detail_json(), e.raw)


def _seed_files():
    """One text log per real cluster (the largest state-change, controller or server log under 200 kB),
    Kafka 0.8 to 4.x."""
    out = []
    for cluster in sorted(p for p in REAL_LOGS.iterdir() if p.is_dir() and p.name != "issue_snippets"):
        logs = [p for p in cluster.rglob("*.gz") if any(k in p.name for k in ("state-change", "controller", "server"))
                and "version-2" not in str(p) and p.stat().st_size < 200_000]
        if logs:
            out.append(max(logs, key=lambda p: (p.stat().st_size, p.name)))
    return out


@lru_cache(maxsize=None)
def windows() -> tuple[tuple[tuple[bytes, ...], str], ...]:
    """Runs of 2*SIDE+1 one-line entries whose middle line gives an event, and whose other lines give
    the same events with or without it (nothing in them depends on the middle one)."""
    found = []
    for path in _seed_files():
        lines = gzip.decompress(path.read_bytes()).split(b"\n")
        events, _ = _parse(b"\n".join(lines))
        with_event = sorted({e.source_pos for e in events})
        taken = 0
        for pos in with_event[:: max(1, len(with_event) // 12)]:
            i = pos - 1
            if i < SIDE or i + SIDE >= len(lines) - 1:
                continue
            win = tuple(lines[i - SIDE: i + SIDE + 1])
            if not all(ln.startswith(b"[") for ln in win):  # one-line entries only: no continuation in play
                continue
            full, _ = _parse(b"\n".join(win) + b"\n")
            without, _ = _parse(b"\n".join(win[:SIDE] + win[SIDE + 1:]) + b"\n")
            others = [_key(e) for e in full if e.source_pos != SIDE + 1]
            shifted = [_key(e)[:2] + (e.source_pos + (e.source_pos > SIDE),) + _key(e)[3:] for e in without]
            if [k for k in others] == shifted and any(e.source_pos == SIDE + 1 for e in full):
                found.append((win, path.relative_to(REAL_LOGS).as_posix()))
                taken += 1
            if taken >= 8:
                break
    assert len(found) >= 60, len(found)
    return tuple(found)


def _physical_lines(middle: bytes) -> int:
    """How many lines the damaged line became in the file (CR, LF and CRLF all end a line)."""
    return len(list(iter_raw_lines(middle + b"\n", ReadProblems())))


def check_neighbours(win: tuple[bytes, ...], middle: bytes) -> None:
    before = _parse(b"\n".join(win) + b"\n")[0]
    events, s = _parse(b"\n".join(win[:SIDE] + (middle,) + win[SIDE + 1:]) + b"\n")
    extra = _physical_lines(middle) - 1
    assert s.lines == 2 * SIDE + 1 + extra
    # the entry just above the damage may take damaged lines as its continuation: judged apart
    want = [_key(e) for e in before if e.source_pos < SIDE]
    want += [_key(e)[:2] + (e.source_pos + extra,) + _key(e)[3:] for e in before if e.source_pos > SIDE + 1]
    got = [_key(e) for e in events if e.source_pos < SIDE or e.source_pos > SIDE + 1 + extra]
    assert got == want
    # nothing is lost silently: every line that is neither an event nor routine is kept for inspection
    assert sum(q.raw.count("\n") + 1 for q in s.samples) == s.unrecognized + s.quarantined


JUNK = st.one_of(
    st.binary(min_size=1, max_size=300),
    st.lists(st.sampled_from([b"\x00", b"\r", b"\n", b"\r\n", b"\xff\xfe", b"\x1b[2J", b"\xe9", b"]", b"[",
                              b"(", b")", b"{", b"}", b"\"", b"=", b",", b" ", b"\t", b"2021-13-45 25:61:61,000",
                              b"[2021-01-01 00:00:00,000] ", b"ERROR ", b"-1", b"99999999999999999999"]),
             min_size=1, max_size=12).map(b"".join),
)
_counts: dict[str, int] = {}


def _counted(name: str, cases: int = CASES) -> None:
    _counts[name] = _counts.get(name, 0) + 1
    if _counts[name] == cases:
        print(f"{name}: {cases} cases run")


@FUZZ
@given(data=st.data(), changes=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1,
                                          max_size=8))
def test_bytes_changed_in_a_real_line_500_cases(data, changes):
    win, _ = data.draw(st.sampled_from(windows()))
    middle = bytearray(win[SIDE])
    for pos, val in changes:
        middle[pos % len(middle)] = val
    check_neighbours(win, bytes(middle))
    _counted("bytes_changed")


@FUZZ
@given(data=st.data(), at=st.integers(min_value=0), junk=JUNK)
def test_junk_inserted_into_a_real_line_500_cases(data, at, junk):
    win, _ = data.draw(st.sampled_from(windows()))
    line = win[SIDE]
    at %= len(line) + 1
    check_neighbours(win, line[:at] + junk + line[at:])
    _counted("junk_inserted")


@FUZZ
@given(data=st.data(), cut=st.integers(min_value=0), tail=st.one_of(st.just(b""), JUNK))
def test_real_line_cut_short_500_cases(data, cut, tail):
    win, _ = data.draw(st.sampled_from(windows()))
    line = win[SIDE]
    check_neighbours(win, line[: cut % len(line)] + tail)
    _counted("cut_short")


@FUZZ
@given(data=st.data(), cut=st.integers(min_value=1))
def test_real_file_ending_inside_a_line_500_cases(data, cut):
    """The last line cut anywhere: the lines before it are untouched, the cut one is never misread
    as a different event (it is its own event only if it was cut after its logger, i.e. whole)."""
    win, _ = data.draw(st.sampled_from(windows()))
    whole = _parse(b"\n".join(win[: SIDE + 1]))[0]
    line = win[SIDE]
    cut = 1 + cut % (len(line) - 1)  # at least one byte of it left, at least one cut off
    events, s = _parse(b"\n".join(win[:SIDE] + (line[:cut],)))
    last = [_key(e) for e in events if e.source_pos == SIDE + 1]
    assert last == [] and s.quarantined == 1 and s.errors[-1].startswith(f"line {SIDE + 1}: the file ends inside")
    assert [_key(e) for e in events] == [_key(e) for e in whole if e.source_pos <= SIDE]
    _counted("file_ends_inside")


SMALL_FILES = [p for p in _seed_files() if p.stat().st_size < 30_000][:6]


@settings(max_examples=WHOLE_CASES, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(data=st.data(), ops=st.lists(st.tuples(st.sampled_from(["flip", "insert", "delete"]), st.integers(min_value=0),
                                              st.binary(min_size=1, max_size=40)), min_size=1, max_size=10),
       compressed=st.booleans())
def test_whole_real_files_damaged_anywhere_300_cases(data, ops, compressed):
    """Whole real files, plain or gzip (damage then hits the compressed stream): no exception, no
    hang, balanced accounting. (Which events survive is the line-level tests' business.)"""
    path = data.draw(st.sampled_from(SMALL_FILES))
    raw = path.read_bytes() if compressed else gzip.decompress(path.read_bytes())
    b = bytearray(raw)
    for op, at, arg in ops:
        i = at % (len(b) + 1)
        if op == "flip" and i < len(b):
            b[i] ^= arg[0] or 1
        elif op == "insert":
            b[i:i] = arg
        else:
            del b[i: i + len(arg) * 50]
    events, s = parse_source(bytes(b), SourceContext(path.name, "c", 1))
    assert s.balanced() and not any("internal parser error" in e for e in s.errors)
    assert all(e.source_pos is not None and 1 <= e.source_pos <= s.lines for e in events)
    _counted("whole_files", WHOLE_CASES)
