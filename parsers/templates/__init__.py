"""The grammar of Kafka's log messages, every version, in one package.

Each module holds the templates of one area and exports ``RULES`` (a list of
:class:`parsers.rules.Rule`). ``writer.py`` knows how a line names the broker
that wrote it. Nothing here reads files.
"""
from __future__ import annotations

from parsers.rules import RuleSet
from parsers.templates import controller, state_change
from parsers.templates.writer import writer_id

RULES = RuleSet([*controller.RULES, *state_change.RULES])

__all__ = ["RULES", "writer_id"]
