"""Local files read whole, packed into Spark tasks of even parsing work.

Spark's ``binaryFile`` packs files into partitions by their size on disk (up to 128 MB a
partition): a gzip file counts as its compressed bytes though parsing costs its text, so a
corpus of rotated logs, half of them gzipped, became three tasks on two cores, one of them
holding every gzip file (measured on the real-format corpus: 28 files, 430 MB of text). Here
the driver estimates each local file's text size (a gzip file's own trailer records it), packs
the files into tasks by text (a few per core, largest first, shrinking towards the end so the
cores finish together; Spark's own ``spark.sql.files`` settings bound them), and each task reads
its files itself:
the file bytes no longer cross the JVM and Arrow on their way to the parser. Remote URIs stay
with ``binaryFile``. Every file is parsed by ``parse_source`` exactly as before.
"""
from __future__ import annotations

import os
from typing import Callable, Iterator

from forensics.sources import FileRef
from parsers.common.textio import GZIP_MAGIC

# Without a minimum number of partitions set (spark.sql.files.minPartitionNum), each core gets at
# least this many tasks, so the last tasks to finish are short ones whatever the mix of sizes.
TASKS_PER_CORE = 4
# A task holds at most 1/(TAIL_SHARE * cores) of the work not yet planned (plan_tasks).
TAIL_SHARE = 2


def local_path(ref: FileRef) -> str | None:
    if ref.read_path.startswith("file://"):
        return ref.read_path[len("file://"):]
    return None if "://" in ref.read_path else ref.read_path


def text_size(ref: FileRef) -> int:
    """The bytes the parser will read: a gzip file's ISIZE (its trailer's last 4 bytes, the text size
    modulo 4 GiB), never less than its size on disk; any other file's size."""
    path = local_path(ref)
    if path is None or ref.size < 20:
        return ref.size
    try:
        with open(path, "rb") as fh:
            if fh.read(2) != GZIP_MAGIC:
                return ref.size
            fh.seek(-4, os.SEEK_END)
            return max(ref.size, int.from_bytes(fh.read(4), "little"))
    except OSError:
        return ref.size


def plan_tasks(refs: list[FileRef], min_tasks: int, max_task_bytes: int, open_cost: int = 4 << 20,
               weight: Callable[[FileRef], int] = text_size, slots: int = 1) -> list[list[FileRef]]:
    """Files -> tasks (lists of files), heaviest task first, for ``slots`` cores that take the tasks in order
    (Spark launches a stage's tasks by index as cores free up). A task holds at most Spark's file partition
    size (``spark.sql.files``: at most ``max_task_bytes``, enough for ``min_tasks``, no smaller than
    ``open_cost``), counted in text, not bytes on disk; and at most 1/(TAIL_SHARE * slots) of the work not yet
    planned, no smaller than a quarter of Spark's partition, so the tasks shrink towards the end (guided
    self-scheduling; not when Spark's partitions give no core a second task) and the last ones are single files:
    the cores finish within about one file of each other. With tasks of even size, the last one of an odd
    count ran alone (15 tasks of three 40 MB files on 2 cores: one core idle ~3 s of a 25 s stage). Each task
    is filled largest file first (first fit decreasing)."""
    if not refs:
        return []
    sized = sorted(((weight(r), r.display, r) for r in refs), key=lambda x: (-x[0], x[1]))
    total = sum(w for w, _, _ in sized)
    split = max(1, min(max_task_bytes, max(open_cost, -(-total // max(1, min_tasks)))))
    share = max(1, slots) * TAIL_SHARE
    # Spark's own partitions when they give no core a second task (one task asked for, a small input): no tail
    floor = split if -(-total // split) <= max(1, slots) else max(open_cost, split // TASKS_PER_CORE)
    todo = [(w, ref) for w, _, ref in sized]
    left = total
    tasks: list[tuple[int, list[FileRef]]] = []
    while todo:
        cap = min(split, max(floor, -(-left // share)))
        w, ref = todo[0]
        task, load, rest = [ref], w, []
        for w, ref in todo[1:]:
            if load + w <= cap:
                task.append(ref)
                load += w
            else:
                rest.append((w, ref))
        todo, left = rest, left - load
        tasks.append((load, task))
    return [t for _, t in sorted(tasks, key=lambda x: -x[0])]


def spark_task_sizes(spark) -> tuple[int, int, int]:
    """(min_tasks, max_task_bytes, open_cost) from the session's ``spark.sql.files`` settings."""
    conf = spark._jsparkSession.sessionState().conf()
    min_num = conf.filesMinPartitionNum()
    min_tasks = int(min_num.get()) if min_num.isDefined() else spark.sparkContext.defaultParallelism * TASKS_PER_CORE
    return min_tasks, int(conf.filesMaxPartitionBytes()), int(conf.filesOpenCostInBytes())


def make_task_fn(tasks: list[list[FileRef]],
                 parse_one: Callable[[FileRef, bytes | None, str | None, tuple[int, int]], Iterator]):
    """What Spark runs per task: (batches of task numbers) -> the output batches of ``parse_one(ref, data,
    error, (task, index))`` for each of the task's files, read here from the local filesystem."""

    def run(batches):
        for batch in batches:
            for task in batch.column(0).to_pylist():
                for index, ref in enumerate(tasks[task]):
                    try:
                        with open(local_path(ref), "rb") as fh:
                            data, err = fh.read(), None
                    except OSError as exc:
                        data, err = None, f"cannot read: {exc.strerror or exc}"
                    yield from parse_one(ref, data, err, (task, index))

    return run
