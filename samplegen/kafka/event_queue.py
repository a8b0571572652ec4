"""Simulated time and the queue of what happens next, which both simulated clusters (ZooKeeper mode and KRaft) run
on: scenario steps and timers sit in one queue and run in time order (ties in the order they were scheduled), with
the traffic produced up to each step's instant first, so a run is deterministic for a given seed."""
from __future__ import annotations

import heapq
from typing import Callable


class EventQueue:
    def __init__(self, start_ms: int):
        self.now = start_ms
        self._queue: list = []
        self._qseq = 0

    def produce(self) -> None:
        """The traffic up to ``now`` (a cluster's own)."""

    def schedule(self, ms: int, fn: Callable, *args) -> None:
        self._qseq += 1
        heapq.heappush(self._queue, (ms, self._qseq, fn, args))

    def run_until(self, ms: int) -> None:
        while self._queue and self._queue[0][0] <= ms:
            t, _, fn, args = heapq.heappop(self._queue)
            self.now = max(self.now, t)
            self.produce()
            fn(*args)
        self.now = max(self.now, ms)
        self.produce()
