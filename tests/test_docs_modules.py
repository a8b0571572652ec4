"""docs/replay.md's module map is the tree of replay_engine/: it names every module (a package by its
``__init__.py``), and names no module that is not there.

A module is named in the first column of the table under "## Module map", as a path relative to replay_engine/ in
backticks (several per row joined by ``,``)."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "replay.md"


def mapped(text: str) -> list[str]:
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines()
            if line.startswith("| `") and not line.startswith("|---")]
    return [name for cell in rows for name in re.findall(r"`([^`]+\.py)`", cell)]


def modules() -> set[str]:
    root = REPO / "replay_engine"
    return {p.relative_to(root).as_posix() for p in root.rglob("*.py")}


def test_the_module_map_names_every_module_once_and_no_other():
    named = mapped(DOC.read_text())
    assert sorted(n for n in set(named) if named.count(n) > 1) == []
    assert sorted(modules() - set(named)) == []
    assert sorted(set(named) - modules()) == []


def test_the_check_sees_a_module_missing_and_one_too_many():
    text = "## Module map\n\n| module | job |\n|---|---|\n| `api.py`, `gone.py` | x |\n\n## Next\n| `zk/x.py` | y |\n"
    assert mapped(text) == ["api.py", "gone.py"]
