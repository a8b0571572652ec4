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
