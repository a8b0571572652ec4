"""Machinery for message templates: a rule = logger filter + cheap substring test + regex + builder.

The templates themselves (the grammar of Kafka's messages, per version) live in
``parsers/broker_logs/templates/``; this module only knows how to pick candidate rules
fast. Classification is two-stage, as months of logs demand: the logger name
selects a handful of rules (memoised per logger), substring tests discard most
lines, and only then a regex runs. Regexes are anchored and avoid nested
quantifiers so 10 kB ``HashMap(...)`` lines cannot make them backtrack.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from parsers.broker_logs.log4j_layout import LogEntry
from parsers.schema import Event, EventRun

try:  # the needle screen in C (setup.py builds it; without it, or in an older build, the same in Python)
    from parsers.broker_logs import _routine
except ImportError:  # pragma: no cover - a machine without a C compiler
    _routine = None
_NEXT_WANTED_C = getattr(_routine, "next_wanted", None)
# Off: classify screens in Python (the equivalence test compares the two).
COMPILED = True


def next_wanted(needles: tuple, thrown_flags: bytes, message: str, thrown: str | None, start: int) -> int:
    """The first rule i >= start whose needles (first, rest) are all in the message: 2 * i; else, for a rule that
    reads a thrown exception's first line (thrown_flags[i]), all in ``thrown``: 2 * i + 1; -1 when none.
    ``_routine.next_wanted`` is the same in C."""
    for i in range(start, len(needles)):
        first, rest = needles[i]
        if first in message and (not rest or all(n in message for n in rest)):
            return 2 * i
        if thrown_flags[i] and thrown is not None and first in thrown and all(n in thrown for n in rest):
            return 2 * i + 1
    return -1

# Entries settled by their text are remembered up to this many, of messages up to this long.
_SETTLED_MAX = 10_000
_SETTLED_CHARS = 2_000
_OTHER = ("other", None)

Builder = Callable[[LogEntry, "re.Match[str]"], "Event | EventRun | Sequence[Event] | None"]


@dataclass(frozen=True)
class Rule:
    name: str
    loggers: tuple[str, ...] | None  # exact names, or prefixes ending in '*'; None = any logger
    needles: tuple[str, ...]  # every needle must occur in the message; () = the regex alone decides
    regex: "re.Pattern[str]"
    build: Builder
    search: bool = False  # regex.search instead of regex.match (for templates after a variable prefix)
    not_loggers: tuple[str, ...] = ()  # logger-name prefixes this rule never applies to (with loggers=None)
    # Also read the thrown exception's own line (the first continuation line): applications log
    # "send failed" and put the client's words, naming the partition, in the exception.
    thrown: bool = False
    # The builder declines by the entry's message and continuation alone, never its time, place or writer: an
    # entry it declined may be settled by its text (RuleSet.classify).
    declines_by_text: bool = False
    # The builder declines by the message and the first continuation line alone (when that line is not blank; a
    # builder may look past a blank one): an entry with continuation lines it declined may be settled by those two.
    declines_by_head: bool = False

    def logger_matches(self, logger: str | None) -> bool:
        if logger is None:
            # A line without a logger (custom layout) meets the templates that can tell by the text
            # alone; a needle-less rule relies on its logger filter and would match anything.
            return bool(self.needles) or self.loggers is None
        for pat in self.not_loggers:
            if logger.startswith(pat):
                return False
        if self.loggers is None:
            return True
        for pat in self.loggers:
            if pat.endswith("*"):
                if logger.startswith(pat[:-1]):
                    return True
            elif logger == pat:
                return True
        return False


class _NeedleTable(dict):
    """logger -> the (first, rest) needles of the rules that may want its entries: ``screen`` without the
    rules, as the compiled routine scan (parsers/broker_logs/_routine.c) asks for them."""

    def __init__(self, rules: "RuleSet"):
        super().__init__()
        self.rules = rules

    def __missing__(self, logger: str) -> tuple:
        got = tuple((first, rest) for first, rest, _ in self.rules.screen(logger))
        if len(self) < 10_000:
            self[logger] = got
        return got


class RuleSet:
    def __init__(self, rules: Iterable[Rule]):
        self.rules: tuple[Rule, ...] = tuple(rules)
        names = [r.name for r in self.rules]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"duplicate rule names: {sorted(dupes)}")
        # logger -> ((first needle, other needles, rule), ...): most lines fail the first needle,
        # so the hot loop tests one substring per rule and nothing else.
        self._by_logger: dict[str | None, tuple[tuple[str, tuple[str, ...], Rule], ...]] = {}
        self.needles = _NeedleTable(self)
        # (logger, message) -> (category, why) of entries without continuation lines that gave no events, where
        # the outcome is the text's alone (no builder ran, or only builders that decline by text): a controller
        # writes the same empty "Topics not in preferred replica for broker N Map()" every five minutes per
        # broker, and each tried every controller rule. (logger, message, first continuation line) -> the same,
        # of entries with continuation lines whose declining builders read no further (Rule.declines_by_head):
        # ZooKeeper's client writes "Session 0x... for server ..., Closing socket connection..." with a
        # ConnectException's stack every second its server is down (~52,000 entries in 0.27 GB of real logs).
        self._settled: dict[tuple, tuple[str, str | None]] = {}
        # logger -> (its rules, their (first, rest) needles, which read a thrown exception): classify's screen
        self._plans: dict[str | None, tuple[tuple[Rule, ...], tuple, bytes]] = {}

    def for_logger(self, logger: str | None) -> tuple[Rule, ...]:
        return tuple(r for _, _, r in self.screen(logger))

    def screen(self, logger: str | None) -> tuple[tuple[str, tuple[str, ...], Rule], ...]:
        got = self._by_logger.get(logger)
        if got is None:
            got = tuple((r.needles[0] if r.needles else "", r.needles[1:], r)
                        for r in self.rules if r.logger_matches(logger))
            if len(self._by_logger) < 10_000:
                self._by_logger[logger] = got
        return got

    def _plan(self, logger: str | None) -> tuple[tuple[Rule, ...], tuple, bytes]:
        screen = self.screen(logger)
        plan = (tuple(r for _, _, r in screen), tuple((first, rest) for first, rest, _ in screen),
                bytes(r.thrown for _, _, r in screen))
        if len(self._plans) < 10_000:
            self._plans[logger] = plan
        return plan

    def wants(self, logger: str | None, message: str, cont: list[str]) -> bool:
        """Would classify try some rule's regex on this entry: are a rule's needles all in the message, or, for a
        rule that reads a thrown exception, all in the first continuation line? (No: the entry is routine.)"""
        plan = self._plans.get(logger)
        if plan is None:
            plan = self._plan(logger)
        nxt = _NEXT_WANTED_C if COMPILED and _NEXT_WANTED_C is not None else next_wanted
        return nxt(plan[1], plan[2], message, cont[0] if cont else None, 0) >= 0

    def settled_other(self, logger: str | None, message: str, head: str | None) -> bool:
        """Is an entry of this message (and, with continuation lines, this first one: ``head``; None without) known
        to be routine ('other', no events) by those alone? classify remembered one; the scan then makes no LogEntry.
        A blank head is never remembered."""
        return self._settled.get((logger, message) if head is None else (logger, message, head)) == _OTHER

    def classify(self, entry: LogEntry) -> tuple[str, list[Event], str | None]:
        """('parsed', events, None) | ('other', [], None) | ('unrecognized', [], why). The events may hold
        EventRuns (one for many events of a line that differ in a few fields)."""
        cont = entry.continuation
        # The outcome is a function of the key while no builder says otherwise: the screen and the regexes read the
        # message and the first continuation line only (the thrown exception's); a blank one is never a key.
        if cont:
            thrown = cont[0]
            key: tuple | None = (entry.logger, entry.message, thrown) if thrown.strip() else None
        else:
            thrown = None
            key = (entry.logger, entry.message)
        if key is not None:
            known = self._settled.get(key)
            if known is not None:
                return known[0], [], known[1]
        tried: list[str] | None = None
        plan = self._plans.get(entry.logger)
        if plan is None:
            plan = self._plan(entry.logger)
        rules, needles, flags = plan
        nxt = _NEXT_WANTED_C if COMPILED and _NEXT_WANTED_C is not None else next_wanted
        message = entry.message
        # One screen per rule that may want the entry, not one test per rule of its logger in Python.
        k = nxt(needles, flags, message, thrown, 0)
        while k >= 0:
            i = k >> 1
            rule = rules[i]
            msg = thrown if k & 1 else message
            m = rule.regex.search(msg) if rule.search else rule.regex.match(msg)
            if m is None:
                if needles[i][0]:  # without needles a miss is routine, not a missed variant
                    if tried is None:
                        tried = []
                    tried.append(rule.name)
                k = nxt(needles, flags, message, thrown, i + 1)
                continue
            out = rule.build(entry, m)
            if out is None:
                if key is not None and not (rule.declines_by_head if cont else rule.declines_by_text):
                    key = None
                k = nxt(needles, flags, message, thrown, i + 1)
                continue  # the builder looked closer and declined: not this template
            events = [out] if isinstance(out, (Event, EventRun)) else list(out)
            for ev in events:
                if ev.detail is None:
                    ev.detail = {}
                ev.detail.setdefault("template", rule.name)
            return "parsed", events, None
        outcome = ("unrecognized", "looks like " + ", ".join(tried) + " but did not parse") if tried else ("other", None)
        if key is not None and len(entry.message) <= _SETTLED_CHARS and len(thrown or "") <= _SETTLED_CHARS:
            if len(self._settled) >= _SETTLED_MAX:
                self._settled.clear()
            self._settled[key] = outcome
        return outcome[0], [], outcome[1]


# --- small helpers shared by the template modules -------------------------------------------------

_INT_LIST = re.compile(r"-?\d+")
_FIND_INTS = _INT_LIST.findall


def int_list(text: str | None) -> list[int]:
    """'1,2, 3' / 'List(1, 2)' / '[1,2]' / 'Set(1, 2)' / '' -> [1, 2, 3]."""
    if not text:
        return []
    return list(map(int, _FIND_INTS(text)))


def opt_int(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def split_topic_partition(tp: str) -> tuple[str, int] | None:
    """'my-topic-12' -> ('my-topic', 12) (split at the last '-'); '[t,0]' -> ('t', 0)."""
    topic, sep, part = tp.rpartition("-")
    if part.isdigit() and topic and not topic[0].isspace():
        return topic, int(part)  # the common form, already stripped (it ends in a digit, starts with no space)
    tp = tp.strip()
    if tp.startswith("[") and tp.endswith("]") and "," in tp:
        topic, _, part = tp[1:-1].rpartition(",")
        if part.strip().lstrip("-").isdigit():
            return topic, int(part)
        return None
    topic, sep, part = tp.rpartition("-")
    if not sep or not topic or not part.isdigit():
        return None
    return topic, int(part)
