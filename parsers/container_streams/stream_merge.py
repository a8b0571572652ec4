"""A big container stream's summary from what its ranges read: the one ``parse_container_stream`` writes.

The ranges give, in file order, their own accounting (collector lines, quarantined records, read
problems) and, per source, parts (see ``ranges``). A source's parts are merged as a broker log's
ranges are (``broker_log_ranges.merge_parts``); its broker comes from the ids the survey found in its
lines, else ``--broker-map``; the rest follows ``demux`` line for line. Event counts come last, from
the finished events (``finish_source_events``).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from parsers.broker_logs.broker_log_ranges import finish_file_events, merge_parts
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.container_streams.demux import MAX_LINE_CHARS, MAX_REPORTED, ZONE_GAP_US, zone_note
from parsers.container_streams.detect import GRAMMARS
from parsers.container_streams.identity import resolve_found
from parsers.schema import Event, iso_utc


def merge_stream(ctx: SourceContext, size: int, survey: dict, ranges: list[dict[str, Any]],
                 parts: dict[str, list[dict[str, Any]]], turned: Iterable[str] = ()) -> FileSummary:
    """``ranges``: each range's own accounting, in file order; ``parts``: per source, its parts in file order;
    ``turned``: the sources read oldest first from a stream newest first (``sorted_runs``)."""
    grammar = GRAMMARS[survey["key"]]
    infos = survey["sources"]
    summary = FileSummary(path=ctx.path, kind="container_stream", broker_id=ctx.broker_hint, cluster=ctx.cluster,
                          bytes=size)
    outside: dict[str, list[int]] = {}
    records: dict[str, list[int]] = {}
    joined_notes: list[str] = []
    for r in ranges:
        summary.count("other", r["other"])
        summary.count("quarantined", r["quarantined"])
        summary.lines += r["lines"]
        for q in r["samples"]:
            summary.sample(q)
        for key, acc in (("outside", outside), ("records", records)):
            for why, count, first in r[key]:
                acc.setdefault(why, [0, first])[0] += count
        joined_notes.extend(r["joined_notes"])
    for r in ranges:
        cut = r["cut"]
        if cut is not None:
            summary.count("quarantined")
            summary.lines += 1
            if "sample" in cut:  # the Spark path hands samples on as rows of their own
                summary.sample(cut["sample"])
            summary.errors.append(f"line {cut['pos']}: {cut['why']}; quarantined")
    names = sorted(infos)
    summary.notes.append(f"{grammar.name}: {len(names)} source(s) ({', '.join(names) or 'none'})")
    for why, (count, first) in outside.items():
        summary.notes.append(f"line {first}: {why} ({count} line(s) counted as the collector's own, not parsed)")
    for why, (count, first) in records.items():
        summary.errors.append(f"line {first}: {why}" + (f" ({count} records quarantined)" if count > 1 else "; quarantined"))
    summary.errors.extend(joined_notes[:MAX_REPORTED])

    turned = set(turned)
    streams = []
    for name in names:
        if name in turned:  # as demux._put_in_order says it
            summary.notes.append(f"{name}: lines are newest first (logcli without --forward); read oldest first")
        streams.append(_source(name, infos[name], parts.get(name, []), ctx, size, summary, len(names) == 1))
    summary.streams = streams
    ids = {s["broker_id"] for s in streams if s["kafka"]}
    summary.broker_id = next(iter(ids)) if len(ids) == 1 else None
    if summary.broker_id is None:
        summary.broker_id = ctx.broker_hint
    for r in ranges:
        summary.errors.extend(r["read_errors"])
    long_lines = [x for r in ranges for x in r["long_lines"]]
    for line_no, length in long_lines[:MAX_REPORTED]:
        summary.errors.append(f"line {line_no}: {length} bytes long; only the first {MAX_LINE_CHARS} were parsed")
    bad = sum(r["non_utf8"][0] for r in ranges)
    if bad:
        first_bad = min(r["non_utf8"][1] for r in ranges if r["non_utf8"][1] is not None)
        summary.notes.append(f"{bad} line(s) were not valid UTF-8 (first at line {first_bad}); read as Latin-1")
    return summary


def _source(name: str, info: dict, parts: list[dict], ctx: SourceContext, size: int, summary: FileSummary,
            single: bool) -> dict:
    found = {int(bid): (words, pos) for bid, (words, pos) in info["ids"].items()}
    ident = resolve_found(name, found, ctx.path, ctx.broker_map, ctx.broker_hint, single)
    sub = merge_parts(ctx.path, ident.broker_id, ctx.cluster, size, parts)
    lines = sum(p["lines"] for p in parts)
    n_events = sum(p["events"] for p in parts)
    kafka = any(p["logger"] for p in parts)
    first = parts[0]["first"] if parts else None
    last = parts[-1]["last"] if parts else None
    if kafka:
        gaps = [g for p in parts for g in p["gaps"]]
        offset = _median_offset(gaps[:200]) if not _prefixed(info, ctx) else None
        if offset is not None:
            summary.notes.append(zone_note(name, offset, ctx.tz))
        for p in parts:
            for q in p["samples"]:
                summary.sample(q)
        summary.absorb_counts(sub)
        summary.errors.extend(f"{name}: {msg}" for msg in sub.errors)
        summary.notes.extend(f"{name}: {msg}" for msg in sub.notes)
    else:
        summary.count("other", lines)
        summary.lines += lines
        summary.notes.append(f"{name}: {lines} line(s) at {ctx.path}:{first}-{last} are not a Kafka "
                             "broker's or client's (no Kafka logger, no event); counted, not used")
    broker = sub.broker_id if kafka else None
    how = ident.how if kafka else "not a Kafka source"
    client = sum(p["client"] for p in parts)
    if kafka and ident.broker_id is None and broker is not None:
        how = "from the log idents of its lines (one broker id throughout)"
    elif kafka and broker is None and n_events and client == n_events:
        how = "a Kafka client's log (no broker id)"
    return {
        "name": name, "kafka": kafka, "broker_id": broker, "how": how, "conflict": ident.conflict,
        "lines": lines, "first_line": first, "last_line": last,
        "joined_records": sum(p["joined"] for p in parts),
        "parsed": sub.parsed if kafka else 0,
        "other": sub.other if kafka else lines,
        "unrecognized": sub.unrecognized if kafka else 0,
        "quarantined": sub.quarantined if kafka else 0,
        "events": n_events,
        "first_ts": iso_utc(sub.first_ts) if kafka else None,
        "last_ts": iso_utc(sub.last_ts) if kafka else None,
        "kafka_version": sub.kafka_version,
    }


def _prefixed(info: dict, ctx: SourceContext) -> bool:
    from parsers.broker_logs.log4j_layout import LocalClock, choose_layout

    return info["stamped"] and choose_layout([t for t, _ in info["head"]], LocalClock(ctx.tz)) is None


def _median_offset(gaps: list[int | None]) -> int | None:
    got = sorted(g for g in gaps if g is not None)
    if not got:
        return None
    gap = got[len(got) // 2]
    return gap if abs(gap) >= ZONE_GAP_US else None


def finish_source_events(events: Iterable[Event], broker: int | None) -> Iterator[Event]:
    """One source's events in its order, attributed to its broker and finished as the whole read does."""
    return finish_file_events(events, broker)


def add_event_counts(summary: FileSummary, events: Iterable[Event]) -> None:
    for ev in events:
        summary.event_counts[ev.event_type] += 1
        summary.events += 1
