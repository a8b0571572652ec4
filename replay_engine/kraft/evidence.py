"""What KRaft broker and controller log lines state beyond their own event, for a replay with logs only.

The quorum controller names partitions by topic id; the brokers name them by topic and id together
("Leader t-0 with topic id Some(<id>) starts at leader epoch ..."). And a 4.x ``PartitionChangeBuilder`` line
states the registration the change started from. Pure functions over events.
"""
from __future__ import annotations

import bisect
from typing import Any, Iterable, Sequence

from parsers.schema import Event


def topic_names_from_lines(events: Iterable[Event]) -> dict[str, str]:
    """Topic id -> name, from every event that states both (a name seen first wins, as a topic id never changes
    name; a recreated topic gets a new id)."""
    out: dict[str, str] = {}
    for e in events:
        tid = (e.detail or {}).get("topic_id")
        if tid and e.topic and not e.topic.startswith("topic-id:"):
            out.setdefault(str(tid), e.topic)
    return out


def previous_registration(detail: dict[str, Any]) -> dict[str, Any] | None:
    """The partition registration a logged change started from (replicas, ISR, ELR, leader, epochs), if stated."""
    if detail.get("previous_replicas") is None or detail.get("previous_isr") is None \
            or detail.get("previous_leader") is None:
        return None
    return {
        "replicas": tuple(detail["previous_replicas"]),
        "isr": tuple(detail["previous_isr"]),
        "elr": tuple(detail.get("previous_elr") or ()),
        "last_known_elr": tuple(detail.get("previous_last_known_elr") or ()),
        "leader": int(detail["previous_leader"]),
        "leader_epoch": detail.get("previous_leader_epoch"),
        "partition_epoch": detail.get("previous_partition_epoch"),
    }


def broker_event_of(candidates: tuple[tuple[str, int], ...], isr: Sequence[int] | None, leader: int | None,
                    elr: Sequence[int] = ()) -> tuple[str, int] | None:
    """Which of the broker events a PartitionChangeRecord may belong to (``kraft_pass.broker_events``) wrote it.

    Each event iterates only its own partitions (3.5.1 .. 3.9.0-rc3 ReplicationControlManager): a broker leaving
    (enterControlledShutdown, handleBrokerFenced, handleBrokerUnregistered) those with it in the ISR
    (``brokersToIsrs.partitionsWithBrokerInIsr``; from 3.9 with ELR also ``partitionsWithBrokerInElr``), an unfenced
    broker (handleBrokerUnfenced) those with no leader (``partitionsWithNoLeader``), a new incarnation's
    handleBrokerUncleanShutdown (3.8+) those with it in the ISR or ELR. The first candidate, in log
    order, whose partitions hold the record's partition as the replay knows it before the record; None when none
    does (a change of another kind that shares the batch). With the partition unknown, the first."""
    if not candidates:
        return None
    if isr is None:
        return candidates[0]
    for role, b in candidates:
        if role == "add" and (leader is None or leader < 0):
            return role, b
        if role in ("remove", "unclean_shutdown") and (b in isr or b in elr):
            return role, b
    return None


def unjudged_epoch_reason(known_epoch: int | None, stated_epoch: int, replay_decided_epoch: bool) -> str:
    """Why a leader epoch a broker states it started (Partition.makeLeader / makeFollower log one line per new
    leader epoch, 3.x and 4.x) is not judged by a replay with logs only, where the quorum controller logs its
    PartitionChangeRecords at DEBUG (ReplicationControlManager.replay, 3.3 to 4.x).

    ``known_epoch``: the partition's leader epoch as the replay held it before the line; ``replay_decided_epoch``:
    whether the replay itself took a decision that ended at ``stated_epoch`` (its outcome then sits in another
    broker's line of the same epoch, or was superseded)."""
    if known_epoch is None:
        return "leader epoch: partition unknown before the line"  # kraft.UNKNOWN_BEFORE
    if stated_epoch <= known_epoch:
        return "leader epoch: stated again after a later one was known (a broker restating an older registration)"
    if replay_decided_epoch:
        return "leader epoch: the replay's decision at this epoch was superseded before a broker stated it"
    if stated_epoch > known_epoch + 1:
        return "leader epoch: the epochs before it were decided in steps no line at INFO shows (state unknown)"
    return "leader epoch: decided in a step the replay did not re-run (logged at DEBUG only)"


def unseen_partition_changes(known_partition_epoch: int | None, replayed_since: int,
                             stated_partition_epoch: int | None) -> int | None:
    """How many PartitionChangeRecords came between the registration the replay holds and the one a broker states.

    Every PartitionChangeRecord raises the partition epoch by one (3.9 PartitionRegistration.merge:
    ``partitionEpoch + 1``), the ISR-only ones too; a broker states the partition epoch with each new leader epoch
    (Partition.makeLeader / makeFollower) and with each ISR it takes up ("ISR updated to ... and version updated
    to N"). ``replayed_since``: records the replay wrote itself since it last learned the partition epoch. None
    when either epoch is unknown; 0 when the stated registration follows the known one directly."""
    if known_partition_epoch is None or stated_partition_epoch is None:
        return None
    return max(0, stated_partition_epoch - (known_partition_epoch + replayed_since) - 1)


def stated_within_replayed(known_partition_epoch: int | None, stated_partition_epoch: int | None,
                           replayed_since: int) -> bool:
    """True when a broker's line states a partition epoch the replay's own steps already went past.

    Each of the replay's changes is one PartitionChangeRecord, so one partition epoch (3.9
    PartitionRegistration.merge); a line at a partition epoch between the one last stated and the replay's
    latest is a broker catching up on those steps (brokers apply committed records later than the quorum
    controllers log them), not a sign that the steps never happened."""
    if known_partition_epoch is None or stated_partition_epoch is None or replayed_since <= 0:
        return False
    return known_partition_epoch < stated_partition_epoch < known_partition_epoch + replayed_since


# A log line's time is to the millisecond: an event started within the last millisecond before its stated start.
_MS = 1000


def reverted_on_renounce(events: list[Event]) -> dict[int, int]:
    """Index of a record-replay line -> index of the renounce that rolled the record back.

    An active quorum controller applies each record it writes before the record is committed (3.9
    QuorumController.ControllerWriteEvent.run: ``replay(...)`` right after ``raftClient.prepareAppend``, before
    ``schedulePreparedAppend``), logging registration and topic records ("Replayed ..."); once committed, an active
    controller does not apply them again (QuorumMetaLogListener.handleCommit). When the event fails and the
    controller renounces (handleEventException -> ``renounce()`` -> OffsetControlManager.deactivate ->
    ``snapshotRegistry.revertToSnapshot(lastStableOffset)``), what that event applied is undone and never reaches a
    broker. The event ran on the controller's single event thread during the ``processing_us`` the failure line
    states, so every record line of that controller in that window belongs to it.

    A renounce on a metadata log event ("Renouncing the leadership due to a metadata log event ... Reverting to last
    stable offset N") reverts too, but which of the lines before it were past offset N no line says: those are left
    standing (see :func:`renounces`)."""
    marks = [j for j, r in enumerate(events) if r.event_type == "kraft_renounce_on_error" and r.ts is not None
             and (r.detail or {}).get("processing_us") is not None]
    if not marks:
        return {}
    by_writer: dict[object, list[tuple[int, int]]] = {}
    fencing: dict[object, list[tuple[int, int]]] = {}
    for i, e in enumerate(events):
        if e.ts is not None and e.source_kind == "broker_log":
            if "Replayed " in (e.raw or "")[:200]:
                by_writer.setdefault(e.broker_id, []).append((e.ts, i))
            elif e.event_type == "broker_heartbeat_timeout":
                fencing.setdefault(e.broker_id, []).append((e.ts, i))
    for lines in (*by_writer.values(), *fencing.values()):
        lines.sort()
    out: dict[int, int] = {}
    for j in marks:
        r = events[j]
        d = r.detail or {}
        lines = by_writer.get(d.get("renounced_by"), [])
        lo = bisect.bisect_left(lines, (r.ts - int(d["processing_us"]) - _MS, -1))
        hi = bisect.bisect_right(lines, (r.ts, len(events)))
        for _, i in lines[lo:hi]:
            out.setdefault(i, j)
        if d.get("operation") == FENCE_EVENT:
            # The failed event is the periodic fence, which logs "Fencing broker N because its session has timed
            # out" and fences that one broker (3.5.1 .. 3.9.0-rc3 QuorumController.rescheduleMaybeFenceStaleBrokers,
            # ReplicationControlManager.maybeFenceOneStaleBroker): its last such line before the failure is undone
            # with the records. (Its stated processing time runs on the monotonic clock, which a suspended host
            # stops while the lines' wall clock goes on, so the window above may begin after the line.)
            mine = fencing.get(d.get("renounced_by"), [])
            k = bisect.bisect_right(mine, (r.ts, len(events))) - 1
            if k >= 0:
                out.setdefault(mine[k][1], j)
    return out


# QuorumController.MAYBE_FENCE_REPLICAS (3.5.1 .. 3.9.0-rc3): the name a failed periodic fence logs
FENCE_EVENT = "maybeFenceReplicas"


def renounce_findings(events: list[Event], undone: dict[int, list[Event]]) -> list[dict[str, Any]]:
    """Findings: each renounce whose rolled-back records the replay discarded (``undone``: index of the renounce
    line -> the record lines it undid), and, once, how many renounces reverted records no line identifies."""
    from replay_engine.zk.from_events import ref_of

    out: list[dict[str, Any]] = []
    for j in sorted(undone):
        r, lines = events[j], undone[j]
        d = r.detail or {}
        if all(e.source_kind == "kraft_metadata" for e in lines):
            offsets = sorted(e.source_pos for e in lines if e.source_pos is not None)
            out.append({
                "kind": "kraft_uncommitted_reverted", "ts": r.ts, "controller": d.get("renounced_by"),
                "rule": "kraft.renounce",
                "cite": "3.0.0 metadata/src/main/java/org/apache/kafka/controller/QuorumController.java "
                        "QuorumController.renounce",
                "text": f"quorum controller {d.get('renounced_by')} renounced the leadership of epoch "
                        f"{d.get('previous_epoch')} and reverted to offset {d.get('reverted_to_offset')}: "
                        f"{len(lines)} record(s) of that epoch in the metadata log (offsets {offsets[0]}-{offsets[-1]}) "
                        "are past it and no later epoch's batch follows them, so they were never committed; the "
                        "replay discards them",
                "evidence": [ref_of(r).to_json()] + [ref_of(e).to_json() for e in lines]})
            continue
        what = "; ".join(sorted({(e.raw or "").split("Replayed ", 1)[-1].split(":", 1)[0][:120]
                                 if "Replayed " in (e.raw or "") else e.event_type for e in lines}))
        out.append({
            "kind": "kraft_uncommitted_reverted", "ts": r.ts, "controller": d.get("renounced_by"),
            "rule": "kraft.renounce.failed_write",
            "cite": "3.9.0-rc3 metadata/src/main/java/org/apache/kafka/controller/QuorumController.java "
                    "QuorumController.ControllerWriteEvent.run / handleEventException / renounce",
            "text": f"quorum controller {d.get('renounced_by')} applied {len(lines)} record(s) ({what}) in "
                    f"{d.get('operation')}, which failed with {d.get('exception')} at epoch {d.get('previous_epoch')}; "
                    f"it renounced and reverted to committed offset {d.get('reverted_to_offset')}: the records were "
                    "never committed, and the replay discards them",
            "evidence": [ref_of(r).to_json()] + [ref_of(e).to_json() for e in lines]})
    other = [e for j, e in enumerate(events) if j not in undone and (
        e.event_type == "kraft_renounce_on_error" or e.event_type == "kraft_leader_change"
        and (e.detail or {}).get("via") == "renounced")]
    if other:
        out.append({
            "kind": "kraft_renounces", "ts": other[0].ts, "count": len(other), "rule": "kraft.renounce",
            "text": f"{len(other)} time(s) an active quorum controller renounced and reverted to its last committed / "
                    "stable offset with no record line of its own identified as rolled back (the lines carry no "
                    "offsets); records it applied past that offset, if any, are not discarded by the replay",
            "evidence": [ref_of(e).to_json() for e in other[:20]]})
    return out


def quorum_epoch_holes(events: Iterable[Event]) -> list[tuple[int, int, int, int]]:
    """Stretches the evidence lost: (from, to, first missing epoch, last missing epoch).

    Every quorum epoch is begun by a node that logs entering it (Raft QuorumState.transitionTo: "Completed transition
    to CandidateState(... epoch=E ...)", or to Leader / FollowerState / Unattached / Voted / Resigned, each naming
    the epoch of the state it left too), and every
    running quorum controller logs the epochs it learns ("In the new epoch E, the leader is L"). Epoch numbers only
    grow by one at a time, so an epoch between two logged ones that no line names was logged and then lost (rotated
    files overwritten, hours not kept): between the last line of the epoch before and the first of the epoch after,
    the evidence is incomplete. Before the first epoch seen is the evidence's start, not a hole."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for e in events:
        if e.event_type in ("kraft_leader_change", "kraft_quorum_epoch") and e.controller_epoch is not None \
                and e.ts is not None and e.source_kind != "kraft_metadata":
            for ep in {int(e.controller_epoch), (e.detail or {}).get("from_epoch")} - {None}:
                first[ep] = min(first.get(ep, e.ts), e.ts)
                last[ep] = max(last.get(ep, e.ts), e.ts)
    eps = sorted(first)
    return [(last[a], max(last[a], first[b]), a + 1, b - 1) for a, b in zip(eps, eps[1:]) if b > a + 1]


def hole_between(holes: list[tuple[int, int, int, int]], since: int | None, until: int) -> tuple | None:
    """The first hole overlapping (since, until], if any; since None: the partition was never known before."""
    if since is None:
        return None
    for h in holes:
        if h[0] < until and h[1] > since:
            return h
    return None


def hole_since_quorum_epoch(holes: list[tuple[int, int, int, int]], epoch: int, until: int) -> tuple | None:
    """The first hole holding quorum epoch ``epoch`` or a later one, begun before ``until``."""
    for h in holes:
        if h[3] >= epoch and h[0] < until:
            return h
    return None


def departure_findings(comparisons: list, version) -> list[dict[str, Any]]:
    """Each diverged KRaft comparison as a finding naming the rule the recorded decision departed from (the rule
    table's row for the version that wrote the evidence, with the tag, file and function it was read from)."""
    from replay_engine import rules as R

    out: list[dict[str, Any]] = []
    for c in comparisons:
        if c.verdict != "diverged":
            continue
        how = c.how or ""
        decision = ("kraft.alter_partition" if how.startswith("AlterPartition") else "kraft.isr_shrink") \
            if "leader" not in (c.replayed or {}) else (
            "kraft.election.preferred" if "preferred" in how else "kraft.election")
        out.append(R.departure(c, decision, version, how))
    return out


def uncommitted_in_metadata_log(events: list[Event], keep) -> dict[int, int]:
    """Index of a ``__cluster_metadata`` record -> index of the renounce line that shows it was never committed.

    A renounce line names the epoch the controller led and the offset it reverted to (3.9 "We were the leader at
    epoch E ... Reverting to last stable offset N"; "... at epoch E ... reverting to the last committed offset
    N"): what it appended in epoch E past N was not committed then, and ``keep(offsets, N)`` (the rule row
    ``kraft.renounce``) says which stand. Such a record may still have been committed by the next leader, if it
    reached it: a batch of a later epoch after it in the same log proves that (Raft's log matching: that log was
    the later leader's). Only records no later-epoch batch follows in their node's log are discarded."""
    marks = [(j, e) for j, e in enumerate(events) if e.event_type in ("kraft_renounce_on_error", "kraft_leader_change")
             and (e.detail or {}).get("reverted_to_offset") is not None
             and (e.detail or {}).get("previous_epoch") is not None]
    if not marks:
        return {}
    # per node's log (its directory): record indexes by batch epoch, and the highest offset of each epoch
    logs: dict[str, dict[int, list[int]]] = {}
    for i, e in enumerate(events):
        if e.source_kind == "kraft_metadata" and (e.detail or {}).get("snapshot_offset") is None \
                and e.source_pos is not None and e.controller_epoch is not None:
            logs.setdefault((e.source_file or "").rsplit("/", 1)[0], {}).setdefault(int(e.controller_epoch), []).append(i)
    top = {log: {e: max(events[k].source_pos for k in ks) for e, ks in by_epoch.items()} for log, by_epoch in logs.items()}
    out: dict[int, int] = {}
    for j, r in marks:
        epoch, offset = int(r.detail["previous_epoch"]), int(r.detail["reverted_to_offset"])
        for log, by_epoch in logs.items():
            mine = by_epoch.get(epoch, [])
            later = max((o for e, o in top[log].items() if e > epoch), default=-1)
            kept = set(keep([events[i].source_pos for i in mine], offset))
            for i in mine:
                if events[i].source_pos not in kept and events[i].source_pos >= later:
                    out.setdefault(i, j)
    return out
