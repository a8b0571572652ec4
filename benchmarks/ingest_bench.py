"""Ingest throughput: the Spark pipeline vs a plain one-process Python parser vs ``grep -cE``, on one corpus.

Run from the repo root (one command; the corpus is generated under a temporary folder, then removed):

    .venv/bin/python benchmarks/ingest_bench.py [--corpus synthetic|real] [--size-gb 2] [--days 3] [--runs 3]
        [--master local[2]] [--record]

``--corpus synthetic`` (the default) is samplegen's corpus (97% routine lines, Kafka 2.8's layout);
``--corpus real`` is ``benchmarks/real_corpus.py``'s: every broker log of ../shared/real_logs (all
versions and layouts), repeated to the size asked, in rotated ~40 MB files. Each has its own section
in benchmarks/journal/ingest.md.

Per run, over the same files:
- ``grep``: ``zcat -f FILES | LC_ALL=C grep -cE KEY_PATTERNS``, the cost of merely reading the lines
  (decompressing the gzipped half included);
- ``plain``: ``benchmarks/plain_parser.py``, a straightforward regex-per-line script in one Python
  process (independent of this project's parsers; its event counts are checked against ours);
- ``spark``: ``forensics.ingest.run_ingest`` on ``--master`` (every file parsed, events cached or staged,
  the per-file summaries on the driver), the Spark session started beforehand (its start is timed apart);
  with ``--write`` also ``write_outputs`` (events sorted and written as Parquet, as the ``ingest`` command does).
Prints MB/s (uncompressed text) and lines/s of each, the ratios (goal: Spark >= 2x plain, within 5x
of grep), CPU seconds of each (all processes: JVM and Python workers for Spark), and the medians.
With ``--record`` the result is appended to its section of benchmarks/journal/ (its area's file).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (REPO, _TICK, load_avg, machine, make_corpus, med, now_utc, process_tree, record,  # noqa: E402
                     runs_text, text_bytes_and_lines, tree_cpu)

from plain_parser import KINDS as PLAIN_KINDS  # noqa: E402
from real_corpus import make_real_corpus  # noqa: E402

SECTION = "## ingest (Spark pipeline vs plain Python vs grep)"
SECTION_REAL = "## ingest on real-format logs (Spark pipeline vs plain Python vs grep)"
# The same kinds of lines plain_parser.py extracts, as one extended regular expression.
KEY_ERE = ("Changed partition |state changed to \\(Leader:|failed to change state for partition|Shrinking ISR from"
           "|ISR updated to|ISR for partition .* updated to|starts at leader epoch|Newly added brokers"
           "|Broker failure callback|Registered broker|successfully elected as the controller|Shutting down broker"
           "|Starting controlled shutdown|Starting replica leader election \\(PREFERRED\\)")


def grep_run(corpus: Path) -> tuple[int, float, float]:
    cmd = (f"find {_q(corpus)} -type f -name '*.log*' -print0 | sort -z | xargs -0 zcat -f -- "
           f"| LC_ALL=C grep -cE {_q(KEY_ERE)}")
    c0, t0 = tree_cpu(), time.perf_counter()
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - t0, tree_cpu() - c0
    return int(out.stdout.strip() or 0), wall, cpu


def plain_run(corpus: Path) -> tuple[dict[str, int], float, float]:
    c0, t0 = tree_cpu(), time.perf_counter()
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / "plain_parser.py"), str(corpus)],
                         capture_output=True, text=True, check=True)
    wall, cpu = time.perf_counter() - t0, tree_cpu() - c0
    counts = {}
    for line in out.stdout.splitlines()[1:]:
        k, v = line.split()
        counts[k] = int(v.replace(",", ""))
    return counts, wall, cpu


def cpu_by_process() -> dict[str, float]:
    """CPU seconds of this process tree, split into the driver, the JVM and Spark's Python workers."""
    out = {"driver": 0.0, "jvm": 0.0, "python workers": 0.0}
    for _pid, kind, f in process_tree():
        # the driver's cutime holds finished grep/plain runs: count only its own time
        own = int(f[11]) + int(f[12]) + (0 if kind == "driver" else int(f[13]) + int(f[14]))
        out[kind] += own / _TICK
    return out


def spark_run(spark, corpus: Path, write: bool = False) -> tuple[dict[str, int], float, dict[str, float], dict]:
    from forensics.ingest import release, run_ingest, write_outputs
    from forensics.sources import collect_inputs

    work = Path(tempfile.mkdtemp(prefix="kf-ingest-bench-"))
    try:
        c0, t0 = cpu_by_process(), time.perf_counter()
        inputs = collect_inputs([str(corpus)], work)
        res = run_ingest(spark, inputs, cluster="bench")
        if write:
            write_outputs(res, work / "out")
        wall = time.perf_counter() - t0
        c1 = cpu_by_process()
        totals = res.summary_json["totals"]
        counts = dict(res.summary_json["event_counts"])
        release(res)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return counts, wall, {k: c1[k] - c0[k] for k in c1}, totals


def _q(s) -> str:
    import shlex

    return shlex.quote(str(s))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=("synthetic", "real"), default="synthetic")
    ap.add_argument("--size-gb", type=float, default=2.0, help="uncompressed log text to generate")
    ap.add_argument("--days", type=float, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--work", help="folder for the corpus (kept; reused when it holds the same corpus)")
    ap.add_argument("--write", action="store_true",
                    help="Spark's run includes writing the events, sorted, and the quarantine as Parquet (the ingest command)")
    ap.add_argument("--record", action="store_true", help="append the result to its section of benchmarks/journal/")
    args = ap.parse_args()

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="kf-bench-"))
    real = args.corpus == "real"
    corpus = work / (f"real-{args.size_gb:g}gb" if real else f"corpus-{args.size_gb:g}gb-{args.days:g}d")
    try:
        info = make_real_corpus(corpus, args.size_gb) if real else make_corpus(corpus, args.size_gb, args.days)
        text_bytes, text_lines = text_bytes_and_lines(corpus)
        mb = text_bytes / 1e6
        print(f"corpus: {info['files']} files ({info['gz_files']} gzipped), {mb:,.0f} MB of text "
              f"({info['disk_bytes'] / 1e6:,.0f} MB on disk), {text_lines:,} lines; {info['output']}", flush=True)

        from forensics.jvm_archive import in_use
        from forensics.spark import get_spark

        archive = in_use()
        archive_text = f"driver JVM given the class archive {archive.name} (warm-up)" if archive else "no JVM class archive"
        t0 = time.perf_counter()
        spark = get_spark(args.master)
        spark_start = time.perf_counter() - t0
        print(f"Spark session ({args.master}) started in {spark_start:.1f}s ({archive_text}); {machine()}", flush=True)

        rows = {"grep": [], "plain": [], "spark": []}
        loads = [load_avg()]
        grep_count = plain_counts = spark_counts = spark_totals = None
        spark_cpu_split = []
        for i in range(args.runs):
            grep_count, w, c = grep_run(corpus)
            rows["grep"].append((w, c))
            plain_counts, w, c = plain_run(corpus)
            rows["plain"].append((w, c))
            spark_counts, w, split, spark_totals = spark_run(spark, corpus, args.write)
            rows["spark"].append((w, sum(split.values())))
            spark_cpu_split.append(split)
            loads.append(load_avg())
            print(f"run {i + 1}: " + "; ".join(
                f"{k} {v[-1][0]:.1f}s wall ({mb / v[-1][0]:.1f} MB/s), {v[-1][1]:.1f} CPU s" for k, v in rows.items())
                + "; Spark CPU: " + ", ".join(f"{k} {v:.1f}s" for k, v in split.items())
                + f"; load {loads[-1]:.1f}", flush=True)
        spark.stop()

        # Same events? Every kind the plain parser extracts, against ours.
        kinds = PLAIN_KINDS
        diffs = {k: (plain_counts.get(k, 0), spark_counts.get(k, 0)) for k in kinds
                 if plain_counts.get(k, 0) != spark_counts.get(k, 0)}
        covered = sum(spark_counts.get(k, 0) for k in kinds)
        print(f"event counts: plain and Spark agree on {len(kinds) - len(diffs)}/{len(kinds)} kinds "
              f"({covered:,} of Spark's {sum(spark_counts.values()):,} events are of these kinds)"
              + (f"; differ: {diffs}" if diffs else ""))
        print(f"grep -cE matched {grep_count:,} lines; Spark: {spark_totals['lines']:,} lines, "
              f"{spark_totals['events']:,} events")

        med_wall = {k: med([w for w, _ in v]) for k, v in rows.items()}
        med_cpu = {k: med([c for _, c in v]) for k, v in rows.items()}
        lines = []
        for k in ("grep", "plain", "spark"):
            lines.append(f"{k:5s}: median {med_wall[k]:.1f}s wall ({runs_text([w for w, _ in rows[k]])}) = "
                         f"{mb / med_wall[k]:.1f} MB/s, {text_lines / med_wall[k]:,.0f} lines/s; "
                         f"{med_cpu[k]:.1f} CPU s ({mb / med_cpu[k]:.1f} MB per CPU s)")
        split = {k: med([s[k] for s in spark_cpu_split]) for k in spark_cpu_split[0]}
        r_plain = med_wall["plain"] / med_wall["spark"]
        r_grep = med_wall["spark"] / med_wall["grep"]
        ratios = (f"Spark / plain = {r_plain:.2f}x the throughput (goal >= 2: {'met' if r_plain >= 2 else 'missed'}); "
                  f"Spark takes {r_grep:.1f}x grep's time (goal <= 5: {'met' if r_grep <= 5 else 'missed'}); "
                  f"per CPU second: Spark {med_cpu['plain'] / med_cpu['spark']:.2f}x plain, "
                  f"grep {med_cpu['spark'] / med_cpu['grep']:.1f}x cheaper than Spark")
        # The goals' own terms: one run of a fresh tool, so the Spark session's start counts.
        with_start = med_wall["spark"] + spark_start
        ratios += (f"; Spark session start included ({spark_start:.1f}s + {med_wall['spark']:.1f}s = {with_start:.1f}s, "
                   f"{mb / with_start:.1f} MB/s): {med_wall['plain'] / with_start:.2f}x plain's throughput, "
                   f"{with_start / med_wall['grep']:.1f}x grep's time")
        print("\n".join(lines))
        print("Spark CPU split (median): " + ", ".join(f"{k} {v:.1f}s" for k, v in split.items()))
        print(ratios)
        print(f"load average during the runs: {runs_text(loads)}")
        if args.record:
            corpus_arg = "--corpus real " if real else ""
            days_arg = "" if real else f"--days {args.days:g} "
            off = "KAFKA_FORENSICS_JVM_ARCHIVE=0 " if os.environ.get("KAFKA_FORENSICS_JVM_ARCHIVE") == "0" else ""
            cmd = (f"`{off}.venv/bin/python benchmarks/ingest_bench.py {corpus_arg}--size-gb {args.size_gb:g} {days_arg}"
                   f"--runs {args.runs} --master {args.master}{' --write' if args.write else ''} --record`")
            bullet = (f"- {now_utc()}, {os.cpu_count()} cores, load average {runs_text(loads)} (start, after each run). "
                      f"Corpus: {info['files']} files ({info['gz_files']} gzipped), {mb:,.0f} MB of text "
                      f"({info['disk_bytes'] / 1e6:,.0f} MB on disk), {text_lines:,} lines "
                      f"(`{info['command']}`). Spark session start {spark_start:.1f}s "
                      f"({archive_text}; not in the figures)"
                      + ("; Spark's runs include the sorted Parquet write of events and quarantine" if args.write else "")
                      + ".\n"
                      + "".join(f"  - {x}\n" for x in lines)
                      + "  - Spark CPU split (median): " + ", ".join(f"{k} {v:.1f}s" for k, v in split.items()) + "\n"
                      + f"  - {ratios}\n"
                      + f"  - event counts: plain and Spark agree on {len(kinds) - len(diffs)}/{len(kinds)} kinds "
                        f"({covered:,} of Spark's {sum(spark_counts.values()):,} events)"
                      + (f"; differ: {diffs}" if diffs else "") + "\n"
                      + f"  Command: {cmd}\n")
            record(SECTION_REAL if real else SECTION, bullet)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
