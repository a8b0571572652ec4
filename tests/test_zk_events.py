"""Kafka meaning of ZooKeeper txns, checked against each zk_real scenario's ground truth (what the driver did)."""
from __future__ import annotations

import json
from functools import lru_cache

import pytest

from conftest import ZK_REAL
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.schema import Event
from parsers.zookeeper.events import kafka_path, link_sessions, parse_snapshot_file, parse_txnlog_file
from zk_oracle import SCENARIOS

STATE = "/brokers/topics/{}/partitions/{}/state"


def _parse(path) -> tuple[list[Event], FileSummary]:
    summary = FileSummary(path=str(path), kind="zk")
    fn = parse_txnlog_file if path.name.startswith("log.") else parse_snapshot_file
    events = fn(path.read_bytes(), SourceContext(str(path), "c"), summary)
    return events, summary


@lru_cache(maxsize=None)
def scenario(name: str, with_snapshots: bool = True, skip: str | None = None):
    files = sorted((ZK_REAL / name / "version-2").iterdir())
    events = []
    for f in files:
        if f.name == skip or (not with_snapshots and f.name.startswith("snapshot.")):
            continue
        evs, summary = _parse(f)
        assert summary.balanced() and not summary.errors, (f, summary.errors)
        events += evs
    truth = json.loads((ZK_REAL / name / "ground_truth.json").read_text())
    return link_sessions(events), truth


def _x(h: str | None) -> int | None:
    return None if h is None else int(h, 16)


def by_type(events, t):
    return [e for e in events if e.event_type == t]


@pytest.mark.parametrize("name", SCENARIOS)
def test_broker_sessions_registrations_and_deaths(name):
    events, truth = scenario(name)
    created = {(e.session_id, e.zxid): e.detail["timeout_ms"] for e in by_type(events, "zk_session_created")}
    closed = {e.session_id: e for e in by_type(events, "zk_session_closed")}
    registered = {(e.subject_broker, e.zxid): e for e in by_type(events, "broker_registered")}
    gone = {(e.subject_broker, e.zxid): e for e in by_type(events, "broker_deregistered")}
    expected_gone = set()
    for bid, info in truth["brokers"].items():
        for s in info["sessions"]:
            sid = _x(s["session_id"])
            assert created[(sid, _x(s["createSession_zxid"]))] == s["timeout_ms"]
            if s.get("broker_epoch_czxid"):
                reg = registered[(int(bid), _x(s["broker_epoch_czxid"]))]
                assert reg.session_id == sid and reg.detail["broker_epoch"] == _x(s["broker_epoch_czxid"])
                assert reg.detail["host"] == info["host"]
            if s["end"] == "alive":
                assert sid not in closed
                continue
            close = closed[sid]
            assert close.zxid == _x(s["closeSession_zxid"])
            assert close.detail["cause"] == s["end"]  # expired (server, cxid 0) / closed (client)
            assert close.detail["paths_deleted"] == s["paths2Delete"]
            if s.get("broker_epoch_czxid"):
                expected_gone.add((int(bid), close.zxid))
                dead = gone[(int(bid), close.zxid)]
                assert dead.detail["cause"] == "session_" + s["end"]
                assert dead.session_id == sid and dead.detail["broker_epoch"] == _x(s["broker_epoch_czxid"])
    assert set(gone) == expected_gone  # no death the driver did not cause
    for a in truth["admin_tool_sessions"]:
        assert closed[_x(a["session_id"])].detail["cause"] == "closed"


@pytest.mark.parametrize("name", SCENARIOS)
def test_controller_elections_and_losses(name):
    events, truth = scenario(name)
    elected = {(e.controller_id, e.zxid) for e in by_type(events, "controller_znode_created")}
    want = {(ev["broker"], _x(ev["zxid"])) for ev in truth["events"] if ev["kind"] == "controller_elected"}
    assert elected == want
    lost = {(e.controller_id, e.zxid, e.detail["cause"]) for e in by_type(events, "controller_znode_deleted")}
    want_lost = {(ev["broker"], _x(ev["zxid"]), "session_expired") for ev in truth["events"]
                 if ev["kind"] == "session_expired" and "/controller" in ev.get("ephemerals_deleted", [])}
    sessions = {(int(b), s.get("closeSession_zxid")): s for b, i in truth["brokers"].items() for s in i["sessions"]}
    want_lost |= {(b, _x(z), "session_closed") for (b, z), s in sessions.items()
                  if s["end"] == "closed" and "/controller" in s.get("paths2Delete", [])}
    assert lost == want_lost
    epochs = [e.controller_epoch for e in by_type(events, "controller_epoch_set")]
    assert epochs[-1] == int(truth["final_state"]["controller_epoch"]["data"])


def _state_writes(truth) -> tuple[dict, set]:
    """(zxid, topic, partition) -> state JSON for every successful write; zxids of failed writes."""
    ok, failed = {}, set()
    for ev in truth["events"]:
        if ev["kind"] != "zk_write":
            continue
        if ev["result"] != "OK":
            failed.add(_x(ev["zxid"]))
            continue
        ops = ev.get("ops") or [ev]
        for op in ops:
            kp = kafka_path(op.get("path"))
            if kp and kp.kind == "partition_state" and op.get("data"):
                ok[(_x(ev["zxid"]), kp.name, kp.partition)] = json.loads(op["data"])
    return ok, failed


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_partition_state_write_and_every_failed_write(name):
    events, truth = scenario(name)
    ok, failed = _state_writes(truth)
    written = {(e.zxid, e.topic, e.partition): e for e in by_type(events, "partition_state_written")}
    assert set(written) == set(ok)
    for k, s in ok.items():
        e = written[k]
        assert (e.leader, e.isr, e.leader_epoch, e.controller_epoch) == (
            s["leader"], s["isr"], s["leader_epoch"], s["controller_epoch"])
    failed_events = {e.zxid for e in by_type(events, "zk_write_failed")}
    assert failed_events == failed
    state_zxids = {e.zxid for e in events if e.event_type not in ("zk_txn", "zk_write_failed")}
    assert not failed & state_zxids  # a failed write never yields a state fact


@pytest.mark.parametrize("name", SCENARIOS)
def test_final_state_of_every_partition_state_znode(name):
    events, truth = scenario(name)
    final = {}
    for e in events:  # link_sessions returns zxid order
        if e.event_type == "partition_state_written":
            final[STATE.format(e.topic, e.partition)] = e
        elif e.event_type == "topic_deleted":
            for p in [p for p in final if p.startswith(f"/brokers/topics/{e.topic}/")]:
                del final[p]
    want = truth["final_state"]["partition_states"]
    assert set(final) == set(want)
    for path, w in want.items():
        e = final[path]
        s = w["state"]
        assert (e.leader, e.isr, e.leader_epoch, e.controller_epoch, e.zk_version, e.zxid) == (
            s["leader"], s["isr"], s["leader_epoch"], s["controller_epoch"], w["zk_version"], _x(w["mzxid"]))


def test_failed_multi_is_only_a_failed_write():
    # s2: broker 2 loses the /controller race; its multi is [error -110, error -2] at zxid 0x5b.
    events, truth = scenario("s2_controller_failover")
    at = [e for e in events if e.zxid == 0x5B]
    assert [e.event_type for e in at] == ["zk_txn", "zk_write_failed"]
    assert at[1].detail["err_name"] == "NODEEXISTS" and at[1].session_id == 0x100002121AA0001


def test_snapshot_stands_in_for_a_missing_log():
    # Without log.1 of s2, the registrations and the first controller come from snapshot.43
    # and the later expiry (in log.45) still learns the broker epoch and the lost controller.
    events, _ = scenario("s2_controller_failover", skip="log.1")
    reg = {e.subject_broker: e for e in by_type(events, "broker_registered")}
    assert reg[1].source_kind == "zk_snapshot" and reg[1].zxid == 0x18 and reg[1].session_id == 0x100002121AA0000
    dead = by_type(events, "broker_deregistered")
    assert [(e.subject_broker, e.zxid, e.detail["broker_epoch"]) for e in dead] == [(1, 0x59, 0x18)]
    lost = by_type(events, "controller_znode_deleted")
    assert [(e.controller_id, e.zxid) for e in lost] == [(1, 0x59)]


def test_log_and_snapshot_overlap_is_deduplicated():
    events, _ = scenario("s1_single_replica_kill")
    keys = [(e.zxid, e.event_type, (e.detail or {}).get("path")) for e in events if e.event_type != "zk_txnlog_span"]
    assert len(keys) == len(set(keys))
    spans = [e.source_file for e in events if e.event_type == "zk_txnlog_span"]  # a statement per txn log file
    assert len(spans) == len(set(spans)) and all("/log." in f for f in spans)
    assert all(e.source_kind == "zk_txnlog" for e in events)  # every snapshot fact is also in a log


def _ev(t, zxid, kind="zk_txnlog", **kw):
    detail = kw.pop("detail", None)
    return Event(event_type=t, zxid=zxid, source_kind=kind, source_file=kind, source_pos=zxid, detail=detail, **kw)


def test_closesession_without_body_deregisters_what_the_session_registered():
    # ZooKeeper <= 3.5: closeSession carries no paths. The registration was seen in another file.
    reg = _ev("broker_registered", 0x18, "zk_snapshot", subject_broker=1, session_id=77,
              detail={"path": "/kafka/brokers/ids/1", "broker_epoch": 0x18})
    ctl = _ev("controller_znode_created", 0x1A, "zk_snapshot", controller_id=1, session_id=77,
              detail={"path": "/kafka/controller", "created": True})
    other = _ev("broker_registered", 0x20, subject_broker=2, session_id=78, detail={"path": "/kafka/brokers/ids/2", "broker_epoch": 0x20})
    close = _ev("zk_session_closed", 0x59, session_id=77, detail={"cause": "expired", "paths_deleted": None})
    out = link_sessions([close, other, ctl, reg])
    derived = [(e.event_type, e.zxid, e.subject_broker, e.controller_id, (e.detail or {}).get("cause"))
               for e in out if e.zxid == 0x59]
    assert derived == [("zk_session_closed", 0x59, None, None, "expired"),
                       ("broker_deregistered", 0x59, 1, None, "session_expired"),
                       ("controller_znode_deleted", 0x59, None, 1, "session_expired")]
    dead = [e for e in out if e.event_type == "broker_deregistered"][0]
    assert dead.detail["broker_epoch"] == 0x18 and dead.detail["chroot"] == "/kafka" and dead.session_id == 77
    assert reg.detail == {"path": "/kafka/brokers/ids/1", "broker_epoch": 0x18}  # inputs untouched


def test_kafka_paths_under_a_chroot():
    assert kafka_path("/kafka_cluster_01/brokers/topics/dw_test/partitions/101/state") == \
        kafka_path("/brokers/topics/dw_test/partitions/101/state").__class__("partition_state", "/kafka_cluster_01", "dw_test", 101)
    assert kafka_path("/brokers/topics/controller").kind == "topic"
    assert kafka_path("/a/b/controller_epoch").chroot == "/a/b"
    assert kafka_path("/brokers/topics/t/partitions") is None and kafka_path("/zookeeper/quota") is None
