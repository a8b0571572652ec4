"""Broker state: one writer (replay_engine/common/brokers.py), every change with its provenance, Kafka's questions.

Independent truth: Kafka's source. 0.10.2.0 core/src/main/scala/kafka/controller/KafkaController.scala,
``ControllerContext.liveBrokerIds`` = the registered brokers minus ``shuttingDownBrokerIds`` (the controller's own
broker is one of them like any other), ``liveOrShuttingDownBrokerIds`` = the registered ones;
``onBrokerFailure`` removes a dead broker from ``shuttingDownBrokerIds``; 2.7.0
core/src/main/scala/kafka/controller/ControllerContext.scala ``isReplicaOnline``: live, not shutting down, and
the replica not on an offline log directory; 2.8.0 ``resetContext`` clears ``shuttingDownBrokerIds`` at failover.
"""
import ast
from pathlib import Path

from replay_engine.common import facts as F
from replay_engine.common.brokers import LIVE, REGISTERED, SHUTTING, BrokerStates
from replay_engine.common.config import ConfigState
from replay_engine.zk.controller import ZkControllerReplay
from replay_engine.zk.from_events import Coverage

REPO = Path(__file__).resolve().parents[1]

# What BrokerStates holds; no other module may write an attribute of these names (nor an alias of one).
BROKER_FIELDS = frozenset({"registered", "live", "shutting", "stopping", "stopped", "self_reporting", "known",
                           "seen", "membership_stated", "epochs", "versions", "offline_replicas", "periods",
                           # the names ZkControllerReplay kept them under before brokers.py
                           "server_stopping", "leaving", "stopped_at", "known_brokers", "broker_epochs",
                           "broker_versions",
                           # KRaft's (brokers.KraftBrokerStates), and the names KraftBrokers kept them under before
                           "fenced", "cs", "recent_gone", "liveness_at", "unclean_shutdown", "incarnation_ids"})
NOT_YET: frozenset[str] = frozenset()
MUTATORS = frozenset({"add", "discard", "remove", "clear", "update", "difference_update", "intersection_update",
                      "symmetric_difference_update", "pop", "popitem", "setdefault", "append", "extend", "insert",
                      "__setitem__", "__delitem__"})


def ref(ts=1, text="line"):
    return F.Ref(ts, "test", "f.log", ts, text)


def _field_of(node) -> str | None:
    """``x.live`` -> "live"; ``x.live[b]`` -> "live"; else None."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr in BROKER_FIELDS:
        return node.attr
    return None


def writes_outside(tree: ast.AST) -> list[int]:
    """Lines that write a broker-state attribute: assigned, deleted, subscript-assigned, or mutated by a method
    call, directly or through a local name bound to one (``live = ctx.live; live.add(b)``)."""
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        aliases = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and _field_of(node.value) and not isinstance(node.value, ast.Subscript):
                aliases.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(fn):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = node.targets
            for t in targets:
                for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if _field_of(e) or isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) \
                            and e.value.id in aliases:
                        out.append(node.lineno)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                owner = node.func.value
                if _field_of(owner) or isinstance(owner, ast.Name) and owner.id in aliases:
                    out.append(node.lineno)
    return sorted(set(out))


def test_only_the_brokers_module_writes_broker_state():
    offenders = []
    for path in sorted((REPO / "replay_engine").rglob("*.py")):
        if path.relative_to(REPO).as_posix() in {"replay_engine/common/brokers.py"} | NOT_YET:
            continue
        offenders += [f"{path.relative_to(REPO)}:{n}" for n in writes_outside(ast.parse(path.read_text()))]
    assert offenders == []


def test_the_write_check_sees_each_way_of_writing():
    src = ("def f(ctx, b):\n"
           "    ctx.live.add(b)\n"
           "    ctx.brokers.shutting = set()\n"
           "    ctx.stopped[b] = None\n"
           "    seen = ctx.seen\n"
           "    seen.discard(b)\n"
           "    x = {b}\n"
           "    x.add(1)\n"
           "    del ctx.epochs[b]\n")
    assert writes_outside(ast.parse(src)) == [2, 3, 4, 6, 9]


# ------------------------------------------------------------------------------------------ Kafka's questions


def test_live_broker_ids_leave_out_shutting_down_brokers_the_controllers_own_included():
    s = BrokerStates()
    s.controller_view(frozenset({1, 2, 3}), ref(1))
    s.failover(1, ref(2))  # broker 1 controls
    s.shutdown_taken(1, ref(3), server_stopping=True)  # and is itself in controlled shutdown
    assert s.online_set() == {2, 3}  # liveBrokerIds
    assert not s.online(1) and 1 in s.live  # still in liveOrShuttingDownBrokerIds
    s.replicas_offline(3, [("t", 0)], ref(4))
    assert s.online_set(("t", 0)) == {2} and s.online_set(("t", 1)) == {2, 3}  # isReplicaOnline
    s.controller_sees_down(1, ref(5))  # onBrokerFailure: out of shuttingDownBrokerIds too
    assert 1 not in s.shutting and 1 not in s.live


def test_a_failover_forgets_every_shutdown_in_progress():
    s = BrokerStates()
    s.controller_view(frozenset({1, 2}), ref(1))
    s.shutdown_taken(2, ref(2), server_stopping=True)
    s.failover(1, ref(3))
    assert s.shutting == set() and s.online_set() == {1, 2}
    assert 2 in s.stopping  # the broker's own shutdown goes on: only the new controller does not know it


# ------------------------------------------------------------------------------------------ provenance


def test_every_change_carries_the_line_or_the_rule_that_gives_it():
    ctrl = ZkControllerReplay(ConfigState(), Coverage(zk=[(0, 10**12)]))
    up = F.BrokerUp(1, ref(1, "registered broker 1"), broker=1, epoch=7)
    ctrl.run([up, F.BrokerUp(2, ref(2, "registered broker 2"), broker=2),
              F.ControllerElected(3, ref(3, "controller 1 elected"), controller=1, epoch=1),
              F.ControlledShutdownRequest(4, ref(4, "Shutting down broker 2"), broker=2),
              F.BrokerDown(5, ref(5, "broker 2 gone"), broker=2, cause="shutdown")])
    changes = ctrl.brokers.changes
    assert changes and all(c.ref is not None for c in changes)
    assert [(c.field, c.value, c.ref.text) for c in ctrl.brokers.history(2) if c.field in (REGISTERED, LIVE, SHUTTING)] \
        == [(REGISTERED, True, "registered broker 2"), (LIVE, True, "registered broker 2"),
            (SHUTTING, True, "Shutting down broker 2"), (REGISTERED, False, "broker 2 gone"),
            (LIVE, False, "broker 2 gone"), (SHUTTING, False, "broker 2 gone")]
    (left,) = [c for c in ctrl.brokers.history(2) if c.field == SHUTTING and not c.value]
    assert "onBrokerFailure" in left.rule  # implied by Kafka's rule, not shown by a line of its own
    assert ctrl.brokers.epochs[1] == 7


def test_a_record_implies_a_state_with_the_rule_it_follows_from():
    """Logs only: an election names a leader the controller held live (PartitionLeaderElectionAlgorithms)."""
    ctrl = ZkControllerReplay(ConfigState())
    rec = F.RecordedState(5, ref(5, "Changed partition t-0 from OfflinePartition to OnlinePartition with leader 3"),
                          tp=("t", 0), kind="election", leader=3, isr=(3,), leader_epoch=1, from_state="OfflinePartition",
                          controller_id=1, controller_epoch=1)
    ctrl.run([rec])
    (c,) = [c for c in ctrl.brokers.history(3) if c.field == LIVE]
    assert c.value is True and c.ref is rec.ref and "PartitionLeaderElectionAlgorithms" in c.rule


# ------------------------------------------------------------------------------------------ KRaft registrations


def test_the_write_check_covers_every_kraft_module():
    # KRaft's broker state has no exemption any more: every replay_engine module, kraft/brokers.py included, is read
    names = {p.relative_to(REPO / "replay_engine").as_posix() for p in (REPO / "replay_engine").rglob("*.py")}
    assert NOT_YET == frozenset() and {"kraft/brokers.py", "kraft/replay.py", "kraft/lines.py", "kraft/records.py"} <= names
    src = ("def f(self, b, ts):\n"
           "    self.fenced.add(b)\n"
           "    self.cs.discard(b)\n"
           "    self.recent_gone[b] = ts\n"
           "    self.liveness_at[b] = ts\n"
           "    self.unclean_shutdown.pop(b, None)\n"
           "    self.registered.setdefault(b, None)\n")
    assert writes_outside(ast.parse(src)) == [2, 3, 4, 5, 6, 7]


def test_a_kraft_acceptable_leader_is_registered_unfenced_and_not_shutting_down():
    # 3.9.0-rc3 metadata/.../controller/ClusterControlManager.java isActive: registration != null && !fenced() &&
    # !inControlledShutdown(); a broker registers fenced (RegisterBrokerRecord fenced=true) and leads only unfenced
    from replay_engine.common.brokers import FENCED, RULE_CHANGED_IMPLIES_REGISTERED, RULE_REGISTERED, KraftBrokerStates

    s = KraftBrokerStates()
    s.register(1, 10, True, ref(1))
    s.register(2, 11, False, ref(2))
    assert s.acceptable() == {2} and s.held_out(1)
    s.unfence(1, ref(3))
    s.enter_controlled_shutdown(2, 4, ref(4))
    assert s.acceptable() == {1} and s.shutting_down() == {2}
    s.fence(3, 5, ref(5))  # replayRegistrationChange throws without a registration: broker 3 was registered
    assert 3 in s.registered and s.held_out(3)
    assert [c.rule for c in s.history(3) if c.field == REGISTERED] == [RULE_CHANGED_IMPLIES_REGISTERED]
    assert [(c.field, c.value) for c in s.history(1)] == [(REGISTERED, True), ("epoch", 10), (FENCED, True),
                                                           (FENCED, False)]
    assert s.history(1)[0].rule == RULE_REGISTERED


def test_a_kraft_state_a_line_implies_carries_its_rule():
    from replay_engine.common.brokers import RULE_ELECTED_ACTIVE, KraftBrokerStates

    # a leader's line at a new leader epoch: it was acceptable then (PartitionChangeBuilder.isAcceptableLeader)
    s = KraftBrokerStates()
    s.register(1, 10, True, ref(1))
    s.settle(1, 1, ref(1), "registered")  # registered fenced: catching up, not down
    s.unfence(1, ref(2), RULE_ELECTED_ACTIVE)
    s.settle(1, 2, ref(2), "elected leader")
    assert s.live == {1} and [p.state for p in s.periods[1]] == ["starting", "up"]
    implied = [c for c in s.history(1) if c.ref.ts == 2 and c.field != LIVE]
    assert implied and all(c.rule == RULE_ELECTED_ACTIVE for c in implied)


AMMAR = "Ammar777782439__kafka_2.13-4.0.0"


def test_both_replays_read_their_brokers_from_the_one_model():
    from replay_engine.common.brokers import KraftBrokerStates, StateLog
    from replay_engine.kraft.replay import KraftReplay

    zk, kraft = ZkControllerReplay(ConfigState()), KraftReplay(ConfigState())
    assert isinstance(zk.brokers, BrokerStates) and isinstance(kraft.brokers, KraftBrokerStates)
    assert all(isinstance(r.brokers, StateLog) for r in (zk, kraft))


def _kraft_replay(name: str, folder: str = "real_logs"):
    """A KRaft cluster replayed as replay_cluster does, the replay itself kept (its broker state is read here)."""
    from conftest import real_cluster_events
    from replay_engine.common.config import parse_version
    from replay_engine.kraft.replay import KraftReplay
    from replay_engine.kraft.facts import kraft_facts, prepared

    events, ctx = prepared(real_cluster_events(name, folder))
    version = next((e.detail or {}).get("version") for e in events if e.event_type == "kafka_version")
    r = KraftReplay(ConfigState(version=parse_version(version)))
    r.run(kraft_facts(events, r.config.version, None, ctx, None))
    return r


def test_each_kraft_broker_change_cites_its_line_and_the_quorum_controllers_code():
    # Kafka 4.0 controller.log of ../shared/real_logs/Ammar777782439__kafka_2.13-4.0.0 (QuorumController id=10),
    # logs/controller.log.2025-05-14-23.gz:
    #   :52  "Registering a new incarnation of broker 10. ... Broker epoch will become 2157." (ClusterControlManager
    #     .registerBroker; handleBrokerUncleanShutdown's changes come before the RegisterBrokerRecord)
    #   :148 "Fencing broker 10 at epoch 2278 because its session has timed out." (maybeFenceOneStaleBroker)
    #   :320 "Unfenced broker 10 has requested and been granted a controlled shutdown." (BrokerHeartbeatManager)
    #   :323 "The request from broker 10 to shut down has been granted ..." (SHUTDOWN_NOW: handleBrokerFenced)
    #   :50  "Fencing broker 10 at epoch 123 ...", after the fence record of :38: the same fence stated again, no change
    from replay_engine.common import brokers as B

    r = _kraft_replay(AMMAR)
    f = "logs/controller.log.2025-05-14-23.gz"
    at = {(c.ref.source_pos, c.field, c.value): c.rule for c in r.brokers.history(10)
          if c.ref is not None and (c.ref.source_file or "").endswith(f)}
    assert at[(52, B.UNCLEAN_SHUTDOWN, True)] == B.RULE_UNCLEAN_SHUTDOWN
    assert at[(53, B.EPOCH, 2157)] == B.RULE_REGISTERED and at[(53, B.UNCLEAN_SHUTDOWN, False)] == B.RULE_REGISTERED
    # :52 names the new incarnation RnJ_0YBhS5OaxvgWtPxHHQ, which :53's RegisterBrokerRecord registers
    assert at[(53, B.INCARNATION, "RnJ_0YBhS5OaxvgWtPxHHQ")] == B.RULE_REGISTERED
    assert at[(148, B.FENCED, True)] == B.RULE_SESSION_TIMEOUT
    assert not [k for k in at if k[0] == 50] and at[(38, B.FENCED, True)] == B.RULE_FENCED
    assert at[(320, B.SHUTTING, True)] == B.RULE_CONTROLLED_SHUTDOWN
    assert at[(323, B.FENCED, True)] == B.RULE_SHUTDOWN_NOW
    # every change of every broker has its line or record, and a rule citing Kafka's source (tag, file, function)
    assert r.brokers.changes and all(c.ref is not None and c.ref.source_file for c in r.brokers.changes)
    assert all(c.rule and (".java, " in c.rule or c.rule == B.RULE_KILLED) for c in r.brokers.changes)
    # the state every decision reads is this one: the replay's acceptable leaders are its registrations'
    assert r.acceptable() == r.brokers.acceptable() and set(r.live) == r.brokers.live


def test_an_immediate_shutdown_is_a_fence_not_a_controlled_shutdown():
    # Ammar's logs/controller.log.2025-05-14-23.gz:13 "Unfenced broker 10 has requested and been granted an immediate
    # shutdown." and :14 "Replayed BrokerRegistrationChangeRecord ... brokerId=10, brokerEpoch=123, fenced=1,
    # inControlledShutdown=0": with no leadership to move BrokerHeartbeatManager.calculateNextBrokerState goes to
    # SHUTDOWN_NOW, which ReplicationControlManager.processBrokerHeartbeat handles with handleBrokerFenced (3.3.1 ..
    # 3.9.0-rc3); the registration never enters controlled shutdown, and the record at :14 restates the fence.
    # Danielowo2000's kafka_2.13-3.5.0/logs/controller.log.2023-08-14-10.gz:8, the same line for a broker the replay
    # held fenced: the line is logged only for an unfenced broker (calculateNextBrokerState case UNFENCED), so it was
    # unfenced until then, and the fence's changes follow
    from replay_engine.common import brokers as B

    r = _kraft_replay(AMMAR)
    f = "logs/controller.log.2025-05-14-23.gz"
    at = [(c.ref.source_pos, c.field, c.value, c.rule) for c in r.brokers.history(10)
          if c.ref is not None and (c.ref.source_file or "").endswith(f) and c.ref.source_pos in (13, 14)]
    assert (13, B.FENCED, True, B.RULE_SHUTDOWN_NOW) in at and not [a for a in at if a[1] == B.SHUTTING]
    down = [p for p in r.brokers.periods[10] if p.start_ref is not None and p.start_ref.source_pos == 13
            and (p.start_ref.source_file or "").endswith(f)]
    assert [(p.state, r.brokers.periods[10][r.brokers.periods[10].index(p) - 1].end_cause) for p in down] \
        == [("down", "shutdown")]

    r = _kraft_replay("Danielowo2000__BigDataTechnologies-Version-2", "real_logs2")
    f = "logs/controller.log.2023-08-14-10.gz"
    at = [(c.field, c.value, c.rule) for c in r.brokers.history(1)
          if c.ref is not None and (c.ref.source_file or "").endswith(f) and c.ref.source_pos == 8]
    assert at == [(B.FENCED, False, B.RULE_GRANTED_UNFENCED), (B.FENCED, True, B.RULE_SHUTDOWN_NOW)]


def test_a_controlled_shutdowns_grant_shows_the_broker_unfenced():
    # Danielowo2000's kafka_2.13-3.5.0/logs/controller.log.2023-08-05-17.gz: the controller restarts (:123 "Registered
    # new broker ... brokerEpoch=5"; no unfence line follows), then :124 "Unfenced broker 1 has requested and been
    # granted a controlled shutdown." (calculateNextBrokerState case UNFENCED: it was unfenced) and :126 "The request
    # from broker 1 to shut down has been granted ..." (SHUTDOWN_NOW: handleBrokerFenced, a change of state)
    from replay_engine.common import brokers as B

    r = _kraft_replay("Danielowo2000__BigDataTechnologies-Version-2", "real_logs2")
    f = "logs/controller.log.2023-08-05-17.gz"
    at = [(c.ref.source_pos, c.field, c.value, c.rule) for c in r.brokers.history(1)
          if c.ref is not None and (c.ref.source_file or "").endswith(f) and c.ref.source_pos in (124, 126)]
    assert at == [(124, B.FENCED, False, B.RULE_GRANTED_UNFENCED), (124, B.SHUTTING, True, B.RULE_CONTROLLED_SHUTDOWN),
                  (126, B.FENCED, True, B.RULE_SHUTDOWN_NOW)]


def test_a_kraft_leaders_line_the_replay_held_fenced_is_adopted_with_that_line():
    # BMTushyath (4.2.0, one combined node): broker 1 shut down on 2026-05-17 16:46:58 (state-change.log.2026-06-12-16.gz
    # :14, leader epoch 39, "Stopped fetchers as part of controlled shutdown") and the replay holds it fenced from there;
    # on 06-12 the controller loads its log (the changes it replays are history, no fact) and broker 1's own line
    # :20 "Leader rfid-events-0 ... starts at leader epoch 64" says it was elected: an acceptable leader then
    # (3.9.0-rc3 PartitionChangeBuilder.isAcceptableLeader: registered, unfenced, not in controlled shutdown). The
    # state is adopted from that line, as the ZooKeeper-mode replay adopts one (BrokerStates.adopt), and said.
    from replay_engine.common import brokers as B

    r = _kraft_replay("BMTushyath__RFIDSAS", "real_logs2")
    f = "logs/state-change.log.2026-06-12-16.gz"
    got = [(c.broker, c.ref.source_pos, c.rule) for c in r.brokers.adopted if (c.ref.source_file or "").endswith(f)]
    assert got == [(1, 20, B.RULE_ELECTED_ACTIVE)]
    said = [x for x in r.findings if x["kind"] == "broker_state_adopted"
            and x["evidence"][0]["source_file"].endswith(f) and x["evidence"][0]["source_pos"] == 20]
    assert len(said) == 1 and said[0]["brokers"] == [1] and "held it fenced" in said[0]["text"]
