"""Controller-relevant configuration: Kafka's defaults per version, and how a value is resolved.

Resolution order for a topic's setting (highest first):
  what-if override for the topic > what-if cluster-wide override >
  topic config (``/config/topics/T``, KRaft ConfigRecord TOPIC) >
  dynamic cluster default (``/config/brokers/<default>``) >
  static broker config (logged ``KafkaConfig values``; the controller's) >
  Kafka's default for the detected version.
Every resolved value says where it came from, so a report can cite it.
"""
from __future__ import annotations

import re
from dataclasses import FrozenInstanceError, dataclass, field, fields
from typing import Any, Mapping

from replay_engine.common.frozen import FrozenMap

Version = tuple[int, int, int]

UNCLEAN = "unclean.leader.election.enable"
MIN_ISR = "min.insync.replicas"
AUTO_REBALANCE = "auto.leader.rebalance.enable"
IMBALANCE_PCT = "leader.imbalance.per.broker.percentage"
IMBALANCE_INTERVAL = "leader.imbalance.check.interval.seconds"
REPLICA_LAG = "replica.lag.time.max.ms"
ZK_SESSION_TIMEOUT = "zookeeper.session.timeout.ms"
BROKER_SESSION_TIMEOUT = "broker.session.timeout.ms"
CONTROLLED_SHUTDOWN = "controlled.shutdown.enable"
CS_MAX_RETRIES = "controlled.shutdown.max.retries"
CS_BACKOFF = "controlled.shutdown.retry.backoff.ms"


def parse_version(text: str | None) -> Version | None:
    """'2.5.1' / '0.10.2.0' / '3.7.1-IV1' / '2.7-IV1' / '0.11.0.1-cp1' -> (major, minor, patch)."""
    if not text:
        return None
    m = re.match(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?", str(text))
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def kafka_defaults(version: Version | None) -> dict[str, str]:
    """Defaults that changed across releases (controller-semantics.md section 7; the controller's own from the
    rule table, docs/semantics.md)."""
    from replay_engine import rules as R

    v = version or (3, 0, 0)
    rebalance = R.decide("zk.auto_rebalance.defaults", v)  # empty before 0.8.1: no auto rebalance at all
    return {
        UNCLEAN: R.decide("zk.unclean.default", v),
        MIN_ISR: "1",
        AUTO_REBALANCE: rebalance.get(AUTO_REBALANCE, "false"),
        IMBALANCE_PCT: rebalance.get(IMBALANCE_PCT, "10"),
        IMBALANCE_INTERVAL: rebalance.get(IMBALANCE_INTERVAL, "300"),
        REPLICA_LAG: "10000" if v < (2, 5, 0) else "30000",  # KIP-537
        ZK_SESSION_TIMEOUT: "6000" if v < (2, 5, 0) else "18000",
        BROKER_SESSION_TIMEOUT: "9000",
        CONTROLLED_SHUTDOWN: "true",
        CS_MAX_RETRIES: "3",
        CS_BACKOFF: "5000",
    }


@dataclass(frozen=True)
class Resolved:
    value: str
    source: str  # 'what-if', 'topic config', 'cluster default', 'broker config', 'Kafka <v> default'
    evidence: Any = None  # the event that set it, when there is one
    default: bool = False  # no config in the evidence sets it: the release's default


def as_bool(text: str) -> bool:
    return str(text).strip().lower() == "true"


_DEFAULTS: dict[Version | None, dict[str, str]] = {}


def _defaults(version: Version | None) -> dict[str, str]:
    """``kafka_defaults``, built once per version (read only: a setting no config gives resolves to it)."""
    d = _DEFAULTS.get(version)
    if d is None:
        d = _DEFAULTS[version] = kafka_defaults(version)
    return d


_DEFAULT = ""  # ``_where``'s mark of a release's default


@dataclass
class ConfigState:
    """The configuration the controller sees at a point of the replay (mutated as config events arrive), and how a
    setting resolves in it (the order above); :class:`ConfigImage` is the same, frozen."""

    version: Version | None = None
    version_source: str = "unknown (assumed 3.x defaults)"
    broker_static: dict[int, dict[str, tuple[str, Any]]] = field(default_factory=dict)
    cluster_dynamic: dict[str, tuple[str, Any]] = field(default_factory=dict)
    topic: dict[str, dict[str, tuple[str, Any]]] = field(default_factory=dict)
    override_cluster: dict[str, str] = field(default_factory=dict)
    override_topic: dict[str, dict[str, str]] = field(default_factory=dict)

    def image(self) -> "ConfigImage":
        """The configuration in force now, frozen (values are (text, evidence) pairs: shared, not copied)."""
        return ConfigImage(self.version, self.version_source, _freeze2(self.broker_static),
                           FrozenMap(self.cluster_dynamic), _freeze2(self.topic), FrozenMap(self.override_cluster),
                           _freeze2(self.override_topic))

    def resolve(self, key: str, topic: str | None = None, controller: int | None = None) -> Resolved:
        value, where, ev, who = self._where(key, topic, controller)
        if where == _DEFAULT:
            vtxt = ".".join(map(str, self.version)) if self.version else "3.x (version unknown)"
            return Resolved(value, f"Kafka {vtxt} default", default=True)
        return Resolved(value, where.format(who), ev)

    def value(self, key: str, topic: str | None = None, controller: int | None = None) -> str:
        """``resolve(...).value``: the setting alone, where the replay asks it at every decision."""
        return self._where(key, topic, controller)[0]

    def _where(self, key: str, topic: str | None, controller: int | None) -> tuple[str, str, Any, Any]:
        """(value, where it came from with ``{}`` for whose, its evidence, whose): the resolution order above."""
        if topic is not None:
            t = self.override_topic.get(topic)
            if t is not None and key in t:
                return t[key], "what-if (topic)", None, None
        if key in self.override_cluster:
            return self.override_cluster[key], "what-if", None, None
        if topic is not None:
            t = self.topic.get(topic)
            if t is not None and key in t:
                v, ev = t[key]
                return v, "topic config of {}", ev, topic
        if key in self.cluster_dynamic:
            v, ev = self.cluster_dynamic[key]
            return v, "dynamic cluster default", ev, None
        statics = self.broker_static
        if controller is not None:
            c = statics.get(controller)
            if c is not None and key in c:
                v, ev = c[key]
                return v, "broker {} config", ev, controller
        # Not logged by the controller: any broker's logged setting is the best evidence we have.
        for b in sorted(statics):
            if key in statics[b]:
                v, ev = statics[b][key]
                return v, "broker {} config", ev, b
        return _defaults(self.version)[key], _DEFAULT, None, None

    def unclean_enabled(self, topic: str, controller: int | None = None) -> Resolved:
        return self.resolve(UNCLEAN, topic, controller)

    def int_value(self, key: str, topic: str | None = None, controller: int | None = None) -> int:
        try:
            return int(float(self.value(key, topic, controller)))
        except ValueError:
            return int(_defaults(self.version)[key])


class ConfigImage(ConfigState):
    """A :class:`ConfigState` frozen: what the cluster image and the config history hold. The same fields (declared
    once, by ConfigState), each set once: its maps are ``FrozenMap``s (a plain dict given is frozen), and no field is
    set again (``dataclasses.FrozenInstanceError``, as a frozen dataclass)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for name in ("broker_static", "topic", "override_topic"):
            value = getattr(self, name)
            if type(value) is dict:
                object.__setattr__(self, name, _freeze2(value))
        for name in ("cluster_dynamic", "override_cluster"):
            value = getattr(self, name)
            if type(value) is dict:
                object.__setattr__(self, name, FrozenMap(value))
        object.__setattr__(self, "_sealed", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_sealed"):
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:  # as a frozen dataclass's: of its fields
        return hash(tuple(getattr(self, f.name) for f in fields(self)))

    def image(self) -> "ConfigImage":
        return self


def _freeze2(d: Mapping[Any, Mapping[str, Any]]) -> FrozenMap:
    return FrozenMap({k: FrozenMap(v) for k, v in d.items()})


def parse_overrides(items: list[str] | None) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """'KEY=VALUE' (cluster-wide) and 'topic:NAME.KEY=VALUE' -> (cluster, per-topic).

    Topic names may contain dots, so the key is matched against the known
    settings from the right: 'topic:a.b.min.insync.replicas=2' -> topic 'a.b'.
    """
    cluster: dict[str, str] = {}
    per_topic: dict[str, dict[str, str]] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"expected KEY=VALUE, got {item!r}")
        lhs, _, value = item.partition("=")
        lhs = lhs.strip()
        if lhs.startswith("topic:"):
            rest = lhs[len("topic:"):]
            key = next((k for k in sorted(KNOWN_TOPIC_KEYS, key=len, reverse=True) if rest.endswith("." + k)), None)
            if key is None:
                raise ValueError(f"{item!r}: expected topic:NAME.KEY=VALUE with KEY one of {sorted(KNOWN_TOPIC_KEYS)}")
            per_topic.setdefault(rest[: -len(key) - 1], {})[key] = value.strip()
        else:
            cluster[lhs] = value.strip()
    return cluster, per_topic


KNOWN_TOPIC_KEYS = frozenset({UNCLEAN, MIN_ISR, "replication.factor"})
