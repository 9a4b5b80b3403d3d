"""`mmrig run`'s live progress line on a terminal, as cyclictest's: one line, rewritten in place, with the
events done of the total, how many were on time, the current p99 and maximum latency, the events a second over
the last second (a kilohertz run's pace at a glance), and the bench's lag.

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
import os
import threading
import time
from collections import deque
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
    def text(self) -> str:
        with self._lock:                      # only counts under the lock: the run's threads wait on it
            done, on_time, n = len(self._seen), self._on_time, len(self._lat)
            counted, p99_counted, top_counted = self._counted, self._p99, self._top
            low_counted, avg_counted = self._low, self._avg
            fit = self._fit
        if fit is not None:
            return self.waiting_text(*fit)
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
        total = f"/{self.total}" if self.total else ""
        share = f" ({100.0 * on_time / done:.1f} %)" if done else ""
        # cyclictest's Min / Avg / Max, and the p99 latmus users read
        parts = [f"{self.name + ': ' if self.name else ''}{done}{total} events",
                 f"on time {on_time}{share}", f"min {fmt_us(low)}", f"avg {fmt_us(avg)}", f"p99 {fmt_us(p99)}",
                 f"max {fmt_us(top)}"]
        now = self.clock()
        rate = self.rate(now, done)
        if rate is not None:
            parts.append(f"{rate:.0f} ev/s")
            if self.total and rate > 0 and done < self.total:
                left = (self.total - done) / rate
                parts.append(f"~{left:.1f} s left" if left < 10 else f"~{left:.0f} s left")
        if self._lag_text:
            parts.append(self._lag_text)
        parts.append(f"{now - self._t0:.0f} s")
        return "  ".join(parts)

    def waiting_text(self, have: int, need: int) -> str:
        """Before normal mode fires: the TIMECODEs its tick fit has of those it needs (about 4.6 s), not a line of
        zeros that looks stuck."""
        then = f", then {self.total} events" if self.total else ""
        parts = [f"{self.name + ': ' if self.name else ''}waiting for the tick fit ({have} of {need} TIMECODEs){then}"]
        if self._lag_text:
            parts.append(self._lag_text)
        parts.append(f"{self.clock() - self._t0:.0f} s")
        return "  ".join(parts)

    def rate(self, now: float, done: int) -> float | None:
        """Events ended a second, over the last second of calls (None until half a second is covered)."""
        self._marks.append((now, done))
        while len(self._marks) > 2 and now - self._marks[1][0] >= 1.0:
            self._marks.popleft()
        t0, d0 = self._marks[0]
        return (done - d0) / (now - t0) if now - t0 >= 0.5 else None

    def _width(self) -> int:
        """The terminal's width less one (so the line never wraps); 120 when it does not say (a pty with no
        size, as `script` without a terminal makes)."""
        try:
            cols = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            cols = 0
        return cols - 1 if cols >= 20 else 120

    def draw(self) -> None:
        line = self.text()[: self._width()]
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
