"""The cluster image a replay result carries: frozen, and its history answers "what was true at T".

Independent truth: the state znode writes ZooKeeper logged (``ground_truth.json`` of the real ZooKeeper
scenarios: leader, ISR and epochs of each write, with the driver's clock), and the controller's own
``Changed partition ... with state LeaderAndIsr(...)`` lines of a real broker log, read here with a regex
of their own (not through the parsers).
"""
import ast
import dataclasses
import gzip
import json
import re
from datetime import datetime, timezone

import pytest

from conftest import REAL_LOGS, REPO, ZK_REAL, replayed_cluster
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import ReplayResult, replay_cluster

S_REAL = "s5_churn"  # several leader changes per partition, several controllers
LOG_REAL = "gaparedes__kafka-demo"  # 2.x-3.x "Changed partition" lines, elections after broker losses


def _zk_replay(scen):
    events = []
    for f in sorted((ZK_REAL / scen / "version-2").iterdir()):
        evs, _ = parse_source(f.read_bytes(), SourceContext(str(f), cluster="zk"))
        events += [e for e in evs if e.event_type != "zk_txn"]
    return replay_cluster(events, "zk"), json.loads((ZK_REAL / scen / "ground_truth.json").read_text())


def _log_replay(name):
    return replayed_cluster(name)


SCENARIOS = sorted(p.name for p in ZK_REAL.iterdir() if (p / "ground_truth.json").exists())


@pytest.fixture(scope="module")
def zk():
    return _zk_replay(S_REAL)


@pytest.fixture(scope="module", params=SCENARIOS)
def scenario(request):
    return _zk_replay(request.param)


def test_the_image_is_frozen(zk):
    res, _ = zk
    img = res.image
    tp = next(iter(img.partitions))
    with pytest.raises(dataclasses.FrozenInstanceError):
        img.live = frozenset()
    with pytest.raises(TypeError):
        img.partitions[tp] = None
    with pytest.raises(AttributeError):
        img.partitions[tp].leader = 99
    with pytest.raises(TypeError):
        img.periods[next(iter(img.periods))] = ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        img.tenures[0].end = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        img.config.version = (9, 9, 9)
    with pytest.raises(TypeError):
        img.config.topic["x"] = {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.leaderless = []  # a result is not patched: what-if computes its figures instead
    then = res.history.at(res.stream.trace_start)
    with pytest.raises(dataclasses.FrozenInstanceError):
        then.controller = 1


def test_history_at_t_is_the_state_znode_written_before_t(scenario):
    res, truth = scenario
    writes: dict[tuple[str, int], list[dict]] = {}
    deleted: dict[str, int] = {}
    for e in truth["events"]:
        if e["kind"] == "partition_state_change":
            writes.setdefault((e["topic"], e["partition"]), []).append(e)
        elif e["kind"] == "topic_deleted":
            deleted[e["topic"]] = e["t_ms"]
    checked = 0
    for tp, ws in writes.items():
        for w, nxt in zip(ws, ws[1:] + [None]):
            # until the next write, or the topic's deletion (the driver's clock and ZooKeeper's differ by a few
            # ms: only instants well clear of both)
            until = nxt["t_ms"] if nxt is not None else deleted.get(tp[0])
            if until is not None and until - w["t_ms"] < 200:
                continue
            t = (w["t_ms"] + 100) * 1000 if until is not None else res.stream.trace_end
            p = res.history.partition_at(tp, t)
            s = w["new_state"]
            assert p is not None, (tp, w)
            assert (p.leader, list(p.isr), p.leader_epoch, p.controller_epoch) == (
                s["leader"], s["isr"], s["leader_epoch"], s["controller_epoch"]), (tp, w)
            assert res.history.at(t).partitions[tp] == p
            checked += 1
    assert checked >= 10


def test_history_at_t_knows_brokers_and_controller_then(zk):
    res, truth = zk
    hist = res.history
    for t in res.image.tenures:
        at = hist.at(t.start)
        assert (at.controller, at.controller_epoch) == (t.controller, t.epoch)
    # before the first controller's election nothing had been elected
    assert hist.at(res.image.tenures[0].start - 1).controller is None


LINE = re.compile(r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] \w+ \[Controller id=\d+ epoch=(?P<ce>\d+)\] "
                  r"Changed partition (?P<topic>.+)-(?P<p>\d+) from \w+ to \w+ with state "
                  r"LeaderAndIsr\(leader=(?P<leader>-?\d+), leaderEpoch=(?P<le>\d+), isr=List\((?P<isr>[\d, ]*)\)")


def test_history_at_t_is_what_the_controller_logged_at_t():
    res = _log_replay(LOG_REAL)
    last: dict[tuple[tuple[str, int], int], tuple] = {}
    for f in sorted((REAL_LOGS / LOG_REAL).rglob("state-change.log*")):
        text = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
        for line in text.decode().splitlines():
            m = LINE.match(line)
            if m:
                ts = int(datetime.strptime(m["ts"], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=timezone.utc)
                         .timestamp() * 1000) * 1000
                isr = tuple(int(x) for x in m["isr"].split(",") if x.strip())
                last[((m["topic"], int(m["p"])), ts)] = (int(m["leader"]), isr, int(m["le"]), int(m["ce"]))
    assert len(last) >= 20
    for (tp, ts), want in sorted(last.items()):
        p = res.history.partition_at(tp, ts)
        assert p is not None, (tp, ts)
        assert (p.leader, p.isr, p.leader_epoch, p.controller_epoch) == want, (tp, ts)


# ------------------------------------------------------------------------------------------- architecture


def _modules(*roots):
    for root in roots:
        yield from sorted((REPO / root).rglob("*.py"))


def test_a_result_has_no_controller_object():
    assert "controller" not in {f.name for f in dataclasses.fields(ReplayResult)}


# what results are called where they are read (a tenure's ``t.controller`` is a broker id, not an object)
RESULT_NAMES = {"res", "result", "recorded", "baseline", "variant", "base", "var", "whole", "r"}


def test_nothing_outside_the_replay_reads_the_replay_object():
    """``x.controller.y`` (the result's controller object, as it once was) nowhere outside replay_engine,
    nor in what-if and risk; no module outside replay_engine imports the replay classes."""
    offenders = []
    files = [*_modules("forensics", "dashboards", "benchmarks", "parsers"),
             REPO / "replay_engine" / "estimates/whatif.py", REPO / "replay_engine" / "estimates/risk.py"]
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "controller":
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} .controller.{node.attr}")
            if isinstance(node, ast.Attribute) and node.attr == "controller" and isinstance(node.value, ast.Name) \
                    and node.value.id in RESULT_NAMES:
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} {node.value.id}.controller")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "controller":
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} getattr(..., 'controller')")
            if isinstance(node, ast.ImportFrom) and not path.is_relative_to(REPO / "replay_engine"):
                names = {a.name for a in node.names} & {"ZkControllerReplay", "KraftReplay"}
                offenders += [f"{path.relative_to(REPO)}:{node.lineno} imports {n}" for n in sorted(names)]
    assert not offenders, offenders
