"""What earlier runs processed, so a re-run reads only new or changed files.

A file is unchanged when its size is the same and either its mtime or the checksum of its first
64 KiB is the same (a copy with a new mtime is not new work; a rewrite of the same size is).
Each entry also keeps the (cluster, day) partitions its events went to, so that when a file
changes or disappears its old events can be taken out of exactly those partitions.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.sources import FileRef

HEAD_BYTES = 64 * 1024
# 2: partition_timeline gained leader_serving; a store of another version is processed again, its tables rewritten
VERSION = 2


def head_digest(path: str) -> str | None:
    if "://" in path and not path.startswith("file://"):
        return None  # remote: size and mtime decide
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read(HEAD_BYTES)).hexdigest()
    except OSError:
        return None


def mtime_of(path: str) -> int | None:
    try:
        return int(os.stat(path).st_mtime)
    except OSError:
        return None


def _mtime(f: FileRef) -> int | None:
    return f.mtime if f.mtime is not None else mtime_of(f.read_path)


@dataclass
class Plan:
    process: list[FileRef] = field(default_factory=list)  # new or changed
    skip: list[FileRef] = field(default_factory=list)  # unchanged since the last run
    removed: list[str] = field(default_factory=list)  # in the manifest, gone from the root
    changed: list[str] = field(default_factory=list)  # subset of process that was seen before


@dataclass
class Manifest:
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> "Manifest":
        if not path.exists():
            return cls()
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            return cls()  # unreadable: process everything again, the tables are rewritten consistently
        if doc.get("version") != VERSION:
            return cls()
        return cls(dict(doc.get("files") or {}))

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"version": VERSION, "files": dict(sorted(self.files.items()))}, indent=1) + "\n")
        os.replace(tmp, path)

    def plan(self, files: list[FileRef], in_scope) -> Plan:
        """``in_scope(entry)``: whether a manifest entry falls in this run's --since/--until (else kept)."""
        plan = Plan()
        present = set()
        for f in files:
            present.add(f.display)
            old = self.files.get(f.display)
            if old is None:
                plan.process.append(f)
                continue
            same = old.get("size") == f.size and (
                old.get("mtime") == _mtime(f) or old.get("head") == head_digest(f.read_path))
            if same and old.get("cluster") == f.cluster_hint:
                plan.skip.append(f)
            else:
                plan.process.append(f)
                plan.changed.append(f.display)
        plan.removed = sorted(p for p, e in self.files.items() if p not in present and in_scope(e))
        return plan

    def record(self, f: FileRef, partitions: list[tuple[str, str]], summary: dict[str, Any]) -> None:
        self.files[f.display] = {
            "size": f.size, "mtime": _mtime(f), "head": head_digest(f.read_path),
            "cluster": f.cluster_hint, "partitions": [list(p) for p in sorted(partitions)],
            "kind": summary.get("kind"), "lines": summary.get("lines"), "events": summary.get("events"),
            "unrecognized": summary.get("unrecognized"), "quarantined": summary.get("quarantined"),
            "errors": summary.get("errors") or [],
        }

    def forget(self, display: str) -> None:
        self.files.pop(display, None)

    def partitions_of(self, display: str) -> list[tuple[str, str]]:
        return [tuple(p) for p in (self.files.get(display) or {}).get("partitions", [])]
