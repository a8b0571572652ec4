"""The apply module: the one writer of partition state, and the valid-previous-states gate.

Independent truth: Kafka 2.7.0, core/src/main/scala/kafka/controller/PartitionStateMachine.scala --
``PartitionState.validPreviousStates`` (NewPartition <- NonExistent; Online/Offline <- New, Online, Offline;
NonExistent <- Offline), ``doHandleStateChanges`` (an invalid partition is only logged by
``logInvalidTransition`` -- "Partition ... should be in one of ... states before moving to ... state.
Instead it is in ... state" -- and left as it is), and ``initializePartitionState`` (states set at failover
without the check). The real evidence: every transition the replay makes on it must pass the table.
"""
import json
from pathlib import Path

import pytest

from conftest import ZK_REAL, real_cluster_events
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.common import apply as A
from replay_engine.common import facts as F
from replay_engine.api import replay_cluster
from replay_engine.common.config import ConfigState
from replay_engine.zk.controller import ZkControllerReplay
from replay_engine.zk.from_events import Coverage
from replay_engine.common.partition import PState
from replay_engine.common.states import NEW, NON_EXISTENT, OFFLINE, ONLINE

REPO = Path(__file__).resolve().parents[1]


def ref(text="line", ts=1):
    return F.Ref(ts, "test", "f.log", 1, text)


# ------------------------------------------------------------------------------------------ the gate


def test_decided_invalid_move_is_not_made_and_names_both_states():
    findings = []
    store = A.PartitionStore(findings)
    p = store.part(("t", 0))
    store.initialize(p, ONLINE)
    # OnlinePartition -> NewPartition: NewPartition's only valid previous state is NonExistentPartition
    assert store.move(p, NEW, A.DECIDED, 5, ref()) is False
    assert p.state == ONLINE  # Kafka leaves the partition alone
    (f,) = findings
    assert (f["kind"], f["from"], f["to"], f["origin"]) == (A.INVALID_TRANSITION, ONLINE, NEW, A.DECIDED)
    assert f["text"].startswith("Partition t-0 should be in one of NonExistentPartition states before moving to "
                                "NewPartition state. Instead it is in OnlinePartition state")


def test_observed_invalid_move_is_followed_and_is_a_finding():
    findings = []
    store = A.PartitionStore(findings)
    p = store.part(("t", 1))
    store.initialize(p, ONLINE)
    # OnlinePartition -> NonExistentPartition skips OfflinePartition (topic deletion goes through it)
    assert store.move(p, NON_EXISTENT, A.OBSERVED, 5, ref()) is False
    assert p.state == NON_EXISTENT  # what the cluster did
    assert [(f["from"], f["to"], f["origin"]) for f in findings] == [(ONLINE, NON_EXISTENT, A.OBSERVED)]


def test_stated_previous_state_is_the_one_checked():
    findings = []
    store = A.PartitionStore(findings)
    p = store.part(("t", 2))
    store.initialize(p, ONLINE)  # the replay's belief is stale: the topic was deleted meanwhile
    assert store.move(p, NEW, A.RECORDED, 5, ref(), stated=NON_EXISTENT)  # "from NonExistentPartition to New"
    assert p.state == NEW and findings == []


@pytest.mark.parametrize("target", [NEW, ONLINE, OFFLINE, NON_EXISTENT])
def test_unknown_and_unchanged_states_are_not_judged(target):
    findings = []
    store = A.PartitionStore(findings)
    p = store.part(("t", 3))
    assert store.move(p, target, A.DECIDED, 1, ref())  # Unknown: the replay has not seen it, nothing to judge
    assert store.move(p, target, A.DECIDED, 2, ref())  # no change of state (New stays New after a failed init)
    assert findings == []


def test_replay_decision_on_a_deleted_partition_is_refused_like_kafka():
    """A preferred election asked for a partition the controller moved to NonExistentPartition: Kafka's
    onReplicaElection -> handleStateChanges(OnlinePartition) rejects it in doHandleStateChanges."""
    ctrl = ZkControllerReplay(ConfigState(), Coverage(zk=[(0, 10**12)]))
    tp = ("t", 0)
    for b in (1, 2):
        ctrl.run([F.BrokerUp(1, ref(ts=1), broker=b)])
    ctrl.run([F.ControllerElected(2, ref(ts=2), controller=1, epoch=1),
              F.TopicAssignment(3, ref(ts=3), topic="t", assignment={0: (1, 2)}),
              F.RecordedState(4, ref(ts=4), tp=tp, kind="write", leader=2, isr=(1, 2), leader_epoch=3,
                              zk_version=3, controller_epoch=1),
              F.RecordedState(5, ref(ts=5), tp=tp, kind="offline", from_state=ONLINE, to_state=OFFLINE),
              F.RecordedState(6, ref(ts=6), tp=tp, kind="deleted", from_state=OFFLINE, to_state=NON_EXISTENT)])
    p = ctrl.parts[tp]
    assert p.state == NON_EXISTENT
    decisions = len(ctrl.decisions)
    ctrl.run([F.PreferredElectionRequest(7, ref("preferred election asked", ts=7), tps=(tp,))])
    assert p.state == NON_EXISTENT and p.leader is None and len(ctrl.decisions) == decisions
    (f,) = [f for f in ctrl.findings if f["kind"] == A.INVALID_TRANSITION]
    assert (f["from"], f["to"], f["origin"], f["ts"]) == (NON_EXISTENT, ONLINE, A.DECIDED, 7)
    assert "Instead it is in NonExistentPartition state" in f["text"]
    assert "before moving to OnlinePartition state" in f["text"]


# ------------------------------------------------------------------------------------------ on the evidence


@pytest.fixture
def checked(monkeypatch):
    """Every state move the store is asked to make: (origin, previous, target, valid by Kafka's table)."""
    seen = []
    move, apply_decision = A.PartitionStore.move, A.PartitionStore.apply_decision

    def judged(origin, prev, target):
        ok = prev in ("Unknown", target) or prev in KAFKA_VALID_PREVIOUS[target]
        seen.append((origin, prev, target, ok))

    def spy_move(self, p, target, origin, ts, ref, stated=None):
        judged(origin, stated if stated is not None else p.state, target)
        return move(self, p, target, origin, ts, ref, stated)

    def spy_apply(self, p, c, ts, ref):
        if c.attempted is not None:
            judged(A.DECIDED, p.state, c.attempted)
        return apply_decision(self, p, c, ts, ref)

    monkeypatch.setattr(A.PartitionStore, "move", spy_move)
    monkeypatch.setattr(A.PartitionStore, "apply_decision", spy_apply)
    return seen


# PartitionState.validPreviousStates, Kafka 2.7.0 PartitionStateMachine.scala (copied here, not imported)
KAFKA_VALID_PREVIOUS = {
    NEW: {NON_EXISTENT},
    ONLINE: {NEW, ONLINE, OFFLINE},
    OFFLINE: {NEW, ONLINE, OFFLINE},
    NON_EXISTENT: {OFFLINE},
}


def _real(name):
    # replayed here, not taken from conftest.replayed_cluster: the ``checked`` fixture watches the moves of this
    # replay, and a result another test left cached made none (the test then failed after test_partial_evidence)
    return replay_cluster(real_cluster_events(name), name)


def _zk(scen):
    events = []
    for f in sorted((ZK_REAL / scen / "version-2").iterdir()):
        evs, _ = parse_source(f.read_bytes(), SourceContext(str(f), cluster="zk"))
        events += evs
    return replay_cluster([e for e in events if e.event_type != "zk_txn"], "zk")


@pytest.mark.parametrize("load,name,origin", [
    # deletions, recreations and controller failovers, logs only: the records carry the moves
    (_real, "Eniyanilavan__Kafka", A.RECORDED),
    # ZooKeeper's own log: the replay decides at every trigger
    (_zk, "s5_churn", A.DECIDED),
])
def test_every_transition_on_the_evidence_passes_the_table(checked, load, name, origin):
    res = load(name)
    judged = [c for c in checked if c[0] == origin and c[1] not in ("Unknown", c[2])]
    assert judged, f"{origin} state moves were checked"
    bad = [c for c in checked if not c[3]]
    assert bad == []
    assert [f for f in res.image.findings if f["kind"] == A.INVALID_TRANSITION] == []


def test_only_the_apply_module_writes_partition_state():
    """No assignment to a partition's fields (``p.state = ...``, ``p.isr = ...``) outside apply.py."""
    import ast
    import dataclasses

    fields = {f.name for f in dataclasses.fields(PState)} - {"tp"}

    def targets(node):
        for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
            yield from (t.elts if isinstance(t, ast.Tuple) else [t])

    offenders = []
    for path in sorted((REPO / "replay_engine").rglob("*.py")):
        if path.relative_to(REPO).as_posix() == "replay_engine/common/apply.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for t in targets(node):
                    if isinstance(t, ast.Attribute) and t.attr in fields and not (
                            isinstance(t.value, ast.Name) and t.value.id == "self"):
                        offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr":
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} setattr")
    assert offenders == []


def test_ground_truth_states_agree_with_the_store():
    """The store's partitions at the end are the scenario's final state znodes (ZooKeeper's own restore)."""
    res = _zk("s2_controller_failover")
    truth = json.loads((ZK_REAL / "s2_controller_failover" / "ground_truth.json").read_text())
    for path, st in truth["final_state"]["partition_states"].items():
        parts = path.split("/")
        p = res.image.partitions[(parts[3], int(parts[5]))]
        s = st["state"]
        assert (p.leader, list(p.isr), p.leader_epoch) == (s["leader"], s["isr"], s["leader_epoch"]), path
