"""Shared by the ingest, replay, scaling and postmortem benchmarks: corpus generation, CPU and
memory accounting, the machine's load, and the journal sections behind RESULTS.md.

Measurements on a shared machine: wall times move with the other jobs' load, so every benchmark
also reports CPU seconds (of the whole process tree: the driver, the JVM, Spark's Python workers,
or grep's pipeline), which do not.
"""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
# a Spark standalone cluster on 127.0.0.1 (the launcher the tests use) and CPU pinning of a child process
from forensics.audit.local_cluster import Standalone, on_cpus  # noqa: E402,F401
RESULTS = REPO / "benchmarks" / "RESULTS.md"
_TICK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- machine

def load_avg() -> float:
    return os.getloadavg()[0]


def machine() -> str:
    return f"{os.cpu_count()} cores, load average {load_avg():.1f}"


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    return kids


def process_tree() -> Iterator[tuple[int, str, list[str]]]:
    """This process and its descendants, each as (pid, kind, the fields of its /proc stat after the name): kind
    "driver" for this process, "jvm" for a java one, "python workers" for the rest (Spark's). The CPU accounting of
    the ingest's benchmarks (ingest_bench.cpu_by_process, ingest_profile.CpuTracker)."""
    kids, todo = _children(), [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                exe = fh.read().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        yield pid, "driver" if pid == os.getpid() else "jvm" if exe.endswith("java") else "python workers", f
        todo.extend(kids.get(pid, ()))


def tree_cpu(root: int | None = None) -> float:
    """CPU seconds (user + system) of a process and all its descendants, the reaped ones included
    (through their parents' cutime/cstime). Deltas of this around a step give its CPU cost, whoever did
    the work: the driver, the JVM, Spark's Python workers."""
    root = os.getpid() if root is None else root
    kids = _children()
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
            total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
        except (OSError, IndexError, ValueError):
            pass
        todo.extend(kids.get(pid, ()))
    return total / _TICK


def host_cpu() -> tuple[float, float]:
    """The CPU seconds this machine's processes ran (all of them, all CPUs), and those a hypervisor gave other
    guests (steal), from /proc/stat. Around a step, the first minus the step's own ``tree_cpu`` is what the rest
    of the machine ran meanwhile; steal is time the machine's CPUs were not its own at all."""
    try:
        with open("/proc/stat") as fh:
            f = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return 0.0, 0.0
    # user nice system idle iowait irq softirq steal [guest guest_nice: already in user and nice]
    steal = f[7] if len(f) > 7 else 0
    return (f[0] + f[1] + f[2] + f[5] + f[6]) / _TICK, steal / _TICK


def become_subreaper() -> None:
    """Orphaned descendants (the JVM a finished ``kafka-forensics`` process leaves to exit on its own) are
    re-parented to this process instead of init, so ``reap()`` can collect them and their CPU time counts."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def reap(timeout: float = 20.0) -> None:
    """Wait for re-parented orphans to exit (see ``become_subreaper``)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def vm_hwm_mb() -> float:
    """Peak resident memory of this (driver) Python process, MB (VmHWM: over its whole life)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def self_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of one process itself, its reaped children not included."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return None


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().decode(errors="replace").split("\0")
    except OSError:
        return []


class Periodic:
    """``sample()`` every ``interval`` seconds on a daemon thread, from ``with`` to its end (and once more
    at each end, so a short step still has a figure)."""

    interval = 1.0

    def __init__(self):
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self):
        self.sample()
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(timeout=3)
        self.sample()


class JvmHeapPeak(Periodic):
    """Samples the JVM's used heap (Runtime totalMemory - freeMemory) every half second.
    In local mode the driver's JVM is also the executors': its heap holds Spark's cached blocks too."""

    interval = 0.5

    def __init__(self, spark):
        super().__init__()
        self.rt = spark.sparkContext._jvm.java.lang.Runtime.getRuntime()
        self.max_mb = self.rt.maxMemory() / 2**20
        self.peak_mb = 0.0

    def sample(self) -> None:
        try:
            used = (self.rt.totalMemory() - self.rt.freeMemory()) / 2**20
        except Exception:  # noqa: BLE001 - the gateway is closing
            return
        self.peak_mb = max(self.peak_mb, used)


@dataclass
class Timed:
    wall: float
    cpu: float
    load: float
    extra: dict = field(default_factory=dict)


def timed(fn, *, root: int | None = None) -> tuple[object, Timed]:
    c0, t0 = tree_cpu(root), time.perf_counter()
    out = fn()
    return out, Timed(time.perf_counter() - t0, tree_cpu(root) - c0, load_avg())


def med(xs) -> float:
    return statistics.median(xs)


def runs_text(xs, fmt: str = "{:.1f}") -> str:
    return ", ".join(fmt.format(x) for x in xs)


# ---------------------------------------------------------------- corpora

def corpus_args(size_gb: float, days: float, brokers: int = 30, partitions: int = 100_000, seed: int = 1,
                gzip_fraction: float = 0.5) -> list[str]:
    return ["--brokers", str(brokers), "--partitions", str(partitions), "--days", f"{days:g}",
            "--size-gb", f"{size_gb:g}", "--gzip-fraction", f"{gzip_fraction:g}", "--seed", str(seed)]


def make_corpus(out: Path, size_gb: float, days: float, **kw) -> dict:
    """``python -m samplegen corpus`` into ``out`` (reused when its stamp says it holds the same corpus)."""
    args = corpus_args(size_gb, days, **kw)
    stamp = out / ".bench-corpus.json"
    if stamp.exists():
        info = json.loads(stamp.read_text())
        if info.get("args") == args:
            return info
    cmd = [sys.executable, "-m", "samplegen", "corpus", "--out", str(out), *args]
    t = time.perf_counter()
    res = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True)
    files = [p for p in out.rglob("*") if p.is_file() and p.name != stamp.name]
    info = {"args": args, "command": "python -m samplegen corpus --out DIR " + " ".join(args),
            "output": res.stdout.strip(), "seconds": round(time.perf_counter() - t, 1), "files": len(files),
            "disk_bytes": sum(p.stat().st_size for p in files),
            "gz_files": sum(1 for p in files if p.name.endswith(".gz"))}
    stamp.write_text(json.dumps(info, indent=1))
    return info


def text_bytes_and_lines(root: Path) -> tuple[int, int]:
    """Uncompressed bytes and lines of every log file under root (what the parsers read)."""
    import gzip

    nbytes = lines = 0
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name.startswith("."):
            continue
        opener = gzip.open if p.name.endswith(".gz") else open
        with opener(p, "rb") as fh:
            while True:
                chunk = fh.read(1 << 22)
                if not chunk:
                    break
                nbytes += len(chunk)
                lines += chunk.count(b"\n")
    return nbytes, lines


def work_dir(arg: str | None, prefix: str) -> Path:
    return Path(arg) if arg else Path(tempfile.mkdtemp(prefix=prefix))


# ---------------------------------------------------------------- the results page and its journal

# RESULTS.md is a page of one row per goal (the latest figure, met or not); the dated runs behind each row go to
# journal/<area>.md, one file per area, each keeping the sections ("## title") its benchmarks append to.
JOURNAL = REPO / "benchmarks" / "journal"
# a section title's first words -> its journal file (the longest match wins); other titles get a file of their own
AREAS = {
    "Where the figures stand": "goals",
    "dashboard": "dashboard",
    "capture": "capture",
    "ingest": "ingest",
    "Arrow batches": "ingest",
    "replay": "replay",
    "several clusters": "replay",
    "KRaft split": "replay",
    "scaling": "scaling",
    "postmortem": "postmortem",
    "audit": "audit",
    "large audit": "audit",
    "agreement": "agreement",
    "partial evidence": "agreement",
    "big single files": "bigfiles",
    "default run, fast loop": "tests",
    "watch": "live",
}
JOURNAL_TITLES = {
    "goals": "the goals table as it stood until 2026-11-28, and the causes of its gaps",
    "ingest": "ingest (synthetic and real-format corpora, Arrow batches)",
    "replay": "replay (one core, shards on executors, several clusters, KRaft split)",
    "audit": "audit (3 months x 3 clusters; 30 brokers x 100,000 partitions)",
    "agreement": "agreement with the recorded decisions (whole and partial evidence)",
    "bigfiles": "big single files (broker logs, container streams, exports)",
    "live": "watch (issue 46): the same answer as postmortem; latency, CPU and memory while following",
}


def journal_of(section: str) -> Path:
    """The journal file holding ``section`` ("## title ...")."""
    title = section.lstrip("#").strip()
    best = max((k for k in AREAS if title.startswith(k)), key=len, default=None)
    if best is not None:
        return JOURNAL / f"{AREAS[best]}.md"
    slug = re.sub(r"[^a-z0-9]+", "_", re.split(r"[(:]", title)[0].lower()).strip("_")
    return JOURNAL / f"{slug or 'other'}.md"


def record(section: str, bullet: str) -> Path:
    """Adds ``bullet`` at the end of ``section`` (made if missing) in its journal file; other sections are left as
    they are. The goal's row of RESULTS.md is updated by hand (met or not is a judgement): this says which file."""
    path = journal_of(section)
    text = path.read_text(encoding="utf-8") if path.exists() else f"# Benchmark journal: {path.stem}\n"
    start = text.find("\n" + section + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section + "\n\n" + bullet
    else:
        start += 1
        nxt = text.find("\n## ", start + len(section))
        end = len(text) if nxt < 0 else nxt + 1
        body = text[:end].rstrip("\n") + "\n" + bullet
        text = body + ("\n" + text[end:] if nxt >= 0 else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    shown = path.relative_to(REPO) if REPO in path.parents else path
    print(f"recorded in {shown}; update this goal's row of benchmarks/RESULTS.md by hand", file=sys.stderr)
    return path
