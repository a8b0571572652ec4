"""KRaft topics, their incarnations (topic ids) and configuration, as the KRaft replay follows them.
"""
from __future__ import annotations

from typing import Any

from replay_engine.common import facts as F
from replay_engine.common.config import parse_version
from replay_engine.common.states import NON_EXISTENT
from replay_engine.common.timeline import View
from replay_engine.kraft.part import KraftPart


class KraftTopics(KraftPart):
    """Topic ids, the incarnation each partition is in, and the dynamic configuration and features in force."""

    def __init__(self, replay: Any):
        super().__init__(replay)
        self.topic_names: dict[str, str] = {}
        self.incarnations: dict[F.TP, list[str]] = {}  # partition -> the topic ids it has had, in order

    def on_topic_named(self, f: F.TopicNamed) -> None:
        self.topic_names[f.topic_id] = f.topic
        known = set(self.incarnations) | set(self.parts)
        for tp in sorted(t for t in known if t[0] == f.topic):
            self.incarnation(tp, f.topic_id, f.ts, f.ref)

    def on_topic_gone(self, f: F.TopicGone) -> None:
        for tp in sorted(t for t in self.parts if t[0] == f.topic):
            self._forget(tp, f.ts, f.ref)

    def incarnation(self, tp: F.TP, topic_id: str | None, ts: int, ref: F.Ref) -> None:
        """A fact naming the topic id of a partition. A topic id names one incarnation of a topic: a topic created
        again under its name gets a new id (KIP-516; 3.5.1 .. 4.x ReplicationControlManager.createTopic draws
        ``Uuid.randomUuid()``), and its partitions start again at leader epoch 0 and partition epoch 0. On the first
        fact naming an id not seen before, the old incarnation is gone, whether or not its RemoveTopicRecord is in
        the evidence (a cluster formatted anew has none); a line naming an id already left behind (a broker behind
        the others) changes nothing."""
        if not topic_id:
            return
        seen = self.incarnations.setdefault(tp, [])
        if topic_id in seen:
            return
        if seen and tp in self.parts:
            self._forget(tp, ts, ref)
        seen.append(topic_id)

    def _forget(self, tp: F.TP, ts: int, ref: F.Ref) -> None:
        """The partition (its incarnation) is gone: what the replay held of it, and its history of epochs."""
        if tp in self.parts:
            self.store.drop(tp)
            self.r.timeline.update(tp, ts, View(None, None, None, None, NON_EXISTENT, None), ref, "recorded")
        self.store.forget_elr(tp)
        self.ledger.forget(tp)

    def on_topic_config(self, f: F.TopicConfig) -> None:
        self._config_entries(self.r.config.topic.setdefault(f.topic, {}), f)

    def on_broker_config(self, f: F.BrokerConfig) -> None:
        if f.static:
            # a broker's own configuration, as it logged it at start-up
            self.r.config.broker_static.setdefault(f.broker, {}).update(
                {k: (str(v), f.ref) for k, v in f.config.items()})
        else:
            self._config_entries(self.r.config.cluster_dynamic, f)

    def _config_entries(self, cfg: dict, f: F.TopicConfig | F.BrokerConfig) -> None:
        """A ConfigRecord: each key set, or removed where it has no value."""
        for name, value in f.config.items():
            if value is None:
                cfg.pop(name, None)
            else:
                cfg[name] = (value, f.ref)
        self.r.config_history.append((f.ts, self.r.config.image()))

    def on_feature_level(self, f: F.FeatureLevel) -> None:
        if f.name == "eligible.leader.replicas.version":
            self.r.elr_enabled = int(f.level or 0) >= 1

    def on_kafka_version(self, f: F.KafkaVersion) -> None:
        v = parse_version(f.version)
        if v is not None and self.r.config.version is None:
            self.r.config.version = v
            self.r.config.version_source = f"logged 'Kafka version: {f.version}'"
