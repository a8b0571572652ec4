"""Facts, their roles and the router: what both replays consume and how each fact reaches its handler.

Which fact types a replay can meet is read from the source (every ``F.Name(...)`` the modules that feed it
construct), so a new fact type that a converter starts to emit and no replay handles fails here, not in a run.
The shared meaning of a KRaft fence and a ZooKeeper session expiry is checked on real evidence: the raw
lines of a real KRaft controller log, read here with their own pattern, and a zk_real scenario's ground truth.
"""
from __future__ import annotations

import ast
import gzip
import json
import re
from pathlib import Path

import pytest

from conftest import REAL_LOGS, REPO, ZK_REAL
from replay_engine.common import facts as F
from replay_engine.common.config import ConfigState
from replay_engine.zk.controller import ZkControllerReplay
from replay_engine.zk.from_events import Coverage
from replay_engine.kraft.replay import KraftReplay
from replay_engine.zk.modes import CounterfactualMode, LogsOnlyMode, ZkRecordsMode
from replay_engine.common.roles import ROLES, Router, UnroutedFact

ENGINE = REPO / "replay_engine"
# The modules that make the facts each replay runs over (converters, what-if's plan, the shard cut, and the
# inputs the ZooKeeper-mode controller infers from records).
ZK_FEEDS = ("zk/from_events.py", "estimates/whatif.py", "sharding/cut.py", "zk/controller.py")
KRAFT_FEEDS = ("kraft/facts.py",)


def _fact_classes() -> list[type]:
    out, todo = [], [F.Fact]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            out.append(sub)
            todo.append(sub)
    return out


def _constructed(module: str) -> set[type]:
    """Fact classes a module constructs (``F.Name(...)``)."""
    tree = ast.parse((ENGINE / module).read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "F":
            cls = getattr(F, node.func.attr)
            if isinstance(cls, type) and issubclass(cls, F.Fact):
                out.add(cls)
    return out


def test_every_fact_class_has_one_of_the_four_roles():
    classes = _fact_classes()
    assert len(classes) >= 25
    bad = {c.__name__: c.role for c in classes if c.role not in ROLES}
    assert not bad, bad
    # the roles the docs name are all in use
    assert {c.role for c in classes} == set(ROLES)


@pytest.mark.parametrize("mode", [ZkRecordsMode(), LogsOnlyMode(), CounterfactualMode()], ids=lambda m: m.name)
def test_the_zookeeper_replay_routes_every_fact_its_feeds_make(mode):
    router = ZkControllerReplay(ConfigState(), Coverage(), mode=mode).router
    met = set().union(*(_constructed(m) for m in ZK_FEEDS))
    assert F.RecordedState in met and F.Evidence in met and F.ObservedState in met
    missing = sorted(c.__name__ for c in met if not router.handles(c))
    assert not missing, missing


def test_the_kraft_replay_routes_every_fact_its_converter_makes():
    router = KraftReplay(ConfigState()).router
    met = _constructed("kraft/facts.py")
    assert F.PartitionChange in met and F.BrokerDown in met and F.ObservedState in met
    missing = sorted(c.__name__ for c in met if not router.handles(c))
    assert not missing, missing


def test_the_mode_chooses_what_records_and_observations_do():
    follow = ZkControllerReplay(ConfigState(), Coverage(), mode=ZkRecordsMode())
    seed = ZkControllerReplay(ConfigState(), Coverage(), mode=CounterfactualMode())
    assert follow.router.tables["record"][F.RecordedState] == follow.record_handlers.recorded_state
    assert seed.router.tables["record"][F.RecordedState] == seed.seeding.seed_from_record
    assert seed.router.tables["observation"][F.ObservedState] == seed.seeding.seed_from_observation
    # inputs are decided and applied the same way in every mode
    assert follow.router.tables["input"].keys() == seed.router.tables["input"].keys()


def test_the_router_refuses_a_fact_under_a_role_it_does_not_declare_and_one_it_cannot_route():
    with pytest.raises(ValueError, match="RecordedState"):
        Router(inputs={F.RecordedState: print}, records={}, observations={}, evidence={})
    seen = []
    r = Router(inputs={F.BrokerUp: seen.append}, records={}, observations={}, evidence={})
    up = F.BrokerUp(1, F.Ref(1, "broker_registered", "b1/server.log", 7, "x"), broker=1)
    r.route(up)
    assert seen == [up]
    with pytest.raises(UnroutedFact, match=r"BrokerDown \(b1/server.log:7\)"):
        r.route(F.BrokerDown(2, F.Ref(2, "broker_failed", "b1/server.log", 7, "x"), broker=1))
    # a subclass is its own type: it is not routed as its parent without being named
    with pytest.raises(UnroutedFact):
        r.route(F.BrokerRegistered(3, up.ref, broker=1))


def test_kraft_replay_reads_no_event_and_dispatches_by_no_name():
    """kraft.py consumes facts only: no import from parsers, no Event, no getattr, no event_type."""
    tree = ast.parse((ENGINE / "kraft/replay.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not (node.module or "").startswith("parsers"), node.module
            assert "Event" not in {a.name for a in node.names}, node.module
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("parsers") for a in node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in ("getattr", "eval", "exec"), f"{node.func.id} at line {node.lineno}"
        elif isinstance(node, ast.Attribute):
            assert node.attr not in ("event_type", "detail", "source_kind"), f".{node.attr} at line {node.lineno}"
        elif isinstance(node, ast.Name):
            assert node.id != "Event", f"Event at line {node.lineno}"


# ---- one meaning, one fact: a KRaft fence and a ZooKeeper session expiry -------------------------------------

# Kafka 3.9 (tag 3.9.0-rc3) metadata/src/main/java/org/apache/kafka/metadata/BrokerRegistrationFencingChange.java:
# FENCE(1), NONE(0), UNFENCE(-1) -- the ``fenced`` field of a BrokerRegistrationChangeRecord; and
# controller/ReplicationControlManager.java logs "Fencing broker {} because its session has timed out."
_FENCE_LINE = re.compile(r"Replayed BrokerRegistrationChangeRecord modifying the registration for broker (\d+): "
                         r"BrokerRegistrationChangeRecord\(brokerId=\1, .*\bfenced=1\b")
_TIMEOUT_LINE = re.compile(r"Fencing broker (\d+) (?:at epoch \d+ )?because its session has timed out")
# a broker in controlled shutdown let go (SHUTDOWN_NOW): ReplicationControlManager.processBrokerHeartbeat fences it
# (3.5.1 .. 3.9.0-rc3 handleBrokerFenced)
_SHUTDOWN_NOW_LINE = re.compile(r"The request from broker (\d+) to shut down has been granted since the lowest active")
KRAFT_CLUSTER = "Ammar777782439__kafka_2.13-4.0.0"


def _raw_lines(display: str) -> list[str]:
    """A real-log file's lines, as the file holds them (``display`` is relative to real_logs)."""
    data = (REAL_LOGS / display).read_bytes()
    if display.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", "replace").splitlines()


def _parse(files, cluster: str, relative_to: Path) -> list:
    from forensics.sources import broker_hint_from_path
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    events = []
    for f in files:
        rel = f.relative_to(relative_to).as_posix()
        evs, _ = parse_source(f.read_bytes(), SourceContext(rel, cluster=cluster, broker_hint=broker_hint_from_path(rel)))
        events += [e for e in evs if e.event_type != "zk_txn"]
    return events


@pytest.fixture(scope="module")
def kraft_downs():
    from replay_engine.kraft.facts import kraft_facts, prepared

    root = REAL_LOGS / KRAFT_CLUSTER
    events = _parse(sorted(p for p in root.rglob("*") if p.is_file()), KRAFT_CLUSTER, REAL_LOGS)
    events, ctx = prepared(events)
    return [f for f in kraft_facts(events, ctx=ctx).facts if isinstance(f, F.BrokerDown)]


def test_a_kraft_fence_is_broker_down_caused_by_the_fence(kraft_downs):
    fenced = [f for f in kraft_downs if f.cause == "fenced"]
    timeouts = [f for f in kraft_downs if f.cause == "heartbeat_timeout"]
    assert fenced and timeouts
    for f in fenced + timeouts:
        line = _raw_lines(f.ref.source_file)[f.ref.source_pos - 1]
        m = (_FENCE_LINE.search(line) or _SHUTDOWN_NOW_LINE.search(line)) if f.cause == "fenced" \
            else _TIMEOUT_LINE.search(line)
        assert m and int(m.group(1)) == f.broker, (f.cause, f.broker, f.ref.cite(), line)
    # every heartbeat-timeout line of the controller's log is one such fact (these lines are never re-logged)
    cited = {(f.ref.source_file, f.ref.source_pos) for f in timeouts}
    root = REAL_LOGS / KRAFT_CLUSTER
    expected = set()
    for p in sorted(root.rglob("controller.log*")):
        display = p.relative_to(REAL_LOGS).as_posix()
        for i, line in enumerate(_raw_lines(display), 1):
            if _TIMEOUT_LINE.search(line):
                expected.add((display, i))
    assert cited == expected


def test_a_zookeeper_session_expiry_is_the_same_fact_with_its_own_cause(kraft_downs):
    from replay_engine.zk.from_events import build_facts

    scenario = "s1_single_replica_kill"
    truth = json.loads((ZK_REAL / scenario / "ground_truth.json").read_text())
    (expiry,) = [e for e in truth["events"] if e["kind"] == "session_expired"]
    events = _parse(sorted((ZK_REAL / scenario / "version-2").iterdir()), "zk", ZK_REAL)
    downs = [f for f in build_facts(events).facts if isinstance(f, F.BrokerDown)]
    (zk,) = [f for f in downs if f.ref.zxid == int(expiry["zxid"], 16)]
    assert zk.broker == expiry["broker"] and zk.cause == "session_expired"
    kraft = next(f for f in kraft_downs if f.cause == "fenced")
    assert type(zk) is type(kraft) is F.BrokerDown and zk.role == kraft.role == "input"
    assert zk.cause != kraft.cause


def test_the_kraft_what_if_side_routes_every_fact_its_feeds_make():
    from replay_engine.kraft.counterfactual import KraftVariant

    router = KraftReplay(ConfigState(), variant=KraftVariant()).router
    met = _constructed("kraft/facts.py") | _constructed("kraft/whatif.py")
    assert F.BrokerStopped in met and F.ControlledShutdownRequest in met
    missing = sorted(c.__name__ for c in met if not router.handles(c))
    assert not missing, missing
