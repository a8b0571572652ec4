"""Why a partition had no leader: a cause kind, one plain sentence, and the chain of evidence.

Works on what the replay left (episodes, broker periods, controller tenures,
failed elections, configuration as it stood) and adds nothing it cannot
cite. The cause is chosen by a list of small classifiers in priority order (``CLASSIFIERS``),
each returning a ``Case`` (``cases.py``) -- the kind and the facts it claims, every claim with
the events that prove it -- or None; the first case made is the cause, and ``explain_text.render``
writes its sentence.
"""
from __future__ import annotations

import functools
import re

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from replay_engine.causes.cases import (ALL_REPLICAS_OFFLINE, BROKER_DOWN, BROKER_NOT_RUNNING, CONTROLLER_DID_NOT_ACT,
                                 CONTROLLER_LEFT, CONTROLLER_TOOK_OVER, DELETED, FAILED_ELECTION, LEADER_FAILOVER,
                                 LEADER_RETURN_UNSEEN, LEADERLESS, LIVE_VIEW, NO_CONTROLLER, NO_LIVE_ISR, NO_LIVE_ISR_UNKNOWN_AR,
                                 REASSIGNING, REJOINED, REPLICA_DIR_OFFLINE, SERVING, UNCLEAN_CONFIG, UNCLEAN_ELECTED, UNCLEAN_ELECTION,
                                 UNKNOWN, Case, Claim)
from replay_engine.common.config import ConfigImage, Resolved, as_bool
from replay_engine.causes.text import fmt_duration, fmt_ts, render
from replay_engine.common.facts import TP, Ref
from replay_engine.common.partition import BrokerPeriod, Tenure
from replay_engine.common.timeline import Episode
from replay_engine.common.frozen import quick_init

__all__ = ["ALL_REPLICAS_OFFLINE", "NO_LIVE_ISR", "NO_LIVE_ISR_UNKNOWN_AR", "NO_CONTROLLER", "CONTROLLER_DID_NOT_ACT",
           "LEADER_FAILOVER", "DELETED", "REASSIGNING", "UNKNOWN", "UNCLEAN_ELECTION", "Cause", "World", "explain",
           "CLASSIFIERS", "classify", "fmt_duration", "fmt_ts"]

# A re-election within this long after the leader's loss is Kafka working as designed.
FAILOVER_GRACE_US = 30 * 1_000_000


@dataclass
class Cause:
    kind: str
    summary: str
    chain: list[Ref] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    case: Case | None = field(default=None, repr=False, compare=False)  # what the summary was written from

    @property
    def reason(self) -> str:
        """The summary without its '<partition> had no leader from .. to ..' opening."""
        head, sep, tail = self.summary.partition(": ")
        return tail if sep else self.summary

    def reason_for_many(self) -> str:
        """The reason worded for a group of partitions sharing it."""
        r = self.reason
        for a, b in (("its only replica", "their only replica"), ("its ISR", "their ISR"), ("its leader", "their leader"),
                     ("its other replicas", "their other replicas"), ("the partition's", "the partitions'")):
            r = r.replace(a, b)
        return r

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "summary": self.summary, "chain": [r.to_json() for r in self.chain],
                **({"details": self.details} if self.details else {})}


@dataclass
class World:
    """Everything the explainer may consult, as the replay left it (``replay_engine.result.world_of``
    takes it from the cluster image and its history)."""

    periods: Mapping[int, Sequence[BrokerPeriod]]
    tenures: Sequence[Tenure]
    ar_history: Mapping[TP, Sequence[tuple[int, tuple[int, ...]]]]
    config_history: Sequence[tuple[int, ConfigImage]]
    failed_elections: Mapping[TP, Sequence[Ref]]
    trace_end: int | None
    recorded: Any = None  # (ts, controller, kind) -> would the controller's decision have left a record?
    unclean: Sequence = ()  # the unclean elections (Decision) of the replay
    mode: str | None = None  # the replay's mode ('kraft' or a ZooKeeper one): whose election rules held
    deletions: Mapping[str, Sequence[tuple[Ref, int | None]]] = field(default_factory=dict)  # topic -> its deletions
    deletion_halts: Mapping[str, Sequence[tuple[Ref, str | None]]] = field(default_factory=dict)  # topic -> its holds
    # the controllers' stated views of live brokers, in order: (ts, controller, brokers, the line stating it)
    live_views: Sequence[tuple[int, int | None, frozenset[int], Ref]] = ()
    # replicas the controller held on failed log directories, in order: (ts, broker, partitions, offline?, the line)
    dir_views: Sequence[tuple[int, int, frozenset[TP], bool, Ref]] = ()
    # built on first use, from what the fields above hold (a world is read, never changed): each broker's periods
    # by start (None where their starts are out of order), each partition's unclean elections
    _starts: dict[int, tuple[list[int], list[BrokerPeriod]] | None] = field(default_factory=dict, init=False,
                                                                            repr=False, compare=False)
    _unclean_by_tp: dict[TP, list] | None = field(default=None, init=False, repr=False, compare=False)
    _head: dict[int, tuple[list[int], list[BrokerPeriod]] | None] = field(default_factory=dict, init=False,
                                                                          repr=False, compare=False)
    _failed: dict[TP, tuple[list[int], list[Ref]] | None] = field(default_factory=dict, init=False, repr=False,
                                                                  compare=False)
    _before: dict[int, dict[int, BrokerPeriod | None]] = field(default_factory=dict, init=False, repr=False,
                                                               compare=False)
    # each partition's assignment times, the configurations' times, and (configuration's place, topic) -> its
    # unclean.leader.election.enable: asked of every episode
    _ar_times: dict[TP, list[int]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _config_times: list[int] | None = field(default=None, init=False, repr=False, compare=False)
    _unclean_cfg: dict[tuple[int, str], Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    # answers asked again at the same time: the partitions a broker took down with it share their episodes' start
    _down_claims: dict[tuple[int, int], Claim] = field(default_factory=dict, init=False, repr=False, compare=False)
    _controllers: dict[int, Tenure | None] = field(default_factory=dict, init=False, repr=False, compare=False)
    _alive: dict[tuple[int, int], bool | None] = field(default_factory=dict, init=False, repr=False, compare=False)

    def alive(self, b: int, ts: int) -> bool | None:
        key = (b, ts)
        if key in self._alive:
            return self._alive[key]
        got = self._alive[key] = self._alive_at(b, ts)
        return got

    def _alive_at(self, b: int, ts: int) -> bool | None:
        ps = self.periods.get(b)
        if not ps:
            return None
        if b not in self._head:
            # the periods up to the first without a start, by start (None where those are out of order)
            head = []
            for p in ps:
                if p.start is None:
                    break
                head.append(p)
            starts = [p.start for p in head]
            self._head[b] = (starts, head) if all(a <= c for a, c in zip(starts, starts[1:])) else None
        got = self._head[b]
        if got is not None:
            i = bisect_right(got[0], ts) - 1
            return got[1][i].state == "up" if i >= 0 else None
        state = None
        for p in ps:
            if p.start is not None and p.start <= ts:
                state = p.state == "up"
            else:
                break
        return state

    def period_at(self, b: int, ts: int) -> BrokerPeriod | None:
        """The last of ``b``'s periods begun at or before ``ts``."""
        if b not in self._starts:
            ps = [p for p in self.periods.get(b, []) if p.start is not None]
            starts = [p.start for p in ps]
            self._starts[b] = (starts, ps) if all(a <= c for a, c in zip(starts, starts[1:])) else None
        got = self._starts[b]
        if got is not None:
            i = bisect_right(got[0], ts) - 1
            return got[1][i] if i >= 0 else None
        cur = None
        for p in self.periods.get(b, []):
            if p.start is not None and p.start <= ts:
                cur = p
        return cur

    def failed_between(self, tp: TP, start: int, end: int) -> list[Ref]:
        """``tp``'s failed elections from ``start`` to ``end``, both included, in order."""
        if tp not in self._failed:
            rs = [r for r in self.failed_elections.get(tp, []) if r.ts is not None]
            ts = [r.ts for r in rs]
            self._failed[tp] = (ts, rs) if all(a <= c for a, c in zip(ts, ts[1:])) else None
        got = self._failed[tp]
        if got is None:
            return [r for r in self.failed_elections.get(tp, []) if r.ts is not None and start <= r.ts <= end]
        return got[1][bisect_left(got[0], start):bisect_right(got[0], end)]

    def period_before(self, down: BrokerPeriod) -> BrokerPeriod | None:
        """The period of ``down.broker`` before ``down`` (the last one when ``down`` is not among them)."""
        ps = self.periods.get(down.broker, [])
        before = self._before.get(down.broker)
        if before is None:
            before = self._before[down.broker] = {}
            for i, q in enumerate(ps):
                before.setdefault(id(q), ps[i - 1] if i > 0 else None)
        i = id(down)
        if i in before:
            return before[i]
        return ps[-1] if ps else None

    def unclean_of(self, tp: TP) -> list:
        """The replay's unclean elections of ``tp``, in order."""
        if self._unclean_by_tp is None:
            self._unclean_by_tp = {}
            for d in self.unclean:
                self._unclean_by_tp.setdefault(tuple(d.tp), []).append(d)
        return self._unclean_by_tp.get(tp, [])

    def ar_at(self, tp: TP, ts: int) -> tuple[int, ...] | None:
        hist = self.ar_history.get(tp)
        if not hist:
            return None
        times = self._ar_times.get(tp)
        if times is None or len(times) != len(hist):
            times = self._ar_times[tp] = [t for t, _ in hist]
        i = bisect_right(times, ts)
        return hist[max(i - 1, 0)][1]

    def _config_index(self, ts: int) -> int | None:
        if not self.config_history:
            return None
        if self._config_times is None or len(self._config_times) != len(self.config_history):
            self._config_times = [t for t, _ in self.config_history]
        return max(bisect_right(self._config_times, ts) - 1, 0)

    def config_at(self, ts: int) -> ConfigImage | None:
        i = self._config_index(ts)
        return None if i is None else self.config_history[i][1]

    def unclean_at(self, topic: str, ts: int) -> Resolved | None:
        """``config_at(ts).unclean_enabled(topic)``, resolved once per configuration and topic (a configuration of the
        history is never changed: each is a frozen image)."""
        i = self._config_index(ts)
        if i is None:
            return None
        key = (i, topic)
        got = self._unclean_cfg.get(key)
        if got is None:
            got = self._unclean_cfg[key] = self.config_history[i][1].unclean_enabled(topic)
        return got

    def view_at(self, tenure: Tenure, ts: int) -> tuple[frozenset[int], Ref] | None:
        """The live brokers ``tenure``'s controller last stated in office at or before ``ts``, with the line."""
        got = None
        for t, c, brokers, ref in self.live_views:
            if t > ts:
                break
            if t >= tenure.start and (c is None or c == tenure.controller):
                got = (brokers, ref)
        return got

    def replica_dir_offline(self, b: int, tp: TP, ts: int) -> Ref | None:
        """The line by which the controller held ``b``'s replica of ``tp`` on a failed log directory at ``ts``, if it
        did: not online to it (2.4.0 ControllerContext.isReplicaOnline: live and not in replicasOnOfflineDirs) until
        the replica is reported online again or the broker registers anew (onBrokerStartup clears its entry)."""
        got = None
        for t, broker, tps, offline, ref in self.dir_views:
            if t > ts:
                break
            if broker == b and tp in tps:
                got = ref if offline else None
        if got is not None:
            p = self.period_at(b, ts)
            if p is not None and p.state == "up" and p.start is not None and got.ts is not None and p.start > got.ts:
                return None  # registered anew since
        return got

    def controller_at(self, ts: int) -> Tenure | None:
        if ts in self._controllers:
            return self._controllers[ts]
        got = self._controllers[ts] = next((t for t in self.tenures if t.start <= ts and (t.end is None or ts < t.end)),
                                           None)
        return got


_CAUSE_OF_EVENT = {"broker_failed": "controller_detected", "broker_deregistered": "deleted",
                   "zk_session_expired": "session_expired", "broker_shutdown_completed": "shutdown",
                   "broker_fenced": "fenced"}


def _how_down(world: World, down: BrokerPeriod) -> str | None:
    """How the up-period before a down-period ended (session expired, clean stop...)."""
    prev = world.period_before(down)
    return prev.end_cause if prev is not None and prev.end_cause else None


def down_claim(world: World, b: int, ts: int) -> Claim:
    """How broker ``b`` came to be down at ``ts``, citing the event that opened its down period."""
    got = world._down_claims.get((b, ts))
    if got is None:
        got = world._down_claims[(b, ts)] = _down_claim(world, b, ts)
    return got


def _down_claim(world: World, b: int, ts: int) -> Claim:
    p = world.period_at(b, ts)
    if p is None or p.state != "down":
        return Claim(BROKER_NOT_RUNNING, broker=b, ts=ts)
    cause = _how_down(world, p)
    if cause is None and p.start_ref is not None:  # no up-period before it in the evidence: the event says how
        cause = _CAUSE_OF_EVENT.get(p.start_ref.event)
    return Claim(BROKER_DOWN, broker=b, ts=p.start, how=cause, refs=(p.start_ref,) if p.start_ref is not None else ())


@quick_init
@dataclass(frozen=True)
class Situation:
    """What every classifier reads, derived from the episode and the world alone (computed once per episode)."""

    ep: Episode
    world: World
    tp: TP
    isr: tuple[int, ...] | None
    ar: tuple[int, ...] | None
    leader: int | None
    failed: tuple[Ref, ...]  # failed elections during the episode
    head: tuple[Ref, ...]  # the episode's opening, its failed elections and first state changes
    unclean: Resolved | None
    members: tuple[int, ...]
    alive: Mapping[int, bool | None]
    when: Mapping[int, int]  # when each member is judged (a failed election moves it to the broker's leaving)
    up: tuple[int, ...]
    down_refs: tuple[Ref, ...]  # how each dead member went down
    tenure: Tenure | None
    dir_offline: Mapping[int, Ref] = field(default_factory=dict)  # members whose replica was on a failed log dir

    def down(self, b: int) -> Claim:
        ref = self.dir_offline.get(b)
        if ref is not None:
            return Claim(REPLICA_DIR_OFFLINE, broker=b, ts=ref.ts, refs=(ref,))
        return down_claim(self.world, b, self.when.get(b, self.ep.start))


def situation(ep: Episode, world: World) -> Situation:
    tp = (ep.topic, ep.partition)
    first = ep.intervals[0]
    v = first.view
    # Where the loss's own line does not state the ISR (a "Changed partition P state from OnlinePartition to
    # OfflinePartition" line of a partition the replay knew little of), the first the outage states stands for it:
    # while no leader serves, only the controller changes the ISR, removing replicas that went offline (1.0.0
    # KafkaController.removeReplicaFromIsr; 2.7.0 ReplicaStateMachine.doRemoveReplicasFromIsr), so it is the loss's
    # ISR less brokers that were down
    isr = next((tuple(i.view.isr) for i in ep.intervals if i.view.isr is not None), None)
    ar = world.ar_at(tp, ep.start)
    failed = world.failed_between(tp, ep.start, ep.end or 1 << 62)
    # state changes during the outage (e.g. the "leader -1" write), at most a few
    head = [first.opened_by, *failed[:3], *(i.opened_by for i in ep.intervals[1:4])]
    unclean = world.unclean_at(ep.topic, ep.start)
    members = list(ar) if ar else list(isr or [])
    alive = {b: world.alive(b, ep.start) for b in members}
    when = {b: ep.start for b in members}
    if failed or isr is None and ar:
        # A failed election proves the controller saw no live candidate: a replica whose own log says it went
        # down moments later was already leaving (its session closed before its last line was written). With the
        # ISR not in the evidence, replicas that all went down moments after the leader (a cluster shutting down)
        # are read the same way: no replica was there to lead once they had gone.
        for b in members:
            if alive[b]:
                t = _down_soon_after(world, b, ep.start)
                if t is not None:
                    alive[b], when[b] = False, t
    # A running broker's replica on a log directory the controller held offline is not online to it (2.4.0
    # ControllerContext.isReplicaOnline): no election takes it
    dir_offline = {b: r for b in members if alive[b] for r in [world.replica_dir_offline(b, tp, ep.start)] if r}
    for b in dir_offline:
        alive[b] = False
    down_refs = [r for b in members if alive[b] is False
                 for r in ((dir_offline[b],) if b in dir_offline else down_claim(world, b, when[b]).refs)]
    return Situation(ep, world, tp, isr, ar, v.leader, tuple(failed), tuple(head), unclean, tuple(members), alive,
                     when, tuple(b for b in members if alive[b]), tuple(down_refs), world.controller_at(ep.start),
                     dir_offline)


def _case(s: Situation, kind: str, form: str, *, deleted: bool = False, extra: Sequence[Ref] = (),
          cause_brokers: Sequence[int] | None = None, more: Sequence[tuple[str, Any]] = (), **fields) -> Case:
    """A case over the situation: the evidence chain and details every cause carries, plus the cause's own."""
    ep = s.ep
    details: list[tuple[str, Any]] = [("replicas", list(s.ar) if s.ar else None),
                                      ("isr_at_loss", list(s.isr) if s.isr is not None else None),
                                      ("leader_before", s.leader)]
    chain = list(s.head)
    claims = [Claim(LEADERLESS, ts=ep.start, refs=(ep.intervals[0].opened_by,))]
    claims += [Claim(FAILED_ELECTION, ts=r.ts, how=_strategy(r), refs=(r,)) for r in s.failed[:3]]
    unclean = None
    if deleted:  # a deleted topic's case is told by its deletion alone
        chain += [r for r in extra if r is not None]
        details += [(k, v) for k, v in more if v]
    else:
        if s.unclean is not None:
            details += [("unclean_leader_election_enable", s.unclean.value), ("unclean_source", s.unclean.source)]
            unclean = Claim(UNCLEAN_CONFIG, value=s.unclean.value, how=s.unclean.source,
                            refs=(s.unclean.evidence,) if s.unclean.evidence is not None else ())
        chain += s.down_refs
        chain += [r for r in extra if r is not None]
        if ep.end is not None and _ended_by(ep) is not None:
            chain.append(_ended_by(ep))
        details += more
        if cause_brokers is not None:
            details.append(("cause_brokers", list(cause_brokers)))
            if cause_brokers:
                details.append(("cause_broker_downs", _downs(s.world, list(cause_brokers), ep.start)))
    downs = fields.pop("downs", ())
    claims += list(fields.pop("claims", ())) + list(downs)
    return Case(kind, form, ep.topic, ep.partition, ep.start, ep.end, ep.duration_us, s.world.trace_end, s.ar,
                s.isr, s.leader, claims=tuple(claims), downs=tuple(downs), unclean=unclean, chain=tuple(chain),
                details=tuple(details), **fields)


# ------------------------------------------------------------------ the classifiers, in priority order

def partition_deleted(s: Situation) -> Case | None:
    ep, first = s.ep, s.ep.intervals[0]
    if any(i.view.state == "NonExistentPartition" for i in ep.intervals) or first.view.state == "OfflinePartition" \
            and first.opened_by.event in ("topic_deletion_requested",):
        return _case(s, DELETED, "deleted", deleted=True)
    # The controller takes a topic's partitions offline to delete them; a deletion that cannot finish (a replica
    # on a dead broker or in an offline log directory) keeps them so (TopicDeletionManager, 0.9+).
    # OfflineReplica removes a deleted topic's replicas from the ISR first, leader -1 (0.9.0.0 TopicDeletionManager
    # onPartitionDeletion -> ReplicaStateMachine OfflineReplica -> KafkaController.removeReplicaFromIsr)
    if first.view.state == "OfflinePartition" or first.view.leader == -1:
        for began, ended in s.world.deletions.get(ep.topic, ()):
            if began.ts is not None and began.ts <= ep.start and (ended is None or ep.start <= ended):
                end = ep.end if ep.end is not None else 1 << 62
                holds = [(r, why) for r, why in s.world.deletion_halts.get(ep.topic, ())
                         if r.ts is not None and began.ts <= r.ts <= end]
                return _case(s, DELETED, "deleted", deleted=True, extra=(began, *(r for r, _ in holds[:1])),
                             more=(("deletion_halted", [{"ts": r.ts, "reason": why} for r, why in holds[:1]]),))
    return None


# A broker's own line stating it took up the controller's LeaderAndIsr request for the partition: it was running, and
# live to that controller, which sends requests only to the brokers it holds live (0.10.2.0 / 2.7.0
# core/src/main/scala/kafka/controller/ControllerChannelManager.scala sendRequest: "Not sending request ... to broker
# B, since it is offline"; the broker logs the request as it handles it, 0.10.2.0 / 2.4.0
# core/src/main/scala/kafka/server/ReplicaManager.scala becomeLeaderOrFollower).
_SERVING_LINES = ("leader_and_isr_received", "become_leader")
# The controller's record of an election names a leader it held online: every strategy elects among the replicas
# isReplicaOnline holds (2.7.0 core/src/main/scala/kafka/controller/PartitionStateMachine.scala,
# PartitionLeaderElectionAlgorithms; 'Changed partition P from S to OnlinePartition with state LeaderAndIsr(..)').
_ELECTION_RECORD = "partition_state_change"


def leader_seen_serving(s: Situation) -> Case | None:
    """The episode opens with the leader's own line taking up the controller's request that names it leader, or with
    the controller's record electing it, while the replay holds that broker down: it was live to the controller, and
    the lines of its return (a registration, a broker-change line) are not in the evidence. The partition most likely had its leader; the
    episode is the replay's, not the cluster's. (A leader's line at the end of an episode is its return, and says
    nothing of the time before.)"""
    ep, lead = s.ep, s.leader
    first = ep.intervals[0]
    seen = first.opened_by
    own = seen.broker == lead and seen.event in _SERVING_LINES
    elected = seen.event == _ELECTION_RECORD and first.view.state == "OnlinePartition" and first.view.leader == lead
    if lead is None or lead < 0 or not (own or elected) or s.world.alive(lead, ep.start) is not False:
        return None
    return _case(s, LEADER_RETURN_UNSEEN, "leader_running", extra=(seen,), brokers=(lead,),
                 downs=(down_claim(s.world, lead, ep.start),),
                 claims=(Claim(SERVING, broker=lead, ts=seen.ts, refs=(seen,)),))


def all_replicas_offline(s: Situation) -> Case | None:
    if s.ar is None or s.up or not s.members:
        return None
    return _case(s, ALL_REPLICAS_OFFLINE, "rf1" if len(s.ar) == 1 else "all_down", brokers=s.ar,
                 downs=tuple(s.down(b) for b in s.ar), cause_brokers=s.ar)


def isr_down_replicas_unknown(s: Situation) -> Case | None:
    if s.ar is not None or not s.isr or not all(s.alive.get(b) is False for b in s.isr):
        return None
    return _case(s, NO_LIVE_ISR_UNKNOWN_AR, "isr_down", brokers=s.isr, downs=tuple(s.down(b) for b in s.isr),
                 cause_brokers=s.isr)


def failed_election_mid_life(s: Situation) -> Case | None:
    # Logs that start mid-life show neither replicas nor ISR; a failed election still says it: the controller
    # found no live in-sync replica (and, unclean off, would not go further).
    if s.ar is not None or s.isr is not None or not s.failed:
        return None
    gone = _recently_down(s.world, s.ep.start)
    return _case(s, NO_LIVE_ISR_UNKNOWN_AR, "failed_election", brokers=tuple(gone),
                 downs=tuple(down_claim(s.world, b, s.ep.start) for b in gone), cause_brokers=gone)


def unclean_election(s: Situation) -> Case | None:
    ep = s.ep
    uc = _unclean_at(s.world, s.tp, ep.end) if ep.end is not None else None
    if uc is None:
        return None
    new = (uc.after or {}).get("leader")
    ref = uc.record or uc.trigger
    return _case(s, UNCLEAN_ELECTION, "unclean", extra=(ref,), more=(("unclean_leader", new),),
                 claims=(Claim(UNCLEAN_ELECTED, broker=new, ts=ref.ts if ref is not None else uc.ts,
                               refs=(ref,) if ref is not None else ()),))


def isr_on_failed_dirs(s: Situation) -> Case | None:
    """Every ISR member down or holding its replica on a failed log directory (not online to the controller, 2.4.0
    ControllerContext.isReplicaOnline), and no other replica online to the controller in office: those it did not
    hold live (its stated view: 'Currently active brokers', 'all live brokers') are not either. No election could take
    any replica (2.4.0 PartitionLeaderElectionAlgorithms: only online replicas)."""
    if not s.isr or not any(b in s.dir_offline for b in s.isr) or any(s.alive.get(b) for b in s.isr):
        return None
    got = s.world.view_at(s.tenure, s.ep.start) if s.tenure is not None else None
    if s.up and (got is None or any(b in got[0] for b in s.up)):
        return None  # an out-of-sync replica online to the controller: the unclean rules below say why
    gone = tuple(b for b in s.members if b not in s.up)
    claims = () if not s.up else (Claim(LIVE_VIEW, broker=s.tenure.controller, ts=got[1].ts,
                                        value=tuple(sorted(got[0])), refs=(got[1],)),)
    return _case(s, ALL_REPLICAS_OFFLINE, "dirs_offline", extra=(got[1],) if s.up else (), brokers=tuple(s.members),
                 others=tuple(s.up), controller=s.tenure.controller if s.tenure is not None else None,
                 downs=tuple(s.down(b) for b in gone), claims=claims, cause_brokers=gone)


def no_live_isr(s: Situation) -> Case | None:
    if s.isr is None or any(s.alive.get(b) for b in s.isr) or not s.up:
        return None
    if s.unclean is not None and not as_bool(s.unclean.value):
        return _case(s, NO_LIVE_ISR, "unclean_off", extra=(s.unclean.evidence,), brokers=s.isr, others=s.up,
                     downs=tuple(s.down(b) for b in s.isr), cause_brokers=s.isr)
    return None  # unclean elections allowed (or not known): why none was made is for the classifiers below


def unclean_not_taken(s: Situation) -> Case | None:
    """No ISR member alive, another replica up, unclean elections allowed, and nothing above tells why the
    controller did not elect it: said as such (an unknown cause)."""
    if s.isr is None or any(s.alive.get(b) for b in s.isr) or not s.up:
        return None
    return _case(s, UNKNOWN, "not_unclean", brokers=s.isr, others=s.up, downs=tuple(s.down(b) for b in s.isr),
                 cause_brokers=s.isr)


def no_controller(s: Situation) -> Case | None:
    ep, left = s.ep, None
    if s.tenure is not None:
        # The controller in office left moments after the loss and the next took office only as the partition got
        # its leader back: only a controller elects (0.9.0.0 / 2.7.0 KafkaController), so the partition waited for one.
        end = s.tenure.end
        nxt = next((t for t in s.world.tenures if end is not None and t.start >= end and t is not s.tenure), None)
        if end is None or end > ep.start + FAILOVER_GRACE_US or ep.end is not None and end >= ep.end \
                or ep.end is not None and (nxt is None or abs(nxt.start - ep.end) > FAILOVER_GRACE_US):
            return None
        view = s.world.view_at(s.tenure, ep.start)
        if view is not None and not any(b in view[0] for b in s.members):
            return None  # it could not have elected: no replica was live to it (offline_to_controller)
        left = s.tenure
    nxt = next((t for t in s.world.tenures if t.start >= (left.end if left is not None else ep.start)), None)
    claims = () if nxt is None else (Claim(CONTROLLER_TOOK_OVER, broker=nxt.controller, ts=nxt.start, value=nxt.epoch,
                                           refs=(nxt.start_ref,) if nxt.start_ref is not None else ()),)
    if left is not None:
        return _case(s, NO_CONTROLLER, "controller_left", controller=left.controller,
                     extra=(left.end_ref, nxt.start_ref if nxt is not None else None),
                     claims=claims + (Claim(CONTROLLER_LEFT, broker=left.controller, ts=left.end, how=left.end_cause,
                                            refs=(left.end_ref,) if left.end_ref is not None else ()),))
    return _case(s, NO_CONTROLLER, "no_controller", extra=(nxt.start_ref if nxt is not None else None,),
                 claims=claims)


def leader_failover(s: Situation) -> Case | None:
    ep = s.ep
    if s.tenure is None or ep.end is None or ep.duration_us is None or ep.duration_us > FAILOVER_GRACE_US:
        return None
    downs = (down_claim(s.world, s.leader, ep.start),) if s.leader is not None and s.leader >= 0 else ()
    return _case(s, LEADER_FAILOVER, "failover", controller=s.tenure.controller, downs=downs)


def isr_member_rejoined(s: Situation) -> Case | None:
    # The partition got its leader back the moment an in-sync replica rejoined: that replica was what
    # it lacked, whatever the replay knew of it before (logs that start mid-life, a start-up view).
    ep = s.ep
    if s.tenure is None or ep.end is None or not s.isr:
        return None
    back = _rejoined(s.world, s.isr, ep.end)
    if not back or any(s.alive.get(b) and b not in back for b in s.isr):
        return None
    claims = tuple(Claim(REJOINED, broker=b, ts=p.start, value=ep.end, refs=(p.start_ref,) if p.start_ref else ())
                   for b in back for p in [_up_since(s.world, b, ep.end)])
    return _case(s, NO_LIVE_ISR_UNKNOWN_AR, "rejoined", controller=s.tenure.controller, brokers=s.isr,
                 others=tuple(back), claims=claims, cause_brokers=back)


def offline_to_controller(s: Situation) -> Case | None:
    """The controller in office stated which brokers it held live (at its failover, 'Currently active brokers in
    the cluster', 1.1.1 KafkaController.initializeControllerContext, read from ZooKeeper's registrations; after, each
    broker change's 'all live brokers', 0.9.0.0 ReplicaStateMachine.BrokerChangeListener), and none of the
    partition's replicas was among them: it elects only replicas it holds online (1.1.1
    PartitionStateMachine.initializePartitionState marks a partition whose leader is not online OfflinePartition;
    the offline election takes only online replicas, ``controllerContext.isReplicaOnline``). Read from the
    controller's own statement where the replay's registrations say otherwise (lines of the brokers leaving that
    the evidence lacks)."""
    if s.tenure is None or not s.members:
        return None
    got = s.world.view_at(s.tenure, s.ep.start)
    if got is None:
        return None
    live, ref = got
    view = Claim(LIVE_VIEW, broker=s.tenure.controller, ts=ref.ts, value=tuple(sorted(live)), refs=(ref,))
    if not any(b in live for b in s.members):
        return _case(s, ALL_REPLICAS_OFFLINE, "offline_to_controller", extra=(ref,), controller=s.tenure.controller,
                     brokers=tuple(s.members), cause_brokers=tuple(s.members), claims=(view,))
    # The ISR as the controller held it: its state line later in the episode (its cache, 'All leaders = ...', 2.7.0
    # KafkaController.doControlledShutdown) over the view the episode opened with (the replay's, maybe older).
    stated = next((iv for iv in s.ep.intervals[1:] if iv.opened_by.event == "partition_state_observed"
                   and iv.view.isr is not None), None)
    isr = tuple(stated.view.isr) if stated is not None else s.isr
    if not isr or any(b in live for b in isr) or s.unclean is None or as_bool(s.unclean.value):
        return None
    return _case(s, NO_LIVE_ISR, "isr_offline_to_controller", controller=s.tenure.controller,
                 extra=(ref, stated.opened_by if stated is not None else None, s.unclean.evidence), brokers=isr,
                 others=tuple(b for b in s.members if b in live), cause_brokers=isr, claims=(view,))


def controller_did_not_act(s: Situation) -> Case | None:
    eligible = _eligible(s)
    if s.tenure is None or not eligible or not _watched(s.world, s.tenure.controller, s.ep):
        return None
    return _case(s, CONTROLLER_DID_NOT_ACT, "did_not_act", controller=s.tenure.controller, brokers=eligible)


def kraft_isr_without_them(s: Situation) -> Case | None:
    """KRaft, ISR not in the evidence, some replicas acceptable and the partition still leaderless.

    A KRaft controller elects an acceptable in-sync replica in the same step that removes a leader (3.9
    ReplicationControlManager.handleBrokerFenced / handleBrokerInControlledShutdown ->
    generateLeaderAndIsrUpdates) and again for every leaderless partition when a broker is unfenced
    (handleBrokerUnfenced, ``brokersToIsrs.partitionsWithNoLeader()``): replicas that were unfenced while the
    partition stayed leaderless were not in its ISR (nor its ELR), whatever the evidence lost of it."""
    if s.world.mode != "kraft" or s.ar is None or s.isr is not None or not s.up or s.tenure is None:
        return None
    if s.unclean is None or as_bool(s.unclean.value):
        return None  # unclean on: a KRaft controller would have elected one of them (not this case)
    gone = tuple(b for b in s.members if s.alive.get(b) is False)
    return _case(s, NO_LIVE_ISR_UNKNOWN_AR, "kraft_not_in_isr", extra=(s.unclean.evidence,), brokers=gone,
                 others=s.up, downs=tuple(s.down(b) for b in gone), controller=s.tenure.controller,
                 cause_brokers=gone)


def controller_unwatched(s: Situation) -> Case | None:
    eligible = _eligible(s)
    if s.tenure is None or not eligible:
        return None
    return _case(s, UNKNOWN, "unwatched", controller=s.tenure.controller, brokers=eligible)


def too_little_evidence(s: Situation) -> Case | None:
    return _case(s, UNKNOWN, "too_little", controller=s.tenure.controller if s.tenure is not None else None)


CLASSIFIERS: tuple[Callable[[Situation], Case | None], ...] = (
    partition_deleted, leader_seen_serving, all_replicas_offline, isr_down_replicas_unknown, failed_election_mid_life, unclean_election,
    isr_on_failed_dirs, no_live_isr, no_controller, leader_failover, offline_to_controller, isr_member_rejoined, controller_did_not_act,
    kraft_isr_without_them, unclean_not_taken, controller_unwatched, too_little_evidence)


def classify(ep: Episode, world: World) -> Case:
    """The first case a classifier makes (the last classifier always makes one)."""
    s = situation(ep, world)
    for classifier in CLASSIFIERS:
        case = classifier(s)
        if case is not None:
            return case
    raise AssertionError("too_little_evidence makes a case for every episode")


def explain(ep: Episode, world: World, leaderless_refs: list[Ref] | None = None) -> Cause:
    case = classify(ep, world)
    chain = list(case.chain)
    if leaderless_refs and case.kind != DELETED:
        chain.extend(leaderless_refs)
    return Cause(case.kind, render(case), _dedupe(chain), dict(case.details), case)


def _eligible(s: Situation) -> tuple[int, ...]:
    return tuple(b for b in (s.isr or []) if s.alive.get(b))


def _strategy(r: Ref) -> str | None:
    return _strategy_of(r.text or "")


@functools.lru_cache(maxsize=4096)
def _strategy_of(text: str) -> str | None:
    """The election strategy a failed election's line names (a partition's line is read by each of its episodes)."""
    m = _STRATEGY.search(text)
    return m.group(1) if m else None


def _up_since(world: World, b: int, ts: int) -> BrokerPeriod:
    return next(p for p in world.periods.get(b, [])
                if p.state == "up" and p.start is not None and ts - REJOIN_US <= p.start <= ts)


def _downs(world: World, brokers: list[int], ts: int) -> list[dict[str, Any]]:
    """When and how each broker went down (the start of its down period at ``ts``)."""
    out = []
    for b in brokers:
        p = world.period_at(b, ts)
        if p is None or p.state != "down" or p.start is None:
            continue
        out.append({"broker": b, "ts": p.start, "how": _how_down(world, p)})
    return out


_STRATEGY = re.compile(r"under strategy (\w+(?:\((?:true|false)\))?)")
# A failed election this soon after a broker went down is the controller reacting to it.
RECENT_DOWN_US = 60 * 1_000_000


LEAVING_US = 10 * 1_000_000
REJOIN_US = 1_000_000


def _rejoined(world: World, brokers, ts: int) -> list[int]:
    """Brokers (of ``brokers``) whose up-period began just before ``ts``."""
    out = []
    for b in brokers:
        for p in world.periods.get(b, []):
            if p.state == "up" and p.start is not None and ts - REJOIN_US <= p.start <= ts:
                out.append(b)
                break
    return out


def _down_soon_after(world: World, b: int, ts: int) -> int | None:
    """When broker ``b`` went down within LEAVING_US after ``ts`` (the start of that down period), if it did."""
    for p in world.periods.get(b, []):
        if p.state == "down" and p.start is not None and ts < p.start <= ts + LEAVING_US:
            return p.start
    return None


def _recently_down(world: World, ts: int) -> list[int]:
    out = []
    for b, periods in sorted(world.periods.items()):
        p = world.period_at(b, ts)
        if p is not None and p.state == "down" and p.start is not None and 0 <= ts - p.start <= RECENT_DOWN_US:
            out.append(b)
    return out


def _unclean_at(world: World, tp: TP, ts: int):
    for d in world.unclean_of(tp):
        if d.tp == tp and abs((d.record.ts if d.record and d.record.ts else d.ts) - ts) <= 1_000 \
                or d.tp == tp and abs(d.ts - ts) <= 1_000:
            return d
    return None


def _watched(world: World, controller: int, ep: Episode) -> bool:
    """Was the controller's decision log in the evidence well after the loss (so silence means inaction)?"""
    if world.recorded is None:
        return True
    probe = ep.start + FAILOVER_GRACE_US
    return bool(world.recorded(probe, controller, "election"))


def _ended_by(ep: Episode) -> Ref | None:
    return ep.closed_by


def _dedupe(refs: list[Ref]) -> list[Ref]:
    seen = set()
    out = []
    for r in refs:
        key = (r.source_file, r.source_pos, r.event, r.zxid)
        if key in seen:
            continue
        seen.add(key)
        out.append(r)
    out.sort(key=lambda r: (r.ts if r.ts is not None else 0, r.source_file or "", r.source_pos or 0))
    return out
