"""The tailer: which files the followed sources hold now, and how far each can be read.

Each file is followed as a *logical file* (``lid``) through what happens to it while it is written:

- log4j's rotation renames it to a dated name (``server.log`` -> ``server.log.2021-08-16-10``): the same inode, so the
  same logical file, read on under its new name; a new ``server.log`` is a new one;
- a rotated file gzipped later (``X`` gone, ``X.gz`` new, its content ``X``'s): the same logical file, read on in
  the decompressed stream (nothing, when ``X`` was read to its end);
- a file that shrinks (truncated, or replaced in place) or a new file where one was (replaced): a new logical file,
  read from its start, with a note; a file deleted before it was read to its end: a note with how much was lost;
- a folder (a broker's) that appears late is walked like the others.

How far a file can be read: a text file up to its last line break (a line being written waits for its end); a
ZooKeeper txn log, written in place in a zero-filled file, up to its last non-zero byte; a metadata segment to its
size (the reader waits for a batch's end); a snapshot once it has stopped changing, whole.

Positions are bytes of the file (of the decompressed stream for a gzipped one). The table of logical files is
plain data, saved beside the stream's checkpoint; the positions themselves are the stream's offsets
(``forensics.live.source``).
"""
from __future__ import annotations

import gzip
import json
import os
import re
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

# How a file is read as it grows (see the module's docstring).
TEXT, INPLACE, APPEND, WHOLE, SKIP = "text", "inplace", "append", "whole", "skip"
_ZK_TXN = re.compile(r"(^|/)log\.[0-9a-f]+$")
_ZK_SNAP = re.compile(r"(^|/)snapshot\.[0-9a-f]+(\.snappy)?$")
_SEGMENT = re.compile(r"__cluster_metadata-\d+/\d{20}\.log$")
_CHECKPOINT = re.compile(r"\d{20}-\d{10}\.checkpoint$")
_BLOCK = 1 << 16
MAX_STEP = 8 << 20  # bytes one file advances in one batch at most (a big folder is read in steps)
FINGERPRINT = 4096  # the first bytes of a file, to know it again renamed, gzipped or copied


@dataclass
class Followed:
    lid: str  # the logical file's id, in order of discovery
    display: str  # how its lines are cited (the path it was first seen at, made unique among logical files)
    path: str  # where it is now
    dev: int
    ino: int
    framing: str
    gz: bool = False
    offered: int = 0  # how far the stream has been offered it
    size: int = 0  # the file's size when last looked at (of the decompressed stream, gzipped)
    mtime: float = 0.0
    changed_at: float = 0.0  # wall clock of its last change
    head: str = ""  # hex of the first FINGERPRINT bytes (of the decompressed stream)
    gone: bool = False
    unterminated: int = -1  # where a line without its line break was last said to wait


@dataclass
class Table:
    roots: list[tuple[str, str]]  # (absolute path, display root) of each SOURCE
    files: dict[str, Followed] = field(default_factory=dict)
    seq: int = 0
    notes: list[dict] = field(default_factory=list)  # what happened to files since the last offset
    quiet_s: float = 2.0  # a file unchanged this long is quiet

    # ------------------------------------------------------------------ persistence

    def save(self, path: str) -> None:
        tmp = f"{path}.tmp"
        with open(tmp, "w") as fh:
            json.dump({"roots": self.roots, "seq": self.seq, "quiet_s": self.quiet_s,
                       "files": {k: asdict(v) for k, v in self.files.items()}}, fh)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str, roots: list[tuple[str, str]]) -> "Table":
        try:
            with open(path) as fh:
                d = json.load(fh)
        except (OSError, ValueError):
            return cls(roots)
        t = cls([tuple(r) for r in d["roots"]], seq=d["seq"], quiet_s=d.get("quiet_s", 2.0))
        t.files = {k: Followed(**v) for k, v in d["files"].items()}
        return t

    # ------------------------------------------------------------------ looking

    def scan(self, now: float | None = None) -> dict[str, int]:
        """Look at the sources: every logical file still followed, and whether it is quiet (1) or not (0)."""
        now = time.time() if now is None else now
        found = self._walk()
        by_inode = {(f.dev, f.ino): f for f in self.files.values() if not f.gone}
        seen: set[str] = set()
        unknown = []
        for path, display, st in found:
            f = by_inode.get((st.st_dev, st.st_ino))
            if f is not None and not self._same(f, path, st):
                f = None  # the inode of a file deleted since, given to a new one
            if f is None:
                unknown.append((path, display, st))
                continue
            if f.path != path:
                f.path = path  # renamed (log4j's rotation): read on under the new name
            seen.add(self._look(f, st, now).lid)
        vanished = [f for f in self.files.values() if not f.gone and f.lid not in seen]
        rest = []
        for path, display, st in unknown:  # first the gzipped parts of files gone since the last look
            f = self._link_gzip(path, st, vanished)
            if f is None:
                rest.append((path, display, st))
            else:
                seen.add(self._look(f, st, now).lid)
        for path, display, st in rest:
            if self._copy_of_followed(path, seen):
                continue  # gzipped beside the part it replaces (written, then the part removed): linked once it is
            old = next((v for v in vanished if v.path == path), None)
            f = self._new(path, display, st, now)
            if f is None:
                continue
            if old is not None:  # another file now where a followed one was, not a rotation
                self.notes.append({"lid": old.lid, "display": old.display, "pos": old.offered,
                                   "text": "replaced by another file (a new one at its path, not a rotation): "
                                           "the new one is read from its start"})
            seen.add(self._look(f, st, now).lid)
        for f in self.files.values():
            if not f.gone and f.lid not in seen:
                self._gone(f)
        return {lid: int(now - f.changed_at >= self.quiet_s) for lid, f in sorted(self.files.items()) if not f.gone}

    def _walk(self) -> list[tuple[str, str, os.stat_result]]:
        out = []
        for root, droot in self.roots:
            if os.path.isfile(root):
                try:
                    out.append((root, droot, os.stat(root)))
                except OSError:
                    pass
                continue
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                rel = os.path.relpath(dirpath, root)
                for name in sorted(filenames):
                    if name.startswith(".") or name.endswith(".tmp"):
                        continue
                    p = os.path.join(dirpath, name)
                    try:
                        st = os.stat(p)
                    except OSError:
                        continue
                    if not os.path.isfile(p):
                        continue
                    sub = name if rel == "." else f"{rel}/{name}"
                    out.append((p, f"{droot}/{sub}".replace(os.sep, "/"), st))
        return out

    @staticmethod
    def _same(f: Followed, path: str, st: os.stat_result) -> bool:
        """Is the file at ``path`` (the inode of ``f``) still ``f``: as long at least as what was offered of it, and
        beginning as it began (a file system gives a deleted file's inode to the next new file)?"""
        if not f.head:
            return True
        head = _gunzip_head(path) if f.gz else _read_head(path)
        want = bytes.fromhex(f.head)
        n = min(len(want), len(head or b""))
        return head is not None and (n == 0 or head[:n] == want[:n])

    def _new(self, path: str, display: str, st: os.stat_result, now: float) -> Followed | None:
        head = _read_head(path)
        if head is None:
            return None
        gz = head[:2] == b"\x1f\x8b"
        if gz:
            head = _gunzip_head(path)
        framing = _framing(display, head)
        head = _written(head, framing)
        self.seq += 1
        lid = f"f{self.seq}"
        used = {f.display for f in self.files.values()}
        shown, n = display, 1
        while shown in used:  # a new file where a rotated one was: cited apart from it
            n += 1
            shown = f"{display}#{n}"
        # last changed when the file says (a file found complete, a rotated part, is quiet from the start)
        f = Followed(lid, shown, path, st.st_dev, st.st_ino, framing, gz, head=head[:FINGERPRINT].hex(),
                     changed_at=min(now, st.st_mtime), mtime=st.st_mtime)
        self.files[lid] = f
        if framing == SKIP:
            self.notes.append({"lid": lid, "display": shown, "pos": 0,
                               "text": "binary data, not a log this tool reads: not followed"})
        return f

    def _link_gzip(self, path: str, st: os.stat_result, vanished: list[Followed]) -> Followed | None:
        """A new ``.gz`` where a file of the same folder has just gone (rotated, then compressed): the same logical
        file, when its content begins as the gone one's did."""
        if not path.endswith(".gz"):
            return None
        head = None
        for f in vanished:
            if f.gz or os.path.dirname(f.path) != os.path.dirname(path) or not f.head:
                continue
            head = _gunzip_head(path) if head is None else head
            want = bytes.fromhex(f.head)
            if head is None or head[:len(want)] != want:
                continue
            vanished.remove(f)
            f.path, f.dev, f.ino, f.gz = path, st.st_dev, st.st_ino, True
            f.mtime = 0.0
            return f
        return None

    def _copy_of_followed(self, path: str, seen: set[str]) -> bool:
        """Is ``path`` a ``.gz`` whose content begins as a file of its folder still there does (a rotated part's
        compressed copy, looked at before the part itself is removed)?"""
        if not path.endswith(".gz"):
            return False
        head = None
        for lid in seen:
            f = self.files[lid]
            if f.gz or f.gone or not f.head or os.path.dirname(f.path) != os.path.dirname(path):
                continue
            head = _gunzip_head(path) if head is None else head
            want = bytes.fromhex(f.head)
            if head is not None and head[:len(want)] == want:
                return True
        return False

    def _look(self, f: Followed, st: os.stat_result, now: float) -> Followed:
        """``f``'s size and last change as the file says; returns the logical file it is now (a new one when it
        shrank)."""
        if f.framing == SKIP:
            return f
        if f.gz:
            if st.st_mtime != f.mtime or not f.size:
                f.size = _gunzip_size(f.path)
                f.mtime = st.st_mtime
            return f
        size = st.st_size
        if len(f.head) < 2 * FINGERPRINT and size * 2 > len(f.head):
            head = _read_head(f.path)  # the fingerprint grows with the file, up to FINGERPRINT bytes
            if head is not None and head[:len(f.head) // 2].hex() == f.head:
                f.head = _written(head, f.framing).hex()
        if size < f.offered and f.framing != INPLACE:
            return self._restart(f, st, now, f"shrank from {f.offered:,} to {size:,} bytes (truncated or replaced "
                                 "in place)")
        if size != f.size or st.st_mtime != f.mtime:
            f.size, f.mtime, f.changed_at = size, st.st_mtime, now
        return f

    def _restart(self, f: Followed, st: os.stat_result, now: float, why: str) -> Followed:
        self.notes.append({"lid": f.lid, "display": f.display, "pos": f.offered,
                           "text": f"{why}: read again from its start as a new file"})
        f.gone = True
        g = self._new(f.path, f.display.split("#", 1)[0], st, now)
        if g is None:
            return f
        g.size, g.changed_at = st.st_size, now
        return g

    def _gone(self, f: Followed) -> None:
        f.gone = True
        if f.framing in (TEXT, APPEND) and f.offered < f.size:
            self.notes.append({"lid": f.lid, "display": f.display, "pos": f.offered,
                               "text": f"deleted before its last {f.size - f.offered:,} bytes were read "
                                       f"(from byte {f.offered:,})"})

    # ------------------------------------------------------------------ how far

    def advance(self, now: float | None = None) -> dict[str, list]:
        """``scan``, then how far each file may be read now (``offered``), MAX_STEP at most per file."""
        now = time.time() if now is None else now
        quiet = self.scan(now)
        behind = {}
        for f in self.files.values():
            if f.gone or f.framing == SKIP:
                continue
            readable = self._readable(f, now)
            f.offered = min(readable, f.offered + MAX_STEP)
            behind[f.lid] = int(readable > f.offered)
            if f.framing == TEXT and not f.gz and f.size > f.offered and quiet.get(f.lid) \
                    and f.size - f.offered < MAX_STEP and f.unterminated != f.offered:
                f.unterminated = f.offered  # said once for each place it stops at
                self.notes.append({"lid": f.lid, "display": f.display, "pos": f.offered,
                                   "text": f"its last line (from byte {f.offered:,}, {f.size - f.offered:,} bytes) has "
                                           "no line break yet: it is read once the line is written whole"})
        # [how far it may be read, quiet, more written than may be read in one step (a backlog being read)]
        return {lid: [self.files[lid].offered, q, behind.get(lid, 0)] for lid, q in quiet.items()}

    def _readable(self, f: Followed, now: float) -> int:
        if f.gz:
            return f.size
        if f.framing == TEXT:
            return _last_line_end(f.path, f.offered, f.size)
        if f.framing == INPLACE:
            return _last_nonzero_end(f.path, f.offered, f.size)
        if f.framing == WHOLE:
            return f.size if now - f.changed_at >= self.quiet_s else f.offered
        return f.size

    def take_notes(self) -> list[dict]:
        out, self.notes = self.notes, []
        return out


def _framing(display: str, head: bytes) -> str:
    if _ZK_TXN.search(display) or head.startswith(b"ZKLG"):
        return INPLACE
    if _ZK_SNAP.search(display) or head.startswith(b"ZKSN") or _CHECKPOINT.search(display):
        return WHOLE
    if _SEGMENT.search(display):
        return APPEND
    sample = head[:8192]
    if b"\x00" in sample and not re.search(rb"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d", sample):
        return SKIP
    return TEXT


def _written(head: bytes, framing: str) -> bytes:
    """What of a file's first bytes says which file it is: a ZooKeeper log's zeros after its last entry are room
    preallocated for the entries to come, written in place (FileTxnLog.append), not what it holds."""
    return head.rstrip(b"\0") if framing == INPLACE else head


def _read_head(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(FINGERPRINT)
    except OSError:
        return None


def _gunzip_head(path: str) -> bytes | None:
    try:
        with gzip.open(path, "rb") as fh:
            return fh.read(FINGERPRINT)
    except (OSError, EOFError, zlib.error):
        return None


def _gunzip_size(path: str) -> int:
    n = 0
    try:
        with gzip.open(path, "rb") as fh:
            while True:
                b = fh.read(1 << 20)
                if not b:
                    break
                n += len(b)
    except (OSError, EOFError, zlib.error):
        pass
    return n


def _last_line_end(path: str, start: int, size: int) -> int:
    """The position after the last line break in [start, size), or start."""
    try:
        with open(path, "rb") as fh:
            end = size
            while end > start:
                lo = max(start, end - _BLOCK)
                fh.seek(lo)
                block = fh.read(end - lo)
                k = block.rfind(b"\n")
                if k >= 0:
                    return lo + k + 1
                end = lo
    except OSError:
        pass
    return start


def _last_nonzero_end(path: str, start: int, size: int) -> int:
    """The position after the last non-zero byte, reading forward from ``start`` until a zero-filled block
    (ZooKeeper preallocates its logs and writes entries in place)."""
    end = start
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            pos = start
            while pos < size:
                block = fh.read(_BLOCK)
                if not block:
                    break
                stripped = block.rstrip(b"\0")
                if not stripped:
                    break  # a whole block of zeros: the preallocated tail
                end = pos + len(stripped)
                pos += len(block)
    except OSError:
        pass
    return end


def read_range(path: str, gz: bool, start: int, end: int, dev: int | None = None, ino: int | None = None,
               head: str = "") -> bytes:
    """Bytes [start, end) of a file (of its decompressed stream, gzipped). With its identity (``dev``, ``ino``,
    ``head``): of that file wherever it went since it was looked at (renamed in its folder, or gzipped there)."""
    if end <= start:
        return b""
    if dev is not None:
        path, gz = locate(path, gz, dev, ino, head)
    if gz:
        with gzip.open(path, "rb") as fh:
            fh.seek(start)
            return fh.read(end - start)
    with open(path, "rb") as fh:
        fh.seek(start)
        return fh.read(end - start)


def locate(path: str, gz: bool, dev: int, ino: int, head: str) -> tuple[str, bool]:
    """Where a file is now: at ``path``; renamed in its folder (the same inode); or gzipped there (a ``.gz`` whose
    content begins as the file did). Raises FileNotFoundError when it is gone."""
    want = bytes.fromhex(head) if head else b""

    def same(p: str) -> bool:  # the inode, and the beginning it had (a deleted file's inode is given again)
        try:
            st = os.stat(p)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != (dev, ino):
            return False
        got = (_gunzip_head(p) if gz else _read_head(p)) or b""
        n = min(len(want), len(got))
        return got[:n] == want[:n]

    if same(path):
        return path, gz
    folder = os.path.dirname(path)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    for name in names:
        p = os.path.join(folder, name)
        if same(p):
            return p, gz
    if not gz and want:
        for name in names:
            if name.endswith(".gz"):
                p = os.path.join(folder, name)
                got = _gunzip_head(p)
                if got is not None and got[:len(want)] == want:
                    return p, True
    raise FileNotFoundError(2, "No such file or directory", path)


def roots_of(sources: list[str]) -> list[tuple[str, str]]:
    """Each SOURCE as (absolute path, how its files are shown): as given, like ``postmortem``'s citations."""
    return [(str(Path(s).resolve()), s.rstrip("/") or s) for s in sources]
