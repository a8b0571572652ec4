"""Byte-identity of the replay's outputs: a canonical dump of every output the engine gives on the shared evidence,
one file per item and one digest for all, so a refactor can show it changed nothing.

Run from the repo root:

    nice -n 10 .venv/bin/python benchmarks/outputs_digest.py OUT_DIR [--compare OTHER_DIR] [--only SUBSTR]
        [--order name|reverse|shuffle:SEED] [--no-shards]

Items, each replayed in this process (``forensics.sources.parse_folder_in_process`` and ``replay_engine.api``):

- ``real_logs/NAME``, ``real_logs2/NAME``: every cluster of ``../shared/real_logs`` and ``../shared/real_logs2``;
  for a ZooKeeper-mode cluster from logs alone, also phase 1 of a sharded replay (``cluster_pass``: its journal,
  the records it keeps as hints, both ways it can run), unless ``--no-shards``;
- ``zk_real/NAME``: the ZooKeeper scenarios (as tests/test_replay_zk_real.py loads them);
- ``samples/NAME``: the bundled samples (``sample_logs/``), with the pre-mortem (``risk.single_failures``) of each;
- ``whatif/NAME/CHANGE``: what-if on each sample (as tests/test_whatif_samples.py runs them), for the changes
  of ``WHATIFS`` (the broker they name is the sample's lowest broker id, found in its own replay).

An item's dump is its ``ReplayResult.to_json()`` plus every comparison, decision, timeline row and the final
image (or the what-if's ``to_json()``), as canonical JSON (sorted keys). The replay reports no wall-clock times;
``TIMING_KEYS`` are dropped all the same, should one appear. ``digest.txt`` lists each item's SHA-256 and the
digest of them all. ``--compare DIR`` lists the items whose dumps differ from DIR's and the first differing lines
of each. The order items run in must not matter (``--order``): nothing is carried from one item to the next.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SHARED = Path(os.environ.get("KAFKA_FORENSICS_SHARED", REPO.parent / "shared")).resolve()  # as tests/conftest.py
SAMPLES = REPO / "sample_logs"
TIMING_KEYS = frozenset({"cpu_s", "wall_s", "elapsed_s", "steps"})
# What-if changes run on every sample; "{b}" is the sample's lowest broker id ("lowest" in the item name).
WHATIFS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("unclean.leader.election.enable=true",), ()),
    (("unclean.leader.election.enable=false",), ()),
    ((), ("kill:{b}",)),
    ((), ("controlled-shutdown:{b}",)),
    ((), ("reassign-away:{b}",)),
)


# ------------------------------------------------------------------ canonical form


def _canon(x: Any) -> Any:
    """JSON-able, deterministic: dataclasses and named tuples by field, sets sorted, timing keys dropped."""
    import dataclasses

    if isinstance(x, dict):
        return {str(k): _canon(v) for k, v in x.items() if k not in TIMING_KEYS}
    if hasattr(x, "_asdict"):
        return _canon(x._asdict())
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return _canon({f.name: getattr(x, f.name) for f in dataclasses.fields(x)
                       if f.name not in ("change",)})
    if isinstance(x, (set, frozenset)):
        return sorted((_canon(v) for v in x), key=repr)
    if isinstance(x, (list, tuple)):
        return [_canon(v) for v in x]
    if hasattr(x, "items") and callable(x.items):  # FrozenMap
        return {repr(k) if not isinstance(k, str) else k: _canon(v) for k, v in x.items()}
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if hasattr(x, "to_json"):
        return _canon(x.to_json())
    return repr(x)


def dump_text(obj: Any) -> str:
    """Canonical JSON; the checkout's and the evidence's own location left out of the paths it cites (a sample's
    files are cited by absolute path), so two checkouts give the same bytes."""
    text = json.dumps(_canon(obj), sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    for root in (REPO, SHARED):
        text = text.replace(json.dumps(str(root) + "/")[1:-1], "")
    return text


def result_dump(res) -> dict[str, Any]:
    img = res.image
    return {
        "result": res.to_json(),
        "comparisons": [{"tp": list(c.tp), "ts": c.ts, "record": c.record.to_json(), "recorded": c.recorded,
                         "replayed": c.replayed, "verdict": c.verdict, "how": c.how, "reason": c.reason,
                         "evidence": [e.to_json() for e in c.evidence]} for c in res.comparisons],
        "decisions": [d.to_json() | {"ts": d.ts, "expected_record": d.expected_record} for d in res.decisions],
        "timeline": res.timeline_rows(),
        "image": {"live": sorted(img.live), "known_brokers": sorted(img.known_brokers),
                  "controller": img.controller, "controller_epoch": img.controller_epoch,
                  "partitions": [list(p) for _, p in sorted(img.partitions.items())],
                  "epoch_gaps": img.epoch_gaps,
                  "deletions": {t: [[r.to_json(), end] for r, end in s] for t, s in sorted(img.deletions.items())},
                  "deletion_halts": {t: [[r.to_json(), why] for r, why in s]
                                     for t, s in sorted(img.deletion_halts.items())}},
        "history": {"ar": {f"{t}-{p}": h for (t, p), h in sorted(res.history.ar_history.items())},
                    "config": [[ts, c.version, c.version_source] for ts, c in res.history.config_history],
                    "failed_elections": {f"{t}-{p}": [r.to_json() for r in rs]
                                         for (t, p), rs in sorted(res.history.failed_elections.items())}},
        "journal": res.journal,
        "restarts": res.restarts,
        "unavailable": res.unavailable,
    }


# ------------------------------------------------------------------ the items


def _sample_events(name: str) -> list:
    """As tests/test_whatif_samples.py ``load``: the sample's inputs as ``collect_inputs`` finds them, raw txns out."""
    from forensics.sources import collect_inputs
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    root = SAMPLES / name
    inputs = collect_inputs([str(root)], root / ".never-extracted")
    out = []
    for f in inputs.files:
        with open(f.read_path, "rb") as fh:
            evs, _ = parse_source(fh.read(), SourceContext(f.display, cluster=name, broker_hint=f.broker_hint))
        out += [e for e in evs if e.event_type != "zk_txn"]
    return out


def _zk_real_events(name: str) -> list:
    """As tests/test_replay_zk_real.py ``load``."""
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    events = []
    for f in sorted((SHARED / "zk_real" / name / "version-2").iterdir()):
        evs, _ = parse_source(f.read_bytes(), SourceContext(str(f.relative_to(SHARED)), cluster="zk"))
        events += [e for e in evs if e.event_type != "zk_txn"]
    return events


def _phase1(events, shards: bool) -> dict[str, Any] | None:
    """Phase 1 of a sharded replay (logs alone, ZooKeeper mode), streamed and replayed the plain way."""
    from replay_engine.sharding.cluster_pass import phase1_events, replayed_pass, streamed_pass
    from replay_engine.zk.from_events import cluster_context
    from replay_engine.kraft.facts import is_kraft

    if not shards or is_kraft(events):
        return None
    ctx = cluster_context(events)
    if ctx.zk:
        return None
    ev1 = phase1_events(events)
    out = {}
    for name, run in (("streamed", streamed_pass), ("replayed", replayed_pass)):
        cp = run(ev1, ctx)
        out[name] = None if cp is None else {"journal": cp.journal, "hints": sorted(map(repr, cp.hints)),
                                             "records": cp.records, "facts": cp.facts}
    return out


def _cluster_item(load: Callable[[], list], cluster: str, shards: bool) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        from replay_engine.api import replay_cluster

        events = load()
        out = result_dump(replay_cluster(events, cluster))
        out["phase1"] = _phase1(events, shards)
        return out
    return run


def _sample_item(name: str) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        from replay_engine.api import replay_cluster
        from replay_engine.estimates.risk import controller_of, single_failures, states_from_replay

        res = replay_cluster(_sample_events(name), name)
        out = result_dump(res)
        parts, live, notes = states_from_replay(res)
        singles = single_failures(parts, live, controller_of(res))
        out["risk"] = {"single_failures": {str(b): vars(i) for b, i in singles.items()},
                       "notes": notes}
        return out
    return run


def _lowest_broker(name: str) -> int | None:
    from replay_engine.api import replay_cluster

    brokers = sorted(replay_cluster(_sample_events(name), name).image.periods)
    return brokers[0] if brokers else None


def _whatif_item(name: str, sets: tuple[str, ...], ops: tuple[str, ...]) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        from replay_engine.estimates.whatif import ChangeError, parse_changes, whatif

        b = _lowest_broker(name) if any("{b}" in o for o in ops) else None
        if b is None and any("{b}" in o for o in ops):
            return {"skipped": "no broker in the sample's replay"}
        try:
            changes = parse_changes(list(sets), [o.format(b=b) for o in ops])
            return whatif(_sample_events(name), changes, name).to_json()
        except (ChangeError, ValueError) as exc:  # a what-if the sample cannot take is an output too
            return {"refused": f"{type(exc).__name__}: {exc}"}
    return run


def items(shards: bool = True) -> dict[str, Callable[[], dict[str, Any]]]:
    from forensics.sources import parse_folder_in_process

    out: dict[str, Callable[[], dict[str, Any]]] = {}
    for folder in ("real_logs", "real_logs2"):
        root = SHARED / folder
        for p in sorted(root.iterdir()):
            if p.is_dir() and p.name != "issue_snippets":
                out[f"{folder}/{p.name}"] = _cluster_item(
                    lambda r=root, n=p.name: parse_folder_in_process(r, n), p.name, shards)
    for p in sorted((SHARED / "zk_real").iterdir()):
        if (p / "ground_truth.json").exists():
            out[f"zk_real/{p.name}"] = _cluster_item(lambda n=p.name: _zk_real_events(n), "zk", False)
    for p in sorted(SAMPLES.iterdir()):
        if p.is_dir():
            out[f"samples/{p.name}"] = _sample_item(p.name)
            for sets, ops in WHATIFS:
                label = "+".join(sets + ops).replace("{b}", "lowest").replace("/", "_")
                out[f"whatif/{p.name}/{label}"] = _whatif_item(p.name, sets, ops)
    return out


def file_of(out: Path, item: str) -> Path:
    return out / (item.replace("/", "__") + ".json")


# ------------------------------------------------------------------ running and comparing


def ordered(names: list[str], order: str) -> list[str]:
    if order == "name":
        return sorted(names)
    if order == "reverse":
        return sorted(names, reverse=True)
    if order.startswith("shuffle:"):
        names = sorted(names)
        random.Random(int(order.split(":", 1)[1])).shuffle(names)
        return names
    raise SystemExit(f"--order: name, reverse or shuffle:SEED, not {order!r}")


def run_all(out: Path, only: str | None, order: str, shards: bool) -> dict[str, str]:
    out.mkdir(parents=True, exist_ok=True)
    todo = items(shards)
    names = [n for n in todo if only is None or only in n]
    shas: dict[str, str] = {}
    for n in ordered(names, order):
        t = time.monotonic()
        try:
            text = dump_text(todo[n]())
        except Exception as exc:  # noqa: BLE001 - a crash is an output to compare, not a reason to stop
            import traceback

            text = dump_text({"crashed": f"{type(exc).__name__}: {exc}",
                              "where": traceback.format_exc().splitlines()[-3:]})
        file_of(out, n).write_text(text)
        shas[n] = hashlib.sha256(text.encode()).hexdigest()
        print(f"{shas[n][:12]}  {n}  ({time.monotonic() - t:.1f} s)", file=sys.stderr, flush=True)
    total = hashlib.sha256("".join(f"{n} {shas[n]}\n" for n in sorted(shas)).encode()).hexdigest()
    lines = [f"{shas[n]}  {n}" for n in sorted(shas)] + [f"{total}  ALL ({len(shas)} items)"]
    (out / "digest.txt").write_text("\n".join(lines) + "\n")
    print(f"digest {total} over {len(shas)} items -> {out / 'digest.txt'}")
    return shas


def read_digest(d: Path) -> dict[str, str]:
    out = {}
    for line in (d / "digest.txt").read_text().splitlines():
        sha, _, name = line.partition("  ")
        if not name.startswith("ALL ("):
            out[name] = sha
    return out


def compare(a: Path, b: Path, lines: int = 12) -> int:
    """Items whose dumps differ between ``a`` and ``b`` (both run_all outputs), with the first differing lines."""
    da, db = read_digest(a), read_digest(b)
    differ = 0
    for n in sorted(set(da) | set(db)):
        if n not in da or n not in db:
            print(f"only in {a if n in da else b}: {n}")
            differ += 1
            continue
        if da[n] == db[n]:
            continue
        differ += 1
        print(f"DIFFERS: {n}")
        old, new = file_of(b, n).read_text().splitlines(), file_of(a, n).read_text().splitlines()
        # the first differing line and a few around it (a full diff of dumps this size takes minutes)
        i = next((k for k, (x, y) in enumerate(zip(old, new)) if x != y), min(len(old), len(new)))
        for k in range(max(i - 2, 0), min(i + lines, max(len(old), len(new)))):
            x = old[k] if k < len(old) else "<end>"
            y = new[k] if k < len(new) else "<end>"
            print(f"  {k + 1}: {'  ' if x == y else '- '}{x}" + ("" if x == y else f"\n  {k + 1}: + {y}"))
    same = len(set(da) & set(db)) - sum(1 for n in set(da) & set(db) if da[n] != db[n])
    print(f"{same} item(s) identical, {differ} differ")
    return differ


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="directory for the dumps and digest.txt")
    ap.add_argument("--compare", type=Path, help="a directory of an earlier run to compare with")
    ap.add_argument("--only", help="only items whose name contains this")
    ap.add_argument("--order", default="name", help="name, reverse or shuffle:SEED")
    ap.add_argument("--no-shards", action="store_true", help="leave out phase 1 of sharded replays")
    ap.add_argument("--compare-only", action="store_true", help="do not run: compare OUT with --compare")
    args = ap.parse_args(argv)
    if not args.compare_only:
        run_all(args.out, args.only, args.order, not args.no_shards)
    if args.compare is not None:
        return 1 if compare(args.out, args.compare) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
