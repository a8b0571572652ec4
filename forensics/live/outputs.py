"""What ``watch`` writes while it runs: the notifications (JSON lines, ``--exec``), the report files, citations.

Notifications are numbered (``seq``) and appended to ``incidents.jsonl`` once each: the session is saved with the
notifications it has to tell before they are written, and after a restart those the file already holds (by
number) are not written again. ``--exec`` runs once per notification written, with it on stdin (after a ``kill
-9`` between writing and running, a notification may run twice: at least once).

``report.json`` and ``report.html`` are rewritten (under a temporary name, then renamed) when the picture changes;
the page reloads itself every few seconds.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Callable

REFRESH_S = 5
EXEC_TIMEOUT_S = 30


class Notifier:
    def __init__(self, path: Path, exec_cmd: str | None = None, echo: Callable[[str], None] | None = None):
        self.path = path
        self.exec_cmd = exec_cmd
        self.echo = echo
        self.last = _last_seq(path)

    def emit(self, notes: list[dict[str, Any]], warn: Callable[[str], None]) -> None:
        fresh = [n for n in notes if n["seq"] > self.last]
        if not fresh:
            return
        text = "".join(json.dumps(n, ensure_ascii=False, sort_keys=True) + "\n" for n in fresh)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        self.last = fresh[-1]["seq"]
        for n in fresh:
            line = json.dumps(n, ensure_ascii=False, sort_keys=True)
            if self.echo is not None:
                self.echo(line)
            if self.exec_cmd:
                _run(self.exec_cmd, line, n, warn)


def _run(cmd: str, line: str, note: dict[str, Any], warn: Callable[[str], None]) -> None:
    try:
        got = subprocess.run(cmd, shell=True, input=line + "\n", text=True, timeout=EXEC_TIMEOUT_S,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except subprocess.TimeoutExpired:
        warn(f"--exec did not finish within {EXEC_TIMEOUT_S} s for notification {note['seq']}; left running")
        return
    except OSError as exc:
        warn(f"--exec could not run for notification {note['seq']}: {exc}")
        return
    if got.returncode != 0:
        err = (got.stderr or "").strip().splitlines()[-1:] or [""]
        warn(f"--exec exited {got.returncode} for notification {note['seq']}: {err[0][:200]}")


def _last_seq(path: Path) -> int:
    """The number of the last notification the file holds (0: none)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 65536))
            tail = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return 0
    for line in reversed(tail):
        try:
            return int(json.loads(line)["seq"])
        except (ValueError, KeyError, TypeError):
            continue
    return 0


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_reports(out: Path, report: dict[str, Any], tz: str) -> None:
    from forensics.report.render import render_html

    write_atomic(out / "report.json", json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    page = render_html(report, tz)
    refresh = f'<meta http-equiv="refresh" content="{REFRESH_S}">'
    page = page.replace("<head>", "<head>" + refresh, 1) if "<head>" in page else refresh + page
    write_atomic(out / "report.html", page)


def recite(doc: Any, names: dict[str, str]) -> Any:
    """``doc`` with every citation of a file by the name it was read under replaced by where the file is now (a
    rotated log read as ``server.log`` is ``server.log.2021-08-16-10.gz`` once rotated and compressed): the
    ``source_file`` fields, and the sentences citing a line by the file's path or name (``(server.log:885)``), as
    the fields beside them say which file's line it is."""
    if not names:
        return doc
    short: dict[str, str] = {}

    def gather(d: Any) -> None:
        if isinstance(d, dict):
            old = d.get("source_file")
            if isinstance(old, str) and old in names and d.get("source_pos") is not None:
                short[f"({_base(old)}:{d['source_pos']})"] = f"({_base(names[old])}:{d['source_pos']})"
            for v in d.values():
                gather(v)
        elif isinstance(d, list):
            for v in d:
                gather(v)

    gather(doc)
    paths = {old + ":": new + ":" for old, new in names.items()}

    def cite(m: re.Match) -> str:  # a path followed by a colon, or a name and line in parentheses
        got = m.group(0)
        return paths.get(got) or short.get(got) or got

    def swap(d: Any) -> Any:
        if isinstance(d, dict):
            return {k: (names.get(v, v) if k in ("source_file", "file") and isinstance(v, str) else swap(v))
                    for k, v in d.items()}
        if isinstance(d, list):
            return [swap(v) for v in d]
        if isinstance(d, str) and ":" in d:
            return _CITED.sub(cite, d)
        return d

    return swap(doc)


# A file's path before a colon (``broker-1/server.log:885``), or a file's name and line in parentheses.
_CITED = re.compile(r"\([^\s():]+:\d+\)|[^\s():]+:")


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]
