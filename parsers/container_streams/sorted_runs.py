"""A big export whose entries must be put in time order first, read in bounded memory: an external sort.

An Elasticsearch/OpenSearch export comes in the query's order and logcli prints newest first
without ``--forward``: the whole read (``demux``) orders each source's lines before parsing them
(``_put_in_order``: by the entries' own keys, or turned around when its stamps run back). Here the
file is streamed once; each line of a record becomes (source, the key the whole read sorts on,
its line), kept in a buffer of ``run_lines`` lines that is sorted and written to a temporary file
(a run) when full. Each source is then read back in its order -- the runs merged (``heapq.merge``)
for an export, or, for a stream in file order that is to be turned around, the runs taken last
first, each one's slice reversed (runs hold consecutive stretches of the file) -- and handed to the
range reader's per-source parts (``ranges._read_part``) and merged as a ranged stream is
(``stream_merge``); a source's events wait on disk until its broker is known, then are finished as
the whole read finishes them. Memory is bounded by the run size and a part's size, whatever the
file's size.
"""
from __future__ import annotations

import heapq
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterator
from itertools import chain, count, islice

from parsers.broker_logs.broker_log import MAX_LINE_CHARS, SNIFF_LINES
from parsers.common.accounting import FileSummary, Quarantined
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems
from parsers.common.textranges import file_chunks, gunzip_stream, line_blocks
from parsers.container_streams.demux import MAX_REPORTED
from parsers.container_streams.detect import GRAMMARS, detect_head
from parsers.container_streams.identity import named_ids
from parsers.container_streams.ranges import (
    CHUNK_LINES,
    _read_part,
    _Source,
    _take,
    close_accounting,
    count_outside,
    new_accounting,
)
from parsers.container_streams.stream_merge import (
    add_event_counts,
    finish_source_events,
    merge_stream,
)
from parsers.container_streams.survey import split_parts
from parsers.schema import Event

RUN_LINES = 200_000  # lines sorted in memory at once (about 50 MB of text)
FAN_IN = 64  # runs open at once while merging; more are merged into longer runs first
TMP_ENV = "KAFKA_FORENSICS_SORT_DIR"


class _Line:
    """What ``ranges._take`` reads of a piece."""
    __slots__ = ("joined", "pos", "stamp", "why")

    def __init__(self, pos: int, stamp: str | None, joined: int, why: str):
        self.pos, self.stamp, self.joined, self.why = pos, stamp, joined, why


class _Run:
    def __init__(self, path: str, index: dict[str, tuple[int, int]]):
        self.path = path
        self.index = index  # source -> (byte offset of its first record, records)

    def slice(self, name: str) -> Iterator[tuple]:
        at = self.index.get(name)
        if at is None:
            return
        with open(self.path, "rb") as fh:
            fh.seek(at[0])
            for _ in range(at[1]):
                yield pickle.load(fh)

    def records(self) -> Iterator[tuple]:
        for name in sorted(self.index):
            yield from self.slice(name)


def _write_run(records: Iterator[tuple] | list[tuple], folder: str, n: int) -> _Run:
    """Records sorted by (source, key) -> a run file and its per-source index."""
    path = os.path.join(folder, f"run-{n:06d}.pickle")
    index: dict[str, list[int]] = {}
    with open(path, "wb") as fh:
        for rec in records:
            at = index.get(rec[0])
            if at is None:
                at = index[rec[0]] = [fh.tell(), 0]
            at[1] += 1
            pickle.dump(rec, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return _Run(path, {k: (v[0], v[1]) for k, v in index.items()})


def sort_dir(given: str | None = None) -> str | None:
    """Where runs go: ``given`` (the driver's KAFKA_FORENSICS_SORT_DIR, else its ``spark.local.dir``), else
    KAFKA_FORENSICS_SORT_DIR or SPARK_LOCAL_DIRS as this process has them, else the system's temporary
    folder (None). A folder that does not exist here is passed over."""
    for got in (given, os.environ.get(TMP_ENV), os.environ.get("SPARK_LOCAL_DIRS")):
        folder = got.split(",")[0].strip() if got else None
        if folder and os.path.isdir(folder):
            return folder
    return None


def read_sorted(path: str, size: int, gz: bool, ctx: SourceContext, run_lines: int | None = None,
                tmp_dir: str | None = None, chunk_lines: int = CHUNK_LINES) -> tuple[list[Event], FileSummary]:
    """(events, summary) of a container stream as ``parse_container_stream`` gives them."""
    events: list[Event] = []
    for got in sorted_stream(path, size, gz, ctx, run_lines, tmp_dir, chunk_lines):
        if isinstance(got, FileSummary):
            return events, got
        events.extend(got)
    raise AssertionError("sorted_stream ends with the summary")


def sorted_stream(path: str, size: int, gz: bool, ctx: SourceContext, run_lines: int | None = None,
                  tmp_dir: str | None = None, chunk_lines: int = CHUNK_LINES,
                  batch: int = 20_000) -> Iterator[list[Event] | FileSummary]:
    """The stream's finished events a batch at a time, in the whole read's order, then its summary (whose
    event counts are those of the batches given). Runs and events wait in a temporary folder (``tmp_dir``:
    see ``sort_dir``), removed at the end, so memory is bounded whatever the file's size."""
    folder = tempfile.mkdtemp(prefix="kf-sort-", dir=sort_dir(tmp_dir))
    try:
        summary, spills = _read(path, size, gz, ctx, max(1, run_lines or RUN_LINES), folder, chunk_lines)
        brokers = {x["name"]: x["broker_id"] for x in summary.streams}
        out: list[Event] = []
        for name in sorted(spills):
            for ev in finish_source_events(iter(spills[name]), brokers[name]):
                out.append(ev)
                if len(out) >= batch:
                    add_event_counts(summary, out)
                    yield out
                    out = []
        if out:
            add_event_counts(summary, out)
            yield out
        yield summary
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class _Spill:
    """One source's events as its parts give them, kept on disk until its broker is known."""

    def __init__(self, path: str):
        self.path = path

    def extend(self, events: list[Event]) -> None:
        with open(self.path, "ab") as fh:
            pickle.dump(events, fh, protocol=pickle.HIGHEST_PROTOCOL)

    def __iter__(self) -> Iterator[Event]:
        if not os.path.exists(self.path):  # a source without events
            return
        with open(self.path, "rb") as fh:
            while True:
                try:
                    got = pickle.load(fh)
                except EOFError:
                    return
                yield from got


def _read(path: str, size: int, gz: bool, ctx: SourceContext, run_lines: int, folder: str,
          chunk_lines: int) -> tuple[FileSummary, dict[str, _Spill]]:
    problems = ReadProblems(bad_lines=[])
    acc = new_accounting()
    stamps: dict[str, dict] = {}  # source -> {"last", "back", "fwd", "stamped"}
    runs: list[_Run] = []
    serial = count()  # run file names, never reused while the merge rounds run
    buf: list[tuple] = []
    pending: tuple | None = None  # the last line read: it is quarantined if the file ends inside it

    def put(rec: tuple) -> None:
        buf.append(rec)
        if len(buf) >= run_lines:
            buf.sort(key=lambda r: (r[0], r[1]))
            runs.append(_write_run(buf, folder, next(serial)))
            buf.clear()

    with open(path, "rb") as fh:
        chunks = gunzip_stream(fh, size, problems) if gz else file_chunks(fh, 0)
        numbered = ((n, t) for first, lines in line_blocks(chunks, problems, MAX_LINE_CHARS)
                    for n, t in zip(range(first, first + len(lines)), lines))
        key, head = detect_head(numbered)
        if key is None:
            raise ValueError("no container or collector format recognised in the first lines")
        grammar = GRAMMARS[key]
        last = None
        for piece in grammar.pieces(chain(head, numbered), ctx.path):
            last = piece
            if count_outside(acc, piece, ctx.path):
                continue
            name = piece.source or "?"
            st = stamps.setdefault(name, {"last": None, "back": 0, "fwd": 0, "step": (0, 0),
                                           "stamped": False})
            if piece.why and len(acc["joined_notes"]) < MAX_REPORTED:
                acc["joined_notes"].append(f"line {piece.pos}: {piece.why}")
            for i, part in enumerate(split_parts(piece.text)):
                # As demux's _Source.add and _put_in_order: an export by its entries' keys (the parts of
                # one entry keep their order), any other stream in file order, turned around below.
                order = (*piece.order, i) if grammar.reorder else (piece.pos, i)
                if pending is not None:
                    put(pending)
                pending = (name, order, part, piece.pos, piece.stamp, piece.joined if i == 0 else 1,
                           piece.why if i == 0 else "")
                st["step"] = (0, 0)
                if piece.stamp is not None:
                    st["stamped"] = True
                    if st["last"] is not None:
                        st["step"] = (piece.stamp < st["last"], piece.stamp > st["last"])
                        st["back"] += st["step"][0]
                        st["fwd"] += st["step"][1]
                    st["last"] = piece.stamp
    if pending is not None:
        if not grammar.json and last is not None and last.kind == "line" and last.pos == problems.unterminated_line:
            why = "the file ends inside this line (cut mid-line)"
            st = stamps[pending[0]]  # the whole read drops the line before it looks at the stamps' direction
            st["back"] -= st["step"][0]
            st["fwd"] -= st["step"][1]
            acc["cut"] = {"pos": pending[3], "why": why,
                          "sample": Quarantined(ctx.path, pending[3], "quarantined", why, pending[2][:2000])}
        else:
            put(pending)
    if buf:
        buf.sort(key=lambda r: (r[0], r[1]))
        runs.append(_write_run(buf, folder, next(serial)))
        buf.clear()
    while grammar.reorder and len(runs) > FAN_IN:  # merged FAN_IN at a time, so files open stay few
        groups = [runs[i:i + FAN_IN] for i in range(0, len(runs), FAN_IN)]
        merged = []
        for group in groups:
            merged.append(_write_run(heapq.merge(*(r.records() for r in group), key=lambda r: (r[0], r[1])),
                                     folder, next(serial)))
            for r in group:
                os.remove(r.path)
        runs = merged

    names = sorted(stamps)  # a source whose one line was cut short is still listed, as the whole read lists it
    turned = {n for n in names if not grammar.reorder and stamps[n]["back"] > stamps[n]["fwd"]}
    infos: dict[str, dict] = {}
    parts: dict[str, list[dict]] = {}
    events: dict[str, _Spill] = {}
    for i, name in enumerate(names):
        ordered = _ordered(runs, name, grammar.reorder, name in turned)
        first = list(islice(ordered, SNIFF_LINES))
        info = {"head": [[r[2], r[4]] for r in first], "stamped": stamps[name]["stamped"], "ids": {},
                "first": first[0][3] if first else None}
        infos[name] = info
        src = _Source(name, info, ctx.tz, False)
        evs = events[name] = _Spill(os.path.join(folder, f"events-{i:06d}.pickle"))
        for rec in chain(first, ordered):
            _, _, part, pos, stamp, joined, why = rec
            if "id" in part:
                for bid, (words, at) in named_ids([part], [pos]).items():
                    info["ids"].setdefault(str(bid), [words, at])
            text = f"{stamp} {part}" if src.prefixed and stamp else part
            if len(src.texts) >= chunk_lines and src.is_anchor(text):
                _flush(src, ctx, parts, evs)
            # joined notes were taken in file order above
            _take(src, text, _Line(pos, stamp, joined, why), True, {"joined_notes": []})
        _flush(src, ctx, parts, evs)
    for r in runs:
        os.remove(r.path)

    survey = {"key": key, "sources": infos}
    return merge_stream(ctx, size, survey, [close_accounting(acc, problems)], parts, turned), events


def _flush(src: _Source, ctx: SourceContext, parts: dict[str, list[dict]], evs: _Spill) -> None:
    if not src.texts:
        return
    for kind, name, got in _read_part(src, ctx):
        if kind == "events":
            evs.extend(got)
        else:
            parts.setdefault(name, []).append(got)
    src.texts, src.pos, src.stamps = [], [], []


def _ordered(runs: list[_Run], name: str, merge: bool, turned: bool) -> Iterator[tuple]:
    """One source's records in the order the whole read gives them."""
    if merge:
        return heapq.merge(*(r.slice(name) for r in runs if name in r.index), key=lambda r: r[1])
    if not turned:
        return chain.from_iterable(r.slice(name) for r in runs)
    # Runs hold consecutive stretches of the file: the last run first, each slice turned around.
    return chain.from_iterable(reversed(list(r.slice(name))) for r in reversed(runs))
