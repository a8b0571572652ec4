"""RuleSet.classify's needle screen in C (parsers/broker_logs/_routine.c, next_wanted) finds, from any rule on, the
rule the Python screen (rules.next_wanted, the loop classify ran before) finds: the first of the logger's rules whose
needles are all in the message, or, for a rule that reads a thrown exception (Rule.thrown), all in the entry's first
continuation line. Independent truth: the Python screen on every entry of real logs, from every rule on, and the same
events and accounting when the logs are read with either screen.

The logs: a 2.7 controller (every controller rule screens each entry), a 0.10 state-change log (the state machines'
and UpdateMetadata templates), a KRaft broker whose fetcher logs "Error sending fetch request ... to node 3:" with
"java.net.SocketTimeoutException: Failed to connect within 30000 ms" on the next line (BetrajJ .../server.log.
2025-02-07-12.gz:355-356: the thrown line alone holds client.java.timeout's needle), and a 1.0 broker whose
continuation lines are Polish (RzethonUMnieDziala .../server.log.2018-12-09-00.gz: "java.io.IOException: Połączenie
zerwane przez drugą stronę", compared as UTF-8 bytes in C)."""
from __future__ import annotations

import gzip

import pytest
from conftest import REAL_LOGS, REAL_LOGS2

from parsers.broker_logs import rules
from parsers.broker_logs.broker_log import parse_broker_log
from parsers.broker_logs.rules import RuleSet, next_wanted
from parsers.broker_logs.templates import RULES
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import expand_runs

FILES = (
    REAL_LOGS2 / "jay0911__kafka-docker/kafka_2.13-2.7.0/logs/controller.log.2021-11-11-18.gz",
    REAL_LOGS2 / "pmitra43__kafka_load_generator/kafka_2.11-0.10.2.0/logs/state-change.log.2017-06-26-21.gz",
    REAL_LOGS / "BetrajJ__kafka-kraft/kafka/logs/server.log.2025-02-07-12.gz",
    REAL_LOGS2 / "RzethonUMnieDziala__CityPulse_KafkaClusterDeploy/kafka_2.11-1.0.0/logs/server.log.2018-12-09-00.gz",
)
THROWN = FILES[2]
POLISH = FILES[3]

_C = rules._NEXT_WANTED_C


def _entries(path, monkeypatch) -> list:
    """Every entry of a real log."""
    seen = []
    real = RuleSet.classify

    def recording(self, entry):
        seen.append(entry)
        return real(self, entry)

    monkeypatch.setattr(RuleSet, "classify", recording)
    data = gzip.decompress(path.read_bytes())
    # the reference path: every entry goes to classify, routine or not
    parse_broker_log(data, SourceContext(path.name, "c", None), FileSummary(path=path.name, kind="broker_log"), fast=False)
    monkeypatch.setattr(RuleSet, "classify", real)
    return seen


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_compiled_screen_finds_from_every_rule_what_the_python_screen_finds(path, monkeypatch):
    assert _C is not None, "the C extension was not built (pip install -e . builds it)"
    entries = _entries(path, monkeypatch)
    assert entries
    on_thrown = with_needles = 0
    for e in entries:
        rules_, needles, flags = RULES._plan(e.logger)
        thrown = e.continuation[0] if e.continuation else None
        for start in range(len(needles) + 1):
            want = next_wanted(needles, flags, e.message, thrown, start)
            assert _C(needles, flags, e.message, thrown, start) == want, (e.line_no, start)
            on_thrown += want >= 0 and want & 1
            with_needles += want >= 0 and bool(needles[want >> 1][0])
    assert with_needles > 0
    if path == THROWN:
        assert on_thrown > 0  # the fetcher's SocketTimeoutException line, read by client.java.timeout
    if path == POLISH:
        text = gzip.decompress(path.read_bytes()).decode()
        assert "Połączenie zerwane przez drugą stronę" in text
        assert any(not "".join(e.continuation).isascii() for e in entries)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_logs_give_the_same_events_and_accounting_with_either_screen(path, monkeypatch):
    def read(compiled: bool):
        monkeypatch.setattr(rules, "COMPILED", compiled)
        RULES._settled.clear()
        events, summary = parse_source(path.read_bytes(), SourceContext(str(path.name), "c", None))
        return ([ev.as_row() for ev in expand_runs(events)], summary.to_json(),
                [(q.source_pos, q.category, q.reason, q.raw) for q in summary.samples])

    got = read(True)
    assert got == read(False)
    assert got[0] or path == POLISH


def test_each_branch_of_the_screen_is_the_python_screens():
    """Needles made to hit each branch: the first needle absent, a later one absent, a needle-less rule, the thrown
    line read only where the rule reads it, a start past some rules, non-ASCII on both sides, the pair table's
    shortcut (three rules or more) and memmem alone (fewer)."""
    needles = (("Expiring ", (" record(s) for ",)), ("", ()), ("OutOfMemoryError", ()), ("drugą", ("zerwane",)),
               ("x", ()), ("Connection to node ", ("could not be established",)))
    for flags in (bytes(6), b"\1\0\1\0\0\1", b"\1" * 6):
        for message in ("Expiring 3 record(s) for t-0", "Expiring 3 records", "", "Połączenie zerwane przez drugą",
                        "Connection to node 1 could not be established. Broker may not be available.", "xx"):
            for thrown in (None, "java.lang.OutOfMemoryError: Java heap space",
                           "org.apache.kafka.common.errors.TimeoutException: Expiring 2 record(s) for t-1",
                           "java.io.IOException: Połączenie zerwane przez drugą stronę"):
                for start in range(len(needles) + 1):
                    for n in (needles, needles[:2], needles[2:4]):
                        if start <= len(n):
                            assert _C(n, flags, message, thrown, start) == next_wanted(n, flags, message, thrown,
                                                                                      start), (message, thrown, start)
    # a needle only in the thrown line is found there (odd), and only for a rule that reads it
    assert _C(needles[2:3], b"\1", "Uncaught exception", "java.lang.OutOfMemoryError: x", 0) == 1
    assert _C(needles[2:3], b"\0", "Uncaught exception", "java.lang.OutOfMemoryError: x", 0) == -1


def _any_rule_wants(logger, message: str, cont: list[str]) -> bool:
    """The screen as the rules define it, rule by rule: the routine scan hands an entry to classify when this holds."""
    thrown = cont[0] if cont else None
    for rule in RULES.rules:
        if not rule.logger_matches(logger):
            continue
        needles = rule.needles or ("",)
        if all(n in message for n in needles):
            return True
        if rule.thrown and thrown is not None and all(n in thrown for n in needles):
            return True
    return False


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_routine_scan_screens_each_real_entry_as_its_rules_define(path, compiled, monkeypatch):
    entries = _entries(path, monkeypatch)
    monkeypatch.setattr(rules, "COMPILED", compiled)
    wanted_by_thrown = routine = 0
    for e in entries:
        want = _any_rule_wants(e.logger, e.message, e.continuation)
        assert RULES.wants(e.logger, e.message, e.continuation) == want, e.line_no
        wanted_by_thrown += want and not _any_rule_wants(e.logger, e.message, [])
        routine += not want
        # the same entry cut to its header line: wanted by its message alone, or routine
        assert RULES.wants(e.logger, e.message, []) == _any_rule_wants(e.logger, e.message, []), e.line_no
    assert routine > 0
    if path == THROWN:
        assert wanted_by_thrown > 0
