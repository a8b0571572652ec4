"""The replay decides through the rule table for the version that wrote the evidence.

Each scenario is a few facts as the log parsers produce them; the expectation is Kafka's own, from a
recorded decision (quoted) or from the source line that decides it (tag/file/function quoted).
"""
from replay_engine.common import facts as F
from replay_engine.common.config import ConfigState
from replay_engine.zk.controller import ZkControllerReplay

S = 1_000_000
T0 = 1_700_000_000 * S


def _ref(t, what):
    return F.Ref(T0 + int(t * S), what, "controller.log", int(t * 1000), what)


def _at(t):
    return T0 + int(t * S)


def _replay(version, facts, **config):
    ctrl = ZkControllerReplay(ConfigState(version=version, **config))
    ctrl.run(facts)
    return ctrl


def _last_isr_member_removed(version, recorded_isr, **config):
    """Controller 0 (brokers 0 and 1 live); t-0 is RF 1 on broker 0, led by it; then the controller logs
    "Removing replica 0 from ISR 0" and its write. Only the write is in the evidence, so the replay
    re-derives it at the record (point-wise) with the version's OfflineReplica rule."""
    tp = ("t", 0)
    return _replay(version, [
        F.ControllerElected(_at(0), _ref(0, "controller_elected"), controller=1, epoch=1),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=0),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=1),
        F.RecordedState(_at(1), _ref(1, "state"), tp=tp, leader=0, isr=(0,), leader_epoch=0, replicas=(0,),
                        kind="new_partition", created=True),
        F.RecordedState(_at(9), _ref(9, "isr_removal"), tp=tp, leader=-1, isr=recorded_isr, leader_epoch=1,
                        kind="isr_removal", removed_replica=0),
    ], **config)


def _judged(ctrl, t):
    return [c for c in ctrl.comparisons if c.ts == _at(t)]


def test_0_10_controller_removing_the_last_isr_member_writes_an_empty_isr():
    # 0.10.2.0 KafkaController.removeReplicaFromIsr: var newIsr = leaderAndIsr.isr.filter(b => b != replicaId);
    # it is put back only `if (newIsr.isEmpty && !LogConfig.fromProps(...).uncleanLeaderElectionEnable)`, and 0.10's
    # default is `UncleanLeaderElectionEnable = true`: the znode reads {"leader":-1,"isr":[]}.
    ctrl = _last_isr_member_removed((0, 10, 2), ())
    [c] = _judged(ctrl, 9)
    assert c.agreed and c.replayed["isr"] == [], c


def test_1_0_controller_keeps_the_last_isr_member_when_unclean_is_disabled():
    # Recorded by a Kafka 1.0.0 controller (shared/real_logs/zhanglong318__kafka, controller.log):
    #   Retaining last ISR 0 of partition mytest2-0 since unclean leader election is disabled
    #   New leader and ISR for partition mytest2-0 is {"leader":-1,"leader_epoch":2,"isr":[0]}
    ctrl = _last_isr_member_removed((1, 0, 0), (0,))
    [c] = _judged(ctrl, 9)
    assert c.agreed and c.replayed["isr"] == [0], c


def test_1_1_controller_never_writes_an_empty_isr_even_with_unclean_enabled():
    # 1.1.0 ReplicaStateMachine.doRemoveReplicasFromIsr:
    #   val adjustedIsr = if (leaderAndIsr.isr.size == 1) leaderAndIsr.isr else leaderAndIsr.isr.filter(_ != replicaId)
    ctrl = _last_isr_member_removed((1, 1, 0), (0,), override_cluster={"unclean.leader.election.enable": "true"})
    [c] = _judged(ctrl, 9)
    assert c.agreed and c.replayed["isr"] == [0]


def _failover_onto_offline_partition(version):
    """t-0 (RF 1 on broker 0) goes leaderless when broker 0 dies; then a new controller epoch starts while
    broker 0 is still down."""
    tp = ("t", 0)
    return _replay(version, [
        F.ControllerElected(_at(0), _ref(0, "controller_elected"), controller=1, epoch=1),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=0),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=1),
        F.RecordedState(_at(1), _ref(1, "state"), tp=tp, leader=0, isr=(0,), leader_epoch=0, replicas=(0,),
                        kind="new_partition", created=True),
        F.BrokerDown(_at(10), _ref(10, "broker_deregistered"), broker=0, cause="session_expired"),
        F.ControllerElected(_at(20), _ref(20, "controller_elected"), controller=1, epoch=2),
    ])


def _failover_writes(ctrl):
    return [d for d in ctrl.decisions if d.ts == _at(20) and d.kind == "isr_removal"]


def test_failover_before_2_3_writes_nothing_for_an_already_offline_partition():
    # 2.2.0 ReplicaStateMachine.startup: handleStateChanges(controllerContext.allLiveReplicas().toSeq, OnlineReplica)
    # -- replicas on dead brokers are not touched; the partition's election finds no live replica and
    # PartitionStateMachine.electLeaderForPartitions writes nothing: its leader epoch stays 1.
    ctrl = _failover_onto_offline_partition((2, 2, 1))
    assert _failover_writes(ctrl) == []
    assert ctrl.parts[("t", 0)].leader_epoch == 1


def test_failover_from_2_3_rewrites_the_dead_replica_out_of_the_isr_and_bumps_the_epoch():
    # 2.3.0 ReplicaStateMachine.startup: handleStateChanges(offlineReplicas.toSeq, OfflineReplica) (KAFKA-3143);
    # doRemoveReplicasFromIsr keeps the last member (isr.size == 1) but newLeaderAndIsr bumps the epoch.
    ctrl = _failover_onto_offline_partition((2, 3, 0))
    [d] = _failover_writes(ctrl)
    assert d.after == {"leader": -1, "isr": [0], "leader_epoch": 2}


def _controlled_shutdown_of_the_leader(version):
    """AR [1,2,3], ISR [1,3,2] (ISR order differs from AR order), leader 1 asks to shut down."""
    tp = ("t", 0)
    ctrl = _replay(version, [
        F.ControllerElected(_at(0), _ref(0, "controller_elected"), controller=2, epoch=1),
        *[F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=b) for b in (1, 2, 3)],
        F.RecordedState(_at(1), _ref(1, "state"), tp=tp, leader=1, isr=(1, 3, 2), leader_epoch=0, replicas=(1, 2, 3),
                        kind="new_partition", created=True),
        F.ControlledShutdownRequest(_at(10), _ref(10, "controlled_shutdown"), broker=1),
    ])
    [d] = [d for d in ctrl.decisions if d.ts == _at(10) and d.kind == "election"]
    return d.after


def test_controlled_shutdown_before_0_10_0_hands_leadership_to_the_isr_head():
    # 0.9.0.1 ControlledShutdownLeaderSelector.selectLeader:
    #   val newIsr = currentLeaderAndIsr.isr.filter(brokerId => !controllerContext.shuttingDownBrokerIds.contains(brokerId))
    #   val newLeaderOpt = newIsr.headOption
    assert _controlled_shutdown_of_the_leader((0, 9, 0)) == {"leader": 3, "isr": [3, 2], "leader_epoch": 1}


def test_controlled_shutdown_from_0_10_0_hands_leadership_to_the_first_assigned_replica():
    # 0.10.0.0 ControlledShutdownLeaderSelector.selectLeader (KAFKA-3670):
    #   liveAssignedReplicas.filter(newIsr.contains).headOption; 0.10.1.1 and 0.10.2.0:
    #   liveAssignedReplicas.find(newIsr.contains)
    for v in ((0, 10, 0), (0, 10, 1), (0, 10, 2)):
        assert _controlled_shutdown_of_the_leader(v) == {"leader": 2, "isr": [3, 2], "leader_epoch": 1}, v


def _unclean_enabled_for_an_offline_partition(version, fact):
    """t-0 AR [0,1], ISR [0]: broker 0 dies and no clean leader is left; then unclean election is enabled."""
    tp = ("t", 0)
    ctrl = _replay(version, [
        F.ControllerElected(_at(0), _ref(0, "controller_elected"), controller=1, epoch=1),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=0),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=1),
        F.RecordedState(_at(1), _ref(1, "state"), tp=tp, leader=0, isr=(0,), leader_epoch=0, replicas=(0, 1),
                        kind="new_partition", created=True),
        F.BrokerDown(_at(10), _ref(10, "broker_deregistered"), broker=0, cause="session_expired"),
        fact,
    ])
    return [d for d in ctrl.decisions if d.ts == _at(30) and d.kind == "election"]


def _topic_on():
    return F.TopicConfig(_at(30), _ref(30, "topic_config"), topic="t", config={"unclean.leader.election.enable": "true"})


def _cluster_on():
    return F.BrokerConfig(_at(30), _ref(30, "broker_config"), broker=None,
                          config={"unclean.leader.election.enable": "true"}, static=False)


def test_enabling_unclean_for_a_topic_elects_at_once_from_2_1():
    # 2.1.0 ConfigHandler (TopicConfigHandler): if (...UncleanLeaderElectionEnableProp...toBoolean)
    #   kafkaController.enableTopicUncleanLeaderElection(topic)  -> triggerOnlinePartitionStateChange(topic)
    [d] = _unclean_enabled_for_an_offline_partition((2, 1, 0), _topic_on())
    assert d.unclean and d.after["leader"] == 1
    # 2.0.0 has no such hook for a topic: the partition waits for the next broker change or failover.
    assert _unclean_enabled_for_an_offline_partition((2, 0, 0), _topic_on()) == []


def test_enabling_unclean_cluster_wide_elects_at_once_from_2_0():
    # 2.0.0 DynamicBrokerConfig (DynamicLogConfig.reconfigure): if (...uncleanLeaderElectionEnable &&
    #   !origUncleanLeaderElectionEnable) server.kafkaController.enableDefaultUncleanLeaderElection()
    [d] = _unclean_enabled_for_an_offline_partition((2, 0, 0), _cluster_on())
    assert d.unclean and d.after["leader"] == 1
    assert _unclean_enabled_for_an_offline_partition((1, 1, 0), _cluster_on()) == []


def _broker_bounce(version):
    """Broker 0 (leader of t-0, ISR [0,1]) re-registers with a new broker epoch and no deregistration seen."""
    tp = ("t", 0)
    ctrl = _replay(version, [
        F.ControllerElected(_at(0), _ref(0, "controller_elected"), controller=1, epoch=1),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=0, epoch=100),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=1, epoch=101),
        F.RecordedState(_at(1), _ref(1, "state"), tp=tp, leader=0, isr=(0, 1), leader_epoch=0, replicas=(0, 1),
                        kind="new_partition", created=True),
        F.BrokerUp(_at(10), _ref(10, "broker_registered"), broker=0, epoch=200),
    ])
    return [d for d in ctrl.decisions if d.ts == _at(10) and d.kind == "election"]


def test_a_bounced_broker_is_failed_over_from_2_2():
    # 2.2.0 KafkaController BrokerChange.process: val bouncedBrokerIds = (curBrokerIds & liveOrShuttingDownBrokerIds)
    #   .filter(brokerId => curBrokerIdAndEpochs(brokerId) > controllerContext.liveBrokerIdAndEpochs(brokerId))
    #   ... onBrokerFailure(bouncedBrokerIdsSorted)
    [d] = _broker_bounce((2, 2, 0))
    assert d.after["leader"] == 1


def test_a_bounce_goes_unnoticed_by_a_controller_before_2_2():
    # 2.1.0 BrokerChange.process: newBrokerIds = curBrokerIds -- liveOrShuttingDownBrokerIds,
    # deadBrokerIds = liveOrShuttingDownBrokerIds -- curBrokerIds: a re-registered id is in neither.
    assert _broker_bounce((2, 1, 1)) == []


def test_config_defaults_come_from_the_table():
    from replay_engine.common.config import AUTO_REBALANCE, UNCLEAN, ConfigState as CS

    # 0.10.2.0 KafkaConfig Defaults: UncleanLeaderElectionEnable = true; 0.11.0.0: false (KIP-106)
    assert CS(version=(0, 10, 2)).resolve(UNCLEAN, "t").value == "true"
    assert CS(version=(0, 11, 0)).resolve(UNCLEAN, "t").value == "false"
    # 0.8.1.1 KafkaConfig: props.getBoolean("auto.leader.rebalance.enable", false); 0.8.2.1: (..., true)
    assert CS(version=(0, 8, 1)).resolve(AUTO_REBALANCE).value == "false"
    assert CS(version=(0, 8, 2)).resolve(AUTO_REBALANCE).value == "true"
    assert CS().resolve(AUTO_REBALANCE).value == "true"


def test_kraft_replay_looks_rules_up_for_its_version():
    from replay_engine.kraft.replay import KraftReplay

    # 3.6.0 has no ELR: PartitionChangeBuilder never writes an empty ISR; 3.7.0: (!targetIsr.isEmpty() ||
    # eligibleLeaderReplicasEnabled) lets it shrink to empty when the feature is on.
    assert KraftReplay(ConfigState(version=(3, 6, 0))).rule("kraft.isr_shrink", (1,), {1}, True) == (1,)
    assert KraftReplay(ConfigState(version=(3, 7, 0))).rule("kraft.isr_shrink", (1,), {1}, True) == ()


def test_replay_json_names_the_version_the_rule_set_and_each_brokers_version():
    from parsers.schema import Event
    from replay_engine.api import replay_cluster

    evs = [Event("kafka_version", cluster="c", ts=_at(0), source_kind="broker_log", source_file=f"b{b}/server.log",
                 source_pos=1, broker_id=b, raw=f"Kafka version: {v}", detail={"version": v})
           for b, v in ((0, "2.4.1"), (1, "2.7.0"))]
    doc = replay_cluster(evs, "c").to_json()
    assert doc["kafka_version"] == "2.4.1"
    assert doc["rule_set"] == "zk 2.4-2.6"
    assert doc["broker_versions"] == {"0": "2.4.1", "1": "2.7.0"}
    assert any("rolling upgrade" in n for n in doc["notes"])
    failover = [r for r in doc["rules"] if r["decision"] == "zk.failover.offline_replicas"]
    assert failover[0]["range"] == "2.3+" and failover[0]["cite"]["tag"] == "2.3.0"


def test_1_0_failover_leaves_dead_replicas_alone_on_real_logs():
    # shared/real_logs/minhdc2__kafka-Golang (Kafka 1.0.0): controller 3 takes over at 22:07:17 and logs
    #   [2021-03-17 22:07:18,366] INFO [PartitionStateMachine controllerId=3] Started partition state machine with
    #   initial state -> Map(... OnlinePartition ...)
    # and at 00:02:23 "Leader imbalance ratio for broker 2 is 0.0": every partition whose preferred replica is 2
    # (__consumer_offsets-1 among them) is led by 2. A 1.0 failover writes nothing for dead brokers' replicas
    # (ReplicaStateMachine.startup: allLiveReplicas only), so nothing keeps those partitions leaderless overnight.
    from test_replay_real_logs import load

    res = load("minhdc2__kafka-Golang")
    assert res.image.config.version == (1, 0, 0)
    night = "2021-03-18T00:02:23"
    for lp in res.leaderless:
        j = lp.to_json()
        if (j["topic"], j["partition"]) == ("__consumer_offsets", 1):
            assert not (j["start"] < night and (j["end"] is None or j["end"] > night)), j


def _rolling_upgrade_failover(new_controller):
    """Broker 0 logs 'Kafka version: 2.2.1', broker 1 '2.3.0' (an upgrade half done); t-0 (RF 1 on broker 0) is
    offline when ``new_controller`` takes over."""
    tp = ("t", 0)

    def version(b, v):
        return F.KafkaVersion(_at(0), F.Ref(_at(0), "kafka_version", f"b{b}/server.log", 1, f"Kafka version: {v}",
                                            broker=b), version=v)

    ctrl = _replay((2, 2, 1), [
        version(0, "2.2.1"), version(1, "2.3.0"),
        F.ControllerElected(_at(0), _ref(0, "controller_elected"), controller=1, epoch=1),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=0),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=1),
        F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=2),
        F.RecordedState(_at(1), _ref(1, "state"), tp=tp, leader=0, isr=(0,), leader_epoch=0, replicas=(0,),
                        kind="new_partition", created=True),
        F.BrokerDown(_at(10), _ref(10, "broker_deregistered"), broker=0, cause="session_expired"),
        F.ControllerElected(_at(20), _ref(20, "controller_elected"), controller=new_controller, epoch=2),
    ])
    return _failover_writes(ctrl)


def test_rolling_upgrade_each_controller_decides_by_its_own_version():
    # The same failover, taken by a 2.3.0 controller (ReplicaStateMachine.startup: offlineReplicas -> OfflineReplica)
    # and by broker 2, which logged no version: the cluster's first logged version (2.2.1, live replicas only) holds.
    assert len(_rolling_upgrade_failover(1)) == 1
    assert _rolling_upgrade_failover(2) == []


def _elected_after_a_broker_line(version):
    """Only a broker's LeaderAndIsr line states t-0's replicas, "replicas=[0, 1, 2]"; the assignment is [1, 2, 0] (as
    so3500__volttron-kafka's my-replicated-topic-0). Its leader 1 is not live to the new controller, whose record
    elects 2 with ISR [2, 0] (so3500's controller.log.2017-09-07-16.gz line 26, "Select 2 from ISR 2,0")."""
    tp = ("t", 0)
    return _replay(version, [
        F.ControllerElected(_at(0), _ref(0, "controller_elected"), controller=2, epoch=2),
        *[F.BrokerUp(_at(0), _ref(0, "broker_registered"), broker=b) for b in (0, 2)],
        F.ObservedState(_at(1), _ref(1, "leader_and_isr_received"), tp=tp, leader=1, isr=(1, 2, 0), leader_epoch=0,
                        controller_epoch=1, replicas=(0, 1, 2)),
        F.RecordedState(_at(6), _ref(6, "state"), tp=tp, kind="election", leader=2, isr=(2, 0), leader_epoch=1,
                        from_state="OfflinePartition", to_state="OnlinePartition"),
    ])


def test_a_broker_line_before_0_11_gives_the_replicas_not_their_order():
    # 0.10.2.0 LeaderAndIsrRequest.java reads the replicas into `new HashSet<>(replicasArray.length)`: [0, 1, 2] is
    # not AR's order, and the offline election (first live assigned replica in the ISR) depends on it: unjudged.
    [c] = _judged(_elected_after_a_broker_line((0, 10, 2)), 6)
    assert c.verdict == "unknown" and "order" in c.reason, c
    # 0.11.0.0 (KAFKA-5329) keeps a List: the line is AR, which elects 0, not the record's 2.
    [c] = _judged(_elected_after_a_broker_line((0, 11, 0)), 6)
    assert c.verdict == "diverged" and c.replayed["leader"] == 0, c
