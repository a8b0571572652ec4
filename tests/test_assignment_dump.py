"""A controller's assignment dump (KafkaController.checkAndTriggerPartitionRebalance, DEBUG "preferred replicas by
broker Map(...)" / "topics not in preferred replica Map(...)") is read the same by the compiled reading
(parsers/broker_logs/_dumps.c) and by the Python loop of templates/controller.py's _assignments_listed: the same
events, field for field, on every such line of the real corpora and the samples, and on made-up dumps that hit
each shape the compiled side leaves to Python."""
from __future__ import annotations

import gzip
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.broker_logs.templates import controller
from conftest import REAL_LOGS, REAL_LOGS2, SAMPLES

RULES = [r for r in controller.RULES if r.build is controller._assignments_listed]
# The message as the layouts hand it: from the controller's ident to the end of the line.
_MESSAGE = re.compile(r"\[Controller (?:id=)?\d+\]:? .*")


def _read(entry_line: str, compiled: bool):
    """The events the template gives for one line (runs expanded), None if it declines; and whether the
    compiled reading answered (not None)."""
    msg = _MESSAGE.search(entry_line)
    if msg is None:
        return None, False
    for rule in RULES:
        m = rule.regex.search(msg.group(0))
        if m is None:
            continue
        entry = SimpleNamespace(line=entry_line, continuation=None)
        took = compiled and controller._dumps.assignments(
            m["dump"], entry_line[: entry_line.find(m["what"]) + len(m["what"])] + " ... ") is not None
        old = controller.COMPILED
        controller.COMPILED = compiled
        try:
            out = rule.build(entry, m)
        finally:
            controller.COMPILED = old
        return (None if out is None else [e.as_row() for e in out.events()]), took
    return None, False


def _dump_lines(root: Path) -> list[str]:
    needles = (b"referred replicas by broker ", b"opics not in preferred replica")
    out = []
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.suffix in (".tsv", ".md", ".json"):
            continue
        data = p.read_bytes()
        if data[:2] == b"\x1f\x8b":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError):
                continue
        if not any(n in data for n in needles):
            continue
        text = data.decode("utf-8", errors="replace")
        out += [line for line in text.splitlines() if any(n.decode() in line for n in needles)]
    # a controller repeats the same dump every five minutes: each text once (its first line)
    once = {}
    for line in out:
        m = _MESSAGE.search(line)
        once.setdefault(m.group(0) if m else line, line)
    return list(once.values())


@pytest.fixture(autouse=True)
def _built():
    assert controller._dumps is not None, "the C extension was not built, or built from an older _dumps.c " \
        "(pip install -e . or python setup.py build_ext --inplace builds it)"


@pytest.mark.parametrize("root", [SAMPLES, REAL_LOGS, REAL_LOGS2], ids=lambda p: p.name)
def test_every_real_assignment_dump_reads_the_same_compiled_and_in_python(root):
    lines = _dump_lines(root)
    assert lines, root
    compiled_lines = events = 0
    for line in lines:
        c, took = _read(line, True)
        assert c == _read(line, False)[0], line[:300]
        compiled_lines += took
        events += len(c or ())
    # the compiled reading answered for nearly every line (equality is not reached by always falling back)
    assert compiled_lines >= 0.9 * len(lines), (compiled_lines, len(lines))
    assert events > len(lines)


HEAD = "[2019-05-02 10:15:00,004] DEBUG [Controller id=1] "
MADE_UP = [
    "preferred replicas by broker Map(1 -> Map(t-0 -> Vector(1, 2), t-1 -> Vector(2, 1)), 2 -> Map(u-3 -> Vector(2)))",
    "preferred replicas by broker Map(0 -> Map([twitterStream,0] -> List(0), [a-b,12] -> List(0, 1)))",
    "preferred replicas by broker Map()",
    "topics not in preferred replica for broker 2 Map(t-0 -> ArrayBuffer(1, 2))",
    # shapes left to Python: an empty AR, a broker's empty map, "[t, 0]", a partition without a number,
    # spaces inside an AR, a bracket without a comma, numbers longer than 18 digits, non-ASCII, \x1c as space
    "preferred replicas by broker Map(1 -> Map(t-0 -> List(), t-1 -> List(1)))",
    "preferred replicas by broker Map(1 -> Map(), 2 -> Map(t-1 -> List(2)))",
    "preferred replicas by broker Map(1 -> Map([t, 0] -> List(1), [t,-1] -> List(1)))",
    "preferred replicas by broker Map(1 -> Map(t -> List(1), -3 -> List(1), t-x -> List(2)))",
    "preferred replicas by broker Map(1 -> Map(t-0 -> List(1 2), t-1 -> List(1,,2), t-2 -> List(1,)))",
    "preferred replicas by broker Map(1 -> Map([abc] -> List(1), [abc-1 -> List(2)))",
    "preferred replicas by broker Map(1 -> Map(t-1234567890123456789 -> List(12345678901234567890)))",
    "preferred replicas by broker Map(1 -> Map(tö-0 -> List(1), t-1 -> List(1)))",
    "preferred replicas by broker Map(1 -> Map(a\x1cb-0 -> List(1), t-1 -> List(1)))",
    "preferred replicas by broker Map(1 -> Map(t-007 -> List( 01 , 2 )))",
    "preferred replicas by broker Map(1 -> Map([x]y -> List(1), [x]y-0 -> List(1), [[t,1] -> List(3)))",
    # an event's partition and replicas are int32 columns: the largest is read compiled, one past it left to Python
    "preferred replicas by broker Map(1 -> Map(t-2147483647 -> List(2147483647, 1)))",
    "preferred replicas by broker Map(1 -> Map(t-1 -> List(1), t-2147483648 -> List(1)))",
    "preferred replicas by broker Map(1 -> Map(t-1 -> List(1), t-2 -> List(2, 2147483648)))",
]


@pytest.mark.parametrize("message", MADE_UP)
def test_made_up_dumps_read_the_same_compiled_and_in_python(message):
    line = HEAD + message + " (kafka.controller.KafkaController)"
    c, took = _read(line, True)
    assert c == _read(line, False)[0]
    if message == MADE_UP[0]:
        assert took and [(e["topic"], e["partition"], e["replicas"]) for e in c] == [
            ("t", 0, [1, 2]), ("t", 1, [2, 1]), ("u", 3, [2])]
        assert c[2]["raw"] == HEAD + "preferred replicas by broker ... u-3 -> Vector(2) ..."
    if "2147483647" in message:
        assert took and [(e["partition"], e["replicas"]) for e in c] == [(2147483647, [2147483647, 1])]
    if "2147483648" in message:
        assert not took and 2147483648 in [x for e in c for x in [e["partition"]] + e["replicas"]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["t-0", "t-12", "[t,0]", "[a-b,3]", " -> ", "List(", "Vector(", "Map(", ")", ", ",
                                 ",", " ", "1", "23", "-", "[", "]", "x", "ö", "\x1c", "\t", "(", ">", "_"]),
                max_size=40))
def test_any_dump_text_reads_the_same_compiled_and_in_python(parts):
    line = HEAD + "preferred replicas by broker Map(" + "".join(parts) + ")"
    c, _ = _read(line, True)
    assert c == _read(line, False)[0]
