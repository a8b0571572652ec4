"""Bytes of a (possibly gzip-compressed, possibly damaged) text file -> lines.

Evidence arrives damaged: gzip cut short by a full disk, trailing garbage after
the gzip stream, CRLF from a Windows box, Latin-1 host names, binary junk.
Everything that can be read is read; every problem is reported with its
position, never raised.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable, Iterator

GZIP_MAGIC = b"\x1f\x8b"

try:  # whole_lines' survey of a payload in C (setup.py builds it; without it, the same in Python)
    from parsers.common import _lines
except ImportError:  # pragma: no cover - a machine without a C compiler
    _lines = None
# Off: whole_lines surveys the payload in Python (the equivalence test compares the two).
COMPILED = True
# Decompress in bounded steps so a decompression bomb cannot eat the worker.
_CHUNK = 1 << 20


@dataclass
class ReadProblems:
    """Problems met while turning bytes into lines (file-level, with positions)."""

    errors: list[str] = field(default_factory=list)
    non_utf8_lines: int = 0
    first_non_utf8_line: int | None = None
    unterminated_line: int | None = None  # the last line, when the data ends inside it
    long_lines: list[tuple[int, int]] = field(default_factory=list)  # (line number, full length) of cut lines
    # The numbers of the non-UTF-8 lines, when a reader of part of a file must tell its own from
    # the lines it decoded around them (None: only the count and the first are kept).
    bad_lines: list[int] | None = None


def decompressed_chunks(data: bytes, problems: ReadProblems, limit: int | None = None) -> Iterator[bytes]:
    """Yield the payload of ``data``: gunzipped if it is gzip, else as is.

    Handles concatenated gzip members, a truncated last member (keeps what was
    decompressed) and non-gzip trailing bytes (reported, ignored).
    """
    if not data.startswith(GZIP_MAGIC):
        yield data
        return
    given = [data]
    yield from gunzip_members(lambda: given.pop() if given else b"", len(data), problems, limit, _CHUNK)


def gunzip_members(read: Callable[[], bytes], size: int, problems: ReadProblems, limit: int | None,
                   step: int) -> Iterator[bytes]:
    """The payload of gzip data of ``size`` bytes that ``read()`` hands out a piece at a time (b"" at its end),
    ``step`` decompressed bytes at most at a time: concatenated members, a last member cut short (what was
    decompressed is kept), zero padding, trailing garbage (reported, ignored), a corrupt stream (reported near
    its byte)."""
    off = 0  # compressed offset of buf[0]
    buf = b""
    eof = False
    produced = 0

    def fill() -> None:
        nonlocal buf, eof
        if not eof:
            more = read()
            if more:
                buf += more
            else:
                eof = True

    while True:
        while len(buf) < 2 and not eof:
            fill()
        if not buf:
            return
        if not buf.startswith(GZIP_MAGIC):
            zeros = buf.strip(b"\x00") == b""
            while zeros and not eof:
                buf = b""
                fill()
                zeros = buf.strip(b"\x00") == b""
            if not zeros:
                problems.errors.append(f"trailing garbage after gzip data at byte {off} ({size - off} bytes ignored)")
            return
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            while True:
                if not buf:
                    fill()
                    if not buf:
                        break
                out = d.decompress(buf, step)
                if d.eof:
                    off += len(buf) - len(d.unused_data)
                    buf = d.unused_data
                else:
                    off += len(buf) - len(d.unconsumed_tail)
                    buf = d.unconsumed_tail
                if out:
                    produced += len(out)
                    if limit is not None and produced > limit:
                        problems.errors.append(f"decompressed size exceeds the limit of {limit} bytes; rest ignored")
                        return
                    yield out
                if d.eof:
                    break
            if not d.eof:
                tail = d.flush()
                if tail:
                    produced += len(tail)
                    yield tail
        except zlib.error as exc:
            problems.errors.append(f"corrupt gzip data near byte {off}: {exc}; rest ignored")
            return
        if not d.eof:
            problems.errors.append(f"gzip stream truncated at compressed byte {size}, after {produced} "
                                   "decompressed bytes; kept what was readable")
            return


def head_bytes(data: bytes, n: int = 65536) -> tuple[bytes, list[str]]:
    """First ``n`` bytes of the payload (gunzipped when gzip)."""
    problems = ReadProblems()
    out = bytearray()
    for chunk in decompressed_chunks(data[: max(n * 4, 1 << 20)] if data.startswith(GZIP_MAGIC) else data[:n], problems):
        out += chunk
        if len(out) >= n:
            break
    return bytes(out[:n]), problems.errors


def iter_raw_lines(
    data: bytes, problems: ReadProblems, limit: int | None = None, max_line: int | None = None
) -> Iterator[bytes]:
    """Physical lines as bytes, CR/LF/CRLF all accepted, no terminators.

    A final line without a newline (a log cut mid-line) is still a line; its
    number is kept in ``problems.unterminated_line``. With ``max_line``, a
    longer line keeps only its first ``max_line`` bytes (its number and full
    length go to ``problems.long_lines``): the rest is counted, never held, so
    a gigabyte without a newline (a decompression bomb) costs neither memory
    nor quadratic copying.
    """
    pending = bytearray()
    over = 0  # bytes of the pending line beyond max_line: counted, not kept
    n = 0
    cr = False  # the previous chunk ended in CR: the first half of a CRLF, or a lone CR

    def close(tail: bytes) -> bytes:
        nonlocal pending, over
        total = len(pending) + over + len(tail)
        if pending:
            pending += tail
            line = bytes(pending)
        else:
            line = tail
        pending, over = bytearray(), 0
        if max_line is not None and total > max_line:
            problems.long_lines.append((n, total))
            return line[:max_line]
        return line

    for chunk in decompressed_chunks(data, problems, limit):
        if not chunk:
            continue
        if cr:
            chunk = b"\r" + chunk
        cr = chunk.endswith(b"\r")
        if cr:
            chunk = chunk[:-1]
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        parts = chunk.split(b"\n")
        last = parts.pop()
        for part in parts:
            n += 1
            yield close(part)
        room = len(last) if max_line is None else max(0, min(len(last), max_line - len(pending)))
        pending += last[:room]
        over += len(last) - room
    if cr:
        n += 1
        yield close(b"")
    elif pending or over:
        n += 1
        problems.unterminated_line = n
        yield close(b"")


def decode_line(raw: bytes, line_no: int, problems: ReadProblems) -> str:
    """UTF-8, falling back to Latin-1 (which never fails) for the odd line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        problems.non_utf8_lines += 1
        if problems.first_non_utf8_line is None:
            problems.first_non_utf8_line = line_no
        if problems.bad_lines is not None:
            problems.bad_lines.append(line_no)
        return raw.decode("latin-1")


def looks_binary(line: str) -> bool:
    """A line of a text log should not hold NULs or many control characters."""
    if "\x00" in line:
        return True
    ctrl = sum(1 for c in line[:512] if c < " " and c not in "\t")
    return ctrl > 8


# Payloads up to this size may be held whole (decoded text, list of lines): an hourly
# rotation is far below it; beyond it the streaming reader keeps memory bounded.
WHOLE_MAX_BYTES = 128 << 20


# Control characters other than tab and LF (CR never gets this far).
_CTRL_BYTES = bytes([*range(0, 9), *range(11, 32)])


def whole_lines(data: bytes, problems: ReadProblems, max_line: int) -> tuple[list[str], bool] | None:
    """The payload's lines in one go, and whether any control character other than tab is in
    them, when it is the common case: valid UTF-8, LF only, no line over ``max_line``, at most
    ``WHOLE_MAX_BYTES``. None otherwise, with ``problems`` untouched: the caller then reads
    through ``iter_raw_lines``, which handles the rest.

    Same lines, numbering and ``unterminated_line`` as ``iter_raw_lines`` + ``decode_line``
    give for such a payload, at a fraction of the per-line cost.
    """
    if data.startswith(GZIP_MAGIC):
        mine = ReadProblems()
        chunks = list(decompressed_chunks(data, mine, WHOLE_MAX_BYTES))
        if mine.errors:
            return None  # damaged gzip: the streaming reader reports it where it happens
        payload = b"".join(chunks)
    else:
        if len(data) > WHOLE_MAX_BYTES:
            return None
        payload = data
    if _lines is not None and COMPILED:
        has_cr, has_ctrl, longest = _lines.survey(payload)
    else:
        has_cr, has_ctrl, longest = b"\r" in payload, None, None
    if has_cr:
        return None
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if longest is not None and longest > max_line:
        problems.unterminated_line = None  # max_line counts bytes, as iter_raw_lines does
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    elif lines:
        problems.unterminated_line = len(lines)
    if longest is None:
        # A line of n characters holds at most 4n bytes: the bytes are split only when some line may be too long.
        if len(payload) > max_line and max(map(len, lines), default=0) * 4 > max_line and \
                max(map(len, payload.split(b"\n"))) > max_line:
            problems.unterminated_line = None
            return None
        has_ctrl = len(payload.translate(None, _CTRL_BYTES)) != len(payload)
    return lines, has_ctrl
