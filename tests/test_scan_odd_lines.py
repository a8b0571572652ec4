"""The per-line scan of Kafka's own layout (``default_layout_scan.scan``, what ``parse_broker_log`` runs)
gives what the reference path gives (``parse_broker_log(fast=False)``: ``log4j_layout.iter_entries`` then
the rules) on a real controller log with odd lines spliced in: the same events, field for field, the same
``FileSummary`` JSON (line accounting, writer ids, first/last stamps, entries dated behind the latest, notes
with their line numbers) and the same quarantine samples."""
from __future__ import annotations

import gzip

import pytest

from parsers.broker_logs.broker_log import parse_broker_log
from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from tests.conftest import REAL_LOGS

CONTROLLER_LOG = REAL_LOGS / "CodingCookieRookie__CS3219_TASKD" / "logs" / "controller.log.2021-11-12-22.gz"


def _run(data: bytes, fast: bool, path: str = "x/controller.log") -> tuple[list, dict]:
    s = FileSummary(path=path, kind="broker_log")
    evs = parse_broker_log(data, SourceContext(path, "c", None, "UTC"), s, fast=fast)
    doc = s.to_json()
    doc["samples"] = [vars(q) for q in s.samples]
    return [e.as_row() for e in evs], doc


ODD = [
    "[2021-11-12 22:10:05,000] INFO Broker 3 (kafka.utils.ZkUtils)",
    "[2021-11-12 22:10:05,004] INFO [Controller id=\u0661\u0662] Ready (kafka.controller.KafkaController)",
    "[2021-11-12 22:10:05,006] INFO [Controller id=7] caf\u00e9 (kafka.controller.KafkaController)",
    # re's \d takes any decimal digit: a stamp in Arabic-Indic digits must not be taken for the latest time
    "[202\u0661-11-12 22:10:05,007] INFO unicode digits in the stamp (kafka.log.Log)",
    "[2021-13-12 22:10:05,008] INFO month 13 (kafka.log.Log)",
    "    continuation of the month-13 entry",
    "[2021-11-12 22:10:05,009] WARNING [Controller id=1] another level word (kafka.controller.KafkaController)",
    "[2021-11-12 22:10:05,010] INFO no logger at all",
    "[2021-11-12 20:00:00,000] INFO [Controller id=1] two hours back (kafka.controller.KafkaController)",
    "[2021-11-12 22:1",
]


@pytest.mark.parametrize("where", [0, 1, 200, -1])
def test_a_real_log_with_odd_lines_reads_the_same_on_the_scan_and_the_reference(where):
    lines = gzip.decompress(CONTROLLER_LOG.read_bytes()).decode().splitlines()
    at = len(lines) if where == -1 else where
    data = ("\n".join(lines[:at] + ODD + lines[at:]) + "\n").encode()
    fast, ref = _run(data, True), _run(data, False)
    assert fast == ref
    assert ref[1]["lines"] == len(lines) + len(ODD)
