"""Container and collector streams without Spark: each grammar's special cases (colour codes, Docker's
16 KiB split, CRI partials, a ZooKeeper container beside the brokers, a broken JSON record, a source
only --broker-map names), checked against the bundled incident's own files and real Strimzi lines."""
import gzip
import json
import random
import re
from collections import Counter
from functools import lru_cache

import pytest

from conftest import REAL_LOGS, SAMPLES
from forensics.sources import broker_hint_from_path
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source, sniff_kind
from samplegen import containers as C

SAMPLE = SAMPLES / "rf1_broker_kill"


def parse(data: bytes, path: str = "incident.txt", **kw):
    return parse_source(data, SourceContext(path, **kw))


def key(ev):
    return (ev.ts, ev.event_type, ev.broker_id, ev.detail_json(), ev.logger, ev.level, ev.raw)


@lru_cache(maxsize=None)
def original(broker: str | None = None) -> Counter:
    """Events of the brokers' own files, as the tool reads them today."""
    out = Counter()
    for d in sorted(SAMPLE.glob("kafka-broker-*")):
        if broker is not None and d.name != broker:
            continue
        for p in sorted(d.iterdir()):
            rel = f"{d.name}/{p.name}"
            evs, _ = parse(p.read_bytes(), rel, broker_hint=broker_hint_from_path(rel))
            out.update(map(key, evs))
    return out


def balanced(s):
    assert s.lines == s.parsed + s.other + s.unrecognized + s.quarantined, s
    for x in s.streams:
        assert x["lines"] == x["parsed"] + x["other"] + x["unrecognized"] + x["quarantined"], x


def test_compose_with_and_without_colour_codes_reads_every_broker():
    streams = C._streams(SAMPLE)
    plain, colour = C.compose_text(streams).encode(), C.compose_text(streams, colour=True).encode()
    assert b"\x1b[" in colour
    assert sniff_kind("incident.txt", plain) == sniff_kind("incident.txt", colour) == "container_stream"
    ev_plain, s_plain = parse(plain)
    ev_colour, s_colour = parse(colour)
    assert [key(e) + (e.source_pos,) for e in ev_plain] == [key(e) + (e.source_pos,) for e in ev_colour]
    assert Counter(map(key, ev_plain)) == original()
    balanced(s_colour)
    # every line of the file is one of the streams' or Compose's own "Attaching to ..."
    assert s_colour.lines == len(plain.splitlines())
    assert s_colour.other >= 1 and any("Compose's own line" in n for n in s_colour.notes)
    got = {x["name"]: (x["broker_id"], x["how"]) for x in s_colour.streams}
    assert sorted(got) == ["kafka-1", "kafka-2", "kafka-3"]
    lines = plain.decode().split("\n")
    for name, (bid, how) in got.items():
        assert bid == int(name[-1])
        words, at = how.split("'")[1], int(how.rsplit(":", 1)[1].rstrip(")"))
        assert lines[at - 1].startswith(name) and words in lines[at - 1]  # the line cited says so


def test_event_positions_are_the_files_own_lines():
    text = C.compose_text(C._streams(SAMPLE))
    lines = text.split("\n")
    evs, _ = parse(text.encode())
    for ev in evs[::50]:
        header = ev.raw.split("\n", 1)[0]
        line = lines[ev.source_pos - 1]
        if " ... " not in header:
            assert line.endswith(header), ev
            continue
        # An excerpt of a long line (a DEBUG map of every partition's assignment): its pieces, in order.
        at = 0
        for piece in filter(None, re.split(r" \.\.\.(?: |$)", header)):
            at = line.find(piece, at)
            assert at >= 0, (piece, ev)


def _long_line_broker():
    streams = C._streams(SAMPLE)
    name = next(n for n, lines in streams.items() if any(len(t.encode()) > 16384 for _, t in lines))
    return name, streams[name]


def test_docker_json_lines_over_16k_are_joined():
    name, lines = _long_line_broker()
    records = C.docker_json_lines(lines)
    assert len(records) > len(lines)  # Docker split at least one line
    data = ("\n".join(records) + "\n").encode()
    assert sniff_kind(f"{'a' * 64}/{'a' * 64}-json.log", data) == "container_stream"
    evs, s = parse(data, f"{'a' * 64}/{'a' * 64}-json.log")
    balanced(s)
    (x,) = s.streams
    assert x["joined_records"] == len(records) - len(lines)
    assert s.lines == len(lines)  # a split line counts once
    assert Counter(map(key, evs)) == original("kafka-broker-" + name[-1])
    # the long line's events cite the record where it starts, whose log has no line end yet
    long_text = max((t for _, t in lines), key=len)
    hits = [e for e in evs if e.raw and e.raw.split("\n", 1)[0] == long_text]
    assert hits
    first = json.loads(records[hits[0].source_pos - 1])
    assert not first["log"].endswith("\n") and long_text.startswith(first["log"])


def test_cri_partial_records_are_joined_and_a_cut_last_part_still_read():
    name, lines = _long_line_broker()
    records = C.cri_lines(lines)
    assert any(" stdout P " in r for r in records)
    path = f"var/log/pods/kafka_{name}_0a1b2c3d-0000-4000-8000-000000000000/kafka/0.log"
    evs, s = parse(("\n".join(records) + "\n").encode(), path)
    balanced(s)
    assert s.streams[0]["name"] == f"{name}/kafka"
    assert Counter(map(key, evs)) == original("kafka-broker-" + name[-1])
    # the node was cut while the runtime wrote a split line: its parts so far are the line
    cut = [i for i, r in enumerate(records) if " stdout P " in r][0]
    evs2, s2 = parse(("\n".join(records[: cut + 1]) + "\n").encode(), path)
    balanced(s2)
    assert any(f"line {cut + 1}: the file ends before the last part" in e for e in s2.errors)
    assert s2.lines == cut + 1


# ZooKeeper's own log lines (server side), as ZooKeeperServer, NIOServerCnxnFactory and SessionTrackerImpl
# write them (ZooKeeper 3.5/3.6), in Kafka's layout that the Confluent and wurstmeister images share.
ZOOKEEPER = [
    "[2021-08-16 09:00:00,101] INFO Created server with tickTime 2000 minSessionTimeout 4000 maxSessionTimeout "
    "40000 datadir /var/lib/zookeeper/log/version-2 snapdir /var/lib/zookeeper/data/version-2 "
    "(org.apache.zookeeper.server.ZooKeeperServer)",
    "[2021-08-16 09:00:00,140] INFO binding to port 0.0.0.0/0.0.0.0:2181 "
    "(org.apache.zookeeper.server.NIOServerCnxnFactory)",
    "[2021-08-16 10:32:23,001] INFO Expiring session 0x117b0005ccd0000, timeout of 18000ms exceeded "
    "(org.apache.zookeeper.server.ZooKeeperServer)",
    "[2021-08-16 10:32:23,002] INFO Processed session termination for sessionid: 0x117b0005ccd0000 "
    "(org.apache.zookeeper.server.PrepRequestProcessor)",
]


def test_compose_with_a_zookeeper_container_counts_its_lines_apart():
    streams = C._streams(SAMPLE)
    streams["zookeeper-1"] = [(C.rfc3339(t[1:24]), t) for t in ZOOKEEPER]
    text = C.compose_text(streams, colour=True)
    evs, s = parse(text.encode())
    balanced(s)
    assert Counter(map(key, evs)) == original()
    zk = next(x for x in s.streams if x["name"] == "zookeeper-1")
    assert (zk["kafka"], zk["broker_id"], zk["lines"], zk["other"], zk["events"]) == (False, None, 4, 4, 0)
    where = [i + 1 for i, line in enumerate(text.split("\n")) if "zookeeper-1 |" in line]
    assert (zk["first_line"], zk["last_line"]) == (where[0], where[-1])
    assert any(n.startswith(f"zookeeper-1: 4 line(s) at incident.txt:{where[0]}-{where[-1]}") for n in s.notes)
    assert not any(e.source_pos in where for e in evs)


def test_a_broken_json_record_is_quarantined_and_the_rest_read():
    name, lines = _long_line_broker()
    records = C.docker_json_lines(lines)
    k = len(records) // 2
    # an entry of one line: a lost header with lines under it would lend them to the entry above
    while not all(json.loads(records[i])["log"].startswith("[") for i in (k, k + 1)):
        k += 1
    broken = records[k][: len(records[k]) // 2]  # a record cut in the middle, then the next ones
    data = ("\n".join(records[:k] + [broken] + records[k + 1:]) + "\n").encode()
    evs, s = parse(data, "kafka.json.log")
    balanced(s)
    assert s.quarantined >= 1
    assert any(q.source_pos == k + 1 and q.category == "quarantined" for q in s.samples)
    assert any(e.startswith(f"line {k + 1}: not a JSON record") for e in s.errors)
    lost_entry = json.loads(records[k])["log"].rstrip("\n")
    want = original("kafka-broker-" + name[-1])
    got = Counter(map(key, evs))
    assert not got - want  # nothing invented
    assert all(r.split("\n", 1)[0] == lost_entry for (*_, r) in (want - got).elements())  # only that entry lost


def _quiet_tail(lines):
    """A broker's lines after the last one that names its id (a stretch of routine work)."""
    from parsers.container_streams.identity import named_ids
    from parsers.broker_logs.templates.writer import writer_id

    last = max(i for i, (_, t) in enumerate(lines)
               if named_ids([t], [0]) or writer_id(t.split("] ", 1)[-1].split(" ", 1)[-1]) is not None)
    return lines[last + 1:]


def test_a_source_whose_id_only_broker_map_gives():
    tail = _quiet_tail(C._streams(SAMPLE)["kafka-3"])
    assert len(tail) > 10
    text = C.compose_text({"kafka-3": tail, "kafka-x": tail}).encode()
    _, s = parse(text)
    got = {x["name"]: (x["broker_id"], x["how"]) for x in s.streams}
    assert got["kafka-x"] == (None, "unknown: no line names its id; give --broker-map 'kafka-x=ID'")
    evs, s = parse(text, broker_map=(("kafka-x", 3),))
    got = {x["name"]: (x["broker_id"], x["how"]) for x in s.streams}
    assert got["kafka-x"] == (3, "from --broker-map kafka-x=3")
    assert got["kafka-3"][0] is None  # a name is not an id
    balanced(s)


def test_broker_map_does_not_overrule_what_the_broker_says():
    text = C.compose_text({"kafka-1": C._streams(SAMPLE)["kafka-1"]}).encode()
    _, s = parse(text, broker_map=(("kafka-1", 7),))
    (x,) = s.streams
    assert x["broker_id"] == 1 and "--broker-map kafka-1=7 says 7" in x["conflict"]


STRIMZI = REAL_LOGS / "issue_snippets" / "12.log"


def test_kubectl_timestamps_over_strimzi_layout_reads_as_the_plain_stream():
    """Strimzi's `%d{ISO8601} %p %m (%c) [%t]` read as today, and the same lines behind kubectl's stamps."""
    plain = [t for t in STRIMZI.read_text().split("\n") if t and not t.startswith("#")]
    want, s0 = parse(("\n".join(plain) + "\n").encode(), "kafka-0.log")
    assert s0.kind == "broker_log" and want
    stamped = [f"2020-11-06T01:52:{i:02d}.{i:09d}Z {t}" for i, t in enumerate(plain)]
    got, s = parse(("\n".join(stamped) + "\n").encode(), "kafka-0.log")
    assert s.kind == "container_stream"
    assert [key(e) for e in got] == [key(e) for e in want]
    assert s.streams[0]["broker_id"] == 0 and "[Controller id=0" in s.streams[0]["how"]
    prefixed = [f"[pod/my-cluster-kafka-0/kafka] {t}" for t in stamped]
    got, s = parse(("\n".join(prefixed) + "\n").encode(), "all.log")
    assert [key(e) for e in got] == [key(e) for e in want]
    assert s.streams[0]["name"] == "my-cluster-kafka-0/kafka"


def test_broker_logs_are_not_taken_for_container_streams():
    """Not one of the real corpus' files (Kafka 0.8 to 4.x, several brokers appending to one file, pasted
    excerpts with and without Compose's prefix) nor the samples' is read as a stream."""
    files = [p for p in SAMPLES.glob("*/kafka-*/*") if p.is_file()]
    files += sorted(p for p in REAL_LOGS.rglob("*") if p.is_file())
    for p in files:
        assert sniff_kind(str(p), p.read_bytes()) != "container_stream", p
    # a layout of the broker's own that starts with a zoned ISO-8601 stamp is not kubectl's
    own = "\n".join(f"2024-01-02T03:04:0{i}.123Z INFO [KafkaServer id=1] started (kafka.server.KafkaServer)"
                    for i in range(5)).encode()
    assert sniff_kind("server.log", own) == "broker_log"


@pytest.mark.parametrize("fmt", ["compose", "docker_json", "cri", "ecs", "loki"])
def test_damaged_streams_never_raise_and_stay_balanced(fmt):
    lines = C._streams(SAMPLE)["kafka-3"][:400]
    if fmt == "compose":
        text = C.compose_text({"kafka-3": lines}, colour=True)
    elif fmt == "docker_json":
        text = "\n".join(C.docker_json_lines(lines, split_at=100))
    elif fmt == "cri":
        text = "\n".join(C.cri_lines(lines, split_at=100))
    elif fmt == "ecs":
        text = "\n".join(json.dumps({"_source": d}) for d in C.ecs_documents("kafka-3", C.broker_stream(
            SAMPLE / "kafka-broker-3")[:200], module=True))
    else:
        text = "\n".join(json.dumps({"labels": {"pod": "kafka-3"}, "line": t, "timestamp": s}) for s, t in lines)
    data = text.encode()
    rnd = random.Random(16)
    for _ in range(12):
        d = bytearray(data)
        for _ in range(rnd.randint(1, 20)):
            i = rnd.randrange(len(d))
            d[i:i + rnd.randint(1, 40)] = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 10)))
        d = bytes(d[: rnd.randint(len(d) // 2, len(d))])
        for payload in (d, gzip.compress(d, mtime=0)):
            evs, s = parse(payload, "x.log")
            assert not any("internal parser error" in e for e in s.errors), s.errors
            balanced(s)


def test_a_broker_logging_in_another_zone_is_told_by_the_runtimes_stamps():
    """kubectl's stamps are UTC; the broker's own are its zone's wall clock (log4j's %d has no zone).
    Two hours apart: the broker logged in UTC+2, and the note says so; read with that zone, no note."""
    lines = C._streams(SAMPLE)["kafka-3"][:300]
    import datetime as dt

    def shifted(stamp):
        t = dt.datetime.strptime(stamp[:26], "%Y-%m-%dT%H:%M:%S.%f") - dt.timedelta(hours=2)
        return t.strftime("%Y-%m-%dT%H:%M:%S.%f") + stamp[26:]
    text = "\n".join(f"{shifted(s)} {t}" for s, t in lines).encode()
    _, s = parse(text, "kafka-3.log")
    assert any("2.00 h before the broker's own time read in zone UTC" in n for n in s.notes), s.notes
    _, s = parse(text, "kafka-3.log", tz="Europe/Berlin")  # August: UTC+2
    assert not any("another zone" in n for n in s.notes)


def test_an_export_document_without_the_line_is_rebuilt_from_its_fields():
    """Filebeat's Kafka module leaves message, level, component, class and the first trace line;
    an exporter's dotted keys and a search hit's _source wrapper are the same document."""
    doc = {"@timestamp": "2021-08-16T10:32:23.042Z", "host.name": "kafka-2", "log.level": "ERROR",
           "kafka.log.component": "Controller id=2 epoch=1", "kafka.log.class": "state.change.logger",
           "message": "Controller 2 epoch 1 failed to change state for partition t-2 from OfflinePartition to "
                      "OnlinePartition",
           "kafka.log.trace.class": "kafka.common.StateChangeFailedException",
           "kafka.log.trace.message": "Failed to elect leader for partition t-2 under strategy "
                                      "OfflinePartitionLeaderElectionStrategy(false)"}
    raw = ("[2021-08-16 10:32:23,042] ERROR [Controller id=2 epoch=1] " + doc["message"] + " (state.change.logger)\n"
           + doc["kafka.log.trace.class"] + ": " + doc["kafka.log.trace.message"] + "\n")
    want, _ = parse(raw.encode(), "kafka-broker-2/state-change.log", broker_hint=2)
    assert want
    nested = {"_index": "filebeat", "_source": {"@timestamp": doc["@timestamp"], "host": {"name": "kafka-2"},
                                                "log": {"level": "ERROR"}, "message": doc["message"],
                                                "kafka": {"log": {"component": doc["kafka.log.component"],
                                                                  "class": doc["kafka.log.class"],
                                                                  "trace": {"class": doc["kafka.log.trace.class"],
                                                                            "message": doc["kafka.log.trace.message"]}}}}}
    for line in (json.dumps(doc), json.dumps(nested)):
        got, s = parse((line + "\n").encode(), "export.ndjson")
        assert s.kind == "container_stream"
        assert [(e.ts, e.event_type, e.broker_id, e.detail_json()) for e in got] == \
            [(e.ts, e.event_type, e.broker_id, e.detail_json()) for e in want]


def test_a_stream_cut_inside_its_last_line_quarantines_that_line_only():
    text = C.compose_text(C._streams(SAMPLE))
    whole, _ = parse(text.encode())
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    cut = text.rstrip("\n")[: -len(last) // 2]  # half of the last line, no line break
    evs, s = parse(cut.encode())
    balanced(s)
    n = cut.count("\n") + 1
    assert any(q.source_pos == n and q.category == "quarantined" for q in s.samples)
    assert any(e == f"line {n}: the file ends inside this line (cut mid-line); quarantined" for e in s.errors)
    assert Counter(map(key, evs)) == Counter(map(key, [e for e in whole if e.source_pos != n]))
