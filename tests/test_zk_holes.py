"""Transactions no file holds (replay_engine/zk_holes.py), from zxid spans and snapshot zxids alone.

ZooKeeper's zxid is epoch << 32 | counter, the counter rising by one per transaction within an epoch and a new
epoch's first transaction being counter 1 (ZxidUtils.makeZxid; Leader.lead starts each epoch's counter over); a txn
log is named after its first zxid and a snapshot after the last zxid it had applied (FileTxnLog, FileTxnSnapLog).
"""
from parsers.schema import Event
from replay_engine.zk_holes import find_holes


def span(first: int, last: int, name: str = "log") -> Event:
    return Event("zk_txnlog_span", source_file=f"zk/{name}.{first:x}", source_pos=16, zxid=first,
                 detail={"first_zxid": first, "last_zxid": last, "entries": last - first + 1})


def test_consecutive_logs_and_server_copies_leave_no_hole():
    assert find_holes([span(1, 0x37), span(0x38, 0x6a), span(0x6b, 0xb5)], []) == []
    assert find_holes([span(1, 0x37, "a"), span(1, 0x40, "b"), span(0x41, 0x50)], []) == []


def test_a_log_missing_between_two_is_a_hole_told_at_the_next():
    holes = find_holes([span(1, 0x37), span(0x6b, 0xb5)], [])
    assert [(h.after, h.before, h.at.source_file) for h in holes] == [(0x37, 0x6b, "zk/log.6b")]


def test_a_snapshot_covers_what_it_applied():
    assert find_holes([span(1, 0x37), span(0x6b, 0xb5)], [0x6a]) == []
    holes = find_holes([span(1, 0x37), span(0x6b, 0xb5)], [0x69])  # 0x6a is in no file
    assert [(h.after, h.before) for h in holes] == [(0x69, 0x6b)]


def test_a_new_epoch_starts_its_counter_over():
    e1, e2 = 1 << 32, 2 << 32
    assert find_holes([span(e1 + 1, e1 + 0x50), span(e2 + 1, e2 + 0x20)], []) == []
    holes = find_holes([span(e1 + 1, e1 + 0x50), span(e2 + 0x30, e2 + 0x40)], [])
    assert [(h.after, h.before) for h in holes] == [(e1 + 0x50, e2 + 0x30)]
