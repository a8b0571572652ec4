"""``postmortem`` on the seed sample (``sample_logs/rf1_broker_kill``) end to end, and how much of it is Spark.

Run from the repo root (one command):

    .venv/bin/python benchmarks/postmortem_bench.py [--runs 5] [--sample sample_logs/rf1_broker_kill] [--record]

Measured, ``--runs`` times each, every one in a fresh process:
- the command as a user runs it: ``.venv/bin/kafka-forensics postmortem SAMPLE --out TMP -q`` (wall and
  CPU seconds of the whole process tree, Spark start included): the baseline of the ratios below;
- Spark start-up alone: a process that imports ``forensics.spark`` and calls ``get_spark()`` (Python start
  and pyspark import included), then stops;
- the same postmortem in one process with each phase timed (Python imports, Spark session, ingest,
  collecting the events, replay, report, files written), run twice over: the second run reuses the
  first's Spark session, which is what a reused session (a notebook, a service, several postmortems in
  one process) saves.
With ``--record`` the result is appended to its section of benchmarks/journal/ (its area's file).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, become_subreaper, load_avg, med, now_utc, reap, record, runs_text, tree_cpu  # noqa: E402

SECTION = "## postmortem (seed sample end to end, Spark start-up)"
PHASES = ("imports", "spark_start", "ingest", "collect_events", "replay", "report", "write")


def phases(sample: str, repeats: int) -> list[dict]:
    """In this fresh process: the postmortem command ``repeats`` times, each phase timed."""
    t_imports = time.perf_counter()
    import forensics.commands.common as common
    import forensics.pipeline as pipeline
    import forensics.report.build as build
    import replay_engine.api as api
    from forensics.app import app
    from forensics.cli import _load_commands

    _load_commands()
    imports_s = time.perf_counter() - t_imports
    cur: dict[str, float] = {}

    def wrap(mod, name, phase):
        f = getattr(mod, name)

        def g(*a, **k):
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                cur[phase] = cur.get(phase, 0.0) + time.perf_counter() - t
        setattr(mod, name, g)

    wrap(common, "start_spark", "spark_start")
    wrap(pipeline, "run_ingest", "ingest")
    wrap(pipeline, "collect_events", "collect_events")
    wrap(api, "replay", "replay")
    wrap(build, "build_report", "report")
    wrap(pipeline, "write_timeline", "write")
    out = []
    for i in range(repeats):
        cur.clear()
        tmp = Path(tempfile.mkdtemp(prefix="kf-pm-bench-"))
        try:
            t = time.perf_counter()
            rv = app(args=["postmortem", sample, "--out", str(tmp), "-q", "--format", "json"], standalone_mode=False,
                     prog_name="kafka-forensics")
            total = time.perf_counter() - t
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        row = {"total_s": total, "exit": rv, **cur}
        if i == 0:
            row["imports"] = imports_s
        out.append(row)
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_phases":
        sys.stdout = sys.stderr  # the report goes to stderr; the JSON line below is the answer
        rows = phases(sys.argv[2], int(sys.argv[3]))
        sys.stdout = sys.__stdout__
        print(json.dumps(rows))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "_spark_start":
        t = time.perf_counter()
        from forensics.spark import get_spark

        spark = get_spark()
        print(json.dumps({"start_s": time.perf_counter() - t}))
        spark.stop()
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", default="sample_logs/rf1_broker_kill")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    exe = Path(sys.executable).with_name("kafka-forensics")
    become_subreaper()
    loads = [load_avg()]

    from forensics.jvm_archive import OFF_ENV, in_use

    archive = in_use()
    # With warm-up's class archive in place, each command and start-up also runs without it (alternating),
    # the baseline of what the archive saves, measured in the same session.
    modes = ("archive", "no archive") if archive else ("no archive",)
    env_of = {"archive": dict(os.environ), "no archive": {**os.environ, OFF_ENV: "0"}}
    cli_wall = {m: [] for m in modes}
    cli_cpu = {m: [] for m in modes}
    for _ in range(args.runs):
        for m in modes:
            tmp = Path(tempfile.mkdtemp(prefix="kf-pm-bench-"))
            try:
                c, t = tree_cpu(), time.perf_counter()
                r = subprocess.run([str(exe), "postmortem", args.sample, "--out", str(tmp), "-q"], cwd=REPO,
                                   capture_output=True, text=True, env=env_of[m])
                cli_wall[m].append(time.perf_counter() - t)
                reap()  # the JVM it started exits after it: its CPU counts too
                cli_cpu[m].append(tree_cpu() - c)
                if r.returncode not in (0, 1):
                    raise SystemExit(f"postmortem failed ({r.returncode}): {r.stderr[-2000:]}")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    loads.append(load_avg())
    for m in modes:
        print(f"postmortem CLI ({m}): median {med(cli_wall[m]):.1f}s wall ({runs_text(cli_wall[m])}), "
              f"{med(cli_cpu[m]):.1f} CPU s", flush=True)

    starts = {m: [] for m in modes}
    for _ in range(args.runs):
        for m in modes:
            r = subprocess.run([sys.executable, __file__, "_spark_start"], cwd=REPO, capture_output=True, text=True,
                               env=env_of[m])
            starts[m].append(json.loads(r.stdout.strip().splitlines()[-1])["start_s"])
    loads.append(load_avg())
    for m in modes:
        print(f"Spark start-up alone ({m}): median {med(starts[m]):.1f}s ({runs_text(starts[m])})", flush=True)

    cold, warm = [], []
    for _ in range(args.runs):
        r = subprocess.run([sys.executable, __file__, "_phases", args.sample, "2"], cwd=REPO, capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise SystemExit(r.stderr[-3000:])
        rows = json.loads(r.stdout.strip().splitlines()[-1])
        cold.append(rows[0])
        warm.append(rows[1])
    loads.append(load_avg())

    def med_of(rows, k):
        return med([r.get(k, 0.0) for r in rows])

    m = modes[0]
    total = med(cli_wall[m])
    names = {"imports": "Python imports", "spark_start": "Spark session start", "ingest": "ingest (Spark jobs)",
             "collect_events": "events to the driver (Spark job)", "replay": "replay", "report": "report built",
             "write": "timeline Parquet"}
    parts = [f"{names[p]} {med_of(cold, p):.2f}s" for p in PHASES if med_of(cold, p) > 0]
    cold_total, warm_total = med_of(cold, "total_s"), med_of(warm, "total_s")
    label = f" with warm-up's JVM class archive ({archive.name})" if archive else " (no JVM class archive)"
    lines = [
        f"`kafka-forensics postmortem {args.sample} --out DIR`{label} (a fresh process, Spark start included): "
        f"median **{total:.1f}s** wall ({runs_text(cli_wall[m])}), {med(cli_cpu[m]):.1f} CPU s (all processes)",
        f"Spark start-up alone (Python start, pyspark import, JVM, SparkSession): median {med(starts[m]):.1f}s "
        f"({runs_text(starts[m])}) = {med(starts[m]) / total:.0%} of the command",
    ]
    if archive:
        base = med(cli_wall["no archive"])
        lines.append(
            f"the same, alternating, without the archive ({OFF_ENV}=0): command median {base:.1f}s "
            f"({runs_text(cli_wall['no archive'])}), {med(cli_cpu['no archive']):.1f} CPU s; Spark start-up "
            f"{med(starts['no archive']):.1f}s ({runs_text(starts['no archive'])}): the archive makes the command "
            f"**{base / total:.2f}x** as fast ({base - total:.1f}s saved) and start-up {med(starts['no archive']) - med(starts[m]):.1f}s shorter")
    lines += [
        f"in one process, by phase (median): {'; '.join(parts)}; the command itself {cold_total:.1f}s after imports",
        f"the same postmortem again in that process, Spark session reused: median **{warm_total:.1f}s** "
        f"({runs_text([r['total_s'] for r in warm])}; ingest {med_of(warm, 'ingest'):.2f}s, events "
        f"{med_of(warm, 'collect_events'):.2f}s, replay {med_of(warm, 'replay'):.2f}s) = "
        f"{warm_total / total:.2f}x the command's time",
    ]
    print("\n".join(lines))
    print(f"load average: {runs_text(loads)}")
    if args.record:
        cmd = f"`.venv/bin/python benchmarks/postmortem_bench.py --runs {args.runs} --sample {args.sample} --record`"
        record(SECTION, f"- {now_utc()}, {os.cpu_count()} cores, load average {runs_text(loads)} (start, after each "
                        f"step); {args.runs} runs of each.\n" + "".join(f"  - {x}\n" for x in lines)
               + f"  Command: {cmd}\n")


if __name__ == "__main__":
    main()
