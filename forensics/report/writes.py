"""The postmortem's second kind of outage: writes refused with a leader present (ISR below
min.insync.replicas), grouped per topic and cause, and the brokers that tried to come back and failed.

Built from the replay's own records (``ReplayResult.under_min_isr``, ``ReplayResult.restarts``); this
module only groups, totals and words them for the report and its renderings.
"""
from __future__ import annotations

import html
from typing import Any, Callable


def _reason(o) -> str:
    """The summary's cause part, without the partition and times, so partitions that share it group."""
    if o.replicas is not None and len(o.replicas) < o.min_isr:
        return f"replication factor {len(o.replicas)} < min.insync.replicas {o.min_isr}"
    if o.dropped:
        return "; ".join(f"{d.why} (replica {d.replica})" for d in o.dropped)
    return "unknown"


def write_outages(results, topic_ok: Callable[[str], bool]) -> list[dict[str, Any]]:
    """One entry per (cluster, topic, cause): the partitions, partition-seconds, first start, client errors,
    and the longest outage's own sentence."""
    groups: dict[tuple, dict[str, Any]] = {}
    for res in results:
        end = res.stream.trace_end
        for o in getattr(res, "under_min_isr", []):  # a sharded replay's merge does not carry them yet
            if not topic_ok(o.topic):
                continue
            key = (res.cluster or "", o.topic, _reason(o))
            g = groups.setdefault(key, {"cluster": res.cluster, "topic": o.topic, "reason": key[2], "partitions": [],
                                        "partition_seconds": 0.0, "start": o.start, "min_insync_replicas": o.min_isr,
                                        "min_insync_replicas_source": o.min_isr_source, "client_errors": {},
                                        "_longest": (-1.0, None)})
            secs = o.seconds(end)
            g["partitions"].append(o.partition)
            g["partition_seconds"] += secs
            g["start"] = min(g["start"], o.start)
            for err, n in o.error_counts.items():
                g["client_errors"][err] = g["client_errors"].get(err, 0) + n
            if secs > g["_longest"][0]:
                g["_longest"] = (secs, o)
    from parsers.schema import iso_utc

    out = []
    for key in sorted(groups):
        g = groups[key]
        _, o = g.pop("_longest")
        g["partitions"] = sorted(set(g["partitions"]))
        g["count"] = len(g["partitions"])
        g["partition_seconds"] = round(g["partition_seconds"], 3)
        g["start"] = iso_utc(g["start"])
        g["client_errors"] = dict(sorted(g["client_errors"].items()))
        g["example"] = o.to_json()
        g["summary"] = o.summary if g["count"] == 1 else \
            f"{g['count']} partitions of {o.topic} refused acks=all writes ({_reason(o)}); the longest: {o.summary}"
        out.append(g)
    out.sort(key=lambda g: (-g["partition_seconds"], g["cluster"] or "", g["topic"], g["reason"]))
    return out


def restart_findings(results, told: set[tuple] = frozenset()) -> list[dict[str, Any]]:
    """Failed starts and fatal stops as findings; ``told``: (cluster, broker, start) of those told elsewhere."""
    out = []
    for res in results:
        restarts = getattr(res, "restarts", {})
        for f in restarts.get("failed_starts", []):
            # a registration the same process retried until it succeeded was a delay; a start whose JVM exited failed
            if (res.cluster, f["broker"], f["start"]) in told:
                continue
            if f.get("recovered_at") is None or f["phase"] != "registration":
                out.append({"kind": "failed_start", "cluster": res.cluster, "text": f["sentence"],
                            "cause": f["cause"], "evidence": [f["proof"]]})
        for g in restarts.get("generated_ids", []):
            out.append({"kind": "generated_broker_id", "cluster": res.cluster, "text": g["text"],
                        "evidence": [g["evidence"]]})
    return out


def lead_if_larger(current: str, other_secs: float, groups: list[dict[str, Any]], what: str) -> str:
    """An outage kind (``groups``, largest first) leads the headline when its partition-seconds exceed the others':
    "<n> <what>, <secs> partition-seconds; the largest: <its sentence> Also: <current>"."""
    secs = sum(g["partition_seconds"] for g in groups)
    if not groups or secs <= other_secs:
        return current
    n = sum(g["count"] for g in groups)
    return f"{n} {what}, {secs:,.1f} partition-seconds; the largest: {groups[0]['summary']} Also: {current}"


def headline(leaderless_headline: str, leaderless_secs: float, groups: list[dict[str, Any]]) -> str:
    """The under-min-ISR outage leads the headline when it is the larger one (in partition-seconds)."""
    return lead_if_larger(leaderless_headline, leaderless_secs, groups,
                          "partition(s) refused acks=all writes while they had a leader (ISR below min.insync.replicas)")


def text_lines(report: dict[str, Any], show_ts) -> list[str]:
    groups = report.get("write_outages") or []
    if not groups:
        return []
    s = report["summary"]
    lines = ["", f"Writes refused with a leader present (ISR < min.insync.replicas): {s['under_min_isr_partitions']} "
                 f"partition(s), {s['under_min_isr_partition_seconds']:,.1f} partition-seconds in all"]
    for g in groups:
        lines.append(f"  - {g['summary']}")
        if g["client_errors"]:
            lines.append("      clients: " + ", ".join(f"{n} x {e}" for e, n in g["client_errors"].items()))
    return lines


def markdown_lines(report: dict[str, Any], md) -> list[str]:
    groups = report.get("write_outages") or []
    out = ["## Writes refused with a leader present (under min.insync.replicas)", ""]
    if not groups:
        return out + ["None.", ""]
    for g in groups:
        errs = (" Clients: " + ", ".join(f"{n} x {e}" for e, n in g["client_errors"].items()) + ".") \
            if g["client_errors"] else ""
        out.append(f"- {md(g['summary'])}{md(errs)}")
    return out + [""]


def html_parts(report: dict[str, Any]) -> list[str]:
    groups = report.get("write_outages") or []
    if not groups:
        return []
    e = html.escape
    parts = ["<h2>Writes refused with a leader present (under min.insync.replicas)</h2><ul>"]
    for g in groups:
        errs = (" Clients: " + ", ".join(f"{n} x {x}" for x, n in g["client_errors"].items()) + ".") \
            if g["client_errors"] else ""
        parts.append(f"<li>{e(g['summary'] + errs)}</li>")
    parts.append("</ul>")
    return parts
