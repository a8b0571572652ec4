"""The bundled samples (sample_logs/): deterministic, small, well-formed, readable by our parsers and
ZooKeeper's own tool, and saying what their hand-written expected.json says.

expected.json is derived by hand from each scenario's script (see the sample's README.md);
these tests read the generated *files* (log lines, ZooKeeper txns, the zkCli transcript),
not the simulator's internals, and compare.
"""
from __future__ import annotations

import datetime as dt
import gzip
import json
import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from samplegen.samples import write_sample
from samplegen.scenarios import SCENARIOS
from tests.conftest import SAMPLES
from tests.zk_server import ZK_JAR

NAMES = sorted(SCENARIOS)
HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (.*) \(([^()]+)\)$")
HEADER_OPEN = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ")
EXCEPTION = re.compile(r"^[a-z][\w.$]*\.[A-Z]\w*(Exception|Error)(: .*)?$")


def ms(iso: str) -> int:
    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def log_ms(stamp: str) -> int:
    d = dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=dt.timezone.utc)
    return int(d.timestamp() * 1000)


def read_text(p: Path) -> str:
    data = p.read_bytes()
    return (gzip.decompress(data) if p.suffix == ".gz" else data).decode("utf-8")


def broker_log_files(sample: Path) -> list[Path]:
    return sorted(p for p in sample.glob("kafka-broker-*/*") if p.is_file())


def entries(sample: Path, kind: str) -> list[tuple[int, int, str, str, str]]:
    """(ms, broker, level, message, logger) of every entry of one log kind, over all brokers and hours."""
    out = []
    for p in broker_log_files(sample):
        if not p.name.startswith(kind + ".log"):
            continue
        broker = int(p.parent.name.rsplit("-", 1)[1])
        for line in read_text(p).splitlines():
            m = HEADER.match(line)
            if m:
                out.append((log_ms(m.group(1)), broker, m.group(2), m.group(3), m.group(4)))
    return sorted(out)


def expected(name: str) -> dict:
    return json.loads((SAMPLES / name / "expected.json").read_text())


# --- the files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_regenerating_gives_identical_files(name, tmp_path):
    """Twice from scratch: byte-identical. Against the committed files: identical content (gzip bytes
    may differ with another zlib build, so .gz files are compared decompressed)."""
    write_sample(SCENARIOS[name], tmp_path / "a")
    write_sample(SCENARIOS[name], tmp_path / "b")
    a = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()}
    b = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file()}
    assert a == b
    committed = {p.relative_to(SAMPLES / name): p.read_bytes() for p in (SAMPLES / name).rglob("*")
                 if p.is_file() and p.name not in ("README.md", "expected.json")}
    assert sorted(a) == sorted(committed), "regenerate with: python -m samplegen samples --out sample_logs"
    for rel, data in a.items():
        if rel.suffix == ".gz":
            data, other = gzip.decompress(data), gzip.decompress(committed[rel])
        else:
            other = committed[rel]
        assert data == other, f"{name}/{rel} differs from a fresh generation"


def test_samples_are_small():
    total = sum(p.stat().st_size for p in SAMPLES.rglob("*") if p.is_file())
    assert total < 5_000_000, total


@pytest.mark.parametrize("name", NAMES)
def test_every_line_is_a_log4j_entry_or_its_continuation_in_time_order(name):
    for p in broker_log_files(SAMPLES / name):
        prev = 0
        in_multiline_message = False
        for i, line in enumerate(read_text(p).splitlines(), 1):
            m = HEADER.match(line)
            if m:
                t = log_ms(m.group(1))
                assert t >= prev, f"{p}:{i} goes back in time"
                prev = t
                in_multiline_message = False
                continue
            opened = HEADER_OPEN.match(line)
            if opened:  # a message spanning lines: the logger closes its last line
                t = log_ms(opened.group(1))
                assert t >= prev, f"{p}:{i} goes back in time"
                prev, in_multiline_message = t, True
                continue
            ok = line.startswith("\t") or EXCEPTION.match(line) or (in_multiline_message and re.fullmatch(r" \([\w.$]+\)", line))
            assert ok, f"{p}:{i} is neither an entry nor a continuation: {line[:120]!r}"


@pytest.mark.parametrize("name", NAMES)
def test_our_parsers_read_every_file_without_unrecognized_lines(name):
    sample = SAMPLES / name
    for p in sorted(sample.rglob("*")):
        if not p.is_file() or p.name in ("README.md", "expected.json"):
            continue
        rel = str(p.relative_to(sample))
        events, s = parse_source(p.read_bytes(), SourceContext(path=rel))
        assert s.balanced(), rel
        assert s.unrecognized == 0 and s.quarantined == 0, (rel, [q.raw[:100] for q in s.samples[:3]])
        assert s.lines > 0, rel


# --- ZooKeeper ---------------------------------------------------------------------------------

def zk_entries(path: Path) -> list[dict]:
    """An independent reader: header, then long crc, int len, entry, 'B' until a zero length."""
    data = path.read_bytes()
    assert data[:4] == b"ZKLG" and struct.unpack_from(">i", data, 4)[0] == 2
    pos, out = 16, []
    while pos + 12 <= len(data):
        crc, n = struct.unpack_from(">qi", data, pos)
        if n == 0:
            break
        entry = data[pos + 12: pos + 12 + n]
        assert data[pos + 12 + n] == 0x42, f"no end-of-record marker at {pos}"
        assert crc == zlib.adler32(entry), f"Adler32 mismatch at {pos}"
        sid, cxid, zxid, time_ms, op = struct.unpack_from(">qiqqi", entry, 0)
        out.append({"zxid": zxid, "time": time_ms, "op": op, "body": entry[32:], "session": sid})
        pos += 12 + n + 1
    assert not any(data[pos:]), "non-zero bytes after the last txn (the preallocated tail must be zeros)"
    return out


def _ustring(b: bytes, pos: int) -> tuple[str, int]:
    n = struct.unpack_from(">i", b, pos)[0]
    return b[pos + 4: pos + 4 + n].decode(), pos + 4 + n


def state_writes(entries: list[dict]) -> list[tuple[int, str, dict]]:
    """(txn time, state path, JSON) of every setData/create of a partition state inside a multi."""
    out = []
    for e in entries:
        if e["op"] != 14:
            continue
        b = e["body"]
        n = struct.unpack_from(">i", b, 0)[0]
        pos = 4
        for _ in range(n):
            op, blen = struct.unpack_from(">ii", b, pos)
            sub = b[pos + 8: pos + 8 + blen]
            pos += 8 + blen
            if op in (1, 5):
                path, p2 = _ustring(sub, 0)
                dlen = struct.unpack_from(">i", sub, p2)[0]
                if path.endswith("/state") and dlen > 0:
                    out.append((e["time"], path, json.loads(sub[p2 + 4: p2 + 4 + dlen])))
    return out


def zk_log(name: str) -> Path:
    logs = list((SAMPLES / name / "zookeeper" / "version-2").glob("log.*"))
    assert len(logs) == 1
    return logs[0]


@pytest.mark.parametrize("name", NAMES)
def test_zk_log_name_is_its_first_zxid_and_checksums_hold(name):
    p = zk_log(name)
    es = zk_entries(p)
    assert p.name == f"log.{es[0]['zxid']:x}"
    assert [e["zxid"] for e in es] == list(range(es[0]["zxid"], es[0]["zxid"] + len(es)))
    assert all(a["time"] <= b["time"] for a, b in zip(es, es[1:]))


@pytest.mark.parametrize("name", NAMES)
def test_zookeepers_own_toolkit_reads_every_txn(name, tmp_path):
    # ZooKeeper's own jar is the oracle: missing, the test fails (CI installs Debian's zookeeper package)
    assert ZK_JAR.is_file(), f"ZooKeeper is not installed ({ZK_JAR} missing): apt-get install -y zookeeper"
    p = zk_log(name)
    n = len(zk_entries(p))
    # TxnLogToolkit refuses nothing silently: it stops at the first bad CRC or partial record.
    res = subprocess.run(
        ["java", "-Duser.timezone=UTC", "-cp", str(ZK_JAR), "org.apache.zookeeper.server.persistence.TxnLogToolkit",
         "--dump", str(p)], capture_output=True, timeout=120)
    out = res.stdout.decode("utf-8", "replace")
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert f"EOF reached after {n} txns." in out
    assert "CRC" not in out and "partial" not in out.lower()


# --- the findings --------------------------------------------------------------------------------

def _leaderless_checks(name: str) -> None:
    exp = expected(name)
    sc = entries(SAMPLES / name, "state-change")
    writes = state_writes(zk_entries(zk_log(name)))
    minus = {(path, t) for t, path, d in writes if d["leader"] == -1}
    minus_parts = {re.search(r"/brokers/topics/([^/]+)/partitions/(\d+)/state$", p).groups() for p, _ in minus}
    want = {(g["topic"], str(p)) for g in exp["leaderless"] for p in g["partitions"]}
    assert minus_parts == want, "partitions given leader -1 in ZooKeeper"
    assert exp["leaderless_total"] == len(want)
    for g in exp["leaderless"]:
        start, end, tol = ms(g["start"]), ms(g["end"]), g["tolerance_ms"]
        for p in g["partitions"]:
            tp = f"{g['topic']}-{p}"
            path = f"/brokers/topics/{g['topic']}/partitions/{p}/state"
            ws = [(t, d) for t, q, d in writes if q.endswith(path)]
            down = [(t, d) for t, d in ws if d["leader"] == -1]
            assert len(down) == 1 and start <= down[0][0] <= start + tol, (tp, down)
            st = g["state_while_leaderless"]
            assert {k: down[0][1][k] for k in ("leader", "isr", "leader_epoch", "controller_epoch")} == \
                {k: st[k] for k in ("leader", "isr", "leader_epoch", "controller_epoch")}
            up = [(t, d) for t, d in ws if t > down[0][0] and d["leader"] >= 0]
            assert up and end <= up[0][0] <= end + tol, (tp, up[:1])
            assert up[0][1]["leader"] == g["state_after"]["leader"] and up[0][1]["leader_epoch"] == g["state_after"]["leader_epoch"]
            # The logs say the same: a failed election, the leader -1 write, then a successful election.
            failed = [e for e in sc if f"failed to change state for partition {tp} from OfflinePartition" in e[3]]
            removed = [e for e in sc if f"Partition {tp} state changed to (Leader:-1," in e[3]]
            elected = [e for e in sc if f"Changed partition {tp} from OfflinePartition to OnlinePartition" in e[3]
                       and e[0] >= end]
            assert failed and removed and elected, tp
            assert start <= failed[0][0] <= removed[0][0] <= start + tol < end <= elected[0][0] <= end + tol


@pytest.mark.parametrize("name", NAMES)
def test_leaderless_partitions_and_intervals_match_expected(name):
    _leaderless_checks(name)


@pytest.mark.parametrize("name", NAMES)
def test_broker_failures_and_controllers_match_expected(name):
    exp = expected(name)
    ctl = entries(SAMPLES / name, "controller")
    es = zk_entries(zk_log(name))
    for f in exp["broker_failures"]:
        b = f["broker"]
        # a refused start (restart_refused) logs for a second and exits: not the broker living on
        refused = [ms(x["started"]) for x in exp.get("failed_starts", []) if x["broker"] == b]
        srv = [e for e in entries(SAMPLES / name, "server") if e[1] == b and not any(r <= e[0] < r + 10_000 for r in refused)]
        assert max(e[0] for e in srv if e[0] < ms(f["restarted_at"])) < ms(f["died_at"]), "broker logs after its death"
        closes = [e for e in es if e["op"] == -11 and e["time"] == ms(f["session_expired_at"])]
        assert len(closes) == 1 and struct.unpack_from(">i", closes[0]["body"], 0)[0] == 1  # one ephemeral deleted
        change = [e for e in ctl if f"deleted brokers: {b}," in e[3]]
        assert [e[0] for e in change] == [ms(f["detected_at"])]
        back = [e for e in ctl if f"Newly added brokers: {b}," in e[3] and e[0] > ms(f["died_at"])]
        assert back[0][0] == ms(f["registered_at"]) + 12
        assert not any("Starting controlled shutdown" in e[3] for e in srv if e[0] <= ms(f["died_at"]))
    for c in exp["controllers"]:
        won = [e for e in ctl if re.search(rf"\] {c['broker']} successfully elected as the controller\. Epoch incremented to {c['epoch']} ", e[3])]
        assert len(won) == 1 and abs(won[0][0] - ms(c["from"])) <= c["tolerance_ms"], (c, won)
    assert sum("successfully elected as the controller" in e[3] for e in ctl) == len(exp["controllers"])


def test_rf1_zkcli_shows_leader_minus_one_with_isr_1():
    exp = expected("rf1_broker_kill")["zkcli"]
    text = (SAMPLES / "rf1_broker_kill" / exp["file"]).read_text()
    lines = text.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.endswith(f"get -s {exp['znode']}"))
    assert json.loads(lines[i + 1]) == exp["data"]
    assert f"dataVersion = {exp['dataVersion']}" in lines
    assert "mtime = Mon Aug 16 10:32:23 UTC 2021" in lines


def test_rf1_partition_101_lives_on_broker_1_only():
    es = zk_entries(zk_log("rf1_broker_kill"))
    for e in es:
        if e["op"] == 15:
            path, pos = _ustring(e["body"], 0)
            if path.endswith("/brokers/topics/dw_test_kafka_0816000"):
                n = struct.unpack_from(">i", e["body"], pos)[0]
                assert json.loads(e["body"][pos + 4: pos + 4 + n])["partitions"]["101"] == [1]
                return
    pytest.fail("topic creation not in the txn log")


def test_rf1_clients_report_the_outage_in_their_own_words():
    exp = expected("rf1_broker_kill")["client_errors"]
    java = (SAMPLES / "rf1_broker_kill" / exp[0]["file"]).read_text()
    go = (SAMPLES / "rf1_broker_kill" / exp[1]["file"]).read_text()
    for p in exp[0]["partitions"]:
        assert re.search(rf"Expiring \d+ record\(s\) for dw_test_kafka_0816000-{p}:12\d{{4}} ms has passed since batch creation", java)
        assert f"on topic-partition dw_test_kafka_0816000-{p}, retrying (2147483646 attempts left). Error: NETWORK_EXCEPTION" in java
    assert "client/metadata found some partitions to be leaderless" in go
    for p in exp[1]["partitions"]:
        assert f"producer/leader/dw_test_kafka_0816000/{p} state change to [retrying-1]" in go
    assert "there is currently no leader for this partition and hence it is unavailable for writes." in go


def test_controller_failover_moves_leaders_and_back_without_a_gap():
    exp = expected("controller_failover")
    sc = entries(SAMPLES / "controller_failover", "state-change")
    cs = exp["controlled_shutdowns"][0]
    for tp, leader in cs["leaders_moved"].items():
        moved = [e for e in sc if f"Changed partition {tp} from OnlinePartition to OnlinePartition with state LeaderAndIsr(leader={leader}," in e[3]]
        assert moved and ms(cs["at"]) <= moved[0][0] < ms(cs["at"]) + 1000, tp
    back = exp["preferred_leaders_restored"]
    for tp in back["partitions"]:
        restored = [e for e in sc if f"Changed partition {tp} from OnlinePartition to OnlinePartition with state LeaderAndIsr(leader=1," in e[3]]
        assert restored and abs(restored[0][0] - ms(back["at"])) <= back["tolerance_ms"], tp
    srv = entries(SAMPLES / "controller_failover", "server")
    assert any(e[1] == 1 and "Controlled shutdown succeeded" in e[3] for e in srv)
    assert not any("failed to change state" in e[3] or "(Leader:-1," in e[3] for e in sc)


def test_unclean_election_loses_the_offsets_expected():
    u = expected("unclean_election")["unclean_elections"][0]
    sample = SAMPLES / "unclean_election"
    sc, srv = entries(sample, "state-change"), entries(sample, "server")
    tp = f"{u['topic']}-{u['partition']}"
    at = ms(u["at"])
    changed = [e for e in sc if f"Changed partition {tp} from OfflinePartition to OnlinePartition with state "
               f"LeaderAndIsr(leader={u['new_leader']}, leaderEpoch={u['leader_epoch']}, isr=List({u['new_leader']})," in e[3]]
    assert changed and at <= changed[0][0] <= at + u["tolerance_ms"]
    starts = [e for e in sc if e[1] == u["new_leader"] and
              f"Leader {tp} starts at leader epoch {u['leader_epoch']} from offset {u['new_leader_log_end_offset']} " in e[3]]
    assert starts
    # The old leader's log, as it reloads it after the restart, and its truncation on becoming follower.
    loaded = [e for e in srv if e[1] == u["old_leader"] and f"logEndOffset={u['old_leader_log_end_offset']})" in e[3]
              and f"/{tp}, " in e[3]]
    truncated = [e for e in srv if e[1] == u["old_leader"] and f"[Log partition={tp}, " in e[3]
                 and f"Truncating to offset {u['lost_offsets']['from']}" in e[3]]
    assert loaded and truncated
    assert u["lost_messages"] == u["lost_offsets"]["to_exclusive"] - u["lost_offsets"]["from"]
    shrink = [e for e in srv if f"[Partition {tp} broker={u['old_leader']}] Shrinking ISR from 1,2 to 1." in e[3]]
    assert shrink
