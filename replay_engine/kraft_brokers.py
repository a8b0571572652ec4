"""KRaft brokers as the quorum controller holds them: registered (with the epoch), fenced, in controlled shutdown, and
each broker's periods up and down; the only writer of that state in the KRaft replay.

Acceptable leaders are registered, unfenced and not in controlled shutdown (3.5.1 .. 3.9.0-rc3
ClusterControlManager.isActive, PartitionChangeBuilder's isAcceptableLeader).
"""
from __future__ import annotations

from typing import Any

from replay_engine import facts as F
from replay_engine.part import Part
from replay_engine.partition import BrokerPeriod
from replay_engine.facts import iso_utc  # the time format of refs and reports


class KraftBrokers(Part):
    """Broker registrations and liveness, each change with the line or record it came from (the periods' refs)."""

    def __init__(self, replay: Any):
        # the KraftReplay: its partitions (shown as their leaders come and go) and evidence; weak, as in the other parts
        self.belong_to(replay)
        self.parts = replay.parts
        self.registered: dict[int, Any] = {}
        self.fenced: set[int] = set()
        self.cs: set[int] = set()
        self.live: set[int] = set()  # registered and unfenced (what the timeline calls alive)
        self.known_brokers: set[int] = set()
        self.periods: dict[int, list[BrokerPeriod]] = {}
        self.recent_gone: dict[int, int] = {}  # broker -> when it was fenced / began controlled shutdown
        self.journal: list[tuple] | None = None  # shard mode: every change of a broker's liveness, in order
        self.liveness_at: dict[int, int] = {}  # broker -> time of the last line the replay took its liveness from
        # broker -> when the controller began registering its new incarnation; until that registration is replayed the
        # changes it writes are handleBrokerUncleanShutdown's (brokerWithUncleanShutdown)
        self.unclean_shutdown: dict[int, F.Ref] = {}
        self.stopped: set[int] = set()  # what-if: brokers killed that the controller has not fenced yet

    def acceptable(self) -> frozenset[int]:
        return frozenset(b for b in self.registered if b not in self.fenced and b not in self.cs)

    def all_out_since(self, replicas, ts: int) -> tuple[int, F.Ref] | None:
        """When the last of ``replicas`` left (its down period's start and line), if none of them has been an
        acceptable leader since but by its latest unfence (the grant begins the controller event whose
        handleBrokerUnfenced elects the leaderless partitions: 3.9.0-rc3 BrokerHeartbeatManager
        .calculateNextBrokerState, ReplicationControlManager.handleBrokerUnfenced); else None."""
        last = None
        for b in replicas:
            ps = [per for per in self.periods.get(b, ()) if per.start is not None and per.start <= ts]
            if ps and ps[-1].state == "up" and ps[-1].start_ref is not None \
                    and ps[-1].start_ref.event == "broker_unfenced":
                ps = ps[:-1]
            if not ps or ps[-1].state == "up":
                return None
            if last is None or ps[-1].start > last[0]:
                last = (ps[-1].start, ps[-1].start_ref)
        return last

    def held_out(self, b: int) -> bool:
        """Not an acceptable leader as far as the replay knows: fenced, shutting down or not registered."""
        return b in self.fenced or b in self.cs or b not in self.registered

    def shutting_down(self) -> frozenset[int]:
        """Registered, unfenced brokers in controlled shutdown (not acceptable leaders, but unfenced)."""
        return frozenset(b for b in self.cs if b in self.registered and b not in self.fenced)

    def _period(self, b: int, ts: int, ref: F.Ref, state: str, cause: str | None = None) -> None:
        ps = self.periods.setdefault(b, [])
        if ps and ps[-1].state == state:
            return
        if ps and ps[-1].end is None:
            ps[-1].end, ps[-1].end_ref, ps[-1].end_cause = ts, ref, cause
        ps.append(BrokerPeriod(b, ts, start_ref=ref, state=state))
        self.known_brokers.add(b)

    def liveness(self, b: int, ts: int, ref: F.Ref, cause: str) -> None:
        self.liveness_at[b] = ts
        if self.journal is not None:
            self.journal.append((ts, b, cause, ref.source_file, ref.source_pos, ref.event))
        # A broker in controlled shutdown may not lead: for availability it has left already.
        up = b in self.registered and b not in self.fenced and b not in self.cs
        was = b in self.live
        if up and not was:
            self.live.add(b)
            self._period(b, ts, ref, "up")
        elif not up and was:
            self.live.discard(b)
            self._period(b, ts, ref, "down", cause)
        elif not up and b not in self.periods:
            # registered fenced, as every broker starts: catching up with the metadata log, not a failure
            self._period(b, ts, ref, "starting" if cause == "registered" else "down", cause)
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.leader == b:
                self.r.show(p, ts, ref, "liveness")

    def on_registered(self, f: F.BrokerRegistered) -> None:
        b = f.broker
        self.unclean_shutdown.pop(b, None)
        self.stopped.discard(b)
        self.registered[b] = f.epoch
        if f.fenced is not None:
            (self.fenced.add if f.fenced else self.fenced.discard)(b)
        self.cs.discard(b)
        self.r.evidence_by_broker.setdefault(b, []).append(f.ref)
        self.liveness(b, f.ts, f.ref, "registered")

    def on_broker_down(self, f: F.BrokerDown) -> None:
        b = f.broker
        if f.cause == "heartbeat_timeout":
            # "Fencing broker N because its session has timed out": maybeFenceOneStaleBroker logs it and runs
            # handleBrokerFenced in the same event (3.5.1 .. 3.9.0-rc3 ReplicationControlManager); 3.4-3.6 log the
            # fence record at no INFO line, 3.7+ as "Replayed BrokerRegistrationChangeRecord ..." (the same fence
            # stated again, see fence)
            self.fence(b, f, "fenced")
        elif f.cause == "unregistered":
            self.registered.pop(b, None)
            self.recent_gone[b] = f.ts
            self.liveness(b, f.ts, f.ref, "unregistered")
            if not self.r.has_records:
                # handleBrokerUnregistered: the broker leaves every ISR and ELR (3.7.0 .. trunk
                # ReplicationControlManager, brokerToRemove over partitionsWithBrokerInIsr and partitionsWithBrokerInElr)
                self.r.steps.leaving(b, f, elr_too=True)
        else:
            self.fence(b, f, f.cause)

    def fence(self, b: int, f: F.Fact, cause: str) -> None:
        if b in self.fenced and b in self.registered:
            # handleBrokerFenced runs only when a broker's state becomes fenced (maybeFenceOneStaleBroker finds unfenced
            # brokers only; processBrokerHeartbeat on a change of state): a fence of a fenced broker is the same one,
            # stated again (its liveness read from this line too)
            self.r.evidence_by_broker.setdefault(b, []).append(f.ref)
            self.liveness_at[b] = f.ts
            return
        self.registered.setdefault(b, None)
        self.fenced.add(b)
        self.recent_gone[b] = f.ts
        self.r.evidence_by_broker.setdefault(b, []).append(f.ref)
        self.liveness(b, f.ts, f.ref, cause)
        if not self.r.has_records:
            self.r.steps.leaving(b, f)

    def on_unfenced(self, f: F.BrokerUp) -> None:
        b = f.broker
        self.registered.setdefault(b, None)
        self.fenced.discard(b)
        self.cs.discard(b)
        self.liveness(b, f.ts, f.ref, "unfenced")
        if not self.r.has_records:
            self.r.steps.unfence(f)

    def on_controlled_shutdown(self, f: F.ControlledShutdownRequest) -> None:
        """The controller granted a controlled shutdown ('Unfenced broker N has requested and been granted a
        controlled shutdown', or a registration change to in-controlled-shutdown)."""
        b = f.broker
        if b in self.cs:
            return
        self.cs.add(b)
        self.recent_gone[b] = f.ts
        self.r.evidence_by_broker.setdefault(b, []).append(f.ref)
        self.liveness(b, f.ts, f.ref, "controlled_shutdown")
        if not self.r.has_records:
            self.r.steps.leaving(b, f)

    def on_stopped(self, f: F.BrokerStopped) -> None:
        """What-if: the broker was killed; it serves nothing from here, but the controller learns only at its fence."""
        self.stopped.add(f.broker)
        for tp in sorted(self.parts):
            p = self.parts[tp]
            if p.leader == f.broker:
                self.r.show(p, f.ts, f.ref, "liveness")

    def on_unclean_shutdown(self, f: F.BrokerUncleanShutdown) -> None:
        """The controller registers a new incarnation of the broker: the changes it writes first, up to the
        RegisterBrokerRecord, remove the previous incarnation from every ISR and ELR (3.9.0-rc3
        ClusterControlManager.registerBroker, ReplicationControlManager.handleBrokerUncleanShutdown)."""
        self.unclean_shutdown[f.broker] = f.ref
        self.r.evidence_by_broker.setdefault(f.broker, []).append(f.ref)
        if not self.r.has_records:
            self.r.steps.unclean_shutdown(f.broker, f)

    def leader_active(self, leader: int, ts: int, ref: F.Ref) -> None:
        self.registered.setdefault(leader, None)
        self.fenced.discard(leader)
        self.cs.discard(leader)
        self.liveness(leader, ts, ref, "elected leader")

    def on_leader_active_hint(self, f: F.LeaderActiveHint) -> None:
        """Another shard's line showed ``f.leader`` active (its own shard decided, with its partition's state). Phase
        1's candidates are taken where the leader was not acceptable, as the line's own shard mostly finds."""
        if f.candidate:
            if self.r.has_records or not self.held_out(f.leader):
                return
            self.r.inferred.append(f.key)
        self.leader_active(f.leader, f.ts, f.ref)

    def on_registration_observed(self, f: F.BrokerRegistrationObserved) -> None:
        self.registered[f.broker] = f.epoch
        self.known_brokers.add(f.broker)

    def first_up(self, b: int, since: int, until: int) -> int | None:
        """When broker ``b`` first became an acceptable leader in (since, until], if it did."""
        return next((per.start for per in self.periods.get(b, ()) if per.state == "up" and per.start is not None
                     and since < per.start <= until), None)

    def acceptable_at(self, ts: int) -> frozenset[int]:
        """The brokers that were acceptable leaders at ``ts`` (their periods up then), as the replay followed them."""
        return frozenset(b for b, ps in self.periods.items()
                         if any(per.state == "up" and per.start is not None and per.start <= ts
                                and (per.end is None or ts < per.end) for per in ps))

    def up_between(self, b: int, since: int, until: int) -> str | None:
        """The first period in which broker ``b`` was acceptable overlapping (since, until], as text, if any."""
        for per in self.periods.get(b, []):
            if per.state == "up" and per.start is not None and per.start <= until \
                    and (per.end is None or per.end > since):
                return f"up from {iso_utc(per.start)}" + (f" to {iso_utc(per.end)}" if per.end is not None else "")
        return None
