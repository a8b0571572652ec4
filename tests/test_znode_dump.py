"""zkCli / zookeeper-shell output and capture folders -> observed events."""
from __future__ import annotations

import json

from conftest import ZK_REAL
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source, sniff_kind
from parsers.zookeeper.snapshot import java_date
from parsers.zookeeper.znode_dump import java_date_ms

# What the operator in the seed incident saw (3.5+ zkCli, chroot /kafka_cluster_01), plus a
# broker, the controller, an `ls` and a topic in the same session.
ZKCLI = """\
Connecting to zk1:2181
Welcome to ZooKeeper!
JLine support is enabled
[zk: zk1:2181(CONNECTED) 0] ls /kafka_cluster_01/brokers/ids
[2, 3]
[zk: zk1:2181(CONNECTED) 1] get -s /kafka_cluster_01/brokers/topics/dw_test_kafka_0816000/partitions/101/state
{"controller_epoch":27,"leader":-1,"version":1,"leader_epoch":9,"isr":[1]}
cZxid = 0x300001a2b
ctime = Tue Aug 16 10:21:13 CST 2022
mZxid = 0x500000c3d
mtime = Wed Aug 17 09:02:44 CST 2022
pZxid = 0x300001a2b
cversion = 0
dataVersion = 12
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 73
numChildren = 0
[zk: zk1:2181(CONNECTED) 2] get -s /kafka_cluster_01/controller
{"version":1,"brokerid":2,"timestamp":"1660698164000"}
cZxid = 0x500000c01
ctime = Wed Aug 17 09:02:40 CST 2022
mZxid = 0x500000c01
mtime = Wed Aug 17 09:02:40 CST 2022
pZxid = 0x500000c01
cversion = 0
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x2000a1b2c3d0007
dataLength = 54
numChildren = 0
[zk: zk1:2181(CONNECTED) 3] get -s /kafka_cluster_01/brokers/ids/2
{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://b2:9092"],"jmx_port":-1,"host":"b2","timestamp":"1660000000000","port":9092,"version":4}
cZxid = 0x400000010
ctime = Tue Aug 09 07:06:40 CST 2022
mZxid = 0x400000010
mtime = Tue Aug 09 07:06:40 CST 2022
pZxid = 0x400000010
cversion = 0
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x2000a1b2c3d0007
dataLength = 160
numChildren = 0
[zk: zk1:2181(CONNECTED) 4] get -s /kafka_cluster_01/brokers/topics/dw_test_kafka_0816000
{"version":2,"partitions":{"101":[1],"102":[2]},"adding_replicas":{},"removing_replicas":{}}
cZxid = 0x300001a00
ctime = Tue Aug 16 10:21:13 CST 2022
mZxid = 0x300001a00
mtime = Tue Aug 16 10:21:13 CST 2022
pZxid = 0x300001a2b
cversion = 1
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 90
numChildren = 1
[zk: zk1:2181(CONNECTED) 5] quit
"""


def parse(text: str | bytes, name="zk-get.txt", tz="Asia/Shanghai"):
    data = text.encode() if isinstance(text, str) else text
    events, summary = parse_source(data, SourceContext(name, "c", None, tz))
    assert summary.balanced(), summary
    return events, summary


def test_zkcli_session_from_the_incident():
    assert sniff_kind("zk-get.txt", ZKCLI.encode()) == "znode_dump"
    events, s = parse(ZKCLI)
    assert [e.event_type for e in events] == ["partition_state_observed", "controller_observed",
                                              "broker_observed", "topic_assignment_observed"]
    st, ctl, brk, top = events
    assert (st.topic, st.partition, st.leader, st.isr, st.leader_epoch, st.controller_epoch, st.zk_version) == (
        "dw_test_kafka_0816000", 101, -1, [1], 9, 27, 12)
    assert st.zxid == 0x500000C3D and st.detail["chroot"] == "/kafka_cluster_01" and st.detail["via"] == "zkcli"
    assert st.ts == 1660698164 * 1_000_000  # 09:02:44 China Standard Time = 01:02:44Z
    assert "tz_assumed" not in st.detail
    assert (ctl.controller_id, ctl.session_id) == (2, 0x2000A1B2C3D0007)
    assert (brk.subject_broker, brk.detail["broker_epoch"], brk.detail["endpoints"]) == (2, 0x400000010, ["PLAINTEXT://b2:9092"])
    assert top.detail["assignment"] == {"101": [1], "102": [2]}
    assert s.lines == ZKCLI.count("\n") and s.parsed == 4 * 12 and s.unrecognized == 0


def test_old_get_without_s_and_zookeeper_shell_banner():
    # zookeeper-shell.sh host get /controller (ZooKeeper 3.4): banner, data, stat; no prompt, no command echo.
    text = ("Connecting to localhost:2181\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n"
            '{"version":1,"brokerid":3,"timestamp":"1500000000000"}\n'
            "cZxid = 0x1a\nctime = Fri Jul 14 02:40:00 UTC 2017\nmZxid = 0x1a\nmtime = Fri Jul 14 02:40:00 UTC 2017\n"
            "pZxid = 0x1a\ncversion = 0\ndataVersion = 0\naclVersion = 0\nephemeralOwner = 0x15d3e1f0a2b0001\n"
            "dataLength = 54\nnumChildren = 0\n"
            '{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":0,"isr":[2]}\n'
            "cZxid = 0x30\nctime = Fri Jul 14 02:41:00 UTC 2017\nmZxid = 0x30\nmtime = Fri Jul 14 02:41:00 UTC 2017\n"
            "pZxid = 0x30\ncversion = 0\ndataVersion = 0\naclVersion = 0\nephemeralOwner = 0x0\n"
            "dataLength = 72\nnumChildren = 0\n")
    events, s = parse(text, tz="UTC")
    # /controller's JSON names itself; a state znode without its path cannot be placed.
    assert [(e.event_type, e.controller_id, e.ts) for e in events] == [("controller_observed", 3, 1500000000 * 1_000_000)]
    assert s.unrecognized == 12 and s.parsed == 12 and s.samples[0].source_pos == 18


def test_zone_abbreviations():
    assert java_date_ms("Tue Aug 16 10:21:13 CST 2022", "Asia/Shanghai") == (1660616473000, False)
    assert java_date_ms("Tue Aug 16 10:21:13 CDT 2022", "UTC") == (1660663273000, False)  # unambiguous: -5
    assert java_date_ms("Tue Aug 16 10:21:13 CST 2022", "UTC") == (1660645273000, True)  # ambiguous: read in --tz
    assert java_date_ms("Tue Aug 16 10:21:13 GMT+08:00 2022", "UTC") == (1660616473000, False)
    assert java_date_ms("not a date", "UTC") == (None, False)


def test_bad_json_in_a_kafka_znode_is_quarantined_with_its_line():
    text = ("[zk: localhost:2181(CONNECTED) 0] get -s /brokers/topics/t/partitions/0/state\n"
            '{"controller_epoch":1,"leader":\n'
            "cZxid = 0x30\nctime = Fri Jul 14 02:41:00 UTC 2017\nmZxid = 0x30\nmtime = Fri Jul 14 02:41:00 UTC 2017\n"
            "pZxid = 0x30\ncversion = 0\ndataVersion = 0\naclVersion = 0\nephemeralOwner = 0x0\n"
            "dataLength = 30\nnumChildren = 0\n")
    events, s = parse(text)
    assert events == [] and s.quarantined == 12 and "line 2" in s.errors[0] and "not JSON" in s.errors[0]


def _render_get(path: str, node: dict, n: int) -> str:
    """zkCli 3.5+ `get -s` output for a node, from ZooKeeper's own restored tree (the independent truth)."""
    return "\n".join([
        f"[zk: localhost:2181(CONNECTED) {n}] get -s {path}", node["data"] if node["data"] is not None else "null",
        f"cZxid = {node['czxid']}", f"ctime = {java_date(node['ctime'])}", f"mZxid = {node['mzxid']}",
        f"mtime = {java_date(node['mtime'])}", f"pZxid = {node['pzxid']}", f"cversion = {node['cversion']}",
        f"dataVersion = {node['version']}", f"aclVersion = {node['aversion']}", f"ephemeralOwner = {node['ephemeralOwner']}",
        f"dataLength = {max(node['data_len'], 0)}", f"numChildren = {node['numChildren']}"]) + "\n"


def test_every_state_znode_of_a_real_cluster_read_back_from_zkcli_text():
    tree = json.loads((ZK_REAL / "s3_unclean_election" / "oracle" / "replayed_final_tree.json").read_text())
    truth = json.loads((ZK_REAL / "s3_unclean_election" / "ground_truth.json").read_text())
    nodes = {n["path"]: n for n in tree["nodes"]}
    text = "".join(_render_get(p, nodes[p], i) for i, p in enumerate(sorted(nodes)))
    events, s = parse(text, tz="UTC")
    states = {f"/brokers/topics/{e.topic}/partitions/{e.partition}/state": e
              for e in events if e.event_type == "partition_state_observed"}
    want = truth["final_state"]["partition_states"]
    assert set(states) == set(want)
    for p, w in want.items():
        e = states[p]
        assert (e.leader, e.isr, e.leader_epoch, e.zk_version, e.zxid, e.ts // 1000) == (
            w["state"]["leader"], w["state"]["isr"], w["state"]["leader_epoch"], w["zk_version"],
            int(w["mzxid"], 16), nodes[p]["mtime"] // 1000 * 1000)
    brokers = {e.subject_broker for e in events if e.event_type == "broker_observed"}
    assert brokers == {int(b) for b in truth["final_state"]["registered_brokers"]}
    assert s.lines == text.count("\n") and s.unrecognized == 0 and s.quarantined == 0


def test_capture_folder_files(tmp_path):
    znode = {"path": "/brokers/topics/t/partitions/0/state",
             "data": "{\"controller_epoch\":1,\"leader\":1,\"version\":1,\"leader_epoch\":0,\"isr\":[1,2]}",
             "data_b64": None,
             "stat": {"czxid": 4294967330, "mzxid": 4294967330, "ctime": 1700000000000, "mtime": 1700000000000,
                      "version": 0, "cversion": 0, "aversion": 0, "ephemeralOwner": 0, "pzxid": 4294967330,
                      "dataLength": 71, "numChildren": 0}}
    events, s = parse(json.dumps(znode), name="cap/znodes/brokers/topics/t/partitions/0/state.json")
    assert [(e.event_type, e.topic, e.partition, e.leader, e.isr, e.zxid, e.ts, e.detail["via"]) for e in events] == [
        ("partition_state_observed", "t", 0, 1, [1, 2], 4294967330, 1700000000000000, "capture")]
    manifest = {"format": "kafka-forensics-capture", "version": 1, "zk": "h:2181", "chroot": "/kafka", "znodes": 3}
    assert sniff_kind("cap/manifest.json", json.dumps(manifest).encode()) == "znode_dump"
    events, s = parse(json.dumps(manifest), name="cap/manifest.json")
    assert events == [] and s.other == 1 and "chroot '/kafka'" in s.notes[0]
    watch = "\n".join(json.dumps(x) for x in [
        {"seq": 1, "observed_ms": 1700000005000, "kind": "changed", "path": "/brokers/topics/t/partitions/0/state",
         "data": "{\"controller_epoch\":1,\"leader\":-1,\"version\":1,\"leader_epoch\":1,\"isr\":[2]}",
         "stat": {**znode["stat"], "mzxid": 4294967400, "mtime": 1700000004900, "version": 1}},
        {"seq": 2, "observed_ms": 1700000006000, "kind": "deleted", "path": "/brokers/ids/1"},
        {"seq": 3, "observed_ms": 1700000006500, "kind": "gap", "from_ms": 1700000006100, "to_ms": 1700000006400,
         "reason": "connection lost"},
        {"seq": 4, "observed_ms": 1700000007000, "kind": "deleted", "path": "/controller"},
    ]) + "\n{broken\n"
    assert sniff_kind("cap/watch.jsonl", watch.encode()) == "znode_dump"
    events, s = parse(watch, name="cap/watch.jsonl")
    assert [(e.event_type, e.leader, e.subject_broker, e.controller_id, e.ts) for e in events] == [
        ("partition_state_observed", -1, None, None, 1700000004900000),
        ("broker_observed", None, 1, None, 1700000006000000),
        ("controller_observed", None, None, -1, 1700000007000000)]
    assert events[1].detail["deleted"] is True
    assert s.lines == 5 and s.parsed == 3 and s.other == 1 and s.quarantined == 1
