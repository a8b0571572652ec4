import gzip

from parsers.textio import ReadProblems, iter_raw_lines


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
