"""A range of a big broker log records its first entries' stamps (Chronology.lead, for merge_chronologies to judge
them against the ranges before); the compiled scan (parsers/broker_logs/_routine.c ``skip`` with a lead list)
records them as the Python scan's Chronology.see does: the entries not dated back, as (stamp, line), up to the cap.

The log is a real broker's (../shared/real_logs/AndreasTraut__kafka_2.13-2.8.0, its server.log files) with its
hourly files joined newest first, as a log gathered by hand is: every join dates the entries after it back, so
a range's recording runs on past many back-dated entries (what kept the compiled scan out of whole ranges
before: it ran only once the recording was over). Compared per range: the events field for field and the part
(summary, the chronology's lead, first, last and entries dated back, samples), compiled against Python; with
the real cap and with a cap of a few entries that C fills itself.
"""
from __future__ import annotations

import dataclasses
import gzip

import pytest
from conftest import REAL_LOGS

from parsers.broker_logs import broker_log_ranges, default_layout_scan
from parsers.broker_logs.broker_log_ranges import read_part
from parsers.common.context import SourceContext
from parsers.common.textranges import plan_ranges

LOGS = REAL_LOGS / "AndreasTraut__kafka_2.13-2.8.0" / "logs"


@pytest.fixture(scope="module")
def joined(tmp_path_factory):
    files = sorted(LOGS.glob("server.log*"), reverse=True)
    data = b"".join(gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes() for p in files)
    path = tmp_path_factory.mktemp("lead") / "server.log"
    path.write_bytes(data)
    return path


class _Recording:
    """Wraps _routine.skip: counts the entries it took while a lead list was handed to it."""

    def __init__(self, real):
        self.real, self.taken = real, 0

    def skip(self, lines, i, *rest):
        got = self.real.skip(lines, i, *rest)
        if len(rest) > 6 and rest[6] is not None:
            self.taken += got[0] - i
        return got


def _parts(path, compiled: bool, range_bytes: int) -> list:
    old = default_layout_scan.COMPILED
    default_layout_scan.COMPILED = compiled
    out = []
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            plan = plan_ranges(fh, size, range_bytes)
        for start, _end, first_no, owned in plan:
            for kind, got in read_part(str(path), size, SourceContext("x/server.log", "c", None), start, first_no,
                                       owned, False):
                if kind == "events":
                    out.append([e.as_row() for e in got])
                else:
                    out.append({**got, "samples": [dataclasses.asdict(q) for q in got["samples"]]})
    finally:
        default_layout_scan.COMPILED = old
    return out


@pytest.mark.parametrize("cap", [broker_log_ranges.LEAD_CAP, 5])
def test_a_ranges_lead_is_recorded_by_the_compiled_scan_as_by_python(joined, monkeypatch, cap):
    assert default_layout_scan.LEAD_IN_C, "the C extension was not built (python setup.py build_ext --inplace)"
    monkeypatch.setattr(broker_log_ranges, "LEAD_CAP", cap)
    rec = _Recording(default_layout_scan._routine)
    monkeypatch.setattr(default_layout_scan, "_routine", rec)
    compiled = _parts(joined, True, 400_000)
    python = _parts(joined, False, 400_000)
    assert compiled == python
    parts = [p for p in compiled if isinstance(p, dict)]
    assert len(parts) >= 4
    leads = [p["state"]["chron"]["lead"] for p in parts[1:]]
    if cap < 100:
        assert all(len(lead) == cap for lead in leads)  # each range after the first filled its lead
    else:
        assert all(0 < len(lead) < cap for lead in leads)  # the recording lasted the whole range
    assert any(p["state"]["chron"]["backwards"] for p in parts)  # the joins dated entries back
    assert rec.taken > 1000  # C took entries while a range was recording
