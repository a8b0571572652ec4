"""Log lines given twice (replay_engine/copies.py): one broker's line in two files is one event.

Truth: a real cluster's logs (../shared/real_logs) replayed once; the same files collected twice (a bundle and its
copy) must replay to the same judgements, each record once, and say which lines were copies.
"""
from __future__ import annotations

import shutil

import pytest

from conftest import REAL_LOGS
from forensics.sources import parse_folder_in_process
from parsers.schema import Event
from replay_engine.api import replay_cluster
from replay_engine.copies import drop_copies


def _line(file: str, pos: int, raw: str, ts: int = 1_000, broker: int = 1) -> Event:
    return Event("broker_failed", source_kind="broker_log", source_file=file, source_pos=pos, ts=ts, broker_id=broker,
                 subject_broker=2, raw=raw)


def test_a_line_in_two_files_is_kept_once_and_a_line_repeated_in_one_file_twice():
    a1, a2 = _line("b/server.log", 1, "x"), _line("b/server.log", 2, "x")  # the broker wrote it twice
    copy = _line("copy/b/server.log", 1, "x")
    other = _line("copy/b/server.log", 2, "x", broker=3)  # another writer: not a copy
    kept, note = drop_copies([copy, other, a1, a2])
    assert kept == [other, a1, a2] and "1 log events were copies" in note and "copy/b/server.log" not in note.split(
        "kept in")[1]
    assert drop_copies([a1, a2]) == ([a1, a2], None)
    # the same copy is dropped whatever order the events come in
    assert drop_copies([a2, a1, other, copy])[0] == [a2, a1, other]


@pytest.mark.skipif(not (REAL_LOGS / "chase-lewis__JIE7351").is_dir(), reason="../shared/real_logs absent")
def test_a_clusters_logs_collected_twice_replay_as_once(tmp_path):
    name = "chase-lewis__JIE7351"
    shutil.copytree(REAL_LOGS / name, tmp_path / name)
    shutil.copytree(REAL_LOGS / name, tmp_path / name / "second-collection")
    once = replay_cluster(parse_folder_in_process(REAL_LOGS, name), name)
    twice = replay_cluster(parse_folder_in_process(tmp_path, name), name)
    assert twice.agreement() == once.agreement() and twice.agreement()["divergences"] == []
    assert sorted((c.record.source_file, c.record.source_pos) for c in twice.comparisons) == sorted(
        (c.record.source_file, c.record.source_pos) for c in once.comparisons)
    assert any("were copies of lines in other files" in n for n in twice.notes)
    spans = [(x.episode.topic, x.episode.partition, x.episode.start, x.episode.end) for x in once.leaderless]
    assert [(x.episode.topic, x.episode.partition, x.episode.start, x.episode.end) for x in twice.leaderless] == spans
