"""The baseline of the ingest benchmark: what a user would write to pull the controller's key
events out of a folder of Kafka broker logs, in one plain Python process. It imports nothing from
this project on purpose: it is the thing kafka-forensics has to beat, not a copy of it.

    python benchmarks/plain_parser.py DIR [DIR...]      # prints lines, bytes and events per kind

How it works (as one writes it in an afternoon): every file (``.gz`` or plain) is read line by
line; each line is tried against a list of compiled regular expressions, one per kind of line,
until one matches; a match gives an event (a dict with the time and the fields of that line).
Stack-trace lines and routine lines match nothing and are skipped. The line formats are Kafka
2.8's (``docs/events.md`` names the same event kinds).
"""
from __future__ import annotations

import gzip
import os
import re
import sys
from collections import Counter
from datetime import datetime, timezone

HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (\w+) ")
_C = r"\[Controller id=(\d+)(?: epoch=(\d+))?\] "
_TP = r"(\S+)-(\d+)"


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


# (event kind, pattern, how many events a match gives and with which fields)
def _state_change(m):
    return [{"controller": int(m[1]), "controller_epoch": int(m[2]), "topic": m[3], "partition": int(m[4]),
             "from": m[5], "to": m[6], "leader": int(m[7]), "leader_epoch": int(m[8]), "isr": _ints(m[9]),
             "zk_version": int(m[10])}]


def _isr_written(m):
    return [{"controller": int(m[1]), "topic": m[3], "partition": int(m[4]), "leader": int(m[5]), "isr": _ints(m[6]),
             "leader_epoch": int(m[7]), "controller_epoch": int(m[8]), "removed_replica": int(m[9])}]


def _failed(m):
    return [{"controller": int(m[1]), "topic": m[3], "partition": int(m[4]), "from": m[5], "to": m[6]}]


def _shrink(m):
    return [{"topic": m[1], "partition": int(m[2]), "broker": int(m[3]), "old_isr": _ints(m[4]), "isr": _ints(m[5])}]


def _isr_updated_broker(m):
    return [{"topic": m[1], "partition": int(m[2]), "broker": int(m[3]), "isr": _ints(m[4]), "zk_version": int(m[5])}]


def _isr_updated_controller(m):
    return [{"controller": int(m[1]), "topic": m[3], "partition": int(m[4]), "isr": _ints(m[5]),
             "zk_version": int(m[6])}]


def _become_leader(m):
    return [{"broker": int(m[1]), "topic": m[2], "partition": int(m[3]), "leader_epoch": int(m[4]),
             "isr": _ints(m[5])}]


def _broker_change(m):
    out = [("broker_registered", {"broker": b}) for b in _ints(m[3])]
    out += [("broker_failed", {"broker": b}) for b in _ints(m[4])]
    return out


def _failure_callback(m):
    return [{"broker": b} for b in _ints(m[3])]


def _one(key):
    def build(m):
        return [{key: int(m[1]) if m[1] and m[1].isdigit() else m[1]}]
    return build


RULES = [
    ("partition_state_change", re.compile(
        _C + r"Changed partition " + _TP + r" from (\w+) to (\w+) with state LeaderAndIsr\(leader=(-?\d+), "
        r"leaderEpoch=(\d+), isr=List\(([\d, ]*)\), zkVersion=(\d+)\)"), _state_change),
    ("partition_leader_isr_written", re.compile(
        _C + r"Partition " + _TP + r" state changed to \(Leader:(-?\d+),ISR:([\d,]*),LeaderEpoch:(\d+),"
        r"ControllerEpoch:(\d+)\) after removing replica (\d+) from the ISR"), _isr_written),
    ("leader_election_failed", re.compile(
        _C + r"Controller \d+ epoch \d+ failed to change state for partition " + _TP + r" from (\w+) to (\w+)"),
     _failed),
    ("isr_shrink", re.compile(r"\[Partition " + _TP + r" broker=(\d+)\] Shrinking ISR from ([\d,]*) to ([\d,]*)\."),
     _shrink),
    ("isr_updated", re.compile(r"\[Partition " + _TP + r" broker=(\d+)\] ISR updated to ([\d,]*) and version "
                               r"updated to \[(\d+)\]"), _isr_updated_broker),
    ("isr_updated", re.compile(_C + r"ISR for partition " + _TP + r" updated to \[([\d,]*)\] and zkVersion "
                               r"updated to \[(\d+)\]"), _isr_updated_controller),
    ("become_leader", re.compile(r"\[Broker id=(\d+)\] Leader " + _TP + r" starts at leader epoch (\d+) from offset "
                                 r"\d+ with high watermark \d+ ISR \[([\d,]*)\]"), _become_leader),
    ("broker_change", re.compile(_C + r"Newly added brokers: ([\d, ]*), deleted brokers: ([\d, ]*),"), _broker_change),
    ("broker_failed", re.compile(_C + r"Broker failure callback for ([\d, ]*) \("), _failure_callback),
    ("broker_registered", re.compile(r"Registered broker (\d+) at path /brokers/ids/"), _one("broker")),
    ("controller_elected", re.compile(r"\[Controller id=(\d+)\] \d+ successfully elected as the controller"),
     _one("controller")),
    ("controlled_shutdown_requested", re.compile(r"\[Controller id=\d+\] Shutting down broker (\d+) \("), _one("broker")),
    ("controlled_shutdown_requested", re.compile(r"\[KafkaServer id=(\d+)\] Starting controlled shutdown \("),
     _one("broker")),
    ("preferred_election", re.compile(r"\[Controller id=(\d+)\] Starting replica leader election \(PREFERRED\)"),
     _one("controller")),
]
KINDS = sorted({k for k, _, _ in RULES if k != "broker_change"} | {"broker_registered", "broker_failed"})


def parse_file(path: str, counts: Counter, events: list | None = None) -> tuple[int, int]:
    """Adds the file's events to ``counts`` (and ``events``); returns (lines, bytes of text)."""
    opener = gzip.open if path.endswith(".gz") else open
    lines = nbytes = 0
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            lines += 1
            nbytes += len(line)
            line = line.rstrip("\n")
            for kind, rx, build in RULES:
                m = rx.search(line)
                if m is None:
                    continue
                h = HEADER.match(line)
                ts = datetime.strptime(h[1], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=timezone.utc) if h else None
                for item in build(m):
                    k, fields = item if isinstance(item, tuple) else (kind, item)
                    counts[k] += 1
                    if events is not None:
                        events.append({"kind": k, "ts": ts, "file": path, "line": lines, **fields})
                break
    return lines, nbytes


def log_files(roots: list[str]) -> list[str]:
    out = []
    for root in roots:
        for d, _, names in os.walk(root):
            out += [os.path.join(d, n) for n in names if ".log" in n]
    return sorted(out)


def main(argv: list[str]) -> int:
    counts: Counter = Counter()
    lines = nbytes = 0
    files = log_files(argv)
    for f in files:
        n, b = parse_file(f, counts)
        lines += n
        nbytes += b
    print(f"{len(files)} files, {lines:,} lines, {nbytes:,} characters")
    for k in KINDS:
        print(f"{k:32s} {counts[k]:>10,}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
