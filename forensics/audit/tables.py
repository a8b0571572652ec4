"""A cluster's merged replay as rows of the audit tables (incidents, with the under-min-ISR write outages
as cause_kind 'under_min_isr', controller_changes, broker_availability), and the per-cluster state the summary and audit.html are made from.

Incidents are grouped exactly as the postmortem report groups them (same code), so an
audit's incident table and ``postmortem`` on the same days say the same thing.
"""
from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from typing import Any

import pyarrow as pa

from parsers.schema import iso_utc
from replay_engine.sharding.shard import MergedReplay

TS = pa.timestamp("us", tz="UTC")

INCIDENTS = pa.schema([
    ("cluster", pa.string()), ("date", pa.string()), ("topic", pa.string()), ("cause_kind", pa.string()),
    ("outage", pa.bool_()), ("count", pa.int32()), ("partitions", pa.list_(pa.int32())), ("start", TS), ("end", TS),
    ("duration_s", pa.float64()), ("partition_seconds", pa.float64()), ("summary", pa.string()),
    ("replicas", pa.list_(pa.int32())), ("isr_at_loss", pa.list_(pa.int32())), ("cause_brokers", pa.list_(pa.int32())),
    ("evidence", pa.string()),
])
CONTROLLER_CHANGES = pa.schema([
    ("cluster", pa.string()), ("date", pa.string()), ("controller", pa.int32()), ("epoch", pa.int32()),
    ("start", TS), ("end", TS), ("end_cause", pa.string()), ("duration_s", pa.float64()),
    ("start_event", pa.string()), ("start_file", pa.string()), ("start_pos", pa.int64()), ("start_text", pa.string()),
])
BROKER_AVAILABILITY = pa.schema([
    ("cluster", pa.string()), ("date", pa.string()), ("broker", pa.int32()), ("state", pa.string()),
    ("start", TS), ("end", TS), ("end_cause", pa.string()), ("duration_s", pa.float64()),
    ("start_event", pa.string()), ("start_file", pa.string()), ("start_pos", pa.int64()), ("start_text", pa.string()),
])


def day(us: int | None) -> str:
    if us is None:
        return "unknown"
    return dt.datetime.fromtimestamp(us / 1e6, tz=dt.timezone.utc).strftime("%Y-%m-%d")


def _us(iso: str | None) -> int | None:
    if not iso:
        return None
    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1_000_000)


def incident_docs(m: MergedReplay) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(outages, brief failovers) as the postmortem report builds them."""
    from forensics.report.build import group_outages

    return group_outages(m.leaderless, m.cluster, m.trace_end)


def incident_rows(m: MergedReplay) -> list[dict[str, Any]]:
    outages, failovers = incident_docs(m)
    rows = []
    for inc in outages:
        start = _us(inc["start"])
        rows.append({
            "cluster": m.cluster, "date": day(start), "topic": inc["topic"], "cause_kind": inc["cause_kind"],
            "outage": True, "count": inc["count"], "partitions": inc["partitions"], "start": start,
            "end": _us(inc["end"]), "duration_s": inc["duration_s"], "partition_seconds": inc["partition_seconds"],
            "summary": inc["summary"], "replicas": inc["replicas"], "isr_at_loss": inc["isr_at_loss"],
            "cause_brokers": inc["cause_brokers"], "evidence": json.dumps(inc["evidence"], sort_keys=True),
        })
    for w in getattr(m, "write_outages", []):
        # a leader, but ISR < min.insync.replicas: acks=all writes refused (replay_engine/causes/write_outages.py)
        start, end = _us(w["start"]), _us(w["end"])
        rows.append({
            "cluster": m.cluster, "date": day(start), "topic": w["topic"], "cause_kind": "under_min_isr",
            "outage": True, "count": 1, "partitions": [w["partition"]], "start": start, "end": end,
            "duration_s": w["duration_s"], "partition_seconds": _dur(start, end if end is not None else m.trace_end),
            "summary": w["summary"], "replicas": w["replicas"], "isr_at_loss": w["isr"],
            "cause_brokers": [d["replica"] for d in w["dropped"]],
            "evidence": json.dumps([w["opened_by"]] + [d["evidence"] for d in w["dropped"] if d["evidence"]],
                                   sort_keys=True),
        })
    for f in failovers:
        start, end = _us(f["start"]), _us(f["end"])
        rows.append({
            "cluster": m.cluster, "date": day(start), "topic": f["topic"], "cause_kind": "leader_failover",
            "outage": False, "count": f["count"], "partitions": f["partitions"], "start": start, "end": end,
            "duration_s": f["longest_s"], "partition_seconds": None, "summary": f["summary"],
            "replicas": None, "isr_at_loss": None, "cause_brokers": None,
            "evidence": json.dumps(f.get("evidence") or [], sort_keys=True),
        })
    return rows


def _ref_cols(ref) -> dict[str, Any]:
    if ref is None:
        return {"start_event": None, "start_file": None, "start_pos": None, "start_text": None}
    return {"start_event": ref.event, "start_file": ref.source_file, "start_pos": ref.source_pos,
            "start_text": (ref.text or "")[:1000]}


def _dur(start: int | None, end: int | None) -> float | None:
    return None if start is None or end is None else round((end - start) / 1e6, 3)


def controller_rows(m: MergedReplay) -> list[dict[str, Any]]:
    return [{"cluster": m.cluster, "date": day(t.start), "controller": t.controller, "epoch": t.epoch,
             "start": t.start, "end": t.end, "end_cause": t.end_cause, "duration_s": _dur(t.start, t.end),
             **_ref_cols(t.start_ref)} for t in m.tenures]


def broker_rows(m: MergedReplay) -> list[dict[str, Any]]:
    rows = []
    for b in sorted(m.periods):
        for p in m.periods[b]:
            rows.append({"cluster": m.cluster, "date": day(p.start), "broker": b, "state": p.state, "start": p.start,
                         "end": p.end, "end_cause": p.end_cause, "duration_s": _dur(p.start, p.end),
                         **_ref_cols(p.start_ref)})
    return rows


def cluster_state(m: MergedReplay, whole_reason: str | None) -> dict[str, Any]:
    """What audit_summary.json and audit.html need of one cluster (kept between incremental runs)."""
    outages, failovers = incident_docs(m)
    secs: Counter = Counter()
    by_day: dict[str, Counter] = {}
    by_topic: Counter = Counter()
    for inc in outages:
        secs[inc["cause_kind"]] += inc["partition_seconds"]
        by_day.setdefault(day(_us(inc["start"])), Counter())[inc["cause_kind"]] += 1
        by_topic[inc["topic"]] += inc["partition_seconds"]
    failures: Counter = Counter()
    for b, ps in m.periods.items():
        for i, p in enumerate(ps):
            if p.state == "up" and p.end is not None:
                failures[(b, p.end_cause or "down")] += 1
    churn: Counter = Counter(day(t.start) for t in m.tenures)
    return {
        "cluster": m.cluster, "mode": m.mode, "kafka_version": m.kafka_version,
        "window": {"start": iso_utc(m.trace_start), "end": iso_utc(m.trace_end)},
        "shards": m.shards, "replayed_whole": whole_reason,
        "incidents": len(outages), "failovers": len(failovers),
        "leaderless_partitions": len({(i["topic"], p) for i in outages for p in i["partitions"]}),
        "leaderless_partition_seconds_by_cause": {k: round(v, 3) for k, v in sorted(secs.items())},
        "incidents_by_day": {d: dict(sorted(c.items())) for d, c in sorted(by_day.items())},
        "leaderless_partition_seconds_by_topic": {k: round(v, 3) for k, v in sorted(by_topic.items())},
        "broker_failures": [{"broker": b, "how": how, "count": n} for (b, how), n in sorted(failures.items())],
        "controller_changes_by_day": dict(sorted(churn.items())),
        "topics": {t: {k: (round(v, 3) if isinstance(v, float) else v) for k, v in st.items()}
                   for t, st in sorted(m.topics.items())},
        "agreement": {k: m.agreement[k] for k in ("compared", "agreed", "ratio", "uncompared", "evidence_gaps")},
        "divergences": len(m.agreement["divergences"]),
        "findings": [{k: v for k, v in f.items() if k in ("kind", "ts", "text", "broker")} for f in m.findings][:200],
        "data_loss": [{k: u.get(k) for k in ("topic", "partition", "ts", "lost_messages", "text")} for u in m.data_loss],
        "outages": [{k: inc[k] for k in ("topic", "cause_kind", "count", "start", "end", "duration_s",
                                          "partition_seconds", "summary")} for inc in outages],
    }
