"""``kafka-forensics zk-dump FILE``: a ZooKeeper txn log or snapshot as text or JSON lines."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from forensics.app import app
from forensics.errors import UserError


@app.command("zk-dump")
def zk_dump_cmd(
    file: Path = typer.Argument(..., help="A ZooKeeper txn log (log.N) or snapshot (snapshot.N, .gz too)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per txn (log) or per znode (snapshot)."),
) -> int:
    """Print a ZooKeeper txn log or snapshot the way ZooKeeper's own tools do, or as JSON.

    Text output follows TxnLogToolkit --dump (txn logs) and SnapshotFormatter -d
    (snapshots), dates in UTC, so the two can be compared line by line. Two
    differences, on purpose: a multi's sub-txns are printed decoded
    (op:path,data,version;...) where ZooKeeper 3.8 prints their raw bytes, and
    the newline ZooKeeper puts inside an ACL list is left out, so every txn
    is one line. Damaged entries are reported with their byte offset and the
    dump goes on after them.

    --json: a txn log gives one object per txn (zxid, session, cxid, time in ms,
    type, txn: {path, data, version, ephemeral, err, txns...}, digest);
    a snapshot gives one object per znode (path, data, czxid, mzxid, version,
    ephemeralOwner, ...), sorted by path.

    Example: kafka-forensics zk-dump /var/lib/zookeeper/version-2/log.100000001 --json
    """
    if not file.exists():
        raise UserError(f"{file}: no such file")
    if file.is_dir():
        raise UserError(f"{file}: is a folder; give one txn log (log.N) or snapshot (snapshot.N)")
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise UserError(f"{file}: cannot read: {exc.strerror or exc}") from None
    try:
        warnings = _dump(file, data, as_json)
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    for w in warnings:
        print(f"zk-dump: warning: {file}: {w}", file=sys.stderr)
    return 0


def _dump(file: Path, data: bytes, as_json: bool) -> list[str]:
    from parsers.dispatch import ZK_LOG_MAGIC, ZK_SNAP_MAGIC
    from parsers.common.textio import GZIP_MAGIC, ReadProblems, decompressed_chunks
    from parsers.zookeeper.snapshot import SNAPPY_MAGIC

    if data.startswith(SNAPPY_MAGIC) or file.name.endswith(".snappy"):
        raise UserError(f"{file}: unsupported compression (snappy-compressed snapshot); "
                        "decompress it with ZooKeeper's zkSnapShotToolkit first")
    problems = ReadProblems()
    payload = b"".join(decompressed_chunks(data, problems)) if data.startswith(GZIP_MAGIC) else data
    warnings = list(problems.errors)
    name = file.name[:-3] if file.name.endswith(".gz") else file.name
    if payload.startswith(ZK_LOG_MAGIC) or (name.startswith("log.") and not payload.startswith(ZK_SNAP_MAGIC)):
        return warnings + _dump_log(payload, as_json)
    if payload.startswith(ZK_SNAP_MAGIC) or name.startswith("snapshot."):
        return warnings + _dump_snapshot(payload, name, as_json)
    raise UserError(f"{file}: not a ZooKeeper txn log or snapshot (no ZKLG/ZKSN magic at byte 0)")


def _dump_log(payload: bytes, as_json: bool) -> list[str]:
    from parsers.zookeeper.txnlog import Damage, damage_json, dump_line, dumps_json, header_line, read_txnlog, txn_json

    log = read_txnlog(payload)
    out = sys.stdout
    warnings = list(log.notes)
    if not as_json:
        out.write(header_line(log) + "\n")
    for rec in log.records:
        if isinstance(rec, Damage):
            warnings.append(f"bytes {rec.offset}-{rec.end}: {rec.reason}")
            out.write((dumps_json(damage_json(rec)) if as_json else f"DAMAGED - bytes {rec.offset}-{rec.end}: {rec.reason}") + "\n")
            continue
        if rec.problem:
            warnings.append(f"byte {rec.offset}: {rec.problem}")
        out.write((dumps_json(txn_json(rec)) if as_json else dump_line(rec)) + "\n")
    if not as_json:
        out.write(f"EOF reached after {len(log.txns)} txns.\n")
    return warnings


def _dump_snapshot(payload: bytes, name: str, as_json: bool) -> list[str]:
    from parsers.zookeeper.snapshot import dump_lines, name_zxid, nodes_json, read_snapshot

    snap = read_snapshot(payload)
    if snap.magic is not None and not snap.nodes and snap.errors:
        raise UserError(f"{name}: not a readable ZooKeeper snapshot: {snap.errors[0]}")
    out = sys.stdout
    if as_json:
        for obj in nodes_json(snap):
            out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        for line in dump_lines(snap, name_zxid(name)):
            out.write(line + "\n")
    return list(snap.errors)
