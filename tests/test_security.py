"""Hostile evidence: log text that is markup or terminal control, archives that reach outside
their folder or expand without end. Truth: the strings we put in must come out as text only,
and nothing may be written outside the extraction folder."""
from __future__ import annotations

import gzip
import html
import io
import re
import tarfile
import zipfile

import pytest

from conftest import SAMPLES
from dashboards.page import report_page
from forensics.report.build import build_report
from forensics.report.render import render_html, render_markdown, render_text
from forensics.sources import collect_inputs
from parsers.common.context import SourceContext
from parsers.dispatch import parse_source
from forensics.sources import broker_hint_from_path
from replay_engine.api import replay

# A topic name no broker accepts, but a forged or damaged log can hold: markup, a Markdown
# link, and an ANSI sequence that clears the terminal.
EVIL_TOPIC = "<script>alert(1)</script>[x](javascript:alert(4))\x1b[2J"
EVIL_DIR = "kafka-broker-1<img src=x onerror=alert(2)>"
EVIL_CLUSTER = "<b>c</b>"


@pytest.fixture(scope="module")
def evil():
    """The unclean_election sample's broker logs with topic `ledger` renamed to EVIL_TOPIC."""
    root = SAMPLES / "unclean_election"
    events = []
    for p in sorted(root.glob("kafka-broker-*/*")):
        rel = p.relative_to(root.parent).as_posix().replace("kafka-broker-1", EVIL_DIR)
        data = p.read_bytes()
        data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        evs, s = parse_source(data.replace(b"ledger", EVIL_TOPIC.encode()),
                              SourceContext(rel, EVIL_CLUSTER, broker_hint_from_path(rel)))
        assert s.quarantined == 0
        events += evs
    events.sort(key=lambda e: (e.ts or 0, e.source_file, e.source_pos, e.source_sub))
    results = replay(events)
    report = build_report(results, {"input_problems": [f"{EVIL_DIR}/x.tgz: 1 member(s) refused: ../{EVIL_TOPIC}"]},
                          events, sources=[EVIL_DIR])
    # the hostile strings reached the report: in an incident, its evidence, a file name, a finding
    (inc,) = [i for i in report["incidents"] if i["topic"] == EVIL_TOPIC]
    assert any(EVIL_DIR in e["source_file"] for e in inc["evidence"])
    assert any(EVIL_TOPIC in e["text"] for e in inc["evidence"])
    return report, results


HTML_BAD = ("<script>alert", "<img src=x", "<b>c</b>", "\x1b")


def test_html_renderer_shows_hostile_strings_as_text(evil):
    report, _ = evil
    page = render_html(report)
    for bad in HTML_BAD:
        assert bad not in page, bad
    assert html.escape(EVIL_TOPIC.replace("\x1b", "\\x1b")) in page
    assert html.escape(EVIL_DIR) in page


def test_dashboard_report_page_shows_hostile_strings_as_text(evil):
    report, results = evil
    page = report_page(report, results)
    assert page.lower().count("</script") == 3  # plotly.js, the data island, the page script
    for bad in HTML_BAD[:3]:
        assert bad not in page, bad
    assert html.escape(EVIL_DIR) in page


def test_markdown_renderer_has_no_markup_links_or_terminal_control(evil):
    report, _ = evil
    md = render_markdown(report)
    for bad in HTML_BAD:
        assert bad not in md, bad
    assert re.search(r"(?<!\\)\]\(javascript:", md) is None  # every ']' of the log is escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\[x\\](javascript:alert(4))\\x1b\\[2J" in md
    # no log text can break a table row: each evidence row has its 3 cells and no more
    rows = [ln for ln in md.splitlines() if ln.startswith("| 2021-")]
    assert rows and all(len(re.split(r"(?<!\\)\|", ln)) == 5 for ln in rows)


def test_terminal_renderer_shows_control_characters_escaped(evil):
    report, _ = evil
    text = render_text(report)
    assert re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text) is None
    assert EVIL_TOPIC.replace("\x1b", "\\x1b") in text  # the name itself is all there, as text


# ---------------------------------------------------------------- archives

LOG = b"[2021-01-01 00:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"


def _tar(path, members):
    with tarfile.open(path, "w:gz") as tf:
        for m in members:
            tf.addfile(*m)


def _file(name, data=LOG):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, io.BytesIO(data)


def _link(name, target, kind=tarfile.SYMTYPE):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return (info,)


def test_tarball_with_traversal_and_links_extracts_only_what_stays_inside(tmp_path):
    arc = tmp_path / "evidence.tgz"
    _tar(arc, [
        _file("broker-1/server.log"),
        _file("../escaped.log"),
        _file("broker-1/../../escaped2.log"),
        _file("/tmp/absolute.log"),
        _link("broker-1/passwd.log", "/etc/passwd"),
        _link("broker-1/up.log", "../../../escaped.log"),
        _link("broker-1/hard.log", "../outside", tarfile.LNKTYPE),
    ])
    work = tmp_path / "work"
    inputs = collect_inputs([str(arc)], work)
    assert [f.display for f in inputs.files] == [f"{arc}!/broker-1/server.log"]
    (msg,) = inputs.problems
    assert msg.startswith(f"{arc}: 6 member(s) refused (absolute path, '..', link or special file): ")
    for name in ("../escaped.log", "broker-1/../../escaped2.log", "/tmp/absolute.log",
                 "broker-1/passwd.log -> /etc/passwd", "broker-1/up.log -> ../../../escaped.log"):
        assert name in msg
    assert "and 1 more" in msg
    # nothing landed anywhere but the extraction folder; no link was made at all
    written = {p for p in tmp_path.rglob("*")} - {arc, work}
    assert all(work in p.parents for p in written)
    assert not [p for p in work.rglob("*") if p.is_symlink()]
    assert sorted(p.name for p in work.rglob("*") if p.is_file()) == ["server.log"]


def test_zip_with_traversal_and_a_symlink_member(tmp_path):
    arc = tmp_path / "evidence.zip"
    with zipfile.ZipFile(arc, "w") as zf:
        zf.writestr("broker-1/server.log", LOG)
        zf.writestr("../../zip-escaped.log", LOG)
        link = zipfile.ZipInfo("broker-1/link.log")
        link.external_attr = (0o120777 << 16)  # a symlink, as Info-ZIP stores one
        zf.writestr(link, "/etc/passwd")
    inputs = collect_inputs([str(arc)], tmp_path / "work")
    assert [f.display for f in inputs.files] == [f"{arc}!/broker-1/server.log"]
    assert inputs.problems == [f"{arc}: 2 member(s) refused (absolute path, '..', link or special file): "
                               "../../zip-escaped.log, broker-1/link.log"]
    assert not list(tmp_path.parent.glob("zip-escaped.log")) and not list(tmp_path.glob("zip-escaped.log"))


def test_decompression_bomb_stops_at_the_cap_and_says_where(tmp_path):
    arc = tmp_path / "bomb.tar.gz"
    zeros = b"\0" * (30 << 20)  # 30 MB of zeros: 30 kB compressed
    _tar(arc, [_file("a/server.log"), _file("a/zeros.log", zeros), _file("z/after.log")])
    assert arc.stat().st_size < 100_000
    work = tmp_path / "work"
    inputs = collect_inputs([str(arc)], work, extract_limit=5 << 20)
    assert inputs.problems == [f"{arc}: extraction stopped at a/zeros.log: archive expands beyond {5 << 20} bytes "
                               "(decompression bomb guard; set KAFKA_FORENSICS_MAX_EXTRACT_BYTES to raise it)"]
    assert sum(p.stat().st_size for p in work.rglob("*") if p.is_file()) <= 5 << 20
    assert not list(work.rglob("after.log"))  # nothing after the cap
    assert f"{arc}!/a/server.log" in [f.display for f in inputs.files]
