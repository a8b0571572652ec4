"""The report's broker line: a restart the evidence shows only as a new registration (KIP-380's bounce: a new
broker epoch, 2.2+ ``KafkaController.processBrokerChange``) is not a downtime of zero length."""
from __future__ import annotations

from forensics.report.render import _brokers_line


def _replay(periods):
    return {"brokers": [{"broker": 3, "periods": periods}]}


def test_a_bounce_reads_as_a_restart_and_a_real_down_keeps_its_span():
    periods = [
        {"state": "up", "start": "2024-01-01T00:00:00.000Z", "end": "2024-01-01T01:00:00.000Z", "end_cause": "bounced"},
        {"state": "down", "start": "2024-01-01T01:00:00.000Z", "end": "2024-01-01T01:00:00.000Z", "end_cause": None},
        {"state": "up", "start": "2024-01-01T01:00:00.000Z", "end": "2024-01-01T02:00:00.000Z", "end_cause": "halted"},
        {"state": "down", "start": "2024-01-01T02:00:00.000Z", "end": "2024-01-01T02:05:00.000Z", "end_cause": None},
        {"state": "up", "start": "2024-01-01T02:05:00.000Z", "end": None, "end_cause": None},
    ]
    (line,) = _brokers_line(_replay(periods), "UTC")
    assert line == ("  broker 3: restarted at 2024-01-01 01:00:00.000 (its stop is not in the evidence); "
                    "down from 2024-01-01 02:00:00.000 to 2024-01-01 02:05:00.000")


def test_an_instant_down_that_was_not_a_bounce_is_still_shown():
    # a session that expired and came back in the same millisecond is a real (if short) loss of registration
    periods = [
        {"state": "up", "start": "2024-01-01T00:00:00.000Z", "end": "2024-01-01T01:00:00.000Z",
         "end_cause": "session_expired"},
        {"state": "down", "start": "2024-01-01T01:00:00.000Z", "end": "2024-01-01T01:00:00.000Z", "end_cause": None},
    ]
    (line,) = _brokers_line(_replay(periods), "UTC")
    assert "down from 2024-01-01 01:00:00.000 to 2024-01-01 01:00:00.000" in line
