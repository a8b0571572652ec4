"""capture against a real ZooKeeper server (Debian's ``zookeeper`` package).

The Kafka-like trees are written by the tests' own kazoo clients with the payloads Kafka
writes; the truth a capture is compared with is what was written, what the server answers
to an independent read, and (for read-only-ness) the server's own transaction log as printed
by ZooKeeper's TxnLogToolkit.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from forensics import capture as cap
from forensics.errors import UserError
from zk_server import (  # noqa: F401 - zk_server is a fixture
    BrokerProcess, FreezableProxy, TlsMaterial, ZkServer, free_port, load_kafka_tree, register_broker, state_json, txns_by_session,
    zk_server,
)

REPO = Path(__file__).resolve().parents[1]
TOPICS = {
    "orders": {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]},
    "payments.v2": {0: [1, 2]},
    "__consumer_offsets": {i: [1, 2, 3] for i in range(5)},
}
# Written by load_kafka_tree but not Kafka state a capture wants (and /config/users holds SCRAM secrets).
NOT_CAPTURED = {"/config", "/config/users", "/config/users/alice", "/consumers"}
STAT_FIELDS = ("czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion",
               "ephemeralOwner", "pzxid", "dataLength", "numChildren")


def client(hosts: str, **kw) -> KazooClient:
    c = KazooClient(hosts=hosts, **kw)
    c.start(timeout=20)
    return c


def cluster(server, chroot: str, brokers=(1, 2, 3), topics=TOPICS, controller: int | None = 1, **kw):
    """A Kafka tree under ``chroot``; returns the (chrooted) writer client and path -> data written."""
    root = client(server.hosts, **kw)
    root.create(chroot, None, acl=kw.get("default_acl"))
    root.stop()
    root.close()
    c = client(server.hosts + chroot, **kw)
    written = load_kafka_tree(c, topics, controller=controller)
    for b in brokers:
        register_broker(c, b)
        written[f"/brokers/ids/{b}"] = c.get(f"/brokers/ids/{b}")[0]
    return c, written


def options(server, chroot: str | None, out: Path, **kw) -> cap.CaptureOptions:
    return cap.CaptureOptions(cap.parse_zk(server.hosts + (chroot or "")), out, timeout_s=10, **kw)


def read_capture(out: Path) -> dict[str, dict]:
    recs = {}
    for f in (out / "znodes").rglob("*.json"):
        rec = json.loads(f.read_text(encoding="utf-8"))
        assert f.relative_to(out).as_posix() == cap.znode_file(rec["path"])  # where the layout says
        recs[rec["path"]] = rec
    return recs


def all_output_bytes(out: Path) -> bytes:
    return b"".join(f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file())


class WatchRun:
    """``run_capture`` with --watch in a thread, so the test can change the cluster meanwhile."""

    def __init__(self, opts: cap.CaptureOptions):
        self.opts, self.stop, self.error, self.result = opts, threading.Event(), None, None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.result = cap.run_capture(self.opts, stop=self.stop)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            self.error = exc

    def _check(self):
        if self.error:
            raise self.error

    def wait_snapshot(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while not (self.opts.out / "watch.jsonl").exists():
            self._check()
            assert time.monotonic() < deadline, "snapshot did not finish"
            time.sleep(0.05)

    def lines(self) -> list[dict]:
        path = self.opts.out / "watch.jsonl"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        return [json.loads(ln) for ln in text.splitlines() if ln.strip()]

    def wait_for(self, pred, timeout=30.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            self._check()
            lines = self.lines()
            if pred(lines):
                return lines
            assert time.monotonic() < deadline, f"trace never satisfied the test; it has {lines}"
            time.sleep(0.1)

    def finish(self) -> cap.CaptureResult:
        self.stop.set()
        self.thread.join(60)
        assert not self.thread.is_alive()
        self._check()
        return self.result


def find(lines, kind, path):
    return [ln for ln in lines if ln["kind"] == kind and ln.get("path") == path]


# --- snapshot ---------------------------------------------------------------------------------

def test_snapshot_is_what_kafka_wrote(zk_server, tmp_path):
    c, written = cluster(zk_server, "/snap")
    extra = {
        "/config/topics/orders": b'{"version":1,"config":{"unclean.leader.election.enable":"true"}}',
        "/config/brokers/<default>": b'{"version":1,"config":{"min.insync.replicas":"2"}}',
        "/admin/delete_topics/payments.v2": None,
    }
    for p, d in extra.items():
        c.create(p, d)
    written.update(extra)
    for prefix, data in (("/isr_change_notification/isr_change_", b'{"version":1,"partitions":[{"topic":"orders","partition":0}]}'),
                         ("/log_dir_event_notification/log_dir_event_", b'{"version":1,"broker":1,"event":1}'),
                         ("/config/changes/config_change_", b'{"version":2,"entity_path":"topics/orders"}')):
        written[c.create(prefix, data, sequence=True)] = data

    res = cap.run_capture(options(zk_server, "/snap", tmp_path / "out"))
    recs = read_capture(tmp_path / "out")

    expected = {p: d for p, d in written.items() if p not in NOT_CAPTURED}
    assert set(recs) == set(expected)
    for path, data in expected.items():
        rec = recs[path]
        assert rec["data"] == (None if data is None else data.decode()), path
        assert rec["data_b64"] is None
        stat = c.exists(path)  # the server's answer to an independent session
        assert rec["stat"] == {k: getattr(stat, k) for k in STAT_FIELDS}, path
    # Kafka facts visible in the stats: ephemerals owned by the registering session; broker
    # znodes are born at version 1 (create + setData in one multi); containers are null.
    assert recs["/brokers/ids/2"]["stat"]["ephemeralOwner"] == c.client_id[0]
    assert recs["/brokers/ids/2"]["stat"]["version"] == 1
    assert recs["/controller"]["stat"]["ephemeralOwner"] == c.client_id[0]
    assert recs["/brokers/topics/orders/partitions"]["data"] is None
    assert json.loads(recs["/brokers/topics/orders/partitions/1/state"]["data"]) == {
        "controller_epoch": 1, "leader": 2, "version": 1, "leader_epoch": 0, "isr": [2, 3, 1]}

    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert m == res.manifest
    assert (m["format"], m["version"], m["zk"], m["chroot"], m["server"]) == (
        "kafka-forensics-capture", 1, zk_server.hosts, "/snap", zk_server.hosts)
    assert m["znodes"] == len(expected) and m["errors"] == [] and "watch" not in m
    assert m["session_id"].startswith("0x") and m["sessions"] == [m["session_id"]]
    assert m["started_ms"] <= m["finished_ms"]
    assert res.counts == {"brokers": 3, "topics": 3, "partitions": 9, "controller": 1}
    assert b"SECRETKEY" not in all_output_bytes(tmp_path / "out")
    assert not (tmp_path / "out" / "watch.jsonl").exists()
    c.stop()
    c.close()


def test_two_captures_of_an_unchanged_tree_are_identical(zk_server, tmp_path):
    c, _ = cluster(zk_server, "/same")
    for name in ("a", "b"):
        cap.run_capture(options(zk_server, "/same", tmp_path / name, window=7 if name == "b" else 1000))
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a" / "znodes").rglob("*"))
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b" / "znodes").rglob("*"))
    assert files_a == files_b and len(files_a) > 30
    for rel in files_a:
        if (tmp_path / "a" / rel).is_file():
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    c.stop()
    c.close()


# --- --watch ----------------------------------------------------------------------------------

def test_watch_traces_a_broker_expiry_a_state_change_a_new_topic_and_a_controller_failover(zk_server, tmp_path):
    c, _ = cluster(zk_server, "/watch", brokers=(1, 3))
    broker2 = BrokerProcess(zk_server.hosts + "/watch", 2)
    run = WatchRun(options(zk_server, "/watch", tmp_path / "out", watch_s=120))
    try:
        run.wait_snapshot()
        assert (tmp_path / "out" / "znodes/brokers/ids/2.json").is_file()

        broker2.kill()  # SIGKILL: the server expires its session, which deletes /brokers/ids/2
        state = "/brokers/topics/orders/partitions/0/state"
        new_state = state_json(1, [1], leader_epoch=1)
        set_stat = c.set(state, new_state)
        c.create("/brokers/topics/fresh", b'{"version":2,"partitions":{"0":[3]},"adding_replicas":{},"removing_replicas":{}}')
        c.create("/brokers/topics/fresh/partitions/0/state", state_json(3, [3]), makepath=True)
        c.delete("/controller")
        new_controller = b'{"version":1,"brokerid":3,"timestamp":"1700000009999"}'
        c.create("/controller", new_controller, ephemeral=True)

        lines = run.wait_for(lambda ls: find(ls, "deleted", "/brokers/ids/2")
                             and find(ls, "changed", state)
                             and find(ls, "created", "/brokers/topics/fresh/partitions/0/state")
                             and find(ls, "created", "/controller")
                             # the children listings follow their watch events, not the deletion's own line
                             and ["1", "3"] in [ln["children"] for ln in find(ls, "children", "/brokers/ids")]
                             and any("fresh" in ln["children"] for ln in find(ls, "children", "/brokers/topics")))
    finally:
        broker2.kill()
        result = run.finish()

    changed = find(lines, "changed", state)[-1]
    assert changed["data"] == new_state.decode()
    assert (changed["stat"]["mzxid"], changed["stat"]["version"]) == (set_stat.mzxid, set_stat.version)
    assert changed["stat"]["mtime"] == set_stat.mtime
    ids = [ln["children"] for ln in find(lines, "children", "/brokers/ids")]
    assert ["1", "3"] in ids
    assert "stat" not in find(lines, "deleted", "/brokers/ids/2")[0]
    assert ["fresh", "orders", "payments.v2", "__consumer_offsets"] == sorted(
        find(lines, "children", "/brokers/topics")[-1]["children"], key=lambda s: (s.startswith("_"), s))
    fresh = find(lines, "created", "/brokers/topics/fresh/partitions/0/state")[0]
    assert fresh["data"] == state_json(3, [3]).decode()
    # The failover: the old /controller deleted, a new one (new czxid, new owner data) created.
    kinds = [ln["kind"] for ln in lines if ln.get("path") == "/controller"]
    assert kinds == ["deleted", "created"]
    created = find(lines, "created", "/controller")[0]
    assert created["data"] == new_controller.decode()
    assert created["stat"]["czxid"] == c.exists("/controller").czxid
    # Every line numbered in order, times present, counted in the manifest.
    final = run.lines()
    assert [ln["seq"] for ln in final] == list(range(1, len(final) + 1))
    assert all(ln["observed_ms"] > 0 for ln in final)
    w = result.manifest["watch"]
    assert w["changes"] == len(final) and w["gaps"] == [] and w["ended_by"] == "interrupted"
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["watch"] == w
    c.stop()
    c.close()


def test_watch_rides_out_a_server_restart_and_records_the_gap(tmp_path):
    server = ZkServer(tmp_path / "zk").start()
    c = None
    try:
        # No ephemerals: if the writer's own session expires while the server restarts, the
        # capture would rightly report its brokers gone, which is not what this test is about.
        c, _ = cluster(server, "/gap", brokers=(), controller=None)
        run = WatchRun(options(server, "/gap", tmp_path / "out", watch_s=120))
        try:
            run.wait_snapshot()
            server.restart()
            state = "/brokers/topics/orders/partitions/2/state"
            new_state = state_json(1, [1, 2], leader_epoch=3)
            c.retry(c.set, state, new_state)
            lines = run.wait_for(lambda ls: any(ln["kind"] == "gap" for ln in ls)
                                 and any(ln.get("data") == new_state.decode() for ln in find(ls, "changed", state)))
        finally:
            result = run.finish()
        gap = [ln for ln in lines if ln["kind"] == "gap"][0]
        assert gap["from_ms"] <= gap["to_ms"] and gap["reason"]
        assert result.manifest["watch"]["gaps"] == [{k: gap[k] for k in ("from_ms", "to_ms", "reason")}]
        # After the gap the capture re-read everything: nothing else moved, so nothing else is reported.
        assert {ln["path"] for ln in lines if ln["kind"] != "gap"} == {state}
    finally:
        if c is not None:
            c.stop()
            c.close()
        server.stop()


def test_watch_outlives_its_own_session_expiring(zk_server, tmp_path):
    c, _ = cluster(zk_server, "/expiry", brokers=(), controller=None)
    proxy = FreezableProxy(zk_server.port)
    opts = cap.CaptureOptions(cap.parse_zk(proxy.hosts + "/expiry"), tmp_path / "out", timeout_s=1.0, watch_s=120)
    changed_path = "/brokers/topics/orders/partitions/1/state"
    deleted_path = "/brokers/topics/payments.v2/partitions/0/state"
    new_state = state_json(3, [3], leader_epoch=5)
    run = WatchRun(opts)
    try:
        run.wait_snapshot()
        proxy.freeze()  # the capture hears nothing and is not heard: the server expires its session
        c.set(changed_path, new_state)
        c.delete(deleted_path)
        time.sleep(3.0)  # well past the 1 s session timeout
        proxy.thaw()
        lines = run.wait_for(lambda ls: find(ls, "changed", changed_path) and find(ls, "deleted", deleted_path))
    finally:
        result = run.finish()
        proxy.close()
    gaps = [ln for ln in lines if ln["kind"] == "gap"]
    assert len(gaps) == 1 and "session" in gaps[0]["reason"]
    # The gap comes first, then what the re-read after it found.
    assert lines.index(gaps[0]) < lines.index(find(lines, "changed", changed_path)[0])
    assert find(lines, "changed", changed_path)[0]["data"] == new_state.decode()
    assert len(result.manifest["sessions"]) == 2 and len(set(result.manifest["sessions"])) == 2
    c.stop()
    c.close()


def test_the_znode_dump_parser_reads_a_capture_folder(zk_server, tmp_path):
    """Interop with parsers/zookeeper/znode_dump.py through the dispatcher, as ingest would see the folder."""
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    c, _ = cluster(zk_server, "/interop")
    run = WatchRun(options(zk_server, "/interop", tmp_path / "out", watch_s=120))
    state = "/brokers/topics/orders/partitions/2/state"
    try:
        run.wait_snapshot()
        c.set(state, state_json(1, [1, 2], leader_epoch=4))
        run.wait_for(lambda ls: find(ls, "changed", state))
    finally:
        run.finish()
    kinds, counts, lines, accounted = set(), {}, 0, 0
    for f in sorted((tmp_path / "out").rglob("*")):
        if f.is_file():
            events, summary = parse_source(f.read_bytes(), SourceContext(path=str(f.relative_to(tmp_path))))
            kinds.add(summary.kind)
            assert summary.errors == [] and summary.quarantined == summary.unrecognized == 0, (f, summary.errors)
            lines += summary.lines
            accounted += summary.parsed + summary.other
            for ev in events:
                counts[ev.event_type] = counts.get(ev.event_type, 0) + 1
    assert kinds == {"znode_dump"} and lines == accounted
    # 9 partition states in the snapshot, and the one change the watch saw.
    assert counts["partition_state_observed"] == 10
    assert counts["broker_observed"] == 3
    c.stop()
    c.close()


# --- read-only, proven by the server's own transaction log ------------------------------------

def test_capture_writes_nothing_to_zookeeper(zk_server, tmp_path):
    c, _ = cluster(zk_server, "/ro")
    cap.run_capture(options(zk_server, "/ro", tmp_path / "snap"))
    run = WatchRun(options(zk_server, "/ro", tmp_path / "watch", watch_s=120))
    try:
        run.wait_snapshot()
        c.set("/brokers/topics/orders/partitions/0/state", state_json(2, [2, 3], leader_epoch=1))
        run.wait_for(lambda ls: len(ls) >= 1)
    finally:
        run.finish()
    writer = c.client_id[0]
    c.stop()
    c.close()

    sessions = [json.loads((tmp_path / d / "manifest.json").read_text())["sessions"] for d in ("snap", "watch")]
    ours = [int(s, 16) for ss in sessions for s in ss]
    assert len(ours) == 2
    txns = txns_by_session(zk_server.dump_txn_logs())
    # The check can fail: the writer's own session is in the same log with its writes.
    assert {"create", "multi", "setData"} <= {t for _, t in txns[writer]}
    for sid in ours:
        assert [t for _, t in txns[sid]] == ["createSession", "closeSession"], hex(sid)


# --- auth -------------------------------------------------------------------------------------

PASSWORD = "Pa55-w0rd-XYZZY"


@pytest.fixture(scope="module")
def secure(zk_server):
    """A tree every znode of which only digest user kafka may read."""
    acl = [make_digest_acl("kafka", PASSWORD, all=True)]
    c, written = cluster(zk_server, "/secure", auth_data=[("digest", f"kafka:{PASSWORD}")], default_acl=acl)
    assert c.get_acls("/brokers/topics/orders/partitions/0/state")[0] == acl
    yield written
    c.stop()
    c.close()


def test_digest_auth_reads_an_acl_protected_tree_and_keeps_the_password_out(zk_server, secure, tmp_path):
    res = cap.run_capture(options(zk_server, "/secure", tmp_path / "out", auth=("digest", f"kafka:{PASSWORD}")))
    recs = read_capture(tmp_path / "out")
    assert recs["/brokers/topics/orders/partitions/2/state"]["data"] == secure["/brokers/topics/orders/partitions/2/state"].decode()
    assert res.counts["partitions"] == 9
    blob = all_output_bytes(tmp_path / "out")
    assert PASSWORD.encode() not in blob and b"kafka:" not in blob


def test_wrong_or_missing_credentials_are_one_clear_error(zk_server, secure, tmp_path):
    for auth in (("digest", "kafka:not-the-password"), None):
        with pytest.raises(UserError, match="NoAuth") as e:
            cap.run_capture(options(zk_server, "/secure", tmp_path / "out", auth=auth))
        assert "not-the-password" not in str(e.value)
        assert not (tmp_path / "out").exists()  # nothing half-written


def test_an_auth_scheme_the_server_rejects(zk_server, secure, tmp_path):
    with pytest.raises(UserError, match="AUTH_FAILED"):
        cap.run_capture(options(zk_server, "/secure", tmp_path / "out", auth=("nosuchscheme", "x:y")))


# --- TLS ------------------------------------------------------------------------------------

def test_capture_over_tls_with_a_client_certificate(tmp_path):
    tls = TlsMaterial(tmp_path / "pki")
    server = ZkServer(tmp_path / "zk", tls=tls).start()
    try:
        c, written = cluster(server, "/tls")  # loaded through the plain port
        target = cap.parse_zk(server.secure_hosts + "/tls")
        good = cap.TlsFiles(str(tls.ca), str(tls.client_cert), str(tls.client_key))
        cap.check_tls(good)
        res = cap.run_capture(cap.CaptureOptions(target, tmp_path / "out", tls=good, timeout_s=10))
        assert res.manifest["tls"] is True and res.manifest["server"] == server.secure_hosts
        recs = read_capture(tmp_path / "out")
        assert recs["/brokers/topics/orders"]["data"] == written["/brokers/topics/orders"].decode()
        assert tls.client_key.read_bytes() not in all_output_bytes(tmp_path / "out")
        # A CA that did not sign the server's certificate, or no client certificate: no connection.
        for bad in (cap.TlsFiles(str(tls.other_ca), str(tls.client_cert), str(tls.client_key)),
                    cap.TlsFiles(str(tls.ca), None, None)):
            with pytest.raises(UserError, match="cannot connect"):
                cap.run_capture(cap.CaptureOptions(target, tmp_path / "bad", tls=bad, timeout_s=3))
        c.stop()
        c.close()
    finally:
        server.stop()


# --- user errors ------------------------------------------------------------------------------

def test_wrong_chroot_and_empty_cluster(zk_server, tmp_path):
    with pytest.raises(UserError, match="chroot /no-such-chroot does not exist"):
        cap.run_capture(options(zk_server, "/no-such-chroot", tmp_path / "a"))
    c = client(zk_server.hosts)
    c.create("/empty/brokers/ids", None, makepath=True)  # Kafka's skeleton, but no broker, topic or controller
    with pytest.raises(UserError, match="no Kafka cluster under /empty"):
        cap.run_capture(options(zk_server, "/empty", tmp_path / "b"))
    c.stop()
    c.close()
    # No chroot: the root holds no /brokers, but some chroot does: the message says where.
    cluster(zk_server, "/aaa-hint")[0].stop()
    with pytest.raises(UserError, match=r"no Kafka cluster under / .*did you mean --zk .*/aaa-hint"):
        cap.run_capture(options(zk_server, None, tmp_path / "c"))
    assert not any((tmp_path / d).exists() for d in "abc")


def _cli(*args, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("KAFKA_FORENSICS_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "forensics", "capture", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env=env)


def test_cli_user_errors_are_one_line_exit_2(zk_server, secure, tmp_path):
    cases = [
        (["--zk", f"127.0.0.1:{free_port()}", "--timeout", "2"], "cannot connect to ZooKeeper"),
        (["--zk", zk_server.hosts + "/no-such-chroot"], "does not exist"),
        (["--zk", zk_server.hosts + "/secure", "--auth", "digest:kafka:WRONG-PASSWORD-123"], "NoAuth"),
        (["--zk", zk_server.hosts + "/secure", "--watch", "soon"], "--watch"),
    ]
    for i, (args, needle) in enumerate(cases):
        r = _cli(*args, "--out", str(tmp_path / f"o{i}"))
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("kafka-forensics: error: "), r.stderr
        assert needle in r.stderr and "Traceback" not in r.stderr
        assert "WRONG-PASSWORD-123" not in r.stderr + r.stdout
        assert not (tmp_path / f"o{i}").exists()


def test_cli_watch_ends_cleanly_on_ctrl_c(zk_server, tmp_path):
    c, _ = cluster(zk_server, "/sigint")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "forensics", "capture", "--zk", zk_server.hosts + "/sigint",
                             "--out", str(out), "--watch", "forever", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        deadline = time.monotonic() + 60
        while not (out / "watch.jsonl").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else "slow"
            time.sleep(0.05)
        state = "/brokers/topics/orders/partitions/0/state"
        c.set(state, state_json(2, [2], leader_epoch=7))
        while not (out / "watch.jsonl").read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert stderr == "" and "1 change(s), 0 gap(s)" in stdout
    m = json.loads((out / "manifest.json").read_text())
    assert m["watch"]["ended_by"] == "interrupted" and m["watch"]["duration_s"] is None
    lines = [json.loads(ln) for ln in (out / "watch.jsonl").read_text().splitlines()]
    assert [(ln["kind"], ln["path"]) for ln in lines] == [("changed", state)]
    c.stop()
    c.close()


def test_cli_capture_with_an_auth_file(zk_server, secure, tmp_path):
    auth = tmp_path / "zk-auth"
    auth.write_text(f"digest:kafka:{PASSWORD}\n")
    r = _cli("--zk", zk_server.hosts + "/secure", "--auth-file", str(auth), "--out", str(tmp_path / "out"), "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" and "3 brokers, 3 topics, 9 partitions" in r.stdout
    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert m["chroot"] == "/secure" and m["znodes"] == len(read_capture(tmp_path / "out"))
    assert PASSWORD not in r.stdout + r.stderr
    assert PASSWORD.encode() not in all_output_bytes(tmp_path / "out")
