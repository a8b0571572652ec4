"""The bad-input matrix end to end: ``kafka-forensics postmortem`` (its ``main``, in this process on the shared
Spark session: what the user sees on stdout and stderr and the exit code), on a folder where every kind of damage
sits beside real evidence, and on a folder with nothing usable. No traceback, every problem named with its file and
position in the report, the answer from what is valid unchanged. The command in a process of its own, as a user
runs it: tests/test_postmortem_samples.py."""
from __future__ import annotations

import gzip
import json
import shutil
import tarfile
import io
from datetime import datetime
from pathlib import Path

import pytest

from conftest import SAMPLES, ZK_REAL
from parsers.zookeeper.snapshot import read_snapshot
from parsers.zookeeper.txnlog import read_txnlog
from test_robustness_inputs import _with_bad_json

pytestmark = pytest.mark.spark

def postmortem(cli, src: Path, out: Path):
    return cli("postmortem", src, "--out", out, "--master", "local[2]")


def _gz(p: Path) -> bytes:
    return gzip.decompress(p.read_bytes())


def build_damaged_evidence(d: Path) -> dict[str, str]:
    """The unclean_election sample plus damaged copies of its own files (so what is valid in them
    repeats the sample and the answer must not change), damaged ZooKeeper files of a second cluster,
    and junk. Returns file (relative) -> a piece of the message that must name it."""
    sample = SAMPLES / "unclean_election"
    shutil.copytree(sample, d, ignore=shutil.ignore_patterns("README.md", "expected.json"))
    b1, b2, b3 = d / "kafka-broker-1", d / "kafka-broker-2", d / "kafka-broker-3"
    expect = {}

    gz = (b1 / "server.log.2021-10-21-14.gz").read_bytes()
    (b1 / "server.log.2021-10-21-13.gz").write_bytes(gz[: len(gz) // 2])
    expect["kafka-broker-1/server.log.2021-10-21-13.gz"] = f"gzip stream truncated at compressed byte {len(gz) // 2}"
    gz = (b2 / "server.log.2021-10-21-14.gz").read_bytes()
    (b2 / "server.log.2021-10-21-14.gz").write_bytes(gz + b"\r\n-- copied by scp --\r\n")
    expect["kafka-broker-2/server.log.2021-10-21-14.gz"] = f"trailing garbage after gzip data at byte {len(gz)}"

    sc = (b3 / "state-change.log").read_bytes()
    lines = sc.split(b"\n")
    cut = b"\n".join(lines[:40]) + b"\n" + lines[40][: len(lines[40]) // 2]
    (b3 / "state-change.log.2021-10-21-15").write_bytes(cut)  # a duplicated rotation, cut mid-line
    expect["kafka-broker-3/state-change.log.2021-10-21-15"] = "line 41: the file ends inside this line (cut mid-line)"

    server = (b2 / "server.log").read_bytes().split(b"\n")
    junk = server[:10] + [b"\x00\x00\x00\x00\x07\x08\x01\x02\x03\x04\x05\x06\x0e\x0f"] + server[10:]
    (b2 / "server.log").write_bytes(b"\r\n".join(junk))  # CRLF, and binary junk at line 11
    expect["kafka-broker-2/server.log"] = "line 11: binary data in a text log; quarantined"

    huge = b"[2021-10-21 15:10:00,000] INFO " + b"x" * (10 << 20) + b" (kafka.server.KafkaServer)\n"
    (b3 / "server.log.2021-10-21-16").write_bytes(b"[2021-10-21 15:09:59,000] INFO h\xf6st caf\xe9 (a.b)\n" + huge)
    expect["kafka-broker-3/server.log.2021-10-21-16"] = f"line 2: {len(huge) - 1} bytes long; only the first"

    # a second cluster: real ZooKeeper files of another scenario, damaged
    zk = d / "cluster=zk-damaged" / "version-2"
    zk.mkdir(parents=True)
    src = ZK_REAL / "s1_single_replica_kill" / "version-2"
    shutil.copy(src / "log.1", zk / "log.1")
    data, bad_json = _with_bad_json((src / "log.38").read_bytes(), b"/state")
    txns = read_txnlog(data).txns
    bad = bytearray(data)
    bad[txns[len(txns) // 2].offset + 40] ^= 0x01
    (zk / "log.38").write_bytes(bytes(bad))
    expect["cluster=zk-damaged/version-2/log.38"] = f"byte {txns[len(txns) // 2].offset} (zxid "
    last = read_txnlog((src / "log.6b").read_bytes()).txns[-1]
    (zk / "log.6b").write_bytes((src / "log.6b").read_bytes()[: last.offset + 30])
    expect["cluster=zk-damaged/version-2/log.6b"] = f"bytes {last.offset}-{last.offset + 30}: entry length"
    (zk / "log.b6").write_bytes(b"ZKXX" + (src / "log.b6").read_bytes()[4:])
    expect["cluster=zk-damaged/version-2/log.b6"] = "wrong magic 0x5a4b5858 at byte 0"
    snap = (src / "snapshot.69").read_bytes()
    (zk / "snapshot.69").write_bytes(snap[: read_snapshot(snap).nodes[20].offset + 5])
    expect["cluster=zk-damaged/version-2/snapshot.69"] = "byte"

    # things that are not evidence
    (d / "oncall.txt").write_text("called the on-call at 14:45\n")
    expect["oncall.txt"] = "no line has a log header this tool recognises"
    (d / "screenshot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    expect["screenshot.png"] = "binary file of unknown format"
    (d / "empty.log").write_bytes(b"")
    (d / "kafka-broker-1" / "loop").symlink_to("..")
    with tarfile.open(d / "from-ops.tgz", "w:gz") as tf:
        for name, body in (("../../escape.log", b"x\n"), ("ops/readme.txt", b"nothing here\n")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))
    return expect | {"_bad_json": bad_json.offset}


def ms(iso):
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000


def test_postmortem_on_damaged_evidence_names_every_problem_and_keeps_the_answer(cli, tmp_path):
    ev = tmp_path / "evidence"
    expect = build_damaged_evidence(ev)
    bad_json_at = expect.pop("_bad_json")
    out = tmp_path / "out"
    proc = postmortem(cli, ev, out)
    assert proc.returncode == 1, proc.stderr[-3000:]  # analysed, leaderless partitions found
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    report = json.loads((out / "report.json").read_text())
    summary = json.loads((out / "ingest_summary.json").read_text())

    # every file is accounted for: lines == parsed + other + unrecognized + quarantined
    for f in summary["files"]:
        assert f["lines"] == f["parsed"] + f["other"] + f["unrecognized"] + f["quarantined"], f["path"]
    errors = {f["path"][len(str(ev)) + 1:]: f["errors"] for f in report["inputs"]["files_with_errors"]}
    for rel, piece in expect.items():
        assert any(piece in e for e in errors.get(rel, [])), (rel, errors.get(rel))
    # named on the terminal too, each with its first problem, up to 10, then how many more
    shown = [rel for rel in errors if f"\n  {ev}/{rel}: {errors[rel][0]}" in proc.stdout]
    assert len(shown) == 10 and f"... {len(errors) - 10} more file(s) with errors" in proc.stdout
    assert any(f"byte {bad_json_at} " in e and "/state" in e for e in errors["cluster=zk-damaged/version-2/log.38"])
    notes = {f["path"][len(str(ev)) + 1:]: f["notes"] for f in summary["files"]}
    assert any("not valid UTF-8 (first at line 1)" in n for n in notes["kafka-broker-3/server.log.2021-10-21-16"])
    assert summary["file_kinds"]["empty"] == 1 and summary["file_kinds"]["doc"] >= 1

    findings = [f["text"] for f in report["findings"] if f["kind"] in ("input_problem", "log_copy")]
    assert any(t.startswith(f"{ev}/from-ops.tgz: 1 member(s) refused") and "../../escape.log" in t for t in findings)
    assert any("symlink loop, not followed again" in t for t in findings)
    assert any(f"of {ev}/kafka-broker-3/state-change.log.2021-10-21-15 (first at line " in t and
               t.endswith("a rotated or duplicated copy; counted once") for t in findings)
    assert sorted(report["summary"]["clusters"]) == ["evidence", "zk-damaged"]

    # the answer from what is valid is the sample's own (expected.json, written from the scenario)
    exp = json.loads((SAMPLES / "unclean_election" / "expected.json").read_text())
    mine = [i for i in report["incidents"] if i["cluster"] == "evidence"
            and i["cause_kind"] not in ("leader_failover", "unclean_election")]
    for want in exp["leaderless"]:
        (got,) = [i for i in mine if i["topic"] == want["topic"]]
        assert sorted(got["partitions"]) == sorted(want["partitions"]) and got["cause_kind"] == want["cause"]
        assert abs(ms(got["start"]) - ms(want["start"])) <= want["tolerance_ms"]
        assert abs(ms(got["end"]) - ms(want["end"])) <= want["tolerance_ms"]
    assert sum(i["count"] for i in mine) == exp["leaderless_total"]
    (loss,) = [u for u in report["data_loss"] if u["cluster"] == "evidence"]
    assert loss["lost_messages"] == exp["unclean_elections"][0]["lost_messages"]
    ag = [c for c in report["replay"]["clusters"] if c["cluster"] == "evidence"][0]["agreement"]
    assert ag["agreed"] == ag["compared"] > 0


def test_postmortem_on_a_folder_without_evidence_is_one_line_exit_2(cli, tmp_path):
    d = tmp_path / "nothing"
    (d / "empty-dir").mkdir(parents=True)
    (d / "todo.txt").write_text("buy milk\n")
    (d / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4)
    (d / "empty.log").write_bytes(b"")
    (d / "self").symlink_to("self")
    proc = postmortem(cli, d, tmp_path / "out")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("kafka-forensics: error:")]
    assert line.startswith("kafka-forensics: error: no Kafka or ZooKeeper evidence found in 3 file(s) (")
    assert "binary file of unknown format" in line and "no line has a log header" in line
    assert f"{d}/self: cannot read" in line
    assert not (tmp_path / "out" / "report.json").exists()
