"""What the driver accepts of the shard results that come back through the accumulator
(``forensics.audit.shard_results``): one per shard, and never a merge of fewer shards than ran."""

from forensics.audit.shard_results import missing, received


class _Acc:  # the driver's side of an accumulator: its value
    def __init__(self, value):
        self.value = value


def test_a_shard_sent_twice_counts_once_and_the_accumulator_is_emptied():
    # Spark applies each successful attempt's updates: a stage run again sends a shard's (identical) result twice
    acc = _Acc([("a", 1, b"x", True), ("a", 0, b"y", True), ("a", 1, b"x", True)])
    assert received(acc) == {("a", 0): (b"y", True), ("a", 1): (b"x", True)}
    assert acc.value == []


def test_missing_shards():
    got = {("a", 0): (b"", True), ("b", 1): (b"", False), ("c", 0): (b"", False), ("c", 2): (b"", True)}
    # a: its shard 0 held cluster-wide events, which every shard of a is given: shard 1 had rows and is lost
    # b: nothing cluster-wide; its shard 0 may have had no partition at all, so no task ran it
    # c: one shard held cluster-wide events: shard 1 is lost. d: no result at all
    assert missing({"a": 2, "b": 2, "c": 3, "d": 1}, got) == {"a": [1], "c": [1], "d": [0]}
    assert missing({"a": 1}, got) == {}
