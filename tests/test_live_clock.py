"""``watch``'s measure of a clock behind (``forensics.live.follow``, SKEW_US) on a recorded incident written again
into a folder as its brokers wrote it (``playback``), followed batch after batch as a loaded host follows it: the
tailer (``forensics.live.files``) and the stream's reading of its offsets (``forensics.live.source``) run on a clock
of the test's own, with no Spark and no sleeping, so a schedule of batches and of stalls of the writer (a thread that
got the CPU late writes what was due meanwhile at once) is the same in every run. The sample's brokers wrote with
clocks that agree (its README: one cluster, its lines in one time line): whatever the batches, no file is said to
have a clock behind. A broker whose lines, written when the others' are, carry times an hour earlier is said to."""
from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from conftest import SAMPLES
from forensics.live.files import roots_of
from forensics.live.follow import Session
from forensics.live.playback import Player

pytest.importorskip("pyspark")  # forensics.live.source is a Spark data source (only its reading is used here)

BATCH_S = 0.5  # watch --every 0.5, as the kill -9 stream test runs it
SPEED = 200.0  # that test's playback speed
_STAMP = re.compile(rb"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", re.M)


class _Player(Player):
    """The playback, with the lines of one broker's folder written with a clock ``behind_s`` behind: each line is
    written when the others' lines of its true time are, carrying a time that much earlier."""

    def __init__(self, source: Path, dest: Path, behind: str | None, behind_s: int):
        super().__init__(source, dest)
        self.behind, self.behind_s = behind, behind_s

    def _append(self, path: Path, raw: bytes, line):
        if self.behind is not None and path.parent.name == self.behind:
            def earlier(m):
                t = dt.datetime.strptime(m[1].decode(), "%Y-%m-%d %H:%M:%S") - dt.timedelta(seconds=self.behind_s)
                return b"[" + t.strftime("%Y-%m-%d %H:%M:%S").encode()

            raw = _STAMP.sub(earlier, raw)
        return super()._append(path, raw, line)


def _follow(tmp_path: Path, sample: str, stall_every: int, stall_s: float, behind: str | None = None,
            behind_s: int = 0) -> Session:
    """The sample played at SPEED into a folder while a batch is read every BATCH_S seconds; every ``stall_every``-th
    wait of the writer lasts ``stall_s`` seconds longer (it was not given the CPU: what came due meanwhile is written
    at once). Returns the session after the last batch."""
    from forensics.live.source import TailReader

    cols = ["lid", "display", "framing", "start", "end", "quiet", "behind", "data", "note"]
    dest, live = tmp_path / "cluster", tmp_path / "live"
    dest.mkdir()
    live.mkdir()
    player = _Player(SAMPLES / sample, dest, behind, behind_s)
    player.plan()
    # watch's defaults: a file unchanged for 2 s is quiet
    reader = TailReader({"roots": json.dumps(roots_of([str(dest)])), "table": str(live / "files.json"),
                         "quiet": "2"})
    session = Session(sample)
    clock = {"now": 1_700_000_000.0, "next": 1_700_000_000.0, "waits": 0, "start": {"f": {}, "n": []}}

    def batch():
        files = reader.table.advance(clock["now"])
        end = {"f": files, "n": reader.table.take_notes()}
        rows = [dict(zip(cols, t)) for p in reader.partitions(clock["start"], end) for t in reader.read(p)]
        clock["start"] = end
        if rows:  # Spark runs no batch when no offset moved
            session.apply(rows, f"{clock['now']:.1f}")
            session.batch_id += 1

    def sleep(wait: float) -> None:
        clock["waits"] += 1
        until = clock["now"] + wait + (stall_s if stall_every and clock["waits"] % stall_every == 0 else 0.0)
        while clock["next"] <= until:
            clock["now"] = clock["next"]
            batch()
            clock["next"] += BATCH_S
        clock["now"] = until

    player.play(SPEED, max_gap_s=20, sleep=sleep, clock=lambda: clock["now"])
    for _ in range(8):  # until every file is quiet and read
        sleep(BATCH_S)
    return session


def _behind(session: Session) -> list[str]:
    return [n.line() for n in session.notes if "clock is behind" in n.text]


# batches every 0.5 s with the writer on time; stalled 1 s every 3rd, 7th, 11th wait; stalled 2 s every 5th
SCHEDULES = [(0, 0.0), (3, 1.0), (7, 1.0), (11, 1.0), (5, 2.0)]


@pytest.mark.parametrize("stall_every,stall_s", SCHEDULES)
def test_agreeing_clocks_are_not_said_behind_whatever_the_batches(tmp_path, stall_every, stall_s):
    """rf1_broker_kill as the kill -9 stream test plays it, followed as a loaded host follows it. Before: its zkCli
    dump (zkcli/get_partition_101_state.txt, copied first: its only times are what it quotes, mtime 10:32:23) stood
    for the time the others had written, and every log written before 10:27 was said to be behind; a file with no
    new line (ZooKeeper's log, quiet in ZooKeeper's own time) was measured again in the batches after it grew."""
    session = _follow(tmp_path, "rf1_broker_kill", stall_every, stall_s)
    assert session.batch_id > 20, "followed over many batches"
    assert not _behind(session), _behind(session)


@pytest.mark.parametrize("stall_every,stall_s", [SCHEDULES[0], SCHEDULES[1], SCHEDULES[4]])
def test_a_broker_writing_an_hour_behind_is_said_behind(tmp_path, stall_every, stall_s):
    """The same, with broker 3's lines written an hour behind the others': its files, and only its files, are said
    to have a clock behind."""
    session = _follow(tmp_path, "rf1_broker_kill", stall_every, stall_s, behind="kafka-broker-3", behind_s=3600)
    said = _behind(session)
    assert said, [n.line() for n in session.notes]
    assert all("/kafka-broker-3/" in s for s in said), said


def test_a_file_that_wrote_nothing_since_is_not_measured_again():
    """A batch that did not grow a file tells nothing about its clock. Broker 2 writes its start-up lines with
    broker 1's, then nothing (not yet quiet) while broker 1 writes on, seven minutes of the cluster's time per batch
    (a loaded host's batches at 200x). Before: broker 2's file kept ``grew`` from its last row and was measured with
    the same old line in each batch after, and said behind."""
    started = "[2021-08-16 {t}] INFO [KafkaServer id={b}] started (kafka.server.KafkaServer)\n"
    s = Session("c")
    pos = {}

    def row(lid, name, ts):
        data = "".join(started.format(t=t, b=lid[1:]) for t in ts).encode()
        start = pos.get(lid, 0)
        pos[lid] = start + len(data)
        return dict(lid=lid, display=f"kafka-broker-{lid[1:]}/{name}", framing="text", start=start,
                    end=pos[lid], quiet=0, behind=0, data=data, note=None)

    def at(minute):
        return [f"{10 + minute // 60:02d}:{minute % 60:02d}:{k:02d},000" for k in range(10)]

    s.apply([row("f1", "server.log", at(0)), row("f2", "server.log", at(0))], "b0")
    for b in range(1, 6):
        s.apply([row("f1", "server.log", at(7 * b))], f"b{b}")
    assert not [n.line() for n in s.notes if "clock is behind" in n.text]
    # and it is waited for: the time every file still being written has passed is its latest event's
    assert s.horizon("c", "b6") == s.files["f2"].last_ts
