"""The bundled KRaft sample (sample_logs/kraft_broker_fenced): deterministic, well-formed, in Kafka
3.9.0's own words, and saying what its hand-written expected.json says.

expected.json is derived by hand from the scenario (see the sample's README.md); these tests read
the generated *files* (log lines, the metadata log's records), not the simulator's internals.
"""
from __future__ import annotations

import gzip
import re
import struct

import pytest

from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.kraft.records import read_metadata_log
from samplegen.__main__ import main as samplegen_main
from samplegen.kafka.templates39 import REAL_39, TEMPLATES
from samplegen.kraft_samples import write_kraft_sample
from samplegen.kraft_scenarios import KRAFT_SCENARIOS
from tests.conftest import SAMPLES
from tests.test_samplegen_samples import EXCEPTION, HEADER, HEADER_OPEN, expected, log_ms, ms, read_text
from tests.test_samplegen_templates import real_lines

NAME = "kraft_broker_fenced"
SAMPLE = SAMPLES / NAME
EXP = expected(NAME)


def log_files() -> list:
    return sorted(p for p in SAMPLE.glob("kafka-*/*") if p.is_file())


def entries(kind: str) -> list[tuple[int, int, str, str, str]]:
    """(ms, node, level, message, logger) of every entry of one log kind, over all nodes and hours."""
    out = []
    for p in log_files():
        if p.name.startswith(kind + ".log"):
            node = int(p.parent.name.rsplit("-", 1)[1])
            out += [(log_ms(m.group(1)), node, m.group(2), m.group(3), m.group(4))
                    for m in map(HEADER.match, read_text(p).splitlines()) if m]
    return sorted(out)


# --- the files ---------------------------------------------------------------------------------------

def _tree(root) -> dict:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_regenerating_gives_identical_files(tmp_path):
    """Twice from scratch: byte-identical; against the committed files: identical content (.gz compared
    decompressed: other zlib builds compress differently)."""
    write_kraft_sample(KRAFT_SCENARIOS[NAME], tmp_path / "a")
    assert samplegen_main(["samples", "--out", str(tmp_path / "b"), "--only", NAME]) == 0
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b" / NAME)
    assert a == b
    committed = {rel: data for rel, data in _tree(SAMPLE).items() if rel.name not in ("README.md", "expected.json")}
    assert sorted(a) == sorted(committed), "regenerate with: python -m samplegen samples --out sample_logs"
    for rel, data in a.items():
        other = committed[rel]
        if rel.suffix == ".gz":
            data, other = gzip.decompress(data), gzip.decompress(other)
        assert data == other, f"{NAME}/{rel} differs from a fresh generation"


def test_sample_is_small():
    assert sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file()) < 1_000_000


def test_every_line_is_a_log4j_entry_or_its_continuation_in_time_order():
    for p in log_files():
        prev = 0
        for i, line in enumerate(read_text(p).splitlines(), 1):
            m = HEADER.match(line) or HEADER_OPEN.match(line)
            if m:
                t = log_ms(m.group(1))
                assert t >= prev, f"{p}:{i} goes back in time"
                prev = t
            else:
                assert line.startswith("\t") or EXCEPTION.match(line), f"{p}:{i}: {line[:120]!r}"


def test_our_parsers_read_every_file_without_unrecognized_lines():
    kinds = set()
    for p in sorted(SAMPLE.rglob("*")):
        if not p.is_file() or p.name in ("README.md", "expected.json"):
            continue
        rel = str(p.relative_to(SAMPLE))
        events, s = parse_source(p.read_bytes(), SourceContext(path=rel))
        assert s.balanced(), rel
        assert s.unrecognized == 0 and s.quarantined == 0 and not s.errors, (rel, [q.raw[:100] for q in s.samples[:3]])
        assert s.lines > 0 and events, rel
        kinds.add(events[0].source_kind)
    assert kinds == {"broker_log", "kraft_metadata"}


# --- Kafka 3.9.0's words --------------------------------------------------------------------------------

def _real_instance(t) -> str | None:
    folder = REAL_39 if t.evidence == "real" else t.evidence.split(":", 1)[1]
    shape, suffix = t.shape(), f" ({t.logger})"
    for level, rest in real_lines(folder):
        if level == t.level and rest.endswith(suffix) and shape.match(rest[: -len(suffix)]):
            return rest
    return None


@pytest.mark.parametrize("name", sorted(n for n, t in TEMPLATES.items() if t.evidence != "source"))
def test_template_has_a_real_instance(name):
    t = TEMPLATES[name]
    assert _real_instance(t) is not None, f"no real {t.evidence} line of template {name!r}: {t.text[:120]}"


def test_source_only_templates_are_few_and_known():
    # The empty-log activation line: a cluster's very first start, which no real log at hand shows for 3.9
    # (4.0's real line is the same without the ZooKeeper sentence).
    assert sorted(n for n, t in TEMPLATES.items() if t.evidence == "source") == ["qc_activation_empty"]


# --- the metadata log -------------------------------------------------------------------------------------

def _crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), bit by bit: independent of the library the encoder uses."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _table() -> list[int]:
    out = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        out.append(c)
    return out


_CRC_TABLE = _table()


def segment() -> bytes:
    return (SAMPLE / EXP["metadata_log"]).read_bytes()


def test_segment_batches_are_what_kafka_accepts():
    """Record batch v2 headers read by hand: contiguous offsets, magic 2, the Raft epoch, a valid CRC."""
    data, pos, next_offset = segment(), 0, 0
    while pos < len(data):
        base, length, epoch, magic, crc = struct.unpack_from(">qiibI", data, pos)
        count = struct.unpack_from(">i", data, pos + 57)[0]
        assert (base, magic, epoch) == (next_offset, 2, EXP["controllers"][0]["epoch"])
        assert crc == _crc32c(data[pos + 21: pos + 12 + length])
        next_offset, pos = base + count, pos + 12 + length
    assert pos == len(data)


def records() -> list[tuple[int, int, str, int, dict]]:
    """(offset, append time, record name, version, fields) in log order."""
    return [(it.record.offset, it.record.timestamp, it.decoded.name, it.decoded.version, it.decoded.fields)
            for it in read_metadata_log(segment())]


def test_metadata_log_is_a_39_controllers():
    recs = records()
    c = EXP["controllers"][0]
    first = recs[0]
    assert first[2] == "LeaderChangeMessage" and first[4]["leaderId"] == c["node"]
    assert [v["voterId"] for v in first[4]["voters"]] == c["voters"]
    assert abs(first[1] - ms(c["from"])) <= c["tolerance_ms"]
    assert [r[0] for r in recs] == list(range(len(recs)))
    assert ("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 21}) in [(r[2], r[4]) for r in recs]
    # what Kafka 3.9 writes at metadata.version 3.9-IV0 (the real 3.7 segment has the same versions)
    versions = {(r[2], r[3]) for r in recs}
    assert {("RegisterBrokerRecord", 3), ("PartitionRecord", 1), ("PartitionChangeRecord", 1),
            ("BrokerRegistrationChangeRecord", 0)} <= versions
    noops = [r[1] for r in recs if r[2] == "NoOpRecord"]
    assert max(b - a for a, b in zip(noops, noops[1:])) < 600  # metadata.max.idle.interval.ms = 500


def _topics(recs) -> dict[str, str]:
    return {f["topicId"]: f["name"] for _, _, name, _, f in recs if name == "TopicRecord"}


def partition_history(recs) -> dict[tuple[str, int], list[tuple[int, int, dict]]]:
    """(topic, partition) -> [(offset, time, state after the record)], the state merged from the deltas."""
    names = _topics(recs)
    out: dict = {}
    for off, ts, name, _, f in recs:
        if name == "PartitionRecord":
            state = {"leader": f["leader"], "isr": f["isr"], "leader_epoch": f["leaderEpoch"],
                     "partition_epoch": f["partitionEpoch"], "replicas": f["replicas"]}
        elif name == "PartitionChangeRecord":
            prev = out[(names[f["topicId"]], f["partitionId"])][-1][2]
            state = dict(prev, partition_epoch=prev["partition_epoch"] + 1)
            if "isr" in f:
                state["isr"] = f["isr"]
            if "leader" in f:  # 3.9: the leader epoch moves with the leader only
                state["leader"], state["leader_epoch"] = f["leader"], prev["leader_epoch"] + 1
        else:
            continue
        out.setdefault((names[f["topicId"]], f["partitionId"]), []).append((off, ts, state))
    return out


def test_leaderless_partitions_and_intervals_match_expected():
    recs = records()
    hist = partition_history(recs)
    down = {tp for tp, states in hist.items() if any(s["leader"] == -1 for _, _, s in states)}
    want = {(g["topic"], p) for g in EXP["leaderless"] for p in g["partitions"]}
    assert down == want and len(want) == EXP["leaderless_total"]
    f = EXP["broker_failures"][0]
    for g in EXP["leaderless"]:
        tol = g["tolerance_ms"]
        for p in g["partitions"]:
            states = hist[(g["topic"], p)]
            i = next(k for k, (_, _, s) in enumerate(states) if s["leader"] == -1)
            off, ts, state = states[i]
            assert abs(ts - ms(g["start"])) <= tol
            assert {k: state[k] for k in g["state_while_leaderless"]} == g["state_while_leaderless"]
            # the same batch ends with the fence of the broker: Kafka writes the changes first
            fence = next(r for r in recs if r[0] > off and r[2] == "BrokerRegistrationChangeRecord")
            assert fence[1] == ts and fence[4]["brokerId"] == f["broker"] and fence[4]["fenced"] == 1
            off2, ts2, after = states[i + 1]
            assert abs(ts2 - ms(g["end"])) <= tol
            assert {k: after[k] for k in g["state_after"]} == g["state_after"]


def test_orders_fails_over_rejoins_and_gets_its_preferred_leaders_back():
    hist = partition_history(records())
    exp = EXP["not_leaderless"][0]
    f = EXP["broker_failures"][0]
    back = exp["preferred_leaders_restored"]
    for p in range(6):
        states = [s for _, _, s in hist[("orders", p)]]
        assert all(s["leader"] >= 0 for s in states), p
        at_fence = [s for _, ts, s in hist[("orders", p)] if abs(ts - ms(f["fenced_at"])) <= f["tolerance_ms"]]
        assert at_fence[-1]["isr"] == exp["isr_after_fence"][str(p)]
        assert at_fence[-1]["leader"] == exp["leaders_after_fence"].get(str(p), states[0]["leader"])
        if str(p) in exp["leader_epoch_after_fence"]:
            assert at_fence[-1]["leader_epoch"] == exp["leader_epoch_after_fence"][str(p)]
        assert exp["isr_after_rejoin"][str(p)] in [s["isr"] for s in states]
    for p in back["partitions"]:
        moves = [(ts, s) for _, ts, s in hist[("orders", p)] if s["leader"] == back["leader"] and s["leader_epoch"] > 0]
        assert len(moves) == 1 and abs(moves[0][0] - ms(back["at"])) <= back["tolerance_ms"]
        assert moves[0][1]["leader_epoch"] == back["leader_epoch"]
    for p in EXP["not_leaderless"][1]["partitions"]:
        assert len(hist[("payments", p)]) == 1  # created, never changed


def test_broker_2_was_fenced_by_its_session_timeout_not_shut_down():
    f = EXP["broker_failures"][0]
    b, tol = f["broker"], f["tolerance_ms"]
    recs = records()
    regs = [r for r in recs if r[2] == "RegisterBrokerRecord" and r[4]["brokerId"] == b]
    assert [r[4]["brokerEpoch"] for r in regs] == [r[0] for r in regs]  # the broker epoch is the record's offset
    assert len({r[4]["incarnationId"] for r in regs}) == 2 and abs(regs[1][1] - ms(f["registered_at"])) <= tol
    changes = [(r[1], r[4]) for r in recs if r[2] == "BrokerRegistrationChangeRecord" and r[4]["brokerId"] == b]
    assert [c["fenced"] for _, c in changes] == [-1, 1, -1]
    assert changes[1][1]["brokerEpoch"] == regs[0][0] and changes[2][1]["brokerEpoch"] == regs[1][0]
    assert abs(changes[1][0] - ms(f["fenced_at"])) <= tol and abs(changes[2][0] - ms(f["unfenced_at"])) <= tol
    assert changes[1][0] - ms(f["last_heartbeat_at"]) >= 9000  # broker.session.timeout.ms
    assert not any(r[2] == "UnregisterBrokerRecord" for r in recs)
    ctl = entries("controller")
    fencing = [e for e in ctl if e[3].endswith(f"Fencing broker {b} because its session has timed out.")]
    assert len(fencing) == 1 and abs(fencing[0][0] - ms(f["fenced_at"])) <= tol
    assert any(e[3].endswith(f"handleBrokerFenced: changing {f['fenced_partition_changes']} partition(s)") for e in ctl)
    assert any(f"Registering a new incarnation of broker {b}." in e[3] for e in ctl)
    own = [e for e in entries("server") + entries("state-change") if e[1] == b]
    assert not any(ms(f["died_at"]) < e[0] < ms(f["restarted_at"]) for e in own), "broker 2 logged while dead"
    assert not any("controlled shutdown" in e[3] for e in own)
    assert any(e[3] == f"[BrokerLifecycleManager id={b}] The broker has been unfenced. Transitioning from RECOVERY to "
                      "RUNNING." and e[0] > ms(f["restarted_at"]) for e in own)
    others = entries("server")
    assert {e[1] for e in others if re.search(rf"leaderId={b}, fetcherId=0\] Error sending fetch request", e[3])
            and ms(f["died_at"]) <= e[0] < ms(f["fenced_at"])} == {1, 3}
