"""Helpers shared by the ZooKeeper tests: where the real files and ZooKeeper's own dumps are."""
from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import REAL_LOGS, ZK_REAL

SCENARIOS = sorted(p.name for p in ZK_REAL.iterdir() if (p / "version-2").is_dir())
LOG_FILES = sorted(p for s in SCENARIOS for p in (ZK_REAL / s / "version-2").glob("log.*"))
SNAPSHOT_FILES = sorted(p for s in SCENARIOS for p in (ZK_REAL / s / "version-2").glob("snapshot.*"))
REAL_LOG_SNAPSHOTS = sorted(REAL_LOGS.glob("*/**/version-2/snapshot.*"))

# TxnLogToolkit starts every txn line with the JVM's short date (en_US, UTC).
_TXN_LINE_START = re.compile(r"^\d+/\d+/\d+, \d+:\d\d:\d\d [AP]M UTC session 0x", re.M)


def oracle(path: Path, suffix: str) -> Path:
    return path.parent.parent / "oracle" / (path.name + suffix)


def oracle_txns(log: Path) -> tuple[dict, list[dict], dict]:
    """(file header object, txn objects, end object) of ZooKeeper's decoding of ``log``."""
    rows = [json.loads(line) for line in oracle(log, ".txns.jsonl").read_text().splitlines() if line.strip()]
    return rows[0], rows[1:-1], rows[-1]


def oracle_dump_txn_lines(log: Path) -> tuple[str, list[str], str]:
    """(header line, one string per txn, trailer) of TxnLogToolkit --dump.

    A txn is split where the next one starts (raw multi bytes may contain
    newlines), and ZooKeeper's newline inside an ACL list (``...}\\n]``) is
    folded, the one layout difference zk-dump makes on purpose.
    """
    text = oracle(log, ".dump.txt").read_bytes().decode("utf-8", "replace")
    header, _, _ = text.partition("\n")
    starts = [m.start() for m in _TXN_LINE_START.finditer(text)]
    trailer_at = text.rindex("EOF reached")
    bounds = starts + [trailer_at]
    txns = [text[a:b].rstrip("\n").replace("\n]", "]").replace("\n, ", ", ") for a, b in zip(bounds, bounds[1:])]
    return header, txns, text[trailer_at:].strip()
