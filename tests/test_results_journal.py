"""benchmarks/RESULTS.md is a page of one row per goal; the dated runs are in benchmarks/journal/<area>.md, where
every benchmark's ``--record`` appends them (benchmarks/_common.py: record, journal_of)."""
import re
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import _common  # noqa: E402

BENCH = REPO / "benchmarks"


def _sections_recorded() -> dict[str, str]:
    """section title -> the benchmark that records into it (a SECTION constant or a literal passed to record)."""
    out = {}
    for p in sorted(BENCH.glob("*.py")):
        text = p.read_text(encoding="utf-8")
        for title in re.findall(r'^SECTION(?:_\w+)? = "(## [^"]+)"', text, re.M):
            out[title] = p.name
        for title in re.findall(r'record\(\s*"(## [^"]+)"', text):
            out[title] = p.name
    return out


def test_every_benchmark_records_into_its_sections_journal_file():
    # where a section's dated runs are, its benchmark's next run goes (a section never recorded gets its file then)
    recorded = _sections_recorded()
    assert len(recorded) >= 10
    held = {f: f.read_text(encoding="utf-8") for f in _common.JOURNAL.glob("*.md")}
    for title, bench in recorded.items():
        where = [f for f, text in held.items() if "\n" + title + "\n" in text]
        assert where in ([], [_common.journal_of(title)]), (bench, title, where)
    assert sum(any("\n" + t + "\n" in text for text in held.values()) for t in recorded) >= 10


def test_the_page_is_short_and_links_every_journal_file():
    page = (BENCH / "RESULTS.md").read_text(encoding="utf-8")
    assert len(page.splitlines()) <= 250
    assert "\n## " in page and not re.search(r"^- 20\d\d-", page, re.M)  # rows, not dated entries
    for f in sorted(_common.JOURNAL.glob("*.md")):
        assert f"(journal/{f.name})" in page, f.name


def test_record_appends_under_its_section_and_leaves_the_others(tmp_path, monkeypatch):
    monkeypatch.setattr(_common, "JOURNAL", tmp_path)
    path = _common.record("## replay (one core)", "- first\n")
    _common.record("## several clusters (K)", "- other\n")
    _common.record("## replay (one core)", "- second\n")
    assert path == tmp_path / "replay.md"
    text = path.read_text()
    assert text.index("- first") < text.index("- second") < text.index("## several clusters")
    assert _common.record("## a new bench (x)", "- one\n") == tmp_path / "a_new_bench.md"
