"""Unit tests of the Python receiver beyond the vectors: memory bounds, timing helpers, sequence tracking."""

import pytest

from mmproto import (Hello, Result, Schedule, SeqTracker, StreamDecoder, TimeBase, Timecode, encode_frame,
                     extend_timecode)
from mmproto.framing import MAX_PAYLOAD, FrameSplitter
from mmproto.wiretime import char_time_s, wire_bytes, wire_time_s


def test_garbage_flood_without_delimiter_holds_bounded_memory() -> None:
    decoder = StreamDecoder()
    for _ in range(1000):
        assert decoder.feed(b"\x55" * 1000) == []
    assert len(decoder._splitter._pending) == 0
    received = decoder.feed(b"\x00" + Timecode(7).wire(0))
    assert [r.message for r in received] == [Timecode(7)]
    assert decoder.counters.too_long == 1
    assert decoder.counters.bytes_dropped == 1_000_000


def test_at_frame_start_follows_delimiters() -> None:
    decoder = StreamDecoder()
    wire = Timecode(1).wire(0)
    assert decoder.at_frame_start
    decoder.feed(wire[:1])
    assert not decoder.at_frame_start
    decoder.feed(wire[1:])
    assert decoder.at_frame_start


def test_splitter_reports_true_length_of_overlong_frame() -> None:
    splitter = FrameSplitter(max_encoded=5)
    assert splitter.feed(b"\x01" * 3) == []
    assert splitter.feed(b"\x01" * 4 + b"\x00") == [(b"", 7)]


def test_lost_before_is_reported_per_frame() -> None:
    decoder = StreamDecoder()
    got = decoder.feed(Timecode(1).wire(10) + Timecode(2).wire(13))
    assert [r.lost_before for r in got] == [0, 2]


def test_seq_tracker_hello_restarts_baseline() -> None:
    tracker = SeqTracker()
    assert [tracker.accept(s) for s in (0, 1, 2)] == [0, 0, 0]
    assert tracker.accept(0, is_hello=True) == 0
    assert tracker.accept(3) == 2
    assert tracker.lost == 2


@pytest.mark.parametrize("size", [0, 1, MAX_PAYLOAD + 1], ids=lambda n: f"{n}_bytes")
def test_encode_frame_refuses_out_of_range_payload(size: int) -> None:
    with pytest.raises(ValueError, match="payload"):
        encode_frame(bytes(size))


def test_encode_frame_accepts_the_largest_payload() -> None:
    assert MAX_PAYLOAD == 42  # version 3 (32 + 2 before)
    assert len(encode_frame(bytes(MAX_PAYLOAD))) == MAX_PAYLOAD + 2 + 1 + 1


def test_message_fields_are_range_checked() -> None:
    with pytest.raises(ValueError, match="event_id"):
        Schedule(tag=1, event_id=256, timecode=0)
    with pytest.raises(ValueError, match="timecode"):
        Timecode(-1)


def test_latency_of_8051_result() -> None:
    base = TimeBase(timer_hz=921_600, tick_counts=65_536)
    assert base.tick_s == pytest.approx(0.0711111, abs=1e-7)
    on_time = Result(event_id=1, flags=0, tag=0, timecode=1000, counts=36)
    assert base.counts_to_us(base.latency_counts(1000, on_time)) == pytest.approx(39.0625)
    next_tick = Result(event_id=1, flags=0, tag=0, timecode=1001, counts=0)
    assert base.latency_counts(1000, next_tick) == 65_536
    early = Result(event_id=1, flags=0, tag=0, timecode=999, counts=65_000)
    assert base.latency_counts(1000, early) < 0


def test_timebase_from_avr_hello() -> None:
    hello = Hello(2, 1, 0x100, 16_000_000, 16_000_000, 1_137_778, 9600, 1, 0)
    base = TimeBase.from_hello(hello)
    assert base.counts_to_us(16) == 1.0
    assert base.tick_s == pytest.approx(0.07111, abs=1e-5)


@pytest.mark.parametrize("start,low,expected", [
    (0, 0, 0), (0, 1, 1), (255, 0, 256), (0x1FF, 0x01, 0x201), (0xFFFFFFFF, 0x00, 0), (300, 44, 300)])
def test_extend_timecode(start: int, low: int, expected: int) -> None:
    assert extend_timecode(start, low) == expected


def test_wire_times_at_9600() -> None:
    assert char_time_s(9600) == pytest.approx(1.0417e-3, rel=1e-4)
    assert wire_bytes(Schedule) == 13
    assert wire_time_s(Schedule, 9600) == pytest.approx(13.542e-3, rel=1e-3)
