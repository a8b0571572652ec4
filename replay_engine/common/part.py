"""A part of a replay (the ZooKeeper controller's handlers, the KRaft replay's brokers, topics, records, steps, lines)
and the replay it belongs to.

A part refers to its replay weakly, so that a replay with its parts is freed by reference counting, with no cycle
left for the collector; and it is pickled with its replay (``watch`` keeps a replay pickled between batches and
across a restart, ``replay_engine.live``): a weak reference does not pickle, the replay itself does, and pickle
keeps it one object.
"""
from __future__ import annotations

import weakref
from typing import Any


class Part:
    OWNER = "r"  # the attribute naming the replay (the ZooKeeper handlers call it c, their ControllerContext)

    def belong_to(self, replay: Any) -> None:
        self.__dict__[self.OWNER] = weakref.proxy(replay)
        self._owner = weakref.ref(replay)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state[self.OWNER] = self._owner()
        del state["_owner"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.belong_to(state[self.OWNER])
