"""What a parser is told about the file it reads (nothing here touches files)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceContext:
    path: str  # as shown to the user and stored in source_file
    cluster: str | None = None
    broker_hint: int | None = None  # from the folder name or --broker-map
    tz: str = "UTC"  # zone of log4j timestamps (they carry none)
    # --broker-map GLOB=ID pairs, for names inside a file (a compose service, a pod) rather than its path
    broker_map: tuple[tuple[str, int], ...] = ()
    # The reader may hand on EventRuns (parsers.schema) for runs of events from one line: its caller writes
    # them as columns. Off, every event is an Event of its own.
    event_runs: bool = False
