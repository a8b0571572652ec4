"""The ``__cluster_metadata`` log the quorum controller writes: batches with offsets, as bytes.

One controller write (a topic creation, a fencing with its partition changes) is one batch,
appended atomically with the append time as its timestamp, as ``QuorumController`` does; the
offsets are what broker epochs and "next write offset" lines refer to. Bytes come from
:mod:`samplegen.kafka.kraft_encode`, the writer that matches Kafka's format.
"""
from __future__ import annotations

from typing import Any

from samplegen.kafka.kraft_encode import MetadataBatch, encode_log, leader_change

Record = tuple[str, int, dict[str, Any]]  # (record name, version, fields)


class MetadataLog:
    def __init__(self) -> None:
        self.batches: list[MetadataBatch] = []
        self.next_offset = 0
        self.epoch = 0

    def leader_change(self, ms: int, epoch: int, leader: int, voters: list[int]) -> int:
        self.epoch = epoch
        return self._add(leader_change(epoch, ms, leader, voters), 1)

    def append(self, ms: int, records: list[Record]) -> int:
        """Appends one batch; returns the offset of its first record."""
        if not records:
            raise ValueError("an empty batch is never written")
        return self._add(MetadataBatch(self.epoch, ms, list(records)), len(records))

    def _add(self, batch: MetadataBatch, n: int) -> int:
        if self.batches and batch.timestamp < self.batches[-1].timestamp:
            raise ValueError("the metadata log is appended in time order")
        base = self.next_offset
        self.batches.append(batch)
        self.next_offset += n
        return base

    def to_bytes(self) -> bytes:
        return encode_log(self.batches)
