"""Kafka's log4j layout and DailyRollingFileAppender, hourly.

``[%d] %p %m (%c)%n`` with ``%d`` = ``yyyy-MM-dd HH:mm:ss,SSS`` in the JVM's
zone (UTC here). A multi-line message keeps the logger after its last line
(``KafkaConfig values:`` dumps); an exception's lines follow the entry.

DatePattern ``'.'yyyy-MM-dd-HH``: the live file has the plain name; when the
first entry of a new hour arrives, the finished hour's file gets its suffix.
An hour without entries leaves no file. Rolled files may be gzipped, as
operators' log rotation leaves them; gzip headers carry no name and time, so
the bytes depend on the content only.
"""
from __future__ import annotations

import datetime as dt
import gzip
import os
from pathlib import Path
from typing import Callable, Iterable

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def stamp(ms: int) -> str:
    d = _EPOCH + dt.timedelta(milliseconds=ms)
    return d.strftime("%Y-%m-%d %H:%M:%S,") + f"{ms % 1000:03d}"


def hour_suffix(ms: int) -> str:
    return (_EPOCH + dt.timedelta(milliseconds=ms)).strftime("%Y-%m-%d-%H")


def entry(ms: int, level: str, logger: str, message: str, throwable: Iterable[str] = ()) -> str:
    lines = [f"[{stamp(ms)}] {level} {message} ({logger})"]
    lines.extend(throwable)
    return "\n".join(lines) + "\n"


class HourlyFile:
    """One appender (e.g. broker 1's server.log), written in time order, streaming."""

    def __init__(self, directory: Path, name: str, gzip_rolled: Callable[[str], bool] = lambda suffix: False,
                 level: int = 6):
        self.dir = Path(directory)
        self.name = name
        self.gzip_rolled = gzip_rolled
        self.level = level
        self.hour: str | None = None
        self.fh = None
        self.gz = False
        self.bytes = 0
        self.files: list[Path] = []
        self.dir.mkdir(parents=True, exist_ok=True)

    def _open(self, suffix: str) -> None:
        self.hour = suffix
        self.gz = self.gzip_rolled(suffix)
        path = self.dir / f"{self.name}.{suffix}{'.gz' if self.gz else ''}"
        raw = open(path, "wb")
        self.fh = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=self.level) if self.gz else raw
        self._raw = raw
        self._path = path
        self.files.append(path)

    def _close_current(self) -> None:
        if self.fh is None:
            return
        self.fh.close()
        if self.gz:
            self._raw.close()
        self.fh = None

    def write(self, ms: int, text: str) -> None:
        suffix = hour_suffix(ms)
        if suffix != self.hour:
            if self.hour is not None and suffix < self.hour:
                raise ValueError(f"{self.name}: a line of {suffix} after lines of {self.hour} (write in time order)")
            self._close_current()
            self._open(suffix)
        data = text.encode("utf-8")
        self.bytes += len(data)
        self.fh.write(data)

    def close(self) -> None:
        """The last hour is the live file: plain, under the plain name."""
        self._close_current()
        if not self.files:
            return
        last = self.files.pop()
        live = self.dir / self.name
        if last.suffix == ".gz":
            with gzip.open(last, "rb") as src, open(live, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            last.unlink()
        else:
            os.replace(last, live)
        self.files.append(live)
