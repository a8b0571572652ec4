"""Bytes of a (possibly gzip-compressed, possibly damaged) text file -> lines.

Evidence arrives damaged: gzip cut short by a full disk, trailing garbage after
the gzip stream, CRLF from a Windows box, Latin-1 host names, binary junk.
Everything that can be read is read; every problem is reported with its
position, never raised.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Iterator

GZIP_MAGIC = b"\x1f\x8b"
# Decompress in bounded steps so a decompression bomb cannot eat the worker.
_CHUNK = 1 << 20


@dataclass
class ReadProblems:
    """Problems met while turning bytes into lines (file-level, with positions)."""

    errors: list[str] = field(default_factory=list)
    non_utf8_lines: int = 0
    first_non_utf8_line: int | None = None


def decompressed_chunks(data: bytes, problems: ReadProblems, limit: int | None = None) -> Iterator[bytes]:
    """Yield the payload of ``data``: gunzipped if it is gzip, else as is.

    Handles concatenated gzip members, a truncated last member (keeps what was
    decompressed) and non-gzip trailing bytes (reported, ignored).
    """
    if not data.startswith(GZIP_MAGIC):
        yield data
        return
    pos = 0
    produced = 0
    while pos < len(data):
        if not data.startswith(GZIP_MAGIC, pos):
            problems.errors.append(f"trailing garbage after gzip data at byte {pos} ({len(data) - pos} bytes ignored)")
            return
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        view = memoryview(data)[pos:]
        try:
            while True:
                out = d.decompress(view, _CHUNK)
                view = d.unconsumed_tail
                if out:
                    produced += len(out)
                    if limit is not None and produced > limit:
                        problems.errors.append(f"decompressed size exceeds the limit of {limit} bytes; rest ignored")
                        return
                    yield out
                if d.eof or not view:
                    break
        except zlib.error as exc:
            problems.errors.append(f"corrupt gzip data near byte {pos + (len(data) - pos - len(view))}: {exc}; rest ignored")
            return
        if not d.eof:
            tail = d.flush()
            if tail:
                yield tail
            problems.errors.append(f"gzip stream truncated (compressed size {len(data)} bytes); kept what was readable")
            return
        consumed = len(data) - pos - len(d.unused_data)
        pos += consumed
        if not d.unused_data:
            return
        # Runs of zero bytes after a member are padding some tools add.
        rest = d.unused_data
        if rest.strip(b"\x00") == b"":
            return


def iter_raw_lines(data: bytes, problems: ReadProblems, limit: int | None = None) -> Iterator[bytes]:
    """Physical lines as bytes, CR/LF/CRLF all accepted, no terminators.

    A final line without a newline (a log cut mid-line) is still a line.
    """
    pending = b""
    for chunk in decompressed_chunks(data, problems, limit):
        buf = pending + chunk if pending else chunk
        # A CR at the very end may be the first half of a CRLF split across chunks: hold it back.
        hold = b""
        if buf.endswith(b"\r"):
            buf, hold = buf[:-1], b"\r"
        if b"\r" in buf:
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        parts = buf.split(b"\n")
        pending = parts.pop() + hold
        yield from parts
    if pending:
        yield pending[:-1] if pending.endswith(b"\r") else pending


def decode_line(raw: bytes, line_no: int, problems: ReadProblems) -> str:
    """UTF-8, falling back to Latin-1 (which never fails) for the odd line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        problems.non_utf8_lines += 1
        if problems.first_non_utf8_line is None:
            problems.first_non_utf8_line = line_no
        return raw.decode("latin-1")


def looks_binary(line: str) -> bool:
    """A line of a text log should not hold NULs or many control characters."""
    if "\x00" in line:
        return True
    ctrl = sum(1 for c in line[:512] if c < " " and c not in "\t")
    return ctrl > 8
