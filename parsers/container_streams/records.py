"""What a grammar module yields, and the small pieces of syntax several grammars share."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(slots=True)
class Piece:
    """One line (or, joined, one logical line) of the file, routed.

    ``kind`` is ``line`` (``text`` belongs to ``source``'s log), ``other`` (the
    collector's own line: "Attaching to kafka-1", an empty line) or ``quarantined``
    (a record that cannot be read, ``why`` says why). ``pos`` is the 1-based line of the
    file where the record (the first record of a joined line) starts.
    """

    kind: str
    pos: int
    source: str | None = None
    text: str = ""
    stamp: str | None = None  # the collector's own time stamp (zoned), when it writes one
    order: tuple | None = None  # sort key within the source, for exports in no particular order
    why: str = ""
    joined: int = 1  # records joined into this line (Docker's 16 KiB split, CRI partials)


# RFC 3339 as container runtimes write it: 2024-01-02T03:04:05.123456789Z (or an offset).
RFC3339 = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)"
RFC3339_PREFIX = re.compile(r"^(" + RFC3339 + r") ")
# A log4j/logback header at the start of a line: what a broker's own line begins with.
INNER_HEADER = re.compile(r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text) if "\x1b" in text else text


def split_stamp(text: str) -> tuple[str | None, str]:
    """'2024-01-02T03:04:05.1Z message' -> ('2024-01-02T03:04:05.1Z', 'message'); else (None, text)."""
    if not text[:1].isdigit():  # (str.isdigit takes every character re's \d does) no stamp: most lines, no regex
        return None, text
    m = RFC3339_PREFIX.match(text)
    if m is None:
        return None, text
    return m.group(1), text[m.end():]


# /var/log/pods/<namespace>_<pod>_<uid>/<container>/<n>.log and
# /var/log/containers/<pod>_<namespace>_<container>-<id>.log
_PODS_DIR = re.compile(r"^[^_/]+_([^_/]+)_[0-9a-f-]{8,}$")
_CONTAINERS_FILE = re.compile(r"^([^_/]+)_[^_/]+_(.+)-[0-9a-f]{64}\.log$")
_DOCKER_ID = re.compile(r"^[0-9a-f]{64}$")


def source_from_path(path: str) -> str:
    """A source name for a file that holds one container's log: its pod/container, else its file name."""
    parts = PurePosixPath(path.replace("\\", "/").replace("!/", "/")).parts
    name = parts[-1] if parts else path
    if len(parts) >= 3:
        m = _PODS_DIR.match(parts[-3])
        if m:
            return f"{m.group(1)}/{parts[-2]}"
    m = _CONTAINERS_FILE.match(name)
    if m:
        return f"{m.group(1)}/{m.group(2)}"
    if len(parts) >= 2 and _DOCKER_ID.match(parts[-2]):
        return parts[-2][:12]  # Docker's own folder: the short container id, as `docker ps` shows it
    for suffix in (".gz", ".log", ".txt", ".json", ".jsonl", ".ndjson"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name
