"""The postmortem's third kind of outage: partitions whose leader's process had died while ZooKeeper still
listed it, so nothing served them though the metadata named a leader (a broker that halted: its last log
directory failed, a disk error; Kafka halts without a shutdown hook and the session outlives the process).

Built from the replay's own records (``ReplayResult.restarts``: each fatal stop with the partitions it left,
``replay_engine.causes.restarts.with_unserved``); this module only filters, totals and words them.
"""
from __future__ import annotations

import html
from typing import Any, Callable

from forensics.report.writes import lead_if_larger
from parsers.schema import us_of_iso as _us

def dead_leaders(results, topic_ok: Callable[[str], bool]) -> list[dict[str, Any]]:
    """One entry per fatal stop that left partitions without a serving leader (those of the topics asked for),
    with their partition-seconds (to the end of the evidence when they were still so), largest first."""
    out = []
    for res in results:
        end = res.stream.trace_end
        for f in getattr(res, "restarts", {}).get("failed_starts", []):
            parts = [u for u in f.get("unserved", []) if topic_ok(u["topic"])]
            if not parts:
                continue
            start = _us(f["start"])
            secs = sum(((_us(u["until"]) if u["until"] else end or start) - start) / 1e6 for u in parts)
            out.append({"cluster": res.cluster, "broker": f["broker"], "start": f["start"], "count": len(parts),
                        "partition_seconds": round(max(secs, 0.0), 3), "cause": f["cause"],
                        "summary": f["sentence"] + ".", "evidence": [f["proof"]],
                        "partitions": [f"{u['topic']}-{u['partition']}" for u in parts]})
    out.sort(key=lambda g: (-g["partition_seconds"], g["cluster"] or "", g["start"]))
    return out


def headline(current: str, other_secs: float, groups: list[dict[str, Any]]) -> str:
    """This outage leads the headline when it is larger (in partition-seconds) than the others together."""
    return lead_if_larger(current, other_secs, groups,
                          "partition outage(s) with a leader whose process had died while ZooKeeper still listed it")


_TITLE = "Partitions led by a broker whose process had died (ZooKeeper still listed it)"


def text_lines(report: dict[str, Any]) -> list[str]:
    groups = report.get("dead_leaders") or []
    if not groups:
        return []
    s = report["summary"]
    lines = ["", f"{_TITLE}: {s['dead_leader_partitions']} partition outage(s), "
                 f"{s['dead_leader_partition_seconds']:,.1f} partition-seconds in all"]
    lines += [f"  - {g['summary']}" for g in groups]
    return lines


def markdown_lines(report: dict[str, Any], md) -> list[str]:
    groups = report.get("dead_leaders") or []
    if not groups:
        return []
    return [f"## {_TITLE}", ""] + [f"- {md(g['summary'])}" for g in groups] + [""]


def html_parts(report: dict[str, Any]) -> list[str]:
    groups = report.get("dead_leaders") or []
    if not groups:
        return []
    return [f"<h2>{html.escape(_TITLE)}</h2><ul>"] + [f"<li>{html.escape(g['summary'])}</li>" for g in groups] + ["</ul>"]
