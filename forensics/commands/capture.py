"""``kafka-forensics capture``: a read-only snapshot (and ``--watch`` trace) of a live ZooKeeper-mode cluster."""
from __future__ import annotations

from pathlib import Path

import typer

from forensics.app import app
from forensics.capture import DEFAULT_TIMEOUT_S, DEFAULT_WINDOW
from forensics.commands.common import QUIET
from forensics.errors import UserError


@app.command("capture")
def capture_cmd(
    zk: str = typer.Option(..., "--zk", help="ZooKeeper connect string: HOST:PORT[,HOST:PORT...][/chroot]."),
    out: Path = typer.Option(..., "--out", "-o", help="New (or empty) folder for manifest.json, znodes/ and watch.jsonl."),
    watch: str = typer.Option(None, "--watch", help="Then keep watching for DURATION (90s, 10m, 2h, forever); Ctrl-C ends it cleanly."),
    auth: str = typer.Option(None, "--auth", help="SCHEME:CREDENTIAL, e.g. digest:USER:PASSWORD (visible in ps: prefer --auth-file)."),
    auth_file: Path = typer.Option(None, "--auth-file", help="File holding one line SCHEME:CREDENTIAL."),
    tls: bool = typer.Option(False, "--tls", help="Connect with TLS (ZooKeeper's secureClientPort)."),
    ca: Path = typer.Option(None, "--ca", help="PEM file of the CA that signed the server certificate (default: system CAs)."),
    cert: Path = typer.Option(None, "--cert", help="PEM client certificate (with --key), when the server wants one."),
    key: Path = typer.Option(None, "--key", help="PEM private key of --cert (unencrypted)."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", help="Seconds to wait for a connection or an answer."),
    max_inflight: int = typer.Option(DEFAULT_WINDOW, "--max-inflight", help="Reads outstanding at once on the connection."),
    quiet: bool = QUIET,
) -> int:
    """Snapshot every Kafka znode (data + stat) of a ZooKeeper-mode cluster, read-only.

    Example: kafka-forensics capture --zk zk1:2181,zk2:2181/kafka --out ./capture --watch 10m
    """
    from forensics.capture import (
        CaptureOptions, TlsFiles, check_tls, parse_auth, parse_duration, parse_zk, read_auth_file, run_capture,
    )
    from forensics.progress import Progress

    if auth and auth_file:
        raise UserError("give --auth or --auth-file, not both")
    if not timeout > 0:
        raise UserError("--timeout must be a positive number of seconds")
    if max_inflight < 1:
        raise UserError("--max-inflight must be at least 1")
    if not tls and (ca or cert or key):
        raise UserError("--ca, --cert and --key need --tls")
    tls_files = TlsFiles(*(str(p) if p else None for p in (ca, cert, key))) if tls else None
    if tls_files:
        check_tls(tls_files)
    opts = CaptureOptions(
        target=parse_zk(zk),
        out=out,
        auth=read_auth_file(str(auth_file)) if auth_file else (parse_auth(auth) if auth else None),
        tls=tls_files,
        timeout_s=timeout,
        watch_s=parse_duration(watch) if watch is not None else None,
        window=max_inflight,
    )
    progress = Progress(not quiet)
    result = run_capture(opts, say=progress.say)
    m, c = result.manifest, result.counts
    print(
        f"{m['znodes']:,} znodes ({c['brokers']} brokers, {c['topics']} topics, {c['partitions']:,} partitions) "
        f"from {m['server']} session {m['session_id']} -> {out}"
    )
    if "watch" in m:
        w = m["watch"]
        print(f"watched {w['watched_s']:.0f}s: {w['changes']:,} change(s), {len(w['gaps'])} gap(s) -> {out / 'watch.jsonl'}")
    if m["errors"]:
        print(f"{len(m['errors'])} znode(s) could not be read or stored: see errors in {out / 'manifest.json'}")
    return 0
