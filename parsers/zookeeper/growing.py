"""A ZooKeeper transaction log read as the server writes it (``kafka-forensics watch``).

ZooKeeper preallocates a log file (64 MiB by default, zero-filled) and writes each entry in place after the one
before (``FileTxnLog.append``): the file does not grow, its zeros are overwritten. The caller hands the bytes up to
the last non-zero byte (an entry ends with its end-of-record byte ``B``, never with a zero) from where it read
last; the entries are read by the whole-file reader (``txnlog.read_txnlog``, behind the file's own 16-byte
header) and turned into events by the same loop (``events.txnlog_events``), with what the entries before them
showed (``FileState``: the owners of Kafka ephemerals). An entry being written (its length runs past the bytes
given) waits for the rest. Offsets are the file's, as a whole file's are.
"""
from __future__ import annotations

from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.schema import Event
from parsers.zookeeper.events import FileState, span_event, txnlog_events
from parsers.zookeeper.txnlog import HEADER_BYTES, Damage, Txn, read_txnlog


class GrowingTxnLog:
    def __init__(self, ctx: SourceContext, summary: FileSummary | None = None):
        self.ctx = ctx
        self.summary = summary or FileSummary(path=ctx.path, kind="zk_txnlog", cluster=ctx.cluster)
        self.header = b""
        self.carry = b""  # bytes read from ``at`` on, not yet an entry
        self.at = 0
        self.state = FileState()
        self.first: Txn | None = None
        self.last: Txn | None = None
        self.entries = 0

    def feed(self, data: bytes, quiet: bool = False) -> tuple[list[Event], list[str]]:
        """The next bytes of the file (contiguous with those before). Returns the events of the entries now whole,
        and what was found damaged."""
        buf = self.carry + data
        if len(self.header) < HEADER_BYTES:
            need = HEADER_BYTES - len(self.header)
            self.header += buf[:need]
            buf = buf[need:]
            self.at = len(self.header)
            if len(self.header) < HEADER_BYTES:
                self.carry = b""
                return [], []
        used = len(buf) if quiet else _whole_entries(buf)
        log = read_txnlog(self.header + buf[:used])
        if log.end_reason == "zero_length_record":  # zeros after the last entry: the next one goes there
            used = min(used, max(0, log.end_offset - HEADER_BYTES))
        shift = self.at - HEADER_BYTES
        records = log.records
        for rec in records:
            rec.offset += shift
            if isinstance(rec, Damage):
                rec.end += shift
        part = FileSummary(path=self.ctx.path, kind="zk_txnlog", cluster=self.ctx.cluster)
        events = txnlog_events(records, self.ctx, part, self.state)
        for rec in records:
            if isinstance(rec, Txn) and rec.problem is None:
                self.first = self.first or rec
                self.last = rec
                self.entries += 1
        if self.first is not None and any(isinstance(r, Txn) for r in records):
            # the file's span so far (it replaces the one stated before: same place, same sub-position)
            events.append(span_event(self.first, self.last, self.entries, self.ctx))
        self.carry = buf[used:]
        self.at += used
        self.summary.absorb_counts(part)
        for q in part.samples:
            self.summary.sample(q)
        for ev in events:
            self.summary.see_ts(ev.ts)
            self.summary.event_counts[ev.event_type] += 1
        self.summary.events += len(events)
        return events, list(part.errors)


def _whole_entries(buf: bytes) -> int:
    """How many bytes of ``buf`` (from an entry's start) are whole entries: each is its checksum (8 bytes), its
    length (4), that many bytes and the end-of-record byte ``B``. What follows is being written (or damaged: read
    once the file is quiet)."""
    pos, n = 0, len(buf)
    while pos + 12 <= n:
        length = int.from_bytes(buf[pos + 8:pos + 12], "big", signed=True)
        end = pos + 12 + length
        if length <= 0 or end >= n or buf[end] != 0x42:
            break
        pos = end + 1
    return pos
