"""For a decision the replay does not agree with: the state it needed, and every line of the cluster's evidence between
the last state the replay knew and the record searched for one that shows it (issue 44: "the state it needed and proof
that no line of that cluster's evidence shows it"). Generated, for ``agreement_triage.py``; read-only on the evidence.

What a decision needed, by what the replay says it lacked:

- a ZooKeeper-mode record (election, ISR removal) ahead of the replay: the partition at the leader epoch before the
  record's (every controller write raises the leader epoch by one: 2.8.0 core/src/main/scala/kafka/api/LeaderAndIsr
  .scala ``newLeaderAndIsr`` / ``newEpochAndZkVersion``); a line shows it when it names the partition with that
  leader epoch or a later one below the record's;
- a KRaft leader epoch whose leader the replay held fenced or shutting down: that broker acceptable again (unfenced,
  registered, started) after the time the replay holds it down from; a line shows it when it names the broker in one
  of those words;
- a record whose ISR holds members the replay's ISR before it did not (a clean election picks within the ISR, an ISR
  removal keeps the rest: 2.8.0 controller/Election.scala, KafkaController.removeReplicaFromIsr): the partition's ISR
  holding them; a line shows it when it names the partition and an ISR list with every one of them;
- a record electing a broker no line showed registering: that broker registered (a line naming it with a
  register or start-up word);
- a failed election whose controller's live brokers no line states (``election_failed: live brokers unknown``): that
  controller's view of the live brokers in its epoch (2.8.0 KafkaController.initializeControllerContext's "Currently
  active brokers in the cluster", processBrokerChange's "... all live brokers: ...", doControlledShutdown's "Live
  brokers"); a line shows it when it states live brokers under that controller's id, from its epoch's first line on;
- any other (an ISR unknown at the record): the partition's state at the record's leader epoch; a line shows it when
  it names the partition with that epoch.

The window runs from the last line the parser read as stating the partition's leader epoch below the one needed (for
a broker: the time the replay's reason gives) to the record. In each file of the cluster, the lines searched are those
between the last event before the window and the first after it, every line, parsed or not.
"""
from __future__ import annotations

import gzip
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

_FENCED = re.compile(r"broker (\d+) leads at this epoch, so it was acceptable, but the evidence holds it fenced or "
                     r"shutting down from (\S+) ")
_EPOCH_IN_LINE = re.compile(r"[Ll]eader ?[Ee]poch(?:\s*[:=]\s*|\s+(?:was|is)\s+|\s+|: \d+ -> )(-?\d+)")
_BACK = re.compile(r"unfence|Unfence|UNFENCE|[Rr]egister|started|[Ss]tarting|RUNNING")
_REGISTRATION = re.compile(r"registration of broker\(s\) (\d+)")
_ACTING = re.compile(r"\[Controller id=(\d+) epoch=(\d+)\]|Controller (\d+) epoch (\d+) ")
_LIVE_SET = re.compile(r"[Cc]urrently active brokers in the cluster|all live brokers|[Ll]ive brokers:")
# A failed election run inside a broker change (its exception's stack names the handler): the live set it used was
# recomputed from ZooKeeper there (2.3.0 KafkaController.processBrokerChange -> onBrokerFailure; 0.10.2.0
# ReplicaStateMachine.BrokerChangeListener), so only that change's own line ('Newly added brokers: ..., deleted
# brokers: ..., all live brokers: ...') states it; a view stated before the change is superseded.
_IN_BROKER_CHANGE = re.compile(r"processBrokerChange|BrokerChangeListener|onBrokerFailure")
_CHANGE_LINE = re.compile(r"all live brokers")
_ISR_IN_LINE = re.compile(r"(?:ISR|[Ii]sr)(?:\s*[:=]\s*|\s+updated to\s+|\s+from\s+[\d,]*\s+to\s+|\s+)[\[(]?(?:List\()?"
                          r"((?:\d+\s*,\s*)*\d+)")


_STAMP = re.compile(r"^\[?(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)[,.](\d{3})")


def _stamp(line: str) -> int | None:
    """A line's own log4j time, as written (local to the writer), in microseconds."""
    m = _STAMP.match(line)
    if not m:
        return None
    try:
        return int(datetime.strptime(m.group(1).replace("T", " "), "%Y-%m-%d %H:%M:%S").timestamp() * 1e6) \
            + int(m.group(2)) * 1000
    except ValueError:
        return None


def _iso(ts: int | None) -> str:
    if ts is None:
        return "the evidence's start"
    return datetime.utcfromtimestamp(ts / 1e6).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def _us(iso: str) -> int | None:
    try:
        return int(datetime.strptime(iso.rstrip("Z"), "%Y-%m-%dT%H:%M:%S.%f").timestamp() * 1e6)
    except ValueError:
        return None


@dataclass
class Need:
    what: str  # "epoch" | "broker" | "state" | "live"
    text: str  # the state it needed, in words
    tp: tuple | None
    epoch: int | None = None  # the least leader epoch that shows it
    below: int | None = None  # ... and below this one (the record's)
    broker: int | None = None
    since: int | None = None  # broker items: the time the replay holds it down from
    isr: frozenset | None = None  # ISR items: the members a line must name in the partition's ISR
    controller: tuple[int, int] | None = None  # live-broker items: the acting controller's (id, epoch)
    in_change: bool = False  # ... the election ran inside a broker change (its stack names the handler)


def need_of(item) -> Need | None:
    """The state a not-agreed decision needed (see the module docstring)."""
    tp = getattr(item, "tp", None)
    rec, rep = item.recorded or {}, item.replayed or {}
    m = _FENCED.search(item.text)
    if m:
        b = int(m.group(1))
        le = re.search(r"leader epoch (\d+) of ", item.text)
        return Need("broker", f"broker {b} acceptable (unfenced) to the controller after {m.group(2)}: it leads "
                              f"leader epoch {le.group(1) if le else '?'} of {_tp(tp)}", tp, broker=b,
                    since=_us(m.group(2)))
    m = _REGISTRATION.search(item.text)
    if m:
        b = int(m.group(1))
        return Need("broker", f"broker {b} registered (live to the controller) before the record, which elects or "
                              f"registers it for {_tp(tp)}", tp, broker=b)
    if tp is None:
        return None
    e = rec.get("leader_epoch")
    if "state the evidence does not show" in item.text and rec.get("isr") and e is not None \
            and rep.get("leader_epoch") == e:
        members = frozenset(rec["isr"])
        return Need("isr", f"{_tp(tp)}'s ISR holding {sorted(members)} before the record (leader epoch {e - 1}): the "
                           f"record's ISR keeps members the replay's ISR did not hold", tp, epoch=e - 1, below=e,
                    isr=members)
    if e is not None and rep.get("leader_epoch") is not None and e > rep["leader_epoch"]:
        return Need("epoch", f"{_tp(tp)} at leader epoch {e - 1} (the record writes {e}); the replay held "
                             f"{rep['leader_epoch'] - 1} (its decision writes {rep['leader_epoch']})", tp, epoch=e - 1,
                    below=e)
    if e is not None:
        isr = f", ISR {rec['isr']}" if rec.get("isr") is not None else ""
        return Need("epoch", f"{_tp(tp)}'s state at leader epoch {e} (leader {rec.get('leader')}{isr}): "
                             f"{item.kind}", tp, epoch=e, below=e + 1)
    return Need("state", f"{_tp(tp)}'s state: {item.kind}", tp)


def _tp(tp) -> str:
    return "?" if tp is None else f"{tp[0]}-{tp[1]}"


def _names(tp) -> re.Pattern:
    t, p = re.escape(str(tp[0])), int(tp[1])
    return re.compile(rf"(?<![\w.-]){t}-{p}(?!\d)|\[{t},{p}\]|topic(?:Name)?='?{t}'?,\s*partition(?:Index)?=?{p}(?!\d)")


def _broker_named(b: int) -> re.Pattern:
    return re.compile(rf"(?:[Bb]roker[ =:]*|brokerId[=:]\s*|[Nn]ode[ =:]*|\bid[=:]\s*){b}(?!\d)")


class Lines:
    """The raw lines of the evidence files, read once."""

    def __init__(self, root: Path):
        self.root = root
        self._text: dict[str, list[str]] = {}

    def of(self, rel: str) -> list[str]:
        got = self._text.get(rel)
        if got is None:
            data = (self.root / rel).read_bytes()
            if data[:2] == b"\x1f\x8b":
                try:
                    data = gzip.decompress(data)
                except (OSError, EOFError):
                    data = b""
            got = self._text[rel] = data.decode("utf-8", "replace").split("\n")
            if got and got[-1] == "":
                got.pop()
        return got


def index_events(events) -> tuple[dict, dict]:
    """file -> [(pos, ts)] in line order; (file, pos) -> event types."""
    by_file: dict[str, list[tuple[int, int]]] = defaultdict(list)
    kinds: dict[tuple, set] = defaultdict(set)
    for e in events:
        if e.source_file is None or e.source_pos is None or e.source_kind not in ("broker_log", "controller_log"):
            if e.source_file is None or e.source_pos is None:
                continue
        if e.ts is not None:
            by_file[e.source_file].append((e.source_pos, e.ts))
        kinds[(e.source_file, e.source_pos)].add(e.event_type)
    return {f: sorted(v) for f, v in by_file.items()}, kinds


def window_start(need: Need, events, until: int | None) -> int | None:
    if need.what == "broker":
        return need.since
    if need.what == "live":
        c, ep = need.controller
        return min((e.ts for e in events if e.ts is not None and e.controller_id == c and e.controller_epoch == ep),
                   default=None)
    best = None
    for e in events:
        if (e.topic, e.partition) != tuple(need.tp) or e.ts is None:
            continue
        if (e.isr is None) if need.what == "isr" else (e.leader_epoch is None):
            continue
        if need.what == "isr":
            if (until is None or e.ts < until) and not need.isr <= set(e.isr) and (best is None or e.ts > best):
                best = e.ts
            continue
        if until is not None and e.ts >= until:
            continue
        if need.epoch is not None and e.leader_epoch >= need.epoch:
            continue
        if best is None or e.ts > best:
            best = e.ts
    return best


def search(need: Need, t0: int | None, t1: int | None, files: dict, kinds: dict, lines: Lines,
           record: tuple[str, int] | None = None) -> dict:
    """Every line of ``files`` between ``t0`` and ``t1`` (by the events around it) tested for the state needed; in the
    record's own file, the lines before the record."""
    ranges, named, found, fams = [], 0, [], Counter()
    if need.what == "live":
        pat = re.compile(rf"\[Controller id={need.controller[0]}\]|\[Controller {need.controller[0]}\]")
    else:
        pat = _names(need.tp) if need.what != "broker" else _broker_named(need.broker)
    for rel in sorted(files):
        at = files[rel]
        before = [p for p, ts in at if t0 is not None and ts < t0]
        after = [p for p, ts in at if t1 is not None and ts > t1]
        if record is not None and rel == record[0]:
            after.append(record[1])
        text = lines.of(rel)
        lo = (max(before) + 1) if before else 1
        hi = (min(after) - 1) if after else len(text)
        # a line's own time, shifted as the parser shifted the file's events, keeps lines after the file's last event
        # (or before its first) out of a window they are not in; a line with no time of its own has its entry's
        shift = next((ts - st for p, ts in at if (st := _stamp(text[p - 1] if p <= len(text) else "")) is not None),
                     None)
        inside, when = [], None
        for n in range(lo, hi + 1):
            st = _stamp(text[n - 1])
            if st is not None and shift is not None:
                when = st + shift
            if when is not None and (t0 is not None and when < t0 or t1 is not None and when > t1):
                continue
            inside.append(n)
        if not inside:
            continue
        ranges.append(f"{rel}:{inside[0]}-{inside[-1]}")
        for n in inside:
            ln = text[n - 1]
            if not pat.search(ln):
                continue
            if need.what in ("broker", "live"):
                states = _BACK if need.what == "broker" else _CHANGE_LINE if need.in_change else _LIVE_SET
                if not states.search(ln):
                    continue
                named += 1
                fams.update(kinds.get((rel, n)) or {"not parsed"})
                found.append(f"{rel}:{n}")
                continue
            named += 1
            fams.update(kinds.get((rel, n)) or {"not parsed"})
            if need.what == "isr":
                if any(need.isr <= {int(x) for x in re.findall(r"\d+", lst)} for lst in _ISR_IN_LINE.findall(ln)):
                    found.append(f"{rel}:{n}")
            elif need.epoch is not None and any(need.epoch <= int(x) < need.below
                                                for x in _EPOCH_IN_LINE.findall(ln)):
                found.append(f"{rel}:{n}")
    return {"ranges": ranges, "named": named, "families": fams, "found": found}


def _record_text(item, lines: Lines) -> tuple[list[str], int] | None:
    """The record's file as lines, and the record's line number in it (None: not a file line, or unreadable)."""
    f, _, pos = item.where.rpartition(":")
    if not pos.isdigit():
        return None
    try:
        return lines.of(f), int(pos)
    except OSError:
        return None


def _acting(item, lines: Lines) -> tuple[int, int] | None:
    """(controller id, controller epoch) the record's own line was written under."""
    at = _record_text(item, lines)
    if at is None:
        return None
    text, n = at
    m = _ACTING.search(text[n - 1]) if n <= len(text) else None
    if m is None:
        return None
    return (int(m.group(1) or m.group(3)), int(m.group(2) or m.group(4)))


def _in_broker_change(item, lines: Lines, frames: int = 40) -> str | None:
    """The broker-change handler the record's exception names in the stack trace logged under it, if any."""
    at = _record_text(item, lines)
    if at is None:
        return None
    text, n = at
    for ln in text[n:n + frames]:
        if _stamp(ln) is not None:
            return None  # the next entry: the stack trace ended
        m = _IN_BROKER_CHANGE.search(ln)
        if m:
            return m.group(0)
    return None


def proof_lines(item, events, lines: Lines, files_and_kinds=None) -> list[str]:
    """The lines a triage file prints under a not-agreed decision."""
    need = need_of(item)
    if need is not None and need.what == "state" and "live brokers unknown" in item.kind:
        acting = _acting(item, lines)
        if acting is not None:
            change = _in_broker_change(item, lines)
            need = Need("live", f"the live brokers of controller {acting[0]} in its epoch {acting[1]}, which ran the "
                                f"failed election of {_tp(need.tp)}" + (
                                    f" inside a broker change (its stack trace: {change}), which recomputed them: "
                                    "stated only by that change's own 'all live brokers' line" if change else ""),
                        need.tp, controller=acting, in_change=bool(change))
    if need is None or need.tp is None and need.what != "broker":
        return ["  - needed: not told by the replay's reason; not searched"]
    files, kinds = files_and_kinds or index_events(events)
    t1 = item.ts
    t0 = window_start(need, events, t1)
    f, _, pos = item.where.rpartition(":")
    record = (f, int(pos)) if pos.isdigit() else None
    got = search(need, t0, t1, files, kinds, lines, record) if need.what != "state" else None
    out = [f"  - needed: {need.text}"]
    if got is None:
        return out + ["  - searched: no single state to search for"]
    what = (f"lines naming broker {need.broker} with unfence/register/start words" if need.what == "broker"
            else f"controller {need.controller[0]}'s broker-change lines ('all live brokers')"
            if need.what == "live" and need.in_change
            else f"controller {need.controller[0]}'s lines stating live brokers" if need.what == "live"
            else f"lines naming {_tp(need.tp)}")
    fam = ", ".join(f"{k} {n}" for k, n in sorted(got["families"].items())) or "none"
    if need.what in ("broker", "live"):
        shows = ""
    elif need.what == "isr":
        shows = f"; stating an ISR with {sorted(need.isr)}"
    else:
        shows = "; stating leader epoch " + (f"{need.epoch}" if need.below == need.epoch + 1 else
                                             f"{need.epoch}..{need.below - 1}")
    out.append(f"  - searched: every line between {_iso(t0)} and {_iso(t1)} in {len(got['ranges'])} file(s): "
               + (", ".join(got["ranges"]) or "none"))
    out.append(f"  - {what}: {got['named']} ({fam}){shows}: "
               + (("FOUND at " + ", ".join(got["found"][:20])) if got["found"] else "none found"))
    return out
