"""KRaft-mode log templates (quorum controller, Raft client, broker lifecycle), 3.3 to 4.x."""
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source

QC = "(org.apache.kafka.controller.QuorumController)"
CCM = "(org.apache.kafka.controller.ClusterControlManager)"
RCM = "(org.apache.kafka.controller.ReplicationControlManager)"


def parse(text: str, path: str = "controller.log"):
    events, summary = parse_source(text.encode(), SourceContext(path=path))
    assert summary.balanced()
    assert summary.unrecognized == 0, summary.samples
    return events


def one(text: str, path: str = "controller.log"):
    events = parse(text, path)
    assert len(events) == 1, events
    return events[0]


def test_quorum_leadership_lines_36_and_33_prefix():
    ev = one(f"[2025-02-06 13:14:18,133] INFO [QuorumController id=2] Becoming the active controller at epoch 352, "
             f"next write offset 17204. {QC}")
    assert (ev.event_type, ev.controller_id, ev.controller_epoch, ev.broker_id) == ("kraft_leader_change", 2, 352, 2)
    ev = one(f"[2025-05-29 17:00:38,000] WARN [QuorumController id=2] Renouncing the leadership due to a metadata log "
             f"event. We were the leader at epoch 481, but in the new epoch 482, the leader is (none). Reverting to last "
             f"stable offset 78141. {QC}")
    assert (ev.controller_id, ev.controller_epoch, ev.detail["previous_epoch"], ev.detail["renounced_by"]) == (-1, 482, 481, 2)
    ev = one(f"[2022-10-01 00:00:00,000] INFO [Controller 3000] In the new epoch 7, the leader is 3001. {QC}")
    assert (ev.controller_id, ev.controller_epoch, ev.broker_id) == (3001, 7, 3000)
    ev = one(f"[2025-05-29 17:00:38,703] INFO [QuorumController id=2] In the new epoch 483, the leader is (none). {QC}")
    assert (ev.controller_id, ev.controller_epoch) == (-1, 483)


def test_raft_transitions_39_and_40():
    events = parse(
        "[2025-02-07 13:00:00,000] INFO [RaftManager id=3] Completed transition to FollowerState(fetchTimeoutMs=2000, "
        "epoch=1440, leader=2, leaderEndpoints=Endpoints(endpoints={}), voters=[1, 2, 3], highWatermark=Optional.empty) "
        "from Unattached(epoch=1440, votedKey=null) (org.apache.kafka.raft.QuorumState)\n"
        "[2024-01-01 00:00:00,000] INFO [RaftManager nodeId=1] Completed transition to FollowerState(fetchTimeoutMs=2000, "
        "epoch=5, leaderId=3, voters=[1, 2, 3], highWatermark=Optional.empty) from null (org.apache.kafka.raft.QuorumState)\n"
        "[2025-03-04 16:00:00,000] INFO [RaftManager id=2] Completed transition to Leader(localReplicaKey=ReplicaKey(id=2, "
        "directoryId=Optional[4SvY]), epoch=10003, epochStartOffset=640087, highWatermark=Optional.empty) from "
        "CandidateState(localId=2, epoch=10003) (org.apache.kafka.raft.QuorumState)\n"
        "[2025-03-04 16:00:00,000] INFO [RaftManager id=2] Completed transition to CandidateState(localId=2, epoch=10004) "
        "from Unattached(epoch=10003) (org.apache.kafka.raft.QuorumState)\n", "server.log")
    assert [(e.controller_id, e.controller_epoch, e.detail["via"]) for e in events
            if e.event_type == "kraft_leader_change"] == [(2, 1440, "raft"), (3, 5, "raft"), (2, 10003, "raft")]
    # A candidate names no leader, but the quorum epoch it starts (QuorumState.transitionTo): every epoch begins so
    assert [(e.event_type, e.subject_broker, e.controller_epoch, e.detail["state"]) for e in events
            if e.event_type != "kraft_leader_change"] == [("kraft_quorum_epoch", 2, 10004, "CandidateState")]
    assert [e.detail.get("from_epoch") for e in events] == [1440, None, 10003, 10003]


def test_heartbeat_timeout_with_and_without_epoch():
    ev = one(f"[2025-02-07 11:53:49,670] INFO [QuorumController id=1] Fencing broker 2 because its session has timed "
             f"out. {RCM}")
    assert (ev.event_type, ev.subject_broker, ev.controller_id) == ("broker_heartbeat_timeout", 2, 1)
    ev = one(f"[2025-05-14 23:09:47,389] INFO [QuorumController id=10] Fencing broker 10 at epoch 123 because its "
             f"session has timed out. {RCM}")
    assert (ev.subject_broker, ev.detail["broker_epoch"]) == (10, 123)


def test_registrations_36_and_33():
    ev = one(f"[2025-02-07 11:00:17,200] INFO [QuorumController id=2] Replayed initial RegisterBrokerRecord for broker "
             f"1: RegisterBrokerRecord(brokerId=1, isMigratingZkBroker=false, incarnationId=Klm0rkoZQOGxkBnbB1UxRw, "
             f"brokerEpoch=36790, endPoints=[BrokerEndpoint(name='PLAINTEXT', host='h', port=9092, securityProtocol=0)], "
             f"rack=null, fenced=true, inControlledShutdown=false, logDirs=[]) {CCM}")
    assert (ev.event_type, ev.subject_broker, ev.controller_id) == ("broker_registered", 1, 2)
    assert (ev.detail["broker_epoch"], ev.detail["incarnation_id"], ev.detail["fenced"]) == (36790, "Klm0rkoZQOGxkBnbB1UxRw", True)
    assert "rack" not in ev.detail
    ev = one(f"[2025-05-14 23:05:00,000] INFO [QuorumController id=10] Replayed RegisterBrokerRecord establishing a new "
             f"incarnation of broker 10: RegisterBrokerRecord(brokerId=10, incarnationId=RnJ_0YBhS5OaxvgWtPxHHQ, "
             f"brokerEpoch=2157, rack='r1', fenced=true) {CCM}")
    assert (ev.subject_broker, ev.detail["broker_epoch"], ev.detail["new_incarnation"], ev.detail["rack"]) == (10, 2157, True, "r1")
    ev = one(f"[2022-10-01 00:00:00,000] INFO [Controller 3000] Registered new broker: RegisterBrokerRecord(brokerId=4, "
             f"incarnationId=abc, brokerEpoch=12, fenced=true) {CCM}")
    assert (ev.subject_broker, ev.detail["broker_epoch"]) == (4, 12)


def test_registration_change_fence_unfence_and_shutdown_flag():
    events = parse(
        f"[2025-02-06 01:02:37,822] INFO [QuorumController id=1] Replayed BrokerRegistrationChangeRecord modifying the "
        f"registration for broker 1: BrokerRegistrationChangeRecord(brokerId=1, brokerEpoch=3249, fenced=1, "
        f"inControlledShutdown=0, logDirs=[]) {CCM}\n"
        f"[2025-02-06 01:02:38,000] INFO [QuorumController id=1] Replayed BrokerRegistrationChangeRecord modifying the "
        f"registration for broker 1: BrokerRegistrationChangeRecord(brokerId=1, brokerEpoch=3249, fenced=-1, "
        f"inControlledShutdown=0, logDirs=[]) {CCM}\n"
        f"[2025-02-06 01:02:39,000] INFO [QuorumController id=1] Replayed BrokerRegistrationChangeRecord modifying the "
        f"registration for broker 3: BrokerRegistrationChangeRecord(brokerId=3, brokerEpoch=77, fenced=0, "
        f"inControlledShutdown=1, logDirs=[]) {CCM}\n"
        f"[2024-01-01 00:00:00,000] INFO [QuorumController id=1] Replayed FenceBrokerRecord modifying the registration "
        f"for broker 2: FenceBrokerRecord(id=2, epoch=5) {CCM}\n"
        f"[2022-10-01 00:00:00,000] INFO [Controller 3000] Unfenced broker: UnfenceBrokerRecord(id=6, epoch=8) {CCM}\n"
        f"[2024-01-01 00:00:00,000] INFO [QuorumController id=1] Replayed UnregisterBrokerRecord modifying the "
        f"registration for broker 2: UnregisterBrokerRecord(brokerId=2, brokerEpoch=5) {CCM}\n")
    got = [(e.event_type, e.subject_broker, e.detail.get("broker_epoch")) for e in events]
    assert got == [("broker_fenced", 1, 3249), ("broker_unfenced", 1, 3249), ("broker_registration_change", 3, 77),
                   ("broker_fenced", 2, 5), ("broker_unfenced", 6, 8), ("broker_unregistered", 2, 5)]
    assert (events[2].detail["fenced"], events[2].detail["in_controlled_shutdown"]) == (0, 1)


def test_controlled_shutdown_controller_side():
    hb = "(org.apache.kafka.controller.BrokerHeartbeatManager)"
    events = parse(
        f"[2021-03-02 21:41:13,354] INFO [Controller 1] Unfenced broker 1 has requested and been granted a controlled "
        f"shutdown. {hb}\n"
        f"[2025-05-14 23:09:18,260] INFO [QuorumController id=10] Unfenced broker 10 has requested and been granted an "
        f"immediate shutdown. {hb}\n"
        f"[2025-05-14 23:20:00,000] INFO [QuorumController id=10] The request from broker 10 to shut down has been granted "
        f"since the lowest active offset 9223372036854775807 is now greater than the broker's controlled shutdown offset "
        f"5211. {hb}\n"
        f"[2025-05-14 22:51:05,000] INFO [QuorumController id=10] The request from broker 10 to unfence has been granted "
        f"because it has caught up with the offset of its register broker record 123. {hb}\n")
    got = [(e.event_type, e.subject_broker, e.detail.get("outcome"), e.detail.get("immediate")) for e in events]
    # the unfence grant is the controller's step that elects leaders with the broker acceptable
    # (ReplicationControlManager.handleBrokerUnfenced, 3.9): an event, not routine
    assert got == [("controlled_shutdown_requested", 1, None, None), ("controlled_shutdown_requested", 10, None, True),
                   ("controlled_shutdown_result", 10, "succeeded", None), ("broker_unfenced", 10, None, None)]


def test_unclean_partition_change_and_clean_debug_change():
    ev = one(f"[2024-01-16 23:28:50,747] INFO [Controller 0] UNCLEAN partition change for testOther-1 with topic ID "
             f"Fs3yVbY9S2qtNEF8A-xMSA: replicas: [1] -> [0], isr: [1] -> [0], leader: 1 -> 0, leaderEpoch: 85 -> 86, "
             f"partitionEpoch: 85 -> 86 {RCM}")
    assert (ev.event_type, ev.topic, ev.partition, ev.leader, ev.isr, ev.replicas) == (
        "unclean_leader_election", "testOther", 1, 0, [0], [0])
    assert (ev.leader_epoch, ev.zk_version, ev.detail["previous_leader"]) == (86, 86, 1)
    assert ev.detail["changed"] == ["isr", "replicas", "leader"]
    ev = one(f"[2024-01-16 23:28:50,747] DEBUG [QuorumController id=0] partition change for t-2 with topic ID abc: isr: "
             f"[1, 2] -> [1], leaderRecoveryState: RECOVERED -> RECOVERED, leaderEpoch: 5 -> 5 {RCM}")
    assert (ev.event_type, ev.isr, ev.leader, ev.detail["changed"]) == ("partition_change", [1], None, ["isr"])


def test_new_leader_elr_and_unclean_name_the_topic_id_only():
    ev = one("[2026-02-24 10:33:33,968] INFO Setting new leader for topicId Si2sFI7LTKSxigLG22b0Ig, partition 0 to 1 "
             "using ELR. Previous partition: PartitionRegistration(replicas=[1], isr=[], elr=[1], leader=-1), change "
             "record: PartitionChangeRecord(partitionId=0, leader=-2) (org.apache.kafka.controller.PartitionChangeBuilder)")
    assert (ev.event_type, ev.topic, ev.partition, ev.leader) == ("partition_change", None, 0, 1)
    assert (ev.detail["election"], ev.detail["topic_id"]) == ("elr", "Si2sFI7LTKSxigLG22b0Ig")
    ev = one("[2025-01-01 00:00:00,000] INFO Setting new leader for topicId abc, partition 3 to 2 using an unclean "
             "election (org.apache.kafka.controller.PartitionChangeBuilder)")
    assert (ev.event_type, ev.partition, ev.leader) == ("unclean_leader_election", 3, 2)


def test_topics_and_partitions_replayed():
    events = parse(
        f"[2025-05-14 23:05:00,000] INFO [QuorumController id=10] Replayed TopicRecord for topic test-sasl-topic with "
        f"topic ID Von9HwxMSR2nzwohkI9ofw. {RCM}\n"
        f"[2025-05-14 23:05:00,001] INFO [QuorumController id=10] Replayed PartitionRecord for new partition "
        f"test-sasl-topic-0 with topic ID Von9HwxMSR2nzwohkI9ofw and PartitionRegistration(replicas=[10, 2], "
        f"directories=[Cco6], isr=[10], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=10, "
        f"leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0). {RCM}\n"
        f"[2025-02-28 12:06:10,736] INFO [QuorumController id=3] Replayed RemoveTopicRecord for topic test-topic1 with ID "
        f"CTxQ0xlLTXeKzIB1vV2Grg. {RCM}\n")
    assert [(e.event_type, e.topic) for e in events] == [
        ("topic_created", "test-sasl-topic"), ("partition_record", "test-sasl-topic"), ("topic_deleted", "test-topic1")]
    rec = events[1]
    assert (rec.partition, rec.replicas, rec.isr, rec.leader, rec.leader_epoch, rec.zk_version) == (0, [10, 2], [10], 10, 0, 0)


def test_broker_lifecycle_manager_lines():
    blm = "(kafka.server.BrokerLifecycleManager)"
    events = parse(
        f"[2025-05-14 22:51:05,000] INFO [BrokerLifecycleManager id=10] Successfully registered broker 10 with broker "
        f"epoch 123 {blm}\n"
        f"[2025-05-14 22:51:06,000] INFO [BrokerLifecycleManager id=10] The broker has been unfenced. Transitioning from "
        f"RECOVERY to RUNNING. {blm}\n"
        f"[2025-05-14 23:09:00,000] INFO [BrokerLifecycleManager id=10] Beginning controlled shutdown. {blm}\n"
        f"[2025-05-14 23:09:10,000] INFO [BrokerLifecycleManager id=10] The controller has asked us to exit controlled "
        f"shutdown. {blm}\n"
        f"[2025-05-14 23:09:00,000] INFO [BrokerLifecycleManager id=10] Unable to send a heartbeat because the RPC got "
        f"timed out before it could be sent. {blm}\n", "server.log")
    got = [(e.event_type, e.subject_broker, e.detail.get("broker_epoch"), e.detail.get("side")) for e in events]
    assert got == [("broker_registered", 10, 123, None), ("broker_unfenced", 10, None, "broker"),
                   ("controlled_shutdown_requested", 10, None, "broker"), ("controlled_shutdown_result", 10, None, "broker")]


def test_new_leader_states_the_registration_it_started_from():
    # GraphLogistics__kafka/logs/controller.log.gz line 51 (4.1.1, PartitionChangeBuilder at INFO)
    ev = one("[2026-02-24 10:33:33,968] INFO Setting new leader for topicId Si2sFI7LTKSxigLG22b0Ig, partition 0 to 1 "
             "using ELR. Previous partition: PartitionRegistration(replicas=[1], directories=[AEIYNdxdco-wXF23huo6dw], "
             "isr=[], removingReplicas=[], addingReplicas=[], elr=[1], lastKnownElr=[1], leader=-1, leaderRecoveryState="
             "RECOVERED, leaderEpoch=49, partitionEpoch=49), change record: PartitionChangeRecord(partitionId=0, "
             "topicId=Si2sFI7LTKSxigLG22b0Ig, isr=null, leader=-2, replicas=null, removingReplicas=null, addingReplicas="
             "null, leaderRecoveryState=-1, directories=null, eligibleLeaderReplicas=null, lastKnownElr=null) "
             "(org.apache.kafka.controller.PartitionChangeBuilder)")
    d = ev.detail
    assert (d["previous_replicas"], d["previous_isr"], d["previous_elr"], d["previous_last_known_elr"]) == ([1], [], [1], [1])
    assert (d["previous_leader"], d["previous_leader_epoch"], d["previous_partition_epoch"]) == (-1, 49, 49)


def test_unfence_granted_by_the_heartbeat_manager():
    # GraphLogistics__kafka/logs/controller.log.gz line 50 (BrokerHeartbeatManager, 3.9 branch line 549)
    ev = one("[2026-02-24 10:33:33,968] INFO [QuorumController id=1] The request from broker 1 to unfence has been "
             "granted because it has caught up with the offset of its register broker record 10. "
             "(org.apache.kafka.controller.BrokerHeartbeatManager)")
    assert (ev.event_type, ev.controller_id, ev.subject_broker, ev.detail["broker_epoch"]) == ("broker_unfenced", 1, 1, 10)


def test_renounce_lines_name_the_offset_reverted_to():
    # 3.9 QuorumController.QuorumMetaLogListener.handleLeaderChange: "... Reverting to last stable offset {}."
    ev = one(f"[2025-02-12 13:57:47,167] WARN [QuorumController id=1] Renouncing the leadership due to a metadata log "
             f"event. We were the leader at epoch 3222, but in the new epoch 3223, the leader is (none). Reverting to last "
             f"stable offset 135607. {QC}")
    assert (ev.event_type, ev.detail["renounced_by"], ev.detail["reverted_to_offset"]) == ("kraft_leader_change", 1, 135607)
    # 3.9 QuorumController.handleEventException with EventHandlerExceptionInfo.failureMessage (3.6+)
    ev = one(f"[2025-03-04 17:08:39,753] INFO [QuorumController id=3] maybeFenceReplicas: event failed with "
             f"NotLeaderException (treated as NotControllerException) at epoch 9939 in 2508716 microseconds. Renouncing "
             f"leadership and reverting to the last committed offset 636278. Exception message: Flush failed because the "
             f"replica is not the current leader {QC}")
    assert ev.event_type == "kraft_renounce_on_error"
    assert (ev.controller_id, ev.detail["operation"], ev.detail["previous_epoch"], ev.detail["processing_us"],
            ev.detail["reverted_to_offset"]) == (3, "maybeFenceReplicas", 9939, 2508716, 636278)
    # 3.5 QuorumController.handleEventException: "{}: failed with unknown server exception {} at epoch {} in {} us.
    # Renouncing leadership and reverting to the last committed offset {}."
    ev = one(f"[2023-05-01 10:00:00,000] WARN [QuorumController id=1] registerBroker: failed with unknown server "
             f"exception RuntimeException at epoch 12 in 345 us.  Renouncing leadership and reverting to the last "
             f"committed offset 999. {QC}")
    assert (ev.event_type, ev.detail["processing_us"], ev.detail["reverted_to_offset"]) == ("kraft_renounce_on_error", 345, 999)
    # Not active: "The controller is already in standby mode" reverts nothing
    evs = parse(f"[2025-03-04 17:08:40,000] INFO [QuorumController id=3] writeNoOpRecord: event failed with "
                f"NotLeaderException (treated as NotControllerException) at epoch 9939 in 10 microseconds. The controller "
                f"is already in standby mode. {QC}")
    assert not [e for e in evs if e.event_type == "kraft_renounce_on_error"]


def test_a_new_incarnation_registered_names_the_broker_and_its_cleanup_records():
    # BMTushyath__RFIDSAS/logs/controller.log.2026-03-16-11.gz line 487 (3.9.0-rc3 ClusterControlManager.registerBroker)
    ev = one("[2026-03-16 11:41:47,554] INFO [QuorumController id=1] Registering a new incarnation of broker 1. Previous "
             "incarnation ID was NIK5Ma7yTtyWZTBzqTyc-Q; new incarnation ID is DGhWisBERMa-vufM6j27NQ. Generated 51 "
             f"record(s) to clean up previous incarnations. Broker epoch will become 1047. {CCM}")
    assert (ev.event_type, ev.controller_id, ev.subject_broker, ev.detail["cleanup_records"]) == \
        ("broker_unclean_shutdown", 1, 1, 51)
    assert ev.detail["previous_incarnation_id"] == "NIK5Ma7yTtyWZTBzqTyc-Q"
    # the same method when no registration existed (two spaces before "Generated", as Kafka writes it)
    ev = one("[2026-03-16 11:41:47,554] INFO [QuorumController id=1] No previous registration found for broker 2. New "
             "incarnation ID is DGhWisBERMa-vufM6j27NQ.  Generated 0 record(s) to clean up previous incarnations. New "
             f"broker epoch is 1047. {CCM}")
    assert (ev.event_type, ev.subject_broker, ev.detail["cleanup_records"]) == ("broker_unclean_shutdown", 2, 0)


def test_feature_levels_replayed_by_the_controller():
    # BMTushyath__RFIDSAS/logs/controller.log.2026-03-16-11.gz lines 13-14 (3.9.0-rc3 .. trunk
    # FeatureControlManager.replay); Danielowo2000 .../controller.log.2023-08-12-19.gz line 73 (3.5.0: "Setting
    # metadata version to ...")
    fcm = "(org.apache.kafka.controller.FeatureControlManager)"
    ev = one("[2026-03-16 11:04:01,233] INFO [QuorumController id=1] Replayed a FeatureLevelRecord setting feature "
             f"eligible.leader.replicas.version to 1 {fcm}")
    assert (ev.event_type, ev.detail["name"], ev.detail["level"]) == ("feature_level", "eligible.leader.replicas.version", 1)
    ev = one(f"[2026-03-16 11:04:01,232] INFO [QuorumController id=1] Replayed a FeatureLevelRecord setting "
             f"metadata.version to 4.2-IV1 {fcm}")
    assert (ev.detail["name"], ev.detail["version"]) == ("metadata.version", "4.2-IV1")
    ev = one(f"[2023-08-12 19:50:15,438] INFO [QuorumController id=1] Setting metadata version to 3.5-IV2 {fcm}")
    assert (ev.detail["name"], ev.detail["version"]) == ("metadata.version", "3.5-IV2")
    ev = one(f"[2023-08-12 19:50:15,438] INFO [QuorumController id=1] Replayed a FeatureLevelRecord removing feature "
             f"group.version {fcm}")
    assert (ev.detail["name"], ev.detail["level"]) == ("group.version", 0)


def test_registrations_replayed_by_a_3_5_controller():
    # Danielowo2000__BigDataTechnologies-Version-2/kafka_2.13-3.5.0/logs/controller.log.gz line 7 (3.5.0
    # ClusterControlManager.replay(RegisterBrokerRecord): "Re-registered broker id {}: {}" for a new incarnation,
    # "Re-registered broker incarnation: {}" for the same one)
    ev = one("[2023-08-16 13:07:19,457] INFO [QuorumController id=1] Re-registered broker id 1: RegisterBrokerRecord("
             "brokerId=1, isMigratingZkBroker=false, incarnationId=8J8etVfmTdCEgtsOjSKwfQ, brokerEpoch=1713, "
             f"endPoints=[], features=[], rack=null, fenced=true, inControlledShutdown=false) {CCM}")
    assert (ev.event_type, ev.subject_broker, ev.detail["broker_epoch"], ev.detail["new_incarnation"]) == \
        ("broker_registered", 1, 1713, True)
    ev = one("[2023-08-16 13:07:19,457] INFO [QuorumController id=1] Re-registered broker incarnation: "
             "RegisterBrokerRecord(brokerId=1, isMigratingZkBroker=false, incarnationId=8J8etVfmTdCEgtsOjSKwfQ, "
             f"brokerEpoch=1713, endPoints=[], features=[], rack=null, fenced=true, inControlledShutdown=false) {CCM}")
    assert (ev.event_type, ev.subject_broker, ev.detail["broker_epoch"]) == ("broker_registered", 1, 1713)


def _diffs(root) -> list[str]:
    """The diff of every distinct "partition change for T-P with topic ID X: <diff>" line under root."""
    import gzip
    import re

    rx = re.compile(r"partition change for \S+ with topic ID [\w-]+: (.*?)(?: \(org\.apache[^)]*\))?$")
    out = set()
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        if b"partition change for " not in data:
            continue
        for line in data.decode("utf-8", "replace").splitlines():
            m = rx.search(line)
            if m:
                out.add(m.group(1))
    return sorted(out)


def _each_field_searched(diff: str) -> dict:
    """What a search per field finds (the definition templates/kraft.py's single pass keeps)."""
    from parsers.broker_logs.rules import int_list
    from parsers.broker_logs.templates import kraft

    values = {}
    for k, rx in kraft._DIFF_LIST.items():
        d = rx.search(diff)
        if d:
            values[k] = (int_list(d.group(1)), int_list(d.group(2)))
    for k, rx in kraft._DIFF_INT.items():
        d = rx.search(diff)
        if d:
            values[k] = (int(d.group(1)), int(d.group(2)))
    return values


def test_partition_change_diffs_read_in_one_pass_as_field_by_field():
    """ReplicationControlManager's "partition change for ..." diffs (PartitionChangeBuilder, 3.3 .. 4.x) of a real
    KRaft cluster (real_logs2 BMTushyath__RFIDSAS, 3.9: elections, ELR, unclean recoveries) and issue snippets, and
    made-up orders and repeats: the single pass finds each field's first item, in the same order of fields."""
    from conftest import REAL_LOGS, REAL_LOGS2
    from parsers.broker_logs.templates.kraft import diff_values

    real = _diffs(REAL_LOGS2 / "BMTushyath__RFIDSAS") + _diffs(REAL_LOGS / "issue_snippets")
    assert len(real) > 20
    made_up = [
        "leaderEpoch: 1 -> 2, leader: -1 -> 1, isr: [1, 2] -> [1], isr: [3] -> [4]",
        "lastKnownElr: [1] -> [], elr: [2] -> [2, 3], partitionEpoch: 5 -> 6, replicas: [1,2] -> [2,1]",
        "leader: none -> 1, leader: 3 -> 4, leaderRecoveryState: RECOVERED -> RECOVERING",
        "isr: [1] -> [1], xisr: [5] -> [6], leaderEpochs: 1 -> 2, leader: 2 -> -1",
        "",
    ]
    for diff in real + made_up:
        got = diff_values(diff)
        want = _each_field_searched(diff)
        assert got == want and list(got) == list(want), diff


def test_a_partition_change_diff_read_again_gives_lists_of_its_own():
    """A diff is read once (templates/kraft.py remembers it): a second reading is the first's, field for field, and an
    event that keeps or changes a list of the first does not change the second's (the real 3.9 diffs of
    real_logs2 BMTushyath__RFIDSAS, each read twice)."""
    from conftest import REAL_LOGS2
    from parsers.broker_logs.templates import kraft

    real = _diffs(REAL_LOGS2 / "BMTushyath__RFIDSAS")
    assert len(real) > 20
    kraft._DIFF_MEMO.clear()
    for diff in real:
        first = kraft.diff_values(diff)
        assert diff in kraft._DIFF_MEMO
        want = _each_field_searched(diff)
        for a, b in first.values():
            if type(a) is list:
                a.append(99)
                b.clear()
        again = kraft.diff_values(diff)
        assert again == want and list(again) == list(want), diff
