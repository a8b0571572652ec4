"""Shared fixtures: where ../shared lives, and one SparkSession (local[2]) for the whole run."""
from __future__ import annotations

import operator
import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KAFKA_FORENSICS_SHARED", REPO.parent / "shared")).resolve()
REAL_LOGS = SHARED / "real_logs"
REAL_LOGS2 = SHARED / "real_logs2"
ZK_REAL = SHARED / "zk_real"
SAMPLES = REPO / "sample_logs"


# Parsed evidence and replays are cached for the whole run: a cluster is read (and replayed) once however many tests
# use it. The events are shared, so each call returns a new list of the same Event objects: a test may reorder or
# filter its list, and must copy an event (dataclasses.replace) before changing it; a changed cached event fails the
# next test that asks for its cluster (``_unchanged``).
_PARSED: dict[tuple[str, str], tuple[tuple, int]] = {}
_REPLAYED: dict[tuple[str, str], object] = {}
_STAMP = operator.attrgetter("event_type", "cluster", "ts", "source_file", "source_pos", "source_sub", "broker_id",
                             "subject_broker", "controller_id", "controller_epoch", "topic", "partition", "leader",
                             "leader_epoch", "zk_version", "from_state", "to_state", "zxid")


def _fingerprint(events: tuple) -> int:
    return hash(tuple(map(_STAMP, events))) ^ hash(tuple(tuple(e.isr) if e.isr else None for e in events))


def _unchanged(key: tuple[str, str], parse) -> list:
    if key not in _PARSED:
        events = tuple(parse())
        _PARSED[key] = events, _fingerprint(events)
    events, stamp = _PARSED[key]
    if _fingerprint(events) != stamp:
        raise AssertionError(f"a test changed the cached events of {key[1]} ({key[0]}): copy an event "
                             "(dataclasses.replace) before changing it")
    return list(events)


def _parse_sample(name: str) -> list:
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    root = SAMPLES / name
    events = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name not in ("README.md", "expected.json"):
            evs, _ = parse_source(p.read_bytes(), SourceContext(path=p.relative_to(root).as_posix(), cluster=name))
            events += evs
    return events


def sample_events(name: str) -> list:
    """Every event of a bundled sample's evidence (its README and expected.json left out), parsed in-process, once
    per run."""
    return _unchanged(("sample_logs", name), lambda: _parse_sample(name))


def real_cluster_events(name: str, folder: str = "real_logs") -> list:
    """Every event of a cluster of ../shared/real_logs (or ``folder``, e.g. "real_logs2"), parsed in-process (raw
    ZooKeeper txns left out), as the replay tests and benchmarks/agreement.py read it; parsed once per run."""
    from forensics.sources import parse_folder_in_process

    return _unchanged((folder, name), lambda: parse_folder_in_process(SHARED / folder, name))


def replayed_cluster(name: str, folder: str = "real_logs"):
    """``replay_cluster`` over ``real_cluster_events(name, folder)``, once per run: every caller gets the same
    ReplayResult, to read, never to change."""
    from replay_engine.api import replay_cluster

    key = (folder, name)
    if key not in _REPLAYED:
        _REPLAYED[key] = replay_cluster(real_cluster_events(name, folder), name)
    return _REPLAYED[key]


# Checks made over every cluster of a shared folder run per cluster; the default run holds them on these clusters of
# ../shared/real_logs (the oldest release, 0.8; 2.8 from logs alone, with the NUL run a crash left; KRaft 4.0; the
# issue excerpts in many layouts) and the rest is the opt-in tier (marker corpus).
DEFAULT_CLUSTERS = frozenset({"JihoChoi__enc-streaming-benchmarks", "AndreasTraut__kafka_2.13-2.8.0",
                              "Ammar777782439__kafka_2.13-4.0.0", "issue_snippets"})


def per_cluster(items, name=lambda x: x, default=DEFAULT_CLUSTERS) -> list:
    """pytest params of ``items`` (cluster names or folders), those not in ``default`` marked corpus."""
    return [pytest.param(x, id=name(x), marks=() if name(x) in default else pytest.mark.corpus) for x in items]


def log4j_us(stamp: str) -> int:
    """A log4j line's '2024-07-18 18:07:54,021' (UTC clock) as epoch microseconds, read apart from the parsers."""
    from datetime import datetime, timedelta, timezone

    t = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=timezone.utc)
    return (t - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)


# Property tests draw the same examples on every run (a red CI must be reproducible, not a draw of luck); set
# HYPOTHESIS_PROFILE=explore to search new examples locally.
try:
    from hypothesis import settings as _hyp_settings

    _hyp_settings.register_profile("ci", derandomize=True, print_blob=True)
    _hyp_settings.register_profile("explore", derandomize=False)
    _hyp_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    pass


# The opt-in tier: tests with these markers run only when -m names the marker (-m "corpus or slow", as .ci/run
# does); the default run, the fast loop (-m fast) and any other selection leave them out.
OPT_IN = ("corpus", "slow")


# The fast loop (pytest -m fast): the default run's tests of these modules, cheap ones that between them take every
# package with real evidence (tests/test_readme.py holds that). A module joins when all its default tests are cheap.
FAST = frozenset({
    "test_apply", "test_architecture", "test_assignment", "test_capture_units", "test_dashboard_figures",
    "test_dashboard_page", "test_dashboard_write_outages", "test_dataloss", "test_docs_events", "test_elections",
    "test_explain_cases", "test_explain_midlife", "test_fact_roles", "test_failed_starts", "test_image",
    "test_inferred_tenure", "test_ingest_spark", "test_judge", "test_kraft_batches", "test_kraft_dump",
    "test_kraft_leaderless_causes", "test_kraft_replay_batches", "test_log4j_layout", "test_readme",
    "test_real_corpus", "test_replay_loop", "test_replay_real_logs", "test_replay_zk_real",
    "test_report_brokers_line", "test_report_replay_check", "test_risk", "test_rules_elections",
    "test_rules_replay", "test_rules_table", "test_samplegen_kafka", "test_samplegen_kraft",
    "test_samplegen_templates", "test_scan_odd_lines", "test_schema", "test_security", "test_shard",
    "test_shard_results", "test_skew", "test_spark_driver_jit", "test_spark_master", "test_spark_memory",
    "test_states", "test_templates_broker", "test_templates_client", "test_templates_controller",
    "test_templates_kraft", "test_templates_replica", "test_templates_state_change", "test_templates_writer",
    "test_textio", "test_topic_deletion_logs", "test_whatif", "test_whatif_table", "test_zk_events",
    "test_zk_holes", "test_zk_offline_selector", "test_zk_snapshot", "test_zk_state", "test_zk_txnlog",
    "test_znode_dump"
})


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(config, items):
    for it in items:
        if it.path.stem in FAST:
            it.add_marker(pytest.mark.fast)
    named = set(re.findall(r"\w+", config.getoption("markexpr") or ""))
    opt_out = [m for m in OPT_IN if m not in named]
    drop = [it for it in items if any(it.get_closest_marker(m) for m in opt_out)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [it for it in items if not any(it.get_closest_marker(m) for m in opt_out)]


def pytest_configure(config):
    if not REAL_LOGS.is_dir():
        raise pytest.UsageError(
            f"the shared evidence folder is missing: {SHARED} (CI keeps it beside the clone; "
            "set KAFKA_FORENSICS_SHARED to point elsewhere)"
        )


@pytest.fixture(scope="session")
def spark():
    os.environ.setdefault("KAFKA_FORENSICS_SHUFFLE_PARTITIONS", "4")
    from forensics.spark import get_spark

    # The tests' JVM compiles with C1 only: their jobs are small and many, and C2's compiler threads took a third of
    # the CPU of the Spark tests (tests/test_placement.py and test_plan_groups.py: 46.5 -> 31.7 CPU s, same results).
    # Only this JVM: the variable is read when it starts, and the CLI runs and clusters some tests start keep theirs.
    saved = os.environ.get("JAVA_TOOL_OPTIONS")
    os.environ["JAVA_TOOL_OPTIONS"] = " ".join(x for x in (saved, "-XX:TieredStopAtLevel=1") if x)
    try:
        session = get_spark("local[2]")
    finally:
        if saved is None:
            del os.environ["JAVA_TOOL_OPTIONS"]
        else:
            os.environ["JAVA_TOOL_OPTIONS"] = saved
    yield session
    session.stop()


@pytest.fixture
def cli(spark, capsys):
    """``kafka-forensics ARGS...`` in this process, on the shared session (a subprocess would start Spark again):
    returns what a user sees, as ``subprocess.run`` would (returncode, stdout, stderr)."""
    from types import SimpleNamespace

    from forensics.cli import main

    def run(*args: str) -> SimpleNamespace:
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run
