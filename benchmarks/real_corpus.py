"""The real-format ingest corpus: every broker log of ``../shared/real_logs`` and ``../shared/real_logs2``
(all versions, 0.8 to 4.x, ZooKeeper and KRaft mode), each cluster's joined in manifest order, repeated to
the size asked, in one of three shapes holding the same log text:

- ``rotated``: one folder per cluster, its text cut into ``server.log.NNNN`` files of about ``file_mb`` MB,
  every other one gzipped (as logrotate leaves some of a logs folder compressed);
- ``one_file``: the rotated files' text, in the same order, as one plain ``server.log``;
- ``compose``: the same text as one ``docker compose logs`` stream of three services (``kafka-1`` ..
  ``kafka-3``): the text cut in three at entry starts, each third a service, interleaved a few lines at a
  time (seeded), every line behind its padded ``NAME  | `` prefix, Compose's "Attaching to" line first.

The broker logs are the MANIFEST.tsv rows whose file is a server, controller or state-change log (the
rotated ones included), plus, in real_logs, the excerpts of ``issue_snippets/`` (INDEX.tsv); binary files,
checkpoints and metadata segments are not logs and stay out. Text is cut only before a line that starts
with a log header, so no multi-line entry is split across two files. A corpus is rebuilt only when its
stamp (``.bench-corpus.json``) records other arguments.

    python benchmarks/real_corpus.py OUT --size-gb 2 --shape rotated|one_file|compose
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import random
import re
import shutil
import time
from pathlib import Path

from _common import REPO

SHARED = Path(os.environ.get("KAFKA_FORENSICS_SHARED", REPO.parent / "shared")).resolve()  # as tests/conftest.py
REAL_LOGS = SHARED / "real_logs"
ROOTS = (SHARED / "real_logs", SHARED / "real_logs2")
SHAPES = ("rotated", "one_file", "compose")
SERVICES = ("kafka-1", "kafka-2", "kafka-3")
# Kafka's own log4j files and their rotations (``server.log.2017-01-19-16``); one cluster spelled it "stage-change".
_BROKER_LOG = re.compile(r"(^|/)(server|controller|state-change|stage-change)\.log(\.[\w-]+)?$")
# A line starting with a header of one of the layouts found in the corpus ([yyyy-MM-dd ..., yyyy-MM-dd ..., yyyy/MM/dd ...).
_ENTRY_START = re.compile(rb"\n(?=\[?\d{4}[-/]\d\d[-/]\d\d[ T]\d\d:\d\d)")


def broker_log_paths(root: Path = REAL_LOGS) -> list[Path]:
    """A corpus folder's broker logs, in manifest order (then the issue excerpts, in index order, if any)."""
    out = []
    with open(root / "MANIFEST.tsv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if not _BROKER_LOG.search(row["original_path"]):
                continue
            base = root / row["dir"] / row["original_path"]
            path = base if base.exists() else base.with_name(base.name + ".gz")
            if not path.exists():
                raise FileNotFoundError(f"MANIFEST.tsv lists {row['dir']}/{row['original_path']}, not found")
            out.append(path)
    index = root / "issue_snippets" / "INDEX.tsv"
    if index.exists():
        with open(index, newline="", encoding="utf-8") as fh:
            out += [root / "issue_snippets" / row["file"] for row in csv.DictReader(fh, delimiter="\t")]
    return out


def _text(path: Path) -> bytes:
    data = path.read_bytes()
    data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return data if not data or data.endswith((b"\n", b"\r")) else data + b"\n"


def cluster_texts(roots=ROOTS) -> tuple[dict[str, bytes], int]:
    """(folder/cluster -> its broker logs joined in manifest order, number of source logs)."""
    streams: dict[str, list[Path]] = {}
    n = 0
    for root in roots:
        for p in broker_log_paths(root):
            streams.setdefault(f"{root.name}/{p.relative_to(root).parts[0]}", []).append(p)
            n += 1
    return {c: b"".join(_text(p) for p in ps) for c, ps in streams.items()}, n


def rotated_pieces(texts: dict[str, bytes], size_gb: float, file_mb: float):
    """(cluster, piece) in corpus order: each cluster's text repeated to its share of ``size_gb`` and cut at
    entry starts into pieces of about ``file_mb`` MB."""
    total = sum(map(len, texts.values()))
    scale, cut = size_gb * 1e9 / total, int(file_mb * 1e6)
    for cluster, one in sorted(texts.items()):
        target, written, buf = int(len(one) * scale), 0, bytearray()
        while written < target:
            take = min(len(one), target - written)
            if take < len(one):  # the last, partial repetition also ends where an entry starts
                m = _ENTRY_START.search(one, take)
                take = m.end() if m else len(one)
            buf += one[:take]
            written += take
            while len(buf) >= cut:
                m = _ENTRY_START.search(buf, cut)
                if m is None:
                    break
                yield cluster, bytes(buf[:m.end()])
                del buf[:m.end()]
        if buf:
            yield cluster, bytes(buf)


def _write_rotated(out: Path, pieces) -> tuple[list[Path], int]:
    files, n_gz, per = [], 0, {}
    for cluster, piece in pieces:
        folder = out / cluster.replace("/", "__")
        folder.mkdir(parents=True, exist_ok=True)
        per[cluster] = per.get(cluster, 0) + 1
        # server.log.0001 is the oldest rotation, as a date suffix sorts.
        path = folder / f"server.log.{per[cluster]:04d}"
        if len(files) % 2 == 0:
            path = path.with_name(path.name + ".gz")
            path.write_bytes(gzip.compress(piece, compresslevel=6, mtime=0))
            n_gz += 1
        else:
            path.write_bytes(piece)
        files.append(path)
    return files, n_gz


def _write_one_file(out: Path, pieces) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "server.log"
    with open(path, "wb") as fh:
        for _, piece in pieces:
            fh.write(piece)
    return [path]


def _write_compose(out: Path, pieces, size_gb: float) -> list[Path]:
    """The text cut in three at entry starts (a service each), interleaved 1-20 lines at a time."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "compose.log"
    third = size_gb * 1e9 / 3
    tmp = [out / f".{name}.txt" for name in SERVICES]
    fhs = [open(p, "wb") for p in tmp]
    k = done = 0
    for _, piece in pieces:
        fhs[k].write(piece)
        done += len(piece)
        if k < 2 and done >= third * (k + 1):
            k += 1
    for fh in fhs:
        fh.close()
    width = max(map(len, SERVICES))
    prefixes = [f"{name.ljust(width)} | ".encode() for name in SERVICES]
    rnd = random.Random(16)
    ins = [open(p, "rb") for p in tmp]
    live = [0, 1, 2]
    with open(path, "wb") as fh:
        fh.write(f"Attaching to {', '.join(SERVICES)}\n".encode())
        while live:
            k = live[rnd.randrange(len(live))]
            block = []
            for _ in range(rnd.randint(1, 20)):
                line = ins[k].readline()
                if not line:
                    live.remove(k)
                    break
                block.append(prefixes[k] + line)
            fh.write(b"".join(block))
    for f, p in zip(ins, tmp):
        f.close()
        p.unlink()
    return [path]


def make_real_corpus(out: Path, size_gb: float, file_mb: float = 40, shape: str = "rotated") -> dict:
    """Build (or reuse) the corpus of ``shape`` under ``out``; returns its description."""
    args = {"size_gb": size_gb, "file_mb": file_mb, "layout": "per-cluster", "roots": [r.name for r in ROOTS],
            "shape": shape}
    stamp = out / ".bench-corpus.json"
    if stamp.exists():
        info = json.loads(stamp.read_text())
        if info.get("args") == args:
            return info
    t = time.perf_counter()
    texts, n_sources = cluster_texts()
    total = sum(map(len, texts.values()))
    if out.exists():
        shutil.rmtree(out)
    pieces = rotated_pieces(texts, size_gb, file_mb)
    n_gz = 0
    if shape == "rotated":
        files, n_gz = _write_rotated(out, pieces)
    elif shape == "one_file":
        files = _write_one_file(out, pieces)
    elif shape == "compose":
        files = _write_compose(out, pieces, size_gb)
    else:
        raise ValueError(f"unknown shape {shape!r}")
    roots = " and ".join(f"../shared/{r.name}" for r in ROOTS)
    how = {"rotated": f"cut at entry starts into ~{file_mb:g} MB files, every other file gzipped",
           "one_file": "in the rotated order as one plain server.log",
           "compose": "as one `docker compose logs` stream of 3 services (the text in thirds, interleaved 1-20 lines "
                      "at a time)"}[shape]
    info = {"args": args, "command": f"benchmarks/real_corpus.py: the {n_sources} broker logs of {roots} "
                                     f"({total:,} bytes of text, {len(texts)} clusters), each cluster's repeated to "
                                     f"its share of {size_gb:g} GB, {how}",
            "output": f"{n_sources} source logs in {len(texts)} clusters, {total:,} bytes of text",
            "seconds": round(time.perf_counter() - t, 1), "files": len(files),
            "disk_bytes": sum(p.stat().st_size for p in files), "gz_files": n_gz}
    stamp.write_text(json.dumps(info, indent=1))
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--size-gb", type=float, default=2.0)
    ap.add_argument("--file-mb", type=float, default=40)
    ap.add_argument("--shape", choices=SHAPES, default="rotated")
    args = ap.parse_args()
    print(json.dumps(make_real_corpus(Path(args.out), args.size_gb, args.file_mb, args.shape), indent=1))


if __name__ == "__main__":
    main()
