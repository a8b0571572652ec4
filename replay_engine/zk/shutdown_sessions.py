"""When a broker shutting down left the controller's view: the close of its own ZooKeeper session.

ZooKeeper mode, every release (0.8.0 .. 3.9 ``KafkaServer.shutdown``): after the controlled shutdown, the request
handlers, the replica manager and the log manager, the broker closes its ZooKeeper client (``zkClient.close()``,
``zkUtils.close()`` before 1.1). The server ends the session and deletes its ephemeral ``/brokers/ids/N`` with it,
so the controller's BrokerChange (and the elections of what the broker still led) follows then, not at the broker's
"shut down completed", which comes after the socket server and metrics are down (seconds later, minutes on a big
broker). An authorizer's own client is closed earlier in the same method: the broker's is the last close of the
sequence.

Two lines can state it: Kafka's ``[ZooKeeperClient<name>] Closing.`` (1.1+, written before the close) and the
ZooKeeper library's ``Session: 0x.. closed`` (3.4 - 3.8, after the server ended the session). The first line of the
last close is the moment taken. A shutdown whose log holds neither keeps its "shut down completed" line.
"""
from __future__ import annotations

from typing import Iterable

from parsers.schema import Event

_CLOSE = "zk_session_closing"
_BEGIN = "broker_shutdown_started"
# A sequence ends with the process's last line, or when the broker is heard starting again.
_END = frozenset(("broker_shutdown_completed", "broker_startup", "broker_registered"))


def _key(ev: Event) -> tuple:
    return (ev.ts, ev.source_file or "", ev.source_pos or 0)


def _last_close(closes: list[Event]) -> Event | None:
    """The first line of the last close: a library 'Session closed' directly after Kafka's 'Closing.' is one close."""
    if not closes:
        return None
    last = closes[-1]
    if (len(closes) > 1 and (last.detail or {}).get("via") == "zk_library"
            and (closes[-2].detail or {}).get("via") == "zookeeper_client"):
        return closes[-2]
    return last


def shutdown_session_ends(events: Iterable[Event]) -> dict[tuple, int]:
    """Events (by ``(source_file, source_pos)``) at which a broker in shutdown closed its own ZooKeeper session,
    each with the broker. Only a shutdown the broker's own log begins counts. A close line naming no broker (the
    ZooKeeper library's never does) is the shutting-down broker's when it is the only one whose shutdown is under
    way in that file (several brokers writing one file take turns, each naming itself on its lifecycle lines)."""
    seq: dict[int, tuple[str, list[Event]]] = {}
    out: dict[tuple, int] = {}

    def close_seq(b: int) -> None:
        ev = _last_close(seq.pop(b)[1])
        if ev is not None:
            out[(ev.source_file, ev.source_pos)] = b

    for ev in sorted((e for e in events if e.ts is not None and (
            e.event_type == _CLOSE or e.subject_broker is not None and (e.event_type == _BEGIN or e.event_type in _END))),
            key=_key):
        t = ev.event_type
        if t == _CLOSE:
            if ev.subject_broker is not None:
                owner = int(ev.subject_broker) if int(ev.subject_broker) in seq else None
            else:
                open_here = [b for b, (f, _) in seq.items() if f == ev.source_file]
                owner = open_here[0] if len(open_here) == 1 else None
            if owner is not None:
                seq[owner][1].append(ev)
            continue
        b = int(ev.subject_broker)
        if t == _BEGIN:
            if b in seq:
                close_seq(b)
            seq[b] = (ev.source_file or "", [])
        elif b in seq and (t != "broker_registered" or (ev.detail or {}).get("via") == "broker_self") \
                and (t != "broker_startup" or (ev.detail or {}).get("phase") in ("starting", "started")):
            close_seq(b)
    for b in sorted(seq):
        close_seq(b)
    return out
