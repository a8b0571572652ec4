"""When did a crashed broker really stop serving? ZooKeeper only notices a kill -9 when the
broker's session expires, a session timeout later; clients fail from the kill itself.

The kill time is estimated as the session expiry minus the negotiated session timeout,
or the broker's last log line if that is later (a broker that logged was still running).
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Iterable

from parsers.schema import Event

MS = 1_000
# How a broker's up-period ended when nobody stopped it cleanly.
CRASH_CAUSES = ("session_expired", "expired", "controller_detected")


def session_timeouts(events: Iterable[Event]) -> dict[int, int]:
    """Broker -> negotiated ZooKeeper session timeout (µs), when the txn log shows it."""
    events = list(events)
    by_session = {e.session_id: (e.detail or {}).get("timeout_ms") for e in events
                  if e.event_type == "zk_session_created" and e.session_id is not None}
    out = {}
    for e in events:
        if e.event_type == "broker_registered" and e.session_id in by_session and by_session[e.session_id] \
                and e.subject_broker is not None:
            out[e.subject_broker] = int(by_session[e.session_id]) * MS
    return out


class LastLines:
    """Each broker's own log lines, to ask 'when did broker B last write before T?'."""

    def __init__(self, events: Iterable[Event]):
        by: dict[int, list[int]] = {}
        for e in events:
            if e.source_kind == "broker_log" and e.broker_id is not None and e.ts is not None:
                by.setdefault(e.broker_id, []).append(e.ts)
        self._ts = {b: sorted(v) for b, v in by.items()}

    def before(self, broker: int, ts: int) -> int | None:
        got = self._ts.get(broker)
        if not got:
            return None
        i = bisect_right(got, ts)
        return got[i - 1] if i else None


def kill_time(expired_at: int, timeout_us: int, last_line: int | None) -> int:
    kill = expired_at - timeout_us
    return max(kill, last_line) if last_line is not None else kill
