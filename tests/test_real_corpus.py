"""The whole real corpus (shared/real_logs), one pure-Python pass: every file accounted for,
every template line of the key kinds turned into its typed event, per-version samples
checked field by field against the real line read by hand.

Independent truth used here:
- counts: ``grep`` over the decompressed files (the command is next to each table);
- samples: the real line, read from the gz file at the cited line number, with the
  expected values written by hand from its text;
- versions: MANIFEST.tsv's ``kafka_version``.

Each file is parsed once per run, when a test first needs it. The checks over every cluster run per cluster: the
default run holds them on a few (0.8, 2.8, 4.0 KRaft and the issue excerpts), the rest is the opt-in tier (marker
``corpus``, conftest.DEFAULT_CLUSTERS); the per-version line samples read only their own files.
"""
from __future__ import annotations

import collections
import csv
import functools
import gzip
import re

import pytest

from conftest import DEFAULT_CLUSTERS, REAL_LOGS
from conftest import per_cluster as conftest_per_cluster
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from parsers.schema import EVENT_TYPES, load_detail

HEADER = re.compile(rb"^(\[\d{4}-\d\d-\d\d|\d{4}-\d\d-\d\d)")


def _files(root=REAL_LOGS):
    # Evidence files only (MANIFEST/SUMMARY/INDEX .tsv describe the corpus, they are not evidence).
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".gz", ".log"))


def _raw(path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


@functools.cache
def parsed(rel: str) -> tuple:
    """(events, summary) of one file of the corpus, parsed once per run (tests read them, never change them)."""
    events, summary = parse_source((REAL_LOGS / rel).read_bytes(), SourceContext(path=rel, cluster=rel.split("/")[0]))
    return tuple(events), summary


def cluster_files(cluster: str) -> dict:
    """rel -> (events, summary) for every evidence file of one cluster (or of issue_snippets)."""
    return {rel: parsed(rel) for rel in (p.relative_to(REAL_LOGS).as_posix() for p in _files(REAL_LOGS / cluster))}


CLUSTERS = sorted(p.name for p in REAL_LOGS.iterdir() if p.is_dir())


def per_cluster(clusters=CLUSTERS):
    return pytest.mark.parametrize("cluster", conftest_per_cluster(clusters))


@pytest.mark.corpus
def test_the_corpus_holds_every_cluster_and_file():
    assert DEFAULT_CLUSTERS <= set(CLUSTERS) and len(_files()) > 1500
    assert sum(len(_files(REAL_LOGS / c)) for c in CLUSTERS) == len(_files())


@per_cluster()
def test_every_file_is_accounted_for(cluster):
    corpus = cluster_files(cluster)
    assert corpus
    for rel, (events, s) in corpus.items():
        assert s.balanced(), rel
        assert not any("internal parser error" in e for e in s.errors), (rel, s.errors)
        if s.kind == "broker_log":
            # independent count: the physical lines of the file (CR, LF and CRLF all end a line)
            assert s.lines == len(_raw(REAL_LOGS / rel).splitlines()), rel
            assert s.events == len(events)
            assert all(ev.event_type in EVENT_TYPES and ev.source_pos >= 1 for ev in events), rel


@per_cluster()
def test_unrecognized_lines_are_only_the_preambles_of_issue_excerpts(cluster):
    """Every broker-log line is parsed, routine (other) or quarantined, except lines before the
    first log header of the issue excerpts: their "# source" / "# url" notes, the pasted
    `kafka-topics --describe` output of 08.log, and the stack trace 05.log starts in."""
    expected = {}
    for p in sorted((REAL_LOGS / "issue_snippets").glob("*.log")):
        lines = p.read_bytes().splitlines()
        first_header = next(i for i, line in enumerate(lines, 1) if HEADER.match(line))
        expected[f"issue_snippets/{p.name}"] = set(range(1, first_header))
    got = collections.defaultdict(set)
    for rel, (_, s) in cluster_files(cluster).items():
        if s.unrecognized:
            assert len(s.samples) >= s.unrecognized  # every one is kept for inspection
            got[rel] = {q.source_pos for q in s.samples if q.category == "unrecognized"}
            assert len(got[rel]) == s.unrecognized, rel
    assert dict(got) == {k: v for k, v in expected.items() if v and k.startswith(cluster + "/")}
    assert sum(map(len, got.values())) == (36 if cluster == "issue_snippets" else 0)


@per_cluster()
def test_the_only_quarantined_line_is_a_run_of_nul_bytes(cluster):
    quarantined = [(rel, q.source_pos) for rel, (_, s) in cluster_files(cluster).items() if s.kind == "broker_log"
                   for q in s.samples if q.category == "quarantined"]
    nul = ("AndreasTraut__kafka_2.13-2.8.0/logs/server.log.2021-05-05-12.gz", 130)
    assert quarantined == ([nul] if nul[0].startswith(cluster + "/") else [])
    if quarantined:
        line = _raw(REAL_LOGS / nul[0]).splitlines()[129]
        assert len(line) > 1000 and set(line) == {0}  # the zeros a crash leaves in a preallocated file


def _cluster_counts(cluster):
    """Event counts of a cluster's text logs (the ZooKeeper/KRaft files have their own tests)."""
    per = collections.Counter()
    for rel, (events, s) in cluster_files(cluster).items():
        if s.kind == "broker_log":
            per.update(ev.event_type for ev in events)
    return per


# Expected counts per cluster, from grep over the decompressed text files of the cluster:
#   F=$(find real_logs/<cluster> -name '*.gz' ! -path '*version-2*' ! -path '*__cluster_metadata*')
#   zcat -f $F | grep -caP '<pattern>'            ("ids(...)": grep -aoP ... | tr , '\n' | grep -c '[0-9]')
# partition_state_change:       '[Cc]hanged partition \S+ (state )?from \w+ to \w+'
# leader_election_failed:       '(failed to change state for partition|nitiated state change for partition) \S+ from \w+ to OnlinePartition'
# replica_state_change:         'hanged state of replica \d+|nitiated state change of replica \d+'
# controller_elected:           'successfully elected as (leader|the controller)', plus for 0.8-0.10 clusters the
#                               controller.log line 'Controller \d+ incremented epoch to' (no election line of its own there)
# broker_failed:                ids('deleted brokers: \K[\d,]+') + ids('bounced brokers: \K[\d,]+') + ids('Broker failure callback for \K[\d, ]+')
# broker_registered:            ids('Newly added brokers: \K[\d,]+') + ids('bounced brokers: \K[\d,]+')
#                               + 'Registered broker \d+ at path /brokers/ids/' + 'Successfully registered broker \d+ with broker epoch'
#                               + 'Replayed initial RegisterBrokerRecord|establishing a new incarnation of broker|Registered new broker:'
# partition_leader_isr_written: 'after removing replica \d+ from the ISR|New leader and ISR for partition|Selected new leader and ISR'
# unclean_leader_election:      "There's potential data loss|UNCLEAN partition change|using an unclean election"
# isr_shrink / isr_expand:      'Shrinking ISR' / 'Expanding ISR'
# become_leader:                'starts at [Ll]eader [Ee]poch' minus the follower lines '\] Follower \S+ starts at leader epoch'
# become_follower:              '\] Follower \S+ starts at leader epoch' + '[Ss]tarted fetcher to new leader as part of become-follower'
# zk_session_expired:           'WARN Unable to reconnect to ZooKeeper service, session 0x[0-9a-f]+ has expired \(|ZK expired; shut down all controller components'
# kraft_leader_change:          'Becoming the active controller at epoch|Renouncing the leadership due to a metadata log event|In the new epoch \d+, the leader is|Completed transition to (Leader|FollowerState)\('
# broker_heartbeat_timeout:     'because its session has timed out'
COUNTED = ("partition_state_change", "leader_election_failed", "replica_state_change", "controller_elected",
           "broker_failed", "broker_registered", "partition_leader_isr_written", "unclean_leader_election", "isr_shrink",
           "isr_expand", "become_leader", "become_follower", "zk_session_expired", "kraft_leader_change",
           "broker_heartbeat_timeout")
EXPECTED = {
    "JihoChoi__enc-streaming-benchmarks": dict(  # 0.8.2.1
        partition_state_change=249, leader_election_failed=6, replica_state_change=249, controller_elected=129 + 129,
        broker_registered=257, partition_leader_isr_written=5, zk_session_expired=6),
    "agamsidhu__Kafka": dict(  # 0.9.0.0
        controller_elected=0 + 4, broker_registered=6, partition_leader_isr_written=1, become_follower=2),
    "Aminoid__basic-sentiment-analysis": dict(  # 0.10.0.0
        partition_state_change=28, leader_election_failed=24, replica_state_change=32, controller_elected=17 + 17,
        broker_registered=32, partition_leader_isr_written=24, zk_session_expired=11),
    "andreinedelciu__kafka-brokers-public": dict(  # 0.10.2.0
        partition_state_change=33, leader_election_failed=219, replica_state_change=36, controller_elected=3 + 3,
        broker_failed=1, broker_registered=11, partition_leader_isr_written=9, unclean_leader_election=3, isr_expand=3,
        become_follower=3),
    "oridonner__KafkaOnDocker": dict(  # 0.11.0.0
        partition_state_change=428, replica_state_change=696, controller_elected=2, broker_registered=5, isr_shrink=1,
        become_leader=32, become_follower=134),
    "chase-lewis__JIE7351": dict(  # 0.11.0.1-cp1
        partition_state_change=989, leader_election_failed=385, replica_state_change=1428, controller_elected=16,
        broker_registered=17, partition_leader_isr_written=385, zk_session_expired=2, become_leader=325),
    "minhdc2__kafka-Golang": dict(  # 1.0.0
        partition_state_change=22, leader_election_failed=30, replica_state_change=52, controller_elected=10,
        broker_failed=2, broker_registered=22, isr_shrink=24, isr_expand=22, zk_session_expired=19, become_leader=3,
        become_follower=5),
    "zhanglong318__kafka": dict(  # 1.0.0
        partition_state_change=453, leader_election_failed=309, replica_state_change=471, controller_elected=7,
        broker_registered=14, partition_leader_isr_written=318, become_leader=681),
    "choopong__kafka": dict(  # 1.1.0
        partition_state_change=315, leader_election_failed=51, replica_state_change=677, controller_elected=13,
        broker_failed=2, broker_registered=9, isr_expand=1, zk_session_expired=7, become_leader=102),
    "united10__Matchmaking_platform": dict(  # 2.0.0
        partition_state_change=262, replica_state_change=876, controller_elected=15, broker_registered=4,
        zk_session_expired=1, become_leader=167),
    "Artificial-Ridiculous__kafka": dict(  # 2.1.1
        partition_state_change=409, replica_state_change=408, controller_elected=3, broker_failed=6,
        broker_registered=3, isr_expand=1, become_leader=132, become_follower=1),
    "Eniyanilavan__Kafka": dict(  # 2.2.1
        partition_state_change=153, leader_election_failed=102, replica_state_change=287, controller_elected=18,
        broker_failed=6, broker_registered=32, isr_expand=23, zk_session_expired=15, become_leader=115,
        become_follower=39),
    "JacksonFarley__Kafka-Data-Centric-Project": dict(  # 2.3.0
        partition_state_change=11, leader_election_failed=55, replica_state_change=122, controller_elected=6,
        broker_registered=1, become_leader=105, become_follower=1),
    "Saurabh7064__kafka": dict(  # 2.4.1
        partition_state_change=119, replica_state_change=468, controller_elected=7, broker_failed=4,
        broker_registered=22, isr_expand=7, zk_session_expired=8, become_leader=173, become_follower=19),
    "vishnu1368__kafka_2.12-2.5.1": dict(  # 2.5.1
        leader_election_failed=35, replica_state_change=56, controller_elected=1, become_leader=4),
    "AndreasTraut__kafka_2.13-2.8.0": dict(  # 2.8.0
        partition_state_change=263, leader_election_failed=409, controller_elected=10, broker_failed=6,
        broker_registered=19, partition_leader_isr_written=326, zk_session_expired=3, become_leader=230,
        become_follower=24),
    "CodingCookieRookie__CS3219_TASKD": dict(  # 3.0.0
        partition_state_change=8, controller_elected=4, broker_failed=8, broker_registered=7, isr_shrink=3,
        become_leader=53, become_follower=7),
    "gaparedes__kafka-demo": dict(  # 3.4.0
        partition_state_change=149, leader_election_failed=62, controller_elected=2, broker_failed=4,
        broker_registered=9, partition_leader_isr_written=60, become_leader=96),
    "NikhilDighe9975__kafka_setup": dict(  # 3.7.1
        partition_state_change=168, controller_elected=32, broker_registered=36, partition_leader_isr_written=2,
        zk_session_expired=4, become_leader=2199),
    "YehorYehorychev__Kafka": dict(  # 3.9.0 ZooKeeper mode
        partition_state_change=427, leader_election_failed=150, controller_elected=7, broker_failed=4,
        broker_registered=7, partition_leader_isr_written=119, become_leader=225, become_follower=16),
    "BetrajJ__kafka-kraft": dict(  # 3.9.0 KRaft
        broker_registered=165, kraft_leader_change=12473, broker_heartbeat_timeout=18, become_leader=599,
        become_follower=1590),
    "Ammar777782439__kafka_2.13-4.0.0": dict(  # 4.0.0
        broker_registered=197, kraft_leader_change=622, broker_heartbeat_timeout=14, become_leader=179,
        become_follower=197),
    "GraphLogistics__kafka": dict(broker_heartbeat_timeout=1, become_leader=52),  # 4.1.1
}


@per_cluster(sorted(EXPECTED))
def test_every_template_line_of_the_key_kinds_becomes_its_event(cluster):
    per = _cluster_counts(cluster)
    assert {t: per[t] for t in COUNTED} == {t: EXPECTED[cluster].get(t, 0) for t in COUNTED}


def _manifest() -> dict[str, str]:
    with open(REAL_LOGS / "SUMMARY.tsv", newline="") as fh:
        return {row["dir"]: row["kafka_version"].split()[0] for row in csv.DictReader(fh, delimiter="\t")}


@per_cluster([c for c in CLUSTERS if c != "issue_snippets"])
def test_kafka_version_lines_agree_with_the_manifest(cluster):
    found = {ev.detail["version"] for events, _ in cluster_files(cluster).values() for ev in events
             if ev.event_type == "kafka_version"}
    assert found <= {_manifest()[cluster]}


@pytest.mark.corpus
def test_most_clusters_state_their_kafka_version():
    stated = [c for c in CLUSTERS if any(ev.event_type == "kafka_version" for events, _ in cluster_files(c).values()
                                         for ev in events)]
    assert len(stated) >= 15


# (Kafka version, file, line, text the real line holds, event_type, expected columns, expected detail subset)
# Expected values were written by reading the line; "sub" picks one of several events of a line.
SAMPLES = [
    # --- 0.8.2.1 ---------------------------------------------------------------------------------
    ("0.8.2.1", "JihoChoi__enc-streaming-benchmarks/kafka_2.10-0.8.2.1/logs/state-change.log.2016-09-14-03.gz", 3,
     "changed partition [ad-events,0] from NewPartition to OnlinePartition with leader 0", "partition_state_change",
     dict(topic="ad-events", partition=0, from_state="NewPartition", to_state="OnlinePartition", leader=0,
          controller_id=0, controller_epoch=1, broker_id=0), {}),
    ("0.8.2.1", "JihoChoi__enc-streaming-benchmarks/kafka_2.10-0.8.2.1/logs/server.log.2016-09-14-03.gz", 28,
     "0 successfully elected as leader", "controller_elected", dict(controller_id=0, subject_broker=0), {}),
    ("0.8.2.1", "JihoChoi__enc-streaming-benchmarks/kafka_2.10-0.8.2.1/logs/controller.log.2016-09-14-03.gz", 23,
     "Newly added brokers: 0, deleted brokers: , all live brokers: 0", "broker_registered",
     dict(subject_broker=0, controller_id=0), dict(live_brokers=[0], via="controller_broker_change")),
    ("0.8.2.1", "JihoChoi__enc-streaming-benchmarks/kafka_2.10-0.8.2.1/logs/state-change.log.2016-09-14-13.gz", 28,
     "initiated state change for partition [ad-events,0] from OfflinePartition to OnlinePartition failed",
     "leader_election_failed", dict(topic="ad-events", partition=0, controller_id=0, controller_epoch=2),
     dict(reason="no_live_replica", live_brokers=[], assigned=[0])),
    # --- 0.9.0.0: controller.log only (no state-change transitions at TRACE in this capture) -------
    ("0.9.0.0", "agamsidhu__Kafka/kafka_2.11-0.9.0.0/logs/controller.log.2017-10-06-20.gz", 3,
     "[Controller 0]: Controller 0 incremented epoch to 1", "controller_elected",
     dict(controller_id=0, controller_epoch=1, subject_broker=0), dict(via="epoch_line")),
    ("0.9.0.0", "agamsidhu__Kafka/kafka_2.11-0.9.0.0/logs/controller.log.2017-10-06-20.gz", 234,
     "[BrokerChangeListener on Controller 2]: Newly added brokers: 0, deleted brokers: , all live brokers: 0,1,2",
     "broker_registered", dict(subject_broker=0, controller_id=2, broker_id=2), dict(live_brokers=[0, 1, 2])),
    ("0.9.0.0", "agamsidhu__Kafka/kafka_2.11-0.9.0.0/logs/controller.log.2017-10-06-20.gz", 220,
     "Started partition state machine with initial state -> Map([Hello-Kafka,0] -> OfflinePartition)",
     "partition_state_observed", dict(topic="Hello-Kafka", partition=0, to_state="OfflinePartition", controller_id=2),
     dict(via="controller_startup")),
    ("0.9.0.0", "agamsidhu__Kafka/kafka_2.11-0.9.0.0/logs/controller.log.2017-10-06-20.gz", 241,
     'Selected new leader and ISR {"leader":0,"leader_epoch":1,"isr":[0]} for offline partition [Hello-Kafka,0]',
     "partition_leader_isr_written", dict(topic="Hello-Kafka", partition=0, leader=0, leader_epoch=1, isr=[0]),
     dict(reason="election")),
    ("0.9.0.0", "agamsidhu__Kafka/kafka_2.11-0.9.0.0/logs/state-change.log.2017-10-06-20.gz", 1,
     "Broker 0 received LeaderAndIsr request (LeaderAndIsrInfo:(Leader:2,ISR:2,1,0,LeaderEpoch:0,ControllerEpoch:4)",
     "leader_and_isr_received", dict(broker_id=0, topic="Multiplerbrokerapplication", partition=0, leader=2,
                                     isr=[2, 1, 0], leader_epoch=0, replicas=[2, 1, 0], controller_id=2,
                                     controller_epoch=4), dict(correlation_id=5)),
    # --- 0.10.0.0 --------------------------------------------------------------------------------
    ("0.10.0.0", "Aminoid__basic-sentiment-analysis/kafka_2.11-0.10.0.0/logs/state-change.log.2017-01-18-23.gz", 13,
     "Controller 0 epoch 2 changed partition [twitterstream,0] from NewPartition to OnlinePartition with leader 0",
     "partition_state_change", dict(topic="twitterstream", partition=0, leader=0, controller_id=0, controller_epoch=2,
                                    to_state="OnlinePartition"), {}),
    ("0.10.0.0", "Aminoid__basic-sentiment-analysis/kafka_2.11-0.10.0.0/logs/server.log.2017-01-18-23.gz", 355,
     "0 successfully elected as leader", "controller_elected", dict(controller_id=0, controller_epoch=None), {}),
    ("0.10.0.0", "Aminoid__basic-sentiment-analysis/kafka_2.11-0.10.0.0/logs/controller.log.2017-01-18-23.gz", 77,
     "Newly added brokers: 0, deleted brokers: , all live brokers: 0", "broker_registered",
     dict(subject_broker=0, controller_id=0), dict(live_brokers=[0])),
    ("0.10.0.0", "Aminoid__basic-sentiment-analysis/kafka_2.11-0.10.0.0/logs/state-change.log.2017-01-19-08.gz", 2,
     "initiated state change for partition [twitterstream,0] from OfflinePartition to OnlinePartition failed",
     "leader_election_failed", dict(topic="twitterstream", partition=0, controller_epoch=3),
     dict(reason="no_live_replica", assigned=[0], live_brokers=[])),
    # --- 0.10.2.0 --------------------------------------------------------------------------------
    ("0.10.2.0", "andreinedelciu__kafka-brokers-public/logs/state-change.log.2020-10-08-16.gz", 46,
     "Controller 0 epoch 1 changed partition [dns_kafka_topic,0] from NewPartition to OnlinePartition with leader 0",
     "partition_state_change", dict(topic="dns_kafka_topic", partition=0, leader=0, controller_epoch=1), {}),
    ("0.10.2.0", "andreinedelciu__kafka-brokers-public/logs/server.log.2020-10-08-16.gz", 161,
     "0 successfully elected as leader", "controller_elected", dict(controller_id=0), {}),
    ("0.10.2.0", "andreinedelciu__kafka-brokers-public/logs/controller.log.gz", 314,
     "Newly added brokers: , deleted brokers: 1010, all live brokers: 1,2", "broker_failed",
     dict(subject_broker=1010, controller_id=1), dict(live_brokers=[1, 2])),
    ("0.10.2.0", "andreinedelciu__kafka-brokers-public/logs/controller.log.gz", 113,
     "No broker in ISR is alive for [dns_kafka_topic,1]. Elect leader 1 from live brokers 1.",
     "unclean_leader_election", dict(topic="dns_kafka_topic", partition=1, leader=1), dict(live_brokers=[1])),
    # --- 0.11.0.0 --------------------------------------------------------------------------------
    ("0.11.0.0", "oridonner__KafkaOnDocker/kafka_2.11-0.11.0.0/logs/state-change.log.2018-04-28-21.gz", 464,
     "changed partition [__KafkaCruiseControlModelTrainingSamples,23] from NewPartition to OnlinePartition with leader 2",
     "partition_state_change", dict(topic="__KafkaCruiseControlModelTrainingSamples", partition=23, leader=2,
                                    controller_id=1, controller_epoch=1), {}),
    ("0.11.0.0", "oridonner__KafkaOnDocker/kafka_2.11-0.11.0.0/logs/controller.log.2018-04-28-21.gz", 3,
     "[Controller 1]: 1 successfully elected as the controller", "controller_elected",
     dict(controller_id=1, controller_epoch=1), dict(epoch_from_line=5)),  # line 5: "incremented epoch to 1"
    ("0.11.0.0", "oridonner__KafkaOnDocker/kafka_2.11-0.11.0.0/logs/controller.log.2018-04-28-21.gz", 34,
     "Newly added brokers: 2, deleted brokers: , all live brokers: 1,2", "broker_registered",
     dict(subject_broker=2, controller_id=1), dict(live_brokers=[1, 2])),
    # --- 0.11.0.1-cp1 ----------------------------------------------------------------------------
    ("0.11.0.1-cp1", "chase-lewis__JIE7351/logs/state-change.log.2017-11-25-16.gz", 4002,
     "changed partition [__consumer_offsets,2] from OfflinePartition to OnlinePartition with leader 0",
     "partition_state_change", dict(topic="__consumer_offsets", partition=2, from_state="OfflinePartition", leader=0,
                                    controller_epoch=2), {}),
    ("0.11.0.1-cp1", "chase-lewis__JIE7351/logs/controller.log.2017-11-25-16.gz", 265,
     "[Controller 0]: 0 successfully elected as the controller", "controller_elected",
     dict(controller_id=0, controller_epoch=2), dict(epoch_from_line=268)),  # 267 is "Initialized ... epoch to 1"
    ("0.11.0.1-cp1", "chase-lewis__JIE7351/logs/state-change.log.2017-11-25-16.gz", 1015,
     "initiated state change for partition [__consumer_offsets,19] from OfflinePartition to OnlinePartition failed",
     "leader_election_failed", dict(topic="__consumer_offsets", partition=19, controller_epoch=2),
     dict(reason="no_live_isr", isr=[0], live_brokers=[])),
    # --- 1.0.0 -----------------------------------------------------------------------------------
    ("1.0.0", "minhdc2__kafka-Golang/kafka_2.11-1.0.0/logs/state-change.log.2021-03-16-12.gz", 87,
     "[Controller id=1 epoch=1] Changed partition my-kafka-topic-1 from OnlinePartition to OnlinePartition with leader 1",
     "partition_state_change", dict(topic="my-kafka-topic", partition=1, leader=1, controller_id=1, controller_epoch=1),
     {}),
    ("1.0.0", "minhdc2__kafka-Golang/kafka_2.11-1.0.0/logs/controller.log.2021-03-16-12.gz", 2,
     "[Controller id=1] 1 successfully elected as the controller", "controller_elected",
     dict(controller_id=1, controller_epoch=1), dict(epoch_from_line=4)),  # line 4: "Incremented epoch to 1"
    ("1.0.0", "minhdc2__kafka-Golang/kafka_2.11-1.0.0/logs/controller.log.2021-03-16-12.gz", 100,
     "Newly added brokers: , deleted brokers: 2, all live brokers: 1", "broker_failed",
     dict(subject_broker=2, controller_id=1), dict(live_brokers=[1])),
    ("1.0.0", "minhdc2__kafka-Golang/kafka_2.11-1.0.0/logs/controller.log.2021-03-16-12.gz", 104,
     "Broker failure callback for 2", "broker_failed", dict(subject_broker=2, controller_id=1),
     dict(via="failure_callback")),
    ("1.0.0", "minhdc2__kafka-Golang/kafka_2.11-1.0.0/logs/state-change.log.2021-03-16-13.gz", 3,
     "Initiated state change for partition my-kafka-topic-2 from OnlinePartition to OnlinePartition failed",
     "leader_election_failed", dict(topic="my-kafka-topic", partition=2, from_state="OnlinePartition"),
     dict(reason="other", isr=[1], shutting_down_brokers=[1])),
    ("1.0.0", "zhanglong318__kafka/kafka_2.11-1.0.0/logs/state-change.log.2018-03-28-15.gz", 53,
     "Initiated state change for partition __consumer_offsets-19 from OfflinePartition to OnlinePartition failed",
     "leader_election_failed", dict(topic="__consumer_offsets", partition=19, controller_id=0, controller_epoch=2),
     dict(reason="no_live_isr", isr=[0], live_brokers=[])),
    ("1.0.0", "zhanglong318__kafka/kafka_2.11-1.0.0/logs/controller.log.2018-04-13-21.gz", 48,
     'New leader and ISR for partition mytest2-0 is {"leader":-1,"leader_epoch":1,"isr":[0]}',
     "partition_leader_isr_written", dict(topic="mytest2", partition=0, leader=-1, isr=[0], leader_epoch=1),
     dict(reason="offline_replica")),
    # --- 1.1.0 -----------------------------------------------------------------------------------
    ("1.1.0", "choopong__kafka/kafka_2.11-1.1.0/logs/state-change.log.2018-07-18-14.gz", 5,
     "Changed partition test-0 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=0, leaderEpoch=0, "
     "isr=List(0), zkVersion=0)", "partition_state_change",
     dict(topic="test", partition=0, leader=0, leader_epoch=0, isr=[0], zk_version=0, controller_epoch=1), {}),
    ("1.1.0", "choopong__kafka/kafka_2.11-1.1.0/logs/controller.log.2018-07-18-14.gz", 3,
     "[Controller id=0] 0 successfully elected as the controller", "controller_elected",
     dict(controller_id=0, controller_epoch=1), dict(epoch_from_line=6)),  # line 6: "Epoch incremented to 1"
    ("1.1.0", "choopong__kafka/kafka_2.11-1.1.0/logs/controller.log.2018-07-18-16.gz", 1,
     "Newly added brokers: , deleted brokers: 1, all live brokers: 0,2", "broker_failed",
     dict(subject_broker=1, controller_id=0), dict(live_brokers=[0, 2])),
    ("1.1.0", "choopong__kafka/kafka_2.11-1.1.0/logs/state-change.log.2018-07-18-16.gz", 176,
     "failed to change state for partition __consumer_offsets-22 from OfflinePartition to OnlinePartition",
     "leader_election_failed", dict(topic="__consumer_offsets", partition=22, controller_id=2, controller_epoch=5),
     dict(strategy="OfflinePartitionLeaderElectionStrategy")),
    # --- 2.0.0 -----------------------------------------------------------------------------------
    ("2.0.0", "united10__Matchmaking_platform/KafkaService/logs/state-change.log.2018-10-31-10.gz", 165,
     "Changed partition __consumer_offsets-40 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=0, "
     "leaderEpoch=0, isr=List(0), zkVersion=0)", "partition_state_change",
     dict(topic="__consumer_offsets", partition=40, leader=0, isr=[0], zk_version=0), {}),
    ("2.0.0", "united10__Matchmaking_platform/KafkaService/logs/controller.log.2018-10-31-10.gz", 3,
     "[Controller id=0] 0 successfully elected as the controller", "controller_elected",
     dict(controller_id=0, controller_epoch=1), dict(epoch_from_line=6)),  # line 6: "Epoch incremented to 1"
    # --- 2.1.1 -----------------------------------------------------------------------------------
    ("2.1.1", "Artificial-Ridiculous__kafka/logs/state-change.log.2019-06-04-18.gz", 165,
     "Changed partition __consumer_offsets-40 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=0",
     "partition_state_change", dict(topic="__consumer_offsets", partition=40, leader=0, isr=[0], controller_epoch=1), {}),
    ("2.1.1", "Artificial-Ridiculous__kafka/logs/controller.log.2019-06-04-18.gz", 3,
     "0 successfully elected as the controller. Epoch incremented to 1 and epoch zk version is now 1",
     "controller_elected", dict(controller_id=0, controller_epoch=1), dict(epoch_zk_version=1)),
    ("2.1.1", "Artificial-Ridiculous__kafka/logs/controller.log.2019-06-05-18.gz", 36,
     "Newly added brokers: , deleted brokers: 2, all live brokers: 0,1", "broker_failed",
     dict(subject_broker=2, controller_id=0), dict(live_brokers=[0, 1])),
    ("2.1.1", "Artificial-Ridiculous__kafka/logs/controller.log.2019-06-05-18.gz", 205,
     "Broker failure callback for 1", "broker_failed", dict(subject_broker=1), dict(via="failure_callback")),
    # --- 2.2.1 -----------------------------------------------------------------------------------
    ("2.2.1", "Eniyanilavan__Kafka/logs/state-change.log.2019-06-30-22.gz", 29,
     "Changed partition dcode_fileParse_SKETCH-0 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=1, "
     "leaderEpoch=0, isr=List(1, 0), zkVersion=0)", "partition_state_change",
     dict(topic="dcode_fileParse_SKETCH", partition=0, leader=1, isr=[1, 0], controller_id=1, controller_epoch=17), {}),
    ("2.2.1", "Eniyanilavan__Kafka/logs/controller.log.2019-07-01-10.gz", 6,
     "Epoch incremented to 18 and epoch zk version is now 17", "controller_elected",
     dict(controller_id=0, controller_epoch=18), dict(epoch_zk_version=17)),
    ("2.2.1", "Eniyanilavan__Kafka/logs/controller.log.2019-07-05-09.gz", 124,
     "Newly added brokers: , deleted brokers: 1, bounced brokers: , all live brokers: 0", "broker_failed",
     dict(subject_broker=1, controller_id=0), dict(live_brokers=[0])),
    ("2.2.1", "Eniyanilavan__Kafka/logs/state-change.log.2019-07-02-23.gz", 1,
     "failed to change state for partition dcode_fileParse_XD-0 from OnlinePartition to OnlinePartition",
     "leader_election_failed", dict(topic="dcode_fileParse_XD", partition=0, controller_epoch=21),
     dict(reason="other", exception="KeeperException$SessionExpiredException")),
    # --- 2.3.0 -----------------------------------------------------------------------------------
    ("2.3.0", "JacksonFarley__Kafka-Data-Centric-Project/logs/state-change.log.2019-12-04-20.gz", 8,
     "Changed partition test-0 from NewPartition to OnlinePartition", "partition_state_change",
     dict(topic="test", partition=0, leader=0, isr=[0], zk_version=0), {}),
    ("2.3.0", "JacksonFarley__Kafka-Data-Centric-Project/logs/controller.log.2019-12-04-20.gz", 180,
     "Epoch incremented to 4 and epoch zk version is now 4", "controller_elected",
     dict(controller_id=0, controller_epoch=4), {}),
    ("2.3.0", "JacksonFarley__Kafka-Data-Centric-Project/logs/state-change.log.2019-12-04-21.gz", 19,
     "failed to change state for partition my-related-topic-0 from OfflinePartition to OnlinePartition",
     "leader_election_failed", dict(topic="my-related-topic", partition=0, controller_epoch=4),
     dict(strategy="OfflinePartitionLeaderElectionStrategy")),
    # --- 2.4.1 -----------------------------------------------------------------------------------
    ("2.4.1", "Saurabh7064__kafka/logs/state-change.log.2020-04-11-21.gz", 198,
     "Changed partition __consumer_offsets-40 from NewPartition to OnlinePartition", "partition_state_change",
     dict(topic="__consumer_offsets", partition=40, leader=0, isr=[0], leader_epoch=0), {}),
    ("2.4.1", "Saurabh7064__kafka/logs/controller.log.2020-04-12-00.gz", 543,
     "Epoch incremented to 5 and epoch zk version is now 5", "controller_elected",
     dict(controller_id=0, controller_epoch=5), {}),
    ("2.4.1", "Saurabh7064__kafka/logs/controller.log.gz", 89,
     "Newly added brokers: , deleted brokers: 1, bounced brokers: , all live brokers: 0,2", "broker_failed",
     dict(subject_broker=1), dict(live_brokers=[0, 2])),
    # --- 2.5.1: no partition transitions logged in this capture; a replica transition instead --------
    ("2.5.1", "vishnu1368__kafka_2.12-2.5.1/logs/state-change.log.2025-12-04-22.gz", 244,
     "Changed state of replica 2 for partition __consumer_offsets-8 from ReplicaDeletionIneligible to OfflineReplica",
     "replica_state_change", dict(subject_broker=2, topic="__consumer_offsets", partition=8, to_state="OfflineReplica",
                                  controller_id=1, controller_epoch=4), {}),
    ("2.5.1", "vishnu1368__kafka_2.12-2.5.1/logs/controller.log.2025-12-04-22.gz", 1,
     "2 successfully elected as the controller. Epoch incremented to 3", "controller_elected",
     dict(controller_id=2, controller_epoch=3), {}),
    ("2.5.1", "vishnu1368__kafka_2.12-2.5.1/logs/state-change.log.2025-12-04-22.gz", 359,
     "failed to change state for partition __consumer_offsets-30 from OfflinePartition to OnlinePartition",
     "leader_election_failed", dict(topic="__consumer_offsets", partition=30, controller_id=1, controller_epoch=4),
     dict(reason="no_live_isr", strategy="OfflinePartitionLeaderElectionStrategy(false)")),
    # --- 2.8.0 -----------------------------------------------------------------------------------
    ("2.8.0", "AndreasTraut__kafka_2.13-2.8.0/logs/state-change.log.2021-04-26-16.gz", 13,
     "Changed partition first-0 from OfflinePartition to OnlinePartition with state LeaderAndIsr(leader=0, "
     "leaderEpoch=2, isr=List(0), zkVersion=2)", "partition_state_change",
     dict(topic="first", partition=0, from_state="OfflinePartition", leader=0, leader_epoch=2, isr=[0], zk_version=2,
          controller_id=0, controller_epoch=4), {}),
    ("2.8.0", "AndreasTraut__kafka_2.13-2.8.0/logs/state-change.log.2021-04-26-16.gz", 8,
     "Partition second-1 state changed to (Leader:-1,ISR:0,LeaderEpoch:1,ControllerEpoch:4) after removing replica 1",
     "partition_leader_isr_written", dict(topic="second", partition=1, leader=-1, isr=[0], leader_epoch=1,
                                          controller_epoch=4), dict(removed_replica=1)),
    ("2.8.0", "AndreasTraut__kafka_2.13-2.8.0/logs/controller.log.2021-04-26-16.gz", 3,
     "Epoch incremented to 4 and epoch zk version is now 4", "controller_elected",
     dict(controller_id=0, controller_epoch=4), {}),
    ("2.8.0", "AndreasTraut__kafka_2.13-2.8.0/logs/controller.log.2021-04-26-20.gz", 47,
     "deleted brokers: 1, bounced brokers: , all live brokers: 0", "broker_failed",
     dict(subject_broker=1, controller_id=0), dict(live_brokers=[0])),
    ("2.8.0", "AndreasTraut__kafka_2.13-2.8.0/logs/state-change.log.2021-04-26-18.gz", 35,
     "failed to change state for partition __consumer_offsets-25 from OfflinePartition to OnlinePartition",
     "leader_election_failed", dict(topic="__consumer_offsets", partition=25, controller_epoch=3),
     dict(reason="no_live_isr")),
    # --- 3.0.0 -----------------------------------------------------------------------------------
    ("3.0.0", "CodingCookieRookie__CS3219_TASKD/logs/state-change.log.2021-11-12-21.gz", 74,
     "Changed partition management-3 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=0, "
     "leaderEpoch=0, isr=List(0, 2, 1), zkVersion=0)", "partition_state_change",
     dict(topic="management", partition=3, leader=0, isr=[0, 2, 1], controller_epoch=2), {}),
    ("3.0.0", "CodingCookieRookie__CS3219_TASKD/logs/controller.log.2021-11-12-22.gz", 467,
     "2 successfully elected as the controller. Epoch incremented to 6", "controller_elected",
     dict(controller_id=2, controller_epoch=6), {}),
    ("3.0.0", "CodingCookieRookie__CS3219_TASKD/logs/controller.log.2021-11-12-22.gz", 107,
     "deleted brokers: 0, bounced brokers: , all live brokers: 1,2", "broker_failed",
     dict(subject_broker=0, controller_id=2), dict(live_brokers=[1, 2])),
    # --- 3.4.0 -----------------------------------------------------------------------------------
    ("3.4.0", "gaparedes__kafka-demo/logs/state-change.log.2023-06-12-09.gz", 17,
     "LeaderAndIsr(leader=0, leaderEpoch=0, isr=List(0), leaderRecoveryState=RECOVERED, partitionEpoch=0)",
     "partition_state_change", dict(topic="cars", partition=1, leader=0, isr=[0], zk_version=0),
     dict(leader_recovery_state="RECOVERED")),
    ("3.4.0", "gaparedes__kafka-demo/logs/controller.log.gz", 169,
     "1 successfully elected as the controller. Epoch incremented to 3", "controller_elected",
     dict(controller_id=1, controller_epoch=3), {}),
    ("3.4.0", "gaparedes__kafka-demo/logs/controller.log.gz", 102,
     "deleted brokers: 1, bounced brokers: , all live brokers: 0,2", "broker_failed", dict(subject_broker=1), {}),
    ("3.4.0", "gaparedes__kafka-demo/logs/state-change.log.gz", 4,
     "failed to change state for partition cars-2 from OfflinePartition to OnlinePartition", "leader_election_failed",
     dict(topic="cars", partition=2, controller_epoch=1), dict(reason="no_live_isr")),
    # --- 3.7.1 -----------------------------------------------------------------------------------
    ("3.7.1", "NikhilDighe9975__kafka_setup/logs/state-change.log.gz", 2288,
     "isrWithBrokerEpoch=List(BrokerState(brokerId=0, brokerEpoch=-1)), leaderRecoveryState=RECOVERED, partitionEpoch=0",
     "partition_state_change", dict(topic="nikhilDemo", partition=2, leader=0, isr=[0], zk_version=0,
                                    controller_epoch=24), {}),
    ("3.7.1", "NikhilDighe9975__kafka_setup/logs/controller.log.gz", 1456,
     "Epoch incremented to 31 and epoch zk version is now 31", "controller_elected",
     dict(controller_id=0, controller_epoch=31), {}),
    ("3.7.1", "NikhilDighe9975__kafka_setup/logs/controller.log.gz", 342,
     "Newly added brokers: 1, deleted brokers: , bounced brokers: , all live brokers: 0,1", "broker_registered",
     dict(subject_broker=1, controller_id=0), dict(live_brokers=[0, 1])),
    # --- 3.9.0, ZooKeeper mode ---------------------------------------------------------------------
    ("3.9.0-zk", "YehorYehorychev__Kafka/logs/state-change.log.2024-11-27-10.gz", 4,
     "Changed partition cities-0 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=0",
     "partition_state_change", dict(topic="cities", partition=0, leader=0, isr=[0], zk_version=0), {}),
    ("3.9.0-zk", "YehorYehorychev__Kafka/logs/controller.log.2024-11-27-09.gz", 2,
     "0 successfully elected as the controller. Epoch incremented to 1", "controller_elected",
     dict(controller_id=0, controller_epoch=1), {}),
    ("3.9.0-zk", "YehorYehorychev__Kafka/logs/controller.log.2024-11-29-11.gz", 120,
     "deleted brokers: 1, bounced brokers: , all live brokers: 0,2", "broker_failed", dict(subject_broker=1), {}),
    ("3.9.0-zk", "YehorYehorychev__Kafka/logs/state-change.log.2024-11-29-11.gz", 211,
     "failed to change state for partition __consumer_offsets-30 from OfflinePartition to OnlinePartition",
     "leader_election_failed", dict(topic="__consumer_offsets", partition=30, controller_id=0, controller_epoch=1),
     dict(reason="no_live_isr")),
    # --- 3.9.0, KRaft mode ---------------------------------------------------------------------------
    ("3.9.0-kraft", "BetrajJ__kafka-kraft/kafka/logs/controller.log.2025-02-06-12.gz", 14,
     "[QuorumController id=2] Becoming the active controller at epoch 352", "kraft_leader_change",
     dict(controller_id=2, controller_epoch=352, broker_id=2), dict(via="became_active")),
    ("3.9.0-kraft", "BetrajJ__kafka-kraft/kafka/logs/controller.log.2025-02-06-11.gz", 13,
     "[QuorumController id=3] In the new epoch 331, the leader is 2.", "kraft_leader_change",
     dict(controller_id=2, controller_epoch=331, broker_id=3), {}),
    ("3.9.0-kraft", "BetrajJ__kafka-kraft/kafka/logs/controller.log.2025-02-07-11.gz", 1121,
     "Fencing broker 2 because its session has timed out.", "broker_heartbeat_timeout",
     dict(subject_broker=2, controller_id=1), {}),
    ("3.9.0-kraft", "BetrajJ__kafka-kraft/kafka/logs/controller.log.2025-02-06-00.gz", 4,
     "BrokerRegistrationChangeRecord(brokerId=1, brokerEpoch=3249, fenced=1, inControlledShutdown=0",
     "broker_fenced", dict(subject_broker=1, controller_id=1), dict(broker_epoch=3249)),
    ("3.9.0-kraft", "BetrajJ__kafka-kraft/kafka/logs/controller.log.2025-02-07-11.gz", 12,
     "Replayed initial RegisterBrokerRecord for broker 1: RegisterBrokerRecord(brokerId=1", "broker_registered",
     dict(subject_broker=1, controller_id=2), dict(broker_epoch=36790, incarnation_id="Klm0rkoZQOGxkBnbB1UxRw")),
    ("3.9.0-kraft", "BetrajJ__kafka-kraft/kafka/logs/server.log.2025-02-06-01.gz", 26,
     "[RaftManager id=1] Completed transition to FollowerState(fetchTimeoutMs=2000, epoch=207, leader=3,",
     "kraft_leader_change", dict(controller_id=3, controller_epoch=207, broker_id=1), dict(via="raft")),
    ("3.9.0-kraft", "BetrajJ__kafka-kraft/kafka/logs/state-change.log.2025-02-06-01.gz", 3,
     "Leader __consumer_offsets-48 with topic id Some(D7i7XwvaTjiWKwdkCamlZQ) starts at leader epoch 4",
     "become_leader", dict(broker_id=3, topic="__consumer_offsets", partition=48, leader=3, leader_epoch=4, isr=[3],
                           zk_version=4), dict(previous_leader_epoch=-1)),
    # --- 4.0.0 -----------------------------------------------------------------------------------
    ("4.0.0", "Ammar777782439__kafka_2.13-4.0.0/logs/controller.log.2025-05-14-22.gz", 8,
     "[QuorumController id=10] Becoming the active controller at epoch 1", "kraft_leader_change",
     dict(controller_id=10, controller_epoch=1), {}),
    ("4.0.0", "Ammar777782439__kafka_2.13-4.0.0/logs/controller.log.gz", 4,
     "[QuorumController id=2] In the new epoch 482, the leader is 3.", "kraft_leader_change",
     dict(controller_id=3, controller_epoch=482, broker_id=2), {}),
    ("4.0.0", "Ammar777782439__kafka_2.13-4.0.0/logs/controller.log.2025-05-14-23.gz", 50,
     "Fencing broker 10 at epoch 123 because its session has timed out.", "broker_heartbeat_timeout",
     dict(subject_broker=10), dict(broker_epoch=123)),
    ("4.0.0", "Ammar777782439__kafka_2.13-4.0.0/logs/controller.log.2025-05-14-22.gz", 49,
     "Replayed initial RegisterBrokerRecord for broker 10", "broker_registered", dict(subject_broker=10),
     dict(broker_epoch=123, incarnation_id="OBrv820yTC6fTrgENx176Q", fenced=True)),
    # --- 4.1.1 -----------------------------------------------------------------------------------
    ("4.1.1", "GraphLogistics__kafka/logs/controller.log.gz", 44,
     "Fencing broker 1 at epoch 10 because its session has timed out.", "broker_heartbeat_timeout",
     dict(subject_broker=1, controller_id=1), dict(broker_epoch=10)),
    ("4.1.1", "GraphLogistics__kafka/logs/controller.log.gz", 46,
     "BrokerRegistrationChangeRecord(brokerId=1, brokerEpoch=10, fenced=1", "broker_fenced", dict(subject_broker=1),
     dict(broker_epoch=10)),
    ("4.1.1", "GraphLogistics__kafka/logs/controller.log.gz", 51,
     "Setting new leader for topicId Si2sFI7LTKSxigLG22b0Ig, partition 0 to 1 using ELR.", "partition_change",
     dict(partition=0, leader=1), dict(election="elr", topic_id="Si2sFI7LTKSxigLG22b0Ig")),
]


@pytest.mark.parametrize("version, rel, line_no, text, event_type, columns, detail", SAMPLES,
                         ids=[f"{s[0]}:{s[1].rsplit('/', 1)[-1]}:{s[2]}" for s in SAMPLES])
def test_real_line_becomes_the_expected_event(version, rel, line_no, text, event_type, columns, detail):
    line = _raw(REAL_LOGS / rel).splitlines()[line_no - 1].decode("utf-8", "replace")
    assert text in line  # the line this expectation was written from
    events, _ = parsed(rel)
    matching = [e for e in events if e.source_pos == line_no and e.event_type == event_type]
    assert len(matching) == 1, [(e.source_pos, e.event_type) for e in events if e.source_pos == line_no]
    ev = matching[0]
    assert {k: getattr(ev, k) for k in columns} == columns
    assert {k: (ev.detail or {}).get(k) for k in detail} == detail


def test_every_manifest_version_with_text_logs_is_sampled():
    versions = {}
    with open(REAL_LOGS / "SUMMARY.tsv", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if "binary_only" not in row["notable_events"]:
                versions[row["dir"]] = row["kafka_version"].split()[0]
    sampled = {s[1].split("/")[0] for s in SAMPLES}
    # 1.0.0 has two clusters; both are sampled. Every other version has one.
    assert set(versions) == sampled


@pytest.mark.spark
def test_spark_ingest_puts_every_unrecognized_line_in_quarantine_with_file_and_position(spark, tmp_path):
    """Through Spark (what `kafka-forensics ingest` runs): the quarantine output lists exactly the
    excerpt preambles, and events keep their template and typed fields."""
    from forensics.ingest import run_ingest, write_outputs
    from forensics.sources import collect_inputs

    src = REAL_LOGS / "issue_snippets"
    logs = [str(p) for p in sorted(src.glob("*.log"))]  # not INDEX.tsv: it describes the excerpts
    result = run_ingest(spark, collect_inputs(logs, tmp_path / "work"), cluster="snippets")
    write_outputs(result, tmp_path / "out")
    quarantine = spark.read.parquet(str(tmp_path / "out" / "quarantine")).collect()
    got = sorted((r["source_file"].rsplit("/", 1)[-1], r["source_pos"]) for r in quarantine
                 if r["category"] == "unrecognized")
    expected = []
    for p in sorted(src.glob("*.log")):
        lines = p.read_bytes().splitlines()
        first_header = next(i for i, line in enumerate(lines, 1) if HEADER.match(line))
        expected += [(p.name, n) for n in range(1, first_header)]
    assert got == sorted(expected)
    events = spark.read.parquet(str(tmp_path / "out" / "events"))
    unclean = events.where("event_type = 'unclean_leader_election'").orderBy("source_pos").collect()
    # 09.log lines 5-7: "UNCLEAN partition change for testOther-1 / testOther-3 / testMain-5 ... leader: 1 -> 0"
    assert [(r["topic"], r["partition"], r["leader"], r["source_pos"]) for r in unclean] == [
        ("testOther", 1, 0, 5), ("testOther", 3, 0, 6), ("testMain", 5, 0, 7)]
    assert load_detail(unclean[0]["detail"])["template"] == "kraft.partition_change"
