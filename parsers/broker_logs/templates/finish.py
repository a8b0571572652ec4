"""What one line cannot know, settled over a file's events once they are all parsed.

- A broker writes about itself without naming itself ("Session expired.", "starting"):
  the subject of such events is the writer, once writer attribution has run.
- Up to 2.0 a controller logs its election and its new epoch on two lines; the epoch
  is folded into the election event (both lines stay events of their own). Where the
  file has no election line before it (0.8-0.10 controller.log: the elector logs to
  server.log), the epoch line is the election.
- Client errors come from client logs: no broker wrote them.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from parsers.schema import Event

# Event types whose subject is always the broker that wrote the line.
SELF_TYPES = frozenset((
    "broker_startup", "broker_shutdown_started", "broker_shutdown_completed",
    "zk_session_expired", "zk_session_established", "zk_disconnected", "zk_session_closing", "broker_fatal_error",
))
# Event types whose subject is the writer when the broker side logged them.
SIDE_TYPES = frozenset((
    "controlled_shutdown_requested", "controlled_shutdown_result", "log_dir_failure", "broker_unfenced",
    "broker_registered",
))


def _about_writer(ev: Event) -> bool:
    if ev.event_type in SELF_TYPES:
        return True
    if ev.event_type in SIDE_TYPES and ev.detail:
        return ev.detail.get("side") == "broker" or ev.detail.get("via") == "broker_self"
    return False


def finish(events: list[Event]) -> None:
    """Complete a file's events in place (events are in file order)."""
    for _ in finish_stream(events):
        pass


def finish_stream(events: Iterable[Event]) -> Iterator[Event]:
    """``finish`` for a file whose events do not fit in memory: each event is completed in place
    and given back once no later event can change it (an election waits for its epoch line)."""
    pending_election: dict[int, Event] = {}
    for ev in events:
        t = ev.event_type
        if t == "client_error":
            ev.broker_id = None
            ev.source_kind = "client_log"
            yield ev
            continue
        if ev.subject_broker is None and ev.broker_id is not None and _about_writer(ev):
            ev.subject_broker = ev.broker_id
        if t == "controller_elected":
            if ev.controller_epoch is None and ev.controller_id is not None:
                replaced = pending_election.pop(ev.controller_id, None)
                if replaced is not None:
                    yield replaced
                pending_election[ev.controller_id] = ev
                continue
            done = pending_election.pop(ev.controller_id, None)
            if done is not None:
                yield done
        elif t == "controller_resigned":
            done = pending_election.pop(ev.controller_id, None)
            if done is not None:
                yield done
        elif t == "controller_startup_state" and ev.detail and ev.detail.get("kind") == "epoch":
            elected = pending_election.pop(ev.controller_id, None)
            if elected is not None:
                elected.controller_epoch = ev.controller_epoch
                elected.detail = {**(elected.detail or {}), "epoch_from_line": ev.source_pos}
                yield elected
            else:
                # 0.8-0.10 controller.log has no "elected" line of its own: the epoch line is the election.
                ev.event_type = "controller_elected"
                ev.subject_broker = ev.controller_id
                ev.detail = {k: v for k, v in ev.detail.items() if k != "kind"}
                ev.detail["via"] = "epoch_line"
        yield ev
    yield from pending_election.values()
