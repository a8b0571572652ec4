"""Watch one long command (the large audit) on a shared machine: CPU seconds of its whole process tree,
peak memory of the driver, the JVM and Spark's Python workers, and the load average around it.

    nice -n 19 .venv/bin/python benchmarks/audit_watch.py --json W.json -- \\
        /usr/bin/time -v .venv/bin/python -m forensics audit TREE --out OUT --master 'local[2]'

Why a watcher beside ``/usr/bin/time -v``: time counts the CPU of the descendants that were waited
for, and the JVM's or a Python worker's exit may not be; here every descendant seen is sampled each
second (utime + stime from /proc, the last value seen counts), so the two totals check each other.
Peaks come from ``bigfile_bench.Sampler`` (driver RSS, JVM RSS and ``jstat`` heap, workers' RSS),
rooted at the ``forensics`` driver process below ``time``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Periodic, _children, cmdline, now_utc, self_cpu  # noqa: E402
from bigfile_bench import Sampler  # noqa: E402


class TreeCpu(Periodic):
    """Last-seen own CPU seconds of every descendant of ``root`` (so exited ones keep theirs)."""

    def __init__(self, root: int):
        super().__init__()
        self.root = root
        self.seen: dict[tuple[int, str], float] = {}
        self.kinds: dict[tuple[int, str], str] = {}
        self.driver: int | None = None

    def _kind(self, cmd: list[str]) -> str:
        text = " ".join(cmd)
        if "SparkSubmit" in text or "deploy.worker" in text or "CoarseGrainedExecutorBackend" in text:
            return "jvm"
        if "pyspark.daemon" in text:
            return "python_workers"
        if "forensics" in text:
            return "driver"
        return "other"

    def sample(self) -> None:
        kids = _children()
        todo = [self.root]
        while todo:
            pid = todo.pop()
            cpu = self_cpu(pid)
            if cpu is not None:
                cmd = cmdline(pid)
                key = (pid, cmd[0] if cmd else "")
                self.seen[key] = max(self.seen.get(key, 0.0), cpu)
                kind = self.kinds.setdefault(key, self._kind(cmd))
                if kind == "driver" and self.driver is None and "python" in key[1]:
                    self.driver = pid
            todo.extend(kids.get(pid, ()))

    def by_kind(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for key, cpu in self.seen.items():
            out[self.kinds[key]] = out.get(self.kinds[key], 0.0) + cpu
        return {k: round(v, 1) for k, v in sorted(out.items())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True, help="where to write the figures")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- the command")
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    started, load0 = now_utc(), os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    sampler = None
    with TreeCpu(proc.pid) as tree:
        while proc.poll() is None:
            if sampler is None and tree.driver is not None:
                sampler = Sampler(tree.driver).__enter__()
            time.sleep(0.5)
    if sampler is not None:
        sampler.__exit__(None, None, None)
    wall = time.perf_counter() - t0
    by_kind = tree.by_kind()
    figures = {"started": started, "ended": now_utc(), "rc": proc.returncode, "wall_s": round(wall, 1),
               "load_start": [round(x, 2) for x in load0], "load_end": [round(x, 2) for x in os.getloadavg()],
               "cpu_s_sampled": round(sum(by_kind.values()), 1), "cpu_s_by_kind": by_kind,
               "peaks_mb": {k: round(v, 1) for k, v in (sampler.peak if sampler else {}).items()}, "cmd": cmd}
    Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures, indent=1), file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
