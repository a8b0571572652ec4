"""A part of the KRaft replay (its topics, records, steps, brokers' lines; a what-if side's own decisions): the replay,
weakly, and the owners of the state every part reads, at hand."""
from __future__ import annotations

from typing import Any

from replay_engine.common.part import Part


class KraftPart(Part):
    def __init__(self, replay: Any):
        # the KraftReplay this part belongs to, what the parts share; a weak reference, so that a replay with its parts
        # is freed by reference counting, no cycle left for the collector
        self.belong_to(replay)
        self.store = replay.store
        self.parts = replay.parts
        self.brokers = replay.brokers
        self.ledger = replay.ledger
