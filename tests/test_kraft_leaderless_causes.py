"""Why a KRaft partition had no leader, where the evidence shows its replicas but not its ISR (issue 15: no
``unknown`` cause where the evidence shows the replicas).

Rules, from Kafka 3.9's source (metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java):
- ``handleBrokerFenced`` / ``handleBrokerInControlledShutdown`` remove the broker and elect, in the same step, an
  acceptable in-sync replica for the partitions it led; ``handleBrokerUnfenced`` runs the election again for every
  partition in ``brokersToIsrs.partitionsWithNoLeader()``. A partition that stays leaderless while replicas are
  unfenced therefore had none of them in its ISR (unclean election off).
- ``isAcceptableLeader``: registered, unfenced and not in controlled shutdown; a broker granted a controlled shutdown
  ("Unfenced broker N has requested and been granted a controlled shutdown", BrokerHeartbeatManager) is acceptable
  again only after a new registration and unfence.
Expectations are checked against the raw lines of ../shared/real_logs/BetrajJ__kafka-kraft (a 3.9.0 cluster).
"""
import dataclasses
import gzip
import re

import pytest

from test_replay_real_logs import REAL_LOGS, load

CLUSTER = "BetrajJ__kafka-kraft"
_LEADER_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] INFO \[Broker id=\d+\] Leader (\S+) .*starts at "
                          r"leader epoch")


@pytest.fixture(scope="module")
def res():
    return load(CLUSTER)


def _us(stamp: str) -> int:
    from datetime import datetime, timezone
    t = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=timezone.utc)
    return int(t.timestamp() * 1_000_000)


@pytest.fixture(scope="module")
def leader_lines():
    """(partition name, time) of every 'Leader <tp> ... starts at leader epoch' line of the raw logs."""
    out = []
    for f in sorted((REAL_LOGS / CLUSTER).rglob("state-change.log*")):
        opener = gzip.open if f.suffix == ".gz" else open
        with opener(f, "rt", errors="replace") as fh:
            for line in fh:
                m = _LEADER_LINE.match(line)
                if m:
                    out.append((m.group(2), _us(m.group(1))))
    return out


def test_no_unknown_cause_where_the_replicas_are_known(res):
    unknown = [lv.cause.summary for lv in res.leaderless
               if lv.cause.kind == "unknown" and lv.cause.case is not None and lv.cause.case.replicas]
    assert not unknown, unknown[:3]


def test_a_late_leader_line_does_not_bring_back_a_broker_in_controlled_shutdown(res):
    # controller.log.2025-02-06-14.gz: broker 2 is granted a controlled shutdown at 15:37:46,393 and fenced at
    # 15:37:46,522; its state-change lines from 15:37:46,444 to ,640 state leader epochs the controller decided at
    # 15:37:46,370 and ,392 (enterControlledShutdown of brokers 1 and 3), while broker 2 was still acceptable. Its next
    # unfence is the controller's line of 2025-02-07 11:00:18,062 (controller.log.2025-02-07-10.gz).
    lo, hi = _us("2025-02-06 15:37:46,393"), _us("2025-02-07 11:00:18,062")
    periods = res.image.periods[2]
    back = [p for p in periods if p.state == "up" and p.start is not None and lo <= p.start < hi]
    assert not back, [(p.start, p.start_ref.cite() if p.start_ref else None) for p in back]
    # the lines themselves still agree with the replay's decisions they state
    line = f"{CLUSTER}/kafka/logs/state-change.log.2025-02-06-14.gz:30"
    hits = [c for c in res.comparisons if c.record.cite() == line]
    assert len(hits) == 1 and hits[0].agreed, hits


def _cases(res, form):
    return [lv for lv in res.leaderless if lv.cause.case is not None and lv.cause.case.form == form]


def test_replicas_unfenced_while_leaderless_were_not_in_the_isr(res, leader_lines):
    found = _cases(res, "kraft_not_in_isr")
    assert found
    for lv in found:
        case, ep = lv.cause.case, lv.episode
        tp = f"{case.topic}-{case.partition}"
        # no broker states it led the partition inside the episode: nobody was elected, as the case says
        inside = [ts for name, ts in leader_lines if name == tp and ep.start < ts < (ep.end or 1 << 62)]
        assert not inside, (tp, ep.start, inside[:3])
        # the unfenced replicas rest on lines of the evidence; unclean election was off by 3.9's default
        for b in case.others:
            p = next(p for p in res.image.periods[b] if p.start is not None and p.start <= ep.start
                     and (p.end is None or p.end > ep.start))
            assert p.state == "up" and p.start_ref is not None and p.start_ref.source_file
        assert case.unclean is not None and case.unclean.value in (False, "false")
        assert "not in the ISR" in lv.cause.summary


def test_the_kraft_rule_is_not_applied_to_zookeeper_mode(res):
    from replay_engine.causes.explain import classify

    lv = _cases(res, "kraft_not_in_isr")[0]
    world = _world(res)
    assert classify(lv.episode, world).form == "kraft_not_in_isr"
    # a ZooKeeper controller elects only on its own events (no election of leaderless partitions on an unfence)
    assert classify(lv.episode, dataclasses.replace(world, mode="logs")).form != "kraft_not_in_isr"


def test_replicas_leaving_together_are_all_offline(res, leader_lines):
    # A cluster stopped broker by broker: the controller records each controlled shutdown a few ms apart
    # (e.g. controller.log.2025-02-28-13.gz, brokers 2 and 1 at 14:20:05,509 and ,513). The replicas going down
    # moments after the leader were leaving: no replica was there to lead.
    world = _world(res)
    together = []
    for lv in _cases(res, "all_down"):
        case, ep = lv.cause.case, lv.episode
        if case.isr_at_loss is not None:
            continue
        late = [b for b in case.replicas if world.alive(b, ep.start)]
        if not late:
            continue
        together.append(lv)
        for d in case.downs:
            assert d.ts is not None and d.ts <= ep.start + 10_000_000 and d.refs and d.refs[0].source_file
        tp = f"{case.topic}-{case.partition}"
        assert not [ts for name, ts in leader_lines if name == tp and ep.start < ts < (ep.end or 1 << 62)]
    assert together


def _world(res):
    from replay_engine.result import world_of

    return world_of(res.image, res.history, res.stream.trace_end, None, res.mode)
