"""A container or collector stream read as it is appended (``docker compose logs -f > f``, ``kubectl logs -f``,
stdin): the whole-stream reader's parts, fed what was written since.

The grammar is chosen from the stream's first lines (``detect.detect_head``); each chunk's lines become pieces
(``grammar.pieces``), routed per source as ``demux`` routes them; each source's lines are read by a growing broker
log (``parsers.broker_logs.growing``) under the source's broker, found from its own lines (``identity``: a broker
names itself at start-up) or ``--broker-map``, and its events keep the stream's own line numbers. A source whose
lines carry no header of the broker's own is dated by the collector's stamp, as a whole stream's is.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from parsers.broker_logs.growing import GrowingLog, decode_lines
from parsers.broker_logs.log4j_layout import LocalClock, choose_layout
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.container_streams.detect import GRAMMARS, detect_head
from parsers.container_streams.identity import named_ids, resolve_found
from parsers.schema import Event

# Lines of a source read to find its broker and layout before its first events are given.
IDENT_LINES = 400


@dataclass
class _Source:
    name: str
    log: GrowingLog | None = None
    waiting: list[tuple[int, str, str | None]] = field(default_factory=list)  # (file line, text, stamp)
    found: dict = field(default_factory=dict)  # ids its lines name as their own (identity.named_ids)
    stamped: bool = False  # dated by the collector's stamp
    pos: dict[int, int] = field(default_factory=dict)  # the source's own line number -> the stream's


class GrowingStream:
    def __init__(self, ctx: SourceContext):
        self.ctx = ctx
        self.summary = FileSummary(path=ctx.path, kind="container_stream", broker_id=ctx.broker_hint,
                                   cluster=ctx.cluster)
        self.grammar = None
        self.next_no = 1
        self.sources: dict[str, _Source] = {}

    def feed(self, data: bytes, quiet: bool = False) -> tuple[list[Event], list[str]]:
        lines = decode_lines(data) if data else []
        numbered = list(enumerate(lines, self.next_no))
        self.next_no += len(lines)
        if self.grammar is None:
            key, _ = detect_head(iter(numbered))
            if key is None:
                self.summary.lines += len(lines)
                self.summary.unrecognized += len(lines)
                return [], ["no container or collector format recognised in the first lines"] if lines else []
            self.grammar = GRAMMARS[key]
        for piece in self.grammar.pieces(iter(numbered), self.ctx.path):
            if piece.kind != "line":
                self.summary.lines += 1
                self.summary.count("other" if piece.kind == "other" else "quarantined")
                continue
            src = self.sources.get(piece.source or "?")
            if src is None:
                src = self.sources[piece.source or "?"] = _Source(piece.source or "?")
            for part in piece.text.split("\n"):
                src.waiting.append((piece.pos, part[:-1] if part.endswith("\r") else part, piece.stamp))
        events: list[Event] = []
        problems: list[str] = []
        for name in sorted(self.sources):
            got, probs = self._drain(self.sources[name], quiet)
            events.extend(got)
            problems.extend(f"{name}: {p}" for p in probs)
        return events, problems

    def newest_ts(self) -> int | None:
        """The time of the latest line read from any of its sources (``GrowingLog.newest_ts``)."""
        return max((t for t in (self.summary.last_ts, *(src.log.newest_ts() for src in self.sources.values()
                                                           if src.log is not None)) if t is not None), default=None)

    def _drain(self, src: _Source, quiet: bool) -> tuple[list[Event], list[str]]:
        if src.log is None:
            src.found.update({k: v for k, v in named_ids([t for _, t, _ in src.waiting],
                                                        [p for p, _, _ in src.waiting]).items() if k not in src.found})
            if not src.found and not quiet and len(src.waiting) < IDENT_LINES:
                return [], []
            ident = resolve_found(src.name, src.found, self.ctx.path, self.ctx.broker_map, self.ctx.broker_hint,
                                  len(self.sources) == 1)
            texts = [t for _, t, _ in src.waiting[:IDENT_LINES]]
            src.stamped = choose_layout(texts, LocalClock(self.ctx.tz)) is None and any(s for _, _, s in src.waiting)
            sub = SourceContext(self.ctx.path, self.ctx.cluster, ident.broker_id, self.ctx.tz)
            src.log = GrowingLog(sub)
        lines = []
        for pos, text, stamp in src.waiting:
            src.pos[src.log.next_no + len(lines)] = pos
            lines.append(f"{stamp} {text}" if src.stamped and stamp else text)
        src.waiting = []
        before = src.log.summary.lines
        events, problems = src.log.feed(lines, quiet)
        for ev in events:
            ev.source_pos = src.pos.get(ev.source_pos, ev.source_pos)
        self.summary.lines += src.log.summary.lines - before
        keep_from = min([src.log.next_no - len(src.log.held)] + [e.source_pos or 0 for e in src.log.unfinished])
        src.pos = {k: v for k, v in src.pos.items() if k >= keep_from}
        for ev in events:
            self.summary.event_counts[ev.event_type] += 1
            self.summary.see_ts(ev.ts)
        self.summary.events += len(events)
        return events, problems
