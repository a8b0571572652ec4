"""Is what ``watch`` ended with what ``postmortem`` says of the same files? The tests and the benchmark ask it.

``postmortem_report`` reads a folder as ``postmortem`` does, in this process (every file parsed whole by the same
parsers, raw ZooKeeper transactions left out, copies of a log line dropped, the clusters replayed whole, the
report built); ``answer`` is what is compared: the incidents (with the lines that prove them), the brief failovers
and every leaderless interval with its cause.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def postmortem_report(folder: Path, cluster: str) -> dict[str, Any]:
    from forensics.pipeline import drop_log_copies, replay_order
    from forensics.report.build import build_report
    from forensics.sources import collect_inputs
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source
    from replay_engine.api import replay

    events = []
    for ref in collect_inputs([str(folder)], folder.parent / ".postmortem-extract").files:
        evs, _ = parse_source(Path(ref.read_path).read_bytes(), SourceContext(ref.display, cluster, ref.broker_hint))
        events += [e for e in evs if e.event_type != "zk_txn"]
    events.sort(key=replay_order)
    events, _ = drop_log_copies(events)
    return build_report(replay(events), {}, events, sources=[str(folder)])


def answer(report: dict[str, Any]) -> dict[str, Any]:
    rep = report["replay"]
    return {
        "incidents": [{k: i.get(k) for k in ("topic", "cause_kind", "partitions", "start", "end", "summary",
                                             "cause_brokers", "evidence")} for i in report["incidents"]],
        "failovers": [{k: i.get(k) for k in ("topic", "partitions", "start", "end", "summary")}
                      for i in report["failovers"]],
        "leaderless": sorted((x["topic"], x["partition"], x["start"], x["end"], x["cause"]["kind"],
                              x["cause"]["summary"]) for c in rep.get("clusters", [rep]) for x in c["leaderless"]),
    }
