"""Jute, ZooKeeper's serialisation: big-endian primitives read from a byte buffer.

Every read is bounds-checked and raises :class:`JuteError` with the absolute
byte offset, so a damaged file produces a message that points at the damage
instead of an IndexError or a 2 GiB allocation from a corrupt length prefix.
"""
from __future__ import annotations

import struct
from typing import Callable, TypeVar

T = TypeVar("T")

_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")


class JuteError(ValueError):
    """The bytes do not hold what the layout says (truncated, or a length that cannot be)."""

    def __init__(self, offset: int, message: str):
        super().__init__(f"{message} at byte {offset}")
        self.offset = offset
        self.reason = message


class Reader:
    """A cursor over ``buf[start:end]``; offsets reported are absolute (``base`` + position)."""

    __slots__ = ("buf", "pos", "end", "base")

    def __init__(self, buf: bytes | memoryview, start: int = 0, end: int | None = None, base: int = 0):
        self.buf = buf
        self.pos = start
        self.end = len(buf) if end is None else end
        self.base = base

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def remaining(self) -> int:
        return self.end - self.pos

    def _need(self, n: int, what: str) -> None:
        if n > self.end - self.pos:
            raise JuteError(self.offset, f"{what}: needs {n} bytes, only {self.end - self.pos} left")

    def read_bool(self, what: str = "boolean") -> bool:
        self._need(1, what)
        b = self.buf[self.pos]
        self.pos += 1
        return b != 0

    def read_byte(self, what: str = "byte") -> int:
        self._need(1, what)
        b = self.buf[self.pos]
        self.pos += 1
        return b - 256 if b > 127 else b

    def read_int(self, what: str = "int") -> int:
        self._need(4, what)
        (v,) = _INT.unpack_from(self.buf, self.pos)
        self.pos += 4
        return v

    def read_long(self, what: str = "long") -> int:
        self._need(8, what)
        (v,) = _LONG.unpack_from(self.buf, self.pos)
        self.pos += 8
        return v

    def read_buffer(self, what: str = "buffer") -> bytes | None:
        """Length-prefixed bytes; length -1 is a null buffer (None), which Kafka uses for empty znodes."""
        at = self.offset
        n = self.read_int(what + " length")
        if n == -1:
            return None
        if n < -1:
            raise JuteError(at, f"{what}: negative length {n}")
        self._need(n, what)
        v = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return v

    def read_ustring(self, what: str = "string") -> str | None:
        raw = self.read_buffer(what)
        if raw is None:
            return None
        # Java's DataInput accepts any bytes; a lossless fallback keeps odd paths visible.
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("utf-8", "replace")

    def read_vector(self, item: Callable[["Reader"], T], what: str = "vector", min_item_bytes: int = 1) -> list[T] | None:
        at = self.offset
        n = self.read_int(what + " count")
        if n == -1:
            return None
        if n < -1:
            raise JuteError(at, f"{what}: negative count {n}")
        # A corrupt count must not make us loop billions of times.
        if n * min_item_bytes > self.remaining():
            raise JuteError(at, f"{what}: count {n} cannot fit in the {self.remaining()} bytes left")
        return [item(self) for _ in range(n)]


def read_acl(r: Reader) -> dict:
    perms = r.read_int("acl perms")
    scheme = r.read_ustring("acl scheme")
    ident = r.read_ustring("acl id")
    return {"perms": perms, "scheme": scheme, "id": ident}


def read_acl_list(r: Reader) -> list[dict] | None:
    return r.read_vector(read_acl, "acl list", min_item_bytes=12)


def hex_id(v: int) -> str:
    """ZooKeeper prints ids as Long.toHexString: two's complement for negatives."""
    return "0x" + format(v & 0xFFFFFFFFFFFFFFFF, "x")
