"""The ingest command imports the modules it plans with while Spark's JVM starts (commands.common.start_spark):
a thread imports them while the driver only waits for the JVM."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from forensics.commands.common import start_spark


@pytest.mark.spark
def test_the_modules_asked_for_are_imported_by_another_thread_during_the_start(spark, tmp_path, monkeypatch):
    (tmp_path / "kf_preload_probe.py").write_text("import threading\nTHREAD = threading.current_thread().name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "kf_preload_probe", raising=False)
    assert start_spark(None, preload=lambda: __import__("kf_preload_probe")) is spark  # the tests' session, reused
    assert "kf_preload_probe" in sys.modules  # imported by the time the session is handed back
    import kf_preload_probe

    assert kf_preload_probe.THREAD == "kf-preload"
    # a module that cannot be imported does not stop the start (its importer says why, where it is needed)
    assert start_spark(None, preload=lambda: __import__("kf_preload_missing_module")) is spark


def test_the_planning_modules_do_not_import_pyspark():
    """The thread must not import a module the starting driver imports (pyspark): two threads importing one
    cycle of modules can fail with a deadlock error."""
    probe = ("import sys\n"
             "from forensics.ingest import import_planning_modules\n"
             "import_planning_modules()\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[]"
