"""Which collector wrote a file, from its first non-empty lines.

Every grammar is strict about its own frame (the ``NAME  | `` prefix, the CRI fields,
the JSON keys), so a broker's own log never matches one: its lines start with ``[`` or
a date without a zone, and kubectl's stamp is only taken for one when a log header of
its own follows it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from parsers.container_streams import compose, cri, docker_json, ecs, kubectl, loki
from parsers.container_streams.records import Piece

SAMPLE_LINES = 20


@dataclass(frozen=True)
class Grammar:
    name: str
    matches: Callable[[str], bool]
    pieces: Callable[[Iterable[tuple[int, str]], str], Iterator[Piece]]
    share: float  # of the sampled lines that must match
    reorder: bool = False  # export in no particular order: sort each source by its entries' own keys
    json: bool = False  # one JSON object per line: a record that parses is whole, a cut one does not parse
    # A block of lines -> (sources, texts, stamps), a line read as ``pieces`` reads it or (source None) left
    # to ``pieces``: for a grammar whose every line is one piece on its own (no record spans lines).
    route: Callable[[list[str]], tuple[list, list, list]] | None = None
    # A block whose every line ``route`` takes plainly (one prefix width, no stamp) -> (width, prefixes,
    # {prefix: source}, text), else None: its lines handed to their sources by C loops (``compose.split``).
    split: Callable[[list[str]], tuple | None] | None = None
    # ``split`` of a block still as bytes (``textranges.RawBlock``) -> (width, {prefix bytes: source}), else None:
    # a range's survey then notes its sources' last lines and the ids they name without decoding it.
    split_raw: Callable[[Any], tuple | None] | None = None
    # ``split_raw`` of a block a range owns whole, with its sources' lines cut from their prefixes -> ({source:
    # (texts, line numbers)}, the last line's source), else None: the range puts them in its buffers as they are.
    split_texts: Callable[[Any, int], tuple | None] | None = None


GRAMMARS: dict[str, Grammar] = {
    "docker_json": Grammar(docker_json.NAME, docker_json.line_matches, docker_json.pieces, 0.8, json=True),
    "loki_jsonl": Grammar(loki.NAME_JSONL, loki.jsonl_matches, loki.jsonl_pieces, 0.8, json=True),
    "ecs_export": Grammar(ecs.NAME, ecs.line_matches, ecs.pieces, 0.8, reorder=True, json=True),
    "cri": Grammar(cri.NAME, cri.line_matches, cri.pieces, 0.8),
    "kubectl_prefix": Grammar(kubectl.NAME_PREFIX, kubectl.prefix_matches, kubectl.prefix_pieces, 0.8),
    "compose": Grammar(compose.NAME, compose.line_matches, compose.pieces, 0.6, route=compose.route,
                       split=compose.split, split_raw=compose.split_raw, split_texts=compose.split_texts),
    "loki_default": Grammar(loki.NAME_DEFAULT, loki.default_matches, loki.default_pieces, 0.8),
    "kubectl_timestamps": Grammar(kubectl.NAME_TIMESTAMPS, kubectl.timestamps_matches, kubectl.timestamps_pieces, 0.8),
    # decided on the sample as a whole (see detect_lines), not line by line
    "loki_raw": Grammar(loki.NAME_RAW, lambda line: False, loki.raw_pieces, 1.0),
}
# Off: every line goes through its grammar's ``pieces`` (the tests compare the two readings).
ROUTED = True
# Off: every block goes through ``route`` line by line (the tests compare the two readings).
SPLIT = True
# Off: a survey decodes every block before ``split`` (the tests compare the two readings).
RAW = True


def route_of(grammar: Grammar) -> Callable[[list[str]], tuple[list, list, list]] | None:
    """The grammar's block router, when it has one and routing is on."""
    return grammar.route if ROUTED else None


def split_of(grammar: Grammar) -> Callable[[list[str]], tuple | None] | None:
    """The grammar's block splitter, when it has one and routing and splitting are on."""
    return grammar.split if ROUTED and SPLIT else None


def split_raw_of(grammar: Grammar) -> Callable[[Any], tuple | None] | None:
    """The grammar's splitter of blocks as bytes, when it has one and routing, splitting and raw blocks are on."""
    return grammar.split_raw if ROUTED and SPLIT and RAW else None


def split_texts_of(grammar: Grammar) -> Callable[[Any, int], tuple | None] | None:
    """The grammar's splitter of a range's blocks as bytes into its sources' texts, when it has one and routing,
    splitting and raw blocks are on."""
    return grammar.split_texts if ROUTED and SPLIT and RAW else None


def sample(text: str, n: int = SAMPLE_LINES) -> list[str]:
    out = []
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if line.strip():
            out.append(line)
            if len(out) >= n:
                break
    return out


def detect_lines(lines: list[str]) -> str | None:
    if not lines:
        return None
    for key, g in GRAMMARS.items():
        hits = sum(1 for line in lines if g.matches(line))
        if hits == 0 or hits < g.share * len(lines):
            continue
        if key == "kubectl_timestamps" and not any(map(kubectl.timestamps_inner_header, lines)):
            continue  # an ISO-8601 layout of the broker's own, not kubectl's stamp
        if key == "compose" and any(compose.unprefixed_log_line(x) for x in lines if not g.matches(x)):
            continue  # a pasted excerpt: log lines with and without the prefix
        return key
    if loki.newest_first(lines):
        return "loki_raw"
    return None


def detect_format(head: bytes) -> str | None:
    """The grammar key for a file whose payload starts with ``head``, or None (not a container stream)."""
    if not head:
        return None
    first = head[:32768]
    if first.count(b"\x00") > 0:
        return None
    text = first.decode("utf-8", "replace")
    if len(head) > len(first) and "\n" in text:
        text = text.rsplit("\n", 1)[0]  # the sample's last line is cut: leave it out
    return detect_lines(sample(text))


def detect_head(numbered: Iterator[tuple[int, str]]) -> tuple[str | None, list[tuple[int, str]]]:
    """The grammar key from the first lines (the first SAMPLE_LINES non-empty ones, at most 2000) and those lines."""
    head: list[tuple[int, str]] = []
    non_empty = 0
    for item in numbered:
        head.append(item)
        non_empty += 1 if item[1].strip() else 0
        if non_empty >= SAMPLE_LINES or len(head) >= 2000:
            break
    return detect_lines(sample("\n".join(t for _, t in head))), head
