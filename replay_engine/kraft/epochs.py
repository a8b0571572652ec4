"""What the KRaft replay knows of each partition's leader epochs besides its registration (logs only): which epochs its
own steps reached, which a line stated and when, and which it could not derive. Kept per partition; a partition's
new incarnation forgets it (``forget``)."""
from __future__ import annotations

from dataclasses import dataclass, field

from replay_engine.common import facts as F
from replay_engine.common.partition import Decision


@dataclass
class EpochLedger:
    # (partition, leader epoch) -> the replay's decision that reached it: a broker may state an epoch after the
    # replay has already taken the next step (the replay reads the quorum's 'Replayed' lines before brokers apply
    # the same records), and is then judged against the decision of its own epoch
    # with the partition epoch it wrote (if known), the acceptable brokers and unclean setting it was taken with,
    # and when each broker's liveness was last read from a line then
    replayed_at: dict[tuple[F.TP, int], tuple[Decision, int | None, frozenset[int], bool, dict]] = field(
        default_factory=dict)
    replayed_epochs: set[tuple[F.TP, int]] = field(default_factory=set)  # (partition, leader epoch) own steps reached
    stated_epoch: dict[F.TP, tuple] = field(default_factory=dict)  # highest (leader, partition epoch) a line stated
    replayed_since: dict[F.TP, int] = field(default_factory=dict)  # own records since a line stated the partition epoch
    before_skip: dict[F.TP, tuple] = field(default_factory=dict)  # (epoch, leader, ISR, AR) before a 'Skipped' line
    epoch_known_at: dict[F.TP, int] = field(default_factory=dict)  # when a line or own step last set the leader epoch
    # partition -> ((offset, quorum epoch) of a snapshot, the leader epoch it holds, the controller that loaded it,
    # when): the registration the replay holds came from a controller loading that snapshot (and the replay's
    # own steps since), no line having stated the partition after it
    from_snapshot: dict[F.TP, tuple] = field(default_factory=dict)
    snapshot_before: dict[tuple[F.TP, int], tuple] = field(default_factory=dict)  # (partition, epoch) first stated then
    # (partition, leader epoch) -> when the evidence first stated it (a broker restarting restates old epochs)
    epoch_first_seen: dict[F.TP, dict[int, int]] = field(default_factory=dict)
    min_epoch: dict[F.TP, int] = field(default_factory=dict)  # a leader epoch reached in a step not derived
    # partition -> leader epoch -> the leader the replay gave it: by its own decision, or re-derived at a line and
    # agreed (what a later line stating that epoch again is compared with, see KraftLines.restated)
    epoch_decided: dict[F.TP, dict[int, int]] = field(default_factory=dict)
    stepped: dict[F.TP, F.Ref] = field(default_factory=dict)  # partition -> the line its latest own step was taken at
    # partition -> the leader epochs keyed (with it) in replayed_at, replayed_epochs and snapshot_before, so that
    # forgetting one partition does not read every other's
    _epochs_of: dict[F.TP, set[int]] = field(default_factory=dict, repr=False)

    def reached(self, tp: F.TP, epoch: int, entry: tuple) -> None:
        """The replay's own step reached ``epoch`` (``replayed_at``'s ``entry``)."""
        self.replayed_at[(tp, epoch)] = entry
        self.replayed_epochs.add((tp, epoch))
        self._epochs_of.setdefault(tp, set()).add(epoch)

    def first_stated_after_snapshot(self, tp: F.TP, epoch: int) -> None:
        """``epoch`` first stated while the registration held came from a snapshot load (``from_snapshot``)."""
        self.snapshot_before[(tp, epoch)] = self.from_snapshot[tp]
        self._epochs_of.setdefault(tp, set()).add(epoch)

    def forget(self, tp: F.TP) -> None:
        """The partition's incarnation is gone: its epochs with it."""
        for per_partition in (self.stated_epoch, self.replayed_since, self.before_skip, self.epoch_known_at,
                              self.from_snapshot, self.epoch_first_seen, self.min_epoch, self.epoch_decided,
                              self.stepped):
            per_partition.pop(tp, None)
        for epoch in self._epochs_of.pop(tp, ()):
            self.replayed_at.pop((tp, epoch), None)
            self.replayed_epochs.discard((tp, epoch))
            self.snapshot_before.pop((tp, epoch), None)
