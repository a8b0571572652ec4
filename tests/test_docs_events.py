"""docs/events.md is the contract of every event type: it documents each one the schema declares
(``parsers.schema.EVENT_TYPES``, where parsers' vocabulary is declared) and names no other.

An event type is named in the first column of a table whose header starts ``| event_type |``,
spelled in full and in backticks (several per row joined by ``/`` or ``,``, an aside in parentheses).
"""
from __future__ import annotations

import re
from pathlib import Path

from parsers.schema import EVENT_TYPES

DOC = Path(__file__).resolve().parents[1] / "docs" / "events.md"
_NAME = re.compile(r"`([^`]*)`")


def first_cells(text: str) -> list[tuple[int, str]]:
    """(line number, first cell) of every row of the event_type tables."""
    rows, in_table = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("| event_type |"):
            in_table = True
        elif in_table and line.startswith("|"):
            if not line.startswith("|---"):
                rows.append((n, line.split("|")[1].strip()))
        else:
            in_table = False
    return rows


def named_types(cell: str) -> list[str]:
    return _NAME.findall(cell)


def problems(text: str, declared) -> list[str]:
    out, seen = [], set()
    for n, cell in first_cells(text):
        rest = re.sub(r"\([^)]*\)|[/,]", "", _NAME.sub("", cell)).strip()
        if rest or not named_types(cell):
            out.append(f"line {n}: first column {cell!r} is not a list of `event_type` names")
        for name in named_types(cell):
            seen.add(name)
            if name not in declared:
                out.append(f"line {n}: `{name}` is no event type of parsers.schema.EVENT_TYPES")
    out += [f"`{t}` is not documented" for t in declared if t not in seen]
    return out


def test_events_md_documents_every_event_type_and_no_other():
    assert len(first_cells(DOC.read_text(encoding="utf-8"))) >= len(EVENT_TYPES) // 2, "no event tables found"
    assert problems(DOC.read_text(encoding="utf-8"), EVENT_TYPES) == []


def test_the_check_fails_on_a_missing_an_unknown_and_an_abbreviated_type():
    doc = ("| event_type | columns | detail |\n|---|---|---|\n"
           "| `topic_created` / `_deleted` | `topic` | |\n"
           "| `topic_renamed` (ZK) | `topic` | |\n"
           "| isr_shrink | | |\n\n"
           "Prose naming `isr_expand` documents nothing.\n")
    assert problems(doc, {"topic_created": "", "topic_deleted": "", "isr_shrink": "", "isr_expand": ""}) == [
        "line 3: `_deleted` is no event type of parsers.schema.EVENT_TYPES",
        "line 4: `topic_renamed` is no event type of parsers.schema.EVENT_TYPES",
        "line 5: first column 'isr_shrink' is not a list of `event_type` names",
        "`topic_deleted` is not documented",
        "`isr_shrink` is not documented",
        "`isr_expand` is not documented",
    ]
