"""A text file too big to hold: read as a stream of line blocks, or cut into byte ranges.

Lines, numbers and problems are those of ``textio.iter_raw_lines`` + ``decode_line`` over
the whole payload (CR, LF and CRLF all end a line; a CR at a chunk's end waits for the next
chunk to say whether it is half of a CRLF; a line longer than ``max_line`` keeps its first
``max_line`` bytes and the rest is counted, never held), but a block of lines is decoded
in one go, so the common case costs what ``whole_lines`` costs.

A range of a file is a byte interval widened to whole lines: it owns the lines that start
inside it. A line starts at 0, after an LF, and after a CR not followed by an LF.
"""
from __future__ import annotations

from typing import BinaryIO, Iterable, Iterator, NamedTuple

import numpy as np

from parsers.common.textio import ReadProblems, decode_line, gunzip_members

READ_BLOCK = 8 << 20  # bytes per read of a big file: lines are decoded a block at a time
_SMALL = 1 << 16


class LineSplitter:
    """Chunks of bytes in, lists of decoded lines out; ``end`` closes the last line."""

    def __init__(self, problems: ReadProblems, max_line: int, first_no: int = 1):
        self.problems = problems
        self.max_line = max_line
        self.n = first_no - 1  # number of the last line given out
        self.pending = b""  # the start of the line under way (at most max_line bytes, maybe a trailing CR)
        self.over = 0  # bytes of that line beyond what is kept

    def feed(self, chunk: bytes) -> list[str]:
        buf = self.pending + chunk if self.pending else chunk
        # A CR at the very end may be the first half of a CRLF: the next chunk decides.
        stop = len(buf) - 1 if buf.endswith(b"\r") else len(buf)
        k = max(buf.rfind(b"\n", 0, stop), buf.rfind(b"\r", 0, stop))
        if k < 0:
            self.pending = b""
            self._keep(buf)
            return []
        lines = self._split(buf[: k + 1])
        self.pending = b""
        self._keep(buf[k + 1:])
        return lines

    def feed_raw(self, chunk: bytes) -> "list[str] | RawBlock":
        """``feed``, but whole lines that hold no CR and no line longer than ``max_line``, with no line cut short
        before them, are given as their bytes (``RawBlock``) for a reader that works on bytes."""
        k = chunk.rfind(b"\n")
        if k < 0 or self.over or b"\r" in chunk or b"\r" in self.pending:
            return self.feed(chunk)
        body = b"".join((self.pending, memoryview(chunk)[:k + 1]))  # one copy
        ends = np.flatnonzero(np.frombuffer(body, np.uint8) == 10)
        if int(ends[0]) > self.max_line or (len(ends) > 1 and int(np.diff(ends).max()) > self.max_line + 1):
            return self.feed(chunk)
        self.n += len(ends)
        self.pending = b""
        self._keep(chunk[k + 1:])
        return RawBlock(body, ends)

    def end(self) -> list[str]:
        """The line still open when the data ends: CR-terminated, or a line cut short."""
        pending, over = self.pending, self.over
        self.pending, self.over = b"", 0
        if pending.endswith(b"\r"):
            return [self._close(pending[:-1], over)]
        if pending or over:
            line = self._close(pending, over)
            self.problems.unterminated_line = self.n
            return [line]
        return []

    def _keep(self, rest: bytes) -> None:
        cr = rest.endswith(b"\r")
        core = rest[:-1] if cr else rest
        if len(core) > self.max_line:
            self.over += len(core) - self.max_line
            core = core[: self.max_line]
        self.pending = core + b"\r" if cr else core

    def _close(self, raw: bytes, over: int) -> str:
        self.n += 1
        total = len(raw) + over
        if total > self.max_line:
            self.problems.long_lines.append((self.n, total))
            raw = raw[: self.max_line]
        return decode_line(raw, self.n, self.problems)

    def _split(self, body: bytes) -> list[str]:
        """``body`` ends with a line terminator."""
        if b"\r" in body:
            body = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if not self.over:
            try:
                lines = body.decode("utf-8").split("\n")
            except UnicodeDecodeError:
                lines = None
            if lines is not None:
                lines.pop()
                # A line of at most max_line/4 characters has at most max_line bytes.
                if max(map(len, lines), default=0) <= self.max_line // 4 or \
                        max(map(len, body.split(b"\n"))) <= self.max_line:
                    self.n += len(lines)
                    return lines
        raws = body.split(b"\n")
        raws.pop()
        over, self.over = self.over, 0
        out = [self._close(raws[0], over)]
        out.extend(self._close(r, 0) for r in raws[1:])
        return out


class RawBlock(NamedTuple):
    """Whole lines as bytes (``LineSplitter.feed_raw``): each ends with an LF, none holds a CR or is longer than
    the splitter's ``max_line``; ``ends``: the offsets of the LFs."""
    body: bytes
    ends: np.ndarray

    def head(self, n: int) -> "RawBlock":
        """The first ``n`` lines."""
        return RawBlock(self.body[:int(self.ends[n - 1]) + 1], self.ends[:n])

    def decode(self, problems: ReadProblems, max_line: int, first_no: int) -> list[str]:
        """The lines ``line_blocks`` gives for these bytes (the first numbered ``first_no``)."""
        return LineSplitter(problems, max_line, first_no)._split(self.body)


def raw_line_blocks(chunks: Iterable[bytes], problems: ReadProblems, max_line: int,
                    first_no: int = 1) -> Iterator[tuple[int, "list[str] | RawBlock"]]:
    """``line_blocks``, but a block ``LineSplitter.feed_raw`` can give as bytes comes as a ``RawBlock``."""
    sp = LineSplitter(problems, max_line, first_no)
    for chunk in chunks:
        if chunk:
            first = sp.n + 1
            lines = sp.feed_raw(chunk)
            if type(lines) is RawBlock or lines:
                yield first, lines
    first = sp.n + 1
    last = sp.end()
    if last:
        yield first, last


def line_blocks(chunks: Iterable[bytes], problems: ReadProblems, max_line: int,
                first_no: int = 1) -> Iterator[tuple[int, list[str]]]:
    """(number of the block's first line, its lines) for a stream of chunks that ends where the data ends."""
    sp = LineSplitter(problems, max_line, first_no)
    for chunk in chunks:
        if chunk:
            first = sp.n + 1
            lines = sp.feed(chunk)
            if lines:
                yield first, lines
    first = sp.n + 1
    last = sp.end()
    if last:
        yield first, last


def file_chunks(fh: BinaryIO, start: int, block: int | None = None, stop: int | None = None) -> Iterator[bytes]:
    """The bytes from ``start`` (to ``stop``, else to the end), ``block`` at a time."""
    block = block or READ_BLOCK
    fh.seek(start)
    left = -1 if stop is None else stop - start
    while left:
        b = fh.read(block if left < 0 else min(block, left))
        if not b:
            return
        left -= len(b) if left > 0 else 0
        yield b


def gunzip_stream(fh: BinaryIO, size: int, problems: ReadProblems, limit: int | None = None,
                  block: int = 1 << 20) -> Iterator[bytes]:
    """The payload of a gzip file read from ``fh``, a bounded piece at a time (``textio.gunzip_members``: the
    same cases and messages as ``textio.decompressed_chunks`` over the whole file's bytes)."""
    fh.seek(0)
    yield from gunzip_members(lambda: fh.read(block), size, problems, limit, _SMALL * 16)


def line_start_at_or_after(fh: BinaryIO, size: int, x: int) -> int:
    """The first line start at or after byte ``x`` (``size`` when no line starts there)."""
    if x <= 0:
        return 0
    if x >= size:
        return size
    pos = x - 1
    fh.seek(pos)
    while pos < size:
        b = fh.read(_SMALL)
        if not b:
            return size
        i = min((j for j in (b.find(b"\n"), b.find(b"\r")) if j >= 0), default=-1)
        if i < 0:
            pos += len(b)
            continue
        t = pos + i
        if b[i] == 0x0A or t + 1 >= size:
            return t + 1
        nxt = b[i + 1: i + 2] or fh.read(1)
        return t + 2 if nxt == b"\n" else t + 1
    return size


def count_lines(fh: BinaryIO, p: int, q: int, size: int) -> int:
    """How many lines start in [p, q) when p and q are line starts (or q is the end)."""
    n = 0
    prev_cr = False
    last = b""
    fh.seek(p)
    left = q - p
    while left > 0:
        b = fh.read(min(READ_BLOCK, left))
        if not b:
            break
        left -= len(b)
        n += _line_ends(b)
        if prev_cr and b.startswith(b"\n"):
            n -= 1
        prev_cr = b.endswith(b"\r")
        last = b[-1:]
    if q == size and q > p and last not in (b"\n", b"\r"):
        n += 1  # the last line has no terminator
    return n


def _line_ends(b: bytes) -> int:
    """LF, CR and CRLF ends in ``b``. Without a CR (almost every log), only LFs, counted by numpy: planning a
    big file's ranges counts every line of it on the driver before any task starts: with three ``bytes.count``
    passes a block, 1.6 CPU s per GB (reads included); with this, 0.3."""
    if b"\r" in b:
        return b.count(b"\n") + b.count(b"\r") - b.count(b"\r\n")
    return int(np.count_nonzero(np.frombuffer(b, np.uint8) == 10))


def plan_ranges(fh: BinaryIO, size: int, range_bytes: int,
                cuts: Iterable[int] | None = None) -> list[tuple[int, int, int, int]]:
    """Ranges of about ``range_bytes`` (or cut at the byte offsets ``cuts``) as (first byte, end
    byte, number of the first line, lines owned).

    Both ends are line starts; a range in which no line starts is left out (the range before
    it reads on to finish its last entry anyway).
    """
    out = []
    first = 1
    for p, q in byte_ranges(fh, size, range_bytes, cuts):
        n = count_lines(fh, p, q, size)
        if n:
            out.append((p, q, first, n))
            first += n
    return out


def byte_ranges(fh: BinaryIO, size: int, range_bytes: int, cuts: Iterable[int] | None = None) -> list[tuple[int, int]]:
    """``plan_ranges``'s ranges as bytes only, lines not counted: (first byte, end byte), each holding the start of
    at least one line."""
    cuts = range(0, size, max(1, range_bytes)) if cuts is None else [0, *cuts]
    bounds = sorted({line_start_at_or_after(fh, size, x) for x in cuts} | {size})
    return list(zip(bounds, bounds[1:]))


def skip_lines(fh: BinaryIO, p: int, n: int, size: int) -> int:
    """The byte where the line ``n`` lines after the one starting at ``p`` starts (``size`` past the end)."""
    pos = p
    for _ in range(n):
        if pos >= size:
            return size
        pos = line_start_at_or_after(fh, size, pos + 1)
    return pos
