"""A ``__cluster_metadata`` segment read as the quorum appends to it (``kafka-forensics watch``).

Kafka appends whole record batches to the active segment (``FileRecords.append``); a batch is its base offset
(8 bytes), its length (4) and that many bytes. The caller hands the bytes after those read before; the whole
batches among them are read by the whole-file reader (``events.MetadataReader``, which keeps a segment's
offsets, a snapshot's places and the file's byte positions as a whole file's), and a batch still being written
waits for the rest. Topic ids are named by the topic records read so far, as a whole file names them.
"""
from __future__ import annotations

from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.kraft.events import MetadataReader
from parsers.schema import Event


class GrowingMetadataLog:
    def __init__(self, ctx: SourceContext, summary: FileSummary | None = None):
        self.ctx = ctx
        self.summary = summary or FileSummary(path=ctx.path, kind="kraft_metadata", cluster=ctx.cluster)
        self.reader = MetadataReader(ctx, self.summary)
        self.carry = b""
        self.at = 0  # the file position of ``carry``'s first byte
        self.names: dict[str, str] = {}

    def feed(self, data: bytes, quiet: bool = False) -> tuple[list[Event], list[str]]:
        buf = self.carry + data
        used = len(buf) if quiet else _whole_batches(buf)
        errors_before = len(self.summary.errors)
        events = self.reader.read(buf[:used], self.at) if used else []
        self.carry = buf[used:]
        self.at += used
        for ev in events:
            if ev.event_type == "topic_record" and ev.detail and ev.topic:
                self.names[ev.detail["topic_id"]] = ev.topic
        for ev in events:
            if ev.topic is None and ev.detail and ev.event_type in ("partition_record", "partition_change",
                                                                   "topic_removed"):
                ev.topic = self.names.get(ev.detail.get("topic_id"))
        for ev in events:
            self.summary.see_ts(ev.ts)
            self.summary.event_counts[ev.event_type] += 1
        self.summary.events += len(events)
        return events, self.summary.errors[errors_before:]


def _whole_batches(buf: bytes) -> int:
    pos, n = 0, len(buf)
    while pos + 12 <= n:
        length = int.from_bytes(buf[pos + 8:pos + 12], "big", signed=True)
        if length <= 0 or pos + 12 + length > n:
            break
        pos += 12 + length
    return pos
