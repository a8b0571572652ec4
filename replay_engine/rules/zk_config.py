"""ZooKeeper mode: the controller-relevant settings whose default or reach changed across releases.

``unclean.leader.election.enable``: not a setting in 0.8.0-0.8.1 (an offline election with no live ISR
member always took any live replica), true by default 0.8.2-0.10 with a per-topic override, false from
0.11 (KIP-106), a dynamic cluster default from 1.1 (KIP-226); turning it on makes the controller retry
offline partitions at once from 2.0 (cluster default) and 2.1 (topic, KAFKA-6835).
``auto.leader.rebalance.enable``: absent in 0.8.0, false in 0.8.1, true from 0.8.2.
``delete.topic.enable``: absent in 0.8.0, false 0.8.1-0.11, true from 1.0 (KAFKA-5384).
"""
from __future__ import annotations

from replay_engine.rules.rule import Rule

KCFG = "core/src/main/scala/kafka/server/KafkaConfig.scala"
KC = "core/src/main/scala/kafka/controller/KafkaController.scala"
SEL = "core/src/main/scala/kafka/controller/PartitionLeaderSelector.scala"


def _const(value):
    def fn():
        return value
    fn.__doc__ = f"Kafka's default: {value!r}"
    return fn


def unclean_sources_none() -> tuple[str, ...]:
    return ()


def unclean_sources_topic() -> tuple[str, ...]:
    return ("topic config", "broker config", "Kafka default")


def unclean_sources_dynamic() -> tuple[str, ...]:
    return ("topic config", "dynamic cluster default", "broker config", "Kafka default")


def retries_none(scope: str) -> bool:
    """Enabling unclean election changes nothing until the next election is triggered by something else."""
    return False


def retries_cluster(scope: str) -> bool:
    return scope == "cluster"


def retries_cluster_and_topic(scope: str) -> bool:
    return scope in ("cluster", "topic")


UNCLEAN_DEFAULT = "zk.unclean.default"
UNCLEAN_SOURCES = "zk.unclean.sources"
UNCLEAN_RETRY = "zk.unclean.enable_retries_offline"
AUTO_REBALANCE = "zk.auto_rebalance.defaults"
DELETE_TOPIC = "zk.topic_deletion.default"

_REBALANCE_OFF = {"auto.leader.rebalance.enable": "false", "leader.imbalance.per.broker.percentage": "10",
                  "leader.imbalance.check.interval.seconds": "300"}
_REBALANCE_ON = dict(_REBALANCE_OFF, **{"auto.leader.rebalance.enable": "true"})

RULES = [
    Rule("no setting: unclean election always allowed", UNCLEAN_DEFAULT, (0, 8, 0), (0, 8, 2), _const("true"),
         ("0.8.1.1", SEL, "OfflinePartitionLeaderSelector.selectLeader"),
         "No live ISR member: \"Pick the leader from the alive assigned replicas\" with no configuration check."),
    Rule("default true", UNCLEAN_DEFAULT, (0, 8, 2), (0, 11, 0), _const("true"),
         ("0.10.2.0", KCFG, "Defaults.UncleanLeaderElectionEnable"), "`val UncleanLeaderElectionEnable = true`."),
    Rule("default false (KIP-106)", UNCLEAN_DEFAULT, (0, 11, 0), None, _const("false"),
         ("0.11.0.0", KCFG, "Defaults.UncleanLeaderElectionEnable"), "`val UncleanLeaderElectionEnable = false`."),
    Rule("no override possible", UNCLEAN_SOURCES, (0, 8, 0), (0, 8, 2), unclean_sources_none,
         ("0.8.1.1", SEL, "OfflinePartitionLeaderSelector.selectLeader"), "Not configurable."),
    Rule("topic config over broker config", UNCLEAN_SOURCES, (0, 8, 2), (1, 1, 0), unclean_sources_topic,
         ("0.10.2.0", SEL, "OfflinePartitionLeaderSelector.selectLeader"),
         "`LogConfig.fromProps(config.originals, fetchEntityConfig(Topic, topic)).uncleanLeaderElectionEnable`: "
         "the topic's /config/topics override, else the controller's own server.properties."),
    Rule("topic, then dynamic cluster default (KIP-226)", UNCLEAN_SOURCES, (1, 1, 0), None, unclean_sources_dynamic,
         ("1.1.0", "core/src/main/scala/kafka/server/DynamicBrokerConfig.scala", "DynamicLogConfig"),
         "Log configs, unclean.leader.election.enable among them, may be set cluster-wide in "
         "/config/brokers/<default>, between the topic's override and server.properties."),
    Rule("enabling it triggers nothing", UNCLEAN_RETRY, (0, 8, 0), (2, 0, 0), retries_none,
         ("1.1.0", KC, "KafkaController"),
         "No event for a changed setting: offline partitions wait for the next broker change or failover."),
    Rule("cluster default enabled -> offline partitions retried", UNCLEAN_RETRY, (2, 0, 0), (2, 1, 0), retries_cluster,
         ("2.0.0", KC, "KafkaController.enableDefaultUncleanLeaderElection"),
         "DynamicLogConfig turning the cluster default on queues UncleanLeaderElectionEnable: "
         "triggerOnlinePartitionStateChange()."),
    Rule("cluster or topic enabled -> retried (KAFKA-6835)", UNCLEAN_RETRY, (2, 1, 0), None,
         retries_cluster_and_topic, ("2.1.0", KC, "KafkaController.enableTopicUncleanLeaderElection"),
         "TopicConfigHandler queues TopicUncleanLeaderElectionEnable(topic): "
         "`partitionStateMachine.triggerOnlinePartitionStateChange(topic)`."),
    Rule("no auto rebalance", AUTO_REBALANCE, (0, 8, 0), (0, 8, 1), _const({}),
         ("0.8.0", KCFG, "KafkaConfig"), "No auto.leader.rebalance.enable: only admin-requested preferred elections."),
    Rule("auto rebalance off by default", AUTO_REBALANCE, (0, 8, 1), (0, 8, 2), _const(_REBALANCE_OFF),
         ("0.8.1.1", KCFG, "KafkaConfig.autoLeaderRebalanceEnable"),
         "`props.getBoolean(\"auto.leader.rebalance.enable\", false)`; 10% imbalance, checked every 300 s."),
    Rule("auto rebalance on by default", AUTO_REBALANCE, (0, 8, 2), None, _const(_REBALANCE_ON),
         ("0.10.2.0", KCFG, "Defaults.AutoLeaderRebalanceEnable"),
         "`AutoLeaderRebalanceEnable = true`, `LeaderImbalancePerBrokerPercentage = 10`, "
         "`LeaderImbalanceCheckIntervalSeconds = 300`: preferred elections for brokers above 10% off-preferred."),
    Rule("no topic deletion", DELETE_TOPIC, (0, 8, 0), (0, 8, 1), _const(None),
         ("0.8.0", KCFG, "KafkaConfig"), "No delete.topic.enable and no deletion by the controller."),
    Rule("delete.topic.enable false", DELETE_TOPIC, (0, 8, 1), (1, 0, 0), _const("false"),
         ("0.11.0.0", KCFG, "Defaults.DeleteTopicEnable"),
         "`DeleteTopicEnable = false`: a deletion request stays queued; when enabled, partitions go Offline -> "
         "NonExistent after their replicas are deleted."),
    Rule("delete.topic.enable true", DELETE_TOPIC, (1, 0, 0), None, _const("true"),
         ("1.0.0", KCFG, "Defaults.DeleteTopicEnable"), "`DeleteTopicEnable = true` (KAFKA-5384)."),
]
