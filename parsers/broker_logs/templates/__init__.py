"""The grammar of Kafka's log messages, every version, in one package.

Each module holds the templates of one area and exports ``RULES`` (a list of
:class:`parsers.broker_logs.rules.Rule`):

- ``state_change``: controller-side partition/replica state machines, failed elections
- ``controller``: ZooKeeper-mode controller (election, brokers, start-up view, topics)
- ``replica``: broker-side partition (ISR changes, become leader/follower, requests)
- ``broker``: the broker itself (lifecycle, registration, controlled shutdown, ZooKeeper session, config)
- ``kraft``: KRaft quorum controller, Raft client and broker lifecycle
- ``client``: producer/consumer errors (Java, sarama, confluent-kafka-go)
- ``fatal``: a broker that could not start or register, or stopped itself, and the line that proves why
- ``identity``: the cluster id a broker or controller logs while it starts

``shapes`` parses the structures Kafka prints inside messages, ``writer`` finds the
broker that wrote a line, ``finish`` settles what needs more than one line.
Nothing here reads files.
"""
from __future__ import annotations

from parsers.broker_logs.rules import RuleSet
from parsers.broker_logs.templates import broker, client, controller, fatal, identity, kraft, replica, state_change
from parsers.broker_logs.templates.finish import finish
from parsers.broker_logs.templates.writer import writer_id

RULES = RuleSet([*state_change.RULES, *controller.RULES, *replica.RULES, *broker.RULES, *kraft.RULES, *client.RULES,
                  *fatal.RULES, *identity.RULES])

__all__ = ["RULES", "finish", "writer_id"]
