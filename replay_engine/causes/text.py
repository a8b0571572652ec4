"""A case (``replay_engine.causes.cases``) written as one English sentence, and the times and durations in it.

Pure: reads only the case. It lives in the engine, not in ``forensics/report``, because the sentence
is part of the replay's own output (``Cause.summary`` in ``replay.json``, which the engine writes) and
the engine may not import ``forensics``; the report imports it from here (docs/replay.md).
"""
from __future__ import annotations

from parsers.schema import iso_utc
from replay_engine.causes.cases import (BROKER_DOWN, CONTROLLER_LEFT, CONTROLLER_TOOK_OVER, FAILED_ELECTION, LIVE_VIEW,
                                 REPLICA_DIR_OFFLINE, SERVING,
                                 UNCLEAN_ELECTED, Case, Claim)


def fmt_duration(us: int | None) -> str:
    """A duration as every output shows it: the replay's sentences, the report and the dashboards."""
    if us is None:
        return "until the end of the evidence"
    s = us / 1e6
    if s < 1:
        return f"{us / 1000:.0f} ms"
    if s < 60:
        return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m}m{sec:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m{sec:02d}s"


def fmt_ts(ts: int | None) -> str:
    return iso_utc(ts) or "?"


# How a broker's up-period ended (``BrokerPeriod.end_cause``), or the event that opened its down period.
HOW_DOWN = {
    "session_expired": "lost its ZooKeeper session (expired)",
    "expired": "lost its ZooKeeper session (expired)",
    "session_closed": "closed its ZooKeeper session (clean stop)",
    "closed": "closed its ZooKeeper session (clean stop)",
    "shutdown": "shut down",
    "controller_detected": "was declared dead by the controller",
    "fenced": "was fenced by the controller",
    "deleted": "lost its registration",
    "bounced": "restarted",
    "halted": "halted (its process ended while ZooKeeper still listed it)",
    "controlled_shutdown": "began a controlled shutdown",
    "unregistered": "was unregistered",
    "zk_hole": "went down in ZooKeeper transactions no file holds (a lost txn log)",
}


def down_phrase(c: Claim) -> str:
    """'was stopped at T' / 'lost its ZooKeeper session at T'."""
    if c.what == REPLICA_DIR_OFFLINE:
        return f"held its replica on a failed log directory, offline to the controller from {fmt_ts(c.ts)}"
    if c.what != BROKER_DOWN:
        return f"was not running at {fmt_ts(c.ts)}"
    if c.how == "zk_hole":  # when, the lost transactions knew; the replay knows only where they began
        return f"{HOW_DOWN['zk_hole']}, after {fmt_ts(c.ts)}"
    return f"{HOW_DOWN.get(c.how or '', 'went down')} at {fmt_ts(c.ts)}"


def names(bs) -> str:
    bs = list(bs)
    if len(bs) == 1:
        return f"broker {bs[0]}"
    return "brokers " + ", ".join(str(b) for b in bs)


def _was(bs) -> str:
    return "was" if len(bs) == 1 else "were"


def _isr(case: Case):
    return list(case.isr_at_loss) if case.isr_at_loss is not None else None


def opener(case: Case) -> str:
    end = f"to {fmt_ts(case.end)} ({fmt_duration(case.duration_us)})" if case.end is not None else \
        f"until the end of the evidence at {fmt_ts(case.trace_end)}"
    return f"{case.topic}-{case.partition} had no leader from {fmt_ts(case.start)} {end}"


def _listed(case: Case, sep: str) -> str:
    return sep.join(f"{c.broker} {down_phrase(c)}" for c in case.downs)


def _rf1(case: Case) -> str:
    return (f"replication factor 1 and its only replica, broker {case.brokers[0]}, {down_phrase(case.downs[0])}; "
            "unclean election could not help: there was no other replica.")


def _all_down(case: Case) -> str:
    return (f"all {len(case.brokers)} replicas ({names(case.brokers)}) were down ({_listed(case, '; ')}); no replica "
            "could take over.")


def _isr_down(case: Case) -> str:
    return (f"every ISR member ({names(case.brokers)}) was down ({_listed(case, '; ')}); "
            "the trace does not show the partition's other replicas, if it had any.")


def _failed_election(case: Case) -> str:
    failed = case.claim(FAILED_ELECTION)
    how = f" under {failed.how}" if failed is not None and failed.how else ""
    after = f"right after {'; '.join(f'broker {c.broker} ' + down_phrase(c) for c in case.downs)}, " if case.downs else ""
    return (f"{after}the controller's election failed{how}: no in-sync replica was alive. The "
            "partition's replicas and ISR are not in the evidence (it starts after the partition was created)"
            + ("." if case.downs else ", nor which brokers were down."))


def _unclean(case: Case) -> str:
    src = f" ({case.unclean.how})" if case.unclean is not None else ""
    new = case.claim(UNCLEAN_ELECTED).broker
    return (f"no ISR member was alive (ISR {_isr(case)}); unclean.leader.election.enable was true{src}, "
            f"so the controller elected broker {new}, which was not in sync: messages only the old ISR had "
            "may be lost.")


def _unclean_off(case: Case) -> str:
    return (f"no ISR member was alive (ISR {_isr(case)}: broker {_listed(case, ', ')}); "
            f"{names(case.others)} {_was(case.others)} alive but out of sync, and "
            f"unclean.leader.election.enable was false ({case.unclean.how}), so the controller kept "
            "leader -1 rather than elect a replica that might lack data.")


def _not_unclean(case: Case) -> str:
    return (f"no ISR member was alive (ISR {_isr(case)}); {names(case.others)} could have been elected "
            "uncleanly but was not.")


def _no_controller(case: Case) -> str:
    leader = case.leader_before
    lead = f"its leader, broker {leader}, " if leader is not None and leader >= 0 else "it "
    nxt = case.claim(CONTROLLER_TOOK_OVER)
    after = (f"; the next controller, broker {nxt.broker} (epoch {nxt.value}), took over at {fmt_ts(nxt.ts)}"
             if nxt is not None else "")
    return f"{lead}was lost while the cluster had no active controller{after}."


def _controller_left(case: Case) -> str:
    leader = case.leader_before
    lead = f"its leader, broker {leader}, " if leader is not None and leader >= 0 else "it "
    left, nxt = case.claim(CONTROLLER_LEFT), case.claim(CONTROLLER_TOOK_OVER)
    after = (f"the next controller, broker {nxt.broker} (epoch {nxt.value}), took over only at {fmt_ts(nxt.ts)}"
             if nxt is not None else "no controller took over in the evidence")
    return (f"{lead}was lost at {fmt_ts(case.start)}, controller {case.controller} left office at "
            f"{fmt_ts(left.ts if left else None)} before electing, and {after}: only a controller elects.")


def _failover(case: Case) -> str:
    leader = case.leader_before
    if leader is not None and leader >= 0:
        lost = f"its leader, broker {leader}, {down_phrase(case.downs[0])}"
    else:
        lost = "the controller wrote leader -1 for it"
    return (f"{lost}, and controller {case.controller} "
            f"elected a new leader from the ISR {fmt_duration(case.duration_us)} later.")


def _rejoined(case: Case) -> str:
    isr = case.brokers
    return (f"its in-sync replica{'s' if len(isr) > 1 else ''} ({names(isr)}) "
            f"{_was(isr)} not live for controller {case.controller}; it got a "
            f"leader again when {names(case.others)} rejoined at {fmt_ts(case.end)}.")


def _did_not_act(case: Case) -> str:
    return (f"{names(case.brokers)} {_was(case.brokers)} alive and in the "
            f"ISR and controller {case.controller} was active, yet no election is recorded for "
            f"{fmt_duration(case.duration_us)}: the controller did not act (a divergence to investigate).")


def _unwatched(case: Case) -> str:
    return (f"{names(case.brokers)} {_was(case.brokers)} alive and in the ISR, "
            f"but the controller's own log for that time is not in the evidence, so whether it acted "
            "cannot be told.")


def _kraft_not_in_isr(case: Case) -> str:
    gone = "; ".join(f"broker {c.broker} {down_phrase(c)}" for c in case.downs)
    they = "it was" if len(case.others) == 1 else "they were"
    return (f"its ISR is not in the evidence, but {names(case.others)} {_was(case.others)} unfenced when it lost its "
            f"leader, and a KRaft controller elects an unfenced in-sync replica whenever a leader leaves and again "
            f"whenever a broker is unfenced: {they} not in the ISR, so no ISR member was alive"
            + (f" ({gone})" if gone else "") + "; unclean.leader.election.enable was false"
            + (f" ({case.unclean.how})." if case.unclean is not None and case.unclean.how else "."))


def _deleted(case) -> str:
    # The controller elects for no partition of a topic queued for deletion (3.7.0 PartitionStateMachine.
    # triggerOnlineStateChangeForPartitions: "except partitions that belong to topics to be deleted"; 0.9+ likewise).
    held = dict(case.details).get("deletion_halted")
    if not held:
        return f"topic {case.topic} was being deleted."
    why = f" ({held[0]['reason']})" if held[0].get("reason") else ""
    return (f"topic {case.topic} was being deleted, and the controller put the deletion on hold at "
            f"{fmt_ts(held[0]['ts'])}{why}: a topic queued for deletion gets no new leader, so it stayed offline "
            f"until the deletion could go on.")


def _leader_running(case: Case) -> str:
    seen = case.claim(SERVING)
    lead = case.brokers[0]
    at = f" ({seen.refs[0].cite()})" if seen is not None and seen.refs else ""
    how = ("the controller elected it leader" if seen is not None and seen.refs and
           seen.refs[0].event == "partition_state_change"
           else f"broker {lead} took up the controller's request naming it leader")
    return (f"the replay held its leader, broker {lead}, down (it {down_phrase(case.downs[0])}), but {how} at "
            f"{fmt_ts(seen.ts if seen else None)}{at}: it was live to the controller, and the lines of its return are "
            "not in the evidence, so the partition most likely had its leader.")


def _offline_to_controller(case: Case) -> str:
    view = case.claim(LIVE_VIEW)
    live = "no broker" if view is None or not view.value else f"only {names(view.value)}"
    at = f" ({view.refs[0].cite()})" if view is not None and view.refs else ""
    one = len(case.brokers) == 1
    return (f"{'its only replica' if one else 'none of its replicas'}, {names(case.brokers)}, "
            f"{'was not' if one else 'was'} live to controller {case.controller}, which held {live} live at "
            f"{fmt_ts(view.ts if view else None)}{at}: a controller elects only replicas it holds live.")


def _isr_offline_to_controller(case: Case) -> str:
    view = case.claim(LIVE_VIEW)
    live = "no broker" if view is None or not view.value else f"only {names(view.value)}"
    at = f" ({view.refs[0].cite()})" if view is not None and view.refs else ""
    return (f"no member of its ISR ({names(case.brokers)}) was live to controller {case.controller}, which held "
            f"{live} live at {fmt_ts(view.ts if view else None)}{at}; {names(case.others)} "
            f"{_was(case.others)} live but out of sync, and unclean.leader.election.enable was false"
            + (f" ({case.unclean.how})" if case.unclean is not None and case.unclean.how else "")
            + ", so the controller kept leader -1.")


def _dirs_offline(case: Case) -> str:
    view = case.claim(LIVE_VIEW)
    not_live = "" if not case.others else (
        f"; {names(case.others)} {_was(case.others)} not among the brokers controller {case.controller} held live at "
        f"{fmt_ts(view.ts if view else None)}" + (f" ({view.refs[0].cite()})" if view is not None and view.refs else ""))
    return f"no replica was online to the controller ({_listed(case, '; ')}{not_live}): no election could take one."


# Case.form -> the reason, written after "<partition> had no leader from .. to ..: ".
REASONS = {
    "deleted": lambda case: _deleted(case),
    "rf1": _rf1,
    "all_down": _all_down,
    "dirs_offline": _dirs_offline,
    "isr_down": _isr_down,
    "failed_election": _failed_election,
    "unclean": _unclean,
    "unclean_off": _unclean_off,
    "not_unclean": _not_unclean,
    "no_controller": _no_controller,
    "controller_left": _controller_left,
    "failover": _failover,
    "rejoined": _rejoined,
    "did_not_act": _did_not_act,
    "unwatched": _unwatched,
    "kraft_not_in_isr": _kraft_not_in_isr,
    "leader_running": _leader_running,
    "offline_to_controller": _offline_to_controller,
    "isr_offline_to_controller": _isr_offline_to_controller,
    "too_little": lambda case: "the trace does not show enough (replicas or ISR unknown) to say why.",
}


def render(case: Case) -> str:
    return f"{opener(case)}: {REASONS[case.form](case)}"
