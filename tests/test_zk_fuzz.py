"""Damaged ZooKeeper files: real logs and snapshots mutated by hypothesis (bit flips, cuts, inserted
garbage). Nothing may raise or hang, the accounting must balance, and everything the damage did
not touch must still read exactly as before. Case counts are in the test names."""
from __future__ import annotations

import time
from functools import lru_cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.zookeeper.events import parse_snapshot_file, parse_txnlog_file
from parsers.zookeeper.snapshot import read_snapshot
from parsers.zookeeper.txnlog import Txn, read_txnlog, txn_json
from zk_oracle import LOG_FILES, SNAPSHOT_FILES

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@lru_cache(maxsize=None)
def log_sample() -> tuple[bytes, tuple]:
    """s4's second log, cut 64 bytes into its zero tail (the tail only adds zeros to scan)."""
    path = next(p for p in LOG_FILES if p.parent.parent.name.startswith("s4") and p.name == "log.55")
    data = path.read_bytes()
    log = read_txnlog(data)
    cut = log.end_offset + 64
    entries = tuple((t.offset, t.offset + 13 + t.length, txn_json(t)) for t in log.txns)
    return data[:cut], entries


@lru_cache(maxsize=None)
def snap_sample() -> tuple[bytes, list[dict]]:
    path = next(p for p in SNAPSHOT_FILES if p.parent.parent.name.startswith("s4") and p.name == "snapshot.53")
    data = path.read_bytes()
    return data, read_snapshot(data).nodes


def _parse_log(data: bytes):
    s = FileSummary(path="log.55", kind="zk_txnlog")
    t0 = time.monotonic()
    events = parse_txnlog_file(data, SourceContext("log.55", "c"), s)
    assert time.monotonic() - t0 < 5
    assert s.balanced(), s
    return read_txnlog(data), events, s


def _good(log) -> dict[int, dict]:
    return {t.offset: txn_json(t) for t in log.records if isinstance(t, Txn) and t.problem is None}


@FUZZ
@given(pos=st.integers(min_value=0), bit=st.integers(min_value=0, max_value=7))
def test_txnlog_single_bit_flip_300_cases(pos, bit):
    data, entries = log_sample()
    pos %= len(data)
    bad = bytearray(data)
    bad[pos] ^= 1 << bit
    log, _, s = _parse_log(bytes(bad))
    good = _good(log)
    for start, end, obj in entries:
        if not start <= pos < end:  # every entry the flip did not touch reads exactly as before
            assert good.get(start) == obj, (pos, start)
    touched = [e for e in entries if e[0] <= pos < e[1]]
    if touched and pos >= 16:
        assert s.quarantined >= 1 and s.errors


@FUZZ
@given(cut=st.integers(min_value=0))
def test_txnlog_truncated_anywhere_300_cases(cut):
    data, entries = log_sample()
    cut %= len(data) + 1
    log, _, s = _parse_log(data[:cut])
    good = _good(log)
    for start, end, obj in entries:
        if end <= cut:
            assert good.get(start) == obj
    inside = [start for start, end, _ in entries if start < cut < end]
    if inside and data[inside[0]:cut].strip(b"\0"):
        assert s.quarantined == 1  # the entry the file ends inside (a cut leaving only zeros looks like padding)


@FUZZ
@given(at=st.integers(min_value=16), garbage=st.binary(min_size=1, max_size=300))
def test_txnlog_inserted_garbage_300_cases(at, garbage):
    data, entries = log_sample()
    at = 16 + at % (len(data) - 16)
    log, _, s = _parse_log(data[:at] + garbage + data[at:])
    good = _good(log)
    for start, end, obj in entries:
        if end <= at:
            assert good.get(start) == obj
        elif start >= at:  # after the garbage: found again by resynchronisation, shifted
            moved = dict(obj, offset=start + len(garbage))
            assert good.get(start + len(garbage)) == moved, (at, start)


@FUZZ
@given(ops=st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), min_size=1, max_size=20),
       cut=st.one_of(st.none(), st.integers(min_value=0)))
def test_txnlog_many_random_byte_changes_300_cases(ops, cut):
    data, _ = log_sample()
    bad = bytearray(data)
    for pos, val in ops:
        bad[pos % len(bad)] = val
    if cut is not None:
        bad = bad[: cut % (len(bad) + 1)]
    _parse_log(bytes(bad))  # no exception, bounded time, balanced accounting


def _parse_snap(data: bytes):
    s = FileSummary(path="snapshot.53", kind="zk_snapshot")
    t0 = time.monotonic()
    parse_snapshot_file(data, SourceContext("snapshot.53", "c"), s)
    assert time.monotonic() - t0 < 5
    assert s.balanced(), s
    return read_snapshot(data), s


@FUZZ
@given(pos=st.integers(min_value=0), bit=st.integers(min_value=0, max_value=7))
def test_snapshot_single_bit_flip_300_cases(pos, bit):
    data, nodes = snap_sample()
    pos %= len(data)
    bad = bytearray(data)
    bad[pos] ^= 1 << bit
    snap, s = _parse_snap(bytes(bad))
    assert not snap.checksum_ok or snap.errors  # damage never goes unnoticed
    ends = [n.offset for n in nodes[1:]] + [10**12]
    for n, end in zip(nodes, ends):
        if end <= pos:  # nodes wholly before the damage are intact
            i = nodes.index(n)
            assert snap.nodes[i] == n


@FUZZ
@given(cut=st.integers(min_value=0))
def test_snapshot_truncated_anywhere_300_cases(cut):
    data, nodes = snap_sample()
    cut %= len(data)  # strictly shorter than the file
    snap, s = _parse_snap(data[:cut])
    assert snap.errors and s.errors
    assert snap.nodes == nodes[:len(snap.nodes)]
    ends = [n.offset for n in nodes[1:]] + [len(data)]
    assert len(snap.nodes) == sum(1 for e in ends if e <= cut) or len(snap.nodes) == len(nodes)
