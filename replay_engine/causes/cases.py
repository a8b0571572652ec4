"""A leaderless episode's cause as data: the case a classifier makes, each claim citing its events.

Kept apart from the classifiers (``explain.py``) and from the sentence (``explain_text.py``) so that
both can name the case without importing each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replay_engine.common.facts import Ref
from replay_engine.common.frozen import quick_init

ALL_REPLICAS_OFFLINE = "all_replicas_offline"
NO_LIVE_ISR = "no_live_isr_unclean_disabled"
NO_LIVE_ISR_UNKNOWN_AR = "no_live_isr"
NO_CONTROLLER = "no_controller"
CONTROLLER_DID_NOT_ACT = "controller_did_not_act"
LEADER_FAILOVER = "leader_failover"
DELETED = "partition_deleted"
REASSIGNING = "partition_reassigning"
UNKNOWN = "unknown"
UNCLEAN_ELECTION = "unclean_election"
LEADER_RETURN_UNSEEN = "leader_return_unseen"  # its leader was running and live to the controller; its return unseen

# What a claim says (``Claim.what``):
LEADERLESS = "leaderless"  # the partition lost its leader at ``ts`` (refs: the event that opened the episode)
BROKER_DOWN = "broker_down"  # ``broker`` went down at ``ts``, ``how`` (refs: the event that says so)
BROKER_NOT_RUNNING = "broker_not_running"  # the evidence shows no down period; only that it was not up at ``ts``
FAILED_ELECTION = "failed_election"  # an election for the partition failed at ``ts`` (``how``: its strategy; refs:
#   the controller's record of the failure, or the event the replay's own failed election answered)
UNCLEAN_CONFIG = "unclean_config"  # unclean.leader.election.enable was ``value`` (``how``: where it was set)
UNCLEAN_ELECTED = "unclean_elected"  # the controller elected ``broker`` out of sync at ``ts``
CONTROLLER_LEFT = "controller_left"  # controller ``broker`` left office at ``ts`` (``how``: why; refs: the line)
CONTROLLER_TOOK_OVER = "controller_took_over"  # ``broker`` became controller (epoch ``value``) at ``ts``
REJOINED = "rejoined"  # ``broker`` came back up at ``ts`` (``value``: when the partition had a leader again)
LIVE_VIEW = "live_view"  # controller ``broker`` stated at ``ts`` the brokers it held live (``value``; refs: that line)
REPLICA_DIR_OFFLINE = "replica_dir_offline"  # ``broker``'s replica of the partition was on a log directory that had
#   failed, which the controller held offline from ``ts`` (refs: its line 'Mark replicas ... on broker B as offline')
SERVING = "serving"  # ``broker``'s own line at ``ts`` shows it running as the partition's leader, sent to it by the
#   controller (refs: that line)


@quick_init
@dataclass(frozen=True)
class Claim:
    what: str
    broker: int | None = None
    ts: int | None = None
    how: str | None = None
    value: Any = None
    refs: tuple[Ref, ...] = ()


@quick_init
@dataclass(frozen=True)
class Case:
    """Why one partition had no leader: the kind, the facts claimed, and the evidence chain.

    ``form`` tells apart the sentences one kind has (e.g. a single replica or all of several down);
    ``brokers`` are the brokers the case is about (the replicas, the ISR, the live out-of-sync ones...),
    and ``downs`` how each of the named dead brokers went down, in the sentence's order."""

    kind: str
    form: str
    topic: str
    partition: int
    start: int
    end: int | None
    duration_us: int | None
    trace_end: int | None
    replicas: tuple[int, ...] | None
    isr_at_loss: tuple[int, ...] | None
    leader_before: int | None
    controller: int | None = None
    brokers: tuple[int, ...] = ()
    others: tuple[int, ...] = ()  # a second set of brokers (alive but out of sync; those that rejoined)
    downs: tuple[Claim, ...] = ()
    claims: tuple[Claim, ...] = ()
    unclean: Claim | None = None
    chain: tuple[Ref, ...] = ()
    details: tuple[tuple[str, Any], ...] = ()

    def claim(self, what: str) -> Claim | None:
        return next((c for c in self.claims if c.what == what), None)
