"""`mmrig run`'s live progress line on a terminal, as cyclictest's: one line, rewritten in place, of fixed-width
fields that fit 80 columns whole: the events done of the total, the share on time, the average and maximum
latency, the events a second over the last second (a kilohertz run's pace at a glance), the time left and the
bench's lag. A wider terminal (shutil.get_terminal_size) also gets the run's name, the on-time count, the minimum,
the p99, the lag's p99 and the time so far; a field that does not fit is left out whole, never cut.

`ProgressLine.observer` is the Runner's observer (runner.py: called from the run's threads with
("event", Event), ("timecode", tc), ("phase", ...), and in normal mode before it fires ("tick_fit", (have, need)):
while the tick length is fitted from the TIMECODEs the line says so instead of its zeros): it only takes a few fields of a finished event under a
lock, so it costs the run next to nothing. A thread of its own redraws the line at most `interval` apart (5
times a second) when something changed, and asks `lag()` (the endpoint's health: a round trip to the bench)
at most once a second, so neither ever runs in the run's thread. The statistics are `mmanalysis.latstats`'s.

The command line makes one only when stderr is a terminal (and not -q, not --json): nothing of it ever goes
to a file or a pipe. `print_above()` writes a log line above it; `close()` erases it.
"""

from __future__ import annotations

import math
import shutil
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import IO, Any, Callable

import numpy as np

from mmanalysis.latstats import is_measured

CLEAR = "\r\x1b[K"


def fmt_us(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if v < 10:
        return f"{v:.3f} us"
    return f"{v:.1f} us" if v < 1000 else f"{v / 1000:.2f} ms"


def tick_fit_words(have: int, need: int) -> str:
    """What a normal run is doing before it fires, in the line and in the GUI's progress alike: its tick fit's
    TIMECODEs so far of those it needs (about 4.6 s), not a line of zeros or an estimate that looks stuck."""
    return f"waiting for the tick fit ({have} of {need} TIMECODEs)"


def fmt_num(v: float | None) -> str:
    """A latency in us in at most 5 characters, for a fixed-width field: 0.000, 49.50, 999.9, 12345, then 0.15s."""
    if v is None or math.isnan(v):
        return "-"
    if v < 10:
        return f"{v:.3f}"
    if v < 100:
        return f"{v:.2f}"
    if v < 1000:
        return f"{v:.1f}"
    return f"{v:.0f}" if v < 99_999.5 else f"{v / 1e6:.2f}s"


def fmt_left(s: float) -> str:
    """A time left in at most 4 characters: 9.5s, 42s, 17m, 3h."""
    if s < 10:
        return f"{s:.1f}s"
    if s < 99.5:
        return f"{s:.0f}s"
    return f"{s / 60:.0f}m" if s < 99.5 * 60 else f"{s / 3600:.0f}h"


@dataclass
class Field:
    """One part of the line: its text (its width fixed for the run), and its rank: 0 for the fields an 80-column
    terminal shows, 1.. for those a wider one adds, in that order."""

    text: str
    rank: int = 0


def compose(fields: list[Field], width: int | None) -> str:
    """The fields that fit `width` whole, by rank (of equal rank the rightmost goes first), in their order, two
    spaces apart, or one where that keeps every field of rank 0 (an 80-column terminal); every field when width is
    None."""
    def fitted(sep: str) -> list[int]:
        keep = list(range(len(fields)))
        if width is not None:
            for i in sorted(keep, key=lambda i: (-fields[i].rank, -i)):
                if sum(len(fields[k].text) for k in keep) + len(sep) * (len(keep) - 1) <= width:
                    break
                keep.remove(i)
        return keep

    essential = {i for i, f in enumerate(fields) if f.rank == 0}
    keep = fitted("  ")
    sep = "  " if essential <= set(keep) else " "
    return sep.join(fields[i].text for i in (keep if sep == "  " else fitted(sep)))


class ProgressLine:
    def __init__(self, stream: IO[str], total: int | None, lag: Callable[[], str | None] | None = None,
                 interval: float = 0.2, lag_every: float = 1.0, name: str = "",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.total, self.lag, self.name, self.clock = stream, total, lag, name, clock
        self.interval, self.lag_every = interval, lag_every
        self._lock = threading.Lock()          # the counts (observer vs. drawer)
        self._out = threading.Lock()           # the terminal (drawer vs. print_above)
        self._seen: set[int] = set()
        self._lat: list[float] = []
        self._counted: Any = None             # the profiler's last HIST_SUMMARY (a series on its histogram alone)
        self._p99: float | None = None
        self._top: float | None = None
        self._low: float | None = None
        self._avg: float | None = None
        self._on_time = 0
        self._fit: tuple[int, int] | None = None   # normal mode waiting for its tick fit: TIMECODEs (have, need)
        self._dirty = False
        self._lag_text: str | None = None
        self._shown = ""
        self._t0 = clock()
        self._marks: deque[tuple[float, int]] = deque()   # (time, events done) at each text(), the last second
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._draw_loop, name="mmrig-progress", daemon=True)
        self.draws = 0

    # ---- the run's threads ------------------------------------------------------------------------------
    def observer(self, kind: str, obj: Any) -> None:
        if kind == "profiler_report":           # a series on the profiler's histogram alone: its figures
            with self._lock:
                s = obj.summary
                measured = s is not None and s.ok + s.late
                self._counted = s
                self._p99 = obj.percentile_us(0.99)
                self._top = obj.us(s.max) if measured else None
                self._low = obj.min_us()
                self._avg = obj.mean_us()
                self._dirty = True
            return
        if kind == "tick_fit":                  # normal mode gathering TIMECODEs for its tick fit: (have, need)
            have, need = obj
            with self._lock:
                self._fit = (have, need) if have < need else None
                self._dirty = True
            return
        if kind == "phase" and obj == "running":   # the run fires: whatever the fit said last
            with self._lock:
                self._fit, self._dirty = None, True
            return
        if kind != "event" or obj.outcome is None:
            return
        ev = obj.event
        if ev < 0:
            return
        with self._lock:
            if ev in self._seen:
                return
            self._seen.add(ev)
            if obj.outcome == "ok":
                self._on_time += 1
            if is_measured(obj) and obj.latency_us is not None:
                self._lat.append(float(obj.latency_us))
            self._dirty = True

    # ---- the drawing thread -----------------------------------------------------------------------------
    def text(self, width: int | None = None) -> str:
        """The line within `width` columns (fields that do not fit left out whole); every field when None."""
        with self._lock:                      # only counts under the lock: the run's threads wait on it
            done, on_time, n = len(self._seen), self._on_time, len(self._lat)
            counted, p99_counted, top_counted = self._counted, self._p99, self._top
            low_counted, avg_counted = self._low, self._avg
            fit = self._fit
        if fit is not None:
            return compose(self.waiting_fields(*fit), width)
        lat = np.array(self._lat[:n], dtype=float)     # the list only grows: its first n are settled
        nan = float("nan")
        low, avg, p99, top = ((float(lat.min()), float(lat.mean()), float(np.quantile(lat, 0.99)), float(lat.max()))
                              if n else (nan, nan, nan, nan))
        if counted is not None:               # the profiler's report (cumulative, about once a second)
            done, on_time = counted.ok + counted.late + counted.early + counted.missed, counted.ok
            p99 = p99_counted if p99_counted is not None else nan
            top = top_counted if top_counted is not None else nan
            low = low_counted if low_counted is not None else nan
            avg = avg_counted if avg_counted is not None else nan
        now = self.clock()
        rate = self.rate(now, done)
        left = (self.total - done) / rate if self.total and rate and done < self.total else None
        digits = len(str(self.total)) if self.total else 7
        # 5 characters whatever the share: 100% only when every event was on time (99.96 % shows 99.9%)
        share = ("100%" if on_time == done else f"{math.floor(1000.0 * on_time / done) / 10:.1f}%") if done else "-%"
        lag, lag_more = self.lag_fields()
        # cyclictest's fixed columns (Min / Avg / Max there; the p99 latmus users read), in us
        fields = [Field(f"{self.name}:", 3) if self.name else None,
                  Field(f"{done:>{digits}}/{self.total}" if self.total else f"{done:>{digits}} events"),
                  Field(f"ok {share:>5}"),
                  Field(f"min {fmt_num(low):>5}", 1), Field(f"avg {fmt_num(avg):>5}"),
                  Field(f"p99 {fmt_num(p99):>5}", 2), Field(f"max {fmt_num(top):>5} us"),
                  Field(f"{rate:>4.0f} ev/s" if rate is not None else "   - ev/s"),
                  Field(f"{'~' + fmt_left(left):>5} left" if left is not None else "    - left") if self.total else None,
                  Field(lag) if lag else None, Field(lag_more, 5) if lag_more else None,
                  Field(f"{now - self._t0:.0f} s", 6)]
        return compose([f for f in fields if f is not None], width)

    def lag_fields(self) -> tuple[str | None, str | None]:
        """The bench's lag as the line shows it: its largest so far (or 'lockstep'), and its p99 for wider
        terminals (lag() says 'bench lag max 312.0 us (p99 40.0 us)' or 'lockstep')."""
        text = self._lag_text
        if not text:                          # its place kept until the first answer: the fields do not move
            return (f"lag {'-':>8}" if self.lag is not None else None), None
        if not text.startswith("bench lag max "):
            return text, None
        top, _, more = text.removeprefix("bench lag max ").partition(" (")
        return f"lag {top:>8}", (f"(lag {more}" if more else None)

    def waiting_fields(self, have: int, need: int) -> list[Field]:
        """Before normal mode fires: the TIMECODEs its tick fit has of those it needs (about 4.6 s), not a line of
        zeros that looks stuck."""
        then = f", then {self.total} events" if self.total else ""
        lag, lag_more = self.lag_fields()
        fields = [Field(f"{self.name}:", 3) if self.name else None,
                  Field(f"{tick_fit_words(have, need)}{then}"),
                  Field(lag) if lag else None, Field(lag_more, 5) if lag_more else None,
                  Field(f"{self.clock() - self._t0:.0f} s", 6)]
        return [f for f in fields if f is not None]

    def rate(self, now: float, done: int) -> float | None:
        """Events ended a second, over the last second of calls (None until half a second is covered)."""
        self._marks.append((now, done))
        while len(self._marks) > 2 and now - self._marks[1][0] >= 1.0:
            self._marks.popleft()
        t0, d0 = self._marks[0]
        return (done - d0) / (now - t0) if now - t0 >= 0.5 else None

    def _width(self) -> int:
        """The terminal's width less one, so the line never wraps (shutil: COLUMNS, else the terminal's own size,
        else 80, as on a pty of no size that `script` without a terminal makes)."""
        return max(20, shutil.get_terminal_size().columns - 1)

    def draw(self) -> None:
        line = self.text(self._width())
        with self._out:
            if self._stop.is_set():
                return
            self.stream.write(CLEAR + line)
            self.stream.flush()
            self._shown = line
            self.draws += 1

    def _draw_loop(self) -> None:
        next_lag = 0.0
        first = True            # the line shows at once, then at most every `interval`
        while first or not self._stop.wait(self.interval):
            first = False
            now = time.monotonic()
            changed = False
            if self.lag is not None and now >= next_lag:
                next_lag = now + self.lag_every
                try:
                    text = self.lag()
                except Exception:  # noqa: BLE001 - a view never breaks the run
                    text = None
                changed = text != self._lag_text
                self._lag_text = text
            with self._lock:
                changed, self._dirty = changed or self._dirty or not self._shown, False
            if changed and not self._stop.is_set():
                try:
                    self.draw()
                except (OSError, ValueError):   # the terminal went away
                    return

    # ---- the command line's thread ----------------------------------------------------------------------
    def start(self) -> "ProgressLine":
        self._thread.start()
        return self

    def print_above(self, text: str) -> None:
        """A log line, written above the progress line (which the next redraw puts back)."""
        with self._out:
            self.stream.write(CLEAR + text + "\n" + self._shown)
            self.stream.flush()

    def close(self) -> None:
        """Stops redrawing and erases the line."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        with self._out:
            if self._shown:
                try:
                    self.stream.write(CLEAR)
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
            self._shown = ""

    def __enter__(self) -> "ProgressLine":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def bench_lag_text(health: Callable[[], dict[str, Any] | None]) -> Callable[[], str | None]:
    """The endpoint's health as the line's lag part: the paced bench's lag (largest so far, p99)."""
    def lag() -> str | None:
        h = health()
        if not h or h.get("lag_max_us") is None:
            return None
        p99 = h.get("lag_p99_us")
        return f"bench lag max {fmt_us(h['lag_max_us'])}" + (f" (p99 {fmt_us(p99)})" if p99 is not None else "")
    return lag


__all__ = ["ProgressLine", "bench_lag_text", "fmt_us"]
