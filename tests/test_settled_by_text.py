"""An entry without continuation lines that gives no events is settled by its text: RuleSet.classify remembers the
outcome ('other', or 'unrecognized' and why) of a (logger, message) when no builder ran or only builders that
decline by the text alone did (Rule.declines_by_text), and answers the next such entry from it. A controller writes
the same empty "Topics not in preferred replica for broker N Map()" every five minutes per broker
(KafkaController.checkAndTriggerPartitionRebalance, DEBUG), and each of them tried every controller rule.

Independent truth: the same real controller logs read with nothing remembered (every entry through every rule, as
before): the same line accounting, the same events, the same quarantine."""
from __future__ import annotations

import gzip
import re

import pytest
from conftest import REAL_LOGS2

from parsers.broker_logs import rules
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
