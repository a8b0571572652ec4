"""The postmortem report as data: incidents grouped by cause, evidence, client symptoms, remedies.

The document is plain JSON-able data and the only input of every renderer
(terminal, Markdown, HTML), so all formats say the same thing. It holds no
wall-clock time of its own: the same inputs give the same bytes.
"""
from __future__ import annotations

import fnmatch
from collections import Counter
from typing import Any

from forensics import __version__
from forensics.report import dead_leaders as dead
from forensics.report.writes import headline as writes_headline, restart_findings, write_outages
from parsers.schema import Event, iso_utc, us_of_iso
from replay_engine.api import Leaderless, ReplayResult
from replay_engine.common.config import BROKER_SESSION_TIMEOUT, ZK_SESSION_TIMEOUT
from replay_engine.estimates.crash import CRASH_CAUSES, LastLines, kill_time, session_timeouts
from replay_engine.causes.explain import LEADER_FAILOVER
from replay_engine.causes.text import fmt_duration
from replay_engine.common.judge import EVIDENCE_GAP

# Partitions whose outages started and ended within this much of each other form one incident.
GROUP_SLACK_US = 5 * 1_000_000
# A client error belongs to an outage if it happened during it or this long after it ended.
CLIENT_LAG_US = 120 * 1_000_000

REMEDIES = {
    "all_replicas_offline": [
        "Raise the replication factor of {topics} (e.g. replication.factor=3 with min.insync.replicas=2): with one "
        "replica, losing its broker means losing the partition.",
        "Before stopping or removing a broker, move its partitions away (kafka-reassign-partitions.sh) and wait for "
        "the reassignment to finish.",
        "Stop brokers with a controlled shutdown (kafka-server-stop.sh / SIGTERM, controlled.shutdown.enable=true), "
        "never kill -9: it moves leadership before the broker leaves (it cannot save RF=1 partitions, though).",
    ],
    "no_live_isr_unclean_disabled": [
        "Find out why the ISR of {topics} had shrunk to the broker that then died (slow or lagging followers, "
        "replica.lag.time.max.ms, disk or network trouble) and fix that first.",
        "If availability matters more than losing acknowledged messages for {topics}, set "
        "unclean.leader.election.enable=true on those topics (this trades data loss for uptime).",
        "Run producers with acks=all and min.insync.replicas>=2 so writes fail fast instead of silently depending "
        "on a single in-sync replica.",
    ],
    "no_live_isr": [
        "Check the replication factor and ISR health of {topics}; the trace shows every in-sync replica down.",
    ],
    "no_controller": [
        "The cluster had no active controller while leaders were lost: check ZooKeeper health and "
        "zookeeper.session.timeout.ms, and the controller broker's GC pauses.",
    ],
    "controller_did_not_act": [
        "An eligible replica existed but no election happened: read the controller's log around that time "
        "(event queue stuck, ZooKeeper errors); consider restarting the controller broker to force a failover.",
    ],
    "leader_failover": [
        "Short windows while the controller re-elects are expected; a controlled shutdown moves leaders before a "
        "broker stops and avoids even these.",
    ],
    "partition_deleted": [],
    "unknown": [
        "Collect the controller's state-change.log and controller.log (and ZooKeeper's version-2 txn logs) for "
        "this period: the trace given was not enough to explain it.",
    ],
}


def _topic_ok(topic: str, patterns: list[str] | None) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(topic, p) for p in patterns)


def _group(leaderless: list[Leaderless]) -> list[list[Leaderless]]:
    """Same topic, same cause, same brokers to blame, starting and ending together -> one incident."""
    groups: list[list[Leaderless]] = []
    index: dict[tuple, list[list[Leaderless]]] = {}
    for lp in sorted(leaderless, key=lambda x: (x.episode.topic, x.cause.kind, x.episode.start, x.episode.partition)):
        ep = lp.episode
        key = (ep.topic, lp.cause.kind, tuple(lp.cause.details.get("cause_brokers") or ()))
        placed = False
        for g in index.get(key, []):
            e0 = g[0].episode
            same_end = (e0.end is None and ep.end is None) or (
                e0.end is not None and ep.end is not None and abs(e0.end - ep.end) <= GROUP_SLACK_US)
            if abs(e0.start - ep.start) <= GROUP_SLACK_US and same_end:
                g.append(lp)
                placed = True
                break
        if not placed:
            g = [lp]
            groups.append(g)
            index.setdefault(key, []).append(g)
    groups.sort(key=lambda g: (min(x.episode.start for x in g), g[0].episode.topic, g[0].cause.kind))
    return groups


def _entry_headline(raw: str | None) -> str:
    """An entry's header line, with the exception line under it: clients often put the partition there."""
    lines = (raw or "").split("\n", 2)
    text = lines[0] if len(lines) == 1 else f"{lines[0]} / {lines[1].strip()}"
    return text[:300]


class _CrashClock:
    """Estimates when crashed brokers stopped serving (see replay_engine.estimates.crash): a kill -9 is seen by
    ZooKeeper a session timeout later (KRaft: fenced a broker session timeout after its last heartbeat)."""

    def __init__(self, res: ReplayResult, events: list[Event], ingest_summary: dict[str, Any] | None = None):
        mine = [e for e in events if e.cluster == res.cluster] if len(events) else []
        # a file of a folder that holds several clusters is listed under the folder's name
        folder = {c["name"]: t["folder"] for t in (ingest_summary or {}).get("clusters_told_apart", [])
                  for c in t["clusters"]}.get(res.cluster)
        self.last = LastLines(mine)
        self.kraft = res.mode == "kraft"
        self.timeouts = {} if self.kraft else session_timeouts(mine)
        cfg = res.image.config
        key = BROKER_SESSION_TIMEOUT if self.kraft else ZK_SESSION_TIMEOUT
        self.default = cfg.int_value(key) * 1_000 if cfg is not None else None
        self.causes = ("fenced",) if self.kraft else CRASH_CAUSES
        # the last line of each broker's files (routine lines too: they are not events but prove it ran)
        self.file_ends: dict[int, list[int]] = {}
        for f in (ingest_summary or {}).get("files", []):
            if f.get("cluster") not in (None, res.cluster, folder):
                continue
            # a container stream holds several brokers: each source's last line is its broker's
            for part in f.get("streams") or [f]:
                if part.get("broker_id") is not None and part.get("last_ts"):
                    self.file_ends.setdefault(int(part["broker_id"]), []).append(us_of_iso(part["last_ts"]))

    def _last_line(self, broker: int, before: int) -> int | None:
        cands = [t for t in self.file_ends.get(broker, []) if t <= before]
        ev = self.last.before(broker, before)
        if ev is not None:
            cands.append(ev)
        return max(cands) if cands else None

    def unavailable_from(self, first: Leaderless) -> tuple[int, dict[str, Any]] | None:
        """For an outage caused by crashes: when clients lost the partitions, before the cluster noticed."""
        downs = first.cause.details.get("cause_broker_downs") or []
        if not downs or any(d["how"] not in self.causes for d in downs):
            return None
        best = None
        for d in downs:
            timeout = self.timeouts.get(d["broker"], self.default)
            if timeout is None:
                continue
            last = self._last_line(d["broker"], d["ts"])
            t = kill_time(d["ts"], timeout, last)
            if t < d["ts"] and (best is None or t > best[0]):  # the outage needs every replica gone: the last crash
                best = (t, d, timeout, last)
        if best is None:
            return None
        t, d, timeout, last = best
        what = "session expiry" if not self.kraft else "fencing"
        basis = (f"broker {d['broker']}'s last log line" if last is not None and last >= d["ts"] - timeout
                 else f"its {what} minus the {timeout / 1e6:g} s {'broker ' if self.kraft else ''}session timeout")
        noticed = "ZooKeeper noticed" if not self.kraft else "the controller fenced"
        return t, {"ts": iso_utc(t), "broker": d["broker"], "lead_s": round((d["ts"] - t) / 1e6, 3),
                   "text": f"clients lost these partitions from about {iso_utc(t)} (estimated from {basis}), "
                           f"{(d['ts'] - t) / 1e6:g} s before {noticed} broker {d['broker']}"
                           f"{' was gone' if not self.kraft else ''}"}


def group_outages(leaderless: list[Leaderless], cluster: str | None, trace_end: int | None,
                  clients: list[Event] | None = None, crash: "_CrashClock | None" = None
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Leaderless episodes -> (outages as incidents, brief failovers): what the report and the audit's
    incident table both say."""
    outages, failovers = [], []
    for g in _group(leaderless):
        if g[0].cause.kind == LEADER_FAILOVER:
            # the controller re-elected from the ISR within seconds: how Kafka is meant to work, not an outage
            failovers.append(_failover(g, cluster))
            continue
        inc = _incident(g, trace_end, clients or [], crash)
        inc["cluster"] = cluster
        outages.append(inc)
    return outages, failovers


def _failover(g: list[Leaderless], cluster: str) -> dict[str, Any]:
    start = min(x.episode.start for x in g)
    end = max(x.episode.end or x.episode.start for x in g)
    # The summary is the first partition's story: its chain is what proves it.
    return {"cluster": cluster, "topic": g[0].episode.topic, "count": len(g),
            "partitions": sorted(x.episode.partition for x in g), "start": iso_utc(start), "end": iso_utc(end),
            "longest_s": round(max((x.episode.duration_us or 0) for x in g) / 1e6, 3), "summary": g[0].cause.summary,
            "evidence": [r.to_json() for r in g[0].cause.chain]}


def _incident(g: list[Leaderless], trace_end: int | None, clients: list[Event],
              crash: _CrashClock | None = None) -> dict[str, Any]:
    first = g[0]
    start = min(x.episode.start for x in g)
    unavailable = crash.unavailable_from(first) if crash is not None else None
    lost_from = min(start, unavailable[0]) if unavailable else start
    ends = [x.episode.end for x in g]
    end = None if any(e is None for e in ends) else max(ends)  # type: ignore[type-var]
    dur = None if end is None else end - start
    parts = sorted(x.episode.partition for x in g)
    topic = first.episode.topic
    end_txt = f"to {iso_utc(end)} ({fmt_duration(dur)})" if end is not None else \
        f"until the end of the evidence at {iso_utc(trace_end)}"
    if len(g) == 1:
        summary = first.cause.summary
    else:
        summary = f"{len(g)} partitions of {topic} had no leader from {iso_utc(start)} {end_txt}: " \
                  f"{first.cause.reason_for_many()}"
    evidence: list[dict[str, Any]] = []
    seen = set()
    for x in g[:3]:
        for r in x.cause.chain:
            key = (r.source_file, r.source_pos, r.event)
            if key not in seen:
                seen.add(key)
                evidence.append(r.to_json())
    evidence.sort(key=lambda e: (e["ts"] or "", e["source_file"] or "", e["source_pos"] or 0))
    part_set = set(parts)
    symptoms: Counter = Counter()
    examples: dict[tuple, dict[str, Any]] = {}
    first_ts: dict[tuple, int] = {}
    last_ts: dict[tuple, int] = {}
    parts_seen: dict[tuple, set[int]] = {}
    cause_brokers = set(first.cause.details.get("cause_brokers") or ())
    for ev in clients:
        if ev.ts is None:
            continue
        if ev.topic is None:
            # A client that could not reach a broker whose loss caused this outage saw it too.
            if ev.subject_broker is None or ev.subject_broker not in cause_brokers:
                continue
        elif ev.topic != topic or (ev.partition is not None and ev.partition not in part_set):
            continue
        if ev.ts < lost_from - GROUP_SLACK_US or (end is not None and ev.ts > end + CLIENT_LAG_US):
            continue
        d = ev.detail or {}
        key = (d.get("client") or "client", d.get("error") or "error")
        symptoms[key] += 1
        if ev.partition is not None:
            parts_seen.setdefault(key, set()).add(ev.partition)
        first_ts[key] = min(first_ts.get(key, ev.ts), ev.ts)
        last_ts[key] = max(last_ts.get(key, ev.ts), ev.ts)
        examples.setdefault(key, {"ts": iso_utc(ev.ts), "source_file": ev.source_file, "source_pos": ev.source_pos,
                                  "text": _entry_headline(ev.raw)})
    client_symptoms = [
        {"client": k[0], "error": k[1], "count": n, "first": iso_utc(first_ts[k]), "last": iso_utc(last_ts[k]),
         "partitions": sorted(parts_seen.get(k, ())), "example": examples[k]}
        for k, n in sorted(symptoms.items())
    ]
    return {
        "topic": topic,
        "cause_kind": first.cause.kind,
        "count": len(g),
        "partitions": parts,
        "start": iso_utc(start),
        "end": iso_utc(end),
        "duration_s": None if dur is None else round(dur / 1e6, 3),
        "partition_seconds": round(sum(((x.episode.end or trace_end or x.episode.start) - x.episode.start)
                                       for x in g) / 1e6, 3),
        "summary": summary,
        "replicas": first.cause.details.get("replicas"),
        "isr_at_loss": first.cause.details.get("isr_at_loss"),
        "cause_brokers": first.cause.details.get("cause_brokers"),
        "evidence": evidence,
        "client_symptoms": client_symptoms,
        "unavailable_from": unavailable[1] if unavailable else None,
    }


def _remedies(incidents: list[dict[str, Any]], results: list[ReplayResult]) -> list[dict[str, Any]]:
    by_kind: dict[str, set[str]] = {}
    for inc in incidents:
        by_kind.setdefault(inc["cause_kind"], set()).add(inc["topic"])
    out = []
    for kind in sorted(by_kind):
        topics = ", ".join(sorted(by_kind[kind]))
        for text in REMEDIES.get(kind, []):
            out.append({"cause_kind": kind, "topics": sorted(by_kind[kind]), "text": text.format(topics=topics)})
    killed = _unclean_stops(results)
    if killed:
        out.append({"cause_kind": "broker_stop", "topics": [], "text":
                    f"Broker(s) {', '.join(map(str, killed))} left the cluster by losing their ZooKeeper session "
                    "(crash or kill -9) rather than by a controlled shutdown: their leaders were not moved first."})
    return out


def _loss_remedies(data_loss: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not data_loss:
        return []
    topics = sorted({u["topic"] for u in data_loss})
    return [{"cause_kind": "unclean_election", "topics": topics, "text":
             f"Unclean leader election on {', '.join(topics)} traded acknowledged messages for availability: keep "
             "unclean.leader.election.enable=false where losing data is worse than waiting, and keep the ISR healthy "
             "(min.insync.replicas=2 with acks=all makes producers fail instead of writing to a lone replica)."}]


def _unclean_stops(results: list[ReplayResult]) -> list[int]:
    out = set()
    for res in results:
        for b, periods in res.image.periods.items():
            for p in periods:
                if p.state == "up" and p.end_cause in ("session_expired", "expired"):
                    out.add(b)
    return sorted(out)


def build_report(
    results: list[ReplayResult],
    ingest_summary: dict[str, Any],
    events: list[Event],
    *,
    sources: list[str],
    topics: list[str] | None = None,
    tz: str = "UTC",
) -> dict[str, Any]:
    clients = [e for e in events if e.event_type == "client_error"]
    clusters = []
    all_incidents: list[dict[str, Any]] = []
    failovers: list[dict[str, Any]] = []
    for res in results:
        chosen = [lp for lp in res.leaderless if _topic_ok(lp.episode.topic, topics)]
        crash = _CrashClock(res, events, ingest_summary)
        outages, brief = group_outages(chosen, res.cluster, res.stream.trace_end, clients, crash)
        all_incidents.extend(outages)
        failovers.extend(brief)
        replay_doc = res.to_json()
        if topics:
            replay_doc["leaderless"] = [x for x in replay_doc["leaderless"] if _topic_ok(x["topic"], topics)]
        clusters.append(replay_doc)
    partitions = {(i["cluster"], i["topic"], p) for i in all_incidents for p in i["partitions"]}
    by_cause = Counter()
    secs_by_cause: Counter = Counter()
    for inc in all_incidents:
        by_cause[inc["cause_kind"]] += inc["count"]
        secs_by_cause[inc["cause_kind"]] += inc["partition_seconds"]
    data_loss = [{**u, "cluster": res.cluster} for res in results for u in res.data_loss
                 if _topic_ok(u["topic"], topics)]
    agreement = {"compared": sum(c["agreement"]["compared"] for c in clusters),
                 "agreed": sum(c["agreement"]["agreed"] for c in clusters)}
    agreement["ratio"] = round(agreement["agreed"] / agreement["compared"], 6) if agreement["compared"] else None
    # side by side with the ratio: what was not compared, and why (evidence gaps apart: lines the evidence lost)
    agreement["diverged"] = agreement["compared"] - agreement["agreed"]
    agreement["evidence_gaps"] = sum(c["agreement"].get("evidence_gaps", 0) for c in clusters)
    agreement["uncompared"] = sum(c["agreement"].get("uncompared", 0) for c in clusters) - agreement["evidence_gaps"]
    why: Counter = Counter()
    gaps: Counter = Counter()
    for c in clusters:
        for reason, n in c["agreement"].get("uncompared_reasons", {}).items():
            if not reason.startswith(EVIDENCE_GAP):
                why[reason or "no reason given"] += n
            else:
                gaps[reason] += n
    agreement["uncompared_reasons"] = dict(sorted(why.items(), key=lambda kv: (-kv[1], kv[0])))
    # what the evidence lacked, so that an operator knows which files or hours would let the replay judge more
    agreement["gap_reasons"] = dict(sorted(gaps.items(), key=lambda kv: (-kv[1], kv[0])))
    findings = []
    for c in clusters:
        skew_evidence = {x["text"]: x["evidence"] for x in c.get("clock_skew", [])}
        for f in c["findings"]:
            if f["kind"] == "clock_skew" and "evidence" not in f:
                f = {**f, "evidence": skew_evidence.get(f["text"], [])}
            findings.append({**f, "cluster": c["cluster"]})
        n_div = len(c["agreement"]["divergences"])
        if n_div:
            findings.append({"kind": "replay_divergence", "cluster": c["cluster"], "count": n_div,
                             "text": f"{n_div} controller decision(s) differ from what the replay derives; "
                                     "see replay.agreement.divergences"})
    told_apart = ingest_summary.get("clusters_told_apart", [])
    findings.extend(several_clusters_findings(told_apart))
    for p in ingest_summary.get("input_problems", []):
        findings.append({"kind": "input_problem", "text": p})
    for cp in ingest_summary.get("log_copies", []):
        findings.append({"kind": "log_copy", "text": cp["text"], "evidence": cp["evidence"]})
    totals = ingest_summary.get("totals", {})
    summary = {
        "clusters": [c["cluster"] for c in clusters],
        "several_clusters": [{"folder": t["folder"], "statement": t["statement"],
                              "clusters": [c["name"] for c in t["clusters"]]} for t in told_apart],
        "window": {"start": min((c["window"]["start"] for c in clusters if c["window"]["start"]), default=None),
                   "end": max((c["window"]["end"] for c in clusters if c["window"]["end"]), default=None)},
        "kafka_version": [c["kafka_version"] for c in clusters],
        "rule_set": [c.get("rule_set") for c in clusters],
        "mode": [c["mode"] for c in clusters],
        "leaderless_partitions": len(partitions),
        "leaderless_partition_seconds": round(sum(secs_by_cause.values()), 3),
        "incidents": len(all_incidents),
        "failover_partitions": sum(f["count"] for f in failovers),
        "by_cause": dict(sorted(by_cause.items())),
        "partition_seconds_by_cause": {k: round(v, 3) for k, v in sorted(secs_by_cause.items())},
        "controller_changes": sum(len(c["controllers"]) for c in clusters),
        "unclean_elections": len(data_loss),
        "messages_lost": sum(u["lost_messages"] or 0 for u in data_loss),
        "agreement": agreement,
        "headline": _headline(all_incidents),
    }
    writes = write_outages(results, lambda t: _topic_ok(t, topics))
    summary["under_min_isr_partitions"] = sum(g["count"] for g in writes)
    summary["under_min_isr_partition_seconds"] = round(sum(g["partition_seconds"] for g in writes), 3)
    summary["headline"] = writes_headline(summary["headline"], summary["leaderless_partition_seconds"], writes)
    dead_led = dead.dead_leaders(results, lambda t: _topic_ok(t, topics))
    summary["dead_leader_partitions"] = sum(g["count"] for g in dead_led)
    summary["dead_leader_partition_seconds"] = round(sum(g["partition_seconds"] for g in dead_led), 3)
    summary["headline"] = dead.headline(summary["headline"], summary["leaderless_partition_seconds"]
                                        + summary["under_min_isr_partition_seconds"], dead_led)
    told = {(g["cluster"], g["broker"], g["start"]) for g in dead_led}
    findings.extend(restart_findings(results, told))
    inputs = {
        "sources": list(sources),
        "time_zone": tz,
        "totals": totals,
        "file_kinds": ingest_summary.get("file_kinds", {}),
        "event_counts": ingest_summary.get("event_counts", {}),
        "files_with_errors": [{"path": f["path"], "errors": f["errors"]} for f in ingest_summary.get("files", [])
                              if f.get("errors")],
        "files": [{k: f.get(k) for k in ("path", "kind", "broker_id", "lines", "parsed", "other", "unrecognized",
                                         "quarantined", "events")} | ({"streams": f["streams"]} if f.get("streams") else {})
                  for f in ingest_summary.get("files", [])],
        "stream_sources": stream_source_lines(ingest_summary),
    }
    return {
        "tool": {"name": "kafka-forensics", "version": __version__},
        "summary": summary,
        "incidents": all_incidents,
        "failovers": failovers,
        "write_outages": writes,
        "dead_leaders": dead_led,
        "data_loss": data_loss,
        "remedies": _remedies(all_incidents, results) + _loss_remedies(data_loss),
        "findings": findings,
        "inputs": inputs,
        "replay": (clusters[0] if len(clusters) == 1 else {"clusters": clusters})
        | ({"several_clusters": told_apart} if told_apart else {}),
    }


def several_clusters_findings(told_apart: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A folder that holds several clusters (``replay_engine.folders.clusters``): what told them apart, then what could not
    be placed."""
    out = []
    for t in told_apart:
        out.append({"kind": "several_clusters", "text": t["statement"], "clusters": t["clusters"],
                    "evidence": [ev for c in t["clusters"] for ev in c["evidence"][:1]]})
        out.extend(t["findings"])
    return out


def stream_source_lines(ingest_summary: dict[str, Any]) -> list[str]:
    """Per source inside a container/collector stream: which broker it is and how that was found."""
    from parsers.container_streams.demux import describe

    return [f"{f['path']}: {describe(x, f['path'])}" for f in ingest_summary.get("files", [])
            for x in f.get("streams") or []]


def _headline(incidents: list[dict[str, Any]]) -> str:
    if not incidents:
        return "No partition was without a leader in the evidence given."
    worst = max(incidents, key=lambda i: (i["partition_seconds"], i["count"]))
    n = sum(i["count"] for i in incidents)
    return f"{n} partition outage(s) in {len(incidents)} incident(s); the largest: {worst['summary']}"
