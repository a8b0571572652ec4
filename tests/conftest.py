"""Shared fixtures: where ../shared lives, and one SparkSession (local[2]) for the whole run."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KAFKA_FORENSICS_SHARED", REPO.parent / "shared")).resolve()
REAL_LOGS = SHARED / "real_logs"
ZK_REAL = SHARED / "zk_real"
SAMPLES = REPO / "sample_logs"


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
