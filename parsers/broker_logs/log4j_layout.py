"""The line layout of Kafka's log files (log4j / log4j2), and grouping into entries.

Kafka ships ``[%d] %p %m (%c)%n`` in every version from 0.8 to 4.x:
``[2022-02-13 04:12:42,920] ERROR message text (state.change.logger)``.
Operators customise it, so a few other layouts are recognised as well (ISO-8601
with zone, ``.`` before millis, no logger suffix, JSON layout). One layout is
chosen per file, from its first lines.

An *entry* is a header line plus the continuation lines under it (stack traces,
``KafkaConfig values:`` dumps, long ``HashMap(...)`` dumps broken over lines).
"""
from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass
from typing import Callable, Iterator
from zoneinfo import ZoneInfo

LEVELS = frozenset(("TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL"))
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass(slots=True)
class Header:
    ts: int  # epoch microseconds, UTC
    ts_raw: str
    level: str
    message: str
    logger: str | None


@dataclass(slots=True)
class LogEntry:
    line_no: int  # 1-based line of the header
    n_lines: int  # header + continuation lines
    ts: int
    ts_raw: str
    level: str
    logger: str | None
    message: str  # first line's message (without prefix stamp and logger)
    continuation: list[str]  # continuation lines (capped, see MAX_KEPT_CONTINUATION)
    line: str = ""  # the header line exactly as written

    def full_text(self) -> str:
        """The entry as written: header line plus the kept continuation lines."""
        if not self.continuation:
            return self.line
        return self.line + "\n" + "\n".join(self.continuation)


# KafkaConfig dumps are 230-400 lines (one setting each) and must be kept whole.
MAX_KEPT_CONTINUATION = 1000


class BadTimestamp(ValueError):
    pass


class LocalClock:
    """Local wall-clock text -> UTC epoch micros, for one zone, cached per hour.

    log4j's ``%d`` has no zone; the user says which zone the brokers ran in.
    Within an hour the UTC offset is constant except at a DST change, where the
    first occurrence of an ambiguous hour is taken (``fold=0``).
    """

    def __init__(self, tz: str = "UTC"):
        self.zone = _dt.timezone.utc if tz in ("UTC", "Z", "utc") else ZoneInfo(tz)
        self._hours: dict[str, int] = {}

    def hour_base(self, ymdh: str) -> int:
        base = self._hours.get(ymdh)
        if base is None:
            try:
                d = _dt.datetime(int(ymdh[0:4]), int(ymdh[5:7]), int(ymdh[8:10]), int(ymdh[11:13]), tzinfo=self.zone)
            except ValueError as exc:
                raise BadTimestamp(str(exc)) from None
            delta = d - _EPOCH
            base = (delta.days * 86_400 + delta.seconds) * 1_000_000
            if len(self._hours) > 100_000:
                self._hours.clear()
            self._hours[ymdh] = base
        return base

    def micros(self, text: str) -> int:
        """'2022-02-13 04:12:42,920' (or '.920', or 'T') -> epoch micros."""
        # A damaged digit (a NUL, a flipped bit) makes the stamp impossible, not the parser fail.
        mm_s, ss_s, digits = text[14:16], text[17:19], text[20:26]
        if len(mm_s + ss_s) != 4 or not (mm_s + ss_s + digits).isascii() or not (mm_s + ss_s + digits).isdigit():
            raise BadTimestamp(f"not a time of day in {text!r}")
        mm = int(mm_s)
        ss = int(ss_s)
        if mm > 59 or ss > 60:
            raise BadTimestamp(f"minute/second out of range in {text!r}")
        micros = 0
        if digits:
            micros = int(digits) * 10 ** (6 - len(digits))
        return self.hour_base(text[:13]) + (mm * 60 + ss) * 1_000_000 + micros


_ISO_OFFSET = re.compile(r"^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)$")


def iso_with_zone_micros(text: str) -> int:
    m = _ISO_OFFSET.match(text)
    if not m:
        raise BadTimestamp(text)
    frac = (m.group(3) or "0")[:6].ljust(6, "0")
    zone = m.group(4)
    if zone == "Z":
        tz = _dt.timezone.utc
    else:
        zone = zone.replace(":", "")
        sign = -1 if zone[0] == "-" else 1
        tz = _dt.timezone(sign * _dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5])))
    try:
        d = _dt.datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}").replace(tzinfo=tz)
    except ValueError as exc:
        raise BadTimestamp(str(exc)) from None
    delta = d - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + int(frac)


_LOGGER_NAME = re.compile(r"[\w.$-]+")


def _split_logger(rest: str) -> tuple[str, str | None]:
    """'message text (kafka.controller.KafkaController)' -> (message, logger).

    A thread name after the logger (``... (kafka.controller.KafkaController) [controller-event-thread]``,
    a common customisation) is dropped.
    """
    if rest.endswith("]"):
        j = rest.rfind(") [")
        if j >= 0 and " " not in rest[j + 3 : -1]:
            message, logger = _split_logger(rest[: j + 1])
            if logger is not None:
                return message, logger
    if rest.endswith(")"):
        i = rest.rfind(" (")
        if i >= 0:
            logger = rest[i + 2 : -1]
            # a logger is a Java category name; a message may end in '(Leader:1,ISR:1,...)' with no space
            if _LOGGER_NAME.fullmatch(logger):
                return rest[:i], logger
        elif rest.startswith("(") and " " not in rest:
            return "", rest[1:-1]
    return rest, None


def _take_level(rest: str) -> tuple[str, str] | None:
    sp = rest.find(" ")
    level = rest if sp < 0 else rest[:sp]
    if level not in LEVELS:
        return None
    return ("WARN" if level == "WARNING" else level), ("" if sp < 0 else rest[sp + 1 :])


class Layout:
    """One header grammar. ``parse`` returns a Header, None (not a header), or raises BadTimestamp."""

    name = "?"

    def parse(self, line: str) -> Header | None:  # pragma: no cover - interface
        raise NotImplementedError

    def recognises(self, line: str) -> bool:
        """Is this line a header of this layout (an impossible date included)?"""
        try:
            return self.parse(line) is not None
        except BadTimestamp:
            return True


class KafkaDefaultLayout(Layout):
    """``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)``; '.' before millis and 'T' accepted."""

    name = "kafka-default"

    def __init__(self, clock: LocalClock):
        self.clock = clock

    # The form nearly every line has, in one regex: a plain stamp, a level, a logger (what the
    # general code below makes of such a line, field for field). The greedy message stops at the
    # last " (", where _split_logger looks; a thread name after the logger, WARNING, second 60
    # and zoned stamps are left to the general code.
    STRICT = re.compile(
        r"\[(\d{4}-\d\d-\d\d \d\d):([0-5]\d):([0-5]\d),(\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (.*) \(([^ (]+)\)$"
    )

    def recognises(self, line: str) -> bool:
        return self.STRICT.match(line) is not None or super().recognises(line)

    def parse(self, line: str) -> Header | None:
        m = self.STRICT.match(line)
        if m is not None:
            ymdh, mm, ss, ms, level, message, logger = m.groups()
            try:
                ts = self.clock.hour_base(ymdh) + int(mm) * 60_000_000 + int(ss) * 1_000_000 + int(ms) * 1000
            except BadTimestamp:
                pass  # month 13: the general code raises it with its message
            else:
                return Header(ts, line[1:24], level, message, logger)
        # Cheap structural test first: this runs on every line of months of logs.
        if len(line) < 27 or line[0] != "[" or line[5] != "-" or line[11] not in " T":
            return None
        close = line.find("] ", 20, 40)
        if close < 0:
            return None
        stamp = line[1:close]
        if not (stamp[:4].isdigit() and stamp[13] == ":" and stamp[16] == ":"):
            return None
        tail = stamp[19:]
        if tail and ("+" in tail or "-" in tail or tail[-1] == "Z"):
            # ISO-8601 with zone inside the brackets, e.g. [2024-01-01T10:00:00.123+02:00]
            ts = iso_with_zone_micros(stamp)
        else:
            ts = self.clock.micros(stamp)
        lv = _take_level(line[close + 2 :])
        if lv is None:
            return None
        level, rest = lv
        message, logger = _split_logger(rest)
        return Header(ts, stamp, level, message, logger)


class PlainStampLayout(Layout):
    """``yyyy-MM-dd HH:mm:ss,SSS LEVEL [thread] logger - message`` style (logback/log4j2 custom).

    Also ``yyyy-MM-dd HH:mm:ss,SSS LEVEL message (logger)`` (the Kafka pattern without brackets).
    """

    name = "plain-stamp"
    _rx = re.compile(
        r"^(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)\s+"
        r"(?:\[[^\]]*\]\s+)?(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\s+(.*)$"
    )
    _logger_dash = re.compile(r"^(?:\[[^\]]*\]\s+)?([\w.$]+)\s+-\s+(.*)$")

    def __init__(self, clock: LocalClock):
        self.clock = clock

    def parse(self, line: str) -> Header | None:
        if len(line) < 20 or not line[:4].isdigit() or line[4] != "-":
            return None
        m = self._rx.match(line)
        if not m:
            return None
        stamp, level, rest = m.groups()
        if stamp[-1] == "Z" or "+" in stamp[19:] or "-" in stamp[19:]:
            ts = iso_with_zone_micros(stamp)
        else:
            ts = self.clock.micros(stamp.replace("T", " "))
        level = "WARN" if level == "WARNING" else level
        message, logger = _split_logger(rest)
        if logger is None:
            md = self._logger_dash.match(rest)
            if md:
                logger, message = md.group(1), md.group(2)
        return Header(ts, stamp, level, message, logger)


class JsonLayout(Layout):
    """log4j2 JsonLayout / JsonTemplateLayout / logstash-style: one JSON object per line."""

    name = "json"
    _ts_keys = ("timestamp", "@timestamp", "time", "ts", "instant")
    _msg_keys = ("message", "msg")
    _logger_keys = ("loggerName", "logger_name", "logger", "log.logger")
    _level_keys = ("level", "log.level", "severity")

    def __init__(self, clock: LocalClock):
        self.clock = clock

    def parse(self, line: str) -> Header | None:
        if not line.startswith("{") or not line.rstrip().endswith("}"):
            return None
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return None
        stamp = next((obj[k] for k in self._ts_keys if k in obj), None)
        message = next((obj[k] for k in self._msg_keys if k in obj), None)
        if stamp is None or message is None:
            return None
        if isinstance(stamp, dict) and "epochSecond" in stamp:  # log4j2 "instant"
            ts = int(stamp["epochSecond"]) * 1_000_000 + int(stamp.get("nanoOfSecond", 0)) // 1000
            stamp = str(stamp["epochSecond"])
        elif isinstance(stamp, (int, float)):
            ts = int(stamp * 1000) if stamp > 1e11 else int(stamp * 1_000_000)
            stamp = str(stamp)
        else:
            stamp = str(stamp)
            try:
                ts = iso_with_zone_micros(stamp)
            except BadTimestamp:
                ts = self.clock.micros(stamp.replace("T", " "))
        level = str(next((obj[k] for k in self._level_keys if k in obj), "INFO")).upper()
        level = "WARN" if level == "WARNING" else level
        logger = next((obj[k] for k in self._logger_keys if k in obj), None)
        thrown = obj.get("thrown") or obj.get("exception") or obj.get("stack_trace")
        text = str(message)
        if thrown:
            text += "\n" + (thrown if isinstance(thrown, str) else json.dumps(thrown, sort_keys=True))
        return Header(ts, stamp, level if level in LEVELS else "INFO", text, logger)


class GoLogLayout(Layout):
    """Go's standard ``log`` package, as Go clients (sarama, confluent-kafka-go apps) write:
    ``2021/03/17 22:07:17 message`` or ``[sarama] 2021/03/17 22:07:17.123456 message``.

    No level in the layout: a message that starts with one keeps it, else INFO. The
    bracketed prefix, when present, stands in for the logger name.
    """

    name = "go-log"
    _rx = re.compile(r"^(?:\[([^\]]{1,40})\] )?(\d{4})/(\d\d)/(\d\d) (\d\d:\d\d:\d\d(?:\.\d{1,6})?) (.*)$")

    def __init__(self, clock: LocalClock):
        self.clock = clock

    def parse(self, line: str) -> Header | None:
        if len(line) < 20 or not (line[0] == "[" or line[:4].isdigit()):
            return None
        m = self._rx.match(line)
        if not m:
            return None
        prefix, y, mo, d, hms, message = m.groups()
        ts = self.clock.micros(f"{y}-{mo}-{d} {hms}")
        level = "INFO"
        lv = _take_level(message)
        if lv is not None:
            level, message = lv
        return Header(ts, f"{y}/{mo}/{d} {hms}", level, message, prefix)


LAYOUT_CLASSES: tuple[type[Layout], ...] = (KafkaDefaultLayout, PlainStampLayout, JsonLayout, GoLogLayout)


def choose_layout(sample_lines: list[str], clock: LocalClock) -> Layout | None:
    """The layout that recognises most of the sample's lines (None if none does)."""
    best, best_hits = None, 0
    for cls in LAYOUT_CLASSES:
        layout = cls(clock)
        hits = sum(map(layout.recognises, sample_lines))
        if hits > best_hits:
            best, best_hits = layout, hits
        if best_hits == len(sample_lines):
            break  # a later layout could at most tie, and a tie goes to the earlier one
    return best


@dataclass(slots=True)
class Orphan:
    """A line that belongs to no entry (before the first header) or a damaged header."""

    line_no: int
    text: str
    reason: str  # 'unrecognized' or 'quarantined'
    why: str


def header_of(parse: Callable[[str], "Header | None"], line_no: int, text: str, open_entry: bool
              ) -> tuple[str, "Header | None", Orphan | None]:
    """What a line is to the entries being grouped (``iter_entries`` and the default layout's scan read it so):
    ``("header", h, None)`` starts an entry; ``("bad_stamp", None, orphan)``, an impossible timestamp, ends the
    open entry and is quarantined with the continuation lines after it; ``("orphan", None, orphan)`` is a
    malformed header with no entry open; ``("more", None, None)`` continues the open entry (see ``stray``)."""
    try:
        h = parse(text)
    except BadTimestamp as exc:
        return "bad_stamp", None, Orphan(line_no, text, "quarantined", f"impossible timestamp: {exc}")
    except (ValueError, IndexError) as exc:
        if not open_entry:
            return "orphan", None, Orphan(line_no, text, "unrecognized", f"malformed header: {exc}")
        return "more", None, None
    return ("header", h, None) if h is not None else ("more", None, None)


def stray(line_no: int, text: str, quarantining: bool) -> Orphan:
    """A continuation line with no entry open: of a quarantined entry, or before any header."""
    if quarantining:
        return Orphan(line_no, text, "quarantined", "continuation of a quarantined entry")
    return Orphan(line_no, text, "unrecognized", "no log header before this line")


def iter_entries(
    lines: Iterator[tuple[int, str]],
    layout: Layout,
    on_orphan: Callable[[Orphan], None],
    is_binary: Callable[[str], bool] | None = None,
) -> Iterator[LogEntry]:
    """Group (line_no, text) pairs into entries; report lines that fit no entry.

    Continuation lines count toward their entry (``n_lines``). A header whose
    timestamp is impossible (month 13) is quarantined together with its
    continuation lines. Binary junk lines are quarantined on their own.
    """
    cur: LogEntry | None = None
    quarantining = False
    for line_no, text in lines:
        if is_binary is not None and is_binary(text):
            on_orphan(Orphan(line_no, text, "quarantined", "binary data in a text log"))
            continue
        kind, h, orphan = header_of(layout.parse, line_no, text, cur is not None)
        if kind == "bad_stamp":
            if cur is not None:
                yield cur
                cur = None
            quarantining = True
        elif kind == "header":
            if cur is not None:
                yield cur
            quarantining = False
            cur = LogEntry(line_no, 1, h.ts, h.ts_raw, h.level, h.logger, h.message, [], text)
            continue
        elif kind == "more":
            if cur is None:
                on_orphan(stray(line_no, text, quarantining))
                continue
            cur.n_lines += 1
            if len(cur.continuation) < MAX_KEPT_CONTINUATION:
                cur.continuation.append(text)
            continue
        on_orphan(orphan)
    if cur is not None:
        yield cur
