"""``watch`` end to end: a real Spark Structured Streaming query (the shared session) over real files being
written by ``playback``, as a recorded incident's brokers wrote them (lines appended, log4j's rotation, the later
gzip, ZooKeeper's log written in place). What it ends with is compared with the postmortem of the same files
(the files as they are once written, parsed and replayed whole); a ``kill -9`` in the middle and a restart
with the same ``--out`` lose nothing and tell nothing twice; bad input while it runs is said with its file and
position and the following goes on."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import SAMPLES
from forensics.live.compare import answer, postmortem_report

pytestmark = pytest.mark.spark


def _postmortem(dest: Path, cluster: str) -> dict:
    """What postmortem says of the folder once written: every file parsed whole, the cluster replayed whole."""
    return postmortem_report(dest, cluster)


def _answer(report: dict) -> dict:
    """The incidents, their causes and the leaderless intervals (with the lines that prove them)."""
    return answer(report)


def _watch(dest: Path, out: Path, cluster: str, idle: float = 8.0, **kw):
    from forensics.live.run import WatchOptions, watch

    opts = WatchOptions(sources=[str(dest)], out=out, cluster=cluster, view=False, until_idle_s=idle,
                        trigger_s=0.5, quiet_s=1.0, **kw)
    return watch(opts, lambda _msg: None)


def _play(sample: str, dest: Path, speed: float, after: Path | None = None) -> threading.Thread:
    """The sample written into ``dest`` at ``speed`` times its pace, once the query has run a batch (``after``
    exists): the files are written while the stream follows them."""
    from forensics.live.playback import playback

    def run():
        deadline = time.time() + 300
        while after is not None and not after.exists() and time.time() < deadline:
            time.sleep(0.2)
        playback(SAMPLES / sample, dest, speed, max_gap_s=20)
        t.done_at = time.time()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _notes(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "incidents.jsonl").read_text().splitlines()]


def _told_once(notes: list[dict]) -> None:
    """Numbered in order, none twice; each incident opened once, closed at most once, after it was opened."""
    assert [n["seq"] for n in notes] == list(range(1, len(notes) + 1))
    for key in {n["id"] for n in notes}:
        events = [n["event"] for n in notes if n["id"] == key]
        assert events.count("incident_opened") == 1 and events[0] == "incident_opened", (key, events)
        assert events.count("incident_closed") <= 1, (key, events)


@pytest.mark.parametrize("sample", ["unclean_election", pytest.param("kraft_broker_fenced", marks=pytest.mark.slow)])
def test_watch_over_a_playback_ends_with_the_postmortems_answer(spark, tmp_path, sample):
    """ZooKeeper mode with ZooKeeper's log (an unclean election) and KRaft with its metadata log (a fenced broker),
    played back at 600x while the query follows them."""
    dest, out = tmp_path / "cluster", tmp_path / "out"
    dest.mkdir()
    player = _play(sample, dest, speed=600, after=out / "live" / "batches.jsonl")
    _watch(dest, out, sample)
    player.join()
    live = json.loads((out / "report.json").read_text())
    assert _answer(live) == _answer(_postmortem(dest, sample))
    assert live["incidents"], "the sample's incident is told"
    # the brokers' clocks agree (the sample's lines): a rotated part's lines lagging is no clock behind
    assert not [w for w in live["live"]["warnings"] if "clock is behind" in w["text"]], live["live"]["warnings"]
    notes = _notes(out)
    _told_once(notes)
    assert {n["id"] for n in notes} == {f"{i['cluster']}/{i['topic']}/{i['start']}" for i in live["incidents"]}
    batches = [json.loads(x) for x in (out / "live" / "batches.jsonl").read_text().splitlines()]
    read = [b for b in batches if b["bytes"]]
    assert len(read) >= 2 and read[0]["at"] < player.done_at, "read as it was written, over several batches"


@pytest.mark.slow
def test_kill_9_and_restart_lose_nothing_and_tell_nothing_twice(spark, tmp_path):
    """``watch`` in its own process, killed with SIGKILL while the files are still being written, then started
    again (here, in the test's Spark session) with the same --out: every line of every file is read once (the
    files' line counts), every incident told once, and the answer is the postmortem's."""
    sample = "rf1_broker_kill"
    dest, out = tmp_path / "cluster", tmp_path / "out"
    dest.mkdir()
    cmd = [sys.executable, "-m", "forensics", "watch", str(dest), "--out", str(out), "--json", "--every", "0.5",
           "--cluster", sample, "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    player = None
    try:
        state = out / "live" / "batches.jsonl"
        deadline = time.time() + 240
        while not state.exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.5)
        assert state.exists(), proc.stderr.read().decode()[-2000:] if proc.poll() is not None else "no batch in 240 s"
        player = _play(sample, dest, speed=200)
        while time.time() < deadline:  # killed once it has told something and read part of the files
            if (out / "incidents.jsonl").exists() and len(state.read_text().splitlines()) > 5:
                break
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_at = len(_notes(out)) if (out / "incidents.jsonl").exists() else 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    player.join()
    _watch(dest, out, sample)
    notes = _notes(out)
    assert len(notes) >= killed_at
    _told_once(notes)
    live = json.loads((out / "report.json").read_text())
    assert _answer(live) == _answer(_postmortem(dest, sample))
    assert not [w for w in live["live"]["warnings"] if "clock is behind" in w["text"]], live["live"]["warnings"]
    # no incident lost: each one it ends with was told opened, before or after the kill
    assert {n["id"] for n in notes if n["event"] == "incident_opened"} >= \
        {f"{i['cluster']}/{i['topic']}/{i['start']}" for i in live["incidents"]}
    # every line read once: each logical file's line count is its final file's
    from forensics.live.follow import Session

    session = Session.load(str(out / "live" / "state.pkl"))
    table = json.loads((out / "live" / "files.json").read_text())["files"]
    import gzip

    for lid, f in session.files.items():
        path = Path(table[lid]["path"])
        if f.kind != "broker_log" or not path.exists():
            continue
        data = path.read_bytes()
        data = gzip.decompress(data) if path.suffix == ".gz" else data
        assert f.summary.lines == data.count(b"\n"), (path, f.summary.lines, data.count(b"\n"))


@pytest.mark.slow  # 29-58 s under load 15-21 (the playback, the mischief, the idle wait); test_live_files is quick
def test_bad_input_while_following_is_said_with_file_and_position(spark, tmp_path):
    """While a playback is followed: a line left without its line break, a file replaced, a rotated part deleted
    before it was read whole, a broker whose clock is an hour behind another's, a binary file dropped in. Each is
    a warning naming the file and where; following goes on (the files written after are read) and the incident
    is still told as postmortem tells it."""
    sample = "unclean_election"
    dest, out = tmp_path / "cluster", tmp_path / "out"
    dest.mkdir()
    player = _play(sample, dest, speed=600, after=out / "live" / "batches.jsonl")
    odd = dest / "odd"

    def looked_at(path: Path) -> None:
        """Wait for the tailer to have looked at the file (and offered it up to its last line break)."""
        table, deadline = out / "live" / "files.json", time.time() + 60
        while time.time() < deadline and f'"{path}"' not in (table.read_text() if table.exists() else ""):
            time.sleep(0.2)

    def mischief():
        player.join()
        odd.mkdir()
        (odd / "core.1234").write_bytes(bytes(range(256)) * 32)
        # a broker's start-up line (an event of its own, with its time), written over and over
        behind = "[2021-10-21 13:{m:02d}:00,000] INFO [KafkaServer id=9] started (kafka.server.KafkaServer)\n"
        ahead = "[2021-10-21 15:{m:02d}:30,000] INFO [KafkaServer id=8] started (kafka.server.KafkaServer)\n"
        # a rotated part deleted before it was read to its end (its last line never got its line break)
        part = odd / "gone.log.2021-10-21-13"
        part.write_text(behind.format(m=50) + "[2021-10-21 13:51:00,000] INFO [KafkaServer id=9] sta")
        looked_at(part)
        os.remove(part)
        for m in range(0, 40):  # two brokers writing at once, one's clock an hour and more behind
            with open(odd / "behind.log", "a") as fh:
                fh.write(behind.format(m=m))
            with open(odd / "ahead.log", "a") as fh:
                fh.write(ahead.format(m=m))
            time.sleep(0.15)
        with open(odd / "ahead.log", "a") as fh:
            fh.write("[2021-10-21 15:09:00,000] INFO [KafkaServer id=8] cut in the midd")
        (odd / "replaced.log").write_text(behind.format(m=30))
        looked_at(odd / "replaced.log")
        (odd / ".tmp").write_text(behind.format(m=40) + behind.format(m=41))
        os.replace(odd / ".tmp", odd / "replaced.log")
        time.sleep(1.5)
        (odd / "after.log").write_text(ahead.format(m=50) + ahead.format(m=51))  # written after all of it

    threading.Thread(target=mischief, daemon=True).start()
    _watch(dest, out, sample)
    live = json.loads((out / "report.json").read_text())
    said = [(w["file"] or "").rsplit("/", 1)[-1] + " " + (w["where"] or "") + " " + w["text"]
            for w in live["live"]["warnings"]]

    def saw(name, words):
        return any(s.startswith(name) and words in s for s in said)

    assert saw("core.1234", "binary"), said
    assert saw("ahead.log", "no line break"), said
    assert saw("replaced.log", "replaced by another file"), said
    assert saw("behind.log", "behind"), said
    assert saw("gone.log.2021-10-21-13", "deleted before"), said
    assert all(" line " in s or " byte " in s for s in said
               if s.startswith(("ahead", "behind", "replaced", "gone"))), said
    # and it kept going: the file replaced is read again from its start, a file written after it all is read
    from forensics.live.follow import Session

    session = Session.load(str(out / "live" / "state.pkl"))
    lines = {f.display.rsplit("/", 1)[-1]: f.summary.lines for f in session.files.values() if f.summary}
    assert lines.get("replaced.log#2") == 2 and lines.get("after.log") == 2, lines
    postmortem = _answer(_postmortem(dest, sample))
    assert _answer(live)["incidents"] == postmortem["incidents"]
