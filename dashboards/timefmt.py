"""Epoch microseconds <-> the wall-clock strings Plotly's date axes show (in the reader's time zone).

Plotly's date axes have no time zone: they show the strings they are given. So
every time is converted to a naive local string of ``tz`` here, once, and the
page states which zone it is in. Microseconds are kept (Plotly parses any
number of fractional digits), trailing zeros are not, to keep pages small.
"""
from __future__ import annotations

import datetime as dt
from functools import lru_cache

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@lru_cache(maxsize=16)
def _zone(tz: str) -> dt.tzinfo:
    if tz in ("UTC", "Z", "utc", ""):
        return dt.timezone.utc
    from zoneinfo import ZoneInfo

    return ZoneInfo(tz)


def to_local(us: int, tz: str = "UTC") -> dt.datetime:
    return (_EPOCH + dt.timedelta(microseconds=us)).astimezone(_zone(tz)).replace(tzinfo=None)


def axis_time(us: int, tz: str = "UTC") -> str:
    """'2026-11-22 04:48:31.578' (µs kept when present; no zone: the axis title names it)."""
    d = to_local(us, tz)
    s = d.strftime("%Y-%m-%d %H:%M:%S")
    if d.microsecond:
        s += f".{d.microsecond:06d}".rstrip("0")
    return s


def from_axis_time(s: str, tz: str = "UTC") -> int:
    """The inverse of :func:`axis_time` (what a reader of the figure does; used by tests and the CLI)."""
    d = dt.datetime.fromisoformat(s.replace(" ", "T"))
    if tz not in ("UTC", "Z", "utc", ""):
        d = d.replace(tzinfo=_zone(tz))
    else:
        d = d.replace(tzinfo=dt.timezone.utc)
    delta = d - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def show_time(us: int | None, tz: str = "UTC") -> str:
    """For text: millisecond precision, '?' when unknown."""
    if us is None:
        return "?"
    d = to_local(us, tz)
    return d.strftime("%Y-%m-%d %H:%M:%S.") + f"{d.microsecond // 1000:03d}"


def zone_name(tz: str) -> str:
    return "UTC" if tz in ("UTC", "Z", "utc", "") else tz


def parse_iso(s: str | int | None) -> int | None:
    """replay.json times ('2021-05-05T16:02:11.123Z'; a few carry raw epoch µs) -> epoch µs."""
    if s is None:
        return None
    if isinstance(s, int):
        return s
    return from_axis_time(s.rstrip("Z").replace("T", " "), "UTC")
