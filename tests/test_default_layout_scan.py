"""The fast path for Kafka's default layout (whole-text lines, parsers.broker_logs.default_layout_scan) gives
exactly what the reference path (line by line, parsers.broker_logs.log4j_layout.iter_entries) gives: the same
events, field for field, and the same per-file accounting, on every real log we have and on
files made to hit each corner the fast path hands back to the general code."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.broker_logs import default_layout_scan
from parsers.broker_logs.broker_log import parse_broker_log
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.dispatch import sniff_kind
from conftest import DEFAULT_CLUSTERS, REAL_LOGS, SAMPLES, per_cluster


def _both(data: bytes, path: str = "x/server.log", tz: str = "UTC"):
    out = []
    for fast in (True, False):
        s = FileSummary(path=path, kind="broker_log")
        evs = parse_broker_log(data, SourceContext(path, "c", None, tz), s, fast=fast)
        doc = s.to_json()
        doc["samples"] = [vars(q) for q in s.samples]
        out.append(([e.as_row() for e in evs], doc))
    return out


def _broker_logs(root: Path) -> list[Path]:
    found = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.suffix not in (".tsv", ".md") and sniff_kind(str(p), p.read_bytes()) == "broker_log":
            found.append(p)
    return found


ROOTS = [SAMPLES] + sorted(p for p in REAL_LOGS.iterdir() if p.is_dir())


@pytest.mark.parametrize("root", per_cluster(ROOTS, lambda p: p.name, DEFAULT_CLUSTERS | {SAMPLES.name}))
def test_every_real_and_sample_log_parses_the_same_on_both_paths(root):
    files = _broker_logs(root)  # none in a folder of ZooKeeper or KRaft files alone
    fast_taken = 0
    for p in files:
        (fast_ev, fast_doc), (ref_ev, ref_doc) = _both(p.read_bytes(), str(p))
        assert fast_doc == ref_doc, p
        assert fast_ev == ref_ev, p
        fast_taken += fast_doc["lines"] > 0
    assert fast_taken == len(files)


@pytest.mark.corpus
def test_the_corpus_holds_the_broker_logs():
    assert sum(len(_broker_logs(r)) for r in ROOTS) > 1000  # the real corpus is here, not an empty folder


HEAD = "[2024-03-10 01:59:58,100] INFO [KafkaServer id=2] started (kafka.server.KafkaServer)"
# Each corner the strict header regex leaves to the general code, plus what must not change the fast path.
LINES = [
    "[2024-03-10 02:00:01,200] INFO [Controller id=2] Newly added brokers: 3, deleted brokers: , all live brokers: 2,3 "
    "(kafka.controller.KafkaController)",
    "[2024-03-10 02:00:02,000] WARNING [ReplicaManager broker=2] something odd (kafka.server.ReplicaManager)",
    "[2024-03-10 02:00:03,000] INFO [GroupCoordinator 2]: Preparing to rebalance group g (kafka.coordinator.group."
    "GroupCoordinator) [group-metadata-manager-0]",
    "[2024-13-10 02:00:04,000] INFO bad month (kafka.log.Log)",
    "[2024-03-10 02:00:60,000] INFO leap second (kafka.log.Log)",
    "[2024-03-10T02:00:05.000+01:00] INFO zoned stamp (kafka.log.Log)",
    "[2024-03-10 02:00:06,000] INFO no logger at all",
    "[2024-03-10 02:00:07,000] INFO  (kafka.log.Log)",
    "[2024-03-10 02:00:08,000] INFO a (b c) (d e)",
    "[2024-03-10 02:00:09,000] ERROR [Controller id=2 epoch=7] Controller 2 epoch 7 failed to change state for partition "
    "t-0 from OfflinePartition to OnlinePartition (state.change.logger)",
    "kafka.common.NoReplicaOnlineException: No replica in ISR for partition t-0 is alive. Live brokers are: [Set()], "
    "ISR brokers are: [1]",
    "\tat kafka.controller.OfflinePartitionLeaderElectionStrategy.leaderForOffline(PartitionLeaderSelector.scala:64)",
    "[2024-03-10 01:00:00,000] INFO an hour back (kafka.log.LogCleaner)",
    "[2024-03-10 02:00:10,000] INFO [Partition t-0 broker=2] Shrinking ISR from 2,1 to 2. Leader: (highWatermark: 5, "
    "endOffset: 9). Out of sync replicas: (brokerId: 1, endOffset: 5). (kafka.cluster.Partition)",
    "junk \x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c binary",
    "[2024-03-10 02:00:11,000] INFO Rolled new log segment at offset 9 in 1 ms. (kafka.log.Log)",
    "   continuation with spaces",
    "[2024-03-10 02:00:12,000] INFO [SocketServer listenerType=ZK_BROKER, nodeId=2] Started (kafka.network.SocketServer)",
    "[2024-03-1",
]


@pytest.mark.parametrize("tz", ["UTC", "Europe/Berlin", "America/New_York"])
def test_each_corner_case_line_parses_the_same_on_both_paths(tz):
    for i, line in enumerate(LINES):
        for text in (f"{HEAD}\n{line}\n{HEAD}\n", f"{line}\n{HEAD}\n", f"{HEAD}\n{line}"):
            fast, ref = _both(text.encode(), tz=tz)
            assert fast == ref, (i, text)


def test_whole_file_of_corners_plain_and_gzip_parses_the_same():
    text = "\n".join([HEAD] + LINES * 3 + [HEAD]) + "\n"
    for data in (text.encode(), gzip.compress(text.encode()), text.encode()[:-7]):
        fast, ref = _both(data, tz="America/New_York")
        assert fast == ref
        assert fast[1]["lines"] == 2 + 3 * len(LINES)  # the cut copy loses 7 bytes of its last line, not the line


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([HEAD] + LINES), min_size=1, max_size=40), st.booleans(),
       st.sampled_from(["UTC", "Europe/Berlin"]))
def test_any_mix_of_lines_parses_the_same_on_both_paths(lines, terminated, tz):
    text = "\n".join(lines) + ("\n" if terminated else "")
    fast, ref = _both(text.encode(), tz=tz)
    assert fast == ref


# A 3.x broker's configuration as it starts (NikhilDighe9975__kafka_setup/logs/server.log.2024-07-18-19.gz:126-422):
# "[2024-07-18 18:07:50,333] INFO KafkaConfig values: " names no logger (the strict header does not take it), then
# 295 tab-indented "key = value" lines, then " (kafka.server.KafkaConfig)" closes it.
CONFIG_LOG = REAL_LOGS / "NikhilDighe9975__kafka_setup/logs/server.log.2024-07-18-19.gz"


def test_a_real_configuration_dump_is_read_as_the_reference_reads_it_without_parsing_its_lines_as_headers(monkeypatch):
    lines = gzip.decompress(CONFIG_LOG.read_bytes()).decode().splitlines()
    assert lines[125].endswith("INFO KafkaConfig values: ") and lines[421] == " (kafka.server.KafkaConfig)"
    asked = []
    real = default_layout_scan.header_of

    def header_of(parse, line_no, text, open_entry):
        asked.append(text)
        return real(parse, line_no, text, open_entry)

    monkeypatch.setattr(default_layout_scan, "header_of", header_of)
    for part in (lines[125:425], lines[126:425], lines[100:130]):  # whole, without its header (strays), cut
        fast, ref = _both(("\n".join(part) + "\n").encode())
        assert fast == ref
    fast, _ = _both(("\n".join(lines[125:425]) + "\n").encode())
    config = [e for e in fast[0] if e["event_type"] == "broker_config"]
    assert len(config) == 1 and config[0]["source_pos"] == 1 and '"broker.id":"0"' in config[0]["detail"]
    assert fast[1]["parsed"] == 297  # the entry's 297 lines
    # no line that cannot be a header of Kafka's layout (it does not start with '[') was parsed as one
    assert asked and not any(t[:1] != "[" for t in asked)
