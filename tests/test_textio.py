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
def test_whole_lines_are_the_streaming_lines(data):
    from parsers.common.textio import whole_lines

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
])
def test_whole_lines_leaves_the_uncommon_to_the_streaming_reader(data):
    from parsers.common.textio import whole_lines

    p = ReadProblems()
    assert whole_lines(data, p, 100) is None
    assert p == ReadProblems()


def test_whole_lines_holds_no_payload_over_its_cap(monkeypatch):
    import parsers.common.textio as textio

    monkeypatch.setattr(textio, "WHOLE_MAX_BYTES", 10)
    assert textio.whole_lines(b"0123456789\n", ReadProblems(), 100) is None
    assert textio.whole_lines(gzip.compress(b"0123456789\n"), ReadProblems(), 100) is None
    assert textio.whole_lines(b"012345678\n", ReadProblems(), 100) is not None
