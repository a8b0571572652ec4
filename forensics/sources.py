"""From what the operator hands us (folders, archives, loose files, globs) to a list of files.

Runs on the driver and touches only the local filesystem (remote URIs are
passed through for Spark to read). Archives are extracted into a work folder
safely: no absolute paths, no ``..``, no links leading out, a cap on the total
size against decompression bombs.
"""
from __future__ import annotations

import fnmatch
import glob
import os
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from forensics.errors import UserError

DEFAULT_EXTRACT_LIMIT = int(os.environ.get("KAFKA_FORENSICS_MAX_EXTRACT_BYTES", str(20 * 1024**3)))
MAX_ARCHIVE_MEMBERS = 200_000
_REMOTE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_BROKER_DIR = re.compile(r"(?:broker|kafka|kafka-broker|kafka_broker|kafkabroker)[-_=.]?(\d+)", re.IGNORECASE)
_BROKER_KV = re.compile(r"(?:broker|broker_id|broker\.id|brokerid)=(\d+)", re.IGNORECASE)
_CLUSTER_KV = re.compile(r"cluster=(.+)")
_DATE_KV = re.compile(r"date=(\d{4}-\d\d-\d\d)")


@dataclass(frozen=True)
class FileRef:
    read_path: str  # what Spark reads (absolute local path or a URI)
    display: str  # what reports cite: the path as the user gave it (archive members as 'a.tgz!/x/y')
    broker_hint: int | None = None
    cluster_hint: str | None = None
    size: int = 0
    mtime: int | None = None  # seconds; known without a stat for files a remote listing found


@dataclass
class Inputs:
    files: list[FileRef] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # input-level problems: one line each
    skipped_hidden: int = 0
    # --broker-map as given: also matched, inside container streams, against service/pod names
    broker_map: list[tuple[str, int]] = field(default_factory=list)


def broker_hint_from_path(display: str) -> int | None:
    """broker-3/server.log, kafka2/..., broker=3/ (audit layout) -> broker id; else None."""
    parts = PurePosixPath(display.replace("!/", "/")).parts[:-1]
    for comp in reversed(parts):
        m = _BROKER_KV.fullmatch(comp) or _BROKER_DIR.fullmatch(comp)
        if m:
            return int(m.group(1))
    return None


def cluster_hint_from_path(display: str) -> str | None:
    for comp in PurePosixPath(display.replace("!/", "/")).parts:
        m = _CLUSTER_KV.fullmatch(comp)
        if m:
            return m.group(1)
    return None


def parse_broker_map(entries: list[str] | None) -> list[tuple[str, int]]:
    """'--broker-map "host-a*=1"' entries (glob on the displayed path) -> [(glob, id)]."""
    out = []
    for e in entries or []:
        if "=" not in e:
            raise UserError(f"--broker-map expects GLOB=ID, got {e!r}")
        pat, _, bid = e.rpartition("=")
        try:
            out.append((pat, int(bid)))
        except ValueError:
            raise UserError(f"--broker-map: broker id must be a number in {e!r}") from None
    return out


def broker_hint(display: str, bmap: list[tuple[str, int]]) -> int | None:
    """The broker a file's path names: by --broker-map first, else by its folder (``broker_hint_from_path``)."""
    hint = _mapped(display, bmap)
    return hint if hint is not None else broker_hint_from_path(display)


def _mapped(display: str, bmap: list[tuple[str, int]]) -> int | None:
    for pat, bid in bmap:
        if fnmatch.fnmatch(display, pat) or fnmatch.fnmatch(display, f"*/{pat}") or fnmatch.fnmatch(display, f"*{pat}*"):
            return bid
    return None


def _is_tar(path: Path) -> bool:
    try:
        return tarfile.is_tarfile(path)
    except (OSError, tarfile.TarError, EOFError):
        return False


def _archive_kind(path: Path) -> str | None:
    name = path.name.lower()
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return None
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if name.endswith((".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")):
        return "tar"
    if head.startswith(b"\x1f\x8b") and not re.search(r"\.(log|out|txt|json)(\.[\w-]+)*\.gz$", name):
        # A .gz that is not a rotated log may be a tarball with an unusual name.
        return "tar" if _is_tar(path) else None
    return None


class _Extractor:
    def __init__(self, workdir: Path, limit: int):
        self.workdir = workdir
        self.limit = limit
        self.total = 0

    def _target(self, root: Path, name: str) -> Path | None:
        pure = PurePosixPath(name.replace("\\", "/"))
        if pure.is_absolute() or ".." in pure.parts or not pure.parts:
            return None
        dest = (root / Path(*pure.parts)).resolve()
        if not str(dest).startswith(str(root.resolve()) + os.sep):
            return None
        return dest

    def _copy(self, src, dest: Path, name: str, problems: list[str], archive: str) -> bool:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(dest, "wb") as out:
            while True:
                buf = src.read(1 << 20)
                if not buf:
                    break
                self.total += len(buf)
                if self.total > self.limit:
                    problems.append(
                        f"{archive}: extraction stopped at {name}: archive expands beyond {self.limit} bytes "
                        "(decompression bomb guard; set KAFKA_FORENSICS_MAX_EXTRACT_BYTES to raise it)"
                    )
                    return False
                out.write(buf)
        return True

    def extract(self, archive: Path, kind: str, display: str, problems: list[str]) -> Path:
        root = self.workdir / f"x{len(list(self.workdir.iterdir())):04d}"
        root.mkdir(parents=True)
        rejected: list[str] = []
        members = 0
        try:
            if kind == "zip":
                with zipfile.ZipFile(archive) as zf:
                    for info in zf.infolist():
                        members += 1
                        if members > MAX_ARCHIVE_MEMBERS:
                            problems.append(f"{display}: more than {MAX_ARCHIVE_MEMBERS} members; rest ignored")
                            break
                        if info.is_dir():
                            continue
                        mode = (info.external_attr >> 16) & 0o170000
                        dest = self._target(root, info.filename)
                        if dest is None or mode == stat.S_IFLNK:
                            rejected.append(info.filename)
                            continue
                        try:
                            with zf.open(info) as src:
                                if not self._copy(src, dest, info.filename, problems, display):
                                    break
                        except (zipfile.BadZipFile, OSError, EOFError) as exc:
                            problems.append(f"{display}: member {info.filename} unreadable ({exc})")
            else:
                with tarfile.open(archive, "r:*") as tf:
                    while True:
                        try:
                            info = tf.next()
                        except (tarfile.TarError, EOFError, OSError) as exc:
                            problems.append(f"{display}: archive damaged after {members} members ({exc}); "
                                            "kept what was readable")
                            break
                        if info is None:
                            break
                        members += 1
                        if members > MAX_ARCHIVE_MEMBERS:
                            problems.append(f"{display}: more than {MAX_ARCHIVE_MEMBERS} members; rest ignored")
                            break
                        if info.isdir():
                            continue
                        dest = self._target(root, info.name)
                        if dest is None or not info.isfile():
                            # links, devices, fifos and paths leading out of the target are refused
                            rejected.append(info.name + (f" -> {info.linkname}" if info.issym() or info.islnk() else ""))
                            continue
                        try:
                            src = tf.extractfile(info)
                            if src is None:
                                continue
                            if not self._copy(src, dest, info.name, problems, display):
                                break
                        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
                            problems.append(f"{display}: archive truncated inside {info.name} ({exc}); "
                                            "kept what was readable")
                            break
        except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
            problems.append(f"{display}: not a readable archive ({exc})")
        if rejected:
            shown = ", ".join(rejected[:5]) + (f" and {len(rejected) - 5} more" if len(rejected) > 5 else "")
            problems.append(f"{display}: {len(rejected)} member(s) refused (absolute path, '..', link or special "
                            f"file): {shown}")
        return root


def collect_inputs(
    sources: list[str],
    workdir: Path,
    broker_map: list[str] | None = None,
    extract_limit: int = DEFAULT_EXTRACT_LIMIT,
) -> Inputs:
    """Expand SOURCE arguments into files. Raises UserError only for arguments that name nothing."""
    if not sources:
        raise UserError("no SOURCE given (a folder of logs, an archive, log files or a ZooKeeper data dir)")
    bmap = parse_broker_map(broker_map)
    inputs = Inputs(broker_map=bmap)
    extractor = _Extractor(workdir, extract_limit)
    seen: set[str] = set()

    def add(read_path: Path, display: str, depth: int) -> None:
        try:
            st = read_path.stat()
        except OSError as exc:
            inputs.problems.append(f"{display}: cannot read ({exc.strerror or exc})")
            return
        kind = _archive_kind(read_path) if depth < 3 else None
        if kind is not None:
            workdir.mkdir(parents=True, exist_ok=True)
            root = extractor.extract(read_path, kind, display, inputs.problems)
            walk(root, display + "!", depth + 1)
            return
        key = str(read_path.resolve())
        if key in seen:
            return
        seen.add(key)
        hint = broker_hint(display, bmap)
        inputs.files.append(FileRef(str(read_path.resolve()), display, hint, cluster_hint_from_path(display), st.st_size))

    def walk(root: Path, display_root: str, depth: int) -> None:
        visited: set[tuple[int, int]] = set()
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            try:
                st = os.stat(dirpath)
            except OSError:
                dirnames[:] = []
                continue
            key = (st.st_dev, st.st_ino)
            if key in visited:
                inputs.problems.append(f"{dirpath}: symlink loop, not followed again")
                dirnames[:] = []
                continue
            visited.add(key)
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel = os.path.relpath(dirpath, root)
            for name in sorted(filenames):
                if name.startswith("."):
                    inputs.skipped_hidden += 1
                    continue
                sub = name if rel == "." else f"{rel}/{name}"
                disp = f"{display_root}/{sub}" if display_root else sub
                add(Path(dirpath) / name, disp.replace(os.sep, "/"), depth)

    for src in sources:
        if _REMOTE.match(src) and not src.startswith("file://"):
            inputs.files.append(FileRef(src, src, broker_hint_from_path(src), cluster_hint_from_path(src)))
            continue
        if src.startswith("file://"):
            src = src[len("file://"):]
        matches = sorted(glob.glob(src)) if any(c in src for c in "*?[") else [src]
        if not matches:
            raise UserError(f"{src}: no such file or directory")
        for m in matches:
            p = Path(m)
            display = m.rstrip("/") or m
            if p.is_dir():
                walk(p, display, 0)
            elif p.exists():
                add(p, display, 0)
            else:
                raise UserError(f"{m}: no such file or directory")
    inputs.files.sort(key=lambda f: f.display)
    return inputs


def cleanup(workdir: Path) -> None:
    shutil.rmtree(workdir, ignore_errors=True)


def parse_folder_in_process(root: Path, folder: str) -> list:
    """Every file under ``root/folder`` parsed in this process, cited relative to ``root``, with the broker hinted
    by its path, raw ZooKeeper transactions left out (as the replay reads a cluster): for tests and benchmarks
    that replay a cluster without Spark."""
    from parsers.common.context import SourceContext
    from parsers.dispatch import parse_source

    events = []
    for f in sorted((root / folder).rglob("*")):
        if f.is_file():
            rel = str(f.relative_to(root))
            evs, _ = parse_source(f.read_bytes(), SourceContext(rel, cluster=folder, broker_hint=broker_hint_from_path(rel)))
            events += [e for e in evs if e.event_type != "zk_txn"]
    return events
