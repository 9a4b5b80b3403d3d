"""Latency of one event from the profiler's RESULT (protocol/SPEC.md section 7)."""

from __future__ import annotations

from dataclasses import dataclass

from .messages import Hello, Result


@dataclass(frozen=True)
class TimeBase:
    """The profiler's clock as its HELLO describes it."""

    timer_hz: int
    tick_counts: int

    @classmethod
    def from_hello(cls, hello: Hello) -> "TimeBase":
        return cls(hello.timer_hz, hello.tick_counts)

    @property
    def tick_s(self) -> float:
        return self.tick_counts / self.timer_hz

    def latency_counts(self, scheduled_timecode: int, result: Result, due_counts: int = 0) -> int:
        """Signed: negative means the event arrived before it was due (early). `due_counts`: the event is due
        that many counts into tick `scheduled_timecode` (0: at its start, the paper's events)."""
        return (result.timecode - scheduled_timecode) * self.tick_counts + result.counts - due_counts

    def seconds(self, timecode: int, counts: int) -> float:
        """The profiler's timer at (extended timecode, counts), in seconds since tick 0 began."""
        return (timecode * self.tick_counts + counts) / self.timer_hz

    def counts_to_us(self, counts: int) -> float:
        return counts * 1e6 / self.timer_hz


def extend_timecode(extended: int, low_byte: int) -> int:
    """Timecode extension by counting wraps: the new 32-bit count whose low byte is `low_byte`."""
    return (extended + ((low_byte - extended) & 0xFF)) & 0xFFFFFFFF
