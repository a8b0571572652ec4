"""An entry without continuation lines that gives no events is settled by its text: RuleSet.classify remembers the
outcome ('other', or 'unrecognized' and why) of a (logger, message) when no builder ran or only builders that
decline by the text alone did (Rule.declines_by_text), and answers the next such entry from it. A controller writes
the same empty "Topics not in preferred replica for broker N Map()" every five minutes per broker
(KafkaController.checkAndTriggerPartitionRebalance, DEBUG), and each of them tried every controller rule.

An entry with continuation lines is settled by its message and its first continuation line where the builders that
declined it read no further (Rule.declines_by_head): ZooKeeper's client (ClientCnxn) writes "Session 0x... for server
..., Closing socket connection. Attempting reconnect ..." with a ConnectException's stack every second or two its
server is down; the default-layout scan then counts the next one as routine without making a LogEntry.

Independent truth: the same real controller and server logs read with nothing remembered (every entry through every
rule, as before): the same line accounting, the same events, the same quarantine; and the real lines themselves."""
from __future__ import annotations

import gzip
import re

import pytest
from conftest import REAL_LOGS, REAL_LOGS2

from parsers.broker_logs import default_layout_scan, rules
from parsers.broker_logs.log4j_layout import LogEntry
from parsers.broker_logs.rules import Rule, RuleSet
from parsers.broker_logs.templates import RULES
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import Event, expand_runs

# Controllers of Kafka 2.7 (720 empty listings in an hour), 3.4, 2.3 (beside full ones, and "Starting replica
# leader election (PREFERRED) for partitions  triggered by AutoTriggered" naming none) and 0.10 ("[Controller 0]:
# topics not in preferred replica Map()").
FILES = (
    "jay0911__kafka-docker/kafka_2.13-2.7.0/logs/controller.log.2021-11-11-18.gz",
    "franklinzhao__kafka-nodejs-setup/kafka/logs/controller.log.gz",
    "Raghavendralacharya__kafka-node/kafka_2.12-2.3.0/logs/controller.log.2019-08-29-21.gz",
    "pmitra43__kafka_load_generator/kafka_2.11-0.10.2.0/logs/controller.log.2017-06-26-13.gz",
)
_EMPTY = re.compile(r"opics not in preferred replica(?: for broker \d+)? \w*\(\)$")


_CHARS = rules._SETTLED_CHARS


def _read(name: str, remember: bool, monkeypatch):
    monkeypatch.setattr(rules, "_SETTLED_CHARS", _CHARS if remember else -1)  # -1: nothing is remembered
    RULES._settled.clear()
    events, summary = parse_source((REAL_LOGS2 / name).read_bytes(), SourceContext(name, "c", None))
    return [ev.as_row() for ev in expand_runs(events)], summary


@pytest.mark.parametrize("name", FILES)
def test_real_controller_logs_are_accounted_as_when_every_entry_tried_every_rule(name, monkeypatch):
    want_rows, want = _read(name, False, monkeypatch)
    assert not RULES._settled
    got_rows, got = _read(name, True, monkeypatch)
    assert got.to_json() == want.to_json() and got.balanced()
    assert [(q.source_pos, q.category, q.reason, q.raw) for q in got.samples] == \
        [(q.source_pos, q.category, q.reason, q.raw) for q in want.samples]
    assert got_rows == want_rows
    # the empty listings were settled by their text (few distinct texts, many lines)
    empty = [k for k in RULES._settled if _EMPTY.search(k[1])]
    assert empty and all(RULES._settled[k] == ("other", None) for k in empty)
    lines = gzip.decompress((REAL_LOGS2 / name).read_bytes()).decode("utf-8", "replace").splitlines()
    assert sum(1 for line in lines if _EMPTY.search(line.rsplit(" (", 1)[0])) > 2 * len(empty)


def _entry(message: str, ts: int, continuation=()) -> LogEntry:
    return LogEntry(1, 1 + len(continuation), ts, "2020-01-01 00:00:00,000", "DEBUG", "kafka.controller.X", message,
                    list(continuation), "[2020-01-01 00:00:00,000] DEBUG " + message)


def test_only_builders_that_decline_by_text_let_an_entry_be_settled():
    def by_time(entry, m):  # declines by the entry's time: never settled by text
        return Event("controller_observed") if entry.ts % 2 else None

    def by_text(entry, m):
        return Event("controller_observed") if "".join(entry.continuation) else None

    rs = RuleSet([Rule("t.time", ("kafka.controller.*",), ("at time",), re.compile(r"at time$"), by_time),
                  Rule("t.text", ("kafka.controller.*",), ("by text",), re.compile(r"by text"), by_text,
                       declines_by_text=True),
                  Rule("t.miss", ("kafka.controller.*",), ("missed",), re.compile(r"never$"), by_time)])
    assert rs.classify(_entry("at time", 2))[0] == "other"
    assert rs.classify(_entry("at time", 3))[0] == "parsed"  # not answered from the first
    assert rs.classify(_entry("by text", 2))[0] == "other"
    assert ("kafka.controller.X", "by text") in rs._settled
    assert rs.classify(_entry("by text", 3))[0] == "other"
    assert rs.classify(_entry("by text", 2, ["more"]))[0] == "parsed"  # continuation lines: never from memory
    assert rs.classify(_entry("missed it", 2)) == ("unrecognized", [], "looks like t.miss but did not parse")
    assert rs.classify(_entry("missed it", 5)) == ("unrecognized", [], "looks like t.miss but did not parse")
    assert rs._settled[("kafka.controller.X", "missed it")] == (
        "unrecognized", "looks like t.miss but did not parse")


# ZooKeeper clients whose server went away: Kafka 3.9.0 (2,235 reconnects in an hour, two servers' addresses), 0.11
# ("for server null", and one "Connection reset by peer" that is a loss), 3.4.0 ("for sever", each session's loss
# then its refused reconnects).
ZK_FILES = (
    REAL_LOGS2 / "airusong__kafka/kafka_2.13-3.9.0/logs/server.log.2024-11-12-14.gz",
    REAL_LOGS / "oridonner__KafkaOnDocker/kafka_2.11-0.11.0.0/logs/server.log.2018-04-28-23.gz",
    REAL_LOGS / "gaparedes__kafka-demo/logs/server.log.gz",
)
_RECONNECT = re.compile(r"Closing socket connection\. Attempting reconnect|unexpected error, closing socket connection")


def _read_path(path, remember: bool, compiled: bool, monkeypatch):
    monkeypatch.setattr(rules, "_SETTLED_CHARS", _CHARS if remember else -1)
    monkeypatch.setattr(default_layout_scan, "COMPILED", compiled)
    RULES._settled.clear()
    events, summary = parse_source(path.read_bytes(), SourceContext(path.name, "c", None))
    return ([ev.as_row() for ev in expand_runs(events)], summary.to_json(),
            [(q.source_pos, q.category, q.reason, q.raw) for q in summary.samples])


@pytest.mark.parametrize("compiled", (True, False), ids=("compiled_scan", "python_scan"))
@pytest.mark.parametrize("path", ZK_FILES, ids=("3.9.0", "0.11.0.0", "3.4.0"))
def test_real_zookeeper_reconnects_are_accounted_as_when_every_entry_tried_every_rule(path, compiled, monkeypatch):
    want = _read_path(path, False, compiled, monkeypatch)
    assert not RULES._settled
    got = _read_path(path, True, compiled, monkeypatch)
    assert got == want
    heads = [k for k in RULES._settled if len(k) == 3 and _RECONNECT.search(k[1])]
    assert heads and all(RULES._settled[k] == ("other", None) for k in heads)
    assert all(k[2].startswith("java.net.ConnectException") for k in heads)
    text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
    assert len(_RECONNECT.findall(text)) > 2 * len(heads)  # most were answered from memory


_GAPAREDES = REAL_LOGS / "gaparedes__kafka-demo/logs/server.log.gz"


def _zk_entry(lines: list[str], at: int, n: int, head: list[str] = ()) -> LogEntry:
    """The entry of lines[at] (1-based) with its next n - 1 lines, as the layout reads it."""
    line = lines[at - 1]
    message, _, logger = line[line.index("] WARN ") + 7:].rpartition(" (")
    return LogEntry(at, n, 0, line[1:24], "WARN", logger[:-1], message, [*head, *lines[at:at + n - 1]], line)


def test_a_reconnect_is_settled_by_its_message_and_first_continuation_line_only():
    lines = gzip.decompress(_GAPAREDES.read_bytes()).decode().splitlines()
    refused = _zk_entry(lines, 2853, 7)  # ":2853 ... Closing socket connection ..." then a ConnectException's stack
    lost = _zk_entry(lines, 2835, 18)  # ":2835 the same message, then EndOfStreamException: the server closed it
    assert refused.message == lost.message and refused.continuation[0] != lost.continuation[0]
    RULES._settled.clear()
    assert RULES.classify(refused) == ("other", [], None)
    assert RULES.settled_other(refused.logger, refused.message, refused.continuation[0])
    assert not RULES.settled_other(lost.logger, lost.message, lost.continuation[0])
    # the same message with another first continuation line is not answered from memory: a loss, as the line says
    category, events, _ = RULES.classify(lost)
    assert category == "parsed" and [ev.event_type for ev in events] == ["zk_disconnected"]
    assert events[0].session_id == 0x1000835cdb60004 and events[0].detail["cause"].startswith(
        "EndOfStreamException: Unable to read additional data from server sessionid 0x1000835cdb60004")
    # a blank first continuation line is no key: the builder reads the first line that is not blank
    RULES._settled.clear()
    assert RULES.classify(_zk_entry(lines, 2853, 7, [""]))[0] == "other"
    assert not RULES._settled
    assert RULES.classify(_zk_entry(lines, 2835, 18, [""]))[0] == "parsed"


def test_only_builders_that_decline_by_the_head_let_an_entry_with_continuation_be_settled():
    calls = []

    def by_tail(entry, m):  # reads the last continuation line: never settled by the head
        calls.append(entry.continuation[-1])
        return Event("controller_observed") if entry.continuation[-1] == "yes" else None

    rs = RuleSet([Rule("t.tail", ("kafka.controller.*",), ("tail",), re.compile(r"tail"), by_tail,
                       declines_by_text=True),
                  Rule("t.head", ("kafka.controller.*",), ("head",), re.compile(r"head"), by_tail,
                       declines_by_head=True)])
    assert rs.classify(_entry("tail", 1, ["a", "no"]))[0] == "other"
    assert rs.classify(_entry("tail", 1, ["a", "yes"]))[0] == "parsed"  # declines_by_text: no key with continuation
    assert not rs._settled
    assert rs.classify(_entry("head", 1, ["a", "no"]))[0] == "other"
    assert rs._settled == {("kafka.controller.X", "head", "a"): ("other", None)}
    assert rs.classify(_entry("head", 1, ["a", "yes"]))[0] == "other"  # answered by (message, "a"), as declared
    assert calls == ["no", "yes", "no"]
