"""KRaft replay: PartitionChangeBuilder rules by hand, and the real metadata logs / KRaft broker logs."""
import pytest

from conftest import REAL_LOGS
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from replay_engine.api import replay_cluster
from replay_engine.kraft.election import elect, isr_without


@pytest.mark.parametrize("replicas,isr,leader,ok,unclean,elr,elr_on,expected", [
    ([1, 2, 3], [1, 2, 3], 1, {1, 2, 3}, False, (), False, (1, "kept")),  # current leader stays if acceptable
    ([1, 2, 3], [2, 3], 1, {2, 3}, False, (), False, (2, "isr")),  # first in replica order in the target ISR
    ([3, 1, 2], [1, 2], 3, {1, 2}, False, (), False, (1, "isr")),  # replica order, not ISR order
    ([1], [1], 1, set(), False, (), False, (-1, "none")),  # RF=1 on a fenced broker
    ([1, 2], [1], 1, {2}, True, (), False, (2, "unclean")),  # unclean: first acceptable replica
    ([1, 2], [], -1, {2}, False, (2,), True, (2, "elr")),  # 4.x: empty ISR, an unfenced ELR member leads
    ([1, 2], [], -1, {1}, False, (2,), True, (-1, "none")),  # ELR member still fenced: no leader
])
def test_partition_change_builder(replicas, isr, leader, ok, unclean, elr, elr_on, expected):
    res = elect(replicas, isr, leader, frozenset(ok), unclean, elr, elr_on)
    assert (res.leader, res.how) == expected


def test_isr_never_emptied_without_elr():
    assert isr_without((1, 2), {2}) == (1,)
    assert isr_without((1,), {1}) == (1,)  # 3.x keeps the last member
    assert isr_without((1,), {1}, elr_enabled=True) == ()


def load(name):
    events = []
    for f in sorted((REAL_LOGS / name).rglob("*")):
        if f.is_file():
            evs, _ = parse_source(f.read_bytes(), SourceContext(str(f.relative_to(REAL_LOGS)), cluster=name))
            events += evs
    return replay_cluster(events, name)


@pytest.mark.parametrize("name", ["Niloufar1171__LDI-POC", "ronem123__rupia-transaction-service"])
def test_metadata_log_decisions_all_agree_and_shutdown_outages_explained(name):
    res = load(name)
    assert res.mode == "kraft"
    ag = res.agreement()
    assert ag["compared"] > 0 and ag["agreed"] == ag["compared"], ag["divergences"][:2]
    # single-broker clusters: the broker's controlled shutdown leaves every RF=1 partition without leader
    assert res.leaderless and all(lp.cause.kind == "all_replicas_offline" for lp in res.leaderless)
    assert all("controlled shutdown" in lp.cause.summary for lp in res.leaderless)


def test_ronem_uses_eligible_leader_replicas():
    # Kafka 4.x ELR: the shutdown empties the ISR and parks broker 1 in the ELR (read off the record by hand)
    res = load("ronem123__rupia-transaction-service")
    assert any(p.elr == (1,) for p in res.image.partitions.values())


@pytest.mark.parametrize("name", ["Ammar777782439__kafka_2.13-4.0.0", "BetrajJ__kafka-kraft", "GraphLogistics__kafka"])
def test_kraft_broker_logs_replay_without_error(name):
    res = load(name)
    assert res.mode == "kraft"
    doc = res.to_json()
    assert doc["leaderless"] is not None and all(x["cause"]["summary"] for x in doc["leaderless"])
