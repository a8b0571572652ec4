from parsers.schema import ARROW_SCHEMA, EVENT_TYPES, FIELD_NAMES, Event, event_from_row, events_to_arrow, iso_utc


def test_every_required_field_is_in_the_schema():
    required = {"cluster", "ts", "source_kind", "source_file", "source_pos", "broker_id", "event_type",
                "controller_id", "controller_epoch", "topic", "partition", "leader", "isr", "replicas",
                "leader_epoch", "zk_version", "from_state", "to_state", "zxid", "session_id", "detail", "raw"}
    assert required <= set(FIELD_NAMES)
    assert ARROW_SCHEMA.names == list(FIELD_NAMES)


def test_event_round_trips_through_arrow():
    ev = Event("partition_state_change", cluster="c", ts=1_619_453_562_920_000, topic="t-x", partition=3,
               isr=[1, 2], leader=-1, detail={"b": 1, "a": [1, 2]}, raw="x" * 20)
    batch = events_to_arrow([ev])
    row = batch.to_pylist()[0]
    assert row["detail"] == '{"a":[1,2],"b":1}'  # keys sorted: determinism
    back = event_from_row(row)
    assert back == ev


def test_long_raw_text_is_cut_and_says_so():
    ev = Event("other", raw="y" * 20_000)
    row = ev.as_row()
    assert len(row["raw"]) < 17_000 and row["raw"].endswith("chars cut]")


def test_iso_utc_hand_checked():
    # 1619453562920000 us = 2021-04-26 16:12:42.920 UTC (date -u -d @1619453562.920)
    assert iso_utc(1_619_453_562_920_000) == "2021-04-26T16:12:42.920Z"
    assert "partition_state_change" in EVENT_TYPES


def test_iso_text_reads_back_to_the_microsecond():
    from parsers.schema import iso_utc, us_of_iso

    for ts in (0, 1_562_327_824_659_000, 1_721_326_074_021_000, 4_102_444_800_000_000):
        assert us_of_iso(iso_utc(ts)) == ts
    assert us_of_iso("2024-07-18T20:07:54.021123+02:00") == 1_721_326_074_021_123


def test_detail_text_is_the_encoders_whether_made_or_remembered():
    """parsers.schema.dump_detail keeps the text of each detail it has written and hands it out again: values that
    Python holds equal but JSON writes differently (True and 1, 1 and 1.0, a key True and a key 1) keep their own
    texts, in either order; a detail of other shapes is written as it is."""
    import json

    from parsers.schema import dump_detail

    def want(d):
        return json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)

    pairs = [({"via": "x", "n": 1}, {"via": "x", "n": True}), ({"n": 1, "via": "y"}, {"n": 1.0, "via": "y"}),
             ({1: "k"}, {True: "k"}), ({"a": None, "b": "ü"}, {"b": "ü", "a": None}),
             ({"r": [1, 2], "s": "t"}, {"r": (1, 2), "s": "t"}), ({"d": {"z": 1, "a": 2}}, {"d": {"a": 2, "z": 1}}),
             # lists and bools are remembered too (_memo_key): a list's items by their types, a bool apart from an int
             ({"l": [1, 2]}, {"l": [True, 2]}), ({"l": [1, 2]}, {"l": [1.0, 2]}), ({"l": [None]}, {"l": None}),
             ({"l": [0]}, {"l": [False]}), ({"b": False}, {"b": 0}), ({"l": ["1"]}, {"l": [1]}), ({"l": []}, {"l": ""})]
    for first, second in pairs:
        for d in (first, second, first, second):
            assert dump_detail(d) == want(d), d
    assert dump_detail({}) is None and dump_detail(None) is None


def test_real_details_are_written_as_the_encoder_writes_them():
    """Every event of a real controller log (real_logs2, Kafka 2.3: assignment dumps, elections, start-up
    views) and of a state-change log read twice: the second time each detail's text comes from what the first wrote, and is the same."""
    import json

    from conftest import REAL_LOGS2
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source
    from parsers.schema import dump_detail, expand_runs

    details = []
    # and a state-change log's: UpdateMetadata's recipients and offline replicas as lists (327 details with lists)
    for name in ("Raghavendralacharya__kafka-node/kafka_2.12-2.3.0/logs/controller.log.2019-08-29-21.gz",
                 "Raghavendralacharya__kafka-node/kafka_2.12-2.3.0/logs/state-change.log.2019-08-21-22.gz"):
        events, _ = parse_source((REAL_LOGS2 / name).read_bytes(), SourceContext(name, "c", None))
        details += [ev.detail for ev in expand_runs(events)]
    assert len({json.dumps(d, sort_keys=True) for d in details}) > 10
    assert sum(1 for d in details if d and any(type(v) is list for v in d.values())) > 300
    for _ in range(2):
        for d in details:
            assert dump_detail(d) == (json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                                                 default=str) if d else None)
