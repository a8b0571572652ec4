"""``kafka-forensics whatif``: the same trace under changed configs, topology or operations."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from forensics.app import app
from forensics.commands.common import BROKER_MAP, CLUSTER, MASTER, QUIET, TZ, check_tz, default_cluster
from forensics.errors import UserError


@app.command("whatif")
def whatif_cmd(
    sources: list[str] = typer.Argument(..., help="The same evidence postmortem takes."),
    set_: list[str] = typer.Option(None, "--set", help="KEY=VALUE cluster-wide, or topic:NAME.KEY=VALUE "
                                   "(unclean.leader.election.enable, min.insync.replicas, replication.factor, "
                                   "zookeeper.session.timeout.ms, replica.lag.time.max.ms, ...; a KRaft cluster: "
                                   "unclean.leader.election.enable, min.insync.replicas, replication.factor and "
                                   "eligible.leader.replicas.version=0|1). Repeatable."),
    op: list[str] = typer.Option(None, "--op", help="Operation: controlled-shutdown:N (kill -9 of N done as a "
                                 "controlled shutdown), kill:N (the reverse), reassign-away:N (move N's replicas "
                                 "off before it stops), restart-order:A,B,C. Repeatable."),
    assignment: Path = typer.Option(None, "--assignment", help="Explicit assignment JSON (kafka-reassign-partitions "
                                    "format: {\"partitions\": [{\"topic\", \"partition\", \"replicas\"}]})."),
    out: Path = typer.Option(None, "--out", "-o", help="Write whatif.json (and whatif.html) here."),
    fmt: str = typer.Option("text", "--format", "-f", help="Terminal output: text or json."),
    tz: str = TZ,
    cluster: str = CLUSTER,
    broker_map: list[str] = BROKER_MAP,
    master: str = MASTER,
    quiet: bool = QUIET,
) -> int:
    """Replay the trace with a change and report the difference in unavailability and possible data loss.

    Example: kafka-forensics whatif sample_logs/rf1_broker_kill --set topic:dw_test_kafka_0816000.replication.factor=3

    A KRaft cluster is replayed by a KRaft controller deciding every change itself with its release's rules (fencing,
    controlled shutdown, Eligible Leader Replicas). Example: kafka-forensics whatif sample_logs/kraft_broker_fenced
    --op controlled-shutdown:2
    """
    from forensics.pipeline import analyse
    from forensics.progress import Progress
    from replay_engine.estimates.whatif import ChangeError, parse_changes, whatif

    if fmt not in ("text", "json"):
        raise UserError("--format must be text or json")
    tz = check_tz(tz)
    asg = None
    if assignment is not None:
        try:
            asg = json.loads(assignment.read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"--assignment {assignment}: {exc}") from None
    try:
        changes = parse_changes(set_, op, asg)
    except ChangeError as exc:
        raise UserError(str(exc)) from None
    progress = Progress(not quiet)
    analysis = analyse(sources, master=master, tz=tz, cluster=default_cluster(sources, cluster),
                       broker_map=broker_map, progress=progress)
    try:
        by_cluster: dict = {}
        for ev in analysis.events:
            by_cluster.setdefault(ev.cluster, []).append(ev)
        runs, skipped = [], []
        for name in sorted(by_cluster, key=lambda c: c or ""):
            progress.say(f"what-if on cluster {name}: baseline and variant")
            try:
                runs.append(whatif(by_cluster[name], changes, name))
            except ChangeError as exc:
                if len(by_cluster) == 1:
                    raise UserError(f"cluster {name}: {exc}") from None
                skipped.append(f"cluster {name}: {exc}")  # a folder holding several clusters: a change may name
                # a broker or topic of one of them only
    finally:
        analysis.close()
    if not runs:
        raise UserError("; ".join(skipped))
    docs = [w.to_json() for w in runs]
    doc = docs[0] if len(docs) == 1 and not skipped else {"clusters": docs, "skipped": skipped}
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "whatif.json").write_text(text)
        try:
            from dashboards.page import whatif_page
        except ImportError:
            whatif_page = None
        if whatif_page is not None:
            (out / "whatif.html").write_text(whatif_page([w.baseline for w in runs], [w.variant for w in runs], doc, tz))
    if fmt == "json":
        print(text, end="")
    else:
        for d in docs:
            print(render_whatif(d))
        for why in skipped:
            print(f"not changed: {why}")
    return 0


def render_whatif(d: dict) -> str:
    b, v = d["baseline"], d["variant"]
    lines = [f"what-if on cluster {d['cluster']}:"]
    lines += [f"  change: {c['description']}" for c in d["changes"]]
    lines.append(f"  {d['verdict']}")
    rows = [("leaderless partition-seconds", "leaderless_partition_seconds"),
            ("leaderless partitions", "leaderless_partitions"),
            ("unavailable partition-seconds", "unavailable_partition_seconds"),
            ("unclean elections", "unclean_elections"),
            ("possible data loss (partitions)", "possible_data_loss"),
            ("under min.insync.replicas (partition-s)", "under_min_isr_partition_seconds"),
            ("no acks=all write (partition-s)", "write_unavailable_partition_seconds"),
            ("leadership skew at end (max-min)", "leadership_skew_at_end")]
    lines += figure_table([(label, b[key], v[key]) for label, key in rows if key in b and key in v],
                          ("baseline", "variant"))
    for p in d["changed_partitions"][:15]:
        vb, vv = p["baseline"], p["variant"]
        why = vv["episodes"][0]["summary"] if vv["episodes"] else "no leaderless interval in the variant"
        lines.append(f"  {p['topic']}-{p['partition']}: {vb['leaderless_seconds']:.1f} s -> "
                     f"{vv['leaderless_seconds']:.1f} s leaderless; {why}")
    if len(d["changed_partitions"]) > 15:
        lines.append(f"  ... {len(d['changed_partitions']) - 15} more partitions changed (whatif.json)")
    lines += [f"  note: {n}" for n in d["notes"]]
    return "\n".join(lines)


def _figure(x) -> str:
    if isinstance(x, float):
        return f"{x:,.3f}"
    return f"{x:,}" if isinstance(x, int) else str(x)


def figure_table(rows: list[tuple], headers: tuple[str, ...], indent: str = "  ", gap: int = 2) -> list[str]:
    """Label column, then one right-aligned column per header, each as wide as its widest figure plus a gap,
    so large figures never run into their neighbours."""
    cells = [[_figure(x) for x in r[1:]] for r in rows]
    label_w = max([len(str(r[0])) for r in rows] + [0])
    widths = [max([len(h)] + [len(c[i]) for c in cells]) + gap for i, h in enumerate(headers)]
    out = [indent + " " * label_w + "".join(f"{h:>{w}}" for h, w in zip(headers, widths))]
    for r, c in zip(rows, cells):
        out.append(indent + f"{str(r[0]):{label_w}}" + "".join(f"{x:>{w}}" for x, w in zip(c, widths)))
    return out
