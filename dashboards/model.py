"""What the dashboard draws, as plain data, built from the replay's outputs only.

One constructor, :func:`cluster_view`, takes the two things the replay writes
(its ``replay.json`` document and the ``partition_timeline`` rows) so a
dashboard built right after a replay and one built later from a report
directory are the same page: ``report.html`` and ``dashboard REPORT-DIR`` agree
byte for byte.

Times are epoch microseconds. replay.json keeps milliseconds; the timeline
keeps microseconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from dashboards.timefmt import parse_iso
from replay_engine.common.timeline import Episode as Outage, outage_runs

# The timeline events that mean "a controlled shutdown moved this partition" (ZooKeeper and KRaft logs).
SHUTDOWN_EVENTS = frozenset({"controlled_shutdown_requested"})
EXPIRY_CAUSES = frozenset({"session_expired", "expired"})
# KRaft: a broker the controller fenced is 'down' in the replay's periods, with this cause; its lane says so.
FENCED_CAUSES = frozenset({"fenced"})


@dataclass(frozen=True)
class Cite:
    """One piece of evidence: when, what, where (file:pos, zxid), the line itself."""

    ts: int | None
    event: str
    where: str
    text: str


@dataclass(frozen=True)
class Span:
    """One interval of one partition's timeline (a row of partition_timeline)."""

    topic: str
    partition: int
    start: int
    end: int | None
    leader: int | None
    isr: tuple[int, ...] | None
    leader_epoch: int | None
    controller_epoch: int | None
    state: str
    leaderless: bool
    opened_by: Cite

    @property
    def tp(self) -> tuple[str, int]:
        return (self.topic, self.partition)


@dataclass
class Episode(Outage["Span"]):
    """Consecutive leaderless spans of one partition (the replay's episode, ``intervals`` being the spans) and what
    the replay said about them."""

    kind: str | None = None
    summary: str | None = None
    chain: list[Cite] = field(default_factory=list)


@dataclass(frozen=True)
class WriteOutage:
    """A leader, but ISR < min.insync.replicas: acks=all writes refused (the replay's under_min_isr entry)."""

    topic: str
    partition: int
    start: int
    end: int | None
    leader: int | None
    isr: tuple[int, ...]
    min_isr: int | None
    min_isr_source: str
    summary: str
    opened_by: Cite | None


@dataclass(frozen=True)
class Band:
    """A time band on a lane: a broker's state, or a controller's tenure."""

    lane: int  # broker id
    state: str  # up, shutting_down, down, fenced, ... ; for tenures: 'controller'
    start: int
    end: int | None
    epoch: int | None = None
    cause: str | None = None  # how the band ended
    cite: Cite | None = None  # the event that began it
    began_by: str | None = None  # how it began (for a broker's 'down': expired, closed, fenced ...)


@dataclass
class ClusterView:
    name: str | None
    window: tuple[int, int]
    spans: list[Span]  # sorted by (topic, partition, start)
    episodes: list[Episode]
    brokers: list[Band]  # broker periods, 'up' split where a controlled shutdown was under way
    expiries: list[Band]  # session expiries: the moment a broker's session ended
    tenures: list[Band]  # controller tenures (lane = controller broker)
    controller_gaps: list[tuple[int, int]]  # no active controller: from a tenure's end to the next start
    rf: dict[tuple[str, int], int]  # replica count where known (see replica_counts)
    unclean: list[tuple[int, str, int, int | None]]  # (ts, topic, partition, new leader)
    notes: list[str]
    # a leader but ISR < min.insync.replicas (acks=all refused), from replay.json
    write_outages: list[WriteOutage] = field(default_factory=list)

    @property
    def partitions(self) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        for s in self.spans:
            if not out or out[-1] != s.tp:
                out.append(s.tp)
        return out


def _cite(d: dict[str, Any] | None) -> Cite | None:
    if not d:
        return None
    where = f"{d.get('source_file')}:{d.get('source_pos')}" if d.get("source_file") else "?"
    if d.get("zxid"):
        where += f" (zxid {d['zxid']})"
    return Cite(parse_iso(d.get("ts")), str(d.get("event") or ""), where, str(d.get("text") or ""))


def _row_cite(r: dict[str, Any]) -> Cite:
    f = r.get("opened_by_file")
    where = f"{f}:{r.get('opened_by_pos')}" if f else "?"
    return Cite(r["start"], str(r.get("opened_by_event") or ""), where, str(r.get("opened_by_text") or ""))


def spans_from_rows(rows: Iterable[dict[str, Any]]) -> list[Span]:
    out = []
    for r in rows:
        isr = r.get("isr")
        out.append(Span(str(r["topic"]), int(r["partition"]), int(r["start"]),
                        None if r.get("end") is None else int(r["end"]),
                        r.get("leader"), None if isr is None else tuple(int(b) for b in isr),
                        r.get("leader_epoch"), r.get("controller_epoch"), str(r.get("state") or ""),
                        bool(r.get("leaderless")), _row_cite(r)))
    out.sort(key=lambda s: (s.topic, s.partition, s.start, s.end if s.end is not None else 1 << 62))
    return out


def episodes_of(spans: list[Span]) -> list[Episode]:
    """The replay's own rule (replay_engine.common.timeline.outage_runs): touching leaderless spans merge."""
    return [Episode.of_run(run) for run, _ in outage_runs(spans, lambda s: s.leaderless)]


def _attach_causes(episodes: list[Episode], leaderless_docs: list[dict[str, Any]]) -> None:
    # replay.json keeps milliseconds: match an episode to its entry by partition and start millisecond.
    by_key: dict[tuple[str, int, int | None], list[dict[str, Any]]] = {}
    for d in leaderless_docs:
        start = parse_iso(d.get("start"))
        by_key.setdefault((str(d["topic"]), int(d["partition"]), start), []).append(d)
    for ep in episodes:
        docs = by_key.get((ep.topic, ep.partition, ep.start // 1000 * 1000))
        if not docs:
            continue
        d = docs.pop(0)
        cause = d.get("cause") or {}
        ep.kind = cause.get("kind")
        ep.summary = cause.get("summary")
        ep.chain = [c for c in (_cite(x) for x in cause.get("chain") or []) if c is not None]


def _shutdown_starts(doc: dict[str, Any], spans: list[Span],
                     requests: Iterable[tuple[int, int]] = ()) -> dict[int, list[int]]:
    """When each broker's controlled shutdown began: the requests the replay was given (when the page
    is built from a ReplayResult), the ones it inferred (findings), and the spans a controlled-shutdown
    request opened (the broker is the one that left the partition)."""
    out: dict[int, list[int]] = {}
    for broker, ts in requests:
        out.setdefault(int(broker), []).append(ts)
    for f in doc.get("findings") or []:
        if f.get("kind") == "inferred_controlled_shutdown" and f.get("broker") is not None:
            ts = parse_iso(f.get("ts"))
            if ts is not None:
                out.setdefault(int(f["broker"]), []).append(ts)
    prev: Span | None = None
    for s in spans:
        if prev is not None and prev.tp == s.tp and s.opened_by.event in SHUTDOWN_EVENTS:
            before = set(prev.isr or ()) | ({prev.leader} if prev.leader is not None and prev.leader >= 0 else set())
            after = set(s.isr or ()) | ({s.leader} if s.leader is not None and s.leader >= 0 else set())
            gone = before - after
            if len(gone) == 1:
                out.setdefault(gone.pop(), []).append(s.start)
        prev = s
    return out


def _broker_bands(doc: dict[str, Any], shutdowns: dict[int, list[int]], window: tuple[int, int]
                  ) -> tuple[list[Band], list[Band]]:
    bands: list[Band] = []
    expiries: list[Band] = []
    for b in doc.get("brokers") or []:
        broker = int(b["broker"])
        starts = sorted(shutdowns.get(broker, []))
        periods = b.get("periods") or []
        for k, p in enumerate(periods):
            start = parse_iso(p.get("start"))
            start = window[0] if start is None else start
            end = parse_iso(p.get("end"))
            state = str(p.get("state") or "unknown")
            cite = _cite(p.get("start_event"))
            began = periods[k - 1].get("end_cause") if k > 0 else None
            if state == "down" and began in FENCED_CAUSES:
                state = "fenced"
            if p.get("end_cause") in EXPIRY_CAUSES and end is not None:
                # the evidence of an expiry is what began the next period (the session's closeSession)
                nxt = _cite(periods[k + 1].get("start_event")) if k + 1 < len(periods) else None
                expiries.append(Band(broker, "session_expired", end, end, cause=p.get("end_cause"), cite=nxt))
            # a controlled shutdown splits an 'up' period: up until the request, shutting down after it
            sd = next((t for t in starts if start <= t and (end is None or t < end)), None) if state == "up" else None
            if sd is not None and sd > start:
                bands.append(Band(broker, "up", start, sd, cite=cite))
                bands.append(Band(broker, "shutting_down", sd, end, cause=p.get("end_cause")))
            elif sd is not None:
                bands.append(Band(broker, "shutting_down", start, end, cause=p.get("end_cause"), cite=cite))
            else:
                bands.append(Band(broker, state, start, end, cause=p.get("end_cause"), cite=cite, began_by=began))
    return bands, expiries


def _tenures(doc: dict[str, Any], window: tuple[int, int]) -> tuple[list[Band], list[tuple[int, int]]]:
    tenures = []
    for t in doc.get("controllers") or []:
        start = parse_iso(t.get("start"))
        if start is None:
            continue
        tenures.append(Band(int(t["controller"]), "controller", start, parse_iso(t.get("end")),
                            epoch=t.get("epoch"), cause=t.get("end_cause"), cite=_cite(t.get("start_event"))))
    tenures.sort(key=lambda t: (t.start, t.end if t.end is not None else 1 << 62))
    gaps = []
    # Only after a tenure is known to have ended: before the first tenure the evidence is silent, not empty.
    for i, t in enumerate(tenures):
        if t.end is None:
            continue
        nxt = next((u.start for u in tenures[i + 1:] if u.start >= t.end), None)
        covered = any(u is not t and u.start <= t.end and (u.end is None or u.end > t.end) for u in tenures)
        if not covered:
            end = nxt if nxt is not None else window[1]
            if end > t.end:
                gaps.append((t.end, end))
    return tenures, gaps


def replica_counts(doc: dict[str, Any], spans: list[Span]) -> dict[tuple[str, int], int]:
    """Replica count per partition: the replica list the replay cites for it when it has one, otherwise
    the largest ISR seen (a partition's ISR never exceeds its replicas). The timeline does not carry
    replica lists, so a partition whose ISR was short for the whole trace is not counted as
    under-replicated unless the replay cited its replicas."""
    rf: dict[tuple[str, int], int] = {}
    for s in spans:
        if s.isr is not None:
            rf[s.tp] = max(rf.get(s.tp, 0), len(s.isr))
    for d in doc.get("leaderless") or []:
        reps = d.get("replicas")
        if reps:
            tp = (str(d["topic"]), int(d["partition"]))
            rf[tp] = max(rf.get(tp, 0), len(reps))
    return rf


def _write_outages(docs: list[dict[str, Any]], spans: list[Span]) -> list[WriteOutage]:
    # replay.json keeps milliseconds; an outage starts where a short-ISR span starts and ends where one
    # ends, so its bounds are put back on those spans' microseconds (as _attach_causes does for
    # leaderless ones): the first start and the last end within the millisecond.
    by_tp: dict[tuple[str, int], list[Span]] = {}
    for s in spans:
        by_tp.setdefault(s.tp, []).append(s)
    out = []
    for o in docs:
        start = parse_iso(o.get("start"))
        if start is None or o.get("topic") is None:
            continue
        tp = (str(o["topic"]), int(o.get("partition") or 0))
        end = parse_iso(o.get("end"))
        need = o.get("min_insync_replicas")
        short = [s for s in by_tp.get(tp, []) if not s.leaderless and s.leader is not None and s.leader >= 0
                 and s.isr is not None and need is not None and len(s.isr) < int(need)]
        start = next((s.start for s in short if s.start // 1000 * 1000 == start), start)
        if end is not None:
            end = next((s.end for s in reversed(short) if s.end is not None and s.end // 1000 * 1000 == end), end)
        out.append(WriteOutage(*tp, start, end, o.get("leader"), tuple(int(b) for b in o.get("isr") or ()),
                               None if need is None else int(need), str(o.get("min_insync_replicas_source") or ""),
                               str(o.get("summary") or ""), _cite(o.get("opened_by"))))
    return out


def cluster_view(doc: dict[str, Any], rows: Iterable[dict[str, Any]],
                 shutdown_requests: Iterable[tuple[int, int]] = ()) -> ClusterView:
    """A cluster's dashboard data from its replay.json document and its partition_timeline rows.

    ``shutdown_requests`` (broker, time): controlled-shutdown requests among the replay's inputs. replay.json
    does not list them (only the ones the replay had to infer), so a page built from a report directory
    shows a controlled shutdown from its first inferred or timeline-visible move instead."""
    spans = spans_from_rows(rows)
    w = doc.get("window") or {}
    lo = parse_iso(w.get("start"))
    hi = parse_iso(w.get("end"))
    if spans:
        first = min(s.start for s in spans)
        lo = first if lo is None else min(lo, first)
        last = max(max(s.end if s.end is not None else s.start for s in spans), hi or 0)
        hi = last if hi is None else max(hi, last)
    lo = 0 if lo is None else lo
    hi = lo + 1_000_000 if hi is None or hi <= lo else hi
    window = (lo, hi)
    episodes = episodes_of(spans)
    _attach_causes(episodes, doc.get("leaderless") or [])
    brokers, expiries = _broker_bands(doc, _shutdown_starts(doc, spans, shutdown_requests), window)
    tenures, gaps = _tenures(doc, window)
    unclean = []
    for u in doc.get("unclean_elections") or []:
        # a decision's time is its record's (the write that did it), else its trigger's
        ts = parse_iso((u.get("record") or u.get("trigger") or {}).get("ts"))
        if ts is not None and u.get("topic") is not None:
            after = u.get("after") or {}
            unclean.append((ts, str(u["topic"]), int(u.get("partition") or 0), after.get("leader")))
    writes = _write_outages(doc.get("under_min_isr") or [], spans)
    return ClusterView(doc.get("cluster"), window, spans, episodes, brokers, expiries, tenures, gaps,
                       replica_counts(doc, spans), sorted(unclean), [str(n) for n in doc.get("notes") or []],
                       sorted(writes, key=lambda w: (w.topic, w.partition, w.start)))


def replay_docs(replay: dict[str, Any]) -> list[dict[str, Any]]:
    """report['replay'] / replay.json: one cluster's document, or {'clusters': [...]}."""
    return list(replay["clusters"]) if "clusters" in replay else [replay]

