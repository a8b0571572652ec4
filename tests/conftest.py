"""Shared fixtures: where ../shared lives, and one SparkSession (local[2]) for the whole run."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KAFKA_FORENSICS_SHARED", REPO.parent / "shared")).resolve()
REAL_LOGS = SHARED / "real_logs"
REAL_LOGS2 = SHARED / "real_logs2"
ZK_REAL = SHARED / "zk_real"
SAMPLES = REPO / "sample_logs"


def sample_events(name: str) -> list:
    """Every event of a bundled sample's evidence (its README and expected.json left out), parsed in-process."""
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    root = SAMPLES / name
    events = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name not in ("README.md", "expected.json"):
            evs, _ = parse_source(p.read_bytes(), SourceContext(path=p.relative_to(root).as_posix(), cluster=name))
            events += evs
    return events


def real_cluster_events(name: str, folder: str = "real_logs") -> list:
    """Every event of a cluster of ../shared/real_logs (or ``folder``, e.g. "real_logs2"), parsed in-process (raw
    ZooKeeper txns left out), as the replay tests and benchmarks/agreement.py read it."""
    from forensics.sources import parse_folder_in_process

    return parse_folder_in_process(SHARED / folder, name)


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

    session = get_spark("local[2]")
    yield session
    session.stop()
