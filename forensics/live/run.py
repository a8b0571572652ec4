"""``watch``'s shell: the Structured Streaming query over the tailer's source, the batch handler, the outputs and
the terminal loop. Everything it keeps lives in ``--out``: the query's checkpoint (``checkpoint/``), the tailer's
files (``live/files.json``), the session (``live/state.pkl``), the notifications (``incidents.jsonl``), the report
(``report.json``, ``report.html``). Started again with the same ``--out`` after a ``kill -9``, it goes on where the
checkpoint and the session left it.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from forensics.errors import UserError
from forensics.live import outputs
from forensics.live.follow import Session
from forensics.live.incidents import Book, to_end
from replay_engine.live import LiveSettings

PICTURE_S = 1.0  # at most one picture (and one redraw) a second


@dataclass
class WatchOptions:
    sources: list[str]
    out: Path
    cluster: str
    tz: str = "UTC"
    broker_map: list[tuple[str, int]] = field(default_factory=list)
    master: str | None = None
    exec_cmd: str | None = None
    trigger_s: float = 1.0
    quiet_s: float = 2.0
    keep_h: float = 6.0
    until_idle_s: float | None = None  # stop once nothing new came for this long (tests, benchmarks)
    duration_s: float | None = None
    view: bool | None = None  # None: the rich view on a terminal, JSON lines on stdout otherwise
    zk: str | None = None


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Handler:
    """What runs for each micro-batch (Spark calls it from the driver, one batch at a time)."""

    def __init__(self, opts: WatchOptions, session: Session, notifier: outputs.Notifier, names):
        self.opts = opts
        self.session = session
        self.notifier = notifier
        self.names = names  # () -> {display read under: display now}
        self.lock = threading.RLock()
        self.last_picture = 0.0
        self.dirty = False
        self.shown: dict[str, Any] = {"open": [], "closed": [], "status": {}}
        self.busy = False  # a batch is being handled (it is not stopped in the middle: --until-idle)
        self.batches = 0  # batches handled since this run began
        self.last_written = 0.0  # when the report files were last written
        self.write_cost = 0.0  # how long that took
        self.first_batch = 0.0  # when the first of them was (--until-idle counts from then at the earliest)
        self.error: BaseException | None = None

    def __call__(self, df, batch_id: int) -> None:
        self.busy = True
        try:
            self._batch(df, batch_id)
        except BaseException as exc:  # noqa: BLE001 - kept for the main loop to report; the query stops
            self.error = exc
            raise
        finally:
            self.busy = False

    def _batch(self, df, batch_id: int) -> None:
        t0 = time.time()
        s = self.session
        if batch_id <= s.batch_id:
            return  # run again after a restart: its rows are in the session already
        rows = df.toArrow().to_pylist()
        self.batches += 1
        self.first_batch = self.first_batch or t0
        t1 = time.time()
        now = _now()
        added = s.apply(rows, now)
        t2 = time.time()
        s.batch_id = batch_id
        self.dirty = self.dirty or bool(added) or any(r["quiet"] for r in rows)
        pictured = self.dirty and t0 - self.last_picture >= PICTURE_S
        if pictured:
            self.picture(now)
        t3 = time.time()
        s.save(str(self.opts.out / "live" / "state.pkl"))
        self.emit()
        t4 = time.time()
        with self.lock:
            self.shown["status"] = self.status(batch_id, t4 - t0)
        # what each batch took, for benchmarks/live_bench.py and docs/live.md
        with open(self.opts.out / "live" / "batches.jsonl", "a") as fh:
            fh.write(json.dumps({"batch": batch_id, "at": round(t0, 3), "rows": len(rows),
                                 "bytes": sum(len(r["data"] or b"") for r in rows), "events": sum(added.values()),
                                 "read_s": round(t1 - t0, 3), "apply_s": round(t2 - t1, 3),
                                 "picture_s": round(t3 - t2, 3) if pictured else None,
                                 "save_s": round(t4 - t3, 3),
                                 # the kept replays' working state: settled replay (pickled bytes), tail events
                                 "state_bytes": sum(r.state_bytes() for r in s.replays.values()),
                                 "tail": sum(len(r.tail) for r in s.replays.values())}) + "\n")

    def picture(self, now: str, final: bool = False) -> dict[str, Any] | None:
        """The pictures of the clusters, told: the incidents not frozen yet (an outage closed long ago is told already,
        and does not change) to the notifications, every picture; the whole report to the files, every few seconds
        (as often as the page reloads itself, and no more than a fifth of the time) and at the end."""
        s = self.session
        pics = s.pictures()
        self.last_picture, self.dirty = time.time(), False
        if not pics:
            return None
        names = self.names()
        recent = [(replay, replace(res, leaderless=[lp for lp in res.leaderless if _key(lp) not in replay.frozen]))
                  for replay, res in pics]
        report = self._report(recent, now)
        incidents = outputs.recite(report["incidents"], names)
        if s.book is None:
            s.book = Book()
        s.pending.extend(s.book.update(incidents, now))
        t = time.time()
        if final or t - self.last_written >= max(outputs.REFRESH_S, 5 * self.write_cost):
            outputs.write_reports(self.opts.out, outputs.recite(self._report(pics, now), names), self.opts.tz)
            self.last_written, self.write_cost = time.time(), time.time() - t
        with self.lock:
            self.shown["open"] = list(s.book.open.values())
            self.shown["closed"] = list(s.book.closed)
        return report

    def _report(self, pics: list, now: str) -> dict[str, Any]:
        from forensics.report.build import build_report

        s = self.session
        events = [e for replay, _ in pics for e in replay.kept()]
        report = build_report([res for _, res in pics], s.ingest_summary(), events, sources=self.opts.sources,
                              tz=self.opts.tz)
        by_cluster = {res.cluster: (replay, res) for replay, res in pics}
        for inc in report["incidents"]:
            replay, res = by_cluster.get(inc.get("cluster"), pics[0])
            inc["to_end"] = to_end(inc, res, replay.kept())
        report["live"] = {"at": now, "batch": s.batch_id, "settled": {c: _iso(r.settled) for c, r in s.replays.items()},
                          "warnings": [n.to_json() for n in s.notes[-50:]]}
        return report

    def emit(self) -> None:
        s = self.session
        if s.pending:
            self.notifier.emit(s.pending, lambda text: s.warn(_now(), None, None, text))
            s.pending = []

    def status(self, batch_id: int, took: float) -> dict[str, Any]:
        s = self.session
        settled = [r.settled for r in s.replays.values() if r.settled is not None]
        ends = [r.ctx.trace_end for r in s.replays.values() if r.ctx.trace_end is not None]
        return {"sources": " ".join(self.opts.sources), "files": len(s.files), "lines": s.lines,
                "settled": _iso(min(settled)) if settled else None, "evidence_end": _iso(max(ends)) if ends else None,
                "batch": batch_id, "batch_s": took, "notes": [n.line() for n in s.notes[-6:]]}


def _key(lp) -> tuple:
    return (lp.episode.topic, lp.episode.partition, lp.episode.start)


def _iso(us: int | None) -> str | None:
    from parsers.schema import iso_utc

    return iso_utc(us)


def watch(opts: WatchOptions, say) -> int:
    from forensics.commands.common import start_spark
    from forensics.live import files as tail
    from forensics.live.source import NAME, reader_options, register

    import faulthandler
    import signal

    faulthandler.register(signal.SIGUSR1)  # kill -USR1 prints every thread's stack: for a bug report
    out = opts.out
    (out / "live").mkdir(parents=True, exist_ok=True)
    sources = list(opts.sources)
    stop = threading.Event()
    if "-" in sources:
        spool = out / "stdin.log"
        sources[sources.index("-")] = str(spool)
        threading.Thread(target=_spool_stdin, args=(spool, stop), daemon=True).start()
    if opts.zk:
        sources.append(str(_start_capture(opts.zk, out / "zk-capture", stop, say)))
    for src in sources:
        if not os.path.exists(src) and not src.endswith("stdin.log"):
            raise UserError(f"{src}: no such file or directory")
    roots = tail.roots_of(sources)
    state = out / "live" / "state.pkl"
    session = Session.load(str(state))
    if session is None:
        session = Session(opts.cluster, opts.tz, tuple(opts.broker_map),
                          LiveSettings(keep_us=int(opts.keep_h * 3600e6)))
    else:
        say(f"going on from {state} (batch {session.batch_id})")
    view = sys.stdout.isatty() if opts.view is None else opts.view
    notifier = outputs.Notifier(out / "incidents.jsonl", opts.exec_cmd, None if view else _print_line)
    table_path = out / "live" / "files.json"
    handler = Handler(opts, session, notifier, lambda: _current_names(table_path))
    handler.emit()  # what the session had to tell when it stopped
    spark = start_spark(opts.master or "local[2]")
    register(spark)
    df = spark.readStream.format(NAME).options(**reader_options(roots, str(out / "live"), opts.quiet_s)).load()
    query = (df.writeStream.foreachBatch(handler).option("checkpointLocation", str(out / "checkpoint"))
             .trigger(processingTime=f"{opts.trigger_s} seconds").queryName("kafka_forensics_watch").start())
    say(f"following {' '.join(opts.sources)} -> {out} (Spark {spark.sparkContext.master}, a batch every "
        f"{opts.trigger_s:g} s)")
    started = time.time()
    try:
        _loop(query, handler, opts, started, view, table_path)
    except KeyboardInterrupt:
        say("stopping")
    finally:
        stop.set()
        try:
            query.stop()
        except Exception:  # noqa: BLE001 - stopping a query that failed
            pass
    if handler.error is not None:
        raise handler.error
    with handler.lock:
        handler.picture(_now(), final=True)
        session.save(str(state))
        handler.emit()
    return 1 if session.book is not None and session.book.open else 0


def _loop(query, handler: Handler, opts: WatchOptions, started: float, view: bool, table_path: Path) -> None:
    live = None
    if view:
        from rich.console import Console
        from rich.live import Live

        from forensics.live.view import render

        live = Live(console=Console(), refresh_per_second=1, auto_refresh=False)
        live.start()
    try:
        while query.isActive:
            time.sleep(0.25)
            if handler.error is not None:
                return
            if live is not None:
                with handler.lock:
                    shown = dict(handler.shown)
                live.update(render(shown["status"], shown["open"], shown["closed"],
                                   shown["status"].get("notes", []), opts.tz), refresh=True)
                time.sleep(0.75)
            now = time.time()
            if opts.duration_s is not None and now - started >= opts.duration_s:
                return
            if opts.until_idle_s is not None and not handler.busy and handler.batches > 0 \
                    and _idle(opts, table_path, now, handler.first_batch) and _caught_up(handler.session, table_path):
                return
        exc = query.exception()
        if exc is not None:
            raise UserError(f"the stream stopped: {str(exc).splitlines()[0]}")
    finally:
        if live is not None:
            live.stop()


def _idle(opts: WatchOptions, table_path: Path, now: float, started: float) -> bool:
    """Nothing under the sources has changed for ``until_idle_s`` (since the first batch at the earliest), and the
    tailer has looked since."""
    last = started
    for src in opts.sources:
        for dirpath, _, names in os.walk(src) if os.path.isdir(src) else [(os.path.dirname(src), [], [src])]:
            for name in names:
                try:
                    last = max(last, os.stat(os.path.join(dirpath, name)).st_mtime)
                except OSError:
                    continue
    try:
        looked = table_path.stat().st_mtime
    except OSError:
        return False
    return now - last >= opts.until_idle_s and looked > last


def _caught_up(session: Session, table_path: Path) -> bool:
    """Has every file the tailer offered been handed to the session, and is every one quiet?"""
    try:
        files = json.loads(table_path.read_text())["files"]
    except (OSError, ValueError, KeyError):
        return False
    for lid, f in files.items():
        mine = session.files.get(lid)
        if f["gone"] or f["framing"] == "skip":
            continue
        if mine is None or mine.read_to < f["offered"] or not mine.quiet:
            return False
    return True


def _print_line(line: str) -> None:
    print(line, flush=True)


def _current_names(table_path: Path) -> dict[str, str]:
    """Each logical file's display (the name it was first read under) -> where it is now, shown as postmortem
    shows files (under the SOURCE as given)."""
    try:
        d = json.loads(table_path.read_text())
    except (OSError, ValueError):
        return {}
    roots = [tuple(r) for r in d.get("roots", [])]
    out = {}
    for f in d.get("files", {}).values():
        now = f["path"]
        for root, shown in roots:
            if now == root or now.startswith(root.rstrip("/") + "/"):
                rel = os.path.relpath(now, root)
                cur = shown if rel == "." else f"{shown}/{rel}"
                if cur != f["display"]:
                    out[f["display"]] = cur
                break
    return out


def _spool_stdin(spool: Path, stop: threading.Event) -> None:
    """``-``: what comes on stdin is appended to ``stdin.log`` in --out, and followed there (a restart reads the
    same file on)."""
    with open(spool, "ab") as fh:
        for line in sys.stdin.buffer:
            fh.write(line)
            fh.flush()
            if stop.is_set():
                break


def _start_capture(zk: str, where: Path, stop: threading.Event, say) -> Path:
    """``--zk``: ``capture --watch`` in a thread (read-only, as ``capture``), into a new folder of ``where`` for each
    run of ``watch`` (a capture writes into a new folder), ``where`` followed as a source; it ends with ``watch``."""
    from forensics.capture import CaptureOptions, parse_zk, run_capture

    run_dir = where / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    opts = CaptureOptions(target=parse_zk(zk), out=run_dir, watch_s=float("inf"))

    def run() -> None:
        try:
            run_capture(opts, say=say, stop=stop)
        except Exception as exc:  # noqa: BLE001 - the logs are still followed
            say(f"--zk: the capture stopped: {exc}")

    where.mkdir(parents=True, exist_ok=True)
    threading.Thread(target=run, daemon=True).start()
    deadline = time.time() + 30
    while not (run_dir / "manifest.json").exists() and time.time() < deadline:
        time.sleep(0.2)
    return where
