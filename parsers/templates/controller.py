"""controller.log templates (ZooKeeper-mode KafkaController and its listeners)."""
from __future__ import annotations

import re

from parsers.rules import Rule, int_list
from parsers.schema import Event

CONTROLLER_LOGGERS = ("kafka.controller.*", "kafka.server.ZookeeperLeaderElector*", "state.change.logger")


def _elected_2x(entry, m):
    return Event(
        "controller_elected",
        controller_id=int(m["id"]),
        controller_epoch=int(m["epoch"]),
        subject_broker=int(m["id"]),
        detail={"epoch_zk_version": int(m["zkv"])},
    )


def _elected_010(entry, m):
    # 0.10-1.0: "[Controller 0]: Controller 0 incremented epoch to 1"
    return Event("controller_elected", controller_id=int(m["id"]), controller_epoch=int(m["epoch"]), subject_broker=int(m["id"]))


def _broker_change(entry, m):
    added = int_list(m["added"])
    deleted = int_list(m["deleted"])
    bounced = int_list(m["bounced"]) if m["bounced"] is not None else []
    live = int_list(m["live"])
    evs = []
    common = {"live_brokers": live, "via": "controller_broker_change"}
    for b in added:
        evs.append(Event("broker_registered", subject_broker=b, detail=dict(common)))
    for b in bounced:
        evs.append(Event("broker_failed", subject_broker=b, detail={**common, "bounced": True}))
        evs.append(Event("broker_registered", subject_broker=b, detail={**common, "bounced": True}))
    for b in deleted:
        evs.append(Event("broker_failed", subject_broker=b, detail=dict(common)))
    if not evs:
        evs.append(Event("controller_startup_state", detail={**common, "kind": "broker_change_noop"}))
    return evs


def _failure_callback(entry, m):
    return [Event("broker_failed", subject_broker=b, detail={"via": "failure_callback"}) for b in int_list(m["ids"])]


RULES = [
    Rule(
        "controller.elected.2x",
        CONTROLLER_LOGGERS,
        ("successfully elected as the controller",),
        re.compile(r"^\[Controller id=(?P<cid>\d+)\] (?P<id>\d+) successfully elected as the controller\. "
                   r"Epoch incremented to (?P<epoch>\d+) and epoch zk version is now (?P<zkv>-?\d+)"),
        _elected_2x,
    ),
    Rule(
        "controller.incremented_epoch.010",
        CONTROLLER_LOGGERS,
        ("incremented epoch to",),
        re.compile(r"^\[Controller (?P<cid>\d+)\]: Controller (?P<id>\d+) incremented epoch to (?P<epoch>\d+)"),
        _elected_010,
    ),
    Rule(
        "controller.broker_change",
        CONTROLLER_LOGGERS,
        ("Newly added brokers:",),
        re.compile(r"^(?:\[[^\]]*\]:? )?Newly added brokers: (?P<added>[\d, ]*), deleted brokers: (?P<deleted>[\d, ]*), "
                   r"(?:bounced brokers: (?P<bounced>[\d, ]*), )?all live brokers: (?P<live>[\d, ]*)$"),
        _broker_change,
    ),
    Rule(
        "controller.failure_callback",
        CONTROLLER_LOGGERS,
        ("Broker failure callback for",),
        re.compile(r"^(?:\[[^\]]*\]:? )?Broker failure callback for (?P<ids>[\d, ]*)$"),
        _failure_callback,
    ),
]
