"""The bundled incidents as container runtimes and log shippers hand them over (samplegen.containers
interleaves each broker's own files into one stream and writes it in each collector's format):
postmortem must find what it finds on the original files (which test_postmortem_samples checks against
each sample's hand-derived expected.json), and the per-source accounting and identities must hold."""
import pytest

from conftest import SAMPLES
from forensics.ingest import run_ingest
from forensics.pipeline import collect_events
from forensics.report.build import build_report
from forensics.sources import collect_inputs
from replay_engine.api import replay
from samplegen import containers as C
from test_postmortem_samples import check_leaderless, expected

pytestmark = pytest.mark.spark


def analyse(spark, root, work, name, broker_map=None):
    inputs = collect_inputs([str(root)], work, broker_map)
    ing = run_ingest(spark, inputs, cluster=name)
    events = collect_events(ing)
    return build_report(replay(events), ing.summary_json, events, sources=[name]), ing.summary_json


def outcome(report):
    """What must not change with the evidence's wrapping: the leaderless partitions, their causes and
    times, and how far the recorded controller decisions agree with the replay."""
    return {
        "incidents": sorted((i["topic"], tuple(sorted(i["partitions"])), i["cause_kind"], i["start"], i["end"],
                             (i.get("unavailable_from") or {}).get("ts")) for i in report["incidents"]),
        "by_cause": report["summary"]["by_cause"],
        "leaderless": report["summary"]["leaderless_partitions"],
        "agreement": report["summary"]["agreement"],
        "data_loss": sorted((d["topic"], d["partition"], d["new_leader"], d["lost_messages"])
                            for d in report["data_loss"]),
    }


def check_accounting(summary):
    for f in summary["files"]:
        assert f["lines"] == f["parsed"] + f["other"] + f["unrecognized"] + f["quarantined"], f["path"]
        for s in f.get("streams") or []:
            assert s["lines"] == s["parsed"] + s["other"] + s["unrecognized"] + s["quarantined"], (f["path"], s)


def stream_ids(summary):
    return {s["name"]: (s["broker_id"], s["how"]) for f in summary["files"] for s in f.get("streams") or []}


# name -> writer(sample, out): every collector format, with its common variants
FORMATS = {
    "compose": lambda s, o: C.write_compose(s, o),
    "compose_colour": lambda s, o: C.write_compose(s, o, colour=True),
    "docker_json": lambda s, o: C.write_docker_json(s, o),
    "cri": lambda s, o: C.write_cri(s, o),
    "kubectl_prefix_timestamps": lambda s, o: C.write_kubectl(s, o, prefix=True, timestamps=True),
    "kubectl_timestamps": lambda s, o: C.write_kubectl(s, o, prefix=False, timestamps=True),
    "ecs_hits": lambda s, o: C.write_ecs(s, o, module=False, hits=True),
    "ecs_kafka_module": lambda s, o: C.write_ecs(s, o, module=True, hits=False),
    "loki_jsonl": lambda s, o: C.write_loki(s, o, jsonl=True),
    "loki_default": lambda s, o: C.write_loki(s, o, jsonl=False),
    "loki_raw_newest_first": lambda s, o: C.write_loki_raw(s, o),
}


OTHER_SAMPLES = ["controller_failover", "unclean_election", "kraft_broker_fenced"]


@pytest.fixture(scope="module")
def analysed(spark, tmp_path_factory):
    """Every variant and its original side by side, one folder per cluster (``cluster=NAME``), read by one
    ingest (one Spark job instead of eighteen) and replayed per cluster: report and accounting per name."""
    import shutil

    root = tmp_path_factory.mktemp("evidence")
    variants = {f"rf1_broker_kill.{fmt}": ("rf1_broker_kill", write) for fmt, write in FORMATS.items()}
    variants.update({f"{s}.compose_colour": (s, FORMATS["compose_colour"]) for s in OTHER_SAMPLES})
    for name, (sample, write) in variants.items():
        (root / f"cluster={name}").mkdir()
        write(SAMPLES / sample, root / f"cluster={name}")
    for sample in ["rf1_broker_kill"] + OTHER_SAMPLES:
        shutil.copytree(SAMPLES / sample, root / f"cluster={sample}.original")
    ing = run_ingest(spark, collect_inputs([str(root)], tmp_path_factory.mktemp("x")))
    events = collect_events(ing)
    out = {}
    for res in replay(events):
        mine = [e for e in events if e.cluster == res.cluster]
        summary = {**ing.summary_json, "files": [f for f in ing.summary_json["files"] if f["cluster"] == res.cluster]}
        out[res.cluster] = (build_report([res], summary, mine, sources=[res.cluster]), summary)
    return out


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_rf1_incident_in_every_collector_format(analysed, fmt):
    sample = "rf1_broker_kill"
    report, summary = analysed[f"{sample}.{fmt}"]
    assert outcome(report) == outcome(analysed[f"{sample}.original"][0])
    check_leaderless(report, expected(sample))
    check_accounting(summary)
    kinds = {f["path"].rsplit("/", 1)[-1]: f["kind"] for f in summary["files"]}
    assert "container_stream" in kinds.values(), kinds
    # each broker's id comes from its own lines, with the line that says it
    ids = stream_ids(summary)
    assert sorted(b for b, _ in ids.values()) == [1, 2, 3]
    for bid, how in ids.values():
        assert how.startswith("from '") and str(bid) in how.split("'")[1], how
    sources = report["inputs"]["stream_sources"]
    assert len(sources) == 3 and all(" -> broker " in line for line in sources), sources


@pytest.mark.parametrize("sample", OTHER_SAMPLES)
def test_other_incidents_as_docker_compose_logs(analysed, sample):
    report, summary = analysed[f"{sample}.compose_colour"]
    assert outcome(report) == outcome(analysed[f"{sample}.original"][0])
    check_accounting(summary)
    assert sorted(b for b, _ in stream_ids(summary).values()) == expected(sample)["brokers"]


def test_compose_logs_alone_without_zookeeper_data(spark, tmp_path):
    """The issue's case: `docker compose logs > incident.txt` and nothing else. Same answer as the
    brokers' own files without ZooKeeper's data."""
    import shutil

    sample = SAMPLES / "rf1_broker_kill"
    files = tmp_path / "files"
    shutil.copytree(sample, files, ignore=shutil.ignore_patterns("zookeeper", "zkcli", "clients", "*.md", "*.json"))
    stream = tmp_path / "stream"
    stream.mkdir()
    (stream / "incident.txt").write_text(C.compose_text(C._streams(sample)))
    want, _ = analyse(spark, files, tmp_path / "x1", "rf1")
    got, summary = analyse(spark, stream, tmp_path / "x2", "rf1")
    assert want["incidents"], "the brokers' files alone show the outage"
    assert outcome(got) == outcome(want)
    check_accounting(summary)


def test_broker_map_names_a_source_inside_a_stream(spark, tmp_path):
    """`--broker-map kafka-x=3` (as postmortem/ingest/replay take it) reaches the source inside the file,
    and the report says where the id came from."""
    from test_container_units import _quiet_tail

    streams = C._streams(SAMPLES / "rf1_broker_kill")
    root = tmp_path / "evidence"
    root.mkdir()
    (root / "incident.txt").write_text(C.compose_text({"kafka-1": streams["kafka-1"],
                                                        "kafka-x": _quiet_tail(streams["kafka-3"])}))
    report, summary = analyse(spark, root, tmp_path / "x", "c", broker_map=["kafka-x=3"])
    check_accounting(summary)
    assert stream_ids(summary)["kafka-x"] == (3, "from --broker-map kafka-x=3")
    path = summary["files"][0]["path"]
    assert f"{path}: kafka-x -> broker 3 (from --broker-map kafka-x=3)" in report["inputs"]["stream_sources"]
    assert any(line.startswith(f"{path}: kafka-1 -> broker 1 (from '") for line in report["inputs"]["stream_sources"])
