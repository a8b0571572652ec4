"""What KRaft broker and controller log lines state beyond their own event, for a replay with logs only.

The quorum controller names partitions by topic id; the brokers name them by topic and id together
("Leader t-0 with topic id Some(<id>) starts at leader epoch ..."). And a 4.x ``PartitionChangeBuilder`` line
states the registration the change started from. Pure functions over events.
"""
from __future__ import annotations

from typing import Any, Iterable

from parsers.schema import Event


def topic_names_from_lines(events: Iterable[Event]) -> dict[str, str]:
    """Topic id -> name, from every event that states both (a name seen first wins, as a topic id never changes
    name; a recreated topic gets a new id)."""
    out: dict[str, str] = {}
    for e in events:
        tid = (e.detail or {}).get("topic_id")
        if tid and e.topic and not e.topic.startswith("topic-id:"):
            out.setdefault(str(tid), e.topic)
    return out


def previous_registration(detail: dict[str, Any]) -> dict[str, Any] | None:
    """The partition registration a logged change started from (replicas, ISR, ELR, leader, epochs), if stated."""
    if detail.get("previous_replicas") is None or detail.get("previous_isr") is None \
            or detail.get("previous_leader") is None:
        return None
    return {
        "replicas": tuple(detail["previous_replicas"]),
        "isr": tuple(detail["previous_isr"]),
        "elr": tuple(detail.get("previous_elr") or ()),
        "last_known_elr": tuple(detail.get("previous_last_known_elr") or ()),
        "leader": int(detail["previous_leader"]),
        "leader_epoch": detail.get("previous_leader_epoch"),
        "partition_epoch": detail.get("previous_partition_epoch"),
    }
