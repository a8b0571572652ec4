"""``docs/semantics.md`` from the rule table: ``python -m replay_engine.rules.doc > docs/semantics.md``.

A test regenerates it and fails when the checked-in file differs, so the page cannot drift from the table.
"""
from __future__ import annotations

import sys

from replay_engine import rules as R

HEADER = """# Kafka controller semantics, version by version

Generated from the replay's rule table (`replay_engine/rules/`) by `python -m replay_engine.rules.doc`;
do not edit by hand (`tests/test_rules_table.py` fails when this page is stale).

Each row is one rule of the replay and the Kafka releases it holds for, read from Kafka's source at the
cited tag, file and function. Ranges are inclusive (`0.8.2-1.0` = 0.8.2 through 1.0.x; `2.7+` = 2.7 and
later). The replay decides each question with the row for the version that wrote the evidence: the acting
controller's own `Kafka version:` line (brokers in a rolling upgrade log different ones), else the first
version the cluster's logs state, else the Kafka distribution directory the logs sit in
(`kafka_<scala>-<version>/`), else `inter.broker.protocol.version`. An unknown version is replayed
with the rules of Kafka {zk} (ZooKeeper mode) or {kraft} (KRaft mode), and the report says so; a version
outside every range of a decision takes the nearest row (the newest for a later release, the oldest for
an earlier one).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    out = [HEADER.format(zk=R.vtext(R.DEFAULT_ZK), kraft=R.vtext(R.DEFAULT_KRAFT))]
    for mode, title in (("zk", "ZooKeeper mode"), ("kraft", "KRaft mode")):
        out.append(f"## {title}\n")
        for d in R.decisions():
            if not d.startswith(mode + "."):
                continue
            out.append(f"### `{d}`\n")
            out.append("| Kafka | rule | what Kafka does | read from |")
            out.append("|---|---|---|---|")
            for r in sorted((r for r in R.TABLE if r.decision == d), key=lambda r: r.since):
                tag, path, fn = r.cite
                out.append(f"| {r.range_text} | {_cell(r.name)} | {_cell(r.summary)} | {tag} `{path}` `{fn}` |")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
