"""Transactions no file holds (replay_engine/zk/holes.py), from zxid spans and snapshot zxids alone.

ZooKeeper's zxid is epoch << 32 | counter, the counter rising by one per transaction within an epoch and a new
epoch's first transaction being counter 1 (ZxidUtils.makeZxid; Leader.lead starts each epoch's counter over); a txn
log is named after its first zxid and a snapshot after the last zxid it had applied (FileTxnLog, FileTxnSnapLog).
"""
from parsers.schema import Event
from replay_engine.zk.holes import end_state, find_holes


def span(first: int, last: int, name: str = "log") -> Event:
    return Event("zk_txnlog_span", source_file=f"zk/{name}.{first:x}", source_pos=16, zxid=first,
                 detail={"first_zxid": first, "last_zxid": last, "entries": last - first + 1})


def test_consecutive_logs_and_server_copies_leave_no_hole():
    assert find_holes([span(1, 0x37), span(0x38, 0x6a), span(0x6b, 0xb5)], []) == []
    assert find_holes([span(1, 0x37, "a"), span(1, 0x40, "b"), span(0x41, 0x50)], []) == []


def test_a_log_missing_between_two_is_a_hole_told_at_the_next():
    holes = find_holes([span(1, 0x37), span(0x6b, 0xb5)], [])
    assert [(h.after, h.before, h.at.source_file) for h in holes] == [(0x37, 0x6b, "zk/log.6b")]


def test_a_snapshot_at_a_holes_end_covers_it_and_one_before_leaves_the_rest_lost():
    # FileTxnSnapLog names a snapshot after the last zxid applied: snapshot.6a holds the tree 0x38-0x6a left
    holes = find_holes([span(1, 0x37), span(0x6b, 0xb5)], [0x6a])
    assert [(h.after, h.before, h.snapshot) for h in holes] == [(0x37, 0x6b, 0x6a)]
    holes = find_holes([span(1, 0x37), span(0x6b, 0xb5)], [0x50, 0x69])  # 0x6a is in no file
    assert [(h.after, h.before, h.snapshot) for h in holes] == [(0x37, 0x6a, 0x69), (0x69, 0x6b, None)]
    # the usual roll: a snapshot inside the span of the log after it is no hole at all
    assert find_holes([span(1, 0x37), span(0x38, 0xb5)], [0x36, 0x40]) == []


def test_a_new_epoch_starts_its_counter_over():
    e1, e2 = 1 << 32, 2 << 32
    assert find_holes([span(e1 + 1, e1 + 0x50), span(e2 + 1, e2 + 0x20)], []) == []
    holes = find_holes([span(e1 + 1, e1 + 0x50), span(e2 + 0x30, e2 + 0x40)], [])
    assert [(h.after, h.before) for h in holes] == [(e1 + 0x50, e2 + 0x30)]


def _node(kind: str, zxid: int, snap: int, **kw) -> Event:
    return Event(kind, source_kind="zk_snapshot", source_file=f"zk/snapshot.{snap:x}", zxid=zxid,
                 detail={"snapshot_zxid": snap, "czxid": kw.pop("czxid", zxid), "mzxid": zxid}, **kw)


def test_a_covering_snapshots_end_state_allows_for_its_fuzziness():
    """ZooKeeper serialises a snapshot while transactions go on (DataTree.serialize after FileTxnSnapLog takes the
    last zxid for its name): a node may show a change past that zxid, whose txn the next log holds. Kept: partition
    states last changed before the hole. Registered: brokers whose node the snapshot holds with a creation up to its
    zxid, and a broker missing from it whose next held transaction removes it (it was there at the zxid)."""
    h = find_holes([span(1, 0x37), span(0x6b, 0xb5)], [0x6a])[0]
    snap = [
        _node("partition_state_written", 0x20, 0x6a, topic="t", partition=0),  # unchanged through the hole
        _node("partition_state_written", 0x50, 0x6a, topic="t", partition=1),  # changed inside it
        _node("partition_state_written", 0x6c, 0x6a, topic="t", partition=2),  # changed after the snapshot's zxid
        _node("topic_assignment_written", 0x10, 0x6a, topic="t"),
        _node("broker_registered", 0x05, 0x6a, subject_broker=1),
        _node("broker_registered", 0x60, 0x6a, subject_broker=2),  # registered anew inside the hole
        _node("broker_registered", 0x70, 0x6a, subject_broker=4),  # created after the zxid (its txn is held)
        _node("broker_registered", 0x20, 0x40, subject_broker=9),  # another snapshot's node
    ]
    held = [Event("broker_deregistered", source_kind="zk_txnlog", zxid=0x6d, subject_broker=3),
            Event("broker_registered", source_kind="zk_txnlog", zxid=0x70, subject_broker=4),
            Event("broker_registered", source_kind="zk_txnlog", zxid=0x71, subject_broker=5),
            Event("broker_deregistered", source_kind="zk_txnlog", zxid=0x72, subject_broker=5)]
    end = end_state(h, snap, held)
    assert end.keep == {("t", 0)} and end.assigned == {"t"}
    assert end.members == {1, 2, 3} and end.anew == {2}
