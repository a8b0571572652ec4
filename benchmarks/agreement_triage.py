"""Triage files for issue 44: per cluster short of the goal, every decision not agreed, every log-stated moment
outside an interval and every unknown cause, grouped into the issue's classes, with file:line.

Run from the repo root: ``.venv/bin/python benchmarks/agreement_triage.py DIR [--folder F] [--cluster NAME]``.
It writes ``DIR/INDEX.md`` (the figures and the list of files) and one ``DIR/<folder>__<cluster>.md`` per cluster
below 99.5%, or with a moment outside or an unknown cause. A ``DIR/README.md`` written by hand (readings, requests to other owners) is left alone. The grouping is mechanical:

1. broker (and partition) state: ZooKeeper-mode records the replay judged on a state the record contradicts
   (liveness, registration, a state not shown) or could not re-derive for want of state (live brokers, ISR, AR,
   acting controller unknown), and divergences, split by what differs (who was electable, or which leader);
2. leader choice per release: ZooKeeper-mode divergences where both sides elected a leader, different ones (a
   rule or an eligibility question: class 1 or 2, read per case);
3. several clusters in one folder: distinct cluster ids the folder's files state (``meta.properties``
   ``cluster.id=``, KafkaServer's ``Cluster ID = ``, QuorumController's ``with clusterId ``);
4. KRaft metadata log: KRaft items stated by a ``__cluster_metadata`` record;
5. KRaft from logs: the other KRaft items;
6. log-stated moments outside every leaderless interval, by family;
7. unknown causes with replicas known.

Under each decision not agreed in a cluster below the goal, the state it needed and the search of every line of the
cluster's evidence between the last state the replay knew and the record for one that shows it
(``evidence_search.py``): the file ranges searched, the families of the lines naming the partition (or broker) there,
and "none found" or the lines that show it.
"""
from __future__ import annotations

import argparse
import gzip
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agreement import FOLDERS, GOAL, HEAD, REPO, SHARED, Row, _pct, folder_summary, load, row_line, run  # noqa: E402
from evidence_search import Lines, index_events, proof_lines  # noqa: E402

_CLUSTER_ID = re.compile(rb"(?:Cluster ID = |cluster\.id=|with clusterId |clusterId=)([A-Za-z0-9_-]{22})\b")


def cluster_ids(folder: str, name: str) -> dict[str, tuple[int, str]]:
    """Cluster id -> (lines naming it, first file:line) over every file of the cluster's folder."""
    out: dict[str, list] = {}
    root = SHARED / folder
    for f in sorted((root / name).rglob("*")):
        if not f.is_file():
            continue
        data = f.read_bytes()
        if data[:2] == b"\x1f\x8b":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError):
                continue
        if b"luster" not in data:
            continue
        for m in _CLUSTER_ID.finditer(data):
            cid = m.group(1).decode()
            line = data.count(b"\n", 0, m.start()) + 1
            cur = out.setdefault(cid, [0, f"{f.relative_to(root)}:{line}"])
            cur[0] += 1
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def klass(row: Row, item) -> str:
    """The issue-44 class an item belongs to (see the module docstring)."""
    if item.what == "outside":
        return "6"
    if item.what == "unknown cause":
        return "7"
    if row.mode == "kraft":
        return "4" if item.metadata else "5"
    if item.what in ("diverged", "departure"):
        mine = (item.replayed or {}).get("leader")
        theirs = (item.recorded or {}).get("leader")
        failed_r, failed_m = (item.recorded or {}).get("failed"), (item.replayed or {}).get("failed")
        if not failed_r and not failed_m and mine is not None and theirs is not None and mine >= 0 and theirs >= 0 \
                and mine != theirs:
            return "2"
    return "1"


def _shape(item) -> str:
    """What differs in a divergence, in words."""
    r, p = item.recorded or {}, item.replayed or {}
    mine, theirs = p.get("leader"), r.get("leader")
    if (r.get("failed") or theirs == -1) and not p.get("failed") and mine is not None and mine >= 0:
        return "record: no leader (election failed, or leader -1 written); replay had one (it held a broker " \
               "electable that was not)"
    if theirs is not None and theirs >= 0 and (p.get("failed") or mine == -1):
        return "record elected a leader; replay had none (it held the elected broker not electable)"
    if r.get("leader") != p.get("leader"):
        return "both elected, different leaders"
    return "same leader; " + ", ".join(sorted(k for k in set(r) | set(p) if r.get(k) != p.get(k))) + " differ"


def proofs(row: Row) -> dict[int, list[str]]:
    """id(item) -> the evidence search's lines for each decision not agreed (``evidence_search.proof_lines``), read
    in the events of the cluster that holds its record (a folder of several clusters told apart as the replay tells
    them)."""
    from forensics.pipeline import split_clusters

    items = [it for it in row.detail if it.what in ("diverged", "departure", "contradicted", "uncompared")]
    if not items:
        return {}
    events, _ = split_clusters(load(row.folder, row.name))
    by_cluster: dict = defaultdict(list)
    at: dict[tuple, object] = {}
    for e in events:
        by_cluster[e.cluster].append(e)
        at.setdefault((e.source_file, e.source_pos), e.cluster)
    indexed = {c: index_events(evs) for c, evs in by_cluster.items()}
    lines = Lines(SHARED / row.folder)
    out = {}
    for it in items:
        f, _, pos = it.where.rpartition(":")
        c = at.get((f, int(pos))) if pos.isdigit() else None
        if c is None and len(by_cluster) == 1:
            c = next(iter(by_cluster))
        out[id(it)] = proof_lines(it, by_cluster.get(c, []), lines, indexed.get(c)) if c in by_cluster \
            else ["  - needed: the record's cluster is not told; not searched"]
    return out


def cluster_file(row: Row, ids: dict[str, tuple[int, str]]) -> str:
    out = [f"# {row.folder}/{row.name}", "",
           "Generated by `benchmarks/agreement_triage.py` (do not edit; regenerate). Columns as in benchmarks/journal/agreement.md.", "",
           HEAD, "|" + "|".join(["---"] * 16) + "|", row_line(row), ""]
    if row.holes:
        out += ["Holes (off the denominator): " + ", ".join(f"{n} {k}" for k, n in sorted(row.holes.items())), ""]
    by_class: dict[str, list] = defaultdict(list)
    for item in row.detail:
        by_class[klass(row, item)].append(item)
    if len(ids) > 1:
        by_class.setdefault("3", [])
    proved = proofs(row)
    titles = {"1": "1. Broker / partition state", "2": "2. Leader choice per release (both elected, different "
              "leaders)", "3": "3. Several clusters in one folder", "4": "4. KRaft metadata log",
              "5": "5. KRaft from logs", "6": "6. Log-stated moments outside every interval",
              "7": "7. Unknown causes (replicas known)"}
    for k in sorted(by_class):
        items = by_class[k]
        out += [f"## {titles[k]} ({len(items)})", ""]
        if k == "3":
            out += ["Cluster ids stated in this folder (lines, first line):", ""]
            out += [f"- `{cid}`: {n} lines, first {where}" for cid, (n, where) in ids.items()]
            out.append("")
            continue
        groups: dict[str, list] = defaultdict(list)
        for item in items:
            g = f"{item.what}: {_shape(item) if item.what in ('diverged', 'departure') else item.kind}"
            groups[g].append(item)
        for g, its in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            out += [f"### {g} ({len(its)})", ""]
            for it in its:
                out += [f"- {it.line()}"] + proved.get(id(it), [])
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def wanted(row: Row) -> bool:
    return (row.measure is not None and row.measure < GOAL) or sum(row.outside.values()) > 0 or row.unknown_causes > 0


def write_triage(out_dir: Path, rows: list[Row]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*__*.md"):  # files of an earlier run; clusters that reached the goal have none now
        if old.name.split("__", 1)[0] in {r.folder for r in rows}:
            old.unlink()
    head = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %s"], capture_output=True,
                          text=True).stdout.strip()[:100]
    index = ["# Issue 44 triage: index", "", f"Generated by `benchmarks/agreement_triage.py` on `{head}`. "
             "README.md (by hand) reads the classes; the files below list every item.", ""]
    for folder in [f for f in FOLDERS if any(r.folder == f for r in rows)]:
        mine = [r for r in rows if r.folder == folder]
        index += [f"## {folder}", "", folder_summary(folder, mine), "",
                  "| cluster | measure | diverged | contradicted | uncompared | outside | unknown | items by class |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in mine:
            if not wanted(r):
                continue
            ids = cluster_ids(folder, r.name)
            text = cluster_file(r, ids)
            (out_dir / f"{folder}__{r.name}.md").write_text(text, encoding="utf-8")
            classes = Counter(klass(r, it) for it in r.detail)
            if len(ids) > 1:
                classes["3"] += len(ids)
            cls = ", ".join(f"{k}: {n}" for k, n in sorted(classes.items()))
            index.append(f"| [{r.name}]({folder}__{r.name}.md) | {_pct(r.measure)} | {r.diverged} "
                         f"| {sum(r.contradicted.values())} | {sum(r.uncompared.values())} | {sum(r.outside.values())} "
                         f"| {r.unknown_causes} | {cls} |")
        index.append("")
    (out_dir / "INDEX.md").write_text("\n".join(index), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the folder to write INDEX.md and the cluster files into")
    ap.add_argument("--folder", action="append", choices=FOLDERS, help="only this folder of ../shared (repeatable)")
    ap.add_argument("--cluster", action="append", help="only this cluster (repeatable)")
    args = ap.parse_args(argv)
    write_triage(Path(args.out), run(args.folder or list(FOLDERS), set(args.cluster or []), zk_real=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
