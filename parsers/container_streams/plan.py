"""How a big container stream is read: its survey and its ranges, planned on the driver."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from parsers.broker_logs.broker_log import MAX_LINE_CHARS
from parsers.broker_logs.broker_log_ranges import OWN_ALL
from parsers.common.textio import ReadProblems
from parsers.common.textranges import (
    RawBlock,
    byte_ranges,
    count_lines,
    file_chunks,
    gunzip_stream,
    line_blocks,
    plan_ranges,
    raw_line_blocks,
    skip_lines,
)
from parsers.container_streams.detect import GRAMMARS, detect_head, route_of, split_raw_of
from parsers.container_streams.survey import LOOKAHEAD_LINES, merge_surveys, survey, survey_blocks, survey_range


def _numbered(path: str, size: int, gz: bool) -> Iterator[tuple[int, str]]:
    with open(path, "rb") as fh:
        chunks = gunzip_stream(fh, size, ReadProblems()) if gz else file_chunks(fh, 0)
        for first, lines in line_blocks(chunks, ReadProblems(), MAX_LINE_CHARS):
            yield from zip(range(first, first + len(lines)), lines)


def plan_stream(path: str, display: str, size: int, gz: bool, range_bytes: int,
                cuts: Iterable[int] | None = None) -> tuple[dict, list[tuple[int, int, int, int]]]:
    """(survey, ranges as (first byte, end byte, first line, lines owned)); no ranges when the survey says
    the stream cannot be read by ranges (it is then read whole). A gzip stream is one range."""
    if gz:
        got = survey(_numbered(path, size, gz), display)
        return got, ([(0, size, 1, OWN_ALL)] if got["ranged"] else [])
    with open(path, "rb") as fh:
        ranges = plan_ranges(fh, size, range_bytes, cuts)
    got = survey(_numbered(path, size, gz), display, [r[2] for r in ranges[1:]])
    if not got["ranged"]:
        return got, []
    moved = {int(k): v for k, v in got["moved"].items()}
    if not moved:
        return got, ranges
    # A cut inside a joined record goes to the line after its last part; ranges left empty go.
    starts: list[tuple[int, int]] = []  # (first line, first byte)
    with open(path, "rb") as fh:
        for start, _end, first_no, _owned in ranges:
            line = moved.get(first_no, first_no)
            if starts and line <= starts[-1][0]:
                continue
            byte = start if line == first_no else skip_lines(fh, start, line - first_no, size)
            if byte >= size:
                break
            starts.append((line, byte))
    total = ranges[-1][2] + ranges[-1][3]
    out = []
    for i, (line, byte) in enumerate(starts):
        nxt_line, nxt_byte = starts[i + 1] if i + 1 < len(starts) else (total, size)
        out.append((byte, nxt_byte, line, nxt_line - line))
    return got, out


def stream_head(path: str, size: int, gz: bool, range_bytes: int) -> tuple[str | None, list[tuple[int, int]]]:
    """The stream's grammar key from its first lines, and its ranges as bytes (first byte, end byte) when the key
    allows a survey by ranges (``survey_part`` each, ``plan_from_parts`` of them); no ranges when it does not (no
    grammar, an export in no order: ``plan_stream`` says so at once). A gzip stream is one range. Lines are not
    counted here: the ranges' surveys count theirs (at 2 GB the count was ~1 CPU s on the driver before any
    survey task started)."""
    key, _head = detect_head(_numbered(path, size, gz))
    if key is None or GRAMMARS[key].reorder:
        return key, []
    if gz:
        return key, [(0, size)]
    with open(path, "rb") as fh:
        return key, byte_ranges(fh, size, range_bytes)


def survey_part(path: str, display: str, size: int, gz: bool, key: str, start: int, stop: int) -> dict:
    """``survey_range`` of the lines that start in bytes [``start``, ``stop``) of the stream (all of a gzip one),
    read from the file and numbered from 1 (``plan_from_parts`` numbers them in the stream); ``owned``: how many
    lines that is."""
    routed = route_of(GRAMMARS[key]) is not None
    if gz or routed:
        # read to the range's end (the stream's, gzip) and counted on the way: a block holds no line past it
        owned = None
        end = OWN_ALL
    else:
        with open(path, "rb") as fh:
            owned = count_lines(fh, start, stop, size)
        end = owned + 1
    last = [0]
    until = None if gz else stop

    # A block the grammar can survey as bytes (``Grammar.split_raw``) is not decoded unless it must be.
    read_blocks = raw_line_blocks if split_raw_of(GRAMMARS[key]) is not None else line_blocks

    def blocks() -> Iterator[tuple[int, list[str] | RawBlock]]:
        with open(path, "rb") as fh:
            chunks = gunzip_stream(fh, size, ReadProblems()) if gz else file_chunks(fh, start, stop=until)
            for first, lines in read_blocks(chunks, ReadProblems(), MAX_LINE_CHARS):
                last[0] = first - 1 + (len(lines.ends) if type(lines) is RawBlock else len(lines))
                yield first, lines

    def numbered() -> Iterator[tuple[int, str]]:
        # on past the range's end, up to LOOKAHEAD_LINES, to see a record begun in it end
        with open(path, "rb") as fh:
            chunks = gunzip_stream(fh, size, ReadProblems()) if gz else file_chunks(fh, start)
            for first, lines in line_blocks(chunks, ReadProblems(), MAX_LINE_CHARS):
                for n, text in enumerate(lines, first):
                    if n >= end + LOOKAHEAD_LINES:
                        return
                    last[0] = min(n, end - 1)
                    yield n, text

    if routed:
        got = survey_blocks(blocks(), display, key, end)
    else:
        got = survey_range(numbered(), display, key, end)
    got["owned"] = last[0] if owned is None else owned
    return got


def _numbered_from(part: dict, before: int) -> dict:
    """A range's survey (``survey_part``, numbered from 1) numbered as lines of the stream, ``before`` lines
    before its first."""
    for src in part["sources"].values():
        src["first"] += before
        src["last"] += before
        for found in src["ids"].values():
            found[1] += before
    return part


def plan_from_parts(path: str, display: str, size: int, gz: bool, range_bytes: int, key: str,
                    ranges: list[tuple[int, int]], parts: list[dict]) -> tuple[dict, list]:
    """``plan_stream``'s answer from the surveys of ``stream_head``'s ranges (in file order): the ranges numbered
    by the lines the surveys counted; the one pass of ``plan_stream`` itself when a record crosses a range's
    end."""
    lines = 0
    numbered = []
    for (start, stop), part in zip(ranges, parts):
        numbered.append((start, stop, lines + 1, part["owned"]))
        _numbered_from(part, lines)
        lines += part["owned"]
    got = merge_surveys(key, parts, lines)
    if got is None:
        return plan_stream(path, display, size, gz, range_bytes)
    if gz:
        numbered = [(0, size, 1, OWN_ALL)]
    return got, (numbered if got["ranged"] else [])
