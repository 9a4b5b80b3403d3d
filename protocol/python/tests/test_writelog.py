"""What a link wrote (mmproto.writelog): each write's bytes found by its stream and offset, in order with its
moment and rate; the last KEEP writes only, the ones before counted and their bytes read as none, whatever the
run's length."""

from __future__ import annotations

from mmproto.writelog import WriteLog


def test_each_write_is_found_by_its_stream_and_offset() -> None:
    log = WriteLog()
    log.add(1, 0, b"abc", 9600, 10.0)
    log.add(1, 3, b"defg", 9600, 10.5)
    log.add(2, 0, b"xy", 500000, 11.0)
    assert list(log.writes()) == [(1, 0, 3, 9600, 10.0), (1, 3, 4, 9600, 10.5), (2, 0, 2, 500000, 11.0)]
    assert log.get(1)[3:7] == b"defg" and log[2][0:2] == b"xy" and bytes(log[1]) == b"abcdefg"
    assert log.get(3, b"")[0:2] == b"" and log.dropped == 0 and len(log) == 3


def test_only_the_last_writes_are_kept_and_the_dropped_ones_read_as_none() -> None:
    log = WriteLog(keep=8)
    for k in range(100):
        log.add(1 if k < 50 else 2, 4 * (k % 50), bytes([k]) * 4, 9600, float(k))
    assert len(log) <= 8 + 2 and log.dropped == 100 - len(log)
    kept = list(log.writes())
    assert [w[4] for w in kept] == [float(k) for k in range(100 - len(log), 100)]
    for gen, offset, size, _, began in kept:
        assert log.get(gen)[offset:offset + size] == bytes([int(began)]) * 4
    assert 1 not in log.streams                          # no write of the first stream is left: its bytes went too
    assert log[2][0:4] == b""                            # a dropped write's bytes: none, so a record knows
    assert len(log[2].data) == 4 * len(log)              # the kept writes' bytes, no more
