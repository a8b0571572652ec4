"""``kafka-forensics watch`` and ``kafka-forensics playback``: the answer while the outage is still running."""
from __future__ import annotations

from pathlib import Path

import typer

from forensics.app import app
from forensics.commands.common import BROKER_MAP, CLUSTER, MASTER, QUIET, TZ, check_tz, default_cluster
from forensics.errors import UserError


@app.command("watch")
def watch_cmd(
    sources: list[str] = typer.Argument(..., help="What to follow as it is written: broker log folders (one "
                                        "sub-folder per broker), log files, a container stream being appended "
                                        "(docker compose logs -f > f), a ZooKeeper data dir, or - for stdin."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for report.json, report.html, incidents.jsonl and "
                             "what a restart goes on from (the stream's checkpoint, the replay's state)."),
    zk: str = typer.Option(None, "--zk", help="Also follow ZooKeeper's live state, read-only, as capture --watch "
                           "reads it: HOST:PORT[,HOST:PORT...][/chroot]."),
    exec_cmd: str = typer.Option(None, "--exec", help="Run this shell command for every incident opened, updated "
                                 "or closed, with the notification (JSON) on stdin: for paging."),
    keep: float = typer.Option(6.0, "--keep", help="Hours of history the replay keeps at hand; an outage closed "
                               "longer than half of that ago is told as it was when it closed."),
    trigger: float = typer.Option(1.0, "--every", help="Seconds between micro-batches."),
    until_idle: float = typer.Option(None, "--until-idle", help="Stop once nothing new was written for this many "
                                     "seconds (for scripts; by default it runs until Ctrl-C)."),
    duration: float = typer.Option(None, "--duration", help="Stop after this many seconds."),
    json_lines: bool = typer.Option(False, "--json", help="Print the notifications as JSON lines on stdout "
                                    "instead of the terminal view (the default when stdout is not a terminal)."),
    tz: str = TZ,
    cluster: str = CLUSTER,
    broker_map: list[str] = BROKER_MAP,
    master: str = MASTER,
    quiet: bool = QUIET,
) -> int:
    """Follow the evidence while it is written and tell every leaderless partition as it happens: why, since when,
    and what would end it. Spark Structured Streaming reads what is newly written; the replay goes on from where
    it was. Stop with Ctrl-C; start again with the same --out to go on.

    Exit code: 0 = no incident open when it stopped; 1 = incidents open; 2 = usage or input error.

    Example: kafka-forensics watch /var/log/kafka-cluster/ --out /var/lib/kafka-forensics/live
    """
    from forensics.live.run import WatchOptions, watch
    from forensics.progress import Progress
    from forensics.sources import parse_broker_map

    tz = check_tz(tz)
    if trigger <= 0 or keep <= 0:
        raise UserError("--every and --keep must be positive")
    named = [s for s in sources if s != "-"]
    opts = WatchOptions(sources=list(sources), out=out,
                        cluster=default_cluster(named or ["stdin"], cluster), tz=tz,
                        broker_map=parse_broker_map(broker_map), master=master, exec_cmd=exec_cmd,
                        trigger_s=trigger, keep_h=keep, until_idle_s=until_idle, duration_s=duration,
                        view=False if json_lines else None, zk=zk)
    progress = Progress(not quiet)
    return watch(opts, progress.say)


@app.command("playback")
def playback_cmd(
    source: Path = typer.Argument(..., help="A recorded incident: a folder as postmortem reads it."),
    dest: Path = typer.Argument(..., help="A new (or empty) folder to write it into, as the brokers wrote it."),
    speed: float = typer.Option(1.0, "--speed", help="Times the original pace (60: an hour in a minute)."),
    max_gap: float = typer.Option(None, "--max-gap", help="Shorten stretches where nothing was written to this "
                                  "many seconds of the cluster's time (days of quiet in seconds)."),
    log: Path = typer.Option(None, "--log", help="Write a JSON line per write (wall clock, the line's time, file)."),
    tz: str = TZ,
    quiet: bool = QUIET,
) -> int:
    """Write a recorded incident's files into DEST at N times the original pace: each file in its own order, log4j's
    rotation and the later gzip as the brokers did them, ZooKeeper's log written in place. For demos, for training
    on-call staff, and for testing watch.

    Example: kafka-forensics playback sample_logs/rf1_broker_kill /tmp/rf1 --speed 60
    """
    from forensics.live.playback import playback
    from forensics.progress import Progress

    tz = check_tz(tz)
    if not source.is_dir():
        raise UserError(f"{source}: not a folder")
    if speed <= 0:
        raise UserError("--speed must be positive")
    if dest.exists() and any(dest.iterdir()):
        raise UserError(f"{dest}: not empty (playback writes into a new or empty folder)")
    dest.mkdir(parents=True, exist_ok=True)
    progress = Progress(not quiet)
    n = playback(source, dest, speed, tz, max_gap, log)
    progress.say(f"wrote {n:,} writes into {dest}")
    return 0
