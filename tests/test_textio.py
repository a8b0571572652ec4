import gzip

import pytest

from parsers.common.textio import ReadProblems, iter_raw_lines


def lines(data):
    p = ReadProblems()
    return list(iter_raw_lines(data, p)), p


def test_crlf_lone_cr_and_missing_final_newline():
    out, p = lines(b"a\r\nb\rc\nd")
    assert out == [b"a", b"b", b"c", b"d"] and not p.errors


def test_gzip_multi_member_is_read_whole():
    out, p = lines(gzip.compress(b"one\ntwo\n") + gzip.compress(b"three\n"))
    assert out == [b"one", b"two", b"three"] and not p.errors


def test_truncated_gzip_keeps_readable_lines_and_reports():
    body = b"".join(b"line %d of the log\n" % i for i in range(5000))
    gz = gzip.compress(body)
    out, p = lines(gz[: len(gz) // 2])
    assert 100 < len(out) < 5000
    assert out[0] == b"line 0 of the log"
    assert any("truncated" in e for e in p.errors)


def test_trailing_garbage_after_gzip_is_reported_not_parsed():
    out, p = lines(gzip.compress(b"x\ny\n") + b"GARBAGE!")
    assert out == [b"x", b"y"]
    assert p.errors and "trailing garbage" in p.errors[0] and "byte" in p.errors[0]


def test_crlf_split_across_decompression_chunks():
    body = b"a" * ((1 << 20) - 1) + b"\r\nb\r\n"
    out, _ = lines(gzip.compress(body))
    assert [len(x) for x in out] == [(1 << 20) - 1, 1]


def _reference(data: bytes, max_line: int):
    from parsers.common.textio import decode_line

    p = ReadProblems()
    lines = [decode_line(r, i, p) for i, r in enumerate(iter_raw_lines(data, p, max_line=max_line), 1)]
    return lines, p


@pytest.mark.parametrize("data", [
    b"", b"\n", b"a\nb\n", b"a\nb", b"a\n\n\nb\n", "h\u00e9llo\nw\u00f6rld".encode(), b"\ta\x01b\n",
    gzip.compress(b"x\ny\nz"), gzip.compress(b"x\n") + gzip.compress(b"y\n"), gzip.compress(b"x\n") + b"\x00" * 8,
])
@pytest.mark.parametrize("compiled", [True, False], ids=["C", "Python"])
def test_whole_lines_are_the_streaming_lines(data, compiled, monkeypatch):
    from parsers.common import textio
    from parsers.common.textio import whole_lines

    monkeypatch.setattr(textio, "COMPILED", compiled)
    p = ReadProblems()
    got = whole_lines(data, p, 100)
    lines, ref = _reference(data, 100)
    assert got is not None
    assert got[0] == lines
    assert p.unterminated_line == ref.unterminated_line
    assert got[1] == ("\x01" in "".join(lines))


@pytest.mark.parametrize("data", [
    b"a\r\nb\r\n",  # CR: the streaming reader's line endings
    b"caf\xe9\n",  # not UTF-8: read line by line as Latin-1
    b"x" * 101 + b"\n",  # longer than max_line: cut and reported
    "\u00e9".encode() * 51 + b"\n",  # 51 characters but 102 bytes: max_line counts bytes
    gzip.compress(b"x\ny\n")[:-5],  # truncated gzip: reported where it happens
    gzip.compress(b"x\n") + b"junk",  # trailing garbage
    b"a\n" + b"x" * 101,  # the longest line is the last, unterminated
    b"a\n" * 40 + b"b\r",  # CR in the last bytes, after the last whole 8-byte word
])
@pytest.mark.parametrize("compiled", [True, False], ids=["C", "Python"])
def test_whole_lines_leaves_the_uncommon_to_the_streaming_reader(data, compiled, monkeypatch):
    from parsers.common import textio
    from parsers.common.textio import whole_lines

    monkeypatch.setattr(textio, "COMPILED", compiled)
    p = ReadProblems()
    assert whole_lines(data, p, 100) is None
    assert p == ReadProblems()


def test_whole_lines_holds_no_payload_over_its_cap(monkeypatch):
    import parsers.common.textio as textio

    monkeypatch.setattr(textio, "WHOLE_MAX_BYTES", 10)
    assert textio.whole_lines(b"0123456789\n", ReadProblems(), 100) is None
    assert textio.whole_lines(gzip.compress(b"0123456789\n"), ReadProblems(), 100) is None
    assert textio.whole_lines(b"012345678\n", ReadProblems(), 100) is not None


def _survey_reference(payload: bytes) -> tuple[bool, bool, int]:
    """What whole_lines asked of a payload in Python: CR in it, a control byte other than tab and LF (textio's
    _CTRL_BYTES), its longest line in bytes (the stretch after the last LF counted)."""
    ctrl = bytes([*range(0, 9), *range(11, 32)])
    return b"\r" in payload, len(payload.translate(None, ctrl)) != len(payload), max(map(len, payload.split(b"\n")))


def _payloads():
    yield from (b"", b"\n", b"\n\n", b"abc", b"a\tb\n", "caf\u00e9 \u2603\n".encode(), bytes(range(256)))
    # every control byte at every offset of an 8-byte word, and in a tail shorter than a word
    for c in [*range(0, 32), 0x7f, 0x80, 0xff]:
        for at in range(0, 19):
            body = bytearray(b"0123456789abcdefghij\n")
            body[at] = c
            yield bytes(body)
            yield bytes(body[:at + 1])
    # the longest line at the start, the middle, the end (terminated or not), across word boundaries
    for k in range(1, 20):
        yield b"x" * k + b"\n" + b"y" * (k // 2) + b"\n"
        yield b"y\n" + b"x" * k + b"\nz\n"
        yield b"y\n" * k + b"x" * (k + 3)


def test_the_compiled_survey_is_the_python_one():
    from parsers.common.textio import _lines

    assert _lines is not None, "the C extension was not built (pip install -e . builds it)"
    for payload in _payloads():
        assert _lines.survey(payload) == _survey_reference(payload), payload


def test_the_compiled_survey_of_a_real_log():
    """A broker log as it was written (tabs in a KafkaConfig dump; REAL_LOGS .../server.log.2025-02-07-12.gz)."""
    from conftest import REAL_LOGS
    from parsers.common.textio import _lines

    path = REAL_LOGS / "BetrajJ__kafka-kraft/kafka/logs/server.log.2025-02-07-12.gz"
    if not path.exists():
        pytest.skip("shared real_logs absent")
    payload = gzip.decompress(path.read_bytes())
    assert _lines.survey(payload) == _survey_reference(payload)
    for bad in (b"\r", b"\x1b"):  # a CR or an escape byte anywhere is seen
        for at in (0, len(payload) // 3 + 5, len(payload) - 1):
            damaged = payload[:at] + bad + payload[at:]
            assert _lines.survey(damaged) == _survey_reference(damaged)
