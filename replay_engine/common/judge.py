"""Judging: a record of the real controller against the replay's decision (or one re-derived at the record).

Every record that could be judged gets a :class:`Comparison` whose verdict is ``agreed``, ``diverged`` or
``unknown``; an unknown verdict carries the reason it could not be judged (an evidence gap, too little known
about the partition, ...). Nothing here changes the replay's state: the functions read the controller's view
through a frozen :class:`JudgeView` built at the record and return verdicts as data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import AbstractSet, Any, Mapping

from replay_engine.zk import elections as E
from replay_engine.common import facts as F
from replay_engine import rules as R
from replay_engine.common.config import UNCLEAN, ConfigImage, as_bool
from replay_engine.zk.from_events import Coverage
from replay_engine.common.partition import Decision, PState
from replay_engine.common.states import OFFLINE, ONLINE

# A recorded decision is matched with a replayed one made at most this long before it.
MATCH_WINDOW_US = 10 * 60 * 1_000_000

AGREED, DIVERGED, UNKNOWN = "agreed", "diverged", "unknown"
_APPLIED_KEPT = 4  # applied decisions kept per partition for a record that may follow

# Why a record was left unjudged. Those starting with EVIDENCE_GAP count as evidence gaps in the agreement.
EVIDENCE_GAP = "evidence gap"
GAP = "evidence gap (decided on a state the evidence does not show)"
# The partition's history restarted (its topic, or ZooKeeper's data, was recreated) and no line shows the new history's
# beginning: the record was decided on a state set in time the evidence does not cover.
NEW_HISTORY = "evidence gap (history restarted: leader epoch or znode version went back)"
UNSEEN = ("evidence gap (no line before the record states the partition's ISR or leader epoch: they were set before "
          "the evidence, or its new ZooKeeper data, begins)")
def epochs_hole(epochs: tuple[int, ...]) -> str:
    """A record decided on a state changed in controller epochs that no line of the evidence names (logs only)."""
    spans, start = [], epochs[0]
    for a, b in zip(epochs, epochs[1:] + (None,)):
        if b != a + 1:
            spans.append(str(start) if start == a else f"{start}-{a}")
            start = b
    return (f"{EVIDENCE_GAP} (controller epoch(s) {', '.join(spans)} in no line: the partition's state changed under "
            "controllers whose every line is missing from the evidence)")


# The replay held brokers eligible (or not) that the record, by the same rule, shows the other way: not a hole in the
# evidence but the replay's state contradicted. The record's state is adopted (replay_engine.common.brokers) and the record
# counts against the agreement.
ADOPTED = "state adopted from the record"


def unseen(p: PState) -> bool:
    """Logs only: nothing the evidence holds has stated the partition's ISR or leader epoch since its history began
    (the first lines of the evidence, or of new ZooKeeper data, come after they were set)."""
    return p.isr is None and p.leader_epoch is None


def unseen_reason(brokers) -> str:
    return (f"evidence gap (no line before the record states the registration of broker(s) "
            f"{', '.join(map(str, sorted(brokers)))}, and the outcome depends on it: the evidence begins after it)")


def order_known(p: PState) -> bool:
    """AR and its order are known (a broker's line before 0.11 gives the members only: PState.replicas_ordered)."""
    return p.replicas is not None and p.replicas_ordered


def unknown_why(kind: str, isr, replicas, live, controller, ordered: bool = True) -> str:
    """Why a record could not be re-derived: the first thing the replay did not know."""
    if controller is None:
        return f"{kind}: acting controller unknown"
    if kind != "isr_removal":  # an OfflineReplica write does not depend on who is alive
        if live is None:
            return f"{kind}: live brokers unknown"
        if not live:
            return f"{kind}: no broker known live to the replay"
    if isr is None:
        return f"{kind}: ISR before the record unknown"
    if replicas is None:
        return f"{kind}: assigned replicas unknown"
    if not ordered:
        return (f"{kind}: the assigned replicas' order unknown (only broker lines listing them as a set before "
                "0.11 state them, rule zk.line.replicas_order)")
    return f"{kind}: not re-derivable (no rule for this transition)"


@dataclass
class Comparison:
    tp: F.TP
    ts: int
    record: F.Ref
    recorded: dict[str, Any]
    replayed: dict[str, Any] | None
    verdict: str  # agreed | diverged | unknown
    how: str  # 'trigger' (a replayed decision), 'point' (re-derived at the record), 'inferred: <why>'
    evidence: list[F.Ref] = field(default_factory=list)
    reason: str | None = None  # why the verdict is unknown
    # the brokers the record shows eligible (Kafka's isReplicaOnline) and not eligible where the replay held them the
    # other way, by the same rule (``implied_by_record``): the state the replay adopts from it
    implied: tuple[frozenset[int], frozenset[int]] | None = None

    @property
    def agreed(self) -> bool:
        return self.verdict == AGREED


def verdict(ok: bool) -> str:
    return AGREED if ok else DIVERGED


def unknown(tp: F.TP, ts: int, record: F.Ref, recorded: dict[str, Any], reason: str,
            replayed: dict[str, Any] | None = None,
            implied: tuple[frozenset[int], frozenset[int]] | None = None) -> Comparison:
    return Comparison(tp, ts, record, recorded, replayed, UNKNOWN, "unknown", reason=reason, implied=implied)


def tally(comparisons: list[Comparison]) -> dict[str, int]:
    """Verdict counts, plus evidence gaps (unknown verdicts whose reason is a gap in the evidence)."""
    out = {AGREED: 0, DIVERGED: 0, UNKNOWN: 0, "evidence_gaps": 0}
    for c in comparisons:
        out[c.verdict] += 1
        if c.verdict == UNKNOWN and (c.reason or "").startswith(EVIDENCE_GAP):
            out["evidence_gaps"] += 1
    return out


def unknown_reasons(comparisons: list[Comparison]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in comparisons:
        if c.verdict == UNKNOWN:
            out[c.reason or ""] = out.get(c.reason or "", 0) + 1
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class JudgeView:
    """What the judge reads at a record, frozen: the acting controller's view of the brokers (as the cluster image
    holds them) and the rules in force (the Kafka version whose rule rows apply, the configuration). Built by the
    replay at the record (``ZkControllerReplay.judge_view``); the judge never reads the replay itself."""

    controller: int | None
    live: frozenset[int]  # the controller's live brokers, shutting-down ones included (liveOrShuttingDownBrokerIds)
    shutting: frozenset[int]  # shuttingDownBrokerIds
    online: frozenset[int]  # liveBrokerIds: live and not shutting down
    offline_replicas: Mapping[int, frozenset[F.TP]]  # broker -> its replicas on a failed log dir
    seen: frozenset[int] | None  # brokers some fact has shown since the evidence began; None: membership stated
    version: Any  # the Kafka version whose rules are in force: the acting controller's own, else the cluster's
    config: ConfigImage  # the configuration in force
    preferred_requested: Mapping[F.TP, int]  # partition -> when a preferred election was asked
    coverage: Coverage  # what the evidence records, and when
    inherited: bool  # the acting controller's tenure began before the evidence (its view never stated)

    def online_set(self, tp: F.TP | None = None) -> frozenset[int]:
        """Kafka's ``isReplicaOnline`` over every broker (see ``replay_engine.common.brokers``)."""
        if tp is None or not self.offline_replicas:
            return self.online
        offline = self.offline_replicas
        return frozenset(b for b in self.online if tp not in offline.get(b, ()))

    def unseen(self, brokers: Any) -> frozenset[int]:
        """Brokers whose membership no fact has stated (empty once the cluster's membership was stated)."""
        if self.seen is None:
            return frozenset()
        return frozenset(b for b in brokers if b is not None and b >= 0 and b not in self.seen)

    def rule(self, decision: str, *args: Any) -> Any:
        """Kafka's rule for ``decision`` in the version in force (``replay_engine.rules``)."""
        return R.decide(decision, self.version, *args)

    def unclean_allowed(self, topic: str) -> bool:
        return as_bool(self.config.value(UNCLEAN, topic, self.controller))

    def unclean_assumed(self, topic: str) -> bool:
        """No Kafka version in the evidence and no config for the topic's unclean.leader.election.enable: the replay
        runs on 3.x's default, one of two a release may have had."""
        return self.config.version is None and self.config.unclean_enabled(topic, self.controller).default

    def liveness_known(self, ts: int) -> bool:
        """Is the controller's view of live brokers in the evidence at ``ts``: ZooKeeper's registrations, or the acting
        controller's own log (its broker-change lines) since its tenure began? A controller starts its view afresh
        at failover (2.8.0 onControllerResignation -> ControllerContext.resetContext clears shuttingDownBrokerIds;
        initializeControllerContext reads the live brokers); a tenure the replay only inferred from a record began
        before the evidence, with a view (shutting-down brokers) it never stated."""
        if self.coverage.zk_covers(ts):
            return True
        return not self.inherited and self.coverage.controller_logged(ts, self.controller)


# ------------------------------------------------------------------------------------ replayed decisions waiting


class Pending:
    """Replayed decisions that expect a record, per partition, oldest first."""

    def __init__(self) -> None:
        self.by_tp: dict[F.TP, list[Decision]] = {}
        # the last decisions per partition the replay applied without expecting a record (the evidence was not
        # known to record that controller's decisions then): a record that follows may still be its record. One
        # step can apply several (a failover's OfflineReplica write, then its election).
        self.applied: dict[F.TP, list[Decision]] = {}

    def add(self, d: Decision) -> None:
        self.by_tp.setdefault(d.tp, []).append(d)

    def note_applied(self, d: Decision) -> None:
        kept = self.applied.setdefault(d.tp, [])
        kept.append(d)
        del kept[:-_APPLIED_KEPT]

    def applied_match(self, tp: F.TP, kinds: tuple[str, ...], ts: int) -> Decision | None:
        """The replay's oldest unrecorded-expected decision of ``kinds`` among the last few it applied, within the
        window before ``ts`` (taken once; those before it are passed over for good)."""
        kept = self.applied.get(tp)
        if not kept:
            return None
        for i, d in enumerate(kept):
            if d.kind in kinds and 0 <= ts - d.ts <= MATCH_WINDOW_US and d.record is None:
                del kept[: i + 1]
                if not kept:
                    del self.applied[tp]
                return d
        return None

    def get(self, tp: F.TP) -> list[Decision] | None:
        return self.by_tp.get(tp)

    def drop(self, tp: F.TP) -> None:
        self.by_tp.pop(tp, None)

    def clear(self) -> None:
        self.by_tp.clear()

    def match(self, tp: F.TP, kinds: tuple[str, ...], ts: int) -> Decision | None:
        """The oldest waiting decision of one of ``kinds`` made within the window; those skipped before it
        were never recorded."""
        queue = self.by_tp.get(tp)
        if not queue:
            return None
        for i, d in enumerate(queue):
            if d.kind in kinds and ts - d.ts <= MATCH_WINDOW_US:
                for skipped in queue[:i]:
                    skipped.status = "unrecorded"
                    skipped.note = (skipped.note + "; " if skipped.note else "") + "no record of this decision"
                del queue[: i + 1]
                if not queue:
                    del self.by_tp[tp]
                return d
        return None

    def resolve_unconfirmed(self) -> None:
        """End of trace: what still waits was never recorded."""
        for tp in sorted(self.by_tp):
            for d in self.by_tp.pop(tp):
                d.status = "unrecorded"
                d.note = (d.note + "; " if d.note else "") + "the trace holds no record of this decision"


# ------------------------------------------------------------------------------------ pure comparisons


def same(replayed: dict[str, Any], recorded: dict[str, Any]) -> bool:
    """Leader, ISR (in order) and leader epoch agree wherever both sides know them."""
    for k in ("leader", "isr", "leader_epoch"):
        a, b = replayed.get(k), recorded.get(k)
        if a is None or b is None:
            continue
        if k == "isr":
            if list(a) != list(b):
                return False
        elif a != b:
            return False
    return True


def point_decision(ctx: JudgeView, p: PState, kind: str, f: F.RecordedState) -> tuple[dict[str, Any] | None, str]:
    """What the controller would have written at the record, from the replay's view there.

    Returns (decision, strategy), or (None, "") when it cannot be re-derived (see :func:`unknown_why`)."""
    live = ctx.online_set(p.tp)
    if p.isr is None and kind != "new_partition":
        return None, ""
    if not live and kind in ("new_partition", "election"):
        return None, ""
    if kind == "new_partition":
        ar = p.replicas
        if ar is None:
            return None, ""
        res = ctx.rule("zk.election.new_partition", ar, live)
        if res is None:
            return None, ""
        return {"leader": res.leader, "isr": list(res.isr), "leader_epoch": 0}, "NewPartition"
    if kind == "election":
        cand = p.candidates
        if cand is None:
            return None, ""
        live_isr = [r for r in p.isr if r in live]
        if not order_known(p) and (len(live_isr) > 1 or not live_isr and ctx.unclean_allowed(p.tp[0])):
            # The assignment order decides (several live ISR members, or an unclean pick) and the
            # evidence does not give it.
            return None, ""
        asked = ctx.preferred_requested.get(p.tp)
        if f.from_state == ONLINE and asked is not None and f.ts - asked <= MATCH_WINDOW_US:
            # "Starting preferred replica leader election for partitions ..." came first. The ISR is not
            # changed by this election, so the recorded one is the ISR it was decided on.
            if p.replicas is not None and not p.replicas_ordered:
                return None, ""  # which replica is preferred (the head of AR) is not known
            isr = list(f.isr) if f.isr is not None else list(p.isr)
            res = ctx.rule("zk.election.preferred", cand, isr, live)
            le = None if p.leader_epoch is None else p.leader_epoch + 1
            if res is None:
                return {"leader": p.leader, "isr": list(p.isr), "leader_epoch": p.leader_epoch}, E.PREFERRED
            return {"leader": res.leader, "isr": list(res.isr), "leader_epoch": le}, E.PREFERRED
        res = ctx.rule("zk.election.offline", cand, p.isr, live, ctx.unclean_allowed(p.tp[0]))
        if res is None:
            return {"leader": -1, "isr": list(p.isr), "leader_epoch": p.leader_epoch}, E.OFFLINE
        le = None if p.leader_epoch is None else p.leader_epoch + 1
        return {"leader": res.leader, "isr": list(res.isr), "leader_epoch": le}, E.OFFLINE
    if kind == "epoch_bump":
        if p.leader is None:
            return None, ""
        le = None if p.leader_epoch is None else p.leader_epoch + 1
        return {"leader": p.leader, "isr": list(p.isr), "leader_epoch": le}, "leader epoch bump"
    if kind == "isr_removal":
        # OfflineReplica (ReplicaStateMachine.doRemoveReplicasFromIsr, 1.1.0 .. 3.9; KafkaController.removeReplicaFromIsr
        # before): computed from the ISR in the znode and the replica removed alone; which brokers are alive plays no
        # part, so the write is re-derived even when the replay knows no broker alive.
        removed = f.removed_replica
        if removed is None:
            gone = [r for r in p.isr if r not in (f.isr or ()) or r == p.leader and f.leader == -1]
            removed = gone[0] if len(gone) == 1 else None
            if not gone and p.leader == -1 == f.leader and len(p.isr) == 1 and tuple(f.isr or ()) == tuple(p.isr):
                # a leaderless partition's write that keeps its one ISR member: only removing that member does it,
                # kept since unclean election is off (1.0.0 KafkaController.removeReplicaFromIsr: "Retaining last
                # ISR"; a replica not in the ISR is not written at all), as a deletion's retries do
                removed = p.isr[0]
        if removed is None or p.leader is None:
            return None, ""
        if int(removed) not in p.isr:
            # Kafka logs this line for every partition of the replica, but writes (and bumps the
            # leader epoch) only where the replica was in the ISR.
            return {"leader": p.leader, "isr": list(p.isr), "leader_epoch": p.leader_epoch}, "OfflineReplica (not in ISR)"
        leader, isr = ctx.rule("zk.offline_replica.isr", p.leader, p.isr, int(removed), ctx.unclean_allowed(p.tp[0]))
        le = None if p.leader_epoch is None else p.leader_epoch + 1
        return {"leader": leader, "isr": list(isr), "leader_epoch": le}, "OfflineReplica"
    return None, ""


def alternatives(ctx: JudgeView, p: PState, f: F.RecordedState, recorded: dict[str, Any]) -> tuple[str | None, int | None]:
    """Was the recorded election one of the other strategies, triggered by something not in the trace?

    Returns (which, broker whose controlled shutdown it implies or None). A controlled shutdown is never in
    ZooKeeper (it is an RPC): when a record is explained by it, the replay infers the request and replays the
    whole shutdown from there.
    """
    if p.isr is None or f.leader is None or f.leader < 0:
        return None, None
    live = ctx.online_set(p.tp)
    cand = p.candidates
    rec_isr = recorded.get("isr")
    isr_then = list(rec_isr) if rec_isr is not None else list(p.isr)
    if cand and cand[0] == f.leader and f.leader in isr_then and f.leader in live and f.from_state != OFFLINE:
        return "preferred replica election (auto rebalance or admin request not in the trace)", None
    if p.leader is not None and p.leader >= 0 and p.leader in ctx.live and cand:
        res = ctx.rule("zk.election.controlled_shutdown", cand, p.isr, frozenset(ctx.live), frozenset({p.leader}))
        if res is not None and res.leader == f.leader and (rec_isr is None or list(rec_isr) == list(res.isr)):
            return f"controlled shutdown of broker {p.leader} (request inferred: not in the trace)", p.leader
    if p.reassign_target is not None:
        res = ctx.rule("zk.election.reassign", p.reassign_target, p.isr, live)
        if res is not None and res.leader == f.leader:
            return "partition reassignment", None
    return None, None


def before_state(tp: F.TP, snap: dict[str, Any]) -> PState:
    """The partition as it was before a replayed decision (for judging the record against other strategies)."""
    return PState(tp, replicas=None if snap["replicas"] is None else tuple(snap["replicas"]), leader=snap["leader"],
                  isr=None if snap["isr"] is None else tuple(snap["isr"]), leader_epoch=snap["leader_epoch"],
                  zk_version=snap["zk_version"], controller_epoch=snap["controller_epoch"], state=snap["state"],
                  replicas_ordered=snap.get("replicas_ordered", True))


@dataclass(frozen=True)
class InferShutdown:
    """The record is explained by a controlled shutdown of ``broker`` that the evidence does not hold."""

    broker: int


def implied_by_record(ctx: JudgeView, p: PState, f: F.Fact, recorded: dict[str, Any],
                      replayed: dict[str, Any] | None) -> tuple[frozenset[int], frozenset[int]] | None:
    """The brokers whose eligibility, taken the other way, makes the offline (or preferred) election give the record:
    (those the record shows eligible that the replay held not, those it shows not eligible that the replay held so).
    An election shows its leader and ISR eligible. A failed offline election found no live ISR member (2.7.0
    PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection: the first AR replica in the ISR with
    ``isReplicaOnline``; 0.10.2.0 OfflinePartitionLeaderSelector.selectLeader: the ISR filtered by ``liveBrokerIds``):
    every ISR member the replay held eligible, and the leader it would have elected, were not. ``p`` is the partition as the decision found it.
    None: no other view of the brokers gives the record."""
    if replayed is None:
        return None
    mine, theirs = replayed.get("leader"), recorded.get("leader")
    online = ctx.online_set(p.tp)
    if recorded.get("failed"):
        flipped = (set(p.isr or ()) & online) | ({mine} if mine is not None and mine >= 0 else set())
    else:
        # An elected leader and the ISR written with it are online to the controller, whatever else differs; that
        # the replay's own pick was not is only one way the record follows (an assignment order or an ISR the replay
        # did not know are others): an election implies only what it names.
        flipped = _liveness_explains(ctx, p, recorded, mine, theirs) - online
    if not flipped:
        return None
    return frozenset(flipped - online), frozenset(flipped & online)


def adopted_reason(implied: tuple[frozenset[int], frozenset[int]]) -> str:
    up, down = implied
    said = [f"broker(s) {', '.join(map(str, sorted(bs)))} {how} to the controller" for bs, how in
            ((up, "eligible"), (down, "not eligible")) if bs]
    return (f"{ADOPTED} ({' and '.join(said)}: the record follows from the same rule only so, and neither "
            "ZooKeeper's data nor the acting controller's log states its view of the brokers at this time)")


def liveness_reason(ctx: JudgeView, p: PState, f: F.Fact, recorded: dict[str, Any],
                    replayed: dict[str, Any] | None) -> str | None:
    """Why a record that differs from the replay is not judged against a rule: at its time neither ZooKeeper's data
    nor the acting controller's own log is in the evidence, so which brokers the controller held live is the replay's
    inference (a broker killed leaves no line of its own), and the same rule gives the record with another view of
    them (``implied_by_record``). The replay adopts that view from the record; the record counts against it.
    None: liveness is known, or does not explain the record."""
    if ctx.liveness_known(f.ts):
        return None
    implied = implied_by_record(ctx, p, f, recorded, replayed)
    return adopted_reason(implied) if implied is not None else None


def unclean_reason(ctx: JudgeView, p: PState, recorded: dict[str, Any], replayed: dict[str, Any] | None) -> str | None:
    """Why a record that differs from the replay is not judged: the Kafka version is not in the evidence and no
    config sets the topic's unclean.leader.election.enable, whose default changed in 0.11.0 (KIP-106: true before,
    false since); the offline election with the other default gives the record."""
    if replayed is None or not ctx.unclean_assumed(p.tp[0]) or not p.candidates or p.isr is None:
        return None
    other = not ctx.unclean_allowed(p.tp[0])
    res = ctx.rule("zk.election.offline", p.candidates, p.isr, ctx.online_set(p.tp), other)
    theirs = -1 if recorded.get("failed") else recorded.get("leader")
    if (res.leader if res is not None else -1) != theirs:
        return None
    return (f"{EVIDENCE_GAP} (the Kafka version is not in the evidence and no config sets "
            f"unclean.leader.election.enable for {p.tp[0]}: its default changed in 0.11.0, KIP-106, and the record "
            f"follows from the {'true' if other else 'false'} default)")


def assumed_reason(ctx: JudgeView, p: PState, f: F.Fact, recorded: dict[str, Any],
                   replayed: dict[str, Any] | None) -> str | None:
    """A record that differs from the replay only through what the replay had to assume (liveness, a default)."""
    return liveness_reason(ctx, p, f, recorded, replayed) or unclean_reason(ctx, p, recorded, replayed)


def _liveness_explains(ctx: JudgeView, p: PState, recorded: dict[str, Any], mine: Any, theirs: Any) -> set[int]:
    """The brokers whose liveness, taken the other way, makes the offline or preferred election give the record."""
    cand, isr = p.candidates, p.isr
    if theirs is None or theirs < 0 or not cand or isr is None:
        return set()
    rec_isr = list(recorded.get("isr") or [])
    live = ctx.online_set(p.tp)
    up = ({theirs} | set(rec_isr)) - live
    tries = [(up, live | up)]
    if mine is not None and mine >= 0 and mine != theirs:
        tries.append((up | {mine}, (live | up) - {mine}))
    for flipped, view in tries:
        res = ctx.rule("zk.election.offline", cand, isr, frozenset(view), ctx.unclean_allowed(p.tp[0]))
        if res is not None and res.leader == theirs and (not rec_isr or sorted(res.isr) == sorted(rec_isr)):
            return flipped
    if cand[0] == theirs and theirs in (rec_isr or isr) and up:
        return up  # a preferred election (auto-rebalance or an admin request) to a broker the controller held live
    return set()


def _order_decided(d: Decision, recorded: dict[str, Any]) -> bool:
    """The replayed and recorded leaders are both ISR members the assignment's order chooses between
    (PartitionLeaderElectionAlgorithms: the first live replica of AR in the ISR), and the replay did not know AR or
    its order."""
    isr = d.before.get("isr") or ()
    mine, theirs = (d.after or {}).get("leader"), recorded.get("leader")
    unknown_order = d.before.get("replicas") is None or d.before.get("replicas_ordered") is False
    return unknown_order and mine in isr and theirs in isr and mine != theirs \
        and sorted((d.after or {}).get("isr") or ()) == sorted(recorded.get("isr") or ())


def offline_implied(ctx: JudgeView, p: PState, kind: str, strategy: str | None, f: F.Fact,
                    recorded: dict[str, Any], replayed: dict[str, Any] | None) -> tuple | None:
    """``implied_by_record`` for the decisions it reads: an offline election (the replay's, or re-derived at the
    record) that the record contradicts. Elections of the other strategies say nothing of the brokers' eligibility
    this way."""
    if kind not in ("election", "election_failed") or (strategy or E.OFFLINE).split("(")[0] not in (
            E.OFFLINE, "OfflinePartition"):
        return None
    return implied_by_record(ctx, p, f, recorded, replayed)


def judge_write(ctx: JudgeView, pending: Pending, p: PState, kind: str, f: F.RecordedState, recorded: dict[str, Any],
                may_infer: bool, defer_gaps: bool) -> Comparison | InferShutdown:
    """A recorded write against the replayed decision it answers, else against one re-derived at the record.

    ``may_infer``: a controlled shutdown explaining the record may be asked for (see :class:`InferShutdown`).
    ``defer_gaps``: a record taken on a state the replay never saw (logs only) is an evidence gap, not judged.
    """
    kinds = ("election", "new_partition") if kind in ("election", "new_partition") else ("isr_removal", "election")
    named = ([] if recorded.get("leader") is None else [recorded["leader"]]) + list(recorded.get("isr") or [])
    unseen_named = ctx.unseen(named) if kind in ("election", "new_partition") else frozenset()
    d = None if kind == "epoch_bump" else pending.match(p.tp, kinds, f.ts)
    if d is not None and d.after is not None:
        ok = same(d.after, recorded)
        how = "trigger"
        if not ok and kind == "election":
            alt, _ = alternatives(ctx, before_state(p.tp, d.before), f, recorded)
            if alt:
                ok, how = True, f"inferred: {alt}"
        if not ok and unseen_named:
            d.status, d.record = UNKNOWN, f.ref
            return unknown(p.tp, f.ts, f.ref, recorded, unseen_reason(unseen_named), d.after)
        if not ok and _order_decided(d, recorded):
            d.status, d.record = UNKNOWN, f.ref
            return unknown(p.tp, f.ts, f.ref, recorded, "election: assigned replicas unknown", d.after)
        before = before_state(p.tp, d.before)
        why = assumed_reason(ctx, before, f, recorded, d.after) if not ok else None
        implied = offline_implied(ctx, before, kind, d.strategy, f, recorded, d.after) if not ok else None
        if why:
            d.status, d.record = UNKNOWN, f.ref
            return unknown(p.tp, f.ts, f.ref, recorded, why, d.after, implied if why.startswith(ADOPTED) else None)
        d.status = verdict(ok)
        d.record = f.ref
        return Comparison(p.tp, f.ts, f.ref, recorded, d.after, verdict(ok), how, [d.trigger], implied=implied)
    d = None if kind == "epoch_bump" else pending.applied_match(p.tp, kinds, f.ts)
    if d is not None and d.after is not None and same(d.after, recorded):
        # The record of a step the replay took itself moments before (its trigger was in the evidence, the
        # controller's record of it in a log the replay did not know recorded such steps): judged against it.
        d.status, d.record = AGREED, f.ref
        return Comparison(p.tp, f.ts, f.ref, recorded, d.after, AGREED, "trigger (replayed, then recorded)",
                          [d.trigger])
    # No replayed decision waiting: re-derive it at the record (point-wise), if enough is known.
    if kind == "election" and may_infer:
        _, b = alternatives(ctx, p, f, recorded)
        if b is not None and b not in ctx.shutting and b in ctx.live:
            return InferShutdown(b)
    replayed, strategy = point_decision(ctx, p, kind, f)
    if replayed is not None and kind in ("election", "new_partition"):
        unseen_named = unseen_named | ctx.unseen(
            ([] if replayed.get("leader") is None else [replayed["leader"]]) + list(replayed.get("isr") or []))
    if replayed is not None and unseen_named and not same(replayed, recorded):
        # The record elects or registers a broker no line has shown joining or leaving, and nothing stated the
        # cluster's membership (no snapshot, no controller's list of live brokers): the evidence began after it
        # registered. Not a divergence.
        return unknown(p.tp, f.ts, f.ref, recorded, unseen_reason(unseen_named), replayed)
    if replayed is not None and defer_gaps:
        unseen_isr = f.isr is not None and p.isr is not None and bool(
            set(f.isr) - set(p.isr) - ({f.leader} if kind == "election" and ctx.unclean_allowed(p.tp[0]) else set()))
        ahead = f.leader_epoch is not None and replayed.get("leader_epoch") is not None \
            and f.leader_epoch > replayed["leader_epoch"]
        if unseen_isr or ahead or _elected_outside_isr(ctx, p, kind, f):
            # Decisions (or ISR expansions by leaders) happened in hours whose logs are not in the evidence:
            # this one was taken on a state the replay never saw. Neither agreed nor diverged.
            return unknown(p.tp, f.ts, f.ref, recorded, GAP, replayed)
    if replayed is None:
        alt, _ = alternatives(ctx, p, f, recorded) if kind == "election" else (None, None)
        if alt:
            return Comparison(p.tp, f.ts, f.ref, recorded, recorded, AGREED, f"inferred: {alt}")
        if defer_gaps and kind != "new_partition" and unseen(p):
            return unknown(p.tp, f.ts, f.ref, recorded, UNSEEN)
        return unknown(p.tp, f.ts, f.ref, recorded, unknown_why(kind, p.isr, p.replicas, ctx.online_set(p.tp),
                                                                ctx.controller, p.replicas_ordered))
    ok = same(replayed, recorded)
    how = f"point: {strategy}"
    if not ok and kind == "election":
        alt, _ = alternatives(ctx, p, f, recorded)
        if alt:
            ok, how = True, f"inferred: {alt}"
    why = assumed_reason(ctx, p, f, recorded, replayed) if not ok and kind == "election" else None
    implied = offline_implied(ctx, p, kind, strategy, f, recorded, replayed) if not ok else None
    if why:
        return unknown(p.tp, f.ts, f.ref, recorded, why, replayed, implied if why.startswith(ADOPTED) else None)
    return Comparison(p.tp, f.ts, f.ref, recorded, replayed, verdict(ok), how, implied=implied)


def _elected_outside_isr(ctx: JudgeView, p: PState, kind: str, f: F.RecordedState) -> bool:
    """A clean election's leader is an ISR member (0.10.2.0 PartitionLeaderSelector.scala: Offline-, Reassigned-,
    Preferred- and ControlledShutdownLeaderSelector.selectLeader each pick within the ISR; 2.7.0
    PartitionLeaderElectionAlgorithms alike): a recorded leader outside the ISR the replay holds, in an
    OnlinePartition -> OnlinePartition move (controlled shutdown, preferred, reassignment: never unclean), is a member
    no line added. An OfflinePartition election may have been unclean, which ``unclean_reason`` weighs (the
    setting's default changed in 0.11.0)."""
    if kind != "election" or f.leader is None or f.leader < 0 or p.isr is None or f.leader in p.isr:
        return False
    return f.from_state == ONLINE


def _zk_decision(c: Comparison) -> str:
    """The rule-table decision a ZooKeeper-mode comparison judged: the strategy its ``how`` names (the election
    strategies of 1.1+ and the 0.8-1.0 selectors alike), an OfflineReplica ISR write, else an offline election."""
    how = c.how or ""
    for key, decision in (("OfflineReplica", "zk.offline_replica.isr"),
                          ("ControlledShutdown", "zk.election.controlled_shutdown"),
                          ("Preferred", "zk.election.preferred"), ("Reassign", "zk.election.reassign"),
                          ("NewPartition", "zk.election.new_partition")):
        if key in how:
            return decision
    return "zk.election.offline"


def zk_departure_findings(comparisons: list[Comparison], version) -> list[dict[str, Any]]:
    """Each diverged ZooKeeper-mode comparison as a finding naming the rule row the recorded decision departed from
    (the row for the release that wrote the evidence, with the tag, file and function it was read from), as
    ``kraft.evidence.departure_findings`` does for KRaft: the decision stays counted against the replay."""
    out: list[dict[str, Any]] = []
    for c in comparisons:
        if c.verdict != DIVERGED:
            continue
        out.append(R.departure(c, _zk_decision(c), version, c.how))
    return out


def judge_kraft(tp: F.TP, ts: int, record: F.Ref, recorded: dict[str, Any], replayed: dict[str, Any],
                how: str) -> Comparison:
    """A KRaft metadata record (or a broker's word for it) against what PartitionChangeBuilder's rules give:
    agreed when every field the rules decide matches the record wherever the record states it."""
    ok = all(recorded.get(k) == v for k, v in replayed.items() if recorded.get(k) is not None)
    return Comparison(tp, ts, record, recorded, replayed, verdict(ok), how)


def judge_fenced(p: PState, f: F.RecordedFailedElection, acting_epoch: int | None) -> Comparison:
    """An election aborted by the controller-epoch fence (``f.fenced_by``; 0.9.0.0
    PartitionStateMachine.electLeaderForPartition, 2.3.0 ZkPartitionStateMachine.doElectLeaderForPartitions: the
    partition's state in ZooKeeper carries a controller epoch above the acting controller's; no leader selector runs,
    nothing is written). Agreed where the replay held the partition written under such an epoch; else the record shows
    a write no line before it did (the newer controller's), whose state the replay adopts (RecordHandlers), and counts
    against. It says nothing of the brokers."""
    recorded = {"leader": -1, "failed": True}
    ce = f.controller_epoch if f.controller_epoch is not None else acting_epoch
    if ce is not None and p.controller_epoch is not None and p.controller_epoch > ce:
        return Comparison(f.tp, f.ts, f.ref, recorded, recorded, AGREED, "point: controller epoch fence")
    return unknown(f.tp, f.ts, f.ref, recorded,
                   f"{ADOPTED} (the partition's state written under controller epoch {f.fenced_by}, above the acting "
                   f"controller's {ce}: the election was aborted by the controller-epoch fence; the replay held it "
                   f"written under {p.controller_epoch})")


def judge_failed(ctx: JudgeView, pending: Pending, p: PState, f: F.RecordedFailedElection,
                 defer_gaps: bool = False) -> Comparison:
    """A recorded failed election against the replay's decision, else against one re-derived at the record.

    ``defer_gaps``: as in :func:`judge_write`, an ISR no line ever stated is an evidence gap."""
    recorded = {"leader": -1, "failed": True}
    d = pending.match(f.tp, ("election_failed", "new_partition_failed"), f.ts)
    if d is not None:
        d.status, d.record = AGREED, f.ref
        return Comparison(f.tp, f.ts, f.ref, recorded, {"leader": -1, "failed": True}, AGREED, "trigger", [d.trigger])
    d2 = pending.match(f.tp, ("election", "new_partition"), f.ts)
    if d2 is not None:
        why = assumed_reason(ctx, p, f, recorded, d2.after)
        implied = offline_implied(ctx, p, d2.kind, d2.strategy, f, recorded, d2.after)
        if why:
            d2.status, d2.record = UNKNOWN, f.ref
            return unknown(f.tp, f.ts, f.ref, recorded, why, d2.after, implied if why.startswith(ADOPTED) else None)
        d2.status, d2.record = DIVERGED, f.ref
        return Comparison(f.tp, f.ts, f.ref, recorded, d2.after, DIVERGED, "trigger", [d2.trigger], implied=implied)
    # Point-wise: would an offline election find a leader with what the controller knew?
    isr = f.isr if f.isr is not None else p.isr
    # No broker live to the controller in office is a known state when the cluster's membership was stated (its
    # 'Currently active brokers in the cluster: Set()', 1.1.1 KafkaController.initializeControllerContext: the children
    # of /brokers/ids), not an unknown one; a record of another controller (a deposed one) keeps its own view unknown.
    stated_none = not ctx.live and ctx.seen is None and f.controller_id is not None and f.controller_id == ctx.controller
    live: AbstractSet[int] | None = f.live if f.live is not None else (
        ctx.online_set(f.tp) if ctx.live or stated_none else None)
    if live is not None:
        live = frozenset(b for b in live if f.tp not in ctx.offline_replicas.get(b, ()))
    cand = f.assigned if f.assigned is not None else p.candidates
    strategy = f.strategy or ""
    # a controlled shutdown is named, or (0.8-1.0 logs name no strategy) an Online -> Online attempt may be one
    shutdown = "ControlledShutdown" in strategy or not strategy and f.from_state == ONLINE
    if isr is None and live is not None and cand is not None and not strategy.startswith("Reassign") \
            and ctx.rule("zk.election.fails_whatever_the_isr", cand, live, shutdown):
        return Comparison(f.tp, f.ts, f.ref, recorded, {"leader": -1, "failed": True}, AGREED,
                          "point: no assigned replica alive (any ISR)")
    if isr is None or live is None or cand is None:
        if defer_gaps and isr is None and unseen(p):
            return unknown(f.tp, f.ts, f.ref, recorded, UNSEEN)
        missing = "ISR" if isr is None else "live brokers" if live is None else "assigned replicas"
        return unknown(f.tp, f.ts, f.ref, recorded, f"election_failed: {missing} unknown")
    unclean = ctx.unclean_allowed(f.tp[0]) if not (f.strategy or "").endswith("(true)") else True
    offline = False
    if not f.strategy and f.from_state == ONLINE:
        # Online -> Online without a named strategy (1.x logs): an auto-rebalance preferred
        # election or a controlled-shutdown move; judge it by whichever was attempted.
        sd = set(ctx.shutting) | ({p.leader} if p.leader is not None and p.leader >= 0 else set())
        pref = ctx.rule("zk.election.preferred", cand, isr, live)
        cs = ctx.rule("zk.election.controlled_shutdown", cand, isr, frozenset(ctx.live | sd), frozenset(sd))
        res = None if (pref is None or p.leader in ctx.shutting and cs is None) else pref
    elif f.strategy and "ControlledShutdown" in f.strategy:
        # Kafka runs this strategy only for partitions led by a broker in controlled shutdown:
        # the current leader is shutting down even if its request is not in the evidence.
        sd = set(ctx.shutting) | ({p.leader} if p.leader is not None and p.leader >= 0 else set())
        res = ctx.rule("zk.election.controlled_shutdown", cand, isr, frozenset(ctx.live | sd), frozenset(sd))
    elif f.strategy and "Preferred" in f.strategy or (
            f.from_state == ONLINE and f.ts - ctx.preferred_requested.get(f.tp, -1 << 62) <= MATCH_WINDOW_US):
        res = ctx.rule("zk.election.preferred", cand, isr, live)
    else:
        res = ctx.rule("zk.election.offline", cand, isr, live, unclean)
        offline = True
    replayed = {"leader": -1, "failed": True} if res is None else {"leader": res.leader, "isr": list(res.isr)}
    unseen_leader = ctx.unseen([res.leader]) if res is not None else frozenset()
    if unseen_leader:
        # the replay would elect a broker no fact has shown since the evidence (or its last hole) began
        return unknown(f.tp, f.ts, f.ref, recorded, unseen_reason(unseen_leader), replayed)
    why = assumed_reason(ctx, p, f, recorded, replayed) if res is not None else None
    implied = None
    if res is not None and offline and f.live is None:  # a stated live set was adopted as stated (zk_inference)
        implied = implied_by_record(ctx, PState(p.tp, replicas=cand, isr=tuple(isr)), f, recorded, replayed)
    if why:
        return unknown(f.tp, f.ts, f.ref, recorded, why, replayed, implied if why.startswith(ADOPTED) else None)
    return Comparison(f.tp, f.ts, f.ref, recorded, replayed, verdict(res is None), f"point: {f.strategy or E.OFFLINE}",
                      implied=implied)
