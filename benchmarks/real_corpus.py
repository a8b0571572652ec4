"""The real-format ingest corpus: every broker log of ``../shared/real_logs`` (all versions, 0.8 to 4.x,
ZooKeeper and KRaft mode, every layout found there), each cluster's joined in manifest order, repeated
to the size asked and cut into rotated files of about ``file_mb`` MB, every other one gzipped (as
logrotate leaves some of a logs folder compressed).

The broker logs are the MANIFEST.tsv rows whose file is a server, controller or state-change log (the
rotated ones included), plus the excerpts of ``issue_snippets/`` (INDEX.tsv); binary files, checkpoints
and metadata segments are not logs and stay out. Files are cut only before a line that starts with a
log header, so no multi-line entry is split across two files. The corpus is rebuilt only when its stamp
(``.bench-corpus.json``) records other arguments.
"""
from __future__ import annotations

import csv
import gzip
import json
import re
import shutil
import time
from pathlib import Path

from _common import REPO

REAL_LOGS = REPO.parent / "shared" / "real_logs"
# Kafka's own log4j files and their rotations (``server.log.2017-01-19-16``); one cluster spelled it "stage-change".
_BROKER_LOG = re.compile(r"(^|/)(server|controller|state-change|stage-change)\.log(\.[\w-]+)?$")
# A line starting with a header of one of the layouts found in the corpus ([yyyy-MM-dd ..., yyyy-MM-dd ..., yyyy/MM/dd ...).
_ENTRY_START = re.compile(rb"\n(?=\[?\d{4}[-/]\d\d[-/]\d\d[ T]\d\d:\d\d)")


def broker_log_paths(root: Path = REAL_LOGS) -> list[Path]:
    """The corpus's broker logs, in manifest order (then the issue excerpts, in index order)."""
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
    with open(root / "issue_snippets" / "INDEX.tsv", newline="", encoding="utf-8") as fh:
        out += [root / "issue_snippets" / row["file"] for row in csv.DictReader(fh, delimiter="\t")]
    return out


def _text(path: Path) -> bytes:
    data = path.read_bytes()
    data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return data if not data or data.endswith((b"\n", b"\r")) else data + b"\n"


def make_real_corpus(out: Path, size_gb: float, file_mb: float = 40) -> dict:
    """One folder per cluster of the shared corpus: its broker logs joined (manifest order), repeated to its
    share of ``size_gb`` (in proportion to its size), cut into ``server.log.NNNN`` of about ``file_mb`` MB,
    every other file of the corpus gzipped. One file never mixes two clusters, so holds one layout (as a
    real broker's logs do), and small clusters give small files."""
    args = {"size_gb": size_gb, "file_mb": file_mb, "layout": "per-cluster"}
    stamp = out / ".bench-corpus.json"
    if stamp.exists():
        info = json.loads(stamp.read_text())
        if info.get("args") == args:
            return info
    t = time.perf_counter()
    sources = broker_log_paths()
    streams: dict[str, list[Path]] = {}
    for p in sources:
        streams.setdefault(p.relative_to(REAL_LOGS).parts[0], []).append(p)
    texts = {c: b"".join(_text(p) for p in ps) for c, ps in streams.items()}
    total = sum(map(len, texts.values()))
    scale, cut = size_gb * 1e9 / total, int(file_mb * 1e6)
    if out.exists():
        shutil.rmtree(out)
    files, n_gz = [], 0
    for cluster, one in sorted(texts.items()):
        folder = out / cluster
        folder.mkdir(parents=True)
        target, written, buf, n = int(len(one) * scale), 0, bytearray(), 0

        def emit(piece, folder=folder) -> None:
            nonlocal n, n_gz
            n += 1
            # server.log.0001 is the oldest rotation, as a date suffix sorts.
            path = folder / f"server.log.{n:04d}"
            if len(files) % 2 == 0:
                path = path.with_name(path.name + ".gz")
                path.write_bytes(gzip.compress(bytes(piece), compresslevel=6, mtime=0))
                n_gz += 1
            else:
                path.write_bytes(piece)
            files.append(path)

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
                emit(buf[:m.end()])
                del buf[:m.end()]
        if buf:
            emit(buf)
    info = {"args": args, "command": f"benchmarks/real_corpus.py: the {len(sources)} broker logs of ../shared/real_logs "
                                     f"({total:,} bytes of text, {len(streams)} clusters), each cluster's repeated to "
                                     f"its share of {size_gb:g} GB and cut at entry starts into ~{file_mb:g} MB files, "
                                     f"every other file gzipped",
            "output": f"{len(sources)} source logs in {len(streams)} clusters, {total:,} bytes of text",
            "seconds": round(time.perf_counter() - t, 1), "files": len(files),
            "disk_bytes": sum(p.stat().st_size for p in files), "gz_files": n_gz}
    stamp.write_text(json.dumps(info, indent=1))
    return info
