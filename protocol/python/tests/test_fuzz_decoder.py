"""Hypothesis campaign on the Python decoder. `make test` runs a short one; `make fuzz` a long one.

MMRIG_FUZZ_EXAMPLES sets the examples per property; the number actually run is appended to
build/fuzz/hypothesis.txt so the campaign's size is a measured figure, not a setting.
"""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmproto import MESSAGE_TYPES, StreamDecoder
from mmproto.messages import Message

EXAMPLES = int(os.environ.get("MMRIG_FUZZ_EXAMPLES", "300"))
REPORT = Path(__file__).resolve().parents[3] / "build" / "fuzz" / "hypothesis.txt"
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
                    database=None)
_LIMITS = {"u8": 0xFF, "u16": 0xFFFF, "u32": 0xFFFFFFFF}


@st.composite
def messages(draw: st.DrawFn) -> tuple[int, Message]:
    cls = draw(st.sampled_from(sorted(MESSAGE_TYPES.values(), key=lambda c: c.TYPE)))
    values = [draw(st.integers(0, _LIMITS[kind])) for _, kind in cls.FIELDS]
    return draw(st.integers(0, 255)), cls(*values)


class Tally:
    def __init__(self, name: str) -> None:
        self.name, self.count = name, 0

    def __enter__(self) -> "Tally":
        return self

    def __exit__(self, *exc: object) -> None:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        with REPORT.open("a") as out:
            out.write(f"{self.name} {self.count}\n")
        print(f"hypothesis: {self.name}: {self.count} examples")


@pytest.mark.fuzz
def test_arbitrary_bytes_never_raise_and_every_frame_is_accounted() -> None:
    with Tally("arbitrary_bytes") as tally:
        @SETTINGS
        @given(st.lists(st.binary(max_size=80), max_size=12))
        def prop(chunks: list[bytes]) -> None:
            tally.count += 1
            decoder = StreamDecoder()
            received = [r for chunk in chunks for r in decoder.feed(chunk)]
            data = b"".join(chunks)
            complete = [f for f in data.split(b"\x00")[:-1] if f]
            c = decoder.counters
            assert c.frames_ok == len(received)
            assert c.frames_ok + c.frames_dropped == len(complete)
            assert c.bytes_dropped <= sum(len(f) for f in complete)
        prop()


@pytest.mark.fuzz
def test_garbage_spoils_at_most_one_frame() -> None:
    with Tally("resync_after_garbage") as tally:
        @SETTINGS
        @given(st.binary(max_size=120), messages(), messages())
        def prop(garbage: bytes, first: tuple[int, Message], second: tuple[int, Message]) -> None:
            tally.count += 1
            decoder = StreamDecoder()
            got = decoder.feed(garbage + first[1].wire(first[0]) + second[1].wire(second[0]))
            assert got and got[-1].message == second[1] and got[-1].seq == second[0]
        prop()


@pytest.mark.fuzz
def test_round_trip_of_every_message() -> None:
    with Tally("round_trip") as tally:
        @SETTINGS
        @given(st.lists(messages(), min_size=1, max_size=8), st.integers(1, 7))
        def prop(batch: list[tuple[int, Message]], split: int) -> None:
            tally.count += 1
            wire = b"".join(msg.wire(seq) for seq, msg in batch)
            decoder = StreamDecoder()
            got = [r for i in range(0, len(wire), split) for r in decoder.feed(wire[i:i + split])]
            assert [(r.seq, r.message) for r in got] == batch
            assert decoder.counters.frames_dropped == 0
        prop()
