"""``kafka-forensics playback``: a recorded incident's files written again into a folder, at N times their pace.

Each file is written as its writer wrote it, in its own order, at the time its own lines (or records) carry:

- a broker log and its rotated parts (``server.log.2021-08-16-09.gz``, ..., ``server.log``) are one stream: the
  lines go to ``server.log``; at each part's end log4j's rotation is done again (the file renamed to the part's
  dated name, a new ``server.log`` begun), and the rotated part is gzipped a minute of the cluster's time later,
  when the recorded part was;
- a ZooKeeper transaction log is preallocated with zeros and each entry written in place at its time, as ZooKeeper
  writes it; a snapshot appears whole at the time of the transaction it is named after;
- a ``__cluster_metadata`` segment grows batch by batch, each at its append time;
- anything else (a container stream, a client's log, a dump) line by line at the time its lines carry; files with
  no time at all (a README) are copied first.

Lines are timed by the first date-time they carry (in ``--tz`` when it names no zone); a line without one (a stack
trace's) goes with the line before. Stretches where nothing is written longer than ``max_gap`` (of the cluster's
time) are shortened to it. What was written when is logged (``log``, JSON lines) for the latency benchmark.
"""
from __future__ import annotations

import datetime as dt
import gzip
import heapq
import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from zoneinfo import ZoneInfo

_STAMP = re.compile(r"(\d{4})[-/](\d\d)[-/](\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[,.](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?")
_ROTATED = re.compile(r"^(?P<base>.+\.(?:log|out|txt))\.(?P<suffix>[^/]+?)(?P<gz>\.gz)?$")
_ZK_LOG = re.compile(r"^log\.([0-9a-f]+)$")
_ZK_SNAP = re.compile(r"^snapshot\.([0-9a-f]+)$")
_SEGMENT = re.compile(r"^\d{20}\.log$")
GZIP_AFTER_US = 60_000_000  # a rotated part is gzipped this long (of the cluster's time) after its rotation


@dataclass(order=True)
class Act:
    ts: int  # the cluster's time it happens at
    order: tuple  # keeps each file's own order among acts of one time
    what: Callable[[], tuple[str, int | None]] = field(compare=False)  # does it; says (file, line) for the log


def stamp_us(text: str, tz) -> int | None:
    m = _STAMP.search(text[:200])
    if m is None:
        return None
    y, mo, d, h, mi, s, frac, zone = m.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    try:
        t = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), micro)
    except ValueError:
        return None
    if zone:
        z = dt.timezone.utc if zone == "Z" else dt.timezone(dt.timedelta(
            hours=int(zone[:3]), minutes=int(zone[-2:]) * (1 if zone[0] == "+" else -1)))
        t = t.replace(tzinfo=z)
    else:
        t = t.replace(tzinfo=tz)
    return int(t.timestamp() * 1_000_000)


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _entries(data: bytes, tz) -> list[tuple[int | None, bytes, int]]:
    """A text's lines grouped as written: (time, bytes, number of its first line); lines without a time of their
    own go with the line before."""
    out: list[list] = []
    lines = data.splitlines(keepends=True)
    for n, raw in enumerate(lines, 1):
        t = stamp_us(raw.decode("utf-8", "replace"), tz)
        if t is None and out:
            out[-1][1] += raw
            continue
        out.append([t, raw, n])
    last = None
    for e in out:  # a first line with no time at all waits for the next timed one
        if e[0] is None:
            e[0] = last
        last = e[0]
    nxt = None
    for e in reversed(out):
        if e[0] is None:
            e[0] = nxt
        nxt = e[0]
    return [(e[0], e[1], e[2]) for e in out]


class Player:
    def __init__(self, source: Path, dest: Path, tz: str = "UTC", log: Path | None = None):
        self.source, self.dest = source, dest
        self.tz = dt.timezone.utc if tz == "UTC" else ZoneInfo(tz)
        self.acts: list[Act] = []
        self.first: list[Path] = []  # copied before anything (no time)
        self.log = open(log, "a") if log else None
        self.seq = 0
        self.last: dict[str, int] = {}  # each file's latest time planned

    def _add(self, ts: int | None, key: tuple, what) -> None:
        if ts is None:
            return
        # a file is written in its own order: a line dated before the one above it (a clock stepped back) is
        # written when the one above it is
        ts = max(ts, self.last.get(key[0], ts))
        self.last[key[0]] = ts
        self.seq += 1
        self.acts.append(Act(ts, key + (self.seq,), what))

    # ------------------------------------------------------------------ planning

    def plan(self) -> None:
        by_dir: dict[Path, list[Path]] = {}
        for p in sorted(self.source.rglob("*")):
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(self.source).parts):
                by_dir.setdefault(p.parent, []).append(p)
        zk_times: dict[int, int] = {}
        snaps: list[tuple[Path, int]] = []
        for folder, paths in sorted(by_dir.items()):
            streams: dict[str, list[Path]] = {}
            for p in paths:
                name = p.name
                m = _ROTATED.match(name)
                if m and (m["suffix"][:1].isdigit()):
                    streams.setdefault(m["base"], []).append(p)
                elif _ZK_LOG.match(name):
                    zk_times.update(self._zk_log(p))
                elif _ZK_SNAP.match(name):
                    snaps.append((p, int(_ZK_SNAP.match(name)[1], 16)))
                elif _SEGMENT.match(name) and "__cluster_metadata" in str(folder):
                    self._segment(p)
                elif name.endswith(".checkpoint"):
                    self.first.append(p)
                else:
                    streams.setdefault(name, []).append(p)
            for base, parts in sorted(streams.items()):
                self._stream(folder, base, parts)
        for p, zxid in snaps:
            t = zk_times.get(zxid)
            if t is None:
                self.first.append(p)
            else:
                self._add(t, (str(p), 0), lambda p=p: self._whole(p))

    def _out(self, p: Path) -> Path:
        return self.dest / p.relative_to(self.source)

    def _stream(self, folder: Path, base: str, parts: list[Path]) -> None:
        """A file and its rotated parts: lines to ``base``, rotated at each part's end as log4j did."""
        current = folder / base
        timed = []
        for p in parts:
            ents = _entries(_read(p), self.tz)
            first = next((t for t, _, _ in ents if t is not None), None)
            timed.append((p != current, first if first is not None else -1, p, ents))
        timed.sort(key=lambda x: (not x[0], x[1]))  # rotated parts by their first time, the current file last
        if not any(ents for *_, ents in timed) or all(e[0] is None for *_, ents in timed for e in ents):
            self.first.extend(p for _, _, p, _ in timed)
            return
        live = self._out(current)
        key = str(live)
        last_t = None
        for k, (rotated, _, p, ents) in enumerate(timed):
            for t, raw, n in ents:
                self._add(t, (key, k, n), lambda raw=raw, n=n: self._append(live, raw, n))
                last_t = t if t is not None else last_t
            if rotated:
                name = p.name[:-3] if p.name.endswith(".gz") else p.name
                target = live.with_name(name)
                self._add(last_t, (key, k, 1 << 40), lambda target=target: self._rotate(live, target))
                if p.name.endswith(".gz"):
                    self._add((last_t or 0) + GZIP_AFTER_US, (key, k, 1 << 41), lambda target=target: self._gzip(target))
        if timed[-1][0] is False:
            return
        # no current file was recorded: the last part stays rotated (done by its own rotation above)

    def _zk_log(self, p: Path) -> dict[int, int]:
        from parsers.zookeeper.txnlog import HEADER_BYTES, Txn, read_txnlog

        data = _read(p)
        log = read_txnlog(data)
        out = self._out(p)
        txns = [r for r in log.records if isinstance(r, Txn)]
        key = str(out)
        first_t = txns[0].time * 1000 if txns else None
        self._add(first_t, (key, -1), lambda: self._preallocate(out, data[:HEADER_BYTES], len(data)))
        ends = [r.offset for r in log.records[1:]] + [log.end_offset]
        times = {}
        for rec, end in zip(log.records, ends):
            t = rec.time * 1000 if isinstance(rec, Txn) else None
            if isinstance(rec, Txn):
                times[rec.zxid] = t
            chunk = data[rec.offset:end]
            self._add(t if t is not None else first_t, (key, rec.offset),
                      lambda chunk=chunk, at=rec.offset: self._poke(out, at, chunk))
        tail = data[log.end_offset:]
        if tail.strip(b"\0"):
            self._add(txns[-1].time * 1000 if txns else None, (key, 1 << 40),
                      lambda: self._poke(out, log.end_offset, tail))
        return times

    def _segment(self, p: Path) -> None:
        from parsers.kraft.kafka_batches import Batch, read_batches

        data = _read(p)
        out = self._out(p)
        key = str(out)
        items = list(read_batches(data))
        first = next((b.header.max_timestamp * 1000 for b in items if isinstance(b, Batch)), None)
        for item in items:
            if isinstance(item, Batch):
                h = item.header
                t, lo, hi = h.max_timestamp * 1000, h.pos, h.pos + h.size
            else:
                t, lo, hi = first, item.pos, item.end
            self._add(t, (key, lo), lambda chunk=data[lo:hi]: self._append(out, chunk, None))

    # ------------------------------------------------------------------ doing

    def _append(self, path: Path, raw: bytes, line: int | None) -> tuple[str, int | None]:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as fh:
            fh.write(raw)
        return str(path), line

    def _rotate(self, live: Path, target: Path) -> tuple[str, int | None]:
        if live.exists():
            os.replace(live, target)
        return str(target), None

    def _gzip(self, target: Path) -> tuple[str, int | None]:
        if target.exists():
            tmp = target.with_name(target.name + ".gz.tmp")
            with open(target, "rb") as src, gzip.open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.replace(tmp, target.with_name(target.name + ".gz"))
            target.unlink()
        return str(target) + ".gz", None

    def _preallocate(self, out: Path, header: bytes, size: int) -> tuple[str, int | None]:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "wb") as fh:
            fh.write(header)
            fh.truncate(size)
        return str(out), None

    def _poke(self, out: Path, at: int, chunk: bytes) -> tuple[str, int | None]:
        with open(out, "r+b") as fh:
            fh.seek(at)
            fh.write(chunk)
        return str(out), at

    def _whole(self, p: Path) -> tuple[str, int | None]:
        out = self._out(p)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name("." + out.name + ".tmp")
        shutil.copyfile(p, tmp)
        os.replace(tmp, out)
        return str(out), None

    # ------------------------------------------------------------------ playing

    def play(self, speed: float, max_gap_s: float | None = None, sleep=time.sleep, clock=time.time) -> int:
        for p in self.first:
            self._whole(p)
        heapq.heapify(self.acts)
        if not self.acts:
            return 0
        t0 = self.acts[0].ts
        shift = 0  # the cluster's time taken out of long quiet stretches
        prev = t0
        wall0 = clock()
        done = 0
        gap = None if max_gap_s is None else int(max_gap_s * 1e6)
        while self.acts:
            act = heapq.heappop(self.acts)
            if gap is not None and act.ts - prev > gap:
                shift += act.ts - prev - gap
            prev = max(prev, act.ts)
            due = wall0 + (act.ts - t0 - shift) / 1e6 / speed
            wait = due - clock()
            if wait > 0:
                sleep(wait)
            where, line = act.what()
            done += 1
            if self.log is not None:
                self.log.write(json.dumps({"wall": round(clock(), 4), "ts": act.ts, "file": where, "line": line}) + "\n")
        if self.log is not None:
            self.log.close()
        return done


def playback(source: Path, dest: Path, speed: float, tz: str = "UTC", max_gap_s: float | None = None,
             log: Path | None = None) -> int:
    player = Player(source, dest, tz, log)
    player.plan()
    return player.play(speed, max_gap_s)
