"""Every cause is a case whose claims cite events that say what the claim says.

Independent truth: the evidence files themselves. A claim's reference names a file and a position;
the test opens that file, reads the line (or, in a ZooKeeper transaction log, the transaction:
checksum, length, then the header whose zxid sits 24 bytes in -- ZooKeeper's ``FileTxnLog`` layout)
and checks it is the cited event and that it names what the claim is about.
"""
import gzip
import re
import struct

import pytest

from conftest import SAMPLES
from forensics.sources import broker_hint_from_path
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from replay_engine.causes.cases import BROKER_DOWN, CONTROLLER_TOOK_OVER, FAILED_ELECTION, LEADERLESS, UNCLEAN_ELECTED
from replay_engine.causes.explain import CLASSIFIERS
from replay_engine.causes.text import render

ZK_SAMPLES = ("rf1_broker_kill", "unclean_election", "restart_refused", "under_min_isr")


def replay(name):
    events = []
    for f in sorted((SAMPLES / name).rglob("*")):
        if f.is_file() and f.suffix != ".md" and f.name != "expected.json":
            rel = str(f.relative_to(SAMPLES))
            evs, _ = parse_source(f.read_bytes(), SourceContext(rel, cluster=name, broker_hint=broker_hint_from_path(rel)))
            events += evs
    return replay_cluster(events, name)


@pytest.fixture(scope="module", params=ZK_SAMPLES)
def sample(request):
    return request.param, replay(request.param)


def cited(ref):
    """What the evidence holds at the reference: the raw text of the line or of the transaction."""
    path = SAMPLES / ref.source_file
    data = path.read_bytes()
    if ref.zxid is not None:
        pos = ref.source_pos
        (length,) = struct.unpack(">i", data[pos + 8:pos + 12])
        (zxid,) = struct.unpack(">q", data[pos + 24:pos + 32])
        assert zxid == ref.zxid, (ref.cite(), hex(zxid))
        return data[pos + 12:pos + 12 + length].decode("latin-1")
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    lines = data.decode("utf-8", "replace").splitlines()
    line = lines[ref.source_pos - 1]
    assert ref.text.splitlines()[0] in line, (ref.cite(), ref.text, line)
    return line


def names_broker(text, b):
    return re.search(rf"(ids/{b}\b|\"leader\":{b}\b|[Bb]roker(?: id)?[ =]{b}\b|id={b}\b)", text) is not None


def test_every_claim_cites_an_event_that_says_it(sample):
    name, res = sample
    checked = 0
    assert res.leaderless, f"{name}: no leaderless partition to explain"
    for lp in res.leaderless:
        case = lp.cause.case
        # the summary is the case rendered (a later step may add what followed, e.g. refused restarts)
        assert case is not None and lp.cause.summary.startswith(render(case))
        chain = {(r.source_file, r.source_pos, r.zxid) for r in lp.cause.chain}
        for claim in case.claims:
            for ref in claim.refs:
                assert (ref.source_file, ref.source_pos, ref.zxid) in chain, (lp.cause.summary, ref.cite())
                assert ref.source_file and ref.source_file.startswith(name + "/"), ref.cite()
                text = cited(ref)
                if claim.ts is not None and claim.what != FAILED_ELECTION:
                    assert ref.ts == claim.ts, (claim, ref.cite())
                if claim.what in (BROKER_DOWN, UNCLEAN_ELECTED, CONTROLLER_TOOK_OVER):
                    assert names_broker(text, claim.broker), (claim.what, claim.broker, text)
                if claim.what == FAILED_ELECTION:
                    assert case.start <= ref.ts <= (case.end or ref.ts)
                    if ref.event == "leader_election_failed":  # the controller's own record of the failure
                        assert f"partition {case.topic}-{case.partition}" in text and "failed" in text, text
                if claim.what == LEADERLESS:
                    assert ref.ts == case.start
                checked += 1
    assert checked >= len(res.leaderless), f"{name}: {checked} cited claims for {len(res.leaderless)} outages"


def test_the_rf1_sample_is_its_only_replica_down():
    # sample_logs/rf1_broker_kill/README.md: partitions of dw_test_kafka_0816000 (RF 1) lost their only
    # replica when broker 1 was killed.
    res = replay("rf1_broker_kill")
    cases = [lp.cause.case for lp in res.leaderless if lp.episode.topic == "dw_test_kafka_0816000"]
    assert cases and {c.form for c in cases} == {"rf1"}
    for c in cases:
        (down,) = c.downs
        assert down.what == BROKER_DOWN and down.broker == 1 and c.replicas == (1,)
        assert all(names_broker(cited(r), 1) for r in down.refs) and down.refs


def test_classifiers_are_tried_in_priority_order_and_the_last_always_answers():
    names = [c.__name__ for c in CLASSIFIERS]
    assert names[0] == "partition_deleted" and names[-1] == "too_little_evidence"
    assert len(set(names)) == len(names)
