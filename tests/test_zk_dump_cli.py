"""``kafka-forensics zk-dump`` against ZooKeeper's own dump output, and its errors (one line, exit 2)."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from zk_oracle import LOG_FILES, SNAPSHOT_FILES, oracle, oracle_dump_txn_lines, oracle_txns


def run(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "forensics", "zk-dump", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


def test_txn_log_text_and_json_agree_with_zookeeper(tmp_path):
    log = next(p for p in LOG_FILES if p.parent.parent.name.startswith("s2") and p.name == "log.45")
    text = run(log)
    assert text.returncode == 0, text.stderr
    header, expected, trailer = oracle_dump_txn_lines(log)
    lines = text.stdout.splitlines()
    assert lines[0] == header and lines[-1] == trailer and len(lines) == len(expected) + 2
    for got, want in zip(lines[1:-1], expected):
        if " multi " in want:
            assert got.split(" multi ")[0] == want.split(" multi ")[0]
            assert "check:'/controller_epoch" in got or "error:" in got or "create:" in got
        else:
            assert got == want
    as_json = run(log, "--json")
    assert [json.loads(x) for x in as_json.stdout.splitlines()] == oracle_txns(log)[1]


def test_snapshot_text_and_json_agree_with_zookeeper_also_gzipped(tmp_path):
    snap = next(p for p in SNAPSHOT_FILES if p.parent.parent.name.startswith("s2") and p.name == "snapshot.43")
    gz = tmp_path / "snapshot.43.gz"
    gz.write_bytes(gzip.compress(snap.read_bytes()))
    text = run(gz)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines() == oracle(snap, ".dump.txt").read_text().splitlines()
    nodes = [json.loads(x) for x in run(snap, "--json").stdout.splitlines()]
    assert nodes == json.loads(oracle(snap, ".nodes.json").read_text())["nodes"]


def test_damaged_log_is_dumped_with_offsets_and_a_warning(tmp_path):
    log = LOG_FILES[0]
    data = bytearray(log.read_bytes())
    data[200] ^= 0xFF  # inside the second entry (entries start at 16, 77, 184, ...)
    bad = tmp_path / "log.1"
    bad.write_bytes(bytes(data))
    res = run(bad)
    assert res.returncode == 0
    assert "CRC ERROR - " in res.stdout and "warning" in res.stderr and "byte 184" in res.stderr
    assert res.stdout.splitlines()[-1] == f"EOF reached after {len(oracle_txns(log)[1])} txns."


@pytest.mark.parametrize("content,msg", [
    (b"hello world\n", "not a ZooKeeper txn log or snapshot"),
    (b"\x82SNAPPY\x00" + b"\0" * 32, "unsupported compression"),
])
def test_user_errors_are_one_line_exit_2(tmp_path, content, msg):
    f = tmp_path / "thing.bin"
    f.write_bytes(content)
    res = run(f)
    assert res.returncode == 2 and msg in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    missing = run(tmp_path / "nope")
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_help_mentions_decoded_multi():
    res = subprocess.run([sys.executable, "-m", "forensics", "zk-dump", "--help"], capture_output=True, text=True)
    assert res.returncode == 0 and "decoded" in res.stdout and "Example:" in res.stdout
