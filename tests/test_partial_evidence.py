"""The replay with part of a cluster's evidence missing: it must never contradict what the real controller recorded.

Operators rarely have every file: controller.log is often not collected, older files are rotated away, a stretch
is lost. With less evidence the replay may judge fewer records, but a record it judges must agree with it.
Truth here: the real controllers' own records in ../shared/real_logs (their state-change and controller lines),
and the raw server.log lines read with gzip, apart from the parsers.

Kafka's rules under test:
- KafkaServer.shutdown (0.8.0 .. 3.9, core/src/main/scala/kafka/server/KafkaServer.scala) closes the broker's
  ZooKeeper client after the log manager, before "shut down completed": the broker leaves the controller's view
  with its session (replay_engine/zk/shutdown_sessions.py). Kafka's ZooKeeperClient logs "Closing." (1.1+).
- onControllerFailover (0.8.2.2, 2.8.0 KafkaController) logs "Currently active brokers in the cluster" in
  initializeControllerContext before the replica and partition state machines start and elect.
- ReplicaStateMachine.startup (2.3.0+) writes OfflineReplica for dead replicas before PartitionStateMachine.startup
  elects: one failover step can apply two decisions to a partition; a record found after either is judged
  against the one it records.
"""
from __future__ import annotations

import gzip
import re

import pytest

from conftest import REAL_LOGS, log4j_us, real_cluster_events, replayed_cluster
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import iso_utc
from replay_engine.api import replay_cluster

_TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] ")


def _need(*clusters: str):
    return pytest.mark.skipif(not all((REAL_LOGS / c).is_dir() for c in clusters), reason="../shared/real_logs absent")


def _without_controller_log(name: str) -> list:
    return [e for e in real_cluster_events(name) if "controller.log" not in e.source_file.rsplit("/", 1)[-1]]


def _raw_lines(name: str, glob: str, needle: str) -> list[tuple[str, int, int]]:
    """(file, 1-based line, µs) of the raw lines holding ``needle``."""
    out = []
    for f in sorted((REAL_LOGS / name).rglob(glob)):
        data = f.read_bytes()
        text = (gzip.decompress(data) if f.suffix == ".gz" else data).decode("utf-8", "replace")
        for i, line in enumerate(text.splitlines(), 1):
            m = _TS.match(line)
            if m and needle in line:
                out.append((str(f.relative_to(REAL_LOGS)), i, log4j_us(m.group(1))))
    return out


def test_close_lines_are_events_of_the_writer():
    text = ("[2023-06-12 10:40:35,551] INFO [ZooKeeperClient Kafka server] Closing. (kafka.zookeeper.ZooKeeperClient)\n"
            "[2023-06-12 10:40:35,664] INFO Session: 0x10007ee80d30001 closed (org.apache.zookeeper.ZooKeeper)\n"
            "[2018-07-18 17:54:28,388] INFO [ZooKeeperClient] Closing. (kafka.zookeeper.ZooKeeperClient)\n")
    events, summary = parse_source(text.encode(), SourceContext(path="server.log", broker_hint=3))
    assert summary.unrecognized == 0 and summary.balanced()
    assert [(e.event_type, e.session_id, e.subject_broker, (e.detail or {}).get("via")) for e in events] == [
        ("zk_session_closing", None, 3, "zookeeper_client"),
        ("zk_session_closing", 0x10007ee80d30001, 3, "zk_library"),
        ("zk_session_closing", None, 3, "zookeeper_client")]
    assert events[0].detail["client"] == "Kafka server" and events[2].detail["client"] == ""


@pytest.mark.parametrize("cluster", ["choopong__kafka", "gaparedes__kafka-demo"])
def test_failed_elections_after_a_shutdown_agree_without_controller_log(cluster):
    """Both clusters' controllers failed to elect a leader for partitions whose only ISR member was a broker that
    had just shut down, moments after its ZooKeeper client closed and before its "shut down completed"; with
    controller.log left out, the replay must know the broker gone by then (it held it live, 51 and 38
    divergences, before)."""
    if not (REAL_LOGS / cluster).is_dir():
        pytest.skip("../shared/real_logs absent")
    res = replay_cluster(_without_controller_log(cluster), cluster)
    failed = [c for c in res.comparisons if c.recorded.get("failed")]
    assert failed, "the evidence records failed elections"
    assert [c for c in res.comparisons if c.verdict == "diverged"] == []
    assert sum(c.verdict == "agreed" for c in failed) == len(failed)


@_need("choopong__kafka")
def test_broker_down_period_starts_at_its_zookeeper_client_close():
    cluster = "choopong__kafka"
    closes = _raw_lines(cluster, "server.log*", "[ZooKeeperClient] Closing.")
    completed = _raw_lines(cluster, "server.log*", "shut down completed")
    assert closes and completed
    res = replay_cluster(_without_controller_log(cluster), cluster)
    downs = {(p["start_event"]["source_file"], p["start_event"]["source_pos"])
             for b in res.to_json()["brokers"] for p in b["periods"] if p["state"] == "down" and p.get("start_event")}
    # every close of the broker's own client (in a shutdown) begins a down period; no "shut down completed" does
    assert {(f, i) for f, i, _ in closes} <= downs
    assert not {(f, i) for f, i, _ in completed} & downs


@_need("CodingCookieRookie__CS3219_TASKD")
def test_new_controller_elects_with_the_brokers_it_logged_live():
    """The controller's TRACE "All leaders = ..." dumps state Leader:-1 for partitions; each such moment must lie in
    a leaderless interval of the replay. Controller 2 took over while broker 0 (the old controller) shut down and
    logged only itself live: it elected nothing for partitions of dead brokers until they returned."""
    cluster = "CodingCookieRookie__CS3219_TASKD"
    res = replayed_cluster(cluster)
    spans: dict[tuple, list] = {}
    for lp in res.leaderless:
        spans.setdefault((lp.episode.topic, lp.episode.partition), []).append((lp.episode.start, lp.episode.end))
    dumps = [e for e in real_cluster_events(cluster) if e.event_type == "partition_state_observed" and e.leader == -1
             and e.partition is not None and "All leaders" in (e.raw or "")]
    assert dumps
    outside = [(e.topic, e.partition, iso_utc(e.ts)) for e in dumps
               if not any(a <= e.ts and (b is None or e.ts <= b) for a, b in spans.get((e.topic, e.partition), []))]
    assert outside == []


@_need("YehorYehorychev__Kafka")
def test_a_stretch_of_lost_logs_contradicts_no_record():
    """The middle fifth of the cluster's lines lost (rotated files gone): the replay judges what it can after the
    hole, a failover's OfflineReplica writes included, and contradicts no record."""
    cluster = "YehorYehorychev__Kafka"
    events = real_cluster_events(cluster)
    ts = sorted(e.ts for e in events if e.ts is not None)
    a, b = ts[int(0.4 * (len(ts) - 1))], ts[int(0.6 * (len(ts) - 1))]
    kept = [e for e in events if e.ts is None or not a < e.ts < b]
    res = replay_cluster(kept, cluster)
    assert sum(c.verdict == "agreed" for c in res.comparisons) > 300
    assert [(c.tp, c.record.source_file, c.record.source_pos) for c in res.comparisons if c.verdict == "diverged"] == []


def _from_quantile(events: list, q: int) -> list:
    """The evidence from the q-th percentile of the cluster's time on (the older files rotated away)."""
    ts = sorted(e.ts for e in events if e.ts is not None)
    t = ts[q * (len(ts) - 1) // 100]
    return [e for e in events if e.ts is None or e.ts >= t]


@_need("JacksonFarley__Kafka-Data-Centric-Project")
def test_failover_offline_replicas_tell_the_new_controllers_view():
    """2.3.0 ReplicaStateMachine.startup: a new controller logs 'Changed state of replica B ... from
    ReplicaDeletionIneligible to OfflineReplica' for each replica it does not hold online, before its partition state
    machine elects. Controller 1 took over with brokers 0 and 2 gone (no line of theirs says so; controller.log left
    out) and failed to elect the partitions only broker 0 held: those records must agree (51 diverged before)."""
    cluster = "JacksonFarley__Kafka-Data-Centric-Project"
    res = replay_cluster(_without_controller_log(cluster), cluster)
    failed = [c for c in res.comparisons if c.recorded.get("failed")]
    assert sum(c.verdict == "agreed" for c in failed) >= 50
    assert [c for c in res.comparisons if c.verdict == "diverged"] == []


@pytest.mark.parametrize("cluster, q", [("GraphLogistics__kafka", 50), ("Niloufar1171__LDI-POC", 25)])
def test_kraft_evidence_starting_after_a_registration_is_a_gap_not_a_divergence(cluster, q):
    """KRaft: with the evidence beginning after a broker registered and was unfenced, a leader change or a creation
    whose outcome depends on that broker is an evidence gap naming it (18 and 2 diverged before)."""
    if not (REAL_LOGS / cluster).is_dir():
        pytest.skip("../shared/real_logs absent")
    res = replay_cluster(_from_quantile(real_cluster_events(cluster), q), cluster)
    assert [c for c in res.comparisons if c.verdict == "diverged"] == []
    gaps = [c for c in res.comparisons if c.verdict == "unknown" and "registration of broker(s)" in (c.reason or "")]
    assert gaps and all(c.reason.startswith("evidence gap") for c in gaps)


@_need("minhdc2__kafka-Golang")
def test_controlled_shutdown_selector_failure_is_judged_as_one():
    """0.8.2.2 .. 1.0.0 ControlledShutdownLeaderSelector alone throws 'No other replicas in ISR I for P besides
    shutting down brokers S': the failed election is a controlled-shutdown move off the leader going down, which
    fails when no other ISR member is left; without controller.log (where 'Shutting down broker 1' is) the replay
    judged it as an offline election and diverged 6 times."""
    cluster = "minhdc2__kafka-Golang"
    events = _without_controller_log(cluster)
    stated = [e for e in events if e.event_type == "leader_election_failed" and (e.detail or {}).get("shutting_down_brokers")]
    assert stated and all(e.detail["strategy"] == "ControlledShutdownLeaderSelector" for e in stated)
    res = replay_cluster(events, cluster)
    judged = {(c.record.source_file, c.record.source_pos): c.verdict for c in res.comparisons}
    assert {judged.get((e.source_file, e.source_pos)) for e in stated} == {"agreed"}
    assert [c for c in res.comparisons if c.verdict == "diverged"] == []


ZK_REAL = REAL_LOGS.parent / "zk_real"


def _later_txn_logs() -> list[tuple[str, str]]:
    out = []
    for scen in sorted(p for p in ZK_REAL.glob("*") if (p / "ground_truth.json").exists()):
        logs = sorted(f.name for f in (scen / "version-2").glob("log.*"))
        out += [(scen.name, name) for name in logs[1:]]
    return out


@pytest.mark.skipif(not ZK_REAL.is_dir(), reason="../shared/zk_real absent")
def test_a_zookeeper_txn_log_alone_contradicts_no_write():
    """Each later transaction log of every zk_real scenario, alone (no snapshot, no earlier log): brokers registered
    before it are in no transaction, so a write electing one is an evidence gap, never a divergence from ZooKeeper's
    own record (s2's log.45 diverged twice before: its new controller elected broker 2, registered in log.1)."""
    judged = 0
    for scen, name in _later_txn_logs():
        f = ZK_REAL / scen / "version-2" / name
        events, _ = parse_source(f.read_bytes(), SourceContext(str(f.relative_to(ZK_REAL.parent)), cluster="zk"))
        res = replay_cluster([e for e in events if e.event_type != "zk_txn"], "zk")
        assert [(scen, name, c.tp, c.record.zxid) for c in res.comparisons if c.verdict == "diverged"] == []
        judged += sum(c.verdict == "agreed" for c in res.comparisons)
    assert judged > 100


@_need("YehorYehorychev__Kafka")
def test_broker_side_controlled_shutdown_answer_puts_it_among_shutting_down_brokers():
    """KafkaServer.controlledShutdown logs the controller's answer ('Controlled shutdown request returned
    successfully', 'Remaining partitions to move: ...'); the controller had put the broker among its shutting-down
    brokers first (KafkaController.doControlledShutdown). Without controller.log, the offline elections that failed
    while the partitions' only live ISR member was shutting down must agree (7 diverged)."""
    cluster = "YehorYehorychev__Kafka"
    res = replay_cluster(_without_controller_log(cluster), cluster)
    assert [(c.tp, c.record.source_file, c.record.source_pos) for c in res.comparisons if c.verdict == "diverged"] == []
    assert sum(c.verdict == "agreed" and bool(c.recorded.get("failed")) for c in res.comparisons) > 10


def _zk_scenario_events(scen: str, skip: str | None = None) -> list:
    events = []
    for f in sorted((ZK_REAL / scen / "version-2").iterdir()):
        if f.name != skip:
            evs, _ = parse_source(f.read_bytes(), SourceContext(str(f.relative_to(ZK_REAL.parent)), cluster="zk"))
            events += [e for e in evs if e.event_type != "zk_txn"]
    return events


@pytest.mark.parametrize("scen, lost, first_after", [("s1_single_replica_kill", "log.38", "log.6b"),
                                                      ("s5_churn", "log.723", "log.7b6"),
                                                      ("s5_churn", "log.152", "log.203")])
def test_a_lost_txn_log_is_a_hole_the_replay_does_not_guess_across(scen, lost, first_after):
    """ZooKeeper numbers transactions one by one within an epoch and names a txn log after its first zxid
    (FileTxnLog.append: "log." + hex(zxid)); with a middle txn log lost, the transactions it held are in no file
    and nothing the replay held before them can be trusted after: a finding cites the first transaction after the
    hole, what the replay knew of the partitions is forgotten, and no ZooKeeper write after it is contradicted.
    (s5's log.152: a topic's assignment rewritten after the hole creates none of its existing partitions,
    KafkaController.processPartitionModifications; an election whose AR order the hole hid is a gap.)"""
    if not (ZK_REAL / scen).is_dir():
        pytest.skip("../shared/zk_real absent")
    res = replay_cluster(_zk_scenario_events(scen, skip=lost), "zk")
    holes = [f for f in res.to_json()["findings"] if f["kind"] == "zk_hole"]
    assert len(holes) == 1 and holes[0]["evidence"][0]["source_file"].endswith("/" + first_after)
    assert [(c.tp, c.record.zxid) for c in res.comparisons if c.verdict == "diverged"] == []
    full = replay_cluster(_zk_scenario_events(scen), "zk")
    assert not [f for f in full.to_json()["findings"] if f["kind"] == "zk_hole"]


def _txn_broker_changes(events: list, lo: int, hi: int) -> dict[int, list[str]]:
    """ZooKeeper's own writes: each broker's registrations and removals with zxid in [lo, hi]."""
    out: dict[int, list[str]] = {}
    for e in sorted((e for e in events if e.source_kind == "zk_txnlog" and e.zxid is not None and lo <= e.zxid <= hi
                     and e.event_type in ("broker_registered", "broker_deregistered")), key=lambda e: e.zxid):
        out.setdefault(int(e.subject_broker), []).append(e.event_type)
    return out


@pytest.mark.parametrize("scen, lost", [("s5_churn", "log.45b"), ("s5_churn", "log.7b6")])
def test_a_lost_txn_log_a_snapshot_covers_keeps_what_the_snapshot_states(scen, lost):
    """A snapshot is named after the last zxid it applied (FileTxnSnapLog.save: "snapshot." + hex(zxid)); one at the
    last zxid of a lost txn log states the tree those transactions left (fuzzily: DataTree.serialize runs while
    transactions go on). The replay takes that end state: every broker ZooKeeper's own (lost) writes show leaving
    inside the hole is down there, those the snapshot registers are up after it, partitions it shows unchanged stay
    judged, and no record after the hole is contradicted."""
    if not (ZK_REAL / scen).is_dir():
        pytest.skip("../shared/zk_real absent")
    whole = _zk_scenario_events(scen)
    lost_events = [e for e in whole if e.source_file.endswith("/" + lost)]
    span = next(e for e in lost_events if e.event_type == "zk_txnlog_span").detail
    res = replay_cluster(_zk_scenario_events(scen, skip=lost), "zk")
    holes = [f for f in res.to_json()["findings"] if f["kind"] == "zk_hole"]
    assert len(holes) == 1 and f"snapshot at {hex(span['last_zxid'])}" in holes[0]["text"]
    assert [(c.tp, c.record.zxid) for c in res.comparisons if c.verdict == "diverged"] == []
    brokers = {b["broker"]: b["periods"] for b in res.to_json()["brokers"]}
    lo, hi = span["first_zxid"], span["last_zxid"]
    t_lo = max(e.ts for e in whole if e.zxid is not None and e.zxid < lo and e.source_kind == "zk_txnlog")
    t_hi = max(e.ts for e in lost_events if e.zxid is not None)
    changed = _txn_broker_changes(whole, lo, hi)
    assert any("broker_deregistered" in v for v in changed.values())  # the scenario does lose a broker's exit
    for b, kinds in changed.items():
        if "broker_deregistered" not in kinds:
            continue
        downs = [p for p in brokers[b] if p["state"] == "down" and iso_utc(t_lo) <= p["start"] <= iso_utc(t_hi)]
        assert downs, f"broker {b} left inside the hole (ZooKeeper's own txn), the replay has it up throughout"
        if kinds[-1] == "broker_registered":  # back before the hole ended: the snapshot lists it
            assert any(p["state"] == "up" and downs[0]["start"] < p["start"] <= iso_utc(t_hi) for p in brokers[b])
    # without the snapshots the same hole is only a hole: fewer records after it can be judged
    bare = replay_cluster([e for e in _zk_scenario_events(scen, skip=lost) if e.source_kind != "zk_snapshot"], "zk")
    after = [c for c in res.comparisons if c.record.zxid is not None and c.record.zxid > hi and c.verdict == "agreed"]
    bare_after = [c for c in bare.comparisons if c.record.zxid is not None and c.record.zxid > hi
                  and c.verdict == "agreed"]
    assert len(after) > len(bare_after)


_LIVENESS_GAP = re.compile(r"were (live|acceptable) to the controller")


def _from_median(name: str) -> list:
    """The logs from the median of their times on: the older files rotated away."""
    events = real_cluster_events(name)
    ts = sorted(e.ts for e in events if e.ts is not None)
    cut = ts[(len(ts) - 1) // 2]
    return [e for e in events if e.ts is None or e.ts >= cut]


@_need("AndreasTraut__kafka_2.13-2.8.0", "Eniyanilavan__Kafka")
@pytest.mark.parametrize("cluster, shape", [("AndreasTraut__kafka_2.13-2.8.0", _without_controller_log),
                                            ("Eniyanilavan__Kafka", _without_controller_log),
                                            ("AndreasTraut__kafka_2.13-2.8.0", _from_median)])
def test_without_the_controllers_log_its_view_of_live_brokers_is_not_guessed(cluster, shape):
    """Which brokers a ZooKeeper-mode controller holds live comes from ZooKeeper (its broker-change handler logs
    "Newly added brokers ..., deleted brokers ..." in controller.log, 0.8.2.2 BrokerChangeListener, 2.8.0
    processBrokerChange); a broker killed leaves no line of its own, and a controller's shutting-down brokers are
    reset only at its failover (2.8.0 ControllerContext.resetContext). With neither ZooKeeper's data nor the acting
    controller's log since its tenure began (controller.log not collected; logs starting mid-tenure), the replay's
    view may be wrong, but a record that follows from the election rule only with some brokers' eligibility the
    other way (2.7.0 PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection: the first assigned replica in
    the ISR that isReplicaOnline holds; a failed one: no ISR member was) is not a hole in the evidence (issue 44): it
    shows the state. The replay adopts it with that line as provenance (a broker_state_adopted finding citing it)
    and the record counts against the agreement; no record is filed as a liveness gap, none diverges. Given the
    whole evidence, every such record is judged, and agrees."""
    from replay_engine.common import judge as J

    res = replay_cluster(shape(cluster), cluster)
    assert [(c.tp, c.record.source_file, c.record.source_pos) for c in res.comparisons if c.verdict == "diverged"] == []
    assert not [c for c in res.comparisons if _LIVENESS_GAP.search(c.reason or "")]
    adopted = [c for c in res.comparisons if c.implied is not None]
    assert all(c.verdict == "unknown" and c.reason.startswith(J.ADOPTED) for c in adopted)
    assert J.tally(adopted)["evidence_gaps"] == 0 and not any(c.agreed for c in adopted)
    cited = {(e["source_file"], e["source_pos"]) for f in res.image.findings if f["kind"] == "broker_state_adopted"
             for e in f["evidence"]}
    at = {(c.record.source_file, c.record.source_pos) for c in adopted}
    assert at <= cited
    if shape is _without_controller_log:
        # the controller's failures and returns of brokers are in controller.log only: some record shows them
        assert adopted
    whole = replayed_cluster(cluster)
    assert not [c for c in whole.comparisons if _LIVENESS_GAP.search(c.reason or "") or c.implied is not None]
    judged = {(c.record.source_file, c.record.source_pos): c.verdict for c in whole.comparisons}
    assert {judged.get(g) for g in at} <= {"agreed"}


@_need("BetrajJ__kafka-kraft")
def test_without_the_quorum_controllers_log_its_view_of_fenced_brokers_is_not_guessed():
    """KRaft: fencing is the quorum controller's (a killed broker misses its heartbeats, BrokerHeartbeatManager),
    known from its log or the metadata log. Without controller.log, a record that follows with some brokers'
    acceptability taken the other way (3.9 PartitionChangeBuilder.isAcceptableLeader) is not judged a divergence;
    given the whole evidence, the same records are judged, and agree."""
    cluster = "BetrajJ__kafka-kraft"
    res = replay_cluster(_without_controller_log(cluster), cluster)
    assert [(c.tp, c.record.source_file, c.record.source_pos) for c in res.comparisons if c.verdict == "diverged"] == []
    gaps = {(c.record.source_file, c.record.source_pos) for c in res.comparisons
            if c.verdict == "unknown" and _LIVENESS_GAP.search(c.reason or "")}
    assert gaps
    whole = replayed_cluster(cluster)
    assert not [c for c in whole.comparisons if _LIVENESS_GAP.search(c.reason or "")]
    judged = {(c.record.source_file, c.record.source_pos): c.verdict for c in whole.comparisons}
    assert {judged.get(g) for g in gaps} == {"agreed"}


@_need("andreinedelciu__kafka-brokers-public")
def test_without_the_kafka_version_the_unclean_default_is_not_guessed():
    """unclean.leader.election.enable defaults to true before 0.11.0 and to false since (KIP-106; rule
    zk.unclean.default). With only state-change.log (no 'Kafka version' line, no broker config dump) the replay runs
    on 3.x defaults; a record that follows from the other default (here a 0.10.2 controller electing a live replica
    out of the ISR) is an evidence gap naming the setting, and with the whole evidence (version logged) it is judged
    and agrees. The controller's 0.8-0.11 TRACE requests ("sending UpdateMetadata request (Leader:..)") are left out
    too: they name broker 1010, whose registration no line of state-change.log states, and that unknown would be
    the first reason the replay gives."""
    cluster = "andreinedelciu__kafka-brokers-public"
    events = [e for e in real_cluster_events(cluster) if "state-change" in e.source_file.rsplit("/", 1)[-1]
              and "sending UpdateMetadata request" not in (e.raw or "")]
    res = replay_cluster(events, cluster)
    assert [(c.tp, c.record.source_pos) for c in res.comparisons if c.verdict == "diverged"] == []
    gaps = {(c.record.source_file, c.record.source_pos) for c in res.comparisons
            if "unclean.leader.election.enable" in (c.reason or "")}
    assert gaps
    whole = {(c.record.source_file, c.record.source_pos): c.verdict
             for c in replayed_cluster(cluster).comparisons}
    assert {whole.get(g) for g in gaps} == {"agreed"}


@pytest.mark.skipif(not (ZK_REAL / "s1_single_replica_kill").is_dir(), reason="../shared/zk_real absent")
def test_a_broker_killed_inside_a_lost_txn_log_is_still_the_cause_the_snapshot_after_it_shows():
    """The scenario's ground truth: one broker is killed and its single-replica partitions go offline. With the txn
    log holding its session's end lost, the snapshot after that log no longer registers the broker (FileTxnSnapLog,
    fuzzily: the removal may even follow the snapshot's zxid): the offline partitions are still explained by that
    broker going down -- inside the lost transactions, which the explanation says instead of a time it cannot know."""
    import json

    scen = "s1_single_replica_kill"
    truth = json.loads((ZK_REAL / scen / "ground_truth.json").read_text())["summary"]
    whole = _zk_scenario_events(scen)
    exit_ = next(e for e in whole if e.event_type == "broker_deregistered" and e.subject_broker == truth["killed"])
    lost = exit_.source_file.rsplit("/", 1)[-1]
    res = replay_cluster(_zk_scenario_events(scen, skip=lost), "zk")
    by_tp = {f"{x.episode.topic}-{x.episode.partition}": x for x in res.leaderless}
    for tp in truth["offline_partitions_expected"]:
        cause = by_tp[tp].cause
        assert cause.kind == "all_replicas_offline" and cause.details["cause_brokers"] == [truth["killed"]]
        assert "no file holds" in cause.summary
    assert [(c.tp, c.record.zxid) for c in res.comparisons if c.verdict == "diverged"] == []
