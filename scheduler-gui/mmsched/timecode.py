"""The scheduler's timecode thread (paper Table 1): the profiler's TIMECODE frames extended and
tracked, and the estimate of when each tick began on this host's clock.

Tick-start estimation. The profiler sends TIMECODE right after its output changed, so a frame for tick
T completes on the PC at start(T) + wire time (10 bytes, 10.417 ms at 9600 baud) + delays (a RESULT
already on the line, the OS, the bench's lag). Delays only ever add, so each frame gives an upper bound
on the tick's start; with the tick length from HELLO, `start(T) = base + T * tick_s`, and the estimate
of `base` is the smallest bound over the last `window` frames (a minimum filter: robust to the long
tail of delays, and it follows slow clock drift between the node's crystal and the PC).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from mmproto import Timecode, extend_timecode
from mmproto.wiretime import wire_time_s


def round256(d: int) -> int:
    """The nearest multiple of 256: two nodes' extended timecodes differ by one where their low bytes agree."""
    return ((d + 128) // 256) * 256


@dataclass
class TimecodeTracker:
    tick_s: float
    baud: int = 9600
    window: int = 16
    current: int | None = field(default=None, init=False)   # extended timecode of the last frame
    frames: int = field(default=0, init=False)
    jumps: int = field(default=0, init=False)                # frames that were neither +0 nor +1
    disagreements: int = field(default=0, init=False)        # frames whose own count was not our extension
    _bases: deque = field(default_factory=deque, init=False)

    @property
    def wire_s(self) -> float:
        return wire_time_s(Timecode, self.baud)

    def disagrees(self, timecode: int) -> bool:
        """Whether the profiler's own 32-bit count differs from our extension of its low byte (SPEC.md
        section 7): frames lost on the line do not make it differ (fewer than 256 ticks), a reset of the
        profiler (the count went back) or a fault of its count does. The runner handles it as a fault."""
        return self.current is not None and extend_timecode(self.current, timecode & 0xFF) != timecode

    def restart(self) -> None:
        """The profiler reset: its count starts again, and so does the estimate of the tick's start."""
        self.current = None
        self._bases.clear()

    def update(self, timecode: int, arrived_at: float) -> int:
        """One TIMECODE frame (the profiler's own 32-bit extended value) that completed at `arrived_at`.
        Returns the extended timecode. The profiler's own count is authoritative: where it disagrees with our
        extension (`disagrees`, a fault the runner has already handled) it is taken as it is."""
        if self.current is None:
            ext = timecode
        else:
            ext = extend_timecode(self.current, timecode & 0xFF)
            if ext - self.current not in (0, 1):
                self.jumps += 1          # TIMECODE frames lost on the line, or a disagreement (below)
            if ext != timecode:
                self.disagreements += 1
                ext = timecode
        if self.current is not None and ext != self.current + 1:
            self._bases.clear()  # the tick grid moved (reset, lost frames): start the estimate again
        self.current = ext
        self.frames += 1
        self._bases.append(arrived_at - self.wire_s - ext * self.tick_s)
        while len(self._bases) > self.window:
            self._bases.popleft()
        return ext

    @property
    def ready(self) -> bool:
        return self.current is not None and len(self._bases) > 0

    def tick_start(self, timecode: int) -> float:
        """Estimated host time (time.monotonic) at which tick `timecode` began."""
        if not self._bases:
            raise RuntimeError("no TIMECODE frame yet")
        return min(self._bases) + timecode * self.tick_s

    def phase(self, now: float, timecode: int | None = None) -> float:
        """How far into tick `timecode` (default: the current one) `now` is, in ticks (0..1 normally)."""
        tc = self.current if timecode is None else timecode
        assert tc is not None
        return (now - self.tick_start(tc)) / self.tick_s

    def now_tc(self, now: float) -> int:
        """The tick in force at host time `now` by the estimate (may be ahead of `current`, whose
        frame is still on the wire during the first 10 ms of every tick)."""
        base = min(self._bases)
        return int((now - base) // self.tick_s)
