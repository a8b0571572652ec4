"""Progress lines on stderr for long work (files read, Spark stages), quiet when asked."""
from __future__ import annotations

import sys
import threading
import time


class Progress:
    def __init__(self, enabled: bool = True, stream=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.t0 = time.monotonic()

    def say(self, msg: str) -> None:
        if self.enabled:
            print(f"[{time.monotonic() - self.t0:6.1f}s] {msg}", file=self.stream, flush=True)

    def watch_spark(self, spark, label: str, interval: float = 3.0) -> "_StageWatcher":
        return _StageWatcher(self, spark, label, interval)


class _StageWatcher:
    """Prints active Spark stage progress every few seconds while a block runs."""

    def __init__(self, progress: Progress, spark, label: str, interval: float):
        self.progress, self.spark, self.label, self.interval = progress, spark, label, interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self):
        if self.progress.enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)

    def _run(self) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        last = None
        while not self._stop.wait(self.interval):
            try:
                parts = []
                for sid in sorted(tracker.getActiveStageIds()):
                    info = tracker.getStageInfo(sid)
                    if info is not None:
                        parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks")
                line = ", ".join(parts)
            except Exception:  # noqa: BLE001 - progress must never break the run
                return
            if line and line != last:
                self.progress.say(f"{self.label}: {line}")
                last = line
