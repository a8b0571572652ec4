"""Issue 48's measure: the CLI's ``ingest`` against a plain one-process parser and ``grep -cE`` on >= 2 GB of
real-format broker logs, in three shapes holding the same text (``real_corpus.py``: rotated ~40 MB files, one
``server.log``, one ``docker compose logs`` stream of three services), in one invocation.

    .venv/bin/python benchmarks/ingest_shapes_bench.py [--size-gb 2] [--runs 3] [--work DIR] [--reference REPO]
        [--shapes rotated,one_file,compose] [--archive warm-up|none] [--record]

Before timing, the machine is set up as the README's set-up says: ``kafka-forensics warm-up`` runs once (the
driver JVM's class archive, ``forensics.jvm_archive``, which every later command maps), so ``cli`` starts as a
user's does after installing; ``--archive none`` times it without one instead (``KAFKA_FORENSICS_JVM_ARCHIVE=0``
for every ``cli`` and ``ref`` run). The output and the journal's entry say which.

Each run goes through the shapes in turn and, per shape, times ``grep`` (``zcat -f | LC_ALL=C grep -cE``, as
``ingest_bench.py``), ``plain`` (``plain_parser.py``) and ``cli`` (``python -m forensics ingest DIR --out OUT -q``
in a fresh process: the Spark session's start, the parse and the Parquet write of events and quarantine, as a user
waits for it); with ``--reference REPO`` also ``ref``, the same command with the code of a reference checkout
(REPO first on the path, as ``ingest_identity.py``), so a change is read against its baseline in the same run.
Runs interleave the shapes and tools, so a change of the machine's load falls on all of them alike.

Per step: wall, CPU of the step's processes (the JVM included: this process is their subreaper), the CPU the
rest of the machine ran meanwhile (``other``, cores-seconds: the load other users put on the 2 cores), and for
``cli``/``ref`` the peak RSS summed over the process tree (sampled every 0.2 s, as each process's CPU). Ratios are taken per run and
their median printed (goals: rotated ``plain / cli`` >= 0.95; one file and stream ``cli / cli(rotated)`` <= 1.25).
Per shape also the events each extracts, per CPU second and in CPU microseconds each: the two do not extract the
same (plain: Kafka 2.8's wording of 11 kinds; the ingest: every version's lines, the controller's assignment dumps),
so a speed ratio alone says little. The plain parser knows Kafka's own layout only: on the compose stream (each
line behind ``NAME | ``) it finds no event, so its time there is reading and failing to match. With ``--record``
the result is appended to the section of benchmarks/journal/ingest.md.
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
from _common import (REPO, Periodic, _children, become_subreaper, host_cpu, load_avg, med, now_utc, reap,  # noqa: E402
                     record, rss_mb, runs_text, self_cpu, text_bytes_and_lines)

from ingest_bench import grep_run, plain_run  # noqa: E402
from real_corpus import SHAPES, make_real_corpus  # noqa: E402

SECTION = "## ingest in three shapes (issue 48: the CLI's ingest vs plain Python vs grep, real-format logs)"


class TreeSampler(Periodic):
    """Peak of the RSS summed over this process's descendants, and each descendant's own CPU seconds as last
    sampled (a JVM or Python worker that exits unreaped by its parent keeps its share; reaping-based counts
    lost most of it)."""

    interval = 0.2

    def __init__(self):
        super().__init__()
        self.peak_mb = 0.0
        self.cpu: dict[int, float] = {}

    def sample(self) -> None:
        kids = _children()
        total, todo = 0.0, list(kids.get(os.getpid(), ()))
        while todo:
            pid = todo.pop()
            total += rss_mb(pid)
            own = self_cpu(pid)
            if own is not None:
                self.cpu[pid] = own
            todo.extend(kids.get(pid, ()))
        self.peak_mb = max(self.peak_mb, total)


# The README's set-up step (README.md, "Two commands on a fresh machine"), run once before timing.
WARM_UP = ("-m", "forensics", "warm-up")


def set_up(archive: str, code: Path = REPO) -> tuple[dict[str, str], str]:
    """The set-up before timing: ``warm-up`` (the README's step: the driver JVM's class archive, built with the
    code of ``code``) or ``none`` (no archive). The environment every timed ``cli``/``ref`` run gets, and what
    was done, in words for the output and the journal."""
    from forensics import jvm_archive

    if archive == "none":
        return {jvm_archive.OFF_ENV: "0"}, f"set-up: none, no class archive ({jvm_archive.OFF_ENV}=0 for every cli run)"
    env = {k: v for k, v in os.environ.items() if k != jvm_archive.OFF_ENV}
    env["PYTHONPATH"] = str(code) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, *WARM_UP], cwd=str(code), env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"set-up failed: kafka-forensics warm-up exited {proc.returncode}: {proc.stderr[-2000:]}")
    took = time.perf_counter() - t
    path = jvm_archive.in_use()
    if path is None:
        return {}, f"set-up: `kafka-forensics warm-up` (the README's step, {took:.0f} s) built no class archive (this Java)"
    return {}, (f"set-up: `kafka-forensics warm-up` (the README's step) once before timing, {took:.0f} s: every cli run "
                f"maps its class archive {path.name} ({path.stat().st_size / 1e6:,.0f} MB)")


def cli_run(corpus: Path, out: Path, repo: Path | None, extra_env: dict[str, str] | None = None
            ) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, events) of one ``ingest`` command, outputs written to ``out`` then removed."""
    env = {**os.environ, **(extra_env or {})}
    # The checkout first on the path of the command and of Spark's Python workers (they inherit it).
    code = repo if repo is not None else REPO
    env["PYTHONPATH"] = str(code) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "forensics", "ingest", str(corpus), "--out", str(out), "-q"]
    t0 = time.perf_counter()
    with TreeSampler() as tree:
        proc = subprocess.run(cmd, cwd=str(code), env=env,
                              capture_output=True, text=True)
    wall = time.perf_counter() - t0
    reap()  # the JVM it leaves exits on its own
    if proc.returncode != 0:
        raise SystemExit(f"ingest failed ({repo or 'this checkout'}) on {corpus}: {proc.stderr[-3000:]}")
    events = json.loads((out / "ingest_summary.json").read_text())["totals"]["events"]
    shutil.rmtree(out, ignore_errors=True)
    return wall, sum(tree.cpu.values()), tree.peak_mb, events


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-gb", type=float, default=2.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--work", help="folder for the corpora (kept; reused when it holds the same corpus)")
    ap.add_argument("--reference", help="a checkout of the reference commit, run as 'ref' beside 'cli'")
    ap.add_argument("--archive", choices=("warm-up", "none"), default="warm-up",
                    help="set-up before timing: the README's `warm-up` (default), or no class archive")
    ap.add_argument("--record", action="store_true", help="append the result to benchmarks/journal/ingest.md")
    args = ap.parse_args()
    shapes = args.shapes.split(",")
    become_subreaper()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="kf-shapes-"))
    ref = Path(args.reference).resolve() if args.reference else None
    tools = ("grep", "plain", "cli") + (("ref",) if ref else ())
    try:
        corpora, mb = {}, {}
        for shape in shapes:
            corpora[shape] = work / f"real-{args.size_gb:g}gb-{shape}"
            info = make_real_corpus(corpora[shape], args.size_gb, shape=shape)
            nbytes, nlines = text_bytes_and_lines(corpora[shape])
            mb[shape] = nbytes / 1e6
            print(f"{shape}: {info['files']} files ({info['gz_files']} gzipped), {mb[shape]:,.0f} MB of text "
                  f"({info['disk_bytes'] / 1e6:,.0f} MB on disk), {nlines:,} lines", flush=True)
        print(f"corpus: {info['command']}", flush=True)
        cli_env, setup_text = set_up(args.archive)
        print(setup_text, flush=True)
        # rows[shape][tool] = [(wall, cpu, other, peak_mb)] per run
        rows = {s: {t: [] for t in tools} for s in shapes}
        events: dict[str, dict[str, int]] = {s: {} for s in shapes}  # events each tool extracts (not grep)
        loads = [load_avg()]
        for i in range(args.runs):
            for shape in shapes:
                for tool in tools:
                    h0 = host_cpu()[0]
                    if tool == "grep":
                        _, wall, cpu = grep_run(corpora[shape])
                        peak = 0.0
                    elif tool == "plain":
                        counts, wall, cpu = plain_run(corpora[shape])
                        peak = 0.0
                        events[shape][tool] = sum(counts.values())
                    else:
                        wall, cpu, peak, events[shape][tool] = cli_run(corpora[shape], work / "out",
                                                                       ref if tool == "ref" else None, cli_env)
                    other = max(0.0, host_cpu()[0] - h0 - cpu)
                    rows[shape][tool].append((wall, cpu, other, peak))
                    print(f"run {i + 1} {shape:8s} {tool:5s}: {wall:6.1f}s wall ({mb[shape] / wall:6.1f} MB/s), "
                          f"{cpu:6.1f} CPU s, others {other / wall:.2f} cores"
                          + (f", peak RSS {peak:,.0f} MB" if peak else "") + f"; load {load_avg():.1f}", flush=True)
            loads.append(load_avg())

        def ratio(a_shape, a_tool, b_shape, b_tool) -> list[float]:
            return [a[0] / b[0] for a, b in zip(rows[a_shape][a_tool], rows[b_shape][b_tool])]

        lines = []
        for shape in shapes:
            for tool in tools:
                r = rows[shape][tool]
                w = med([x[0] for x in r])
                lines.append(f"{shape} {tool}: median {w:.1f}s wall ({runs_text([x[0] for x in r])}) = "
                             f"{mb[shape] / w:.1f} MB/s; {med([x[1] for x in r]):.1f} CPU s; others' load "
                             f"{med([x[2] / x[0] for x in r]):.2f} cores"
                             + (f"; peak RSS {med([x[3] for x in r]):,.0f} MB" if tool in ("cli", "ref") else ""))
        goals = []
        if "rotated" in shapes:
            r = ratio("rotated", "plain", "rotated", "cli")
            goals.append(f"rotated: cli at {med(r):.2f}x plain's speed ({runs_text(r, '{:.2f}')}; goal >= 0.95: "
                         f"{'met' if med(r) >= 0.95 else 'missed'}); cli takes "
                         f"{med(ratio('rotated', 'cli', 'rotated', 'grep')):.1f}x grep's time")
            for shape in shapes:
                if shape != "rotated":
                    r = ratio(shape, "cli", "rotated", "cli")
                    goals.append(f"{shape}: cli takes {med(r):.2f}x the rotated files' time ({runs_text(r, '{:.2f}')}; "
                                 f"goal <= 1.25: {'met' if med(r) <= 1.25 else 'missed'}); {med(ratio(shape, 'plain', shape, 'cli')):.2f}x plain's speed")
        for shape in shapes:  # what the load does not change much: CPU per byte, the cores cli would need to tie
            c = [a[1] / b[1] for a, b in zip(rows[shape]["cli"], rows[shape]["plain"])]
            goals.append(f"{shape}: cli spends {med(c):.2f}x plain's CPU seconds ({runs_text(c, '{:.2f}')}): it ties "
                         f"plain's wall time only on {med(c):.2f} free cores, start and write included")
        # The two do not extract the same: plain's regexes (Kafka 2.8's lines of 11 kinds) find a small part of
        # what the ingest reads (every version's lines, the controller's assignment dumps): per event, too.
        for shape in shapes:
            per = []
            for tool in ("plain", "cli"):
                n, c = events[shape].get(tool, 0), med([x[1] for x in rows[shape][tool]])
                per.append(f"{tool} {n:,} events, {n / c:,.0f} per CPU s"
                           + (f" ({1e6 * c / n:,.1f} CPU us each)" if n else ""))
            goals.append(f"{shape}: " + "; ".join(per))
        if ref:
            for shape in shapes:
                r = ratio(shape, "ref", shape, "cli")
                goals.append(f"{shape}: cli {med(r):.2f}x as fast as the reference ({runs_text(r, '{:.2f}')})")
        print("\n".join(lines + goals))
        print(f"load average at start and after each run: {runs_text(loads)}")
        print(setup_text)
        if args.record:
            cmd = (f"`.venv/bin/python benchmarks/ingest_shapes_bench.py --size-gb {args.size_gb:g} --runs {args.runs}"
                   + (" --reference REF" if ref else "") + (" --archive none" if args.archive == "none" else "")
                   + " --record`")
            bullet = (f"- {now_utc()}, {os.cpu_count()} cores, load average {runs_text(loads)} (start, after each run)"
                      + (f"; REF = {ref.name}" if ref else "") + f". Corpus: {info['command']}; "
                      + ", ".join(f"{s} {mb[s]:,.0f} MB" for s in shapes) + f". {setup_text[0].upper()}{setup_text[1:]}.\n"
                      + "".join(f"  - {x}\n" for x in lines + goals) + f"  Command: {cmd}\n")
            record(SECTION, bullet)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
