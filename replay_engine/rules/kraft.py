"""KRaft mode: the quorum controller's decisions (``ReplicationControlManager``, ``PartitionChangeBuilder``,
``BrokerHeartbeatManager``, ``QuorumController``).

What changed: 3.2 marks an unclean leader RECOVERING (KIP-704); 3.3 registers a created partition with only
the active replicas in its ISR, leaving out those in controlled shutdown too (KAFKA-13916); 3.7 adds Eligible
Leader Replicas (KIP-966, behind the ``eligible.leader.replicas.version`` feature): the ISR may then shrink to
empty, the members that leave it below min.insync.replicas become ELR, and with an empty ISR a live ELR
member is a valid leader, found in *replica* order like an ISR member (``isValidNewLeader``).
"""
from __future__ import annotations

from typing import AbstractSet, Sequence

from replay_engine.kraft import election as K
from replay_engine.kraft.election import KraftElection
from replay_engine.rules.rule import Rule

PCB = "metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java"
RCM = "metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java"
QC = "metadata/src/main/java/org/apache/kafka/controller/QuorumController.java"
NO_LEADER_CHANGE = -2  # LeaderConstants.NO_LEADER_CHANGE: a record that leaves the leader as it is
BHM = "metadata/src/main/java/org/apache/kafka/controller/BrokerHeartbeatManager.java"


def elect_best_leader(replicas: Sequence[int], target_isr: Sequence[int], current_leader: int | None,
                      acceptable: AbstractSet[int], unclean: bool, elr: Sequence[int] = (),
                      elr_enabled: bool = False, last_known_elr: Sequence[int] = ()) -> KraftElection:
    """3.0-3.1: ``shouldTryElection`` only when the target ISR no longer holds the current leader (whether that leader
    is still acceptable is not asked); then ``BestLeader``: the first replica in the target ISR and acceptable, else
    (unclean allowed) the first acceptable replica with ISR = [it], else no leader."""
    isr = tuple(target_isr)
    if current_leader is not None and current_leader >= 0 and current_leader in isr:
        return KraftElection(current_leader, isr, "kept")
    return _best_leader(replicas, isr, acceptable, unclean)


def _best_leader(replicas: Sequence[int], isr: tuple[int, ...], acceptable: AbstractSet[int],
                 unclean: bool) -> KraftElection:
    for r in replicas:
        if r in isr and r in acceptable:
            return KraftElection(r, isr, "isr")
    if unclean:
        for r in replicas:
            if r in acceptable:
                return KraftElection(r, (r,), "unclean")
    return KraftElection(-1, isr, "none")


def preferred_best_leader(replicas: Sequence[int], isr: Sequence[int], current_leader: int | None,
                          acceptable: AbstractSet[int], elr: Sequence[int] = (),
                          elr_enabled: bool = False) -> KraftElection:
    """3.0-3.1 ``setAlwaysElectPreferredIfPossible(true)``: a partition not led by its first replica (or whose leader
    left the ISR) gets ``BestLeader``, the first replica in the ISR and acceptable, whichever it is: with the first
    replica unusable the leadership may still move to another one ahead of the current leader. Never unclean."""
    isr_t = tuple(isr)
    if replicas and current_leader == replicas[0] and current_leader in isr_t:
        return KraftElection(current_leader, isr_t, "kept")
    res = _best_leader(replicas, isr_t, acceptable, False)
    if res.leader >= 0 and replicas and res.leader == replicas[0]:
        return KraftElection(res.leader, isr_t, "preferred")
    if res.leader == current_leader:
        return KraftElection(res.leader, isr_t, "kept")
    return res


def elect_no_elr(replicas: Sequence[int], target_isr: Sequence[int], current_leader: int | None,
                 acceptable: AbstractSet[int], unclean: bool, elr: Sequence[int] = (),
                 elr_enabled: bool = False, last_known_elr: Sequence[int] = ()) -> KraftElection:
    """3.0-3.6: no ELR exists whatever the caller passes."""
    return K.elect(replicas, target_isr, current_leader, acceptable, unclean, (), False)


def elect_with_elr(replicas: Sequence[int], target_isr: Sequence[int], current_leader: int | None,
                   acceptable: AbstractSet[int], unclean: bool, elr: Sequence[int] = (),
                   elr_enabled: bool = False, last_known_elr: Sequence[int] = ()) -> KraftElection:
    """3.7+: ``isValidNewLeader(r) = (targetIsr.contains(r) || (targetIsr.isEmpty() && targetElr.contains(r)))
    && isAcceptableLeader(r)``, tried on the current leader, then on the replicas in order; an ELR winner becomes
    the sole ISR member. Then ``canElectLastKnownLeader``: ISR and ELR empty and ``lastKnownElr`` a single broker
    (the last leader, kept there by ``maybeUpdateLastKnownLeader``) -> it is elected as an unclean leader. Its
    liveness is only logged, not required (the ``isAcceptableLeader`` test there guards a trace line). Without the
    feature, as 3.0-3.6."""
    return _elect_elr(replicas, target_isr, current_leader, acceptable, unclean, elr, elr_enabled, last_known_elr,
                      last_known_acceptable=False)


def elect_with_elr_last_known_acceptable(replicas: Sequence[int], target_isr: Sequence[int],
                                         current_leader: int | None, acceptable: AbstractSet[int], unclean: bool,
                                         elr: Sequence[int] = (), elr_enabled: bool = False,
                                         last_known_elr: Sequence[int] = ()) -> KraftElection:
    """KAFKA-19522: as before, but ``canElectLastKnownLeader`` returns false when the last known leader is not an
    acceptable leader (fenced, shutting down, or the broker the event removes)."""
    return _elect_elr(replicas, target_isr, current_leader, acceptable, unclean, elr, elr_enabled, last_known_elr,
                      last_known_acceptable=True)


def _elect_elr(replicas: Sequence[int], target_isr: Sequence[int], current_leader: int | None,
               acceptable: AbstractSet[int], unclean: bool, elr: Sequence[int], elr_enabled: bool,
               last_known_elr: Sequence[int], last_known_acceptable: bool) -> KraftElection:
    if not elr_enabled:
        return elect_no_elr(replicas, target_isr, current_leader, acceptable, unclean)
    isr = tuple(target_isr)
    elr_set = set(elr)

    def valid(r: int) -> bool:
        return (r in isr or (not isr and r in elr_set)) and r in acceptable

    def won(r: int, how: str) -> KraftElection:
        if r not in isr and r in elr_set:
            return KraftElection(r, (r,), "elr")
        return KraftElection(r, isr, how)

    if current_leader is not None and current_leader >= 0 and valid(current_leader):
        return won(current_leader, "kept")
    for r in replicas:
        if valid(r):
            return won(r, "isr")
    if not isr and not elr_set and len(last_known_elr) == 1 and (
            not last_known_acceptable or last_known_elr[0] in acceptable):
        return KraftElection(last_known_elr[0], (last_known_elr[0],), "unclean")
    if unclean:
        for r in replicas:
            if r in acceptable:
                return KraftElection(r, (r,), "unclean")
    return KraftElection(-1, isr, "none")


def created_unfenced(replicas: Sequence[int], acceptable: AbstractSet[int],
                     shutting_down: AbstractSet[int] = frozenset()) -> tuple[int, tuple[int, ...]]:
    """3.0-3.2 createTopic: ``isr = brokerIds.filter(clusterControl::unfenced)``, leader ``isr.get(0)`` (a placed
    assignment holds only usable brokers, ``new PartitionRegistration(r, r, ..., r[0], 0, 0)``): a broker in
    controlled shutdown is still unfenced, so it joins the ISR and may lead. ``acceptable``: registered, unfenced
    and not shutting down; ``shutting_down``: unfenced brokers in controlled shutdown."""
    return _created(replicas, frozenset(acceptable) | frozenset(shutting_down))


def created_active(replicas: Sequence[int], acceptable: AbstractSet[int],
                   shutting_down: AbstractSet[int] = frozenset()) -> tuple[int, tuple[int, ...]]:
    """3.3+ createTopic: ``isr = replicas.filter(clusterControl::isActive)`` (unfenced and not in controlled
    shutdown), leader the first of them, leader epoch 0, partition epoch 0."""
    return _created(replicas, frozenset(acceptable))


def _created(replicas: Sequence[int], usable: AbstractSet[int]) -> tuple[int, tuple[int, ...]]:
    """No usable replica: Kafka refuses the creation (INVALID_REPLICA_ASSIGNMENT / INVALID_REPLICATION_FACTOR), so
    a record that exists anyway was made with brokers the replay does not hold usable: leader -1, ISR the replicas,
    for the judge to compare."""
    isr = tuple(x for x in replicas if x in usable)
    return (isr[0], isr) if isr else (-1, tuple(replicas))


def target_elr_none(isr: Sequence[int], target_isr: Sequence[int], elr: Sequence[int], min_isr: int,
                    elr_enabled: bool = False) -> tuple[int, ...]:
    """3.0-3.6: no Eligible Leader Replicas."""
    return ()


def target_elr(isr: Sequence[int], target_isr: Sequence[int], elr: Sequence[int], min_isr: int,
               elr_enabled: bool = False) -> tuple[int, ...]:
    """3.7+ ``maybePopulateTargetElr``'s ELR (see :func:`elr_populate`), no broker shut down uncleanly."""
    if not elr_enabled:
        return ()
    return elr_populate(isr, target_isr, elr, (), min_isr, frozenset(), True)[0]


def elr_populate_none(isr: Sequence[int], target_isr: Sequence[int], elr: Sequence[int],
                      last_known_elr: Sequence[int], min_isr: int, unclean_shutdown: AbstractSet[int] = frozenset(),
                      elr_enabled: bool = False) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """3.0-3.6: a registration has no ELR fields."""
    return (), ()


def elr_populate(isr: Sequence[int], target_isr: Sequence[int], elr: Sequence[int], last_known_elr: Sequence[int],
                 min_isr: int, unclean_shutdown: AbstractSet[int] = frozenset(),
                 elr_enabled: bool = False) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """3.7+ ``maybePopulateTargetElr`` -> (target ELR, target last known ELR), before the election. With the feature
    off they stay as registered. A target ISR of at least min.insync.replicas clears both; a smaller one makes ELR =
    (ELR + the current ISR) - the target ISR - the brokers shut down uncleanly (``uncleanShutdownReplicas``), and the
    last known ELR = (that union + the last known ELR) - the target ISR - the new ELR. Kafka collects them in a
    HashSet: ascending here, as a HashSet of small broker ids iterates."""
    if not elr_enabled:
        return tuple(elr), tuple(last_known_elr)
    if len(target_isr) >= min_isr:
        return (), ()
    target = set(target_isr)
    candidates = set(elr) | set(isr)
    new_elr = tuple(sorted(r for r in candidates if r not in target and r not in unclean_shutdown))
    candidates |= set(last_known_elr)
    return new_elr, tuple(sorted(r for r in candidates if r not in target and r not in new_elr))


def last_known_none(prev_leader: int, prev_last_known: Sequence[int], leader: int | None,
                    isr: Sequence[int] | None, target_last_known: Sequence[int],
                    elr_enabled: bool = False) -> tuple[int, ...] | None:
    """3.0-3.6: no last known ELR."""
    return None


def last_known_target(prev_leader: int, prev_last_known: Sequence[int], leader: int | None,
                      isr: Sequence[int] | None, target_last_known: Sequence[int],
                      elr_enabled: bool = False) -> tuple[int, ...] | None:
    """3.7: ``maybeUpdateRecordElr`` writes the target last known ELR where it differs (while the partition has no
    leader and the field holds one broker, that broker is kept); ``maybeUpdateLastKnownLeader`` then writes the
    leader of a partition whose ISR the record empties. ``leader``/``isr``: the record's (None: not set); the new
    value, or None when the record leaves it."""
    rec_leader = NO_LEADER_CHANGE if leader is None else leader
    target = tuple(target_last_known)
    if len(prev_last_known) == 1 and (rec_leader == -1 or rec_leader == NO_LEADER_CHANGE and prev_leader == -1):
        target = tuple(prev_last_known)
    out = target if target != tuple(prev_last_known) else None
    if elr_enabled and isr is not None and not isr and (len(prev_last_known) != 1
                                                        or prev_last_known[0] != prev_leader):
        out = (prev_leader,)
    return out


def last_known_leader(prev_leader: int, prev_last_known: Sequence[int], leader: int | None,
                      isr: Sequence[int] | None, target_last_known: Sequence[int],
                      elr_enabled: bool = False) -> tuple[int, ...] | None:
    """3.8+: the field holds the last known leader only (``useLastKnownLeaderInBalancedRecovery``;
    ``maybeUpdateRecordElr`` returns before writing it): ``maybeUpdateLastKnownLeader`` writes [the leader] when the
    record first empties the ISR, and clears it when the partition will have, or keeps, a leader."""
    if not elr_enabled:
        return None
    rec_leader = NO_LEADER_CHANGE if leader is None else leader
    if isr is not None and not isr and (len(prev_last_known) != 1 or prev_last_known[0] != prev_leader):
        return (prev_leader,)
    if (rec_leader >= 0 or (prev_leader != -1 and rec_leader != -1)) and prev_last_known:
        return ()
    return None


def isr_shrink_no_elr(isr: Sequence[int], gone: AbstractSet[int], elr_enabled: bool = False) -> tuple[int, ...]:
    return K.isr_without(isr, gone, False)


def isr_shrink_elr(isr: Sequence[int], gone: AbstractSet[int], elr_enabled: bool = False) -> tuple[int, ...]:
    return K.isr_without(isr, gone, elr_enabled)


def epoch_bump_on_shrink(old_leader, old_isr, new_leader, new_isr, target_isr=None) -> bool | None:
    """3.0-3.5: ``!Replicas.contains(targetIsr, partition.isr)`` -> ``record.setLeader(partition.leader)``: an ISR
    shrink bumps the leader epoch, a target ISR emptied by the leaving broker too (it is not written). None: no
    record (nothing changes); False: an ISR-only change, no new epoch."""
    return K.change_bumps_epoch(old_leader, old_isr, new_leader, new_isr, (3, 5, 0), target_isr)


def epoch_bump_leader_only(old_leader, old_isr, new_leader, new_isr, target_isr=None) -> bool | None:
    """3.6+: ``bumpLeaderEpochOnIsrShrink = metadataVersion.isLeaderEpochBumpRequiredOnIsrShrink() ||
    zkMigrationEnabled`` (true only below 3.6-IV0): only a new leader (or a reassignment) bumps the epoch."""
    return K.change_bumps_epoch(old_leader, old_isr, new_leader, new_isr, (3, 6, 0), target_isr)


def recovery_none() -> str:
    return "RECOVERED"


def recovery_recovering() -> str:
    return "RECOVERING"


def fenced_after(last_contact_us: int, now_us: int, session_timeout_ms: int = 9000) -> bool:
    """``broker.lastContactNs + sessionTimeoutNs >= time.nanoseconds()`` is a valid session; past it, fenced."""
    return last_contact_us + session_timeout_ms * 1000 < now_us


def controlled_shutdown_partitions() -> str:
    """``generateLeaderAndIsrUpdates("enterControlledShutdown", brokerId, NO_LEADER, ...,
    partitionsWithBrokerInIsr(brokerId))``: the broker leaves every ISR it is in; those it led get a new leader."""
    return "leave_isr_and_leadership"


def renounce_keep(offsets: Sequence[int], last_committed_offset: int | None) -> list[int]:
    """``snapshotRegistry.revertToSnapshot(lastCommittedOffset)``: records the old quorum leader appended after the
    last committed offset are undone; only those at or below it stand."""
    if last_committed_offset is None:
        return list(offsets)
    return [o for o in offsets if o <= last_committed_offset]


def failed_write_undone_unknown(exception: str | None) -> bool:
    """3.0-3.2: records are handed to Raft (``scheduleAppend``) before the active controller applies them; a failed
    event may have appended them already, so the lines alone do not say whether they were rolled back."""
    return False


def failed_write_undone(exception: str | None) -> bool:
    """3.3+: the active controller applies an event's records before handing them to Raft; a ``NotLeaderException``
    is Raft refusing them (3.3-3.8 ``scheduleAtomicAppend``, 3.9 ``prepareAppend`` / ``schedulePreparedAppend``: "Append
    failed" / "Flush failed because the replica is not the current leader"), so they never reached the log, and
    ``renounce()`` reverts what was applied."""
    return exception == "NotLeaderException"


def registration_cleanup_none() -> bool:
    """3.0-3.7: registerBroker writes only the RegisterBrokerRecord (3.7 logs an unclean shutdown at DEBUG, "TODO
    (KIP-966)")."""
    return False


def registration_cleanup() -> bool:
    """3.8+: registerBroker first asks brokerUncleanShutdownHandler for records (QuorumController
    .handleUncleanBrokerShutdown -> ReplicationControlManager.handleBrokerUncleanShutdown, with an ELR-capable metadata
    version): PartitionChangeRecords taking the broker out of every ISR and ELR, appended before its
    RegisterBrokerRecord in the same event. 3.8 on an unclean shutdown detected (previous broker epoch not the one
    registered), 3.9+ on every new incarnation."""
    return True


def alter_partition_valid(replicas, leader, new_isr, eligible=frozenset()) -> bool:
    """3.0-3.2 ``alterIsr`` (3.2 ``validateAlterPartitionData``): the new ISR is a set of assigned replicas
    (``Replicas.validateIsr``) that holds the leader; what the leader asks is written."""
    isr = list(new_isr)
    return len(set(isr)) == len(isr) and (replicas is None or set(isr) <= set(replicas)) and leader in isr


def alter_partition_eligible(replicas, leader, new_isr, eligible=frozenset()) -> bool:
    """3.3+ (KIP-841) adds ``ineligibleReplicasForIsr``: every member of the new ISR must be registered, not in
    controlled shutdown and not fenced, else INELIGIBLE_REPLICA and no record."""
    return alter_partition_valid(replicas, leader, new_isr) and set(new_isr) <= set(eligible)


ELECTION = "kraft.election"
CREATED = "kraft.election.created"
TARGET_ELR = "kraft.elr.target"
ELR_POPULATE = "kraft.elr.populate"
REGISTRATION_CLEANUP = "kraft.registration.cleanup"
LAST_KNOWN = "kraft.elr.last_known"
PREFERRED = "kraft.election.preferred"
ISR_SHRINK = "kraft.isr_shrink"
RECOVERY = "kraft.unclean.recovery_state"
UNCLEAN_DEFAULT = "kraft.unclean.default"
FENCING = "kraft.broker.fencing"
CONTROLLED_SHUTDOWN = "kraft.controlled_shutdown"
RENOUNCE = "kraft.renounce"
RENOUNCE_FAILED_WRITE = "kraft.renounce.failed_write"
EPOCH_BUMP = "kraft.leader_epoch_bump"
ALTER_PARTITION = "kraft.alter_partition"

RULES = [
    Rule("registration writes nothing else", REGISTRATION_CLEANUP, (3, 0, 0), (3, 8, 0), registration_cleanup_none,
         ("3.7.0", "metadata/src/main/java/org/apache/kafka/controller/ClusterControlManager.java",
          "ClusterControlManager.registerBroker"),
         "A broker's registration is one RegisterBrokerRecord."),
    Rule("handleBrokerUncleanShutdown's changes come first", REGISTRATION_CLEANUP, (3, 8, 0), None,
         registration_cleanup, ("3.8.0", RCM, "ReplicationControlManager.handleBrokerUncleanShutdown"),
         "Before the RegisterBrokerRecord of a new incarnation (3.8: of a broker whose previous broker epoch does not "
         "match, an unclean shutdown), PartitionChangeRecords take the broker out of every ISR and ELR and never "
         "elect it (brokerWithUncleanShutdown), with an ELR-capable metadata version."),
    Rule("AlterPartition: ISR of assigned replicas holding the leader", ALTER_PARTITION, (3, 0, 0), (3, 3, 0),
         alter_partition_valid, ("3.0.0", RCM, "ReplicationControlManager.alterIsr"),
         "A leader's AlterPartition is written when its new ISR is a set of assigned replicas that holds the leader "
         "(and its leader and partition epochs are current)."),
    Rule("AlterPartition: every ISR member eligible (KIP-841)", ALTER_PARTITION, (3, 3, 0), None,
         alter_partition_eligible, ("3.5.1", RCM, "ReplicationControlManager.ineligibleReplicasForIsr"),
         "As before, and every member of the new ISR registered, unfenced and not in controlled shutdown; otherwise "
         "INELIGIBLE_REPLICA and no record."),
    Rule("shouldTryElection, then BestLeader", ELECTION, (3, 0, 0), (3, 2, 0), elect_best_leader,
         ("3.0.0", PCB, "PartitionChangeBuilder.shouldTryElection"),
         "An election only when the target ISR no longer holds the current leader; then the first replica in the "
         "target ISR and acceptable (`BestLeader`); else, unclean allowed, the first acceptable replica with ISR = "
         "[it]; else no leader (-1)."),
    Rule("PartitionChangeBuilder without ELR", ELECTION, (3, 2, 0), (3, 7, 0), elect_no_elr,
         ("3.4.0", PCB, "PartitionChangeBuilder.electAnyLeader"),
         "The current leader if it stays in the target ISR and is acceptable (registered, unfenced, not shutting "
         "down); else the first replica in the target ISR and acceptable; else, unclean allowed, the first "
         "acceptable replica with ISR = [it]; else no leader (-1)."),
    Rule("PartitionChangeBuilder with ELR (KIP-966)", ELECTION, (3, 7, 0), (4, 2, 0), elect_with_elr,
         ("3.7.0", PCB, "PartitionChangeBuilder.electAnyLeader"),
         "As before, with `isValidNewLeader` also accepting an ELR member when the target ISR is empty, in replica "
         "order; an ELR winner becomes the sole ISR member; with ISR and ELR empty, a single lastKnownElr member "
         "(the last leader) is elected unclean (`canElectLastKnownLeader`). Needs eligible.leader.replicas.version "
         ">= 1."),
    Rule("ELR, a last known leader only if acceptable (KAFKA-19522)", ELECTION, (4, 2, 0), None,
         elect_with_elr_last_known_acceptable, ("3.9.0-rc3", PCB, "PartitionChangeBuilder.canElectLastKnownLeader"),
         "As with ELR, and the last known leader is elected only if it is an acceptable leader (the function as of "
         "3.9.0-rc3, changed by KAFKA-19522, apache/kafka#20200). Merged to trunk on "
         "2025-07-19, after the 4.1 branch was cut (2025-07-06): 4.2.0 is the first release taken to hold it (the "
         "mirror has no 4.x tag; a real 4.2.0 controller log of the shared evidence leaves a fenced last known leader "
         "unelected). A backport to 4.1.x is not known here."),
    Rule("alwaysElectPreferredIfPossible: BestLeader", PREFERRED, (3, 0, 0), (3, 2, 0), preferred_best_leader,
         ("3.0.0", PCB, "PartitionChangeBuilder.setAlwaysElectPreferredIfPossible"),
         "A partition not led by its first replica gets `BestLeader`: the first replica in the ISR and acceptable, "
         "which need not be the first replica; never unclean."),
    Rule("first replica if in ISR and acceptable", PREFERRED, (3, 2, 0), None, K.elect_preferred,
         ("3.7.0", PCB, "PartitionChangeBuilder.electPreferredLeader"),
         "Election.PREFERRED: the first replica if valid, else as an ordinary election, never unclean."),
    Rule("createTopic: unfenced replicas form the ISR", CREATED, (3, 0, 0), (3, 3, 0), created_unfenced,
         ("3.0.0", RCM, "ReplicationControlManager.createTopic"),
         "ISR = the assigned replicas that are unfenced (a broker in controlled shutdown included), leader the first "
         "of them, leader epoch 0, partition epoch 0; none unfenced: the creation is refused."),
    Rule("createTopic: active replicas form the ISR (KAFKA-13916)", CREATED, (3, 3, 0), None, created_active,
         ("3.3.0", RCM, "ReplicationControlManager.createTopic"),
         "ISR = the assigned replicas that are `isActive` (unfenced, not in controlled shutdown), leader the first "
         "of them, epochs 0; none active: the creation is refused (\"are fenced or in controlled shutdown\")."),
    Rule("no ELR", TARGET_ELR, (3, 0, 0), (3, 7, 0), target_elr_none,
         ("3.4.0", PCB, "PartitionChangeBuilder.build"), "No Eligible Leader Replicas before KIP-966."),
    Rule("maybePopulateTargetElr (KIP-966)", TARGET_ELR, (3, 7, 0), None, target_elr,
         ("3.7.0", PCB, "PartitionChangeBuilder.maybePopulateTargetElr"),
         "Before the election: a target ISR at or above min.insync.replicas clears the ELR; below it, ELR = (ELR + "
         "current ISR) - target ISR, without unclean-shutdown brokers. Needs eligible.leader.replicas.version >= 1."),
    Rule("no ELR fields", ELR_POPULATE, (3, 0, 0), (3, 7, 0), elr_populate_none,
         ("3.4.0", PCB, "PartitionChangeBuilder.build"), "No Eligible Leader Replicas before KIP-966."),
    Rule("maybePopulateTargetElr with unclean shutdowns and the last known ELR", ELR_POPULATE, (3, 7, 0), None,
         elr_populate, ("3.9.0-rc3", PCB, "PartitionChangeBuilder.maybePopulateTargetElr"),
         "Before the election: a target ISR at or above min.insync.replicas clears ELR and last known ELR; below it, "
         "ELR = (ELR + current ISR) - target ISR - unclean-shutdown replicas, last known ELR = (that union + last "
         "known ELR) - target ISR - ELR. Needs eligible.leader.replicas.version >= 1."),
    Rule("no last known ELR", LAST_KNOWN, (3, 0, 0), (3, 7, 0), last_known_none,
         ("3.4.0", PCB, "PartitionChangeBuilder.build"), "No last known ELR before KIP-966."),
    Rule("the target last known ELR written", LAST_KNOWN, (3, 7, 0), (3, 8, 0), last_known_target,
         ("3.7.0", PCB, "PartitionChangeBuilder.maybeUpdateRecordElr"),
         "The target last known ELR is written where it differs (a single member kept while leaderless); a record "
         "emptying the ISR writes [the leader] (maybeUpdateLastKnownLeader)."),
    Rule("the last known leader only", LAST_KNOWN, (3, 8, 0), None, last_known_leader,
         ("3.8.0", PCB, "PartitionChangeBuilder.maybeUpdateLastKnownLeader"),
         "useLastKnownLeaderInBalancedRecovery: a record first emptying the ISR writes [the leader]; one that gives "
         "the partition a leader, or keeps it, clears the field."),
    Rule("ISR shrink keeps the last member", ISR_SHRINK, (3, 0, 0), (3, 7, 0), isr_shrink_no_elr,
         ("3.4.0", PCB, "PartitionChangeBuilder.build"),
         "The fenced / shutting-down broker is removed from the target ISR; `if (record.isr() == null && "
         "!targetIsr.isEmpty() && ...)`: an empty target ISR is not written, the last member stays."),
    Rule("ISR may shrink to empty with ELR", ISR_SHRINK, (3, 7, 0), None, isr_shrink_elr,
         ("3.7.0", PCB, "PartitionChangeBuilder.maybePopulateTargetElr"),
         "With ELR enabled the empty ISR is written (`!targetIsr.isEmpty() || eligibleLeaderReplicasEnabled`) and "
         "members leaving an ISR below min.insync.replicas become ELR."),
    Rule("ISR shrink bumps the leader epoch", EPOCH_BUMP, (3, 0, 0), (3, 6, 0), epoch_bump_on_shrink,
         ("3.5.0", PCB, "PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded"),
         "A new leader, a shrunk ISR (`!Replicas.contains(targetIsr, partition.isr)`) or a shrunk replica set "
         "sets the leader field, so the leader epoch goes up; a change that changes nothing writes no record."),
    Rule("only a leader change bumps the epoch (KAFKA-15021)", EPOCH_BUMP, (3, 6, 0), None, epoch_bump_leader_only,
         ("3.6.0", PCB, "PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded"),
         "From metadata version 3.6-IV0 (`isLeaderEpochBumpRequiredOnIsrShrink`) an ISR shrink raises only the "
         "partition epoch; the Kafka release stands in for the metadata version when the evidence does not state it."),
    Rule("unclean leader: no recovery state", RECOVERY, (3, 0, 0), (3, 2, 0), recovery_none,
         ("3.0.0", PCB, "PartitionChangeBuilder.BestLeader"), "ISR = [the unclean leader]; no LeaderRecoveryState."),
    Rule("unclean leader RECOVERING (KIP-704)", RECOVERY, (3, 2, 0), None, recovery_recovering,
         ("3.2.0", PCB, "PartitionChangeBuilder.tryElection"),
         "`record.setLeaderRecoveryState(LeaderRecoveryState.RECOVERING.value())` with ISR = [leader], until the "
         "leader reports RECOVERED."),
    Rule("unclean.leader.election.enable false", UNCLEAN_DEFAULT, (3, 0, 0), None, lambda: "false",
         ("3.0.0", "core/src/main/scala/kafka/server/KafkaConfig.scala", "Defaults.UncleanLeaderElectionEnable"),
         "Every KRaft release defaults to false."),
    Rule("fenced after broker.session.timeout.ms without heartbeat", FENCING, (3, 0, 0), None, fenced_after,
         ("3.0.0", BHM, "BrokerHeartbeatManager.hasValidSession"),
         "`broker.lastContactNs + sessionTimeoutNs >= time.nanoseconds()` (broker.session.timeout.ms, default "
         "9000); a stale broker is fenced and its partitions handled as by handleBrokerFenced."),
    Rule("enterControlledShutdown: leave ISRs and leadership", CONTROLLED_SHUTDOWN, (3, 0, 0), None,
         controlled_shutdown_partitions, ("3.0.0", RCM, "ReplicationControlManager.generateLeaderAndIsrUpdates"),
         "`partitionsWithBrokerInIsr(brokerId)` get a PartitionChangeRecord without the broker, which is no longer "
         "an acceptable leader."),
    Rule("renounce reverts uncommitted records", RENOUNCE, (3, 0, 0), None, renounce_keep,
         ("3.0.0", QC, "QuorumController.renounce"),
         "`snapshotRegistry.revertToSnapshot(lastCommittedOffset)`: what the old quorum leader appended but did "
         "not commit is rolled back."),
    Rule("a failed write may already be in the log", RENOUNCE_FAILED_WRITE, (3, 0, 0), (3, 3, 0),
         failed_write_undone_unknown, ("3.0.0", QC, "QuorumController.ControllerWriteEvent.run"),
         "`raftClient.scheduleAppend` comes before `replay`: when the event fails and the controller renounces, the "
         "records it applied may already be in the Raft log; the lines do not say which."),
    Rule("a write Raft refused is undone", RENOUNCE_FAILED_WRITE, (3, 3, 0), None, failed_write_undone,
         ("3.9.0-rc3", QC, "QuorumController.ControllerWriteEvent.run"),
         "`replay` (which logs \"Replayed ...\") comes before the records are handed to Raft; a NotLeaderException "
         "from Raft (the append or flush refused) fails the event, `handleEventException` calls `renounce()` and "
         "`OffsetControlManager.deactivate` reverts to the last stable offset: the event's records are discarded."),
]
