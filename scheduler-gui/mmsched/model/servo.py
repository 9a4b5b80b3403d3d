"""Clock discipline for normal mode: where the profiler's own FIRE stamps place each tick's start on this
host's clock (docs/normal-mode.md).

The paper's PC knows tick starts only from TIMECODE arrivals (timecode.py): every delay on the way in
(the profiler starting its frame late, the wire, the USB adapter, the OS) moves its estimate late, and it
can only ever be late, so each TIMECODE gives an *upper* bound on `base` (the host time at which tick 0
began). A FIRE gives the other side, as in a two-way time transfer (NTP, PTP): written at host time H_w,
its first start bit reaches the profiler at least the floor later, and the profiler stamps it at P seconds
of its own timer (RESULT: timecode * tick + counts / timer_hz). So

    base  >=  H_w - P + floor           (every FIRE: a lower bound on base)

with equality for a FIRE that met no delay on its way beyond the profiler's own floor (the floor
calibration's figure, 0 where there is none). The servo keeps the largest lower bound of a window of recent
FIREs, and a frequency term for the drift between the node's crystal and the host's clock.

What a host cannot know. A constant delay on the write path (the pty hop, a USB adapter's minimum) looks
exactly like an offset of the clocks; the estimate takes the fastest FIRE of its window as undelayed. A
disciplined FIRE is therefore written that constant early and lands on the tick: the figure it yields is
the variable part of the PC's cost (wake-up, write jitter) plus the profiler's floor.

Robustness. A FIRE that entered a stalled bench too early (before the bench stamped the PC's bytes on the host
clock, it put them on the line where its simulation had frozen) would make its bound too high and pull every
later FIRE early; on boards, anything that shortens one FIRE's path would do the same. A bound counts only when
a second bound of the window confirms it (lies within `tolerance_s` below it); a lone one is skipped
(`rejected`). The servo therefore never places a tick earlier than two FIREs agree it began. Which FIRE anchors
the estimate (`anchor_written_at`) is what validity by cause judges a disciplined event by (mmsched.verdict.validity).
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice

MAX_DRIFT = 200e-6          # crystals are good to ~50 ppm; a larger fitted slope is noise, not drift
BLOCK = 16                  # FIREs per drift anchor
REFIT_S = 1.0               # the drift is fitted again at most once a second of host time: at one FIRE a tick an
                            # anchor comes every 1.1 s and each is fitted as it comes; at a kilohertz one comes every
                            # 16 ms, and a fit over the 7,500 anchors of 6 spans at each cost the run's thread so
                            # much that its events went out later and later (p99 0.9 ms after 10 s, 22 ms after 90 s)
DRIFT_SPAN_S = 20.0         # fit the drift only over this much host time: over 1-2 s, a few tens of us of
                            # path noise in the anchors read as tens of ppm (measured on the paced bench,
                            # which has no drift at all: -34 and +41 ppm from 1.2 s spans)


def lower_bound(written_at: float, stamp_s: float, floor_s: float) -> float:
    """What one FIRE says of base: written at host time `written_at`, stamped at `stamp_s` of the profiler's
    timer, it began no earlier than the floor after the write (module docstring)."""
    return written_at - stamp_s + floor_s


def confirmed_max(bounds: list[float], tolerance_s: float) -> float | None:
    """The largest bound that another bound lies within `tolerance_s` below, or None."""
    s = sorted(bounds, reverse=True)
    for a, b in zip(s, s[1:]):
        if b >= a - tolerance_s:
            return a
    return None


def anchor(pts: list[tuple[float, float]], tolerance_s: float) -> tuple[float, float] | None:
    """The (host time, bound) of the confirmed largest bound of `pts`, or None."""
    b = confirmed_max([p[1] for p in pts], tolerance_s)
    return None if b is None else next(p for p in pts if p[1] == b)


def fit_drift(anchors: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of base over host time through block anchors; 0 over less than DRIFT_SPAN_S."""
    return fit_slope([a[0] for a in anchors], [a[1] for a in anchors])


def fit_slope(t: Sequence[float], b: Sequence[float]) -> float:
    """fit_drift of anchors given as their host times `t` and bases `b` (two arrays: a long run's are many)."""
    if len(t) < 3 or t[-1] - t[0] < DRIFT_SPAN_S:
        return 0.0
    tm, bm = sum(t) / len(t), sum(b) / len(b)
    den = sum((x - tm) ** 2 for x in t)
    slope = sum((x - tm) * (y - bm) for x, y in zip(t, b)) / den if den > 0 else 0.0
    return slope if abs(slope) <= MAX_DRIFT else 0.0


@dataclass
class ClockServo:
    tick_s: float
    floor_s: float = 0.0           # the profiler's own floor (floor calibration); 0 where unknown
    window: int = 16               # short: a bench that fell behind and caught up (a clock step back) is
                                   # followed within 8 FIREs (0.6 s at one a tick), not 32
    tolerance_s: float = 20e-6
    clock: float = 1.0             # host seconds a second of the profiler's timer: the run sets it from the tick
                                   # length it fitted (RunState.profiler_clock). A Mega's resonator is off by up
                                   # to 0.5 %, 25 times the drift fitted below: with the stamps taken as host
                                   # seconds, a FIRE's bound moved 355 us a tick, none agreed, and a disciplined
                                   # run on the bench's --ppm-profiler -5000 had 599 of 600 events early
    samples: int = field(default=0, init=False)
    drift: float = field(default=0.0, init=False)          # fitted slope of base over host time, beyond `clock`
    # (written_at, stamp_s) as they came: the rate is applied when a bound is wanted, so a change of `clock`
    # moves every FIRE's bound alike (by its stamp times the change: 1 ms an hour in for 0.3 ppm) and the
    # bounds' differences, which the servo compares, by the FIREs' distance times it alone
    _pts: deque = field(default_factory=deque, init=False)
    _block: list = field(default_factory=list, init=False)
    _anchors: deque = field(default_factory=deque, init=False)
    _fitted_at: float = field(default=-1e9, init=False)     # host time of the last drift fit

    def _bounds(self, pts: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
        """(written_at, bound) of FIREs given as (written_at, stamp_s), at the rate now."""
        return [(w, lower_bound(w, p * self.clock, self.floor_s)) for w, p in pts]

    def add(self, written_at: float, stamp_s: float) -> None:
        """A FIRE written at host time `written_at` that the profiler stamped at `stamp_s` of its timer."""
        p = (written_at, stamp_s)
        self._pts.append(p)
        self.samples += 1
        while len(self._pts) > self.window:
            self._pts.popleft()
        self._block.append(p)
        if len(self._block) == BLOCK:
            a = anchor(self._bounds(self._block), self.tolerance_s)
            if a is not None:
                self._anchors.append(next(q for q in self._block if q[0] == a[0]))
                while self._anchors[-1][0] - self._anchors[0][0] > 6 * DRIFT_SPAN_S:
                    self._anchors.popleft()
                if a[0] - self._fitted_at >= REFIT_S:
                    self._fitted_at = a[0]
                    self.drift = fit_drift(self._bounds(self._anchors))
            self._block = []

    def _anchor(self, at: float) -> tuple[float, float] | None:
        """(written_at, base) of the FIRE whose bound places tick 0 as seen at host time `at`: the anchor of the
        newest half of the window's (it follows drift sooner), else the whole window's; None until two agree."""
        pts = [(t, b + self.drift * (at - t)) for t, b in self._bounds(self._pts)]   # each bound carried to `at`
        return (anchor(pts[len(pts) // 2:], self.tolerance_s) if len(pts) >= 16 else None) or anchor(pts, self.tolerance_s)

    def base(self, at: float) -> float | None:
        """Where tick 0 began on the host clock, as seen at host time `at`, at the rate now; None until two FIREs
        agree."""
        a = self._anchor(at)
        return None if a is None else a[1]

    def anchor_written_at(self, at: float) -> float | None:
        """When the FIRE that anchors `base(at)` was written (its own moments are what the estimate rests on:
        mmsched.verdict.validity), or None."""
        a = self._anchor(at)
        return None if a is None else a[0]

    @property
    def ready(self) -> bool:
        return self.base(self._pts[-1][0]) is not None if self._pts else False

    def tick_start(self, timecode: int, near: float, into: float = 0.0) -> float | None:
        """Host time at which tick `timecode` began, or the moment `into` of a tick into it (`near`: a host time
        close to it, for the drift)."""
        b = self.base(near)
        return None if b is None else b + (timecode + into) * self.tick_s * self.clock


def drift_of(bounds: Iterable[tuple[float, float]], tolerance_s: float = 20e-6) -> float:
    """The drift over a whole run, for its reference (reference_bases): the slope through the anchors of each
    BLOCK of its usable FIREs' (written_at, bound), in the order given. One pass, keeping the anchors only (an
    anchor a BLOCK of FIREs, 16 bytes): a long run's FIREs are read back from its scratch file (eventstore.py)."""
    t, b = array("d"), array("d")
    block: list[tuple[float, float]] = []

    def add(a: tuple[float, float] | None) -> None:
        if a is not None:
            t.append(a[0])
            b.append(a[1])

    for p in bounds:
        block.append(p)
        if len(block) == BLOCK:
            add(anchor(block, tolerance_s))
            block = []
    if block:
        add(anchor(block, tolerance_s))
    return fit_slope(t, b)


class ReferenceWindow:
    """The budget's reference as a run's events go by in order: for event `i` written at host time `at`, the base
    of the window of usable FIREs centred on it (`half_window` before it, `half_window` + 1 from it on), each bound
    carried to `at` by the run's drift (drift_of). `good` gives the usable FIREs' (index, written_at, bound) in
    order, read ahead of the events by half a window: one pass, the window alone held."""

    def __init__(self, good: Iterator[tuple[int, float, float]], drift: float, half_window: int = 16,
                 tolerance_s: float = 20e-6) -> None:
        self._good, self.drift, self.half, self.tolerance_s = good, drift, half_window, tolerance_s
        self._before: deque[tuple[int, float, float]] = deque(maxlen=half_window)
        self._ahead: deque[tuple[int, float, float]] = deque()

    def base(self, i: int, at: float) -> float | None:
        while self._ahead and self._ahead[0][0] < i:
            self._before.append(self._ahead.popleft())
        while len(self._ahead) < self.half + 1 and (nxt := next(self._good, None)) is not None:
            (self._before if nxt[0] < i else self._ahead).append(nxt)
        near = [(t, b + self.drift * (at - t)) for _, t, b in chain(self._before, islice(self._ahead, self.half + 1))]
        a = anchor(near, self.tolerance_s)
        return None if a is None else a[1]


def reference_bases(points: list[tuple[float, float] | None], usable: list[bool], tick_s: float, floor_s: float,
                    half_window: int = 16, tolerance_s: float = 20e-6) -> list[float | None]:
    """After the run: for every FIRE (written_at, stamp_s), or None for an event without one, the base of a
    window of usable FIREs centred on it (the servo's rule, with the FIREs after it too: the budget's
    reference), with the drift fitted over the whole run. Unusable FIREs (a stall met them) get a base but
    give none. (A run's events read in passes: drift_of, then ReferenceWindow; budget.apply_budget.)"""
    def good() -> Iterator[tuple[int, float, float]]:
        return ((i, p[0], lower_bound(p[0], p[1], floor_s)) for i, p in enumerate(points)
                if p is not None and usable[i])
    window = ReferenceWindow(good(), drift_of(((t, b) for _, t, b in good()), tolerance_s), half_window,
                             tolerance_s)
    return [None if p is None else window.base(i, p[0]) for i, p in enumerate(points)]
