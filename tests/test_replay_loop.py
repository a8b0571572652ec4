"""The controller loop on small hand-written traces, with hand-derived expectations."""
from parsers.schema import Event
from replay_engine.api import replay_cluster

S = 1_000_000  # microseconds per second
T0 = 1_700_000_000 * S


class Trace:
    """Builds ZooKeeper-style events (as parsers.zookeeper.events emits them) in zxid order."""

    def __init__(self):
        self.events = []
        self.zxid = 0

    def add(self, t, event_type, **kw):
        self.zxid += 1
        ev = Event(event_type, cluster="c", ts=T0 + int(t * S), source_kind="zk_txnlog", source_file="log.1",
                   source_pos=self.zxid * 100, zxid=self.zxid, raw=f"{event_type} {kw}", **kw)
        self.events.append(ev)
        return ev

    def broker_up(self, t, b, session):
        self.add(t, "broker_registered", subject_broker=b, session_id=session,
                 detail={"via": "zk_create", "broker_epoch": self.zxid + 1})

    def broker_down(self, t, b, session, cause="session_expired"):
        self.add(t, "broker_deregistered", subject_broker=b, session_id=session, detail={"cause": cause})

    def controller(self, t, c, epoch):
        self.zxid += 1
        for et, kw in (("controller_znode_created", {"controller_id": c}),
                       ("controller_epoch_set", {"controller_epoch": epoch})):
            self.events.append(Event(et, cluster="c", ts=T0 + int(t * S), source_kind="zk_txnlog", source_file="log.1",
                                     source_pos=self.zxid * 100, zxid=self.zxid, raw=et, **kw))

    def topic(self, t, name, assignment):
        self.add(t, "topic_assignment_written", topic=name,
                 detail={"assignment": {str(p): r for p, r in assignment.items()}})

    def state(self, t, topic, p, leader, isr, le, writer="controller", created=False, ce=1):
        self.add(t, "partition_state_written", topic=topic, partition=p, leader=leader, isr=isr, leader_epoch=le,
                 controller_epoch=ce, detail={"writer": writer, "created": created})


def seed_incident():
    """3 brokers; RF=1 topic with 6 partitions round-robin over brokers 1,2,3; broker 1 dies at t=100."""
    tr = Trace()
    for i, b in enumerate((1, 2, 3)):
        tr.broker_up(i * 0.1, b, 0x100 + b)
    tr.controller(0.5, 2, 1)
    tr.topic(1, "dw", {p: [p % 3 + 1] for p in range(6)})
    for p in range(6):
        tr.state(1.1, "dw", p, p % 3 + 1, [p % 3 + 1], 0, created=True)
    tr.broker_down(100, 1, 0x101)
    # what Kafka 2.x writes: no election possible (RF=1); OfflineReplica writes leader -1, ISR kept [1], epoch+1
    for p in (0, 3):
        tr.state(100.2, "dw", p, -1, [1], 1)
    return tr


def test_seed_incident_rf1_partitions_leaderless_with_cause():
    res = replay_cluster(seed_incident().events, "c")
    lost = sorted((lp.episode.topic, lp.episode.partition) for lp in res.leaderless)
    assert lost == [("dw", 0), ("dw", 3)]
    for lp in res.leaderless:
        assert lp.episode.start == T0 + 100 * S  # from the session end, not from the -1 write
        assert lp.episode.end is None  # still leaderless when the evidence ends
        assert lp.cause.kind == "all_replicas_offline"
        assert "replication factor 1" in lp.cause.summary and "broker 1" in lp.cause.summary
        cited = {r.event for r in lp.cause.chain}
        assert {"broker_deregistered", "partition_state_written"} <= cited
    # the replayed decisions (2 failed elections + 2 leader -1 writes) agree with the recorded writes
    ag = res.agreement()
    assert ag["compared"] >= 2 and ag["agreed"] == ag["compared"], ag["divergences"]


def test_broker_returning_gives_the_partition_back():
    tr = seed_incident()
    tr.broker_up(200, 1, 0x201)
    for p in (0, 3):
        tr.state(200.1, "dw", p, 1, [1], 2)
    res = replay_cluster(tr.events, "c")
    for lp in res.leaderless:
        assert lp.episode.end == T0 + int(200.1 * S)
        assert lp.episode.closed_by is not None and lp.episode.closed_by.event == "partition_state_written"
    assert res.agreement()["agreed"] == res.agreement()["compared"]


def test_clean_failover_is_a_short_leader_failover_episode():
    tr = Trace()
    for b in (1, 2, 3):
        tr.broker_up(b * 0.1, b, 0x100 + b)
    tr.controller(0.5, 3, 1)
    tr.topic(1, "orders", {0: [1, 2, 3]})
    tr.state(1.1, "orders", 0, 1, [1, 2, 3], 0, created=True)
    tr.broker_down(50, 1, 0x101)
    tr.state(50.3, "orders", 0, 2, [2, 3], 1)  # offline election: first live ISR member in AR order
    res = replay_cluster(tr.events, "c")
    assert len(res.leaderless) == 1
    lp = res.leaderless[0]
    assert lp.cause.kind == "leader_failover"
    assert lp.episode.end - lp.episode.start == int(0.3 * S)
    ag = res.agreement()
    assert ag["compared"] == ag["agreed"] >= 2  # topic init + election


def test_divergence_when_the_record_disagrees():
    tr = Trace()
    for b in (1, 2, 3):
        tr.broker_up(b * 0.1, b, 0x100 + b)
    tr.controller(0.5, 3, 1)
    tr.topic(1, "orders", {0: [1, 2, 3]})
    tr.state(1.1, "orders", 0, 1, [1, 2, 3], 0, created=True)
    tr.broker_down(50, 1, 0x101)
    tr.state(50.3, "orders", 0, 3, [3], 1)  # not what Kafka's rule gives (2, [2,3])
    res = replay_cluster(tr.events, "c")
    div = res.agreement()["divergences"]
    assert len(div) == 1 and div[0]["recorded"]["leader"] == 3 and div[0]["replayed"]["leader"] == 2
