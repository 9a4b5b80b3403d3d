"""How late each TIMECODE frame of a run reached the PC against its neighbours, known once the run is over.

Validity by cause (validity.py) asks of the frame an event's tick estimate rests on: did the bench hold it back?
The byte record says which of the profiler's output bytes the bench handed over late, by their moments; but a
frame's arrival is the moment of its last byte, and the bench hands a stall's bytes over at once when it ends: a
stall inside a 10.4 ms frame holds its first bytes and leaves its last on time. Judged by every byte due near it,
such a frame voided every event placed from it (16 of a demo's 200, though their estimates were 4 us off, by the
profiler's own stamps). The frame's own lateness is what its arrival shows against the ticks on either side: the
lower envelope of their arrivals, each moved by its distance in ticks, with hindsight (the frames after it too).
The bench can have displaced the frame by no more than that excess and no more than the record's hold; the
smaller is the bench's part, the rest of a late read is the PC's own (its result in normal mode).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

from .tcarrivals import TimecodeArrivals

# how far the envelope looks on either side, in ticks: 8 ticks (0.57 s on the AVR) hold a frame the PC read at its
# usual delay even on a host busy with other work, and a stall long enough to hold all of them displaces far more
# than the bound anyway (the bench's lag bound is 1 ms)
NEIGHBOURS = 8

# how close a Basis's arrival must be to a recorded one to be that frame (the two are the same float, up to the
# estimate's adding and taking away the frame's wire time)
SAME_FRAME_S = 1e-6


@dataclass
class FrameArrivals:
    """Every TIMECODE frame of a run as (tick, arrival on the run's clock), in arrival order (the run's own
    TimecodeArrivals, or any sequence of pairs), and the tick length fitted over the run (timecode.py: a nominal
    length off by 0.5 % would move the envelope 2.8 ms over 8 ticks)."""

    arrivals: TimecodeArrivals | Sequence[tuple[int, float]]
    tick_s: float
    _frames: TimecodeArrivals = field(default_factory=TimecodeArrivals, init=False, repr=False)

    def __post_init__(self) -> None:
        # the run's own arrays are looked into as they are (no copy of a long run's frames)
        self._frames = (self.arrivals if isinstance(self.arrivals, TimecodeArrivals)
                        else TimecodeArrivals(self.arrivals))

    def _index(self, tick: int, arrived: float) -> int | None:
        ticks, at = self._frames.ticks, self._frames.at
        i = bisect.bisect_left(at, arrived - SAME_FRAME_S)
        while i < len(at) and at[i] <= arrived + SAME_FRAME_S:
            if ticks[i] == tick:
                return i
            i += 1
        return None

    def excess(self, tick: int, arrived: float) -> float | None:
        """How much later the frame of `tick` that arrived at `arrived` reached the PC than the lower envelope of
        its neighbours on the same tick grid (0: it is on the envelope), or None if it is not a frame of the run.
        Neighbours stop where the ticks go back (the profiler reset: another grid)."""
        i = self._index(tick, arrived)
        if i is None:
            return None
        ticks, at = self._frames.ticks, self._frames.at
        envelope = arrived
        for step in (-1, 1):
            j, last = i + step, tick
            while 0 <= j < len(ticks):
                tj = ticks[j]
                if (tj - last) * step <= 0 or abs(tj - tick) > NEIGHBOURS:
                    break
                envelope = min(envelope, at[j] - (tj - tick) * self.tick_s)
                last, j = tj, j + step
        return arrived - envelope


__all__ = ["FrameArrivals", "NEIGHBOURS"]
