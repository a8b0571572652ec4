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


def finish_stream(events: Iterable[Event], ends: "PartEnds | None" = None) -> Iterator[Event]:
    """``finish`` for a file whose events do not fit in memory: each event is completed in place
    and given back once no later event can change it (an election waits for its epoch line).
    With ``ends``, the events are a part of the file finished alone (see ``PartEnds``)."""
    f = Finisher(ends)
    feed = f.feed
    for ev in events:
        if ev.event_type in HELD_TYPES:
            yield from feed(ev)
            continue
        if ev.subject_broker is None and ev.broker_id is not None and _about_writer(ev):
            ev.subject_broker = ev.broker_id
        yield ev
    yield from f.close()


# The event types Finisher.feed does more to than settle the subject (what finish_stream hands it).
HELD_TYPES = frozenset(("client_error", "controller_elected", "controller_resigned", "controller_startup_state"))


class Finisher:
    """``finish_stream`` fed one event at a time: ``feed`` gives back the events now complete, ``close``
    the rest (the elections still waiting)."""

    def __init__(self, ends: "PartEnds | None" = None):
        self.pending: dict[int, Event] = {}  # controller -> its election waiting for the epoch line
        self.ends = ends
        self.open_start = ends is not None and not ends.first
        self.touched: set = ends.touched if ends is not None else set()

    def feed(self, ev: Event) -> list[Event]:
        t = ev.event_type
        if t == "client_error":
            ev.broker_id = None
            ev.source_kind = "client_log"
            return [ev]
        if ev.subject_broker is None and ev.broker_id is not None and _about_writer(ev):
            ev.subject_broker = ev.broker_id
        pending, touched = self.pending, self.touched
        if t == "controller_elected":
            touched.add(ev.controller_id)
            if ev.controller_epoch is None and ev.controller_id is not None:
                replaced = pending.pop(ev.controller_id, None)
                pending[ev.controller_id] = ev
                return [] if replaced is None else [replaced]
            done = pending.pop(ev.controller_id, None)
            return [ev] if done is None else [done, ev]
        if t == "controller_resigned":
            touched.add(ev.controller_id)
            done = pending.pop(ev.controller_id, None)
            return [ev] if done is None else [done, ev]
        if t == "controller_startup_state" and ev.detail and ev.detail.get("kind") == "epoch":
            out = []
            elected = pending.pop(ev.controller_id, None)
            if elected is not None:
                elected.controller_epoch = ev.controller_epoch
                elected.detail = {**(elected.detail or {}), "epoch_from_line": ev.source_pos}
                out.append(elected)
            elif self.open_start and ev.controller_id not in touched:
                # an election in a part before may be waiting for this line: settle_parts decides
                self.ends.lead_epochs[ev.controller_id] = PartEnds.ref(ev)
            else:
                # 0.8-0.10 controller.log has no "elected" line of its own: the epoch line is the election.
                ev.event_type = "controller_elected"
                ev.subject_broker = ev.controller_id
                ev.detail = {k: v for k, v in ev.detail.items() if k != "kind"}
                ev.detail["via"] = "epoch_line"
            touched.add(ev.controller_id)
            out.append(ev)
            return out
        return [ev]

    def close(self) -> list[Event]:
        if self.ends is not None:
            self.ends.pending = {cid: PartEnds.ref(ev) for cid, ev in self.pending.items()}
        out = list(self.pending.values())
        self.pending = {}
        return out


class PartEnds:
    """What a part of a file (a byte range read on its own) leaves open for the parts around it, when it is
    finished alone (``finish_stream(events, ends)``): the elections still waiting for their epoch line at
    its end, and, for each controller it names, whether it names it first by an epoch line (which an
    election in a part before may be waiting for). ``settle_parts`` then does what reading on would have
    done. ``first`` is whether the part starts the file: there an epoch line with no election before it is
    the election itself, as for a whole file."""

    def __init__(self, first: bool):
        self.first = first
        self.lead_epochs: dict[int, dict] = {}  # controller -> its epoch line (left as read)
        self.touched: set[int] = set()  # controllers whose election state this part changed
        self.pending: dict[int, dict] = {}  # controller -> the election still waiting at the part's end

    @staticmethod
    def ref(ev: Event) -> dict:
        return {"pos": ev.source_pos, "sub": ev.source_sub, "epoch": ev.controller_epoch,
                "controller": ev.controller_id, "detail": ev.detail}

    def to_json(self) -> dict:
        return {"first": self.first, "lead_epochs": list(self.lead_epochs.values()),
                "touched": sorted(self.touched, key=lambda c: (c is not None, c or 0)),
                "pending": list(self.pending.values())}


def settle_parts(parts: list[dict]) -> list[tuple[int, int, dict]]:
    """The parts' ``PartEnds.to_json()``, in file order -> the changes reading the whole file would have made
    to their events, as (position, sub, new values of event_type / subject_broker / controller_epoch / detail):
    an election folding the epoch of an epoch line in a later part, or an epoch line with no election
    waiting before it becoming the election (as ``finish_stream`` does within one part)."""
    waiting: dict[int, dict] = {}
    out = []
    for part in parts:
        for line in part["lead_epochs"]:
            cid = line["controller"]
            elected = waiting.get(cid)
            if elected is not None:
                out.append((elected["pos"], elected["sub"], {
                    "controller_epoch": line["epoch"],
                    "detail": {**(elected["detail"] or {}), "epoch_from_line": line["pos"]}}))
            else:
                detail = {k: v for k, v in (line["detail"] or {}).items() if k != "kind"}
                detail["via"] = "epoch_line"
                out.append((line["pos"], line["sub"], {"event_type": "controller_elected",
                                                         "subject_broker": cid, "detail": detail}))
        for cid in part["touched"]:
            waiting.pop(cid, None)
        for elected in part["pending"]:
            waiting[elected["controller"]] = elected
    return out
