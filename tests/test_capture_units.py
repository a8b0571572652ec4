"""capture's pure parts: option parsing, the file layout, trace diffs, the read-only guard.

Expectations are derived by hand from docs/capture-layout.md and ZooKeeper's connect-string rules.
"""
from __future__ import annotations

import base64
import math
from collections import namedtuple

import pytest

from forensics import capture as cap
from forensics.errors import UserError


def test_parse_zk_hosts_and_chroot():
    t = cap.parse_zk("zk1:2181, zk2:2182/kafka/")
    assert (t.hosts, t.chroot) == ("zk1:2181,zk2:2182", "/kafka")
    assert t.connect_string == "zk1:2181,zk2:2182/kafka"
    assert t.show("/brokers/ids/1") == "/kafka/brokers/ids/1" and t.show("/") == "/kafka"
    assert cap.parse_zk("[::1]:2181").hosts == "[::1]:2181"
    assert cap.parse_zk("localhost").chroot is None
    assert cap.parse_zk("h:2181/").chroot is None  # "/" is no chroot


@pytest.mark.parametrize("spec", ["", "/kafka", "h:2181,,h2:2181", "h:port", "h:70000", "h:2181//x", "user:pw@h:2181"])
def test_parse_zk_rejects(spec):
    with pytest.raises(UserError):
        cap.parse_zk(spec)


def test_parse_auth_never_echoes_the_credential():
    assert cap.parse_auth("digest:alice:s3cret") == ("digest", "alice:s3cret")
    for bad in ("digest", "digest:", ":x", "digest:nopassword", "di gest:a:b"):
        with pytest.raises(UserError) as e:
            cap.parse_auth(bad)
        assert "nopassword" not in str(e.value)


def test_auth_file(tmp_path):
    f = tmp_path / "auth"
    f.write_text("# who we are\ndigest:alice:s3cret\n")
    assert cap.read_auth_file(str(f)) == ("digest", "alice:s3cret")
    f.write_text("digest:alice\n")
    with pytest.raises(UserError) as e:
        cap.read_auth_file(str(f))
    assert "alice" not in str(e.value).replace(str(f), "")
    with pytest.raises(UserError):
        cap.read_auth_file(str(tmp_path / "missing"))


def test_parse_duration():
    assert cap.parse_duration("90") == 90 and cap.parse_duration("90s") == 90
    assert cap.parse_duration("10m") == 600 and cap.parse_duration("2h") == 7200
    assert cap.parse_duration("1.5s") == 1.5 and cap.parse_duration("forever") == math.inf
    for bad in ("0", "-1", "ten", "5 days"):
        with pytest.raises(UserError):
            cap.parse_duration(bad)


def test_znode_files_follow_the_layout():
    assert cap.znode_file("/controller") == "znodes/controller.json"
    assert cap.znode_file("/brokers/topics/t/partitions/0/state") == "znodes/brokers/topics/t/partitions/0/state.json"
    assert cap.znode_file("/brokers/topics/my.topic-1_x") == "znodes/brokers/topics/my.topic-1_x.json"
    # Kafka's cluster-wide broker config lives at /config/brokers/<default>
    assert cap.znode_file("/config/brokers/<default>") == "znodes/config/brokers/%3Cdefault%3E.json"
    assert cap.znode_file("/a/b c/ü") == "znodes/a/b%20c/%C3%BC.json"


def test_plan_files_reports_a_file_folder_clash_instead_of_dropping_it():
    files, errors = cap.plan_files(["/t", "/t/p", "/t.json", "/t.json/x"])
    # /t is stored as t.json, but /t.json has a child so it needs a folder t.json/: a clash.
    assert files == {"/t/p": "znodes/t/p.json", "/t.json": "znodes/t.json.json", "/t.json/x": "znodes/t.json/x.json"}
    assert len(errors) == 1 and errors[0].startswith("/t: not stored")
    assert cap.plan_files(["/a", "/a/b", "/a/b/c"])[1] == []


def test_data_fields_text_null_and_binary():
    assert cap.data_fields(None) == {"data": None, "data_b64": None}
    assert cap.data_fields(b"") == {"data": "", "data_b64": None}
    assert cap.data_fields(b'{"version":1}') == {"data": '{"version":1}', "data_b64": None}
    raw = b"\xff\x00\x01"
    assert cap.data_fields(raw) == {"data": None, "data_b64": base64.b64encode(raw).decode()}


def test_stat_dict_has_the_layout_fields_in_order():
    Stat = namedtuple("Stat", "czxid mzxid ctime mtime version cversion aversion ephemeralOwner dataLength numChildren pzxid")
    s = cap.stat_dict(Stat(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
    assert list(s) == ["czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion",
                       "ephemeralOwner", "pzxid", "dataLength", "numChildren"]
    assert s["pzxid"] == 11 and s["dataLength"] == 9


def _node(czxid, mzxid, data=b"x"):
    return cap.Node(data, {"czxid": czxid, "mzxid": mzxid})


def test_diff_nodes_after_a_gap():
    old = {"/a": _node(1, 1), "/b": _node(2, 2), "/c": _node(3, 3), "/gone": _node(4, 4)}
    new = {"/a": _node(1, 1), "/b": _node(2, 9), "/c": _node(8, 8), "/new": _node(7, 7)}
    lines = cap.diff_nodes(old, new)
    assert [(ln["kind"], ln["path"]) for ln in lines] == [
        ("deleted", "/gone"),
        ("created", "/new"),  # zxid 7
        ("deleted", "/c"), ("created", "/c"),  # re-created (czxid moved), zxid 8
        ("changed", "/b"),  # zxid 9
    ]
    assert lines[-1]["stat"]["mzxid"] == 9 and "stat" not in lines[0]


def test_leaf_rules():
    for p in ("/controller", "/brokers/ids/3", "/brokers/topics/t/partitions/0/state", "/config/topics/t",
              "/isr_change_notification/isr_change_0000000001", "/admin/delete_topics/t", "/cluster/id"):
        assert cap.is_leaf(p), p
    for p in ("/brokers", "/brokers/ids", "/brokers/topics/t", "/brokers/topics/t/partitions",
              "/brokers/topics/t/partitions/0", "/admin", "/admin/delete_topics", "/config/topics"):
        assert not cap.is_leaf(p), p


def test_the_read_only_guard_stops_writes_before_the_wire():
    from kazoo.protocol.serialization import (
        Create, Create2, Delete, Exists, GetChildren2, GetData, SetACL, SetData, Sync, Transaction,
    )

    sent = []
    allowed = frozenset(r.type for r in (Exists, GetData, GetChildren2))
    call = cap._guard_reads(lambda req, res: sent.append(req), allowed)
    call(GetData("/controller", None), None)
    call(Exists("/x", None), None)
    for req in (Create("/x", b"", [], 0), Create2("/x", b"", [], 0), SetData("/x", b"", -1), Delete("/x", -1),
                SetACL("/x", [], -1), Transaction([]), Sync("/x")):
        with pytest.raises(cap.ReadOnlyViolation):
            call(req, None)
    assert [type(r).__name__ for r in sent] == ["GetData", "Exists"]


def test_the_facade_has_no_write_method():
    names = {n for n in dir(cap.ReadOnlyZk) if not n.startswith("_")}
    writes = {"create", "create_async", "set", "set_async", "delete", "delete_async", "ensure_path",
              "ensure_path_async", "transaction", "set_acls", "set_acls_async", "reconfig", "sync", "add_auth"}
    assert names & writes == set()
    assert {"get", "children", "exists"} <= names


def test_manifest_holds_no_credentials(tmp_path):
    opts = cap.CaptureOptions(cap.parse_zk("zk:2181/k"), tmp_path, auth=("digest", "alice:s3cret"))
    log = cap.SessionLog(["0x1"], ["10.0.0.1:2181"])
    m = cap.manifest(opts, log, 1, 2, 10, [])
    assert "s3cret" not in repr(m) and "alice" not in repr(m)
    assert (m["format"], m["version"], m["zk"], m["chroot"], m["session_id"], m["server"]) == (
        "kafka-forensics-capture", 1, "zk:2181", "/k", "0x1", "10.0.0.1:2181")


def test_check_tls_names_the_bad_file(tmp_path):
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(UserError, match="--ca"):
        cap.check_tls(cap.TlsFiles(str(bad), None, None))
    with pytest.raises(UserError, match="no such file"):
        cap.check_tls(cap.TlsFiles(str(tmp_path / "nope.pem"), None, None))
    with pytest.raises(UserError, match="go together"):
        cap.check_tls(cap.TlsFiles(None, str(bad), None))


def test_out_folder_must_be_new_or_empty(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    with pytest.raises(UserError, match="not empty"):
        cap._prepare_out(tmp_path / "used")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="not a folder"):
        cap._prepare_out(tmp_path / "file")
    assert cap._prepare_out(tmp_path / "new" / "deeper") is True


# --- the watch logic over an in-memory ZooKeeper (failure paths a real server will not produce on demand)

Stat = namedtuple("Stat", "czxid mzxid ctime mtime version cversion aversion ephemeralOwner dataLength numChildren pzxid")


class _Result:
    def __init__(self, value=None, exc=None):
        self.value, self.exc = value, exc

    def get(self, timeout=None):
        if self.exc:
            raise self.exc
        return self.value


class FakeZk:
    """A tree of path -> (data, czxid, mzxid); ``slow`` paths time out like an overloaded server."""

    def __init__(self, tree):
        import queue

        self.tree, self.slow, self.connected = dict(tree), set(), True
        self.target = cap.ZkTarget("fake:2181", None)
        self.states = queue.Queue()
        self.log = cap.SessionLog(["0x1"], ["fake:2181"])

    def _stat(self, path):
        data, cz, mz = self.tree[path]
        kids = [p for p in self.tree if p.rsplit("/", 1)[0] == path and p != path]
        return Stat(cz, mz, cz, mz, 0, 0, 0, 0, len(data or b""), len(kids), cz)

    def get(self, path, watch=None):
        from kazoo.exceptions import NoNodeError
        from kazoo.handlers.threading import KazooTimeoutError

        if path in self.slow:
            return _Result(exc=KazooTimeoutError())
        if path not in self.tree:
            return _Result(exc=NoNodeError())
        return _Result((self.tree[path][0], self._stat(path)))

    def children(self, path, watch=None):
        from kazoo.exceptions import NoNodeError

        if path not in self.tree:
            return _Result(exc=NoNodeError())
        kids = sorted(p.rsplit("/", 1)[1] for p in self.tree if p.rsplit("/", 1)[0] == path and p != path)
        return _Result((kids, self._stat(path)))

    def exists(self, path, watch=None):
        return _Result(self._stat(path) if path in self.tree else None)


TREE = {
    "/brokers": (None, 1, 1), "/brokers/ids": (None, 2, 2), "/brokers/ids/1": (b"b1", 3, 3), "/brokers/ids/2": (b"b2", 4, 4),
    "/brokers/topics": (None, 5, 5), "/brokers/topics/t": (b"t", 6, 6), "/brokers/topics/t/partitions": (None, 7, 7),
    "/brokers/topics/t/partitions/0": (None, 8, 8), "/brokers/topics/t/partitions/0/state": (b"s0", 9, 9),
}


def _watch(zk, tmp_path):
    opts = cap.CaptureOptions(zk.target, tmp_path, timeout_s=0.1, watch_s=1)
    w = cap.Watch(zk, opts)
    reader = cap.TreeReader(zk, cap.ROOTS, window=10, timeout_s=0.1, watch=w.watchers)
    assert reader.run() == []
    w.known, w.kids = dict(reader.result.nodes), dict(reader.result.children)
    w.trace = cap.Trace(tmp_path / "watch.jsonl")
    return w


def _lines(tmp_path):
    import json

    return [json.loads(ln) for ln in (tmp_path / "watch.jsonl").read_text().splitlines()]


def test_a_reread_that_times_out_becomes_a_gap_and_a_resync(tmp_path):
    zk = FakeZk(TREE)
    w = _watch(zk, tmp_path)
    state = "/brokers/topics/t/partitions/0/state"
    zk.tree[state] = (b"s0-new", 9, 20)
    zk.slow.add(state)
    w.handle([("data", "CHANGED", state, 1000)])
    assert _lines(tmp_path) == [] and w.gap == [1000, "connection lost or reads timed out"]
    zk.slow.clear()
    w.handle(w._drain())  # the queued retry
    lines = _lines(tmp_path)
    assert [(ln["kind"], ln.get("path")) for ln in lines] == [("gap", None), ("changed", state)]
    assert lines[0]["from_ms"] == 1000 and lines[1]["data"] == "s0-new" and lines[1]["stat"]["mzxid"] == 20
    assert w.gap is None


def test_a_deletion_seen_only_in_the_parents_child_list_is_still_reported(tmp_path):
    zk = FakeZk(TREE)
    w = _watch(zk, tmp_path)
    del zk.tree["/brokers/ids/2"]
    w.handle([("child", "CHILD", "/brokers/ids", 2000)])  # the znode's own notification went missing
    assert [(ln["kind"], ln["path"], ln.get("children")) for ln in _lines(tmp_path)] == [
        ("children", "/brokers/ids", ["1"]), ("deleted", "/brokers/ids/2", None)]


def test_a_recreated_znode_is_deleted_then_created_and_an_unchanged_one_is_silent(tmp_path):
    zk = FakeZk(TREE)
    w = _watch(zk, tmp_path)
    zk.tree["/brokers/ids/1"] = (b"b1-again", 30, 30)  # new czxid: deleted and created in between
    w.handle([("data", "DELETED", "/brokers/ids/1", 3000), ("data", "CHANGED", "/brokers/topics/t", 3001)])
    assert [(ln["kind"], ln["path"]) for ln in _lines(tmp_path)] == [
        ("deleted", "/brokers/ids/1"), ("created", "/brokers/ids/1")]
