"""The txn log file: ``log.<hex zxid>`` in ``version-2/`` (FileTxnLog's layout).

``FileHeader{magic 'ZKLG', version 2, dbid 0}`` then per txn ``long adler32,
int len, byte[len] entry, 'B'``, and zeros up to the preallocated size. The
file grows the way ZooKeeper's FilePadding grows it: whenever a write would
come within 4 KiB of the current size, by one more ``prealloc`` step.
"""
from __future__ import annotations

import zlib

from samplegen.zk import jute

MAGIC = 0x5A4B4C47  # "ZKLG"
HEADER = jute.int32(MAGIC) + jute.int32(2) + jute.int64(0)


def log_name(first_zxid: int) -> str:
    return f"log.{first_zxid:x}"


class TxnLogFile:
    """Accumulates txn entries of one log file; :meth:`to_bytes` gives the file."""

    def __init__(self, prealloc: int = 64 * 1024):
        self.prealloc = prealloc
        self.body = bytearray(HEADER)
        # ZooKeeper records the size after the header, then pads before each append.
        self.size = len(self.body)
        self.first_zxid: int | None = None
        self.count = 0

    def _pad(self) -> None:
        pos = len(self.body)
        if self.prealloc > 0 and pos + 4096 >= self.size:
            if pos > self.size:
                self.size = pos + self.prealloc
                self.size -= self.size % self.prealloc
            else:
                self.size += self.prealloc

    def append(self, zxid: int, entry: bytes) -> None:
        if self.first_zxid is None:
            self.first_zxid = zxid
        self._pad()
        # The checksum covers the entry only, not the length prefix nor the 'B' marker.
        self.body += jute.int64(zlib.adler32(entry)) + jute.int32(len(entry)) + entry + b"B"
        self.count += 1

    @property
    def name(self) -> str:
        return log_name(self.first_zxid or 0)

    def to_bytes(self) -> bytes:
        size = max(self.size, len(self.body))
        return bytes(self.body) + bytes(size - len(self.body))
