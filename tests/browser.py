"""Test helpers: read a dashboard page as the browser gets it, and load it in real headless Chromium.

Chromium is driven through its command line only: ``--dump-dom`` gives the
DOM after the page's scripts ran (``--virtual-time-budget`` lets timers fire),
``--screenshot`` a PNG, and ``--enable-logging=stderr`` prints every console
message as ``INFO:CONSOLE``. A missing Chromium fails the test (CI installs it).
"""
from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from dashboards.timefmt import from_axis_time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         "--hide-scrollbars", "--mute-audio", "--enable-logging=stderr", "--v=0"]
_BLOB = re.compile(r"<script type='application/json' id='kf-data'>(.*?)</script>", re.S)
_CONSOLE = re.compile(r"INFO:CONSOLE[^\]]*\] (.*)")


# ------------------------------------------------------------------------------------------ the page


def page_blob(page: str) -> dict:
    """The JSON island the page's script draws from (figures, cited events, windows)."""
    m = _BLOB.search(page)
    assert m, "no data island in the page"
    return json.loads(m.group(1))


def figure(blob: dict, div: str) -> dict:
    found = [f for f in blob["figures"] if f["div"] == div]
    assert len(found) == 1, (div, [f["div"] for f in blob["figures"]])
    return found[0]


def trace(fig: dict, name: str) -> dict | None:
    found = [t for t in fig["data"] if t.get("name") == name]
    assert len(found) <= 1
    return found[0] if found else None


def bars(tr: dict | None, tz: str = "UTC") -> list[tuple[str, int, int]]:
    """A bar trace as (y label, start µs, end µs), read back the way Plotly draws it (base + length)."""
    if tr is None:
        return []
    out = []
    for y, base, x in zip(tr["y"], tr["base"], tr["x"]):
        start = from_axis_time(base, tz)
        out.append((html.unescape(y), start, start + round(x * 1000)))
    return out


def tp_of(label: str) -> tuple[str, int]:
    topic, _, part = label.rpartition("-")
    return topic, int(part)


# ------------------------------------------------------------------------------------------ chromium


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if exe is None:
        pytest.fail("chromium is not installed (apt-get install chromium; .ci/run installs it in CI)")
    return exe


@dataclass
class Loaded:
    dom: str
    console: list[str]
    png: Path | None


def load(page: Path, tmp: Path, screenshot: bool = True, size: tuple[int, int] = (1400, 2400),
         budget_ms: int = 20_000) -> Loaded:
    """Open ``page`` from disk (file://, no server, no network) and return the DOM after its scripts ran."""
    exe = chromium()
    url = page.resolve().as_uri()
    common = FLAGS + [f"--user-data-dir={tmp / 'profile'}", f"--virtual-time-budget={budget_ms}",
                      f"--window-size={size[0]},{size[1]}"]
    run = subprocess.run([exe, *common, "--dump-dom", url], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    console = [m.group(1) for m in map(_CONSOLE.search, run.stderr.splitlines()) if m]
    png = None
    if screenshot:
        png = tmp / (page.stem + ".png")
        shot = subprocess.run([exe, *common, f"--screenshot={png}", url], capture_output=True, text=True,
                              timeout=180)
        assert shot.returncode == 0 and png.exists(), shot.stderr[-2000:]
        console += [m.group(1) for m in map(_CONSOLE.search, shot.stderr.splitlines()) if m]
    return Loaded(run.stdout, console, png)


def with_probe(page: str, js: str) -> str:
    """The page plus a test probe script run after everything else (the product page is unchanged)."""
    i = page.rindex("</body>")
    return page[:i] + "<script>" + js + "</script>" + page[i:]


# ------------------------------------------------------------------------------------------ PNG


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes): (width, height, rows)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            channels = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line) if channels == 3 else bytes(v for k, v in enumerate(line) if k % 4 != 3))
        prev = line
    return width, height, rows


def count_colour(path: Path, rgb: tuple[int, int, int], tol: int = 12) -> int:
    _, _, rows = png_pixels(path)
    n = 0
    for row in rows:
        for i in range(0, len(row), 3):
            if abs(row[i] - rgb[0]) <= tol and abs(row[i + 1] - rgb[1]) <= tol and abs(row[i + 2] - rgb[2]) <= tol:
                n += 1
    return n
