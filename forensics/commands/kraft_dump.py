"""``kafka-forensics kraft-dump FILE``: a KRaft metadata segment or snapshot as text or JSON lines."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from forensics.app import app
from forensics.errors import UserError


@app.command("kraft-dump")
def kraft_dump_cmd(
    file: Path = typer.Argument(..., help="A __cluster_metadata-0/*.log segment or *.checkpoint snapshot (gzip is fine)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per record (control records included)."),
) -> int:
    """Print a KRaft metadata log as kafka-dump-log.sh --cluster-metadata-decoder would, or as JSON.

    Example: kafka-forensics kraft-dump meta/__cluster_metadata-0/00000000000000000000.log --json
    """
    from parsers.common.textio import ReadProblems, decompressed_chunks

    if not file.exists():
        raise UserError(f"{file}: no such file")
    if file.is_dir():
        raise UserError(f"{file}: is a folder; give one segment (.log) or snapshot (.checkpoint)")
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise UserError(f"{file}: cannot read: {exc.strerror or exc}") from None
    problems = ReadProblems()
    payload = b"".join(decompressed_chunks(data, problems))
    warnings = [f"{file}: {e}" for e in problems.errors]
    try:
        batches = _dump(file, payload, as_json, warnings)
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if batches == 0 and warnings:
        raise UserError(f"not a readable KRaft metadata log: {warnings[0]}")
    for w in warnings:
        print(f"kraft-dump: warning: {w}", file=sys.stderr)
    return 0


def _dump(file: Path, payload: bytes, as_json: bool, warnings: list[str]) -> int:
    """Write the dump to stdout; returns how many batches were read."""
    from parsers.kraft.kafka_batches import Damage, read_batches
    from parsers.kraft.dump_text import batch_line, record_json, record_line
    from parsers.kraft.events import snapshot_id
    from parsers.kraft.records import batch_records

    out = sys.stdout
    name = file.name[:-3] if file.name.endswith(".gz") else file.name
    batches = 0
    for item in read_batches(payload):
        if isinstance(item, Damage):
            if item.kind != "padding" or item.records:
                warnings.append(f"{file}: byte {item.pos}: {item.reason}")
            continue
        if batches == 0 and not as_json:
            # Kafka's own first lines, written once we know the file holds batches at all.
            out.write(f"Dumping {file}\n")
            snap = snapshot_id(name)
            if snap is not None:
                out.write(f"Snapshot end offset: {snap[0]}, epoch: {snap[1]}\n")
            elif name.endswith(".log") and name[:-4].isdigit():
                out.write(f"Log starting offset: {int(name[:-4])}\n")
        batches += 1
        h = item.header
        if not as_json:
            out.write(batch_line(h) + "\n")
        for lr in batch_records(item):
            if as_json:
                out.write(json.dumps(record_json(h, lr.record, lr.decoded, lr.error), ensure_ascii=False) + "\n")
            else:
                out.write(record_line(h, lr.record, lr.decoded, lr.error) + "\n")
        if item.damage is not None:
            warnings.append(f"{file}: byte {item.damage.pos}: {item.damage.reason}")
    out.flush()
    return batches
