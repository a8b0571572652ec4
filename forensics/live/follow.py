"""What ``watch`` does with each micro-batch: new bytes -> the growing readers -> each cluster's kept replay.

One ``LiveFile`` per logical file of the tailer reads its new bytes with the reader of its kind (the kind sniffed
from its first lines, as ``parsers.dispatch`` sniffs a whole file): a broker log or a client log
(``parsers.broker_logs.growing``), a ZooKeeper txn log, a metadata segment (their ``growing`` modules), a snapshot or
a dump read whole once it has stopped changing. The events go to their cluster's ``LiveReplay``, which is settled
up to the time every file still being written has passed (``horizon``). What went wrong on the way is a ``Note``,
with the file and the line (or byte) it is about; nothing stops the following.

The ``Session`` is plain data: pickled after every batch with the batch's id (``save``), it is what a restart after
``kill -9`` goes on from, and a batch Spark runs again after the restart is recognised and skipped (its id is not
above the session's).
"""
from __future__ import annotations

import os
import pickle
import re
from dataclasses import dataclass, field
from typing import Any

from forensics.live.files import APPEND, INPLACE, SKIP, WHOLE
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.schema import Event, iso_utc
from replay_engine.live import LiveReplay, LiveSettings

SNIFF_BYTES = 65536
SNIFF_LINES = 10  # a text file's kind is sniffed from this many first lines (or 64 KiB, or once it is quiet)
SKEW_US = 300_000_000  # a file written now whose lines are this far behind the others' has a clock behind...
# ...when they are in SKEW_BATCHES batches in a row that measured it. What its new lines are measured against: lines
# the other files had written before they were. Every byte a batch reads was written after the batch before looked
# at its file, so after every line read by the batch before that one; not always after the lines of the batch
# before itself, whose looks at the files come one after another (a loaded host stalls between two looks, and a
# playback's or a burst's minutes of the cluster's time can be written in between). A batch measures a file it
# grew, known to the batch before, when it brought a line dated later than any the file had (a batch that did not
# grow it, or grew it by the rest of an entry, tells nothing about its clock). Two in a row: one line logged late
# (a buffered appender) is no clock.
SKEW_BATCHES = 2
# The kinds whose lines are written at the time they carry (LiveFile.clocked): only they measure a clock.
_CLOCKED = ("broker_log", "container_stream", "zk_txnlog", "kraft_metadata")
# a rotated part (log4j's DailyRollingFileAppender renames server.log to server.log.yyyy-MM-dd-HH, later gzipped;
# RollingFileAppender to server.log.N): no broker writes to it any more, so its lines lagging is no clock's doing
_ROTATED_PART = re.compile(r"\.(?:log|out|txt)\.\d[^/]*$|\.gz$")


@dataclass
class Note:
    """A warning while following: the file, where in it, and what."""

    seq: int
    at: str  # wall clock, ISO
    file: str | None
    where: str | None  # "line N", "byte N"
    text: str

    def line(self) -> str:
        loc = f"{self.file}:{self.where.split(' ', 1)[-1]}" if self.file and self.where else (self.file or "")
        return f"{loc}: {self.text}" if loc else self.text

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "file": self.file, "where": self.where, "text": self.text}


@dataclass
class LiveFile:
    lid: str
    display: str
    framing: str
    ctx: SourceContext
    kind: str | None = None
    reader: Any = None
    sniff: bytes = b""  # a text file's first bytes, until its kind is known
    fed: int = 0  # bytes handed to the reader
    last_ts: int | None = None  # the latest time its lines gave
    quiet: bool = False
    behind: bool = False  # more is written than it has been read (a backlog read in steps)
    read_to: int = 0  # the stream has handed it its bytes up to here
    grew: bool = False  # it had new bytes in the latest batch
    known: bool = False  # it had been handed bytes before the latest batch (the batch before looked at it)
    was_behind: bool = False  # it was being read in steps at the batch before: bytes read since may be older
    newest: int | None = None  # the latest time of a line read from it, as of the latest batch
    lagging: int = 0  # batches in a row that measured its clock and found it SKEW_US behind the others' (see SKEW_US)
    summary: FileSummary | None = None
    done: bool = False  # read whole (a snapshot); later bytes are noted, not read

    def feed(self, data: bytes, quiet: bool) -> tuple[list[Event], list[str]]:
        self.quiet = quiet
        if self.framing == SKIP:
            return [], []
        if self.framing == WHOLE:
            return self._whole(data, quiet)
        if self.reader is None:
            if self.framing == INPLACE:
                from parsers.zookeeper.growing import GrowingTxnLog

                self._start("zk_txnlog", GrowingTxnLog(self.ctx))
            elif self.framing == APPEND:
                from parsers.kraft.growing import GrowingMetadataLog

                self._start("kraft_metadata", GrowingMetadataLog(self.ctx))
            else:
                self.sniff += data
                if not quiet and len(self.sniff) < SNIFF_BYTES and self.sniff.count(b"\n") < SNIFF_LINES:
                    return [], []
                data, self.sniff = self.sniff, b""
                if not self._choose(data):
                    return [], []
        if self.kind in ("zk_txnlog", "kraft_metadata"):
            got = self.reader.feed(data, quiet)
        elif self.kind == "broker_log":
            from parsers.broker_logs.growing import decode_lines

            got = self.reader.feed(decode_lines(data) if data else [], quiet)
        else:
            got = self.reader.feed(data, quiet)
        self.fed += len(data)
        self._seen(got[0])
        return got

    def clocked(self) -> bool:
        """Are its lines written at the time they carry (a log, ZooKeeper's txn log, a metadata log)? A dump's or a
        snapshot's times are those of what it quotes (a zkCli dump taken after the incident gives the znode's mtime),
        not of when it was written: no measure of a clock, its own or the others'."""
        return self.kind in _CLOCKED

    def read_ts(self) -> int | None:
        """The time of the latest line read from it: of its events, of its lines parsed, of an entry its reader holds
        back (a broker log's last entry waits for the line after it): its clock, as far as it has written."""
        held = getattr(self.reader, "newest_ts", None)
        got = (self.last_ts, self.summary.last_ts if self.summary is not None else None, held() if held else None)
        return max((t for t in got if t is not None), default=None)

    def waiting(self) -> bool:
        """Are its first lines read but not yet parsed: its kind, its layout or its writer still to be known? (A file
        whose lines give no events, or whose last entry waits for the next, is not waiting.)"""
        if self.framing == SKIP or self.done:
            return False
        if self.sniff:
            return True
        r = self.reader
        if self.kind != "broker_log" or r is None:
            return False
        return (r.layout is None and bool(r.held)) or (bool(r.unfinished) and r.writer is None)

    def _start(self, kind: str, reader) -> None:
        self.kind, self.reader = kind, reader
        self.summary = reader.summary

    def _choose(self, head: bytes) -> bool:
        from parsers.dispatch import sniff_kind

        kind = sniff_kind(self.ctx.path, head)
        if kind == "broker_log":
            from parsers.broker_logs.growing import GrowingLog

            self._start(kind, GrowingLog(self.ctx))
        elif kind == "container_stream":
            from parsers.container_streams.growing import GrowingStream

            self._start(kind, GrowingStream(self.ctx))
        elif kind in ("znode_dump", "kraft_dump_text"):
            self._start(kind, _WholeText(self.ctx))
        else:  # empty, aux, doc, binary: nothing this tool reads
            self.kind = kind
            self.framing = SKIP
            self.summary = FileSummary(path=self.ctx.path, kind=kind, broker_id=self.ctx.broker_hint,
                                       cluster=self.ctx.cluster)
            return False
        return True

    def _whole(self, data: bytes, quiet: bool) -> tuple[list[Event], list[str]]:
        if self.done or not data:
            return [], (["changed after it was read whole; the change is not read"] if self.done and data else [])
        from parsers.dispatch import parse_source

        events, self.summary = parse_source(data, self.ctx)
        self.kind, self.done = self.summary.kind, True
        self.fed = len(data)
        self._seen(events)
        return events, list(self.summary.errors)

    def _seen(self, events: list[Event]) -> None:
        for ev in events:
            if ev.ts is not None and (self.last_ts is None or ev.ts > self.last_ts):
                self.last_ts = ev.ts

    def where(self, pos: int) -> str:
        """A byte position of the file as the reader knows it: a line number where it reads lines."""
        reader = self.reader
        if self.kind == "broker_log" and reader is not None and pos >= self.fed:
            return f"line {reader.next_no}"
        return f"byte {pos}"


class _WholeText:
    """A zkCli dump or ``kafka-dump-log`` text: read whole once the file has stopped changing."""

    def __init__(self, ctx: SourceContext):
        self.ctx = ctx
        self.data = b""
        self.summary = FileSummary(path=ctx.path, kind="znode_dump", cluster=ctx.cluster)

    def feed(self, data: bytes, quiet: bool) -> tuple[list[Event], list[str]]:
        self.data += data
        if not quiet or not self.data:
            return [], []
        from parsers.dispatch import parse_source

        events, self.summary = parse_source(self.data, self.ctx)
        self.data = b""
        return events, list(self.summary.errors)


@dataclass
class Session:
    cluster: str  # the default cluster name (the first SOURCE's, as postmortem names it)
    tz: str = "UTC"
    broker_map: tuple = ()
    settings: LiveSettings = field(default_factory=LiveSettings)
    files: dict[str, LiveFile] = field(default_factory=dict)
    replays: dict[str, LiveReplay] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    batch_id: int = -1
    seq: int = 0
    lines: int = 0  # lines (records) read in all
    skewed: set = field(default_factory=set)  # files already said to lag the others
    tops: dict = field(default_factory=dict)  # cluster -> its logs' latest line, 2 batches ago and last
    book: Any = None  # the incidents as told so far (forensics.live.incidents.Book)
    pending: list = field(default_factory=list)  # notifications not yet known written

    # ------------------------------------------------------------------ a batch

    def apply(self, rows: list[dict], now: str) -> dict[str, int]:
        """One micro-batch's rows (forensics.live.source.SCHEMA). Returns the events added per cluster."""
        added: dict[str, int] = {}
        for f in self.files.values():
            f.grew = False  # a file without a row in this batch had nothing new in it
        for row in _joined(sorted(rows, key=_row_order)):
            lid = row["lid"]
            if not row["framing"]:  # the tailer's note about a file
                f = self.files.get(lid)
                self.warn(now, row["display"], f.where(row["start"]) if f else f"byte {row['start']}", row["note"])
                continue
            f = self.files.get(lid)
            if f is None:
                f = self.files[lid] = self._file(row)
            if row["note"]:
                self.warn(now, f.display, f"byte {row['start']}", row["note"])
            before = f.summary.lines if f.summary is not None else 0
            f.was_behind, f.behind = f.behind, bool(row.get("behind"))
            f.grew = (row["end"] or 0) > f.read_to  # written since the last batch
            f.known = f.read_to > 0
            f.read_to = max(f.read_to, row["end"] or 0)
            events, problems = f.feed(row["data"] or b"", bool(row["quiet"]))
            self.lines += (f.summary.lines if f.summary is not None else 0) - before
            for p in problems:
                self.warn(now, f.display, None, p)
            by_cluster: dict[str, list[Event]] = {}
            for ev in events:
                by_cluster.setdefault(ev.cluster or self.cluster, []).append(ev)
            for cluster, evs in by_cluster.items():
                replay = self.replays.get(cluster)
                if replay is None:
                    replay = self.replays[cluster] = LiveReplay(cluster, self.settings)
                late = replay.add(evs)
                added[cluster] = added.get(cluster, 0) + len(evs)
                if late:
                    first = min(late, key=lambda e: e.source_pos or 0)
                    self.warn(now, f.display, f"line {first.source_pos}",
                              f"{len(late)} event(s) dated before the replay's settled time "
                              f"({iso_utc(replay.settled)}), the first at {iso_utc(first.ts)}: a clock behind the "
                              "others', or a file that came late; replayed out of order")
        for cluster, replay in sorted(self.replays.items()):
            replay.settle(self.horizon(cluster, now))
        return added

    def _file(self, row: dict) -> LiveFile:
        from forensics.sources import broker_hint, cluster_hint_from_path

        display = row["display"]
        plain = display.split("#", 1)[0]
        ctx = SourceContext(display, cluster_hint_from_path(plain) or self.cluster,
                            broker_hint(plain, list(self.broker_map)), self.tz, tuple(self.broker_map))
        return LiveFile(row["lid"], display, row["framing"], ctx)

    def horizon(self, cluster: str, now: str) -> int | None:
        """The time every file of the cluster still being written (or still being read: a backlog) has passed: the
        lowest latest time among them; all quiet and read, the latest time of any. A log written now whose new
        lines, in SKEW_BATCHES batches in a row that measured it (see SKEW_US), are more than SKEW_US older than the
        latest line any log had two batches before (lines written before its new ones were), and which lags the
        others' latest by as much now, is not waited for (its clock is behind: said once); one that is merely not
        quiet yet (a rotated part, written to its end; a file that wrote nothing since) is waited for until it is."""
        ours = [f for f in self.files.values() if f.ctx.cluster == cluster]
        # its latest line's time, not only its latest event's: lines that give no event move its clock on too
        lines = {f.lid: f.read_ts() for f in ours}
        written = max((t for f in ours if f.clocked() and (t := lines[f.lid]) is not None), default=None)
        tops = self.__dict__.setdefault("tops", {})
        older, newer = _last_two(tops.get(cluster))
        tops[cluster] = (newer, written)
        was = {}
        for f in ours:
            was[f.lid], f.newest = f.newest, lines[f.lid]
        mine = [f for f in ours if f.last_ts is not None]
        if not mine:
            return None
        top = max(f.last_ts for f in mine)
        active = []
        for f in mine:
            line = lines[f.lid]
            if f.quiet and not f.behind:
                continue
            measured = f.grew and f.known and (was[f.lid] is None or line > was[f.lid]) \
                and not (f.behind or f.was_behind)
            if measured and older is not None and f.clocked() \
                    and not _ROTATED_PART.search(f.display.split("#", 1)[0]):
                f.lagging = f.lagging + 1 if line < older - SKEW_US else 0
            if f.lagging >= SKEW_BATCHES and line < written - SKEW_US and not f.behind:
                if f.lid not in self.skewed:
                    self.skewed.add(f.lid)
                    self.warn(now, f.display, f.where(f.fed), f"its latest line ({iso_utc(line)}) is "
                              f"{(written - line) / 1e6:,.0f} s behind the other files' while it is still being "
                              "written: its clock is behind (or it is replaying old lines); not waited for")
                continue
            active.append(f.last_ts)
        if any(f.waiting() for f in ours if f.last_ts is None):
            return None  # a file read but not yet parsed (its first lines wait for its kind, its layout, its writer)
        return min(active) if active else top

    def warn(self, now: str, file: str | None, where: str | None, text: str) -> None:
        self.seq += 1
        self.notes.append(Note(self.seq, now, file, where, text))
        del self.notes[:-200]

    # ------------------------------------------------------------------ what it says

    def pictures(self) -> list:
        out = []
        for _, replay in sorted(self.replays.items()):
            res = replay.picture()
            if res is not None:
                out.append((replay, res))
        return out

    def ingest_summary(self) -> dict[str, Any]:
        from forensics.ingest import build_summary_json
        from forensics.sources import Inputs

        summaries = []
        for f in sorted(self.files.values(), key=lambda f: int(f.lid[1:])):
            s = f.summary or FileSummary(path=f.display, kind=f.kind or "pending", broker_id=f.ctx.broker_hint,
                                         cluster=f.ctx.cluster)
            summaries.append(s)
        return build_summary_json(summaries, Inputs())

    def displays(self) -> dict[str, str]:
        """Each logical file's display -> where it is now, for citations (filled in by the caller's table)."""
        return {f.display: f.display for f in self.files.values()}

    # ------------------------------------------------------------------ kept

    def save(self, path: str) -> None:
        tmp = f"{path}.tmp"
        with open(tmp, "wb") as fh:
            pickle.dump(self, fh, protocol=pickle.HIGHEST_PROTOCOL)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    @staticmethod
    def load(path: str) -> "Session | None":
        try:
            with open(path, "rb") as fh:
                return pickle.load(fh)
        except FileNotFoundError:
            return None


def _last_two(kept) -> tuple[int | None, int | None]:
    """The cluster's latest line two batches ago and at the last batch (a session kept before it kept both: the
    last only)."""
    if isinstance(kept, tuple):
        return kept
    return None, kept


def _joined(rows: list[dict]) -> list[dict]:
    """One row per file and batch: the source cuts a file's new bytes into rows of ROW_BYTES."""
    out: list[dict] = []
    for row in rows:
        prev = out[-1] if out else None
        if prev is not None and row["framing"] and prev["lid"] == row["lid"] and prev["end"] == row["start"] \
                and not prev["note"]:
            prev.update(end=row["end"], quiet=row["quiet"], note=row["note"],
                        data=(prev["data"] or b"") + (row["data"] or b""))
            continue
        out.append(dict(row))
    return out


def _row_order(row: dict) -> tuple:
    lid = row["lid"] or "f0"
    return (0 if row["framing"] else 1, int(lid[1:]) if lid[1:].isdigit() else 0, row["start"] or 0)
