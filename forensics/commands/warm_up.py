"""``kafka-forensics warm-up [LOGS]``: build the driver JVM's class archive (``forensics.jvm_archive``).

One postmortem over a small folder of logs (the bundled sample unless given) runs in a child process
whose JVM writes the archive as it exits; the archive is kept only if that child and its JVM ended
cleanly. It never reads more than that folder and writes only under the cache folder.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import typer

from forensics.app import app
from forensics.errors import UserError

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "rf1_broker_kill"


@app.command("warm-up")
def warm_up_cmd(
    logs: Path = typer.Argument(None, help="A small folder of logs to run once (default: the bundled sample)."),
) -> int:
    """Make later runs start Spark faster: build the JVM's class archive once (needs ~160 MB of cache).

    Run it again after upgrading Java or Spark; KAFKA_FORENSICS_JVM_ARCHIVE=0 turns the archive off.

    Example: kafka-forensics warm-up
    """
    from forensics import jvm_archive

    logs = logs if logs is not None else SAMPLE
    if not logs.exists():
        raise UserError(f"{logs}: no such folder; give a small folder of broker logs to warm up with")
    path = jvm_archive.archive_path()
    if path is None:
        raise UserError("no Java or no pyspark found; nothing to warm up")
    if any(c.isspace() for c in str(path)):
        raise UserError(f"the cache folder {path.parent} has a blank in its path, which Spark's launcher cannot "
                        f"pass to Java; set {jvm_archive.CACHE_ENV} to a folder without one")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the cache folder {path.parent}: {exc.strerror or exc}; set "
                        f"{jvm_archive.CACHE_ENV} to a folder you may write") from None
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
    env = {k: v for k, v in os.environ.items() if k != jvm_archive.OFF_ENV}
    env[jvm_archive.DUMP_ENV] = str(tmp)
    t = time.perf_counter()
    print(f"warm-up: one postmortem over {logs}, its JVM writing {path.name} ...", file=sys.stderr)
    try:
        with tempfile.TemporaryDirectory(prefix="kf-warm-up-") as out:
            run = subprocess.run([sys.executable, "-m", "forensics.commands.warm_up", str(logs), out],
                                 env=env, capture_output=True, text=True)
        if run.returncode != 0:
            last = (run.stderr.strip().splitlines() or ["no message"])[-1]
            raise UserError(f"warm-up failed (exit {run.returncode}): {last}")
        if not tmp.is_file() or tmp.stat().st_size == 0:
            # A JDK without its base archive (some builds ship none) cannot write one on top of it.
            print("warm-up: this Java wrote no class archive; Spark starts as before", file=sys.stderr)
            return 0
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise UserError(f"cannot keep the archive at {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    jvm_archive.owner_file(path).write_text(str(jvm_archive.jars_dir()))
    prune(path)
    print(f"warm-up: {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.0f} s; "
          "later runs map it", file=sys.stderr)
    return 0


def prune(kept: Path) -> None:
    """Remove the archives this install wrote for another Java or Spark, those of installs that are gone, and
    unfinished ones; keep those of other installs still here (each virtualenv has its own: tests/test_jvm_archive.py)."""
    from forensics import jvm_archive

    mine = str(jvm_archive.jars_dir())
    for old in kept.parent.glob(f"{jvm_archive.PREFIX}*"):
        if old == kept or old.suffix == ".owner":
            continue
        if old.suffix == ".jsa":
            owner = jvm_archive.owner_file(old)
            try:
                jars = owner.read_text().strip()
            except OSError:
                jars = ""  # written before archives named their install: whose is unknown
            if jars and jars != mine and Path(jars).is_dir():
                continue
            old.unlink(missing_ok=True)
            owner.unlink(missing_ok=True)
        elif _abandoned(old):
            old.unlink(missing_ok=True)


def _abandoned(tmp: Path) -> bool:
    """A temporary archive whose warm-up process is gone (killed before it could rename or remove it)."""
    try:
        pid = int(tmp.suffixes[-2].lstrip("."))
    except (IndexError, ValueError):
        return True
    return not Path(f"/proc/{pid}").exists()


def _child(logs: str, out: str) -> int:
    """Runs in the child: the postmortem, then Spark stopped and its JVM let exit, which writes the archive."""
    from pyspark import SparkContext

    import forensics.commands.postmortem  # noqa: F401 - registers the command it runs
    from forensics.app import app as the_app

    rv = the_app(args=["postmortem", logs, "--out", out, "--master", "local[*]", "--quiet"], standalone_mode=False)
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    active = SparkContext._active_spark_context
    if active is not None:
        active.stop()
    if proc is None:
        return 1
    proc.stdin.close()  # the gateway exits on end of input (PythonGatewayServer), dumping as it goes
    proc.wait(timeout=1800)
    # postmortem: 0 no leaderless partition, 1 some; the archive is what matters here
    return proc.returncode if rv in (0, 1, None) else 2


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], sys.argv[2]))
