"""One container/collector stream -> per-source broker logs -> events, with the file's accounting.

Each source (compose service, pod/container, host) is handed to the broker-log parser
as one log holding all its loggers interleaved, as a container's stdout does. Events and
quarantined lines keep the file's own line numbers; the file summary keeps the identity
``lines == parsed + other + unrecognized + quarantined`` in log lines (a joined 16 KiB
split counts once, a document holding a stack trace counts each of its lines) and lists
every source with its broker, how that was found, and its own accounting.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import chain
from typing import Iterator

from parsers.broker_logs.log4j_layout import LocalClock, choose_layout
from parsers.common.accounting import FileSummary, Quarantined
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems, decode_line, iter_raw_lines
from parsers.container_streams.detect import GRAMMARS, detect_head
from parsers.container_streams.identity import resolve
from parsers.container_streams.records import Piece
from parsers.schema import Event, iso_utc

MAX_LINE_CHARS = 1_000_000
MAX_REPORTED = 5
SNIFF_LINES = 400
_LINE_REF = re.compile(r"^line (\d+)")
# A logger of Kafka's own (the broker's classes, its clients'), as log4j layouts print it: "(kafka.log.Log)",
# Strimzi's "(kafka.log.Log) [thread]". What tells a broker's quiet hour from ZooKeeper's container.
_KAFKA_LOGGER = re.compile(r"\((?:kafka\.|org\.apache\.kafka\.|state\.change\.logger\))")


@dataclass
class _Source:
    name: str
    texts: list[str] = field(default_factory=list)
    pos: list[int] = field(default_factory=list)
    stamps: list[str | None] = field(default_factory=list)
    order: list[tuple] = field(default_factory=list)
    joined: int = 0  # records joined into longer lines

    def add(self, text: str, pos: int, stamp: str | None, order: tuple | None) -> None:
        for part in text.split("\n") if "\n" in text else (text,):
            self.texts.append(part[:-1] if part.endswith("\r") else part)
            self.pos.append(pos)
            self.stamps.append(stamp)
            if order is not None:
                self.order.append(order)


def _lines(data: bytes, problems: ReadProblems) -> Iterator[tuple[int, str]]:
    n = 0
    for raw in iter_raw_lines(data, problems, max_line=MAX_LINE_CHARS):
        n += 1
        yield n, decode_line(raw, n, problems)


def parse_container_stream(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    problems = ReadProblems()
    numbered = _lines(data, problems)
    key, head = detect_head(numbered)
    if key is None:  # the sniffer saw a container stream in the first bytes; these lines say otherwise
        summary.errors.append("no container or collector format recognised in the first lines")
        summary.lines = sum(1 for _ in chain(head, numbered))
        summary.unrecognized = summary.lines
        return []
    grammar = GRAMMARS[key]
    sources: dict[str, _Source] = {}
    outside: dict[str, list[int]] = {}  # why -> [count, first line]
    quarantined_records: dict[str, list] = {}
    joined_notes: list[str] = []
    last: Piece | None = None
    for piece in grammar.pieces(chain(head, numbered), ctx.path):
        last = piece
        if piece.kind == "line":
            src = sources.get(piece.source or "?")
            if src is None:
                src = sources[piece.source or "?"] = _Source(piece.source or "?")
            src.add(piece.text, piece.pos, piece.stamp, piece.order if grammar.reorder else None)
            if piece.joined > 1:
                src.joined += piece.joined - 1
            if piece.why and len(joined_notes) < MAX_REPORTED:
                joined_notes.append(f"line {piece.pos}: {piece.why}")
        elif piece.kind == "other":
            summary.count("other")
            summary.lines += 1
            o = outside.setdefault(piece.why, [0, piece.pos])
            o[0] += 1
        else:
            summary.count("quarantined")
            summary.lines += 1
            summary.sample(Quarantined(ctx.path, piece.pos, "quarantined", piece.why, piece.text[:2000]))
            q = quarantined_records.setdefault(piece.why, [0, piece.pos])
            q[0] += 1

    if not grammar.json and last is not None and last.kind == "line" and last.pos == problems.unterminated_line:
        _quarantine_cut_line(sources[last.source or "?"], summary, ctx.path)
    summary.notes.append(f"{grammar.name}: {len(sources)} source(s) ({', '.join(sorted(sources)) or 'none'})")
    for why, (count, first) in outside.items():
        summary.notes.append(f"line {first}: {why} ({count} line(s) counted as the collector's own, not parsed)")
    for why, (count, first) in quarantined_records.items():
        summary.errors.append(f"line {first}: {why}"
                              + (f" ({count} records quarantined)" if count > 1 else "; quarantined"))
    summary.errors.extend(joined_notes)

    events: list[Event] = []
    streams = []
    single = len(sources) == 1
    for name in sorted(sources):
        src = sources[name]
        _put_in_order(src, summary, ctx.path)
        streams.append(_parse_source(src, ctx, summary, events, single))
    summary.streams = streams
    ids = {s["broker_id"] for s in streams if s["kafka"]}
    summary.broker_id = next(iter(ids)) if len(ids) == 1 else None
    summary.events = len(events)
    summary.errors.extend(problems.errors)
    for line_no, length in problems.long_lines[:MAX_REPORTED]:
        summary.errors.append(f"line {line_no}: {length} bytes long; only the first {MAX_LINE_CHARS} were parsed")
    if problems.non_utf8_lines:
        summary.notes.append(f"{problems.non_utf8_lines} line(s) were not valid UTF-8 (first at line "
                             f"{problems.first_non_utf8_line}); read as Latin-1")
    return events


def _quarantine_cut_line(src: _Source, summary: FileSummary, path: str) -> None:
    """The file ends inside its last line (a copy cut short, a disk that filled up): the line's numbers may
    be cut too (``HashMap(2 -> 242)`` read as epoch 24), so it is kept aside, not read."""
    pos, text = src.pos.pop(), src.texts.pop()
    src.stamps.pop()
    if src.order:
        src.order.pop()
    summary.count("quarantined")
    summary.lines += 1
    why = "the file ends inside this line (cut mid-line)"
    summary.sample(Quarantined(path, pos, "quarantined", why, text[:2000]))
    summary.errors.append(f"line {pos}: {why}; quarantined")


def _put_in_order(src: _Source, summary: FileSummary, path: str) -> None:
    """Exports come in the query's order: logcli newest first by default, an index in any order."""
    n = len(src.texts)
    if src.order and len(src.order) == n:
        idx = sorted(range(n), key=src.order.__getitem__)
    else:
        stamps = [s for s in src.stamps if s is not None]
        back = sum(1 for a, b in zip(stamps, stamps[1:]) if b < a)
        fwd = sum(1 for a, b in zip(stamps, stamps[1:]) if b > a)
        if back <= fwd:
            return
        idx = list(range(n - 1, -1, -1))
        summary.notes.append(f"{src.name}: lines are newest first (logcli without --forward); read oldest first")
    src.texts = [src.texts[i] for i in idx]
    src.pos = [src.pos[i] for i in idx]
    src.stamps = [src.stamps[i] for i in idx]


def _parse_source(src: _Source, ctx: SourceContext, summary: FileSummary, events: list[Event], single: bool) -> dict:
    from parsers.broker_logs.broker_log import parse_broker_log

    ident = resolve(src.name, src.texts, src.pos, ctx.path, ctx.broker_map, ctx.broker_hint, single)
    texts = src.texts
    if choose_layout(texts[:SNIFF_LINES], LocalClock(ctx.tz)) is None and any(src.stamps):
        # No header of the broker's own (a layout without %d): the collector's stamp dates the line.
        texts = [f"{s} {t}" if s else t for s, t in zip(src.stamps, src.texts)]
    sub = FileSummary(path=ctx.path, kind="broker_log", broker_id=ident.broker_id, cluster=ctx.cluster)
    sub_ctx = SourceContext(ctx.path, ctx.cluster, ident.broker_id, ctx.tz)
    data = ("\n".join(texts) + "\n").encode("utf-8") if texts else b""
    evs = parse_broker_log(data, sub_ctx, sub) if data else []
    pos = src.pos
    kafka = bool(evs) or any(_KAFKA_LOGGER.search(t) for t in texts)
    first, last = (pos[0], pos[-1]) if pos else (None, None)
    if kafka:
        offset = _clock_offset(evs, src.stamps) if texts is src.texts else None
        if offset is not None:
            summary.notes.append(zone_note(src.name, offset, ctx.tz))
        for ev in evs:
            ev.source_pos = pos[ev.source_pos - 1]
        events.extend(evs)
        for q in sub.samples:
            q.source_pos = pos[q.source_pos - 1]
            summary.sample(q)
        summary.absorb_counts(sub)
        summary.event_counts.update(sub.event_counts)
        for msg in sub.errors:
            summary.errors.append(f"{src.name}: " + _LINE_REF.sub(lambda m: f"line {pos[int(m.group(1)) - 1]}"
                                                                  if int(m.group(1)) <= len(pos) else m.group(0), msg))
        for msg in sub.notes:
            summary.notes.append(f"{src.name}: " + _LINE_REF.sub(lambda m: f"line {pos[int(m.group(1)) - 1]}"
                                                                 if int(m.group(1)) <= len(pos) else m.group(0), msg))
    else:
        # ZooKeeper's container, a client that logs nothing this tool reads, a shell script's echo:
        # counted, with where they are, and left out of the replay.
        summary.count("other", len(texts))
        summary.lines += len(texts)
        summary.notes.append(f"{src.name}: {len(texts)} line(s) at {ctx.path}:{first}-{last} are not a Kafka "
                             "broker's or client's (no Kafka logger, no event); counted, not used")
    broker = sub.broker_id if kafka else None
    how = ident.how if kafka else "not a Kafka source"
    if kafka and ident.broker_id is None and broker is not None:
        how = "from the log idents of its lines (one broker id throughout)"
    elif kafka and broker is None and evs and all(ev.source_kind == "client_log" for ev in evs):
        how = "a Kafka client's log (no broker id)"
    return {
        "name": src.name,
        "kafka": kafka,
        "broker_id": broker,
        "how": how,
        "conflict": ident.conflict,
        "lines": len(texts),
        "first_line": first,
        "last_line": last,
        "joined_records": src.joined,
        "parsed": sub.parsed if kafka else 0,
        "other": sub.other if kafka else len(texts),
        "unrecognized": sub.unrecognized if kafka else 0,
        "quarantined": sub.quarantined if kafka else 0,
        "events": len(evs),
        "first_ts": iso_utc(sub.first_ts) if kafka else None,
        "last_ts": iso_utc(sub.last_ts) if kafka else None,
        "kafka_version": sub.kafka_version,
    }


# A collector stamps a line when it reads it: milliseconds after the broker wrote it. Hours apart means the
# broker's clock text is in another zone than --tz says (log4j's %d carries none).
ZONE_GAP_US = 10 * 60 * 1_000_000
_CHECKED = 200


def zone_note(name: str, offset_us: int, tz: str) -> str:
    """The note for a source whose collector stamps sit a whole offset from the broker's own clock."""
    return (f"{name}: the collector stamped these lines {abs(offset_us) / 3.6e9:.2f} h "
            f"{'after' if offset_us > 0 else 'before'} the broker's own time read in zone {tz}: the broker "
            "logged in another zone; rerun with --tz set to it")


def _clock_offset(evs: list[Event], stamps: list[str | None]) -> int | None:
    from parsers.broker_logs.log4j_layout import BadTimestamp, iso_with_zone_micros

    gaps = []
    for ev in evs[:_CHECKED]:
        stamp = stamps[ev.source_pos - 1] if ev.ts is not None else None
        if stamp is None:
            continue
        try:
            gaps.append(iso_with_zone_micros(stamp) - ev.ts)
        except BadTimestamp:
            continue
    if not gaps:
        return None
    gap = sorted(gaps)[len(gaps) // 2]
    return gap if abs(gap) >= ZONE_GAP_US else None


def describe(stream: dict, path: str) -> str:
    """'kafka-1 -> broker 1 (from '[KafkaServer id=1]' at incident.txt:12)' for the report."""
    if not stream.get("kafka"):
        return (f"{stream['name']}: not a Kafka source, {stream['lines']} line(s) at "
                f"{path}:{stream['first_line']}-{stream['last_line']} counted, not used")
    who = f"broker {stream['broker_id']}" if stream.get("broker_id") is not None else "broker unknown"
    text = f"{stream['name']} -> {who} ({stream['how']})"
    if stream.get("conflict"):
        text += f"; {stream['conflict']}"
    return text
