"""Topics, configuration and admin requests in the ZooKeeper-mode controller.

Kafka's topic handlers: a topic's assignment znode written (``onNewPartitionCreation``, partitions added,
reassignment done: 2.8.0 ``KafkaController.processPartitionModifications``), deletion (``TopicDeletionManager``), a
topic's or the cluster's config changed (``unclean.leader.election.enable`` turned on retries offline partitions:
rule ``zk.unclean.enable_retries_offline``), a broker's version and static config, reassignment requests. Elections
they start go through the partition decisions (``zk_partitions``).
"""
from __future__ import annotations

from replay_engine.zk import elections as E
from replay_engine.common import facts as F
from replay_engine.common.apply import DECIDED, RECORDED
from replay_engine.common.config import UNCLEAN, parse_version
from replay_engine.common.partition import UNKNOWN
from replay_engine.common.states import NEW, NON_EXISTENT, OFFLINE
from replay_engine.common.timeline import View
from replay_engine.zk.context import ZkPart


class TopicHandlers(ZkPart):
    """Topic, configuration and admin facts in; partitions created, deleted, re-elected out."""

    def topic_assignment(self, f: F.TopicAssignment) -> None:
        for part in sorted(f.assignment):
            ar = f.assignment[part]
            if ar is None:
                continue
            tp = (f.topic, part)
            ar = self.mode.assignment(tp, ar)
            p = self.c.part(tp)
            # a partition whose state a hole hid still exists: an assignment rewritten (partitions added, a
            # reassignment) creates only those with no assignment in the controller's context
            # (KafkaController.processPartitionModifications, partitionsToBeAdded, 2.8.0)
            fresh = (p.state == NON_EXISTENT or p.state == UNKNOWN and tp not in self.c.hidden) and p.leader is None
            old = p.replicas
            self.store.set_replicas(p, ar, f.ts)
            if fresh:
                # onNewPartitionCreation: NonExistentPartition -> NewPartition, then -> OnlinePartition
                if self.store.move(p, NEW, DECIDED, f.ts, f.ref) and self.c.controller is not None:
                    decide = self.c.partition_handlers
                    decide.commit(decide.propose_new(p, f))
            elif p.reassign_target is not None and tuple(ar) == p.reassign_target:
                self.store.set(p, reassign_target=None)
                if p.leader is not None and p.isr is not None and (p.leader not in ar or not self.c.online(p.leader)):
                    res = self.c.rule("zk.election.reassign", ar, p.isr, self.c.online_set(p.tp))
                    decide = self.c.partition_handlers
                    if res is None:
                        decide.commit(decide.propose(p, "election_failed", E.REASSIGN, f))
                    else:
                        decide.commit(decide.propose(p, "election", E.REASSIGN, f, res.leader, res.isr))
            elif old is not None and old != tuple(ar):
                self.c.evidence_by_tp.setdefault(tp, []).append(f.ref)

    def deletion_halted(self, f: F.TopicDeletionHalted) -> None:
        self.c.deletion_halts.setdefault(f.topic, []).append((f.ref, f.reason))

    def end_deletions(self, ts: int, topic: str | None = None) -> None:
        for t, spans in self.c.deletions.items():
            if (topic is None or t == topic) and spans and spans[-1][1] is None:
                spans[-1] = (spans[-1][0], ts)

    def topic_gone(self, f: F.TopicGone) -> None:
        self.end_deletions(f.ts, f.topic)
        for tp in sorted(tp for tp in self.parts if tp[0] == f.topic):
            p = self.parts[tp]
            # TopicDeletionManager's onPartitionDeletion: OfflinePartition, then NonExistentPartition
            if p.state != NON_EXISTENT:
                self.store.move(p, OFFLINE, RECORDED, f.ts, f.ref)
            self.store.move(p, NON_EXISTENT, RECORDED, f.ts, f.ref)
            self.c.show(tp, View(None, None, None, None, NON_EXISTENT, None), f.ts, f.ref, "recorded")
            self.pending.drop(tp)
            self.store.drop(tp)
            self.c.hidden.discard(tp)

    def topics_listed(self, f: F.TopicsListed) -> None:
        """A topic the replay holds that the new controller's list (read from ZooKeeper) leaves out was deleted before
        it: its partitions are gone from then on (a deletion no line of the evidence shows completing)."""
        held = {tp[0] for tp, p in self.parts.items() if p.state != NON_EXISTENT}
        for topic in sorted(held - f.topics):
            if not any(end is None for _, end in self.c.deletions.get(topic, ())):
                self.c.deletions.setdefault(topic, []).append((f.ref, None))  # the deletion, told by this line
            self.topic_gone(F.TopicGone(f.ts, f.ref, topic=topic))

    def topic_config(self, f: F.TopicConfig) -> None:
        before = self.c.unclean_allowed(f.topic)
        self.config.topic[f.topic] = {k: (str(v), f.ref) for k, v in f.config.items()}
        after = self.c.unclean_allowed(f.topic)
        self.c.config_changed(f.ts)
        if after and not before and self.c.controller is not None \
                and self.c.rule("zk.unclean.enable_retries_offline", "topic"):
            # TopicUncleanLeaderElectionEnable: offline partitions of the topic get another (unclean) chance.
            self.c.partition_handlers.trigger_online_state_change(f, only=lambda p: p.tp[0] == f.topic)

    def broker_config(self, f: F.BrokerConfig) -> None:
        entries = {k: (str(v), f.ref) for k, v in f.config.items()}
        if f.broker is None:
            before = {t: self.c.unclean_allowed(t) for t in {tp[0] for tp in self.parts}}
            self.config.cluster_dynamic.update(entries)
            self.c.config_changed(f.ts)
            if self.c.controller is not None and self.c.rule("zk.unclean.enable_retries_offline", "cluster") \
                    and UNCLEAN in f.config:
                self.c.partition_handlers.trigger_online_state_change(
                    f, only=lambda p: self.c.unclean_allowed(p.tp[0]) and not before.get(p.tp[0]))
            return
        self.config.broker_static.setdefault(f.broker, {}).update(entries)
        v = f.config.get("inter.broker.protocol.version")
        if v and self.config.version is None:
            self.config.version = parse_version(v)
            self.config.version_source = f"inter.broker.protocol.version of broker {f.broker}"
        self.c.config_changed(f.ts)

    def kafka_version(self, f: F.KafkaVersion) -> None:
        v = parse_version(f.version)
        if v is not None and f.ref.broker is not None:
            self.brokers.note_version(f.ref.broker, v, f.ref)
        if v is not None and (self.config.version is None or self.config.version_source.startswith("inter.broker")):
            self.config.version = v
            self.config.version_source = f"logged 'Kafka version: {f.version}'"
            self.c.config_changed(f.ts)

    def reassignment_request(self, f: F.ReassignmentRequest) -> None:
        for tp, target in sorted(f.targets.items()):
            self.store.set(self.c.part(tp), reassign_target=tuple(target))

    def deletion_request(self, f: F.TopicDeletionRequest) -> None:
        spans = self.c.deletions.setdefault(f.topic, [])
        if not spans or spans[-1][1] is not None:
            spans.append((f.ref, None))
        for tp in sorted(tp for tp in self.parts if tp[0] == f.topic):
            p = self.parts[tp]
            self.store.set(p, deleting=True)
            self.pending.drop(tp)
            self.c.touch(p, f.ts, f.ref, "recorded")
