"""Options shared by several commands, and the Spark start-up with a user-facing error."""
from __future__ import annotations

import typer

from forensics.errors import UserError

MASTER = typer.Option(None, "--master", help="Spark master URL (default local[*]; $SPARK_MASTER also works).")
TZ = typer.Option("UTC", "--tz", help="Time zone the brokers logged in (log4j timestamps carry none).")
CLUSTER = typer.Option(None, "--cluster", help="Cluster name for the events (default: the first SOURCE's name).")
BROKER_MAP = typer.Option(
    None, "--broker-map", help="GLOB=ID: files whose path matches GLOB, or sources in a container stream (compose "
    "service, pod, host) whose name matches it, were written by broker ID (repeatable), e.g. kafka-1=1."
)
QUIET = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr.")


def check_tz(tz: str) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if tz in ("UTC", "Z", "utc"):
        return "UTC"
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise UserError(f"--tz: unknown time zone {tz!r} (use an IANA name such as Europe/Berlin)") from None
    return tz


def default_cluster(sources: list[str], cluster: str | None) -> str:
    if cluster:
        return cluster
    import re
    from pathlib import PurePath

    name = PurePath(sources[0].rstrip("/")).name if sources else "cluster"
    name = re.sub(r"(\.tar)?\.(gz|tgz|zip|bz2|xz)$", "", name) or "cluster"
    return name


def start_spark(master: str | None, rows_in_python: bool = False, preload=None):
    """The Spark session, or a UserError saying why not. ``preload``: a function importing the modules the
    command needs next, run by a thread meanwhile: the driver only waits for the JVM while it starts (the ingest
    command's planning modules, ``ingest.import_planning_modules``: 0.35 s of imports and regular expressions
    under load, no longer after the start). It must import no pyspark, which this thread imports meanwhile (two
    threads importing one cycle of modules can fail)."""
    import threading

    from forensics.spark import get_spark

    loader = None
    if preload is not None:
        loader = threading.Thread(target=_quietly, args=(preload,), name="kf-preload", daemon=True)
        loader.start()
    try:
        return get_spark(master, rows_in_python=rows_in_python)
    except Exception as exc:  # noqa: BLE001 - Java/py4j errors for a bad master URL, no Java, ...
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"cannot start Spark (master {master or 'local[*]'}): {first}") from None
    finally:
        if loader is not None:
            loader.join()


def _quietly(fn) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - the command's own import says it again, where it is needed
        pass
