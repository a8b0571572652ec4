"""The tailer (``forensics.live.files``) on real files being written: each file read once, in full, through what
log4j and operators do to files (Kafka's log4j.properties rolls ``server.log`` to ``server.log.yyyy-MM-dd-HH``
with DailyRollingFileAppender, which renames the file and opens a new one; the parts are often gzipped later), and
a note with the file and the position for what cannot be read (a line still being written, a file deleted before
its end, a file that shrank, binary data)."""
from __future__ import annotations

import gzip
import os
import shutil

from forensics.live.files import Table, read_range, roots_of


class Reader:
    """What the stream does with the tailer's offsets: reads each file from where it stopped to the new offset."""

    def __init__(self, root, quiet_s=0.5):
        self.t = Table(roots_of([str(root)]), quiet_s=quiet_s)
        self.got: dict[str, bytes] = {}
        self.pos: dict[str, int] = {}
        self.clock = 1000.0

    def poll(self, dt=0.1):
        self.clock += dt
        offsets = self.t.advance(self.clock)
        for lid, (pos, *_) in offsets.items():
            f = self.t.files[lid]
            start = self.pos.get(lid, 0)
            if pos > start:
                self.got[lid] = self.got.get(lid, b"") + read_range(f.path, f.gz, start, pos, f.dev, f.ino, f.head)
            self.pos[lid] = pos
        return offsets

    def by_display(self):
        return {self.t.files[lid].display.rsplit("/", 1)[-1]: data for lid, data in self.got.items()}


def _line(n):
    return f"[2021-08-16 09:00:{n:02d},000] INFO line {n} (kafka.server.KafkaServer)\n"


def _append(p, text):
    with open(p, "a") as fh:
        fh.write(text)


def test_rotation_then_gzip_between_two_looks(tmp_path):
    """Rotated and gzipped before the tailer looked again: the rest of the old file is read from the .gz, and the
    new server.log is a file of its own, cited apart."""
    d = tmp_path / "kafka-broker-1"
    d.mkdir()
    log = d / "server.log"
    _append(log, _line(1) + _line(2) + "[2021-08-16 09:00:03,000] INFO half a li")
    r = Reader(tmp_path)
    r.poll()
    _append(log, "ne (kafka.server.KafkaServer)\n" + _line(4))
    os.rename(log, d / "server.log.2021-08-16-09")
    _append(log, _line(5))
    with open(d / "server.log.2021-08-16-09", "rb") as src, gzip.open(d / "server.log.2021-08-16-09.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(d / "server.log.2021-08-16-09")
    r.poll()
    got = r.by_display()
    assert got["server.log"] == gzip.decompress((d / "server.log.2021-08-16-09.gz").read_bytes())
    assert got["server.log#2"] == log.read_bytes()
    assert r.t.take_notes() == []


def test_gzipped_copy_seen_beside_its_part_is_the_same_file(tmp_path):
    """A rotated part is compressed beside itself and removed after (playback, logrotate): a look between the
    two sees both. The .gz is the part's own continuation, not a new file whose lines would be read again."""
    d = tmp_path / "kafka-broker-1"
    d.mkdir()
    log = d / "server.log"
    _append(log, _line(1) + _line(2))
    r = Reader(tmp_path)
    r.poll()
    part = d / "server.log.2021-08-16-09"
    os.rename(log, part)
    _append(log, _line(5))
    with open(part, "rb") as src, gzip.open(d / "server.log.2021-08-16-09.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    r.poll()  # the part and its .gz side by side
    os.remove(part)
    r.poll()
    r.poll()
    got = r.by_display()
    assert sorted(got) == ["server.log", "server.log#2"], sorted(got)
    assert got["server.log"] == _line(1).encode() + _line(2).encode()
    assert r.t.take_notes() == []


def test_a_line_being_written_waits_for_its_end(tmp_path):
    log = tmp_path / "server.log"
    _append(log, _line(1) + "[2021-08-16 09:00:02,000] INFO cut")
    r = Reader(tmp_path)
    assert list(r.poll().values())[0][0] == len(_line(1))
    _append(log, " here (kafka.server.KafkaServer)\n")
    r.poll()
    assert list(r.got.values())[0] == log.read_bytes()


def test_inode_given_to_a_new_file_is_not_taken_for_the_old_one(tmp_path):
    """A file system gives a deleted file's inode to the next file: a different beginning means a different file,
    read from its start."""
    log = tmp_path / "server.log"
    _append(log, _line(1) + _line(2))
    r = Reader(tmp_path)
    r.poll()
    ino = os.stat(log).st_ino
    os.remove(log)
    other = tmp_path / "other.log"
    _append(other, "[2021-08-16 10:00:00,000] INFO another file (kafka.server.KafkaServer)\n")
    r.poll()
    got = r.by_display()
    assert got["other.log"] == other.read_bytes(), (ino, os.stat(other).st_ino)


def test_what_cannot_be_read_is_noted_with_file_and_position(tmp_path):
    log = tmp_path / "server.log"
    _append(log, _line(1) + _line(2) + _line(3))
    r = Reader(tmp_path)
    r.poll()
    with open(log, "w") as fh:  # written again in place (same inode), with other lines
        fh.write(_line(9))
    (tmp_path / "core.bin").write_bytes(bytes(range(256)) * 64)  # a binary file dropped in the folder
    r.poll()
    notes = r.t.take_notes()
    assert any(n["display"].endswith("server.log") and n["pos"] == 3 * len(_line(1)) and "replaced" in n["text"]
               for n in notes), notes
    assert any(n["display"].endswith("core.bin") and "binary" in n["text"] for n in notes), notes
    r.poll()
    assert r.by_display()["server.log#2"] == _line(9).encode()
    # a rotated part deleted before its end was read: how much was lost, from which byte
    part = tmp_path / "state-change.log.2021-08-16-09"
    _append(part, _line(1))
    r.poll()
    _append(part, _line(2))
    r.t.scan(r.clock + 0.1)  # seen grown, not yet read
    os.remove(part)
    r.poll()
    gone = [n for n in r.t.take_notes() if n["display"].endswith("state-change.log.2021-08-16-09")]
    assert gone and gone[0]["pos"] == len(_line(1)) and "deleted" in gone[0]["text"], gone


def test_zookeeper_log_is_read_to_its_last_written_entry(tmp_path):
    """ZooKeeper's log is preallocated with zeros and written in place: readable up to its last non-zero byte."""
    from conftest import SAMPLES

    data = (SAMPLES / "rf1_broker_kill" / "zookeeper" / "version-2" / "log.100000001").read_bytes()
    end = len(data.rstrip(b"\0"))
    d = tmp_path / "version-2"
    d.mkdir()
    p = d / "log.100000001"
    with open(p, "wb") as fh:
        fh.write(data[:end // 2])
        fh.truncate(len(data))
    r = Reader(tmp_path)
    r.poll()
    with open(p, "r+b") as fh:
        fh.seek(end // 2)
        fh.write(data[end // 2:end])
    r.poll()
    assert list(r.got.values())[0] == data[:end]


def test_zookeeper_log_first_seen_after_its_first_entry_is_the_same_file_as_it_fills(tmp_path):
    """ZooKeeper writes its entries in place into the zeros it preallocated: a log looked at when it held one entry
    has other first bytes once the next are written, and is the same file (read on, not 'replaced' and read again
    from its start)."""
    from conftest import SAMPLES
    from parsers.zookeeper.txnlog import read_txnlog

    data = (SAMPLES / "rf1_broker_kill" / "zookeeper" / "version-2" / "log.100000001").read_bytes()
    log = read_txnlog(data)
    first, end = log.records[1].offset, log.end_offset  # the first entry's end; the last entry's
    d = tmp_path / "version-2"
    d.mkdir()
    p = d / "log.100000001"
    with open(p, "wb") as fh:
        fh.write(data[:first])
        fh.truncate(len(data))
    r = Reader(tmp_path)
    r.poll()
    with open(p, "r+b") as fh:
        fh.seek(first)
        fh.write(data[first:end])
    r.poll()
    assert not r.t.take_notes()
    assert list(r.got.values()) == [data[:end]]


def test_a_line_left_without_its_line_break_is_noted_once_where_it_stops(tmp_path):
    log = tmp_path / "server.log"
    _append(log, _line(1) + "[2021-08-16 09:00:02,000] INFO the broker was killed while writi")
    r = Reader(tmp_path, quiet_s=0.5)
    r.poll()
    r.poll(dt=1.0)
    r.poll(dt=1.0)
    notes = r.t.take_notes()
    assert len(notes) == 1 and notes[0]["pos"] == len(_line(1)) and "no line break" in notes[0]["text"], notes


def test_a_file_replaced_by_another_is_noted(tmp_path):
    log = tmp_path / "server.log"
    _append(log, _line(1) + _line(2))
    r = Reader(tmp_path)
    r.poll()
    new = tmp_path / ".new"
    _append(new, "[2021-08-16 11:00:00,000] INFO someone else's file (kafka.server.KafkaServer)\n")
    os.replace(new, log)
    r.poll()
    notes = r.t.take_notes()
    assert [n["display"].rsplit("/", 1)[-1] for n in notes] == ["server.log"] and "replaced" in notes[0]["text"]
    assert r.by_display()["server.log#2"] == log.read_bytes()


def test_a_file_whose_lines_give_no_event_is_not_taken_for_a_clock_behind():
    """A broker's server.log goes on with lines that give no event (a log segment rolled, say) while another
    file's events are at 10:50: its clock is the time of its latest line, not of its latest event (10:32). Only a
    file whose lines themselves lag is a clock behind."""
    from forensics.live.follow import SKEW_BATCHES, LiveFile, Session
    from parsers.common.accounting import FileSummary
    from parsers.common.context import SourceContext

    s = Session("c")
    us = 1_629_109_800_000_000  # 2021-08-16T10:30:00Z

    def file(lid, event_ts, line_ts):
        name = f"kafka-broker-{lid}/server.log"
        f = LiveFile(lid, name, "text", SourceContext(name, "c"))
        f.last_ts, f.summary = event_ts, FileSummary(path=f.display, kind="broker_log")
        f.summary.see_ts(line_ts)
        s.files[lid] = f
        return f

    quiet_lines = file("1", us + 142_000_000, us + 142_000_000)
    busy = file("2", us + 1_200_000_000, us + 1_200_000_000)
    for k in range(SKEW_BATCHES + 2):
        t = us + 1_200_000_000 + k * 10_000_000
        busy.last_ts, busy.grew = t, True
        busy.summary.see_ts(t)
        quiet_lines.summary.see_ts(t - 1_000_000)  # lines, but no event, a second before the other's
        quiet_lines.grew = True
        s.horizon("c", "now")
    assert not s.skewed and not s.notes
