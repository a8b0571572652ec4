"""Renderers of the report document: terminal text, Markdown, and a plain HTML page.

All three read only the report dict. Times are shown in the zone the user gave
with --tz (the zone the brokers logged in), with the zone named.
"""
from __future__ import annotations

import datetime as dt
import html
import re
from typing import Any
from zoneinfo import ZoneInfo

from forensics.report import dead_leaders, writes
from replay_engine.common.judge import EVIDENCE_GAP


def show_ts(iso: str | None, tz: str = "UTC", date: bool = True) -> str:
    if not iso:
        return "?"
    d = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    zone = dt.timezone.utc if tz == "UTC" else ZoneInfo(tz)
    d = d.astimezone(zone)
    fmt = "%Y-%m-%d %H:%M:%S" if date else "%H:%M:%S"
    return d.strftime(fmt) + f".{d.microsecond // 1000:03d}"


def _zone_label(tz: str) -> str:
    return "UTC" if tz == "UTC" else tz


def _cite(e: dict[str, Any]) -> str:
    where = f"{e.get('source_file')}:{e.get('source_pos')}"
    if e.get("zxid"):
        where += f" (zxid {e['zxid']})"
    return where


def _evidence_kind(rep: dict[str, Any]) -> str:
    if rep["mode"] == "zk":
        return "ZooKeeper transaction log + logs"
    if rep["mode"] == "kraft":
        no_log = any("no __cluster_metadata log" in n for n in rep.get("notes") or [])
        return "broker and controller logs (KRaft)" if no_log else "KRaft metadata log + logs"
    return "broker logs"


def _brokers_line(replay: dict[str, Any], tz: str) -> list[str]:
    out = []
    for b in replay.get("brokers", []):
        bits = []
        periods = b["periods"]
        for k, p in enumerate(periods):
            if p["state"] != "down":
                continue
            if p["end"] == p["start"] and k > 0 and periods[k - 1].get("end_cause") == "bounced":
                # seen only as a new registration (a new broker epoch): when it stopped is not in the evidence
                bits.append(f"restarted at {show_ts(p['start'], tz)} (its stop is not in the evidence)")
                continue
            bits.append(f"down from {show_ts(p['start'], tz)}" + (f" to {show_ts(p['end'], tz)}" if p["end"] else ""))
        status = "; ".join(bits) if bits else "up throughout"
        out.append(f"  broker {b['broker']}: {status}")
    return out


def _controllers_line(replay: dict[str, Any], tz: str) -> list[str]:
    out = []
    who = "node" if replay.get("mode") == "kraft" else "broker"  # a KRaft controller need not be a broker
    for c in replay.get("controllers", []):
        end = f" until {show_ts(c['end'], tz)} ({c['end_cause']})" if c.get("end") else ""
        epoch = f" epoch {c['epoch']}" if c.get("epoch") is not None else ""
        out.append(f"  {who} {c['controller']}{epoch} from {show_ts(c['start'], tz)}{end}")
    return out


def _replays(report: dict[str, Any]) -> list[dict[str, Any]]:
    r = report["replay"]
    return r["clusters"] if "clusters" in r else [r]


def render_text(report: dict[str, Any], tz: str = "UTC", max_evidence: int = 8) -> str:
    s = report["summary"]
    lines = []
    zl = _zone_label(tz)
    lines.append(f"kafka-forensics postmortem: cluster {', '.join(map(str, s['clusters']))}")
    lines.append(f"Window: {show_ts(s['window']['start'], tz)} -> {show_ts(s['window']['end'], tz)} ({zl})")
    lines.extend(several_clusters_lines(report, tz))
    several = len(_replays(report)) > 1
    for rep in _replays(report):
        src = _evidence_kind(rep)
        ver = rep.get("kafka_version") or "unknown"
        if several:
            lines.append(f"Cluster {rep.get('cluster')}:")
        lines.append(f"Evidence: {src}; Kafka version {ver} ({rep.get('kafka_version_source')})")
        if rep.get("rule_set"):
            lines.append(f"Rules: {rep['rule_set']} (docs/semantics.md)")
        if len(set((rep.get("broker_versions") or {}).values())) > 1:
            lines.append("Broker versions: " + ", ".join(f"{b}: {v}" for b, v in rep["broker_versions"].items()))
        lines.append("Brokers:")
        lines.extend(_brokers_line(rep, tz) or ["  (no broker membership in the evidence)"])
        lines.append("Controllers:")
        lines.extend(_controllers_line(rep, tz) or ["  (no controller election in the evidence)"])
    lines.append("")
    if not report["incidents"]:
        lines.append("No leaderless partitions found.")
    else:
        lines.append(f"Leaderless partitions: {s['leaderless_partitions']} in {s['incidents']} incident(s), "
                     f"{s['leaderless_partition_seconds']:,.1f} partition-seconds in all")
    for i, inc in enumerate(report["incidents"], 1):
        lines.append("")
        lines.append(f"[{i}] {inc['summary']}")
        if inc["count"] > 1:
            shown = ", ".join(map(str, inc["partitions"][:20])) + (" ..." if inc["count"] > 20 else "")
            lines.append(f"    partitions: {shown}")
        if inc.get("unavailable_from"):
            lines.append(f"    {inc['unavailable_from']['text']}")
        lines.append("    evidence:")
        for e in inc["evidence"][:max_evidence]:
            lines.append(f"      {show_ts(e['ts'], tz)}  {_cite(e)}")
            lines.append(f"          {e['text'][:200]}")
        if len(inc["evidence"]) > max_evidence:
            lines.append(f"      ... {len(inc['evidence']) - max_evidence} more in report.json")
        for c in inc["client_symptoms"]:
            lines.append(f"    clients: {c['client']}: {c['count']} x {c['error']}{_on_parts(c)} between "
                         f"{show_ts(c['first'], tz, date=False)} and {show_ts(c['last'], tz, date=False)} "
                         f"(e.g. {c['example']['source_file']}:{c['example']['source_pos']})")
    lines.extend(writes.text_lines(report, show_ts))
    lines.extend(dead_leaders.text_lines(report))
    if report.get("failovers"):
        lines.append("")
        lines.append("Brief leader failovers (the controller re-elected from the ISR; not outages):")
        for f in report["failovers"]:
            lines.append(f"  {show_ts(f['start'], tz)}  {f['topic']}: {f['count']} partition(s), longest "
                         f"{f['longest_s'] * 1000:,.0f} ms")
    if report.get("data_loss"):
        lines.append("")
        lines.append("Unclean leader elections (data loss):")
        for u in report["data_loss"]:
            lines.append(f"  - {show_ts(u['ts'], tz)}  {u['text']}")
    if report["remedies"]:
        lines.append("")
        lines.append("What would have prevented it:")
        for r in report["remedies"]:
            lines.append(f"  - {r['text']}")
    lines.append("")
    lines.extend(replay_check_lines(s))
    for f in report["findings"]:
        if f["kind"] in SHOWN_FINDINGS:
            lines.append(f"Finding: {f['text']}")
    t = report["inputs"]["totals"]
    lines.append(f"Inputs: {t.get('files', 0)} file(s), {t.get('lines', 0):,} lines/records -> {t.get('events', 0):,} "
                 f"events ({t.get('unrecognized', 0):,} unrecognized, {t.get('quarantined', 0):,} quarantined, "
                 f"{t.get('files_with_errors', 0)} file(s) with errors)")
    lines.extend(f"  {x}" for x in stream_lines(report))
    lines.extend(f"  {x}" for x in input_problem_lines(report))
    return _plain("\n".join(lines)) + "\n"


# Findings about the evidence itself (the rest are in report.json): the reader must see them.
SHOWN_FINDINGS = ("replay_divergence", "input_problem", "log_copy", "clock_skew", "failed_start",
                  "generated_broker_id", "cluster_not_told")


def several_clusters_lines(report: dict[str, Any], tz: str = "UTC") -> list[str]:
    """'FOLDER holds N clusters, each replayed alone:' and one line per cluster, with the line that named it."""
    out = []
    for f in report["findings"]:
        if f["kind"] != "several_clusters":
            continue
        head, _, _ = f["text"].partition(": ")
        out.append(f"{head}:")
        for c in f["clusters"]:
            ev = c["evidence"][0] if c["evidence"] else None
            named = f", named at {ev['source_file']}:{ev['source_pos']}" if ev else ""
            out.append(f"  {c['name']}: {c['label']}{named}; broker(s) {', '.join(map(str, c['brokers'])) or 'none'};"
                       f" {show_ts(c['first'], tz)} to {show_ts(c['last'], tz)}; {c['events']:,} events")
            out.extend(f"    with {a}" for a in c["attributed"])
    return out
MAX_FILES_SHOWN = 10


MAX_SOURCES_SHOWN = 50


def stream_lines(report: dict[str, Any]) -> list[str]:
    """"incident.txt: kafka-1 -> broker 1 (from '[KafkaServer id=1]' at incident.txt:12)", one per source."""
    got = report["inputs"].get("stream_sources") or []
    more = [f"... {len(got) - MAX_SOURCES_SHOWN} more source(s): see report.json inputs.stream_sources"]
    return got[:MAX_SOURCES_SHOWN] + (more if len(got) > MAX_SOURCES_SHOWN else [])


def input_problem_lines(report: dict[str, Any]) -> list[str]:
    """One line per damaged file ("path: first problem"), so no loss of evidence goes unsaid."""
    bad = report["inputs"].get("files_with_errors") or []
    out = []
    for f in bad[:MAX_FILES_SHOWN]:
        more = len(f["errors"]) - 1
        out.append(f"{f['path']}: {f['errors'][0]}" + (f" (+{more} more)" if more > 0 else ""))
    if len(bad) > MAX_FILES_SHOWN:
        out.append(f"... {len(bad) - MAX_FILES_SHOWN} more file(s) with errors: see report.json inputs.files_with_errors")
    return out


def render_markdown(report: dict[str, Any], tz: str = "UTC") -> str:
    s = report["summary"]
    md = [f"# Postmortem: cluster {_md(', '.join(map(str, s['clusters'])))}", ""]
    md.append(f"*Window:* {show_ts(s['window']['start'], tz)} to {show_ts(s['window']['end'], tz)} ({_zone_label(tz)})  ")
    md.append(f"*Headline:* {_md(s['headline'])}")
    md.append("")
    told = several_clusters_lines(report, tz)
    if told:
        md.append("## Clusters in this evidence")
        md.append("")
        md.extend(("- " if not x.startswith(" ") else "  - ") + _md(x.strip()) for x in told)
        md.append("")
    for rep in _replays(report):
        md.append("## Brokers and controller" + (f": {_md(rep.get('cluster'))}" if len(_replays(report)) > 1 else ""))
        md.append("")
        md.extend(f"- {_md(x.strip())}" for x in _brokers_line(rep, tz))
        md.append("")
        md.extend(f"- controller: {_md(x.strip())}" for x in _controllers_line(rep, tz))
        md.append("")
    md.append("## Leaderless partitions")
    md.append("")
    if not report["incidents"]:
        md.append("None.")
    for i, inc in enumerate(report["incidents"], 1):
        md.append(f"### {i}. {_md(inc['topic'])}: {inc['count']} partition(s), cause `{inc['cause_kind']}`")
        md.append("")
        md.append(_md(inc["summary"]))
        md.append("")
        if inc.get("unavailable_from"):
            md.append(_md(inc["unavailable_from"]["text"]))
            md.append("")
        md.append("| time | source | line |")
        md.append("|---|---|---|")
        for e in inc["evidence"]:
            md.append(f"| {show_ts(e['ts'], tz)} | {_md(_cite(e))} | {_md(e['text'][:200])} |")
        md.append("")
        for c in inc["client_symptoms"]:
            md.append(f"- client {_md(c['client'])}: {c['count']} x {_md(c['error'])}{_on_parts(c)} from "
                      f"{show_ts(c['first'], tz)} to {show_ts(c['last'], tz)}")
        md.append("")
    md.extend(writes.markdown_lines(report, _md))
    md.extend(dead_leaders.markdown_lines(report, _md))
    if report.get("failovers"):
        md.append("## Brief leader failovers (not outages)")
        md.append("")
        md.extend(f"- {show_ts(f['start'], tz)}: {_md(f['topic'])}, {f['count']} partition(s), longest "
                  f"{f['longest_s'] * 1000:,.0f} ms" for f in report["failovers"])
        md.append("")
    if report.get("data_loss"):
        md.append("## Unclean leader elections (data loss)")
        md.append("")
        md.extend(f"- {show_ts(u['ts'], tz)}: {_md(u['text'])}" for u in report["data_loss"])
        md.append("")
    if report["remedies"]:
        md.append("## What would have prevented it")
        md.append("")
        md.extend(f"- {_md(r['text'])}" for r in report["remedies"])
        md.append("")
    md.append("## Replay check and findings")
    md.append("")
    md.extend(f"- {_md(x.strip())}" for x in replay_check_lines(s))
    md.extend(f"- {_md(x)}" for x in finding_lines(report["findings"]))
    md.append("")
    t = report["inputs"]["totals"]
    md.append(f"Inputs: {t.get('files', 0)} files, {t.get('lines', 0):,} lines/records, {t.get('events', 0):,} events.")
    sources = stream_lines(report)
    if sources:
        md.append("")
        md.append("Sources in container and collector streams:")
        md.append("")
        md.extend(f"- {_md(x)}" for x in sources)
    problems = input_problem_lines(report)
    if problems:
        md.append("")
        md.extend(f"- {_md(x)}" for x in problems)
    return _plain("\n".join(md)) + "\n"


def replay_check_lines(s: dict[str, Any]) -> list[str]:
    """The replay check with what was compared, agreed, diverged and left uncompared (and why) side by side,
    and the Kafka release whose rules the replay used."""
    ag = s["agreement"]
    rules = ", ".join(sorted({f"Kafka {v or '?'} ({r})" for v, r in zip(s.get("kafka_version", []),
                                                                         s.get("rule_set", [])) if r}))
    by = f" with the rules of {rules}" if rules else ""
    if not ag["compared"] and not ag.get("uncompared") and not ag.get("evidence_gaps"):
        return [f"Replay check{by}: the evidence holds no controller decision to compare with."]
    out = [f"Replay check{by}: {ag['compared']:,} recorded controller decisions compared: {ag['agreed']:,} agree, "
           f"{ag.get('diverged', ag['compared'] - ag['agreed']):,} diverge"
           + (f" ({ag['ratio']:.1%} agree)" if ag["ratio"] is not None else "")
           + f"; {ag.get('uncompared', 0):,} left uncompared; {ag.get('evidence_gaps', 0):,} in evidence gaps "
             "(decided on what the evidence does not hold: lost lines or hours, a file not collected)."]
    for reason, n in list(ag.get("uncompared_reasons", {}).items())[:3]:
        out.append(f"  uncompared, {n:,}: {reason}")
    for reason, n in list(ag.get("gap_reasons", {}).items())[:3]:
        inner = reason[len(EVIDENCE_GAP):].strip()
        why = inner[1:-1] if inner.startswith("(") and inner.endswith(")") else reason
        out.append(f"  in evidence gaps, {n:,}: {why}")
    return out


def finding_lines(findings: list[dict[str, Any]]) -> list[str]:
    """Findings with a sentence one per line; those without (raw records of one kind) counted per kind, with the
    first one's evidence, so that a hundred failed ZooKeeper writes make one line, not a hundred."""
    out, raw = [], {}
    for f in findings:
        if f.get("text"):
            out.append(f"{f['kind']}: {f['text']}")
        else:
            raw.setdefault(f["kind"], []).append(f)
    for kind, fs in raw.items():
        ev = next((e for f in fs for e in f.get("evidence", [])), None)
        first = f"; first: {ev.get('text')} ({ev.get('source_file')}:{ev.get('source_pos')})" if ev else ""
        out.append(f"{kind}: {len(fs):,} time(s){first}")
    return out


def _md(text: Any) -> str:
    """Log text as Markdown text: no HTML, no links, no code spans, no table cell breaks. (Not in a code
    span either: a backtick in the text would close it, and what follows is Markdown again.)"""
    text = str(text).replace("\\", "\\\\")
    for c in "|[]`":
        text = text.replace(c, "\\" + c)
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


# C0 and C1 control characters (but tab and newline) in log text could drive the terminal
# (ANSI escapes clear the screen, hide lines, retitle windows): shown as \xNN instead.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _plain(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def render_html(report: dict[str, Any], tz: str = "UTC") -> str:
    """A plain, self-contained page (every log-derived string escaped)."""
    e = html.escape
    s = report["summary"]
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{e('Postmortem: ' + ', '.join(map(str, s['clusters'])))}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto}"
        "td,th{border-bottom:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
        "code{font-size:90%}.k{color:#b00}</style></head><body>",
        f"<h1>{e('Postmortem: cluster ' + ', '.join(map(str, s['clusters'])))}</h1>",
        f"<p>{e(s['headline'])}</p>",
        f"<p>Window: {e(show_ts(s['window']['start'], tz))} to {e(show_ts(s['window']['end'], tz))} {e(_zone_label(tz))}</p>",
    ]
    parts.extend(f"<p>Kafka version {e(str(rep.get('kafka_version') or 'unknown'))}; rules: {e(rep['rule_set'])} "
                 "(docs/semantics.md)</p>" for rep in _replays(report) if rep.get("rule_set"))
    for i, inc in enumerate(report["incidents"], 1):
        parts.append(f"<h2>{i}. {e(inc['topic'])} <span class='k'>{e(inc['cause_kind'])}</span></h2>")
        parts.append(f"<p>{e(inc['summary'])}</p>")
        if inc.get("unavailable_from"):
            parts.append(f"<p>{e(inc['unavailable_from']['text'])}</p>")
        if inc.get("client_symptoms"):
            parts.append("<ul>")
            parts.extend(f"<li>client {e(c['client'])}: {c['count']} x <code>{e(c['error'])}</code>{e(_on_parts(c))} "
                         f"from {e(show_ts(c['first'], tz))} to {e(show_ts(c['last'], tz))}</li>"
                         for c in inc["client_symptoms"])
            parts.append("</ul>")
        parts.append("<table><tr><th>time</th><th>source</th><th>line</th></tr>")
        for ev in inc["evidence"]:
            parts.append(f"<tr><td>{e(show_ts(ev['ts'], tz))}</td><td><code>{e(_cite(ev))}</code></td>"
                         f"<td><code>{e(ev['text'])}</code></td></tr>")
        parts.append("</table>")
    parts.extend(writes.html_parts(report))
    parts.extend(dead_leaders.html_parts(report))
    if report.get("failovers"):
        parts.append("<h2>Brief leader failovers (not outages)</h2><ul>")
        parts.extend(f"<li>{e(show_ts(f['start'], tz))}: {e(f['topic'])}, {f['count']} partition(s), longest "
                     f"{f['longest_s'] * 1000:,.0f} ms</li>" for f in report["failovers"])
        parts.append("</ul>")
    if report.get("data_loss"):
        parts.append("<h2>Unclean leader elections (data loss)</h2><ul>")
        parts.extend(f"<li>{e(show_ts(u['ts'], tz))}: {e(u['text'])}</li>" for u in report["data_loss"])
        parts.append("</ul>")
    if report["remedies"]:
        parts.append("<h2>What would have prevented it</h2><ul>")
        parts.extend(f"<li>{e(r['text'])}</li>" for r in report["remedies"])
        parts.append("</ul>")
    parts.append("<h2>Replay check</h2><ul>")
    parts.extend(f"<li>{e(x.strip())}</li>" for x in replay_check_lines(s))
    parts.append("</ul>")
    shown = [f["text"] for f in report["findings"] if f["kind"] in SHOWN_FINDINGS + ("several_clusters",)] + \
        input_problem_lines(report)
    if shown:
        parts.append("<h2>Findings about the evidence</h2><ul>")
        parts.extend(f"<li>{e(x)}</li>" for x in shown)
        parts.append("</ul>")
    parts.append("</body></html>")
    return _plain("\n".join(parts)) + "\n"


def _on_parts(symptom: dict) -> str:
    parts = symptom.get("partitions") or []
    if not parts:
        return ""
    shown = ", ".join(map(str, parts[:10])) + (" ..." if len(parts) > 10 else "")
    return f" on partition{'s' if len(parts) > 1 else ''} {shown}"
