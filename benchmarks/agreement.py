"""Agreement of the replay with the decisions the real controllers recorded, counted the issue-15 way.

Run from the repo root:

    .venv/bin/python benchmarks/agreement.py [--cluster NAME] [--record] [--detail]

For every cluster in ``../shared/real_logs`` (ZooKeeper and KRaft mode) and every scenario in
``../shared/zk_real`` it prints, side by side:

- ``recorded``: the decisions the evidence itself holds, counted from the parsed facts and events and
  not from the comparison code: every controller-recorded leader/ISR decision (state-change
  ``Changed partition ... to OnlinePartition`` lines, ``Updated leader/ISR`` writes, controller writes
  of a partition state znode, KRaft leader changes) and every failed election. In KRaft mode with logs
  only, where the controller logs its elections at DEBUG, a decision is a new leader epoch a broker
  states it started (every line naming the same partition and leader epoch is one decision).
- ``gaps``: recorded decisions the replay left unjudged for an evidence gap (decided on a state the evidence
  does not show: hours whose logs are missing), one per decision: neither agreed nor diverged, and off the
  denominator.
- ``compared``, ``agreed``, ``diverged``: recorded decisions the replay judged (a replayed decision that
  expected a record and found none counts separately, as ``unrecorded``).
- ``uncompared``: recorded decisions left unjudged, by the reason the replay gives; ``unaccounted`` are
  recorded decisions the replay neither judged nor listed (should be 0).
- ``measure`` = agreed / (recorded - gaps): the issue's measure, which counts uncompared records
  against the replay; ``replay`` = the replay's own agreed / compared.
- ``no-leader``: moments a log line states a partition had no leader (a controller write of leader -1,
  a partition moved to OfflinePartition, an OfflinePartition in a controller's initial state, a failed
  election out of OfflinePartition, a broker or client told ``leader -1`` / LEADER_NOT_AVAILABLE for a
  partition); ``outside``: those that lie outside every leaderless interval the replay reports, except
  ``at deletion``: OfflinePartition lines of a topic deletion, whose NonExistentPartition follows at the same
  instant (no partition is left to be leaderless).

Only the replay's public surface is used (``replay_cluster``, ``ReplayResult`` and its intervals,
leaderless episodes, comparisons, decisions and facts). ``--record`` appends the table to its section of
``benchmarks/RESULTS.md``; ``--detail`` lists every uncompared record, divergence and no-leader moment
outside an interval.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from parsers.schema import iso_utc  # noqa: E402

SECTION = "## agreement (recorded controller decisions vs the replay, issue 15's measure)"
SHARED = REPO.parent / "shared"
OFFLINE = "OfflinePartition"
# Failed elections of these strategies leave the current (live) leader in place: no leaderless moment.
_KEEPS_LEADER = ("ControlledShutdown", "Preferred", "Reassign")
_TOPIC_ID = re.compile(r"topic ?[iI]d (?:Some\()?([A-Za-z0-9_-]{22})")


@dataclass
class Row:
    name: str
    mode: str
    version: str | None
    recorded: int = 0
    gaps: int = 0
    compared: int = 0
    agreed: int = 0
    unrecorded: int = 0
    uncompared: Counter = field(default_factory=Counter)
    unaccounted: int = 0
    no_leader: int = 0
    outside: int = 0
    at_deletion: int = 0
    replay_compared: int = 0
    replay_agreed: int = 0
    detail: list[str] = field(default_factory=list)

    @property
    def diverged(self) -> int:
        return self.compared - self.agreed

    @property
    def measure(self) -> float | None:
        den = self.recorded - self.gaps
        return self.agreed / den if den > 0 else None

    @property
    def replay_ratio(self) -> float | None:
        return self.replay_agreed / self.replay_compared if self.replay_compared else None


# ------------------------------------------------------------------ loading


def real_log_clusters() -> list[str]:
    root = SHARED / "real_logs"
    return sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != "issue_snippets")


def zk_real_scenarios() -> list[str]:
    root = SHARED / "zk_real"
    return sorted(p.name for p in root.iterdir() if (p / "ground_truth.json").exists())


def load_real(name: str):
    """As tests/conftest.py ``real_cluster_events``: every file of the cluster, parsed, raw txns left out."""
    from forensics.sources import parse_folder_in_process

    return parse_folder_in_process(SHARED / "real_logs", name)


def load_zk_real(name: str):
    """As tests/test_replay_zk_real.py ``load()``."""
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    events = []
    for f in sorted((SHARED / "zk_real" / name / "version-2").iterdir()):
        evs, _ = parse_source(f.read_bytes(), SourceContext(str(f.relative_to(SHARED)), cluster="zk"))
        events += [e for e in evs if e.event_type != "zk_txn"]
    return events


# ------------------------------------------------------------------ what the evidence records


def _key(source_file, source_pos, partition) -> tuple:
    return (source_file, source_pos, partition)


def recorded_decisions(res, events) -> list[tuple[str, list[tuple]]]:
    """The decisions the evidence records, each as (label, [keys of the lines/records stating it])."""
    from replay_engine import facts as F

    out: list[tuple[str, list[tuple]]] = []
    if res.mode != "kraft":
        for f in res.stream.facts:
            if isinstance(f, F.RecordedState) and f.kind in ("election", "new_partition", "isr_removal", "write"):
                out.append((f"{f.kind} {f.tp[0]}-{f.tp[1]}", [_key(f.ref.source_file, f.ref.source_pos, f.tp[1])]))
            elif isinstance(f, F.RecordedFailedElection):
                out.append((f"failed election {f.tp[0]}-{f.tp[1]}", [_key(f.ref.source_file, f.ref.source_pos, f.tp[1])]))
        return out
    changes = [e for e in events if e.event_type == "partition_change" and "leader" in ((e.detail or {}).get("changed") or [])]
    for e in changes:
        out.append((f"leader change {e.topic or (e.detail or {}).get('topic_id')}-{e.partition}",
                    [_key(e.source_file, e.source_pos, e.partition)]))
    has_records = any(e.source_kind == "kraft_metadata" for e in events)
    if has_records:
        seen_tp = set()
        for e in events:
            d = e.detail or {}
            if e.event_type == "partition_record" and e.source_kind == "kraft_metadata" and d.get("snapshot_offset") is None:
                tp = (e.topic or d.get("topic_id"), e.partition)
                if tp not in seen_tp:
                    out.append((f"new partition {tp[0]}-{tp[1]}", [_key(e.source_file, e.source_pos, e.partition)]))
                seen_tp.add(tp)
    elif not changes:
        # Logs only, elections at DEBUG: a decision as the brokers received it, one per partition and leader epoch.
        by_epoch: dict[tuple, list[tuple]] = {}
        for e in events:
            if e.event_type in ("become_leader", "become_follower") and e.partition is not None \
                    and e.leader_epoch is not None:
                tid = (e.detail or {}).get("topic_id")
                by_epoch.setdefault((e.topic or tid, e.partition, e.leader_epoch), []).append(
                    _key(e.source_file, e.source_pos, e.partition))
        for (t, p, le), keys in sorted(by_epoch.items(), key=lambda kv: (str(kv[0][0]), kv[0][1], kv[0][2])):
            out.append((f"leader epoch {le} of {t}-{p}", keys))
    return out


def no_leader_moments(events) -> list:
    """Log lines (and records) that state a partition had no leader at that moment."""
    out = []
    for e in events:
        if e.partition is None or e.ts is None:
            continue
        d = e.detail or {}
        t = e.event_type
        if t == "leader_election_failed":
            strategy = str(d.get("strategy") or "")
            if e.from_state == OFFLINE and not any(s in strategy for s in _KEEPS_LEADER):
                out.append(e)
        elif e.leader == -1 and t not in ("broker_registered",):
            out.append(e)
        elif e.to_state == OFFLINE and t in ("partition_state_change", "partition_state_observed"):
            out.append(e)
        elif t == "client_error" and d.get("error") == "LEADER_NOT_AVAILABLE":
            out.append(e)
    return out


# ------------------------------------------------------------------ measuring


def measure(name: str, mode_label: str, events) -> Row:
    from replay_engine.api import replay_cluster

    res = replay_cluster(events, name)
    row = Row(name, res.mode if mode_label == "real" else "zk_real", res.to_json().get("kafka_version"))
    ag = res.agreement()
    row.replay_compared, row.replay_agreed = ag["compared"], ag["agreed"]

    # A comparison is a verdict on one record; a record left unjudged is either a comparison whose verdict is
    # 'unknown' (with its reason) or listed by the replay with its reason (older shape of the same information).
    judged: dict[tuple, bool] = {}
    left: dict[tuple, str] = {}
    for c in res.comparisons:
        k = _key(c.record.source_file, c.record.source_pos, c.tp[1])
        if getattr(c, "verdict", None) == "unknown":
            left[(k[0], k[1], None)] = getattr(c, "reason", None) or "unknown"
            continue
        judged[k] = judged.get(k, True) and c.agreed
    row.unrecorded = ag["compared"] - sum(1 for c in res.comparisons if getattr(c, "verdict", None) != "unknown")
    recorded = recorded_decisions(res, events)
    row.recorded = len(recorded)
    for label, keys in recorded:
        verdicts = [judged[k] for k in keys if k in judged]
        if verdicts:
            row.compared += 1
            row.agreed += all(verdicts)
            if not all(verdicts):
                row.detail.append(f"  diverged: {label} at {keys[0][0]}:{keys[0][1]}")
            continue
        why = next((left[(k[0], k[1], None)] for k in keys if (k[0], k[1], None) in left), None)
        if why is None:
            row.unaccounted += 1
            why = "not judged and not listed by the replay"
        row.uncompared[why] += 1
        # a gap is a recorded decision left unjudged for an evidence gap (counted per decision, not per line)
        row.gaps += why.startswith("evidence gap")
        row.detail.append(f"  uncompared ({why}): {label} at {keys[0][0]}:{keys[0][1]}")

    eps: dict[tuple, list[tuple[int, int | None]]] = {}
    for lp in res.leaderless:
        eps.setdefault((lp.episode.topic, lp.episode.partition), []).append((lp.episode.start, lp.episode.end))
    names = _topic_names(events)
    # TopicDeletionManager moves a deleted topic's partitions OfflinePartition -> NonExistentPartition in one step:
    # no leader at that instant, and no partition (so no outage) after it.
    deleted = {(e.topic, e.partition, e.ts) for e in events
               if e.event_type == "partition_state_change" and e.to_state == "NonExistentPartition"}
    for e in no_leader_moments(events):
        topic = e.topic or names.get((e.detail or {}).get("topic_id"))
        if topic is None:
            continue
        row.no_leader += 1
        spans = eps.get((topic, int(e.partition)), [])
        if (topic, e.partition, e.ts) in deleted:
            row.at_deletion += 1
        elif not any(a <= e.ts and (b is None or e.ts <= b) for a, b in spans):
            row.outside += 1
            row.detail.append(f"  no leader outside intervals: {topic}-{e.partition} {iso_utc(e.ts)} "
                              f"{e.source_file}:{e.source_pos} {e.event_type}")
    return row


def _topic_names(events) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in events:
        tid = (e.detail or {}).get("topic_id")
        if tid and e.topic:
            out[tid] = e.topic
    return out


# ------------------------------------------------------------------ output


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def table(rows: list[Row]) -> str:
    head = ("| cluster | mode | version | recorded | gaps | compared | agreed | diverged | uncompared | unaccounted "
            "| unrecorded | measure | replay | no-leader | outside | at deletion |")
    lines = [head, "|" + "|".join(["---"] * 16) + "|"]
    tot = Row("all", "", None)
    for r in rows:
        lines.append(f"| {r.name} | {r.mode} | {r.version or '?'} | {r.recorded} | {r.gaps} | {r.compared} | {r.agreed} "
                     f"| {r.diverged} | {sum(r.uncompared.values())} | {r.unaccounted} | {r.unrecorded} "
                     f"| {_pct(r.measure)} | {_pct(r.replay_ratio)} | {r.no_leader} | {r.outside} | {r.at_deletion} |")
        for k in ("recorded", "gaps", "compared", "agreed", "unaccounted", "unrecorded", "no_leader", "outside",
                  "at_deletion", "replay_compared", "replay_agreed"):
            setattr(tot, k, getattr(tot, k) + getattr(r, k))
        tot.uncompared.update(r.uncompared)
    lines.append(f"| **all** | | | {tot.recorded} | {tot.gaps} | {tot.compared} | {tot.agreed} | {tot.diverged} "
                 f"| {sum(tot.uncompared.values())} | {tot.unaccounted} | {tot.unrecorded} | {_pct(tot.measure)} "
                 f"| {_pct(tot.replay_ratio)} | {tot.no_leader} | {tot.outside} | {tot.at_deletion} |")
    lines.append("")
    lines.append("Uncompared, by reason:")
    lines.append("")
    for r in rows:
        for why, n in sorted(r.uncompared.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"- {r.name}: {n} {why}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cluster", action="append", help="only this cluster or zk_real scenario (repeatable)")
    ap.add_argument("--record", action="store_true", help="append the table to benchmarks/RESULTS.md")
    ap.add_argument("--detail", action="store_true", help="list every uncompared record, divergence, no-leader moment")
    args = ap.parse_args(argv)
    want = set(args.cluster or [])
    rows = []
    for name in real_log_clusters():
        if not want or name in want:
            rows.append(measure(name, "real", load_real(name)))
    for name in zk_real_scenarios():
        if not want or name in want:
            rows.append(measure(name, "zk_real", load_zk_real(name)))
    out = table(rows)
    print(out)
    if args.detail:
        for r in rows:
            if r.detail:
                print(f"\n{r.name}:")
                print("\n".join(r.detail))
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _common import now_utc, record

        cmd = "python benchmarks/agreement.py" + "".join(f" --cluster {c}" for c in sorted(want))
        record(SECTION, f"{now_utc()}, `{cmd}`:\n\n{out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
