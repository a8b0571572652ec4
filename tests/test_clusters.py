"""Several clusters in one folder told apart (replay_engine.folders.clusters), on real clusters' files read in place: two
real clusters put side by side as an operator's folders would hold them, a laptop formatted again and again, and
real single clusters with restarts that must stay one."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import REAL_LOGS, REAL_LOGS2
from forensics.pipeline import split_clusters
from forensics.report.build import build_report
from forensics.report.render import render_markdown, render_text
from forensics.sources import broker_hint_from_path
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay
from replay_engine.folders.clusters import tell_clusters

NOVA = REAL_LOGS2 / "NovaSeele__KafkaDemo"  # 3.6.0, brokers 0-2, 'Cluster ID = v22dySzFROGZtN_eOO8rRA'
TUSHAR = REAL_LOGS2 / "Tushar-Nagdive-Dev__kafka-code"  # 3.8.0, brokers 0-2, 'Cluster ID = ferJwTLsTEivjkl4i0_WEw'
ICHWAN = REAL_LOGS2 / "ichwansh03__kafka-migration-log4j2"  # KRaft 3.9.0: logs, data/meta.properties, metadata log


def folder_events(layout: dict[str, Path], cluster: str = "incident") -> list:
    """Every file of each real cluster, read in place, cited as the operator's folder would show it
    (``layout``: sub-folder -> real cluster), all given as one cluster, as ``postmortem FOLDER`` does."""
    events = []
    for sub, root in layout.items():
        for f in sorted(root.rglob("*")):
            if f.is_file():
                rel = f"{sub}/{f.relative_to(root).as_posix()}"
                evs, _ = parse_source(f.read_bytes(), SourceContext(rel, cluster=cluster,
                                                                    broker_hint=broker_hint_from_path(rel)))
                events += [e for e in evs if e.event_type != "zk_txn"]
    return events


def by_cluster(events, told) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for e, name in zip(events, told.names):
        out.setdefault(name, set()).add(e.source_file.split("/", 1)[0])
    return out


def test_dev_and_prod_with_the_same_broker_ids_are_two_clusters():
    events = folder_events({"dev": NOVA, "prod": TUSHAR})
    assert {e.broker_id for e in events if e.source_file.startswith("dev/")} >= {0, 1, 2}
    assert {e.broker_id for e in events if e.source_file.startswith("prod/")} >= {0, 1, 2}
    told = tell_clusters(events, "incident")
    assert [c.name for c in told.clusters] == ["incident [v22dySzFROGZtN_eOO8rRA]", "incident [ferJwTLsTEivjkl4i0_WEw]"]
    # every event of each real cluster, and none of the other's, in its own replay
    assert by_cluster(events, told) == {"incident [v22dySzFROGZtN_eOO8rRA]": {"dev"},
                                        "incident [ferJwTLsTEivjkl4i0_WEw]": {"prod"}}
    assert told.findings == []
    first = told.clusters[0].evidence[0]
    assert first["source_file"].startswith("dev/") and "Cluster ID = v22dySzFROGZtN_eOO8rRA" in first["text"]


def test_a_kraft_metadata_log_goes_with_the_cluster_its_meta_properties_names():
    events = folder_events({"a": ICHWAN, "b": TUSHAR})
    told = tell_clusters(events, "x")
    names = {e.source_file: n for e, n in zip(events, told.names)}
    metadata = {n for f, n in names.items() if "/__cluster_metadata-0/" in f}
    # ichwansh03 data/meta.properties:5 'cluster.id=KfqUsfnvRwuGE70mGT8M9A'
    assert metadata == {"x [KfqUsfnvRwuGE70mGT8M9A]"}
    assert {n for f, n in names.items() if f.startswith("b/")} == {"x [ferJwTLsTEivjkl4i0_WEw]"}


def test_a_laptop_formatted_seventeen_times_and_its_two_metadata_logs():
    """Danielowo2000: one KRaft node whose storage was formatted again and again (a new cluster id in the same
    hourly files each time), and two metadata logs, each with the meta.properties of its own cluster."""
    name = "Danielowo2000__BigDataTechnologies-Version-2"
    events = folder_events({name: REAL_LOGS2 / name})
    told = tell_clusters(events, name)
    logged = {(e.detail or {}).get("cluster_id") for e in events if e.event_type == "cluster_identity"
              and e.source_kind == "broker_log"}
    named = {c.label.removeprefix("cluster id ") for c in told.clusters}
    assert logged <= named and len(named) == len(logged) + 1  # kafka_data's cluster is named by its meta.properties only
    where = Counter((e.source_file.split("/")[1], n) for e, n in zip(events, told.names)
                    if "/__cluster_metadata-0/" in e.source_file)
    assert {k for k in where} == {("kafka_2.13-3.5.0", f"{name} [ZP2ltPx0So-u7ZsfIzft0Q]"),
                                  ("kafka_data", f"{name} [OTMwNzFhYTY1ODNiNGE5OQ]")}
    assert None not in told.names


def test_a_controller_epoch_won_again_starts_another_cluster():
    """chase-lewis: broker 0 won controller epochs 1-2 (2017-11-25), 3-10 under cluster id 21Hvw... (2017-11-26/27),
    then epoch 1 again at 2017-11-29 12:23 (controller.log.2017-11-29-12:3) with no cluster id logged: ZooKeeper's
    data was new. The first run continues 21Hvw's epochs and stays with it; the third is a cluster of its own."""
    name = "chase-lewis__JIE7351"
    events = folder_events({name: REAL_LOGS / name})
    told = tell_clusters(events, name)
    of = {(e.source_file.rsplit("/", 1)[1], e.source_pos): n for e, n in zip(events, told.names)}
    assert of[("controller.log.2017-11-25-16.gz", 5)] == of[("server.log.2017-11-26-15.gz", 213)] == \
        f"{name} [21HvwIzkSpCF2DbE5ndOQQ]"
    assert of[("controller.log.2017-11-29-12.gz", 3)].startswith(f"{name} [unnamed")
    unnamed = next(c for c in told.clusters if c.name == of[("controller.log.2017-11-29-12.gz", 3)])
    assert unnamed.label == "a cluster the evidence does not name" and "controller epoch went back" in \
        unnamed.attributed[0]


def test_no_cluster_id_but_one_broker_id_running_twice_at_once_in_two_folders():
    """Two real 0.9 clusters (no cluster id before 0.10.1), both with a broker 0, side by side as dev/ and prod/:
    danisharora's broker 0 started at 2016-11-21 17:57:36 (server.log.2016-11-21-17:2073) and ran past 11-22 11:09:40,
    when plehmann93's broker 0 started (kafka_2.10-0.9.0.1/logs/server.log.2016-11-22-11:156). One broker id runs once
    at a time in a cluster: two clusters, one per folder."""
    events = folder_events({"dev": REAL_LOGS2 / "danisharora__helloworld", "prod": REAL_LOGS2 / "plehmann93__bdapro_winagg"})
    assert not any(e.event_type == "cluster_identity" and "cluster_id" in e.detail for e in events)
    told = tell_clusters(events, "incident")
    assert [c.name for c in told.clusters] == ["incident [dev]", "incident [prod]"]
    assert by_cluster(events, told) == {"incident [dev]": {"dev"}, "incident [prod]": {"prod"}}
    cited = {(e["source_file"], e["source_pos"]) for c in told.clusters for e in c.evidence}
    assert {("dev/kafka_2.11-0.9.0.0/logs/server.log.2016-11-21-17.gz", 2073),
            ("prod/kafka_2.10-0.9.0.1/logs/server.log.2016-11-22-11.gz", 156)} <= cited


def test_one_cluster_collected_twice_is_not_two():
    # franklinzhao: the same brokers' logs in kafka/logs and kafka_2.13-3.4.0/logs, started at the same instants
    root = REAL_LOGS2 / "franklinzhao__kafka-nodejs-setup"
    events = folder_events({root.name: root})
    assert len({e.source_file.rsplit("/", 1)[0] for e in events if e.event_type == "broker_startup"}) == 2
    assert tell_clusters(events, root.name).clusters == []


def test_real_single_clusters_with_restarts_are_not_split():
    # RzethonUMnieDziala (1.0.0): one cluster id, brokers restarted, chroot '/' for all; ichwansh03 (KRaft 3.9.0):
    # one cluster id in its logs and its meta.properties, the node restarted
    for root in (REAL_LOGS2 / "RzethonUMnieDziala__CityPulse_KafkaClusterDeploy", ICHWAN):
        events = folder_events({root.name: root})
        starts = sum(1 for e in events if e.event_type == "broker_startup" and e.detail.get("phase") == "starting")
        assert starts > 1
        told = tell_clusters(events, root.name)
        assert told.clusters == [] and set(told.names) == {root.name}


def test_a_broker_running_when_two_clusters_did_is_left_out_and_said():
    """BetrajJ: node 1 was formatted into cluster IAwvu... at 2025-02-06 14:58 while node 3 ran cluster Rp3X... until
    18:06; node 2's lines of 13:01-18:06 name neither: they are replayed with neither, and a finding says so."""
    name = "BetrajJ__kafka-kraft"
    events = folder_events({name: REAL_LOGS / name})
    told = tell_clusters(events, name)
    left = [f for f in told.findings if "broker 2's lines" in f["text"]]
    assert len(left) == 1 and "cluster id IAwvuCRtQFikmbSEMsgQFw or cluster id Rp3X0ZE5ROO-gYjhrPE9MQ" in left[0]["text"]
    assert sum(1 for e, n in zip(events, told.names) if n is None and e.broker_id == 2) == left[0]["count"]


def test_the_report_says_the_folder_holds_two_clusters_and_replays_each_alone():
    events = folder_events({"dev": NOVA, "prod": TUSHAR})
    kept, told = split_clusters(events)
    results = replay(kept)
    assert sorted(r.cluster for r in results) == ["incident [ferJwTLsTEivjkl4i0_WEw]",
                                                  "incident [v22dySzFROGZtN_eOO8rRA]"]
    report = build_report(results, {"clusters_told_apart": told}, kept, sources=["incident"])
    assert report["summary"]["several_clusters"][0]["clusters"] == [c["name"] for c in told[0]["clusters"]]
    text = render_text(report)
    assert "incident holds 2 clusters, each replayed alone:" in text
    assert "incident [v22dySzFROGZtN_eOO8rRA]: cluster id v22dySzFROGZtN_eOO8rRA, named at dev/" in text
    assert "Cluster incident [ferJwTLsTEivjkl4i0_WEw]:\nEvidence: broker logs; Kafka version 3.8.0" in text
    assert "## Clusters in this evidence" in render_markdown(report)
    assert report["replay"]["several_clusters"] == told


@pytest.mark.parametrize("layout,name,left_out", [
    pytest.param({"dev": NOVA, "prod": TUSHAR}, "incident", False, id="dev-prod"),
    # node 2's lines of 2025-02-06 13:01-18:06 placed in no cluster (the test above); ~40 CPU s: two tellings
    pytest.param({"BetrajJ__kafka-kraft": REAL_LOGS / "BetrajJ__kafka-kraft"}, "BetrajJ__kafka-kraft", True,
                 marks=pytest.mark.slow, id="BetrajJ")])
def test_the_audits_mapping_places_every_event_as_postmortem_does(layout, name, left_out):
    """The audit tells a folder's clusters apart in a Spark task that returns ranges of each file's rows -> cluster
    (forensics.audit.cluster_split.tell_table), applied by a range join. The ranges give each event the cluster
    split_clusters gives it, leave out the same events (with the findings' count), and the record says the same."""
    import copy

    import pyarrow as pa

    from forensics.audit.cluster_split import ROW_KEY, tell_table
    from forensics.pipeline import drop_log_copies, replay_order

    events = sorted(folder_events(layout, name), key=replay_order)
    events, _ = drop_log_copies(events)
    kept, told = split_clusters([copy.copy(e) for e in events])
    want = {(e.source_file, e.source_pos, e.source_sub, e.event_type, e.topic, e.partition, e.subject_broker): e.cluster
            for e in kept}
    # tell_input's rows: a citation's text, the detail as JSON, no copy among them (dropped above)
    rows = [{"cluster": e.cluster, "event_type": e.event_type, "ts": e.ts, "source_kind": e.source_kind,
             "source_file": e.source_file, "source_pos": e.source_pos, "source_sub": e.source_sub,
             "broker_id": e.broker_id, "subject_broker": e.subject_broker, "controller_epoch": e.controller_epoch,
             "topic": e.topic, "partition": e.partition, "detail": e.detail_json(),
             "raw": (e.raw or "").split("\n", 1)[0][:300] if e.raw is not None else None, "_copy_of": None}
            for e in events[::-1]]  # in no set order, as a Spark task receives them
    mapping = tell_table(pa.Table.from_pylist(rows)).to_pylist()
    record = [json.loads(r["told"]) for r in mapping if r["told"]]
    assert record == json.loads(json.dumps(told))
    ranges = [r for r in mapping if r["file"] is not None]
    by_file: dict[str, list] = {}
    for r in ranges:
        by_file.setdefault(r["file"], []).append(r)

    def placed(e) -> list[str]:
        k = tuple(null if getattr(e, f) is None else getattr(e, f) for f, null in ROW_KEY)
        return [r["name"] for r in by_file.get(e.source_file, [])
                if tuple(r[f"lo_{f}"] for f, _ in ROW_KEY) <= k <= tuple(r[f"hi_{f}"] for f, _ in ROW_KEY)]

    left = 0
    for e in events:
        got = placed(e)
        key = (e.source_file, e.source_pos, e.source_sub, e.event_type, e.topic, e.partition, e.subject_broker)
        assert got == ([want[key]] if key in want else []), key
        left += not got
    assert left == len(events) - len(kept) == sum(f["count"] for f in told[0]["findings"]
                                                  if "left out of every replay" in f["text"])
    assert (left > 0) == left_out
    assert len(ranges) < len(events) / 20  # a mapping, not a row per event


def test_a_start_up_in_a_shared_file_is_the_process_its_own_lines_name():
    """shani530 (2.4.0, brokers 0-2 writing one logs/ folder): broker 1's start-up at 2020-03-31 15:08:47
    ('starting', server.log.2020-03-31-17.gz:5077) logs 'Cluster ID = uC5-M0G5Qy-3qM8_m3M3yQ' (:5114) and its
    configuration dump (broker.id = 1, :5116), with broker 0's '[KafkaServer id=0] started' (:5113, the end of the
    start-up broker 0 began at :4625) between them. The start-up and its cluster id are broker 1's, so broker 1's lines
    after it go with cluster uC5...: its LeaderAndIsr from controller 2 epoch 2 (state-change.log.2020-03-31-23.gz:16035)
    with that controller's election (controller.log.2020-03-31-23.gz:703, epoch 2), not with the cluster before."""
    name = "shani530__KafkaLearning"
    events = folder_events({name: REAL_LOGS2 / name})
    told = tell_clusters(events, name)
    of = {(e.source_file.rsplit("/", 1)[1], e.source_pos): n for e, n in zip(events, told.names)}
    new = f"{name} [uC5-M0G5Qy-3qM8_m3M3yQ]"
    assert of[("server.log.2020-03-31-17.gz", 5114)] == new
    assert of[("controller.log.2020-03-31-23.gz", 703)] == of[("state-change.log.2020-03-31-23.gz", 16035)] == new
    # the outage before it stays with its own cluster: controller 2 epoch 14's OfflinePartition line at 15:03:34
    assert of[("state-change.log.2020-03-31-23.gz", 10011)] == f"{name} [Lu-J4l_5S42nELztrflTXQ]"
    from replay_engine.folders.parts import writers
    who = {(e.source_file.rsplit("/", 1)[1], e.source_pos, e.event_type): w for e, w in zip(events, writers(events))}
    assert who[("server.log.2020-03-31-17.gz", 5077, "broker_startup")] == 1
    assert who[("server.log.2020-03-31-17.gz", 5113, "broker_startup")] == 0


def test_a_brokers_lines_in_two_clusters_times_one_after_the_other_are_two_processes():
    """jay0911 (2.7.0, one logs/ folder): broker 0 ignores controller 0's LeaderAndIsr for __consumer_offsets-22 at
    2021-11-09 07:45:07 ("... since its associated leader epoch 0 matches the current leader epoch",
    state-change.log.2021-11-09-00.gz:49), in the time of the cluster the evidence does not name (its lines end
    2021-11-10 14:56); its next lines are controller.log.2021-11-10-15.gz's from 16:01, in cluster -A8RX...'s time
    alone. No start-up of broker 0 is in the evidence, but a process reads its cluster id once, as it starts (2.8.0
    KafkaServer.startup, getOrGenerateClusterId): the two stretches are two processes', each with its cluster, not one
    left out of both (as when the first line is read, on main: 170 events left out)."""
    name = "jay0911__kafka-docker"
    events = folder_events({name: REAL_LOGS2 / name})
    told = tell_clusters(events, name)
    of = {(e.source_file.rsplit("/", 1)[1], e.source_pos): n for e, n in zip(events, told.names)}
    assert of[("state-change.log.2021-11-09-00.gz", 49)] == of[("state-change.log.2021-11-09-00.gz", 5)] \
        == f"{name} [unnamed 1]"
    assert of[("controller.log.2021-11-10-15.gz", 11)] == f"{name} [-A8RXUWrRiiJ5A7_7XY7mw]"
    assert not [f for f in told.findings if "broker 0's lines" in f["text"]]
