"""Keep the import-cache reset that PySpark's Python workers make before every task cheap.

A reused worker starts each task with ``importlib.invalidate_caches()`` (pyspark 4.0.1,
``worker_util.setup_spark_files``), so that a file added by ``addPyFile`` becomes importable. On CPython
3.10 and 3.11 every ``zipimporter`` then reads its archive's whole directory again at once (cpython
gh-103200; 3.12 defers the read to the archive's next use), and the workers import pyspark and py4j
from zips: ~0.12 CPU s a task before any of our code runs (64 empty tasks took 7.9 s of wall for 3.2 s
of their own work; benchmarks/journal/ingest.md, 2026-11-29). Here an archive is read again only when
the file changed, which is all the reset is for.
"""
from __future__ import annotations

import os
import sys
import zipimport
from collections.abc import Callable, Iterator

_REREAD = getattr(zipimport.zipimporter, "invalidate_caches", None)
_STAMP = "_kafka_forensics_stamp"


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _reread_if_changed(self) -> None:
    stamp = _stamp(self.archive)
    if stamp is not None and getattr(self, _STAMP, None) == stamp:
        return
    _REREAD(self)
    setattr(self, _STAMP, stamp)


def needed() -> bool:
    """Whether this interpreter reads a zip archive's directory on every cache reset."""
    return _REREAD is not None and sys.version_info < (3, 12)


def install() -> None:
    """Make this process's zip importers re-read an archive on a cache reset only if it changed."""
    if needed() and zipimport.zipimporter.invalidate_caches is not _reread_if_changed:
        zipimport.zipimporter.invalidate_caches = _reread_if_changed


def in_workers(fn: Callable[[Iterator], Iterator]) -> Callable[[Iterator], Iterator]:
    """``fn``, a ``mapInArrow`` function, with ``install`` run first in the worker that runs it; the worker's
    later tasks are then spared the re-reads (the first one has made its reset before any function runs)."""

    def run(batches: Iterator) -> Iterator:
        install()
        return fn(batches)

    return run
