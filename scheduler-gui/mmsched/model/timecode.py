"""The scheduler's timecode thread (paper Table 1): the profiler's TIMECODE frames extended and
tracked, and the estimate of when each tick began on this host's clock.

Tick-start estimation. The profiler sends TIMECODE right after its output changed, so a frame for tick
T completes on the PC at start(T) + wire time (10 bytes, 10.417 ms at 9600 baud) + delays (a RESULT
already on the line, the OS, the bench's lag). Delays only ever add, so each frame gives an upper bound
on the tick's start; `start(T) = base + T * tick`, and the estimate of `base` is the smallest bound over
the last `window` frames (a minimum filter: robust to the long tail of delays, and it follows what is left
of the drift between the node's crystal and the PC).

The tick length is not taken on trust from HELLO: a board's crystal or resonator is off (a Mega's
resonator by up to 0.5 %), and with the nominal length the minimum filter lags the drift by up to `window`
ticks' worth of it (0.5 % slow: FIREs 2.4-5.5 ms early). Once `fit_min_frames` frames have arrived on one
tick grid, the length is the lower-envelope fit of the arrivals (tickfit.py) over the last `fit_window`
frames; before that, and for a fit more than `fit_max_offset` from nominal (which no real clock is: a
fault), the nominal length. `fit_ppm` says how fast the profiler's clock runs against this host's.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from mmproto import HELLO_FLAG_8051, Hello, Timecode, extend_timecode
from mmproto.wiretime import wire_time_s

from .tickfit import lower_envelope_slope


# How much later than its wire time a profiler's TIMECODE frame is complete, at the least: the AVR profiler's
# UART interrupt sends the 10 bytes back to back (measured in the bench's one-node mode: tick edge to the last
# stop bit 10.405 ms at 9600 baud, every tick, against a wire time of 10.417 ms: nothing to add); the 8051
# sends each byte when its foreground loop has encoded it and sees TI, ~0.19 ms after the last one (run51 over
# 842 ticks at 9600 baud: 12.344 / 12.420 / 12.845 ms min / median / max). The least is what is added: each
# arrival then stays an upper bound of its tick's start. Without it normal mode's FIREs with the 8051 went out
# 2 ms late, every one `late`. (The 8051's gaps are its loop's, so they are taken as the same at other rates.)
TIMECODE_LEAD_S = {"avr": 0.0, "8051": 0.001927}


def timecode_lead_s(hello: Hello) -> float:
    """TIMECODE_LEAD_S for the profiler whose HELLO this is (flags bit 2: the 8051 target)."""
    return TIMECODE_LEAD_S["8051" if hello.flags & HELLO_FLAG_8051 else "avr"]


def round256(d: int) -> int:
    """The nearest multiple of 256: two nodes' extended timecodes differ by one where their low bytes agree."""
    return ((d + 128) // 256) * 256


@dataclass
class TimecodeTracker:
    tick_s: float
    baud: int = 9600
    lead_s: float = 0.0            # TIMECODE_LEAD_S of this profiler
    window: int = 16
    fit_window: int = 512          # 36 s of ticks: the fit's precision grows with its span
    fit_min_frames: int = 64       # 4.6 s: simulated 0..3 ms delays and stalls, the start 2 ticks ahead within -54 us
                                   # over 15 runs (32 frames: -120 us, more than the bench's least FIRE latency)
    fit_max_offset: float = 0.02   # a fit further than 2 % from nominal is a fault, not a clock
    current: int | None = field(default=None, init=False)   # extended timecode of the last frame
    frames: int = field(default=0, init=False)
    jumps: int = field(default=0, init=False)                # frames that were neither +0 nor +1
    disagreements: int = field(default=0, init=False)        # frames whose own count was not our extension
    fits_rejected: int = field(default=0, init=False)        # fits past fit_max_offset (nominal used instead)
    fitted_tick_s: float | None = field(default=None, init=False)   # None: not fitted yet
    _bases: deque = field(default_factory=deque, init=False)    # (timecode, arrival - wire), last `window`
    _points: deque = field(default_factory=deque, init=False)   # the same, last `fit_window`, one tick grid

    @classmethod
    def for_profiler(cls, hello: Hello) -> "TimecodeTracker":
        """The tracker of the profiler that said this HELLO: its tick, baud and TIMECODE lead."""
        return cls(hello.tick_counts / hello.timer_hz, hello.baud, lead_s=timecode_lead_s(hello))

    @property
    def wire_s(self) -> float:
        """The least time from a tick's start to its TIMECODE frame's last stop bit: the wire time and the lead."""
        return wire_time_s(Timecode, self.baud) + self.lead_s

    def disagrees(self, timecode: int) -> bool:
        """Whether the profiler's own 32-bit count differs from our extension of its low byte (SPEC.md
        section 7): frames lost on the line do not make it differ (fewer than 256 ticks), a reset of the
        profiler (the count went back) or a fault of its count does. The runner handles it as a fault."""
        return self.current is not None and extend_timecode(self.current, timecode & 0xFF) != timecode

    def restart(self) -> None:
        """The profiler reset: its count starts again, and so does the estimate of the tick's start."""
        self.current = None
        self._bases.clear()
        self._points.clear()
        self.fitted_tick_s = None

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
            if ext <= self.current:   # went back: another grid; lost frames leave the grid, and the fit, as they were
                self._points.clear()
                self.fitted_tick_s = None
        self.current = ext
        self.frames += 1
        point = (ext, arrived_at - self.wire_s)
        self._bases.append(point)
        while len(self._bases) > self.window:
            self._bases.popleft()
        self._points.append(point)
        while len(self._points) > self.fit_window:
            self._points.popleft()
        self._refit()
        return ext

    def _refit(self) -> None:
        if len(self._points) < self.fit_min_frames:
            return
        slope = lower_envelope_slope(list(self._points))
        if slope is None:
            return
        if abs(slope / self.tick_s - 1.0) > self.fit_max_offset:
            self.fits_rejected += 1
            self.fitted_tick_s = None
            return
        self.fitted_tick_s = slope

    @property
    def tick_len_s(self) -> float:
        """The tick length in use: fitted from the arrivals once there are enough, else HELLO's."""
        return self.fitted_tick_s if self.fitted_tick_s is not None else self.tick_s

    @property
    def fitted(self) -> bool:
        return self.fitted_tick_s is not None

    @property
    def fit_ppm(self) -> float | None:
        """How fast the profiler's clock runs against this host's, in ppm (+: fast, its ticks shorter than
        nominal; the sign of the bench's --ppm-profiler). None before the fit."""
        return None if self.fitted_tick_s is None else (self.tick_s / self.fitted_tick_s - 1.0) * 1e6

    def _base(self) -> float:
        tick = self.tick_len_s
        # the frame's wire time is in the profiler's clock too: its UART shifts bits at its own crystal's rate, so
        # a profiler 0.5 % fast completes a 10.4 ms TIMECODE 52 us sooner than nominal (points hold arrival - the
        # nominal wire time; without this, FIREs went out 10-43 us early at +5000 ppm on the bench)
        wire_fix = self.wire_s * (tick / self.tick_s - 1.0)
        return min(y - x * tick for x, y in self._bases) - wire_fix

    def basis(self) -> tuple[int, float]:
        """The frame the estimate of tick starts rests on now (the minimum filter's: the frame of the window that
        met the least delay): its tick and when it was complete at the PC (mmsched.verdict.validity)."""
        tick = self.tick_len_s
        x, y = min(self._bases, key=lambda p: p[1] - p[0] * tick)
        return x, y + self.wire_s

    def last_arrival(self) -> float:
        """When the newest frame (tick `current`) was complete at the PC."""
        return self._bases[-1][1] + self.wire_s

    @property
    def ready(self) -> bool:
        return self.current is not None and len(self._bases) > 0

    def tick_start(self, timecode: int) -> float:
        """Estimated host time (time.monotonic) at which tick `timecode` began."""
        if not self._bases:
            raise RuntimeError("no TIMECODE frame yet")
        return self._base() + timecode * self.tick_len_s

    def moment_start(self, timecode: int, into: float) -> float:
        """Estimated host time of the moment `into` ticks (0..1) after tick `timecode` began: a grid's moment
        (grid.py) is placed by the tick length in use, so a crystal off by 0.5 % does not move it."""
        return self.tick_start(timecode) + into * self.tick_len_s

    def phase(self, now: float, timecode: int | None = None) -> float:
        """How far into tick `timecode` (default: the current one) `now` is, in ticks (0..1 normally)."""
        tc = self.current if timecode is None else timecode
        assert tc is not None
        return (now - self.tick_start(tc)) / self.tick_len_s

    def now_tc(self, now: float) -> int:
        """The tick in force at host time `now` by the estimate (may be ahead of `current`, whose
        frame is still on the wire during the first 10 ms of every tick)."""
        return int((now - self._base()) // self.tick_len_s)
