"""Every TIMECODE frame a run took, as (extended timecode, arrival on the run's clock), kept as two flat arrays.

A run keeps them to its end: the tick fit over its whole length (inputlog.py), validity by cause's frame
envelope (framearrivals.py), the tick estimate's error and the worst case over time's clock (tickestimate.py) all
read them once the run is over. About 14 frames a second on the AVR profiler, 50,000 an hour; as a list of Python
tuples each frame cost some 120 bytes (a tuple, an int and a float object, the list's slot) and was the one thing
a run on the profiler's histogram alone still grew by (10^7 events at 1 kHz: the run's process 41 -> 58 MB,
docs/long-runs.md). Here a frame is 16 bytes: an `array('q')` of ticks and an `array('d')` of arrivals.

It reads as the sequence of pairs it replaces (`for tc, at in arrivals`, `len`, `==`), and as numpy columns for
the figures computed over all of them (`columns`)."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

import numpy as np


class TimecodeArrivals:
    """(timecode, arrival) pairs in arrival order, as two arrays. Appended to by the run's thread alone."""

    __slots__ = ("ticks", "at")

    def __init__(self, pairs: Iterable[tuple[int, float]] = ()) -> None:
        self.ticks = array("q")        # the extended timecode of each frame
        self.at = array("d")           # its arrival, seconds on the run's clock
        for tc, at in pairs:
            self.append(tc, at)

    def append(self, tc: int, at: float) -> None:
        self.ticks.append(tc)
        self.at.append(at)

    def __len__(self) -> int:
        return len(self.ticks)

    def __iter__(self) -> Iterator[tuple[int, float]]:
        return zip(self.ticks, self.at)

    def __getitem__(self, i: int) -> tuple[int, float]:
        return self.ticks[i], self.at[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TimecodeArrivals):
            return self.ticks == other.ticks and self.at == other.at
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None                    # type: ignore[assignment]   (mutable, like the list it replaces)

    def __repr__(self) -> str:
        return f"TimecodeArrivals({len(self)} frames)"

    def columns(self) -> tuple[np.ndarray, np.ndarray]:
        """(ticks, arrivals) as numpy arrays of their own (copies: the run's thread may still append to these)."""
        return np.array(self.ticks, dtype=np.int64), np.array(self.at, dtype=np.float64)

    def window(self, start: float, last_tc: int | None) -> "TimecodeArrivals":
        """The frames that arrived from `start` (the run clock when generation began) and are of ticks up to
        `last_tc` (the last event's; None: no upper end)."""
        ticks, at = self.columns()
        keep = at >= start
        if last_tc is not None:
            keep &= ticks <= last_tc
        out = TimecodeArrivals()
        out.ticks.frombytes(ticks[keep].tobytes())
        out.at.frombytes(at[keep].tobytes())
        return out


def as_columns(arrivals: TimecodeArrivals | Iterable[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    """The ticks and arrivals of `arrivals` (a TimecodeArrivals or any sequence of pairs) as numpy columns."""
    if isinstance(arrivals, TimecodeArrivals):
        return arrivals.columns()
    pairs = list(arrivals)
    return (np.array([tc for tc, _ in pairs], dtype=np.int64), np.array([at for _, at in pairs], dtype=np.float64))


__all__ = ["TimecodeArrivals", "as_columns"]
