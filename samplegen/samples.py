"""Write a played scenario as an operator would collect it.

    <out>/kafka-broker-N/server.log[.YYYY-MM-DD-HH.gz], controller.log*, state-change.log*
    <out>/zookeeper/version-2/log.<hex zxid>
    <out>/zkcli/*.txt, <out>/clients/*.log

README.md and expected.json beside them are written by hand, not here.
"""
from __future__ import annotations

from pathlib import Path

from samplegen.writers.clients import (Outage, ShortIsr, java_acks_all_log, java_producer_log, sarama_acks_all_log,
                                       sarama_producer_log)
from samplegen.writers.log4j import HourlyFile
from samplegen.scenarios import Played, Scenario, play

LOG_FILES = ("server", "controller", "state-change")


def write_logs(pl: Played, out: Path) -> list[Path]:
    written = []
    for b in sorted(pl.cluster.brokers):
        d = out / f"kafka-broker-{b}"
        for f in LOG_FILES:
            lines = pl.cluster.log.sorted_lines(b, f)
            if not lines:
                continue
            hf = HourlyFile(d, f"{f}.log", gzip_rolled=lambda suffix: True)
            for ln in lines:
                hf.write(ln.ms, ln.text())
            hf.close()
            written += hf.files
    return written


def outages(pl: Played, topic: str, partitions: tuple[int, ...]) -> list[Outage]:
    """For each partition, when its leader died, when it was declared leaderless, when it had a leader again."""
    cl = pl.cluster
    res = []
    for part in partitions:
        minus = [f for f in cl.facts if f["kind"] == "leader_minus_one" and f["topic"] == topic and f["partition"] == part]
        for m in minus:
            dead = next(f for f in reversed(cl.facts) if f["kind"] == "broker_killed" and f["ms"] <= m["ms"]
                        and f["broker"] == m["removed"])
            back = next((f["ms"] for f in cl.facts if f["kind"] == "partition_state_written" and f["topic"] == topic
                         and f["partition"] == part and f["ms"] > m["ms"] and f["leader"] >= 0), pl.end_ms)
            spec = cl.brokers[m["removed"]].spec
            res.append(Outage(topic, part, spec.id, spec.host, spec.ip, dead["ms"], m["ms"], back))
    return res


def short_isr(pl: Played, topic: str, partitions: tuple[int, ...]) -> list[ShortIsr]:
    """For each partition, when the controller wrote an ISR below the topic's min.insync.replicas (with a
    leader) and when it was large enough again."""
    cl = pl.cluster
    created = next(f for f in cl.facts if f["kind"] == "topic_created" and f["topic"] == topic)
    need = int((created.get("config") or {}).get("min.insync.replicas", "1"))
    res = []
    for part in partitions:
        since = None
        for f in cl.facts:
            if f["kind"] != "partition_state_written" or f["topic"] != topic or f["partition"] != part:
                continue
            short = f["leader"] >= 0 and len(f["isr"]) < need
            if short and since is None:
                since = f["ms"]
            elif not short and since is not None:
                res.append(ShortIsr(topic, part, since, f["ms"]))
                since = None
        if since is not None:
            res.append(ShortIsr(topic, part, since, pl.end_ms))
    return res


def write_sample(sc: Scenario, out: Path) -> Played:
    out = Path(out)
    pl = play(sc)
    write_logs(pl, out)
    zk_dir = out / "zookeeper" / "version-2"
    zk_dir.mkdir(parents=True, exist_ok=True)
    (zk_dir / pl.cluster.zk.log.name).write_bytes(pl.cluster.zk.log.to_bytes())
    for rel, text in pl.captures.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    start = sc.ms(sc.steps[0].at)
    for i, app in enumerate(sc.clients):
        if app.kind.endswith("_acks_all"):
            ws = short_isr(pl, app.topic, app.partitions)
            writer = java_acks_all_log if app.kind.startswith("java") else sarama_acks_all_log
            text = writer(ws, max(start, min((w.start_ms for w in ws), default=start) - 30 * 60_000), pl.end_ms,
                          seed=sc.cluster.seed * 100 + i)
            (out / app.file).parent.mkdir(parents=True, exist_ok=True)
            (out / app.file).write_text(text)
            continue
        os_ = outages(pl, app.topic, app.partitions)
        log_start = min(o.dead_ms for o in os_) - 30 * 60_000 if os_ else start
        writer = java_producer_log if app.kind == "java" else sarama_producer_log
        text = writer(os_, max(start, log_start), pl.end_ms, seed=sc.cluster.seed * 100 + i)
        (out / app.file).parent.mkdir(parents=True, exist_ok=True)
        (out / app.file).write_text(text)
    return pl

