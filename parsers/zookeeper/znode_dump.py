"""What operators have of Kafka's znodes: zkCli / zookeeper-shell output and capture folders -> observed events.

Three inputs, told apart by their first bytes:
- text from ``zkCli.sh`` (``get -s PATH``, or ``get PATH`` on 3.4, which also prints the
  stat after the data) or Kafka's ``zookeeper-shell.sh`` (same, after its banner),
  with or without the ``[zk: host:2181(CONNECTED) 3]`` prompts, several gets per file;
- a capture folder (docs/capture-layout.md): one JSON file per znode, ``manifest.json``
  and ``watch.jsonl``.
Each Kafka znode becomes a ``*_observed`` event dated by the stat's mtime, ordered
by its mzxid (``zxid`` column). zkCli prints dates with Java's ``Date.toString()``:
``Tue Aug 16 10:21:13 CST 2022``. The zone abbreviation is read when it is
unambiguous or is the abbreviation of ``--tz`` at that date; otherwise (CST is
China, US Central or Cuba) the time is read in ``--tz`` and ``detail.tz_assumed``
says so.
"""
from __future__ import annotations

import base64
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any

from parsers.common.accounting import FileSummary, Quarantined
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems, decode_line, head_bytes, iter_raw_lines
from parsers.schema import Event, iso_utc
from parsers.zookeeper.events import (PayloadError, _assignment, _int, _ints, _json, _obj, cluster_id_of, kafka_path,
                                      micros)

STAT_KEYS = ("cZxid", "ctime", "mZxid", "mtime", "pZxid", "cversion", "dataVersion", "aclVersion",
             "ephemeralOwner", "dataLength", "numChildren")
_STAT_LINE = re.compile(r"^\s*(" + "|".join(STAT_KEYS) + r")\s*=\s*(.*?)\s*$")
_PROMPT = re.compile(r"^\[zk: [^\]]*\]\s*(.*)$")
_COMMAND = re.compile(r"^(?:\S*zookeeper-shell(?:\.sh)?\s+\S+\s+|\S*zkCli(?:\.sh)?(?:\s+-server\s+\S+)?\s+)?"
                      r"(get|ls|ls2|stat|getAcl|get_acl|set|create|delete|rmr|deleteall|sync|quit|help|addauth|connect|close|history|redo|printwatches|config|whoami)\b\s*(.*)$")
_BANNER = re.compile(
    r"^(Connecting to |Welcome to ZooKeeper!|JLine support is |WATCHER::|WatchedEvent state:|SLF4J: |log4j:|"
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|\s*at |Exception in thread|WARNING: )")
_JAVA_DATE = re.compile(r"^(?:[A-Za-z]{3},? )?([A-Za-z]{3}) +(\d{1,2}) (\d{1,2}):(\d\d):(\d\d)(?: ([A-Za-z][\w+:\-/]*))? (\d{4})$")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
# Abbreviations Java prints that name one offset only.
_ZONES = {"UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 1, "CET": 1, "CEST": 2, "MET": 1, "MEST": 2, "EET": 2,
          "EEST": 3, "MSK": 3, "JST": 9, "KST": 9, "HKT": 8, "SGT": 8, "AWST": 8, "ACST": 9.5, "AEST": 10,
          "AEDT": 11, "NZST": 12, "NZDT": 13, "EST": -5, "EDT": -4, "CDT": -5, "MST": -7, "MDT": -6,
          "PST": -8, "PDT": -7, "AKST": -9, "AKDT": -8, "HST": -10, "WIB": 7, "PHT": 8}


def java_date_ms(text: str, tz: str) -> tuple[int | None, bool]:
    """``Tue Aug 16 10:21:13 CST 2022`` -> (epoch ms, whether the zone was assumed from ``tz``)."""
    m = _JAVA_DATE.match(text.strip())
    if not m or m.group(1) not in _MONTHS:
        return None, False
    mon, day, hh, mi, ss, zone, year = m.groups()
    try:
        local = datetime(int(year), _MONTHS[mon], int(day), int(hh), int(mi), int(ss))
    except ValueError:
        return None, False
    from zoneinfo import ZoneInfo

    user = ZoneInfo("UTC" if tz in ("UTC", "utc", "Z") else tz)
    aware_user = local.replace(tzinfo=user)
    if zone and (aware_user.tzname() == zone or (zone in ("UTC", "GMT", "Z") and aware_user.utcoffset() == timedelta(0))):
        return _ms(aware_user), False
    off = _offset(zone) if zone else None
    if off is not None:
        return _ms(local.replace(tzinfo=timezone(off))), False
    return _ms(aware_user), True


def _offset(zone: str) -> timedelta | None:
    if zone in _ZONES:
        return timedelta(hours=_ZONES[zone])
    m = re.fullmatch(r"(?:GMT|UTC)([+-])(\d{1,2}):?(\d\d)?", zone)
    if m:
        sign = 1 if m.group(1) == "+" else -1
        return sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
    return None


def _ms(d: datetime) -> int:
    return int(d.timestamp() * 1000)


# ---------------------------------------------------------------- znode -> observed event

def observed_events(path: str | None, data: bytes | None, stat: dict, via: str, ts_ms: int | None,
                    ctx: SourceContext, pos: int, raw: str, extra: dict | None = None) -> list[Event]:
    """The observed event for one Kafka znode (empty list: not a znode Kafka's controller reads).

    Raises PayloadError when a Kafka znode's data is not what Kafka writes.
    """
    kp = kafka_path(path)
    if path is None and data is not None and data.lstrip().startswith(b"{"):
        # No path (output pasted without its command): /controller's JSON still names itself.
        try:
            c = json.loads(data)
        except ValueError:
            c = None
        if isinstance(c, dict) and "brokerid" in c and set(c) <= {"version", "brokerid", "timestamp", "kraftControllerEpoch"}:
            kp = kafka_path("/controller")
    if kp is None:
        return []
    d: dict[str, Any] = {"via": via, "path": path, "mzxid": stat.get("mzxid"), "czxid": stat.get("czxid")}
    if kp.chroot:
        d["chroot"] = kp.chroot
    d.update(extra or {})
    cols: dict[str, Any] = {}
    k = kp.kind
    if d.get("deleted"):
        if k == "broker":
            return [_event("broker_observed", ctx, pos, ts_ms, stat, d, raw, subject_broker=_int(kp.name))]
        if k == "controller":
            return [_event("controller_observed", ctx, pos, ts_ms, stat, d, raw, controller_id=-1)]
        if k == "partition_state":
            return [_event("partition_state_observed", ctx, pos, ts_ms, stat, d, raw, topic=kp.name, partition=kp.partition)]
        if k == "topic":
            return [_event("topic_assignment_observed", ctx, pos, ts_ms, stat, d, raw, topic=kp.name)]
        return []
    what = path or "/controller"
    if k == "partition_state":
        s = _obj(data, what)
        cols = dict(topic=kp.name, partition=kp.partition, leader=_int(s.get("leader")), isr=_ints(s.get("isr")),
                    leader_epoch=_int(s.get("leader_epoch")), controller_epoch=_int(s.get("controller_epoch")),
                    zk_version=stat.get("version"))
        if "leader_recovery_state" in s:
            d["leader_recovery_state"] = s["leader_recovery_state"]
        return [_event("partition_state_observed", ctx, pos, ts_ms, stat, d, raw, **cols)]
    if k == "broker":
        reg = _obj(data, what) if data else {}
        d.update({key: reg.get(key) for key in ("endpoints", "host", "port", "rack") if reg.get(key) is not None})
        if stat.get("czxid") is not None:
            d["broker_epoch"] = stat["czxid"]
        owner = stat.get("ephemeralOwner")
        return [_event("broker_observed", ctx, pos, ts_ms, stat, d, raw, subject_broker=_int(kp.name),
                       session_id=owner or None)]
    if k == "controller":
        c = _obj(data, what)
        d["timestamp"] = c.get("timestamp")
        return [_event("controller_observed", ctx, pos, ts_ms, stat, d, raw, controller_id=_int(c.get("brokerid")),
                       session_id=stat.get("ephemeralOwner") or None)]
    if k == "controller_epoch":
        epoch = _int(_json(data, what))
        if epoch is None:
            raise PayloadError(f"{what} holds {data[:40]!r}, not a controller epoch number")
        d["epoch_zk_version"] = stat.get("version")
        return [_event("controller_observed", ctx, pos, ts_ms, stat, d, raw, controller_epoch=epoch)]
    if k == "topic":
        t = _obj(data, what)
        d.update({"assignment": _assignment(t.get("partitions")), "adding": _assignment(t.get("adding_replicas")),
                  "removing": _assignment(t.get("removing_replicas"))})
        if t.get("topic_id"):
            d["topic_id"] = t["topic_id"]
        return [_event("topic_assignment_observed", ctx, pos, ts_ms, stat, d, raw, topic=kp.name)]
    if k == "topic_config":
        c = _obj(data, what)
        cfg = c.get("config") if isinstance(c.get("config"), dict) else {}
        d["config"] = {str(a): (None if b is None else str(b)) for a, b in cfg.items()}
        return [_event("topic_config_observed", ctx, pos, ts_ms, stat, d, raw, topic=kp.name)]
    if k == "cluster_id":
        d.update({"cluster_id": cluster_id_of(data, what), "via": "zk_znode"})
        return [_event("cluster_identity", ctx, pos, ts_ms, stat, d, raw)]
    return []


def _event(t: str, ctx: SourceContext, pos: int, ts_ms: int | None, stat: dict, detail: dict, raw: str, **cols) -> Event:
    ts = micros(ts_ms)
    if ts is None and ts_ms is not None:
        detail = {**detail, "bad_time_ms": ts_ms}
    return Event(event_type=t, cluster=ctx.cluster, ts=ts, ts_raw=stat.get("mtime_raw") or iso_utc(ts),
                 source_kind="znode_dump", source_file=ctx.path, source_pos=pos, zxid=stat.get("mzxid"),
                 detail={k: v for k, v in detail.items() if v is not None}, raw=raw, **cols)


# ---------------------------------------------------------------- zkCli / zookeeper-shell text

def _stat_value(key: str, text: str) -> Any:
    if key in ("cZxid", "mZxid", "pZxid", "ephemeralOwner"):
        try:
            return int(text, 16) if text.lower().startswith("0x") else int(text)
        except ValueError:
            return None
    if key in ("ctime", "mtime"):
        return text
    return _int(text)


def parse_zkcli_text(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    problems = ReadProblems()
    lines = [decode_line(raw, i, problems) for i, raw in enumerate(iter_raw_lines(data, problems), 1)]
    summary.lines += len(lines)
    summary.errors.extend(problems.errors)
    events: list[Event] = []
    path: str | None = None
    pending: list[int] = []  # indexes of lines that may be a znode's data
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _PROMPT.match(line)
        cmd_text = m.group(1) if m else line
        c = _COMMAND.match(cmd_text.strip())
        if m or (c and not _STAT_LINE.match(line) and (c.group(2).startswith("/") or c.group(2).startswith("-"))):
            _flush_other(pending, summary)
            pending = []
            path = _command_path(c) if c else None
            summary.count("other")
            i += 1
            continue
        sm = _STAT_LINE.match(line)
        if sm and sm.group(1) == "cZxid":
            start = i
            stat_raw: dict[str, str] = {}
            while i < len(lines):
                sm2 = _STAT_LINE.match(lines[i])
                if not sm2 or sm2.group(1) in stat_raw:
                    break
                stat_raw[sm2.group(1)] = sm2.group(2)
                i += 1
                if sm2.group(1) == "numChildren":
                    break
            events.extend(_stat_block(lines, pending, start, i, stat_raw, path, ctx, summary))
            pending = []
            path = None  # one get, one answer
            continue
        if not line.strip() or _BANNER.match(line):
            summary.count("other")
        else:
            pending.append(i)
        i += 1
    if pending:
        for j in pending:
            summary.count("unrecognized")
            summary.sample(Quarantined(ctx.path, j + 1, "unrecognized", "text that is neither a zkCli command, "
                                       "znode data followed by its stat, nor banner", lines[j][:2000]))
    if problems.non_utf8_lines:
        summary.notes.append(f"{problems.non_utf8_lines} line(s) were not valid UTF-8; read as Latin-1")
    return events


def _command_path(c: re.Match) -> str | None:
    if c.group(1) not in ("get", "stat"):
        return None
    args = [a for a in c.group(2).split() if not a.startswith("-")]
    return args[0] if args and args[0].startswith("/") else None


def _flush_other(pending: list[int], summary: FileSummary) -> None:
    # Lines after a command that was not a get (ls output, messages): nothing to observe.
    summary.count("other", len(pending))


def _stat_block(lines, pending, start, end, stat_raw, path, ctx, summary) -> list[Event]:
    # The data is the last non-banner line before the stat (zkCli prints it on one line;
    # a null znode prints "null", an empty one prints an empty line which we skipped).
    data_idx = pending[-1] if pending else None
    summary.count("other", len(pending) - (1 if pending else 0))
    data_text = lines[data_idx] if data_idx is not None else None
    data = None if data_text in (None, "null") else data_text.encode("utf-8")
    stat = {"czxid": _stat_value("cZxid", stat_raw.get("cZxid", "")), "mzxid": _stat_value("mZxid", stat_raw.get("mZxid", "")),
            "version": _int(stat_raw.get("dataVersion")), "ephemeralOwner": _stat_value("ephemeralOwner", stat_raw.get("ephemeralOwner", "")),
            "mtime_raw": stat_raw.get("mtime")}
    ts_ms, assumed = (None, False)
    if stat_raw.get("mtime"):
        ts_ms, assumed = java_date_ms(stat_raw["mtime"], ctx.tz)
    extra = {"tz_assumed": ctx.tz} if assumed else {}
    if stat_raw.get("mtime") and ts_ms is None:
        extra["unparsed_mtime"] = stat_raw["mtime"]
    n_lines = (end - start) + (1 if data_idx is not None else 0)
    first = (data_idx if data_idx is not None else start) + 1
    raw = "\n".join(([lines[data_idx]] if data_idx is not None else []) + lines[start:end])
    try:
        evs = observed_events(path, data, stat, "zkcli", ts_ms, ctx, first, raw, extra)
    except PayloadError as exc:
        summary.count("quarantined", n_lines)
        summary.errors.append(f"line {first}: {exc}")
        summary.sample(Quarantined(ctx.path, first, "quarantined", str(exc), raw[:2000]))
        return []
    if evs:
        summary.count("parsed", n_lines)
    elif path is None and kafka_path(path) is None:
        summary.count("unrecognized", n_lines)
        summary.sample(Quarantined(ctx.path, first, "unrecognized", "znode stat without the get command that names "
                                   "its path (cannot tell which znode it is)", raw[:2000]))
    else:
        summary.count("other", n_lines)
    return evs


# ---------------------------------------------------------------- capture folder

def _capture_stat(stat: dict | None) -> dict:
    stat = stat or {}
    return {"czxid": _int(stat.get("czxid")), "mzxid": _int(stat.get("mzxid")), "version": _int(stat.get("version")),
            "ephemeralOwner": _int(stat.get("ephemeralOwner")), "mtime": _int(stat.get("mtime"))}


def _capture_data(obj: dict) -> bytes | None:
    if obj.get("data") is not None:
        return str(obj["data"]).encode("utf-8")
    if obj.get("data_b64"):
        return base64.b64decode(obj["data_b64"])
    return None


def parse_capture_json(text: str, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    summary.lines += 1
    try:
        obj = json.loads(text)
    except ValueError as exc:
        summary.count("quarantined")
        summary.errors.append(f"line 1: not JSON ({exc})")
        summary.sample(Quarantined(ctx.path, 1, "quarantined", f"not JSON: {exc}", text[:2000]))
        return []
    if isinstance(obj, dict) and obj.get("format") == "kafka-forensics-capture":
        summary.count("other")
        summary.notes.append(f"capture manifest: {obj.get('znodes')} znodes from {obj.get('zk')}, chroot {obj.get('chroot')!r}")
        return []
    if not isinstance(obj, dict) or "path" not in obj:
        summary.count("unrecognized")
        summary.sample(Quarantined(ctx.path, 1, "unrecognized", "JSON without a znode path", text[:2000]))
        return []
    stat = _capture_stat(obj.get("stat"))
    return _counted(obj["path"], _capture_data(obj), stat, "capture", stat.get("mtime"), ctx, 1, text, {}, summary)


def parse_watch_jsonl(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    problems = ReadProblems()
    events: list[Event] = []
    for n, raw in enumerate(iter_raw_lines(data, problems), 1):
        summary.lines += 1
        line = decode_line(raw, n, problems).strip()
        if not line:
            summary.count("other")
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            summary.count("quarantined")
            summary.errors.append(f"line {n}: not JSON ({exc})")
            summary.sample(Quarantined(ctx.path, n, "quarantined", f"not JSON: {exc}", line[:2000]))
            continue
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if kind in ("created", "changed", "deleted") and obj.get("path"):
            stat = _capture_stat(obj.get("stat"))
            extra = {"watch_kind": kind, "seq": obj.get("seq"), "observed_ms": obj.get("observed_ms")}
            if kind == "deleted":
                extra["deleted"] = True
                ts = _int(obj.get("observed_ms"))
            else:
                ts = stat.get("mtime")
            events += _counted(obj["path"], _capture_data(obj), stat, "capture_watch", ts, ctx, n, line, extra, summary)
        elif kind in ("children", "gap"):
            summary.count("other")
            if kind == "gap":
                summary.notes.append(f"line {n}: watch gap {obj.get('from_ms')}..{obj.get('to_ms')} ({obj.get('reason')}): changes may be missing")
        else:
            summary.count("unrecognized")
            summary.sample(Quarantined(ctx.path, n, "unrecognized", "not a watch.jsonl change record", line[:2000]))
    summary.errors.extend(problems.errors)
    return events


def _counted(path, data, stat, via, ts_ms, ctx, pos, raw, extra, summary) -> list[Event]:
    try:
        evs = observed_events(path, data, stat, via, ts_ms, ctx, pos, raw, extra)
    except PayloadError as exc:
        summary.count("quarantined")
        summary.errors.append(f"line {pos}: {exc}")
        summary.sample(Quarantined(ctx.path, pos, "quarantined", str(exc), raw[:2000]))
        return []
    summary.count("parsed" if evs else "other")
    return evs


# ---------------------------------------------------------------- entry point

def parse_znode_dump(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    """Dispatch entry point: zkCli/zookeeper-shell text, a capture znode JSON, manifest or watch.jsonl."""
    head, _ = head_bytes(data, 4096)
    stripped = head.lstrip()
    name = ctx.path.replace("\\", "/").rsplit("/", 1)[-1]
    if name.endswith((".jsonl", ".jsonl.gz")):
        events = parse_watch_jsonl(data, ctx, summary)
    elif stripped.startswith(b"{") and name.endswith((".json", ".json.gz")):
        problems = ReadProblems()
        text = "\n".join(decode_line(r, i, problems) for i, r in enumerate(iter_raw_lines(data, problems), 1))
        summary.errors.extend(problems.errors)
        events = parse_capture_json(text, ctx, summary)
    else:
        events = parse_zkcli_text(data, ctx, summary)
    for ev in events:
        summary.event_counts[ev.event_type] += 1
        summary.see_ts(ev.ts)
    summary.events = len(events)
    return events
