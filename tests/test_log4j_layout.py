from parsers.broker_logs.log4j_layout import (BadTimestamp, JsonLayout, KafkaDefaultLayout, LocalClock,
                                              PlainStampLayout, choose_layout, iter_entries)

import pytest


def test_default_layout_fields():
    lay = KafkaDefaultLayout(LocalClock("UTC"))
    h = lay.parse("[2022-02-13 04:12:42,920] ERROR [Controller id=1002 epoch=520] Controller 1002 epoch 520 failed "
                  "to change state for partition ingest-metrics-0 from OfflinePartition to OnlinePartition "
                  "(state.change.logger)")
    assert h.level == "ERROR" and h.logger == "state.change.logger"
    assert h.message.startswith("[Controller id=1002 epoch=520]") and h.message.endswith("OnlinePartition")
    # 2022-02-13T04:12:42.920Z = 1644725562.920 s (hand-computed: date -u -d '2022-02-13 04:12:42' +%s)
    assert h.ts == 1_644_725_562_920_000


def test_message_with_parentheses_keeps_them():
    lay = KafkaDefaultLayout(LocalClock("UTC"))
    h = lay.parse("[2020-10-08 16:49:28,451] INFO [Controller 0]: Currently active brokers in the cluster: Set(0, 1) "
                  "(kafka.controller.KafkaController)")
    assert h.message.endswith("Set(0, 1)") and h.logger == "kafka.controller.KafkaController"


def test_local_zone_conversion_with_dst():
    clock = LocalClock("Europe/Berlin")
    # Summer (CEST, UTC+2): 2021-05-05 16:02:11 local = 14:02:11Z = 1620223331
    assert clock.micros("2021-05-05 16:02:11,000") == 1_620_223_331_000_000
    # Winter (CET, UTC+1): 2021-01-05 16:02:11 local = 15:02:11Z = 1609858931
    assert clock.micros("2021-01-05 16:02:11,500") == 1_609_858_931_500_000


def test_impossible_timestamp_raises():
    with pytest.raises(BadTimestamp):
        LocalClock().micros("2021-13-05 16:02:11,000")


def test_iso_with_zone_and_other_layouts():
    lay = KafkaDefaultLayout(LocalClock("UTC"))
    h = lay.parse("[2024-01-01T10:00:00.123+02:00] INFO hello (x.y)")
    assert h.ts == 1_704_096_000_123_000  # 08:00:00.123Z
    p = PlainStampLayout(LocalClock("UTC")).parse("2024-01-01 10:00:00,123 WARN [main] org.foo.Bar - something odd")
    assert p.level == "WARN" and p.logger == "org.foo.Bar" and p.message == "something odd"
    j = JsonLayout(LocalClock("UTC")).parse('{"timestamp":"2024-01-01T10:00:00.000Z","level":"INFO",'
                                            '"loggerName":"kafka.server.KafkaServer","message":"[KafkaServer id=1] started"}')
    assert j.logger == "kafka.server.KafkaServer" and j.ts == 1_704_103_200_000_000


def test_entries_group_continuations_and_report_orphans():
    text = [
        "orphan before any header",
        "[2021-01-01 00:00:00,000] ERROR boom (a.b)",
        "java.lang.IllegalStateException: x",
        "\tat a.b.C(C.java:1)",
        "[2021-01-01 00:00:01,000] INFO next (a.b)",
        "[2021-13-01 00:00:01,000] INFO bad month (a.b)",
        "\tcontinuation of the bad one",
        "[2021-01-01 00:00:02,000] INFO last (a.b)",
    ]
    orphans = []
    lay = choose_layout(text, LocalClock())
    entries = list(iter_entries(enumerate(text, 1), lay, orphans.append))
    assert [(e.line_no, e.n_lines) for e in entries] == [(2, 3), (5, 1), (8, 1)]
    assert [(o.line_no, o.reason) for o in orphans] == [(1, "unrecognized"), (6, "quarantined"), (7, "quarantined")]
    assert sum(e.n_lines for e in entries) + len(orphans) == len(text)
