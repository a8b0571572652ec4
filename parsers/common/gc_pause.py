"""Python's cyclic garbage collector held off around a block that allocates millions of objects and
makes no garbage cycles: parsing a file, replaying a cluster, building a dashboard page.

The collector's full passes over those live objects found nothing and cost a large share of each
(measured: ~15% of a file's parse, ~40% of a replay, half a page build at 50,000 partitions).
Reference counting still frees what is dropped; the collector runs again after the block, and only
if it ran before it.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from collections.abc import Iterator


@contextmanager
def cycle_gc_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
