"""The README as a reader follows it: every page of docs/ is linked from it, and its test commands are the tiers
pyproject.toml defines and .ci/run runs (the default run, the fast loop, the opt-in tier)."""
import re
import shlex
import tomllib

from conftest import FAST, OPT_IN, REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_every_page_of_docs_is_linked_from_the_readme():
    pages = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))
    assert pages and [p for p in pages if p not in README] == []


def test_the_test_commands_are_the_tiers_pyproject_defines_and_ci_runs():
    ini = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    markers = {m.split(":")[0] for m in ini["markers"]}
    assert set(OPT_IN) <= markers and "fast" in markers and "-m" not in shlex.split(ini["addopts"])
    commands = re.findall(r"^\.venv/bin/python -m pytest.*$", README, re.M)
    commands += re.findall(r"`(\.venv/bin/python -m pytest[^`]*)`", README)
    assert ".venv/bin/python -m pytest -q" in commands  # the default run
    assert ".venv/bin/python -m pytest -q -m fast" in commands
    tier = next(c for c in commands if " or " in c)
    assert set(re.findall(r"\w+", tier.rsplit(" -m ", 1)[1])) - {"or"} == set(OPT_IN)
    ci = (REPO / ".ci" / "run").read_text()
    run = [ln.strip() for ln in ci.splitlines() if "pytest" in ln and not ln.lstrip().startswith("#")]
    assert run[0].startswith(".venv/bin/python -m pytest -q") and " -m " not in run[0].replace("python -m pytest", "")
    assert any(set(re.findall(r"\w+", c.rsplit(" -m ", 1)[1])) - {"or"} == set(OPT_IN)
               for c in run[1:] if " -m " in c.replace("python -m pytest", ""))


def test_the_fast_loop_reads_real_evidence_in_every_package():
    # what the README promises of `-m fast`: each package imported by a fast module that reads ../shared's evidence
    evidence = re.compile(r"\b(REAL_LOGS2?|ZK_REAL|real_cluster_events|replayed_cluster)\b")
    covered = set()
    for name in FAST:
        text = (REPO / "tests" / f"{name}.py").read_text(encoding="utf-8")  # a renamed module fails here
        if evidence.search(text):
            covered |= set(re.findall(r"^\s*(?:from|import) (parsers|replay_engine|forensics|dashboards|samplegen)\b",
                                      text, re.M))
    assert covered == {"parsers", "replay_engine", "forensics", "dashboards", "samplegen"}
