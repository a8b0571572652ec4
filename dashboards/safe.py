"""Escaping for the two places log-derived text ends up: HTML and Plotly labels, and JSON inside <script>.

Plotly renders hover labels, tick labels, titles and menu labels as a small
subset of HTML (it turns ``<b>``, ``<br>``, ``<a href>`` into SVG and decodes
entities), so a topic named ``<b>x</b>`` would be bold and an ``<a>`` would
become a link: every string from a log or znode goes through :func:`label`
first, which leaves entities Plotly decodes back into the literal text.
"""
from __future__ import annotations

import html
import json
from typing import Any


def text(s: Any) -> str:
    """Escape for HTML element content and attribute values."""
    return html.escape("" if s is None else str(s), quote=True)


def label(s: Any) -> str:
    """Escape for a Plotly label (hover, tick, title, legend, menu): only ``&``, ``<`` and ``>``.

    Plotly decodes ``&amp;``, ``&lt;`` and ``&gt;`` but shows ``&quot;`` literally, and a quote cannot
    start anything once no ``<`` is left, so quotes stay as they are."""
    return html.escape("" if s is None else str(s), quote=False)


def wrap_label(s: Any, width: int = 100) -> str:
    """A long sentence as a Plotly label, escaped first and then broken into lines with <br>."""
    words = str(s or "").split(" ")
    lines: list[str] = []
    cur = ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return "<br>".join(label(x) for x in lines)


_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                              "\u2028": "\\u2028", "\u2029": "\\u2029"})


def script_json(obj: Any) -> str:
    """JSON that can sit inside a <script> element: no '</script>', '<!--' or ']]>' can appear in it.

    ``<``, ``>`` and ``&`` only occur inside JSON strings, where ``\\u003c`` & co. mean the same
    characters, so the parsed value is unchanged.
    """
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).translate(_SCRIPT_SAFE)
