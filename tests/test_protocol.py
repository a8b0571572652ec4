"""Both replays meet one Protocol (replay_engine.protocol.Replay), and the image and ``assemble`` read a finished
replay through it alone: no ``getattr`` guessing which replay it is (issue 45)."""
import ast
import typing
from pathlib import Path

from conftest import sample_events
from replay_engine.api import zk_replay_of
from replay_engine.common.config import ConfigState
from replay_engine.kraft.replay import KraftReplay
from replay_engine.protocol import Replay

REPO = Path(__file__).resolve().parents[1]


def members():
    return set(typing.get_type_hints(Replay))


def test_both_replays_have_every_member_of_the_protocol():
    zk, _ = zk_replay_of(sample_events("rf1_broker_kill"))
    kraft = KraftReplay(ConfigState())
    for replay in (zk, kraft):
        assert isinstance(replay, Replay)
        assert [m for m in sorted(members()) if not hasattr(replay, m)] == []


def test_the_image_and_assemble_read_a_replay_without_getattr():
    for module in ("replay_engine/image.py", "replay_engine/result.py"):
        tree = ast.parse((REPO / module).read_text())
        calls = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None)
                 in ("getattr", "hasattr")]
        assert calls == [], module


def test_what_the_image_reads_of_a_replay_is_in_the_protocol():
    """Every attribute image_of, history_of and assemble read of their ``replay`` argument is a Protocol member."""
    read = set()
    for module, functions in (("replay_engine/image.py", ("image_of", "history_of")),
                              ("replay_engine/result.py", ("assemble",))):
        tree = ast.parse((REPO / module).read_text())
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name in functions:
                read |= {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                         and isinstance(n.value, ast.Name) and n.value.id == "replay"}
    assert read and read <= members(), read - members()
