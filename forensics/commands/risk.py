"""``kafka-forensics risk``: which broker (pair, rack) failures would leave partitions leaderless."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from forensics.app import app
from forensics.commands.common import BROKER_MAP, CLUSTER, MASTER, QUIET, TZ, check_tz, default_cluster
from forensics.errors import UserError
from forensics.worker_imports import in_workers

# Above this many live brokers, the pair enumeration is spread over Spark's executors.
SPARK_PAIRS_ABOVE = 150


@app.command("risk")
def risk_cmd(
    sources: list[str] = typer.Argument(..., help="A postmortem's evidence, a ZooKeeper data dir or snapshot, "
                                        "or a capture directory: the last state they show is the starting point."),
    failures: int = typer.Option(1, "--failures", help="1: every single broker; 2: also every pair."),
    racks: bool = typer.Option(False, "--racks", help="Also every rack (needs broker.rack in the evidence)."),
    until: str = typer.Option(None, "--until", help="Start from the state at this time instead of the end."),
    top: int = typer.Option(20, "--top", help="How many failure sets to list."),
    out: Path = typer.Option(None, "--out", "-o", help="Write risk.json here."),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
    tz: str = TZ,
    cluster: str = CLUSTER,
    broker_map: list[str] = BROKER_MAP,
    master: str = MASTER,
    quiet: bool = QUIET,
) -> int:
    """Enumerate broker failures from the last known state: leaderless partitions, unclean elections, acks=all
    producers failing (below min.insync.replicas).

    Example: kafka-forensics risk zk-data/version-2 --failures 2
    """
    from forensics.pipeline import analyse, parse_time
    from forensics.progress import Progress
    from replay_engine.api import replay

    if failures not in (1, 2):
        raise UserError("--failures must be 1 or 2")
    if fmt not in ("text", "json"):
        raise UserError("--format must be text or json")
    tz = check_tz(tz)
    progress = Progress(not quiet)
    analysis = analyse(sources, master=master, tz=tz, cluster=default_cluster(sources, cluster),
                       broker_map=broker_map, progress=progress, until=parse_time(until, tz))
    try:
        results = replay(analysis.events)
        docs, skipped = [], []
        for res in results:
            try:
                docs.append(assess(res, analysis.events, failures, racks, top, progress))
            except UserError as exc:
                if len(results) == 1:
                    raise
                skipped.append(str(exc))  # a folder holding several clusters: the others are still assessed
    finally:
        analysis.close()
    if not docs:
        raise UserError("; ".join(skipped))
    doc = docs[0] if len(docs) == 1 and not skipped else {"clusters": docs, "skipped": skipped}
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "risk.json").write_text(text)
    if fmt == "json":
        print(text, end="")
    else:
        for d in docs:
            print(render_risk(d))
        for why in skipped:
            print(f"not assessed: {why}")
    return 0


def assess(res, events, failures: int, use_racks: bool, top: int, progress) -> dict:
    from parsers.schema import iso_utc
    from replay_engine.estimates import risk as R

    parts, live, notes = R.states_from_replay(res)
    ctl = R.controller_of(res)
    if not parts:
        raise UserError(f"cluster {res.cluster}: the evidence shows no partition state to start from")
    if not live:
        raise UserError(f"cluster {res.cluster}: no broker is alive in the state at the end of the evidence")
    singles = R.single_failures(parts, live, ctl)
    single = R.rank([R.impact_json(f"broker {b}", [b], imp) for b, imp in singles.items()])
    doc = {"cluster": res.cluster, "state_at": iso_utc(res.stream.trace_end), "rule_set": ctl.rule_set,
           "live_brokers": sorted(live),
           "partitions": len(parts), "notes": notes, "single_broker": single,
           "broker_table": [{"broker": b, "leaderless": i.leaderless, "unclean": i.unclean,
                             "under_min_isr": i.under_min_isr, "leaders_moved": i.leaders_moved}
                            for b, i in sorted(singles.items())]}
    if failures == 2:
        if len(live) > SPARK_PAIRS_ABOVE:
            pairs = _pairs_on_spark(parts, live, ctl, singles, progress)
        else:
            pairs = R.pair_failures(parts, live, ctl, singles)
        doc["broker_pairs"] = R.rank([R.impact_json(f"brokers {a}+{b}", [a, b], imp)
                                      for (a, b), imp in pairs.items()])[:top]
        doc["pairs_evaluated"] = len(pairs)
    if use_racks:
        racks = _racks(events)
        if not racks:
            doc["notes"].append("--racks: the evidence names no broker.rack; no rack failures evaluated")
        else:
            doc["racks"] = R.rank([R.impact_json(f"rack {r}", sorted(b for b in live if racks.get(b) == r), imp)
                                   for r, imp in R.rack_failures(parts, live, racks, ctl).items()])
    doc["single_broker"] = doc["single_broker"][:top] if top < len(doc["single_broker"]) else doc["single_broker"]
    return doc


def _racks(events) -> dict[int, str]:
    out = {}
    for e in events:
        d = e.detail or {}
        r = d.get("rack") or (d.get("config") or {}).get("broker.rack")
        if e.subject_broker is not None and r and r != "null":
            out[e.subject_broker] = str(r)
    return out


def _pairs_on_spark(parts, live, ctl, singles, progress):
    """Each Spark task scores the pairs whose smaller broker id it was given."""
    import pickle

    import pyarrow as pa

    from forensics.spark import get_spark
    from replay_engine.estimates import risk as R

    spark = get_spark()
    bc = spark.sparkContext.broadcast(pickle.dumps((parts, live, ctl, singles)))
    brokers = sorted(live)
    df = spark.createDataFrame([(b,) for b in brokers], "first int").repartition(
        max(2, spark.sparkContext.defaultParallelism * 2))

    def score(batches):
        ps, lv, ct, sg = pickle.loads(bc.value)
        for batch in batches:
            firsts = batch.column(0).to_pylist()
            res = R.pair_failures(ps, lv, ct, sg, first=firsts)
            rows = [(a, b, pickle.dumps(imp)) for (a, b), imp in res.items()]
            yield pa.RecordBatch.from_arrays([pa.array([r[0] for r in rows], pa.int32()),
                                              pa.array([r[1] for r in rows], pa.int32()),
                                              pa.array([r[2] for r in rows], pa.binary())],
                                             names=["a", "b", "impact"])

    progress.say(f"risk: scoring {len(brokers) * (len(brokers) - 1) // 2:,} broker pairs on Spark")
    rows = df.mapInArrow(in_workers(score), "a int, b int, impact binary").collect()
    return {(r["a"], r["b"]): pickle.loads(r["impact"]) for r in rows}


def render_risk(d: dict) -> str:
    lines = [f"risk for cluster {d['cluster']} (state at {d['state_at']}; {d['partitions']} partitions, "
             f"live brokers {d['live_brokers']}; rules {d['rule_set']}):"]
    lines.append(f"  {'failure':24}{'leaderless':>12}{'unclean':>10}{'<min.isr':>10}{'leaders moved':>15}")
    for key in ("single_broker", "broker_pairs", "racks"):
        for x in d.get(key, []):
            lines.append(f"  {x['failure']:24}{x['leaderless_partitions']:>12}{x['unclean_elections']:>10}"
                         f"{x['under_min_isr_partitions']:>10}{x['leaders_moved']:>15}")
    worst = d["single_broker"][0] if d["single_broker"] else None
    if worst and worst["leaderless_partitions"]:
        topics = ", ".join(f"{t} ({v['leaderless']})" for t, v in worst["by_topic"].items() if v["leaderless"])
        lines.append(f"  worst single failure: {worst['failure']} leaves {worst['leaderless_partitions']} "
                     f"partition(s) leaderless: {topics}")
    lines += [f"  note: {n}" for n in d["notes"]]
    return "\n".join(lines)
