"""What splitting a KRaft cluster costs and gains, on one core, from real-format events.

A KRaft log set of ``../shared/real_logs`` is parsed once and its partitions repeated ``--copies`` times as
other topics (every event of a partition copied under ``<topic>~<k>``, in a file of its own, the line's text
naming the copy), beside the cluster-wide events once: a cluster of that many more partitions with the same
histories. Then, in one process and on one core (no Spark: the executors' work, measured apart from Spark's
own), CPU seconds of:

- the whole replay (``replay_cluster``);
- phase 1 (``kraft_split.phase1`` over what the audit sends its task, ``kraft_pass.phase1_needs``);
- each shard of a split into ``--shards`` (its own partitions, the cluster-wide events, the lines phase 1
  took), every round it took (``kraft_split``: a round more while the shards find other lines).

Two executors finish no sooner than phase 1 plus each round's slowest shard (the critical path); the
printed ratio is the whole replay's time over that. The merged split is checked equal to the whole replay.

    .venv/bin/python benchmarks/kraft_split_bench.py --cluster BetrajJ__kafka-kraft --copies 100 --runs 3
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

from _common import REPO, load_avg, med, now_utc, record, runs_text  # noqa: E402

REAL_LOGS = REPO.parent / "shared" / "real_logs"


def repeated(events: list, copies: int) -> list:
    """The cluster-wide events once, every partition's events ``copies`` times as other topics."""
    from replay_engine.kraft.context import is_wide

    out = [e for e in events if is_wide(e)]
    own = [e for e in events if not is_wide(e)]
    for k in range(copies):
        for e in own:
            topic = f"{e.topic}~{k}"
            d = dict(e.detail) if e.detail else None
            if d and d.get("topic_id"):
                d["topic_id"] = f"{d['topic_id']}~{k}"
            out.append(dataclasses.replace(e, topic=topic, detail=d, source_file=f"{e.source_file}~{k}",
                                           raw=(e.raw or "").replace(e.topic, topic)))
    return out


def cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def one_run(events: list, cluster: str, shards: int) -> dict:
    from replay_engine.api import replay_cluster
    from replay_engine.kraft.context import kraft_context, phase1_needs
    from replay_engine.kraft.split import phase1
    from replay_engine.sharding.shard import KRAFT_ROUNDS, ShardsDisagree, merge, next_round, replay_kraft_shard, routes

    whole_s, whole = cpu(lambda: replay_cluster(events, cluster))
    ctx_s, ctx = cpu(lambda: kraft_context(events))
    p1_s, kp = cpu(lambda: phase1([e for e in events if phase1_needs(e)], ctx))
    rounds = []
    merged = None
    for _ in range(KRAFT_ROUNDS):
        per = [[] for _ in range(shards)]
        for ev in events:
            for b in routes(ev, shards, kp):
                per[b].append(ev)
        times, outs = [], []
        for b in range(shards):
            s, o = cpu(lambda b=b: replay_kraft_shard(per[b], cluster, b, shards, ctx, kp))
            times.append(s)
            outs.append(o)
        rounds.append({"shards": times, "events": [len(p) for p in per]})
        try:
            merged = merge(outs, kp.journal if len(rounds) == 1 else None)
            break
        except ShardsDisagree as exc:
            if exc.found is None:
                raise
            kp = next_round(kp, exc.found)
    if merged is None:
        raise SystemExit("the split found no agreement")
    rows = lambda ivs: [json.dumps(iv.to_row(), sort_keys=True, default=str) for iv in ivs]  # noqa: E731
    if rows(merged.intervals) != rows(whole.intervals) or merged.agreement["agreed"] != whole.agreement()["agreed"]:
        raise SystemExit("the split differs from the whole replay")
    critical = p1_s + sum(max(r["shards"]) for r in rounds)
    return {"whole": whole_s, "context": ctx_s, "phase1": p1_s, "rounds": rounds, "critical": critical,
            "phase1_events": sum(1 for e in events if phase1_needs(e)), "lines": len(kp.liveness or ())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cluster", default="BetrajJ__kafka-kraft")
    ap.add_argument("--copies", type=int, default=100)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--record", action="store_true", help="append the result to its section of benchmarks/journal/")
    args = ap.parse_args()
    from forensics.sources import parse_folder_in_process
    from parsers.common.gc_pause import cycle_gc_paused

    load0 = load_avg()
    events = repeated(parse_folder_in_process(REAL_LOGS, args.cluster), args.copies)
    runs = []
    for _ in range(args.runs):
        with cycle_gc_paused():
            runs.append(one_run(events, args.cluster, args.shards))
    last = runs[-1]
    whole, crit = med([r["whole"] for r in runs]), med([r["critical"] for r in runs])
    parts = len({(e.topic, e.partition) for e in events if e.partition is not None and e.topic})
    text = (f"- {now_utc()}, load average {load0:.1f} -> {load_avg():.1f}. `{args.cluster}` with its partitions "
            f"repeated {args.copies} times as other topics: {len(events):,} events, {parts:,} partitions; "
            f"{last['phase1_events']:,} sent to phase 1. One core, CPU seconds, median of {args.runs} runs: whole "
            f"replay {whole:.2f} ({runs_text([r['whole'] for r in runs], '{:.2f}')}; {len(events) / whole:,.0f} events/s); "
            f"phase 1 {med([r['phase1'] for r in runs]):.2f}, the driver's context {med([r['context'] for r in runs]):.2f} "
            f"(Spark aggregates in the audit); {len(last['rounds'])} round(s) of {args.shards} shards (last run: "
            + "; ".join(f"round {i + 1}: " + ", ".join(f"{s:.2f}" for s in r["shards"]) + " s, events "
                        + ", ".join(f"{n:,}" for n in r["events"]) for i, r in enumerate(last["rounds"]))
            + f"); {last['lines']} line(s) showing a leader active at the end. Critical path (phase 1 + each round's "
            f"slowest shard) {crit:.2f} s: **{whole / crit:.2f}x** the whole replay with {args.shards} executors, "
            f"before Spark's own costs. Split equal to the whole replay (intervals, agreement) in every run.\n"
            f"  Command: `.venv/bin/python benchmarks/kraft_split_bench.py --cluster {args.cluster} --copies "
            f"{args.copies} --shards {args.shards} --runs {args.runs}`\n")
    print(text)
    if args.record:
        record("## KRaft split (issue 18)", text)


if __name__ == "__main__":
    sys.exit(main())
