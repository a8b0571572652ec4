"""The benchmark corpus and the audit tree: layout, determinism, size, well-formed lines our parsers read."""
from __future__ import annotations

import gzip
import re
from pathlib import Path

from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from samplegen.corpus import AuditSpec, CorpusSpec, write_audit_tree, write_corpus

HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) .* \(([^()]+)\)$")
ROLLED = re.compile(r"^(server|controller|state-change)\.log(\.\d{4}-\d\d-\d\d-\d\d(\.gz)?)?$")

SMALL = CorpusSpec(brokers=4, partitions=2000, days=0.5, size_bytes=6_000_000, gzip_fraction=0.5, seed=7,
                   incidents_per_day=6, start="2023-03-01")


def _text(p: Path) -> str:
    data = p.read_bytes()
    return (gzip.decompress(data) if p.name.endswith(".gz") else data).decode("utf-8")


def test_corpus_layout_size_order_and_parsing(tmp_path):
    stats = write_corpus(SMALL, tmp_path)
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert {p.parent.name for p in files} == {f"broker-{b}" for b in range(1, 5)}
    assert all(ROLLED.match(p.name) for p in files), [p.name for p in files if not ROLLED.match(p.name)]
    rolled = [p for p in files if re.search(r"\.\d{4}-\d\d-\d\d-\d\d(\.gz)?$", p.name)]
    gz = [p for p in rolled if p.name.endswith(".gz")]
    assert 0.25 < len(gz) / len(rolled) < 0.75  # gzip_fraction 0.5
    raw = sum(len(_text(p).encode()) for p in files)
    assert raw == stats.raw_bytes and 0.85 * SMALL.size_bytes < raw < 1.25 * SMALL.size_bytes
    lines = 0
    for p in files:
        prev = ""
        for line in _text(p).splitlines():
            m = HEADER.match(line)
            if m:
                assert m.group(1) >= prev, f"{p.name}: time goes back"
                prev = m.group(1)
                lines += 1
            else:  # stack frames and the config dump
                assert line.startswith("\t") or line.startswith("kafka.common.") or line.startswith(" (") \
                    or line.startswith("[") and "KafkaConfig values:" in line, line[:100]
        events, s = parse_source(p.read_bytes(), SourceContext(path=str(p.relative_to(tmp_path))))
        assert s.unrecognized == 0 and s.quarantined == 0 and s.balanced(), p.name
    assert lines > 10_000
    # Incidents happened and left the controller's and the state machines' lines.
    everything = "".join(_text(p) for p in files)
    assert "deleted brokers: " in everything and "Newly added brokers: " in everything
    assert "(Leader:-1," in everything  # RF 1 partitions of a dead broker
    assert "from OfflinePartition to OnlinePartition with state LeaderAndIsr(" in everything


def test_corpus_is_deterministic_per_seed(tmp_path):
    spec = CorpusSpec(brokers=3, partitions=300, days=0.1, size_bytes=400_000, seed=5, incidents_per_day=0)
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    write_corpus(spec, a)
    write_corpus(spec, b)
    write_corpus(CorpusSpec(**{**spec.__dict__, "seed": 6}), c)
    fa = {p.relative_to(a): p.read_bytes() for p in a.rglob("*") if p.is_file()}
    fb = {p.relative_to(b): p.read_bytes() for p in b.rglob("*") if p.is_file()}
    fc = {p.relative_to(c): p.read_bytes() for p in c.rglob("*") if p.is_file()}
    assert fa == fb
    assert fa != fc


def test_audit_tree_layout(tmp_path):
    stats = write_audit_tree(AuditSpec(clusters=3, days=4, brokers=3, bytes_per_file=20_000, seed=2), tmp_path)
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    pat = re.compile(r"^cluster=[\w-]+/date=2023-01-0[1-4]/broker=[1-3]/(server|controller|state-change)\.log\.gz$")
    assert files and all(pat.match(f) for f in files), [f for f in files if not pat.match(f)][:3]
    servers = [f for f in files if f.endswith("/server.log.gz")]
    assert len(servers) == 3 * 4 * 3  # every cluster, day and broker
    assert len({f.split("/")[0] for f in files}) == 3
    assert stats.files == len(files)
    day = tmp_path / servers[0]
    stamps = {m.group(1)[:10] for m in map(HEADER.match, _text(day).splitlines()) if m}
    assert stamps == {servers[0].split("date=")[1][:10]}  # a day's file holds that UTC day only



def _partitions_named(root: Path) -> set[str]:
    # Kafka's own spelling of a TopicPartition in the Log/ProducerStateManager lines: "partition=<topic>-<n>".
    named = re.compile(r"partition=([A-Za-z0-9._-]+-\d+)[,\]]")
    return {m for p in root.rglob("*.log.gz") for m in named.findall(_text(p))}


def test_audit_cli_partitions_and_incidents(tmp_path):
    from samplegen.__main__ import main

    args = ["audit", "--clusters", "1", "--days", "1", "--brokers", "4", "--mb-per-file", "2", "--seed", "3"]
    assert main(args + ["--out", str(tmp_path / "default")]) == 0
    assert len(_partitions_named(tmp_path / "default")) == AuditSpec.partitions
    assert main(args + ["--out", str(tmp_path / "wide"), "--partitions", "1200", "--incidents-per-day", "0"]) == 0
    wide = _partitions_named(tmp_path / "wide")
    assert len(wide) == 1200  # every partition asked for writes its routine lines, and no other
    per_topic: dict[str, set[int]] = {}
    for tp in wide:
        topic, n = tp.rsplit("-", 1)
        per_topic.setdefault(topic, set()).add(int(n))
    assert all(ns == set(range(len(ns))) for ns in per_topic.values())  # numbered 0..k-1 in each topic
    quiet = "".join(_text(p) for p in (tmp_path / "wide").rglob("*.log.gz"))
    assert "deleted brokers: " not in quiet  # --incidents-per-day 0: no broker failed
    assert main(args + ["--out", str(tmp_path / "busy"), "--partitions", "1200", "--incidents-per-day", "12"]) == 0
    busy = "".join(_text(p) for p in (tmp_path / "busy").rglob("*.log.gz"))
    assert "deleted brokers: " in busy
