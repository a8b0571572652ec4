"""The compiled accounting of one-line entries (parsers/broker_logs/_routine.c) gives what the Python scan and the
reference path give: the same events, field for field, the same per-file accounting (time line, entries dated
back, writer ids, routine counts) and quarantine samples, on every real log and on lines made to hit each
alternative of the log-ident grammar (templates/writer.py) and each branch of Chronology.see."""
from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.broker_logs import default_layout_scan
from parsers.broker_logs.broker_log import parse_broker_log
from parsers.broker_logs.templates.writer import writer_id
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from conftest import DEFAULT_CLUSTERS, SAMPLES, per_cluster
from test_default_layout_scan import ROOTS, _broker_logs


def _parse(data: bytes, compiled: bool | None, tz: str = "UTC", path: str = "x/server.log"):
    """compiled None: the reference path (line by line, no scan)."""
    s = FileSummary(path=path, kind="broker_log")
    old = default_layout_scan.COMPILED
    default_layout_scan.COMPILED = bool(compiled)
    try:
        evs = parse_broker_log(data, SourceContext(path, "c", None, tz), s, fast=compiled is not None)
    finally:
        default_layout_scan.COMPILED = old
    doc = s.to_json()
    doc["samples"] = [vars(q) for q in s.samples]
    return [e.as_row() for e in evs], doc


class _Counting:
    """Wraps _routine.skip to count the entries it took (so that equality is not reached by never using it)."""

    def __init__(self, real):
        self.real, self.taken = real, 0

    def skip(self, lines, i, *rest):
        got = self.real.skip(lines, i, *rest)
        self.taken += got[0] - i
        return got


@pytest.fixture
def counting(monkeypatch):
    assert default_layout_scan._routine is not None, "the C extension was not built (pip install -e . builds it)"
    c = _Counting(default_layout_scan._routine)
    monkeypatch.setattr(default_layout_scan, "_routine", c)
    return c


@pytest.mark.parametrize("root", per_cluster(ROOTS, lambda p: p.name, DEFAULT_CLUSTERS | {SAMPLES.name}))
def test_every_real_and_sample_log_is_accounted_the_same_with_and_without_the_compiled_scan(counting, root):
    files = _broker_logs(root)  # none in a folder of ZooKeeper or KRaft files alone
    lines = 0
    for p in files:
        data = p.read_bytes()
        compiled = _parse(data, True, path=str(p))
        assert compiled == _parse(data, False, path=str(p)), p
        lines += compiled[1]["lines"]
    # most lines of real logs are one-line ASCII entries: the compiled path did the accounting (the issue excerpts
    # are the pasted traces and the lines worth quoting, few of them routine)
    if files:
        assert counting.taken > (lines // 2 if root.name != "issue_snippets" else 0)


HEAD = "[2024-03-10 01:59:58,100] INFO [KafkaServer id=2] started (kafka.server.KafkaServer)"
S = "[2024-03-10 02:00:{:02d},{:03d}] {} {} ({})"
# Every alternative of writer.py's _WRITER, near misses of each, and what the C side leaves to Python.
MESSAGES = [
    "[Controller id=3] Processing automatic preferred replica leader election",
    "[Controller id=12345678901234567890] an id longer than a C integer",
    "[Controller 3]: a 0.10 ident",
    "[Controller-3-to-broker-1-send-thread]: Controller 3 connected to broker 1",
    "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition t-0 to local high watermark 0",
    "[GroupCoordinator 2]: Preparing to rebalance group g in state PreparingRebalance",
    "[Partition state machine on Controller 7]: Started partition state machine",
    "[SocketServer listenerType=ZK_BROKER, nodeId=3] Started data-plane acceptor",
    "[SocketServer listenerType=, nodeId=3] an empty listener type",
    "[SocketServer listenerType=ZK_BROKER, nodeId=3 no closing bracket",
    "[Partition t-0 broker=2] ISR updated to 2,1 and version updated to 5",
    "[Partition  broker=1] an empty partition name",
    "[Partition t-0 broker=2 no closing bracket",
    "Partition [t,0] on broker 3: Expanding ISR for partition [t,0] from 3 to 3,1",
    "Partition [t,0] on broker 3 no colon",
    "Controller 4 epoch 9 fails to send request to broker 1",
    "Controller 4 epoch 9",
    "Broker 2 was elected as leader instead of broker 0",
    "Broker 5 started",
    "Broker 5",
    "[Broker id=\u0663] an id in Arabic-Indic digits",
    "a\ttab inside",
    "Rolled new log segment at offset 9 in 1 ms.",
    "[Log partition=t-0, dir=/d] Deleting segments",
    "",
    "Newly added brokers: 3, deleted brokers: , all live brokers: 2,3",
    "[Controller id=2 epoch=7] Changed partition t-0 from OnlinePartition to OfflinePartition with state "
    "LeaderAndIsr(leader=-1, leaderEpoch=3, isr=List(1), zkVersion=4)",
]
LOGGERS = ["kafka.controller.KafkaController", "kafka.log.Log", "state.change.logger", "a)b", "a b"]


def _line(sec: int, ms: int, level: str, msg: str, logger: str) -> str:
    return S.format(sec, ms, level, msg, logger)


def test_each_writer_ident_is_read_as_the_python_grammar_reads_it(counting):
    for msg in MESSAGES:
        for logger in LOGGERS[:3]:
            text = "\n".join([HEAD, _line(1, 0, "INFO", msg, logger), HEAD]) + "\n"
            got = _parse(text.encode(), True)
            assert got == _parse(text.encode(), False), msg
            assert got == _parse(text.encode(), None), msg
            # the writer counted for the line is writer.py's (HEAD names broker 2, twice)
            expected = {2: 2}
            w = writer_id(msg)
            if w is not None:
                expected[w] = expected.get(w, 0) + 1
            assert {int(k): v for k, v in got[1]["writer_ids"].items()} == expected, msg
    assert counting.taken > 0


def test_a_thrown_exception_under_a_routine_message_is_read_by_the_rule_that_reads_it(counting):
    lines = [HEAD, _line(1, 0, "ERROR", "Uncaught exception in scheduled task 'flush-log'", "kafka.utils.KafkaScheduler"),
             "java.lang.OutOfMemoryError: Java heap space", "\tat java.nio.HeapByteBuffer.<init>(HeapByteBuffer.java:57)",
             _line(2, 0, "INFO", "Rolled new log segment at offset 9 in 1 ms.", "kafka.log.Log"),
             "java.lang.IllegalStateException: not read by any rule", HEAD]
    text = ("\n".join(lines) + "\n").encode()
    got = _parse(text, True)
    assert got == _parse(text, False) == _parse(text, None)
    # fatal.py's rule reads the OutOfMemoryError on the entry's second line: one event, at the entry's first line
    between = [(e["event_type"], e["source_pos"]) for e in got[0] if 1 < e["source_pos"] < len(lines)]
    assert between == [("broker_fatal_error", 2)], got[0]
    assert counting.taken >= 5


def test_entries_dated_back_and_before_the_first_count_as_chronology_counts_them(counting):
    # 02:00:30 then a second back (beyond the 1 s tolerance), half a second back (within), before the first entry
    lines = [_line(10, 0, "INFO", "first", "kafka.log.Log"), _line(30, 0, "INFO", "late", "kafka.log.Log"),
             _line(28, 500, "INFO", "back 1.5 s", "kafka.log.Log"), _line(29, 600, "WARN", "back 0.4 s", "kafka.log.Log"),
             _line(5, 0, "TRACE", "before the first", "kafka.log.Log"), _line(31, 0, "FATAL", "on", "kafka.log.Log"),
             _line(1, 0, "DEBUG", "far back", "kafka.log.Log"), _line(32, 0, "ERROR", "last", "kafka.log.Log")]
    text = ("\n".join(lines) + "\n").encode()
    got = _parse(text, True)
    assert got == _parse(text, False) == _parse(text, None)
    assert counting.taken >= 6
    notes = " ".join(got[1]["notes"])
    assert "line 3: entry dated 1.5 s before" in notes and "3 such entries" in notes, notes


# Lines after a header: a thrown exception whose first line a rule reads (fatal.py's OutOfMemoryError, read
# whatever the message above it), a stack frame with its tab, lines the C side must leave to Python (a
# bracket with a date's shape, another header form, a control character, non-ASCII).
CONTINUATIONS = [
    "java.lang.OutOfMemoryError: Java heap space",
    "java.lang.IllegalStateException: boom",
    "\tat kafka.controller.KafkaController.process(KafkaController.scala:12)",
    "Caused by: org.apache.kafka.common.errors.TimeoutException: Expiring 3 record(s) for t-0",
    "[ 1, 2, 3 ] a bracketed continuation",
    "[2024-03-10T02:00:05.000+01:00] INFO zoned stamp (kafka.log.Log)",
    "[2024-03-1",
    "control \x07 bell",
    "non-ASCII \u00e9t\u00e9",
    "",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 59), st.integers(0, 999), st.sampled_from(["INFO", "WARN", "TRACE"]),
                          st.sampled_from(MESSAGES), st.sampled_from(LOGGERS),
                          st.lists(st.sampled_from(CONTINUATIONS), max_size=3)), min_size=1, max_size=30),
       st.booleans(), st.booleans(), st.sampled_from(["UTC", "Europe/Berlin"]))
def test_any_mix_of_entries_is_accounted_the_same(entries, terminated, gz, tz):
    text = "\n".join("\n".join([_line(*e[:5]), *e[5]]) for e in entries) + ("\n" if terminated else "")
    data = gzip.compress(text.encode()) if gz else text.encode()
    got = _parse(data, True, tz)
    assert got == _parse(data, False, tz)
    assert got == _parse(data, None, tz)


# The bytes the compiled scan must leave to Python: control bytes other than tab, and DEL.
NOT_PRINTABLE = [c for c in range(0x20) if c != 0x09] + [0x7f]


def test_a_control_byte_anywhere_ends_the_compiled_run_there():
    """C takes only printable ASCII (a continuation line may hold tabs): one control byte or DEL in a header's message or
    in a continuation line, at any offset of an 8-byte word or in a line's last bytes, and the run stops before that
    entry, which the Python scan then reads (its binary-line check and quarantine)."""
    from parsers.broker_logs.log4j_layout import LocalClock
    from parsers.broker_logs.templates import RULES

    routine = default_layout_scan._routine
    assert routine is not None, "the C extension was not built (pip install -e . builds it)"
    hour_base = LocalClock("UTC").hour_base

    def taken(lines: list[str]) -> int:
        return routine.skip(lines, 0, len(lines), RULES.needles, hour_base, {}, 0, 0, 1_000_000)[0]

    closing = [_line(2, 0, "INFO", "next", "kafka.log.Log"), _line(3, 0, "INFO", "last", "kafka.log.Log")]
    message = "Rolled new log segment at offset 9 in 1 ms."
    cont = "\tat kafka.log.Log.roll(Log.scala:1) and more"
    assert taken([_line(1, 0, "INFO", message, "kafka.log.Log"), cont, *closing]) == 3  # both entries before the last
    for c in NOT_PRINTABLE:
        for at in range(len(message)):
            bad = message[:at] + chr(c) + message[at + 1:]
            assert taken([_line(1, 0, "INFO", bad, "kafka.log.Log"), cont, *closing]) == 0, (c, at)
        for at in range(len(cont)):
            bad = cont[:at] + chr(c) + cont[at + 1:]
            assert taken([_line(1, 0, "INFO", message, "kafka.log.Log"), bad, *closing]) == 0, (c, at)
