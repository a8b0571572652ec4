"""Brokers that did not come back: start-up attempts that failed, the cause each proves, and the
outages they prolonged.

Pure: events in (``broker_fatal_error``, ``broker_startup``, ``broker_registered``), records out.
A broker's log tells one failed attempt in several lines (ZooKeeper's NodeExists error, then
KafkaServer's "Fatal error during KafkaServer startup", then main's "Exiting Kafka"; a KRaft
broker's refused registration every few seconds): consecutive fatal lines of one broker, with no
new start between them, are one attempt. An attempt that ends in a successful start was only
delayed and is kept apart from one that never recovered.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Iterable

from parsers.schema import Event, iso_utc
from replay_engine.causes.text import fmt_duration
from replay_engine.common.facts import TP, Ref

# Cause -> the operator's words (what to look at), used in sentences and reports.
CAUSE_TEXT = {
    "inconsistent_broker_id": "its broker.id does not match meta.properties (InconsistentBrokerIdException)",
    "inconsistent_cluster_id": "its meta.properties belongs to another cluster id (InconsistentClusterIdException: "
                               "ZooKeeper or the metadata log was reset, or it points at the wrong cluster)",
    "broker_id_in_use": "its id was still registered (NodeExistsException on /brokers/ids: restarted before the old "
                        "session expired, or another broker has the id)",
    "port_in_use": "its listener port was in use (BindException)",
    "log_dirs_failed": "every log directory had failed (KafkaStorageException)",
    "out_of_memory": "the JVM ran out of memory (OutOfMemoryError)",
    "disk_error": "a disk error while writing a log or checkpoint (KafkaStorageException or IOException) halted it",
    "registration_refused": "the controller refused its registration (incompatible metadata.version or features)",
    "other": "a fatal error",
}

_EPHEMERAL = re.compile(r"Error while creating ephemeral at (?P<path>\S+), node already exists and owner '(?P<owner>[^']+)' "
                        r"does not match current session '(?P<mine>[^']+)'")

# reserved.broker.max.id default (KafkaConfig, 0.9+): generated ids start above it.
RESERVED_BROKER_MAX_ID_DEFAULT = 1000


@dataclass(frozen=True)
class FailedStart:
    broker: int | None
    start: int  # first line of the attempt
    end: int  # last line of the attempt
    phase: str  # startup | registration | running
    cause: str
    message: str  # the proving line's text
    proof: Ref  # the proving line itself (file and line number)
    lines: int  # fatal lines that told this attempt
    recovered_at: int | None = None  # the broker started later (for a refused registration: only a delay)
    # a fatal stop: each partition it led, left without a serving leader, and until when (None: to the end)
    unserved: tuple[tuple[str, int, int | None], ...] = ()

    @property
    def unserved_until(self) -> int | None:
        ends = [e for _, _, e in self.unserved]
        return None if not ends or any(e is None for e in ends) else max(ends)

    @property
    def exception(self) -> str:
        """The proving line's short form: 'InconsistentClusterIdException: The Cluster ID ...'."""
        text = self.message
        held = _EPHEMERAL.match(text)
        if held:
            return (f"NodeExistsException: {held['path']} was still held by ZooKeeper session {held['owner']} "
                    f"(this start's session: {held['mine']})")
        if text.startswith("Caused by: "):
            text = text[len("Caused by: "):]
        head, sep, rest = text.partition(": ")
        if sep and "." in head and " " not in head:
            head = head.rsplit(".", 1)[-1].rsplit("$", 1)[-1]
            text = f"{head}: {rest}"
        return text if len(text) <= 160 else text[:157] + "..."

    def where(self) -> str:
        f = (self.proof.source_file or "?").replace("\\", "/").rsplit("/", 1)[-1]
        return f"{f}:{self.proof.source_pos}"

    def sentence(self, unserved: bool = True) -> str:
        """``unserved``: with the partitions the stop left without a serving leader (every partition's, so not in
        one partition's cause: a replay split by partition knows only its own)."""
        who = f"broker {self.broker}" if self.broker is not None else "a broker"
        verb = {"registration": "tried to register", "running": "stopped itself"}.get(self.phase, "tried to restart")
        at = iso_utc(self.start)
        if self.phase == "running":
            out = f"{who} stopped itself at {at}: {self.exception} ({self.where()})"
            if self.unserved and unserved:
                n, until = len(self.unserved), self.unserved_until
                them = "the partition it led" if n == 1 else f"the {n} partitions it led"
                out += (f"; {them} had no serving leader until " + (
                    f"{iso_utc(until)} ({fmt_duration(until - self.start)})" if until is not None
                    else "the end of the evidence") + " (its ZooKeeper session outlived the process)")
            return out
        tail = ""
        if self.recovered_at is not None:
            tail = (f"; it registered at {iso_utc(self.recovered_at)} after retrying" if self.phase == "registration"
                    else f"; a later start succeeded at {iso_utc(self.recovered_at)}")
        return f"{who} {verb} at {at} and failed: {self.exception} ({self.where()}){tail}"

    def to_json(self, unserved: bool = True) -> dict[str, Any]:
        out = {"broker": self.broker, "start": iso_utc(self.start), "end": iso_utc(self.end), "phase": self.phase,
               "cause": self.cause, "cause_text": CAUSE_TEXT.get(self.cause, self.cause), "message": self.message,
               "lines": self.lines, "recovered_at": iso_utc(self.recovered_at), "proof": self.proof.to_json()}
        if unserved:
            out.update({"unserved_partitions": len(self.unserved),
                        "unserved_until": iso_utc(self.unserved_until) if self.unserved else None,
                        "unserved": [{"topic": t, "partition": p, "until": iso_utc(e)} for t, p, e in self.unserved]})
        out["sentence"] = self.sentence(unserved)
        return out


def _subject(ev: Event) -> int | None:
    return ev.subject_broker if ev.subject_broker is not None else ev.broker_id


def _proof(ev: Event, d: dict) -> Ref:
    offset = d.get("proof_offset") or 0
    pos = ev.source_pos + offset if ev.source_pos is not None and ev.source_kind != "kraft_metadata" else ev.source_pos
    return Ref(ev.ts, ev.event_type, ev.source_file, pos, (d.get("message") or ev.raw or "")[:400], None, ev.broker_id)


def failed_starts(events: Iterable[Event]) -> list[FailedStart]:
    """Every failed start-up or registration attempt and every fatal stop, one record each."""
    per: dict[tuple[int | None, str | None], list[Event]] = {}
    for ev in events:
        t = ev.event_type
        if t == "broker_fatal_error" or (t == "broker_startup" and ev.source_kind == "broker_log") \
                or (t == "broker_registered" and (ev.detail or {}).get("via") == "broker_self"):
            if ev.ts is None:
                continue
            # Without a broker id the file is the only thread that ties the lines of one attempt.
            b = _subject(ev)
            per.setdefault((b, None if b is not None else ev.source_file), []).append(ev)
    out: list[FailedStart] = []
    for (broker, _), evs in sorted(per.items(), key=lambda kv: (kv[0][0] is None, kv[0][0] or 0, kv[0][1] or "")):
        evs.sort(key=lambda e: (e.ts, e.source_file or "", e.source_pos or 0, e.source_sub))
        group: list[Event] = []
        pending: list[FailedStart] = []
        for ev in evs + [None]:
            if ev is not None and ev.event_type == "broker_fatal_error":
                group.append(ev)
                continue
            if group:
                pending.append(_attempt(broker, group))
                group = []
            if ev is None:
                break
            d = ev.detail or {}
            if ev.event_type == "broker_registered" or d.get("phase") == "started":
                # the broker came up after all: the attempts before were delays, not a broker that stayed away
                out.extend(replace(p, recovered_at=ev.ts) if p.phase != "running" else p for p in pending)
                pending = []
        out.extend(pending)
    out.sort(key=lambda f: (f.start, f.broker if f.broker is not None else -1, f.proof.source_file or ""))
    return out


def _attempt(broker: int | None, group: list[Event]) -> FailedStart:
    details = [ev.detail or {} for ev in group]
    best = next((i for i, d in enumerate(details) if d.get("cause", "other") != "other"), 0)
    ev, d = group[best], details[best]
    phases = {x.get("phase") for x in details}
    phase = "startup" if "startup" in phases else "registration" if "registration" in phases else \
        d.get("phase") or "running"
    return FailedStart(broker, group[0].ts, group[-1].ts, phase, d.get("cause", "other"),
                       d.get("message") or "", _proof(ev, d), len(group))


def during(fails: list[FailedStart], of_broker: dict[int | None, list[int]], brokers: Iterable[int], start: int,
           end: int | None) -> list[FailedStart]:
    """The attempts of these brokers that fell inside [start, end] (end None: to the end of the evidence), in their
    order in ``fails``; ``of_broker``: each broker's attempts' places in ``fails`` (``by_broker``)."""
    hi = end if end is not None else 1 << 62
    return [fails[i] for i in sorted(i for b in set(brokers) for i in of_broker.get(b, ())
                                     if start <= fails[i].start <= hi)]


def by_broker(fails: list[FailedStart]) -> dict[int | None, list[int]]:
    """Each broker's attempts' places in ``fails``: an outage asks only of its own brokers' attempts."""
    out: dict[int | None, list[int]] = {}
    for i, f in enumerate(fails):
        out.setdefault(f.broker, []).append(i)
    return out


def annotate(leaderless: list, fails: list[FailedStart]) -> None:
    """Add to each outage's cause the brokers that tried to come back during it and failed."""
    if not fails:
        return
    of_broker = by_broker(fails)
    for lp in leaderless:
        ep, cause = lp.episode, lp.cause
        brokers = cause.details.get("cause_brokers") or cause.details.get("replicas") or \
            cause.details.get("isr_at_loss") or []
        hits = during(fails, of_broker, brokers, ep.start, ep.end)
        if not hits:
            continue
        cause.summary = cause.summary.rstrip() + " " + "; ".join(_cap(f.sentence(False)) for f in hits[:3]) + "."
        cause.chain.extend(f.proof for f in hits[:3])
        cause.details["failed_restarts"] = [f.to_json(False) for f in hits]


def with_unserved(fails: list[FailedStart], intervals: Iterable) -> list[FailedStart]:
    """Fatal stops with what they left: the partitions whose leader was the stopped broker, no longer serving
    from that line on (``facts.BrokerStopped``), and until when the last of them had a serving leader again
    (a leaderless stretch right after counts: the clients saw one outage)."""
    halts = {(f.broker, f.start): i for i, f in enumerate(fails) if f.phase == "running" and f.broker is not None}
    if not halts:
        return fails
    open_since: dict[tuple, tuple[int, int]] = {}  # (topic, partition) -> (halt index, start)
    ends: dict[int, dict[tuple, int | None]] = {}
    for iv in intervals:  # sorted by partition, then start
        v, key = iv.view, (iv.topic, iv.partition)
        if v.leader_serving is False and (v.leader, iv.start) in halts:
            open_since[key] = (halts[(v.leader, iv.start)], iv.start)
        if key in open_since and v.unavailable:  # not serving, then perhaps no leader at all: one outage
            ends.setdefault(open_since[key][0], {})[key] = iv.end
        elif key in open_since:
            del open_since[key]
    out = list(fails)
    for i, per in ends.items():
        out[i] = replace(out[i], unserved=tuple((t, p, e) for (t, p), e in sorted(per.items())))
    return out


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def generated_ids(events: Iterable[Event], ar_history: dict[TP, list[tuple[int, tuple[int, ...]]]]) -> list[dict[str, Any]]:
    """Brokers that registered with an id above reserved.broker.max.id (generated from /brokers/seqid:
    a broker whose meta.properties was lost starts as a new broker) and hold no replica of any partition."""
    owned = {b for hist in ar_history.values() for _, ar in hist for b in ar}
    limit = RESERVED_BROKER_MAX_ID_DEFAULT
    limit_source = "default"
    seen: dict[int, Event] = {}
    for ev in events:
        if ev.event_type == "broker_config":
            v = ((ev.detail or {}).get("config") or {}).get("reserved.broker.max.id")
            if v is not None and v.isdigit():
                limit, limit_source = int(v), f"broker_config {ev.source_file}:{ev.source_pos}"
        elif ev.event_type == "broker_registered" and ev.subject_broker is not None and ev.ts is not None:
            seen.setdefault(ev.subject_broker, ev)
    out = []
    for b, ev in sorted(seen.items()):
        if b > limit and b not in owned:
            out.append({"broker": b, "registered": iso_utc(ev.ts), "reserved_broker_max_id": limit,
                        "reserved_source": limit_source, "evidence": Ref(ev.ts, ev.event_type, ev.source_file,
                                                                         ev.source_pos, (ev.raw or "")[:400]).to_json(),
                        "text": (f"broker {b} registered at {iso_utc(ev.ts)} with an id above reserved.broker.max.id "
                                 f"({limit}): an id generated from /brokers/seqid, a broker that lost its "
                                 "meta.properties starting as a new broker; it holds no replica, so the partitions "
                                 "of the id it had stay without it.")})
    return out
