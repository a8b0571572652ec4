"""The judge: a record against the decision re-derived for it; agreed, diverged, or unknown with a reason.

Independent truth: Kafka 2.7.0 core/src/main/scala/kafka/controller/PartitionLeaderElectionAlgorithms.scala,
``offlinePartitionLeaderElection``: the first replica in assignment (AR) order that is live and in the ISR
leads; the new ISR is the live part of the old one (PartitionStateMachine.leaderForOffline). When the
assignment order is not in the evidence and several live ISR members could win, nothing can be judged.
"""
from replay_engine.common import facts as F
from replay_engine.common import judge as J
from replay_engine.common.config import UNCLEAN, ConfigImage
from replay_engine.zk.from_events import Coverage
from replay_engine.common.frozen import FrozenMap
from replay_engine.common.partition import PState


def Ctx(live, unclean=False, seen=None, liveness_known=True, unclean_assumed=False):
    """The frozen view the judge reads. ``seen`` None: the cluster's membership is stated; ``liveness_known`` False:
    neither ZooKeeper's data nor the controller's log covers the record; ``unclean_assumed``: the version is unknown and
    the topic's unclean.leader.election.enable is the default assumed."""
    config = ConfigImage(version=None if unclean_assumed else (3, 9, 0),
                         override_cluster=FrozenMap({UNCLEAN: "true"}) if unclean else FrozenMap())
    coverage = Coverage(zk=[(0, 10**18)]) if liveness_known else Coverage()
    live = frozenset(live)
    return J.JudgeView(1, live, frozenset(), live, FrozenMap(), None if seen is None else frozenset(seen),
                       None,  # version unknown: the newest rules
                       config, FrozenMap(), coverage, inherited=not liveness_known)


TP = ("t", 0)
REF = F.Ref(10, "partition_leader_isr_written", "zk/log.1", 7, "state znode write")


def record(leader, isr, le):
    return F.RecordedState(10, REF, tp=TP, kind="write", leader=leader, isr=tuple(isr), leader_epoch=le,
                           from_state="OfflinePartition")


def judged(p, f, live=(2, 3), defer_gaps=False, **ctx):
    recorded = {"leader": f.leader, "isr": list(f.isr), "leader_epoch": f.leader_epoch}
    return J.judge_write(Ctx(live, **ctx), J.Pending(), p, "election", f, recorded, may_infer=False,
                         defer_gaps=defer_gaps)


def test_agreed_when_the_record_is_the_offline_election():
    p = PState(TP, replicas=(1, 3, 2), leader=1, isr=(1, 2, 3), leader_epoch=4)
    c = judged(p, record(3, [2, 3], 5))  # AR order: 3 before 2; ISR keeps its live members
    assert (c.verdict, c.agreed, c.reason) == (J.AGREED, True, None)
    assert c.replayed == {"leader": 3, "isr": [2, 3], "leader_epoch": 5}


def test_diverged_when_the_record_elects_another_replica():
    p = PState(TP, replicas=(1, 3, 2), leader=1, isr=(1, 2, 3), leader_epoch=4)
    c = judged(p, record(2, [2, 3], 5))
    assert (c.verdict, c.agreed) == (J.DIVERGED, False)
    assert c.how.startswith("point: ") and c.replayed["leader"] == 3


def test_a_record_the_other_eligibility_explains_is_adopted_and_counts_against():
    """offlinePartitionLeaderElection (1.1+): the first AR replica online and in the ISR; ISR (1, 2, 3), 1 gone. Not a
    hole in the evidence: what the record shows of the brokers is the state the replay adopts
    (``implied``), and the record is not agreed -- unknown with ``ADOPTED`` where the controller's view is in no line,
    diverged where it is."""
    # AR (1, 2, 3) and only 3 online to the replay: it elects 3; a record electing 2 with ISR [2, 3] shows 2 online
    # (Kafka elects only online replicas), and follows from the rule with it so
    q = PState(TP, replicas=(1, 2, 3), leader=1, isr=(1, 2, 3), leader_epoch=4)
    c = judged(q, record(2, [2, 3], 5), live=(3,), liveness_known=False)
    assert c.verdict == J.UNKNOWN and c.reason.startswith(J.ADOPTED) and "broker(s) 2 eligible" in c.reason
    assert not c.reason.startswith(J.EVIDENCE_GAP) and J.tally([c])["evidence_gaps"] == 0
    assert c.implied == (frozenset({2}), frozenset())
    p = PState(TP, replicas=(1, 3, 2), leader=1, isr=(1, 2, 3), leader_epoch=4)
    known = judged(q, record(2, [2, 3], 5), live=(3,))  # liveness known: the controller departed from the replay
    assert known.verdict == J.DIVERGED and known.implied == (frozenset({2}), frozenset())
    # 2 and 3 online: electing 2 follows with 3 not online, or with an assignment order the replay does not know; an
    # election implies only what it names, so nothing is adopted and the record diverges
    other = judged(p, record(2, [2], 5), liveness_known=False)
    assert other.verdict == J.DIVERGED and other.implied is None


def test_a_failed_offline_election_shows_every_isr_member_not_eligible():
    """0.10.2.0 OfflinePartitionLeaderSelector.selectLeader / 2.7.0 offlinePartitionLeaderElection: the election fails
    only when no ISR member is online (unclean off): the ISR members the replay held online were not, to it."""
    p = PState(TP, replicas=(1, 3, 2), leader=1, isr=(1, 2, 3), leader_epoch=4)
    f = F.RecordedFailedElection(10, REF, tp=TP, strategy="OfflinePartitionLeaderElectionStrategy",
                                 from_state="OfflinePartition")
    c = J.judge_failed(Ctx((2, 3), liveness_known=False), J.Pending(), p, f)
    assert c.verdict == J.UNKNOWN and c.reason.startswith(J.ADOPTED)
    assert c.implied == (frozenset(), frozenset({2, 3}))
    assert J.judge_failed(Ctx((2, 3)), J.Pending(), p, f).implied == (frozenset(), frozenset({2, 3}))


def test_a_record_the_other_unclean_default_explains_is_a_gap_only_while_the_version_is_unknown():
    """unclean.leader.election.enable: true before 0.11.0, false since (KIP-106). ISR (1,), 1 gone, 2 and 3 live:
    clean, no leader; unclean, the first live AR replica (3)."""
    p = PState(TP, replicas=(1, 3, 2), leader=1, isr=(1,), leader_epoch=4)
    c = judged(p, record(3, [3], 5), unclean_assumed=True)
    assert c.verdict == J.UNKNOWN and "unclean.leader.election.enable" in c.reason
    assert judged(p, record(3, [3], 5)).verdict == J.DIVERGED
    assert judged(p, record(2, [2], 5), unclean_assumed=True).verdict == J.DIVERGED  # not what unclean elects


def test_unknown_when_the_assignment_order_is_not_in_the_evidence():
    p = PState(TP, replicas=None, leader=1, isr=(1, 2, 3), leader_epoch=4)
    c = judged(p, record(2, [2, 3], 5))
    assert (c.verdict, c.agreed, c.reason) == (J.UNKNOWN, False, "election: assigned replicas unknown")


def test_unknown_when_too_little_is_known():
    c = judged(PState(TP), record(2, [2, 3], 5))
    assert (c.verdict, c.reason) == (J.UNKNOWN, "election: ISR before the record unknown")


def test_unknown_evidence_gap_when_the_record_is_ahead_of_the_replay():
    """Logs only: a leader epoch two ahead means a decision the evidence does not hold came in between."""
    p = PState(TP, replicas=(1, 3, 2), leader=1, isr=(1, 2, 3), leader_epoch=4)
    c = judged(p, record(3, [2, 3], 7), defer_gaps=True)
    assert (c.verdict, c.reason) == (J.UNKNOWN, J.GAP)
    t = J.tally([c, judged(p, record(3, [2, 3], 5)), judged(PState(TP), record(2, [2, 3], 5))])
    assert t == {J.AGREED: 1, J.DIVERGED: 0, J.UNKNOWN: 2, "evidence_gaps": 1}


def test_agreement_counts_unknown_verdicts_as_uncompared():
    """ReplayResult.agreement(): compared = agreed + diverged (+ unrecorded decisions); uncompared = unknown."""
    from replay_engine.api import ReplayResult

    p = PState(TP, replicas=(1, 3, 2), leader=1, isr=(1, 2, 3), leader_epoch=4)
    cs = [judged(p, record(3, [2, 3], 5)), judged(p, record(2, [2, 3], 5)),
          judged(PState(TP, isr=(1, 2, 3), leader=1), record(2, [2, 3], 5))]

    res = ReplayResult("c", "zk", None, [], [], [], cs, None, None)  # image and history: not read here
    ag = res.agreement()
    assert (ag["compared"], ag["agreed"], ag["uncompared"], ag["evidence_gaps"]) == (2, 1, 1, 0)
    assert [d["replayed"]["leader"] for d in ag["divergences"]] == [3]


def test_unknown_reasons_on_a_real_cluster_add_up_to_uncompared():
    """Every unjudged record of a real cluster carries its reason; the reasons add up to 'uncompared'."""
    from test_replay_real_logs import load

    res = load("Eniyanilavan__Kafka")  # logs only, with hours missing: records the replay cannot judge
    reasons = res.unknown_reasons()
    assert sum(reasons.values()) == res.agreement()["uncompared"] > 0
    assert all(r for r in reasons), reasons
    gaps = sum(n for r, n in reasons.items() if r.startswith(J.EVIDENCE_GAP))
    assert gaps == res.agreement()["evidence_gaps"] > 0


def test_a_record_electing_a_broker_never_seen_is_a_gap_until_membership_is_stated():
    """Broker 2 is live to the real controller (it elected it) but no fact the replay holds speaks of it: the evidence
    began after it registered (a txn log without its snapshot, logs that start mid-life). With the membership
    stated (a snapshot, a controller's list of live brokers), never seen means never registered: a divergence."""
    p = PState(TP, replicas=(1, 2, 3), leader=1, isr=(1, 2, 3), leader_epoch=4)
    f = record(2, [2, 3], 5)
    recorded = {"leader": 2, "isr": [2, 3], "leader_epoch": 5}
    c = J.judge_write(Ctx({3}, seen={1, 3}), J.Pending(), p, "election", f, recorded, may_infer=False, defer_gaps=False)
    assert c.verdict == J.UNKNOWN and c.reason.startswith(J.EVIDENCE_GAP) and "broker(s) 2" in c.reason
    assert c.replayed["leader"] == 3
    c = J.judge_write(Ctx({3}), J.Pending(), p, "election", f, recorded, may_infer=False, defer_gaps=False)
    assert c.verdict == J.DIVERGED


def test_the_judge_reads_a_frozen_view_never_the_controller(monkeypatch):
    """Every judgment of a replay is handed a JudgeView (frozen: the brokers as the controller saw them, the rules in
    force), and judge.py reads no private member of anything it is given."""
    import ast
    import dataclasses
    from pathlib import Path

    import pytest

    from replay_engine.api import replay_cluster
    from conftest import real_cluster_events

    given = []
    for name in ("judge_write", "judge_failed"):
        real = getattr(J, name)
        monkeypatch.setattr(J, name, lambda ctx, *a, _real=real, **k: given.append(ctx) or _real(ctx, *a, **k))
    replay_cluster(real_cluster_events("Eniyanilavan__Kafka"), "c")
    assert given and all(type(v) is J.JudgeView for v in given)
    with pytest.raises(dataclasses.FrozenInstanceError):
        given[0].controller = 7
    src = ast.parse((Path(J.__file__)).read_text())
    private = [n.lineno for n in ast.walk(src) if isinstance(n, ast.Attribute) and n.attr.startswith("_")
               and not n.attr.startswith("__") and not (isinstance(n.value, ast.Name) and n.value.id == "self")]
    assert private == []
