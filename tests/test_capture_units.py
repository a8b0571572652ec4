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
