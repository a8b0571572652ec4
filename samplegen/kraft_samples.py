"""Write a played KRaft scenario as an operator would collect it.

    <out>/kafka-broker-N/server.log[.YYYY-MM-DD-HH.gz], state-change.log*
    <out>/kafka-controller-C/server.log*, controller.log*
    <out>/kafka-controller-C/__cluster_metadata-0/00000000000000000000.log

README.md and expected.json beside them are written by hand, not here.
"""
from __future__ import annotations

from pathlib import Path

from samplegen.kraft_scenarios import KraftPlayed, KraftScenario, play
from samplegen.writers.log4j import HourlyFile

LOG_FILES = ("server", "controller", "state-change")
SEGMENT = "__cluster_metadata-0/00000000000000000000.log"


def node_dir(pl: KraftPlayed, node: int) -> str:
    return f"kafka-controller-{node}" if node == pl.cluster.cfg.controller.id else f"kafka-broker-{node}"


def write_kraft_sample(sc: KraftScenario, out: Path) -> KraftPlayed:
    out = Path(out)
    pl = play(sc)
    cl = pl.cluster
    for node in [*sorted(cl.brokers), cl.cfg.controller.id]:
        for f in LOG_FILES:
            lines = cl.log.sorted_lines(node, f)
            if not lines:
                continue
            hf = HourlyFile(out / node_dir(pl, node), f"{f}.log", gzip_rolled=lambda suffix: True)
            for ln in lines:
                hf.write(ln.ms, ln.text())
            hf.close()
    segment = out / node_dir(pl, cl.cfg.controller.id) / SEGMENT
    segment.parent.mkdir(parents=True, exist_ok=True)
    segment.write_bytes(cl.metadata.to_bytes())
    return pl
