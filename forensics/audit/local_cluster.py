"""A throwaway Spark standalone cluster on 127.0.0.1: a master and workers started from the pyspark
installation, stopped (process groups and work folder) on exit. The tests run ``audit`` on it to hold a
cluster's output equal to ``local[2]``'s; the benchmarks time executors on it. Nothing here reaches
beyond this machine.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Self

CODE = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(log: Path, text: str, proc: subprocess.Popen, timeout: float = 180) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{log.name}: exited {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.5)
    raise RuntimeError(f"{log.name}: no {text!r} within {timeout}s: {log.read_text(errors='replace')[-2000:]}")


def code_env() -> dict[str, str]:
    """The environment in which a driver and its executors import this checkout's code, not whatever an
    editable install elsewhere points at."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(x for x in (str(CODE), os.environ.get("PYTHONPATH")) if x)}


def on_cpus(slots) -> object:
    """A ``preexec_fn`` confining a child (and all it starts: a worker's executor JVM, its Python workers)
    to the ``slots``-th CPUs this process may use, as a cluster node confines an executor to its cores.
    The JVM sizes its GC and JIT threads by the CPUs it may use, as in a container."""
    mine = sorted(os.sched_getaffinity(0))
    slots = list(slots)
    if max(slots) >= len(mine):
        raise SystemExit(f"pinning needs {max(slots) + 1} CPUs; this process may use {len(mine)}")
    cpus = {mine[k] for k in slots}
    return lambda: os.sched_setaffinity(0, cpus)


class Standalone:
    """``workers`` workers of ``cores`` cores and ``memory`` each. ``pin``: worker i and the executor it
    starts run on CPUs i*cores .. (i+1)*cores-1 only, the master on the first worker's (pin the driver
    there too: then each worker added brings its CPUs and nothing else). ``shared``: instead, the master
    and all workers on the first workers*cores CPUs, which the system shares out among them (as
    ``local[N]`` runs on N CPUs). ``pids``: the master's and workers' processes, whose trees hold the
    executors; ``worker_logs``: what each worker wrote."""

    def __init__(self, workers: int = 1, cores: int = 1, memory: str = "2g", pin: bool = False,
                 work: Path | None = None, shared: bool = False):
        self.workers, self.cores, self.memory, self.pin, self.shared = workers, cores, memory, pin, shared
        self.procs: list[subprocess.Popen] = []
        self.url = ""
        self._own_work = work is None
        self.work = work
        self.worker_logs: list[Path] = []

    def __enter__(self) -> Self:
        import pyspark

        home = Path(pyspark.__file__).parent
        cls = home / "bin" / "spark-class"
        if self.work is None:
            self.work = Path(tempfile.mkdtemp(prefix="kf-standalone-"))
        env = {**code_env(), "SPARK_HOME": str(home), "SPARK_LOG_DIR": str(self.work)}
        port = free_port()
        try:
            mlog = self.work / "master.log"
            master = subprocess.Popen([str(cls), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                       "--port", str(port), "--webui-port", str(free_port())],
                                      stdout=mlog.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                      preexec_fn=self._cpus([0]))
            self.procs.append(master)
            wait_for(mlog, "I have been elected leader", master)
            self.url = f"spark://127.0.0.1:{port}"
            for i in range(self.workers):
                wlog = self.work / f"worker{i}.log"
                slots = range(i * self.cores, (i + 1) * self.cores)
                w = subprocess.Popen([str(cls), "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                                      "--cores", str(self.cores), "--memory", self.memory,
                                      "--webui-port", str(free_port()), "--work-dir", str(self.work / f"w{i}")],
                                     stdout=wlog.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                     preexec_fn=self._cpus(slots))
                self.procs.append(w)
                self.worker_logs.append(wlog)
                wait_for(wlog, "Successfully registered with master", w)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _cpus(self, slots):
        if self.shared:
            return on_cpus(range(self.workers * self.cores))
        return on_cpus(slots) if self.pin else None

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def __exit__(self, *exc) -> None:
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        if self._own_work:
            shutil.rmtree(self.work, ignore_errors=True)
