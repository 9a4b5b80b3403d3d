"""The run's own process held off the CPU: the stretches of time in which it could not read its frames.

A frame's arrival time is when the run's reader returned with it. While the process is held off the CPU
(stopped, as the GUI's mixed-run test does to it for 5 ticks, or starved on a loaded host) nothing is read;
when it runs again it reads everything that waited in the ports at once, the executor's frames and the
profiler's TIMECODEs alike, in either order. A judgement that rests on when a frame arrived (an executor frame
stamped in a tick the PC cannot explain: recovery.check_executor_tick) then has no evidence: CI saw a FIRED of
tick 27 read after TIMECODE 32 judged a timecode fault of the nodes, and the event lost to it.

A thread beats every BEAT_S on the run's clock; a gap of more than STALL_S between two beats is a stall of
the process (the beat thread was held off as every other thread was). Runs on the wall clock only: a lockstep
bench's clock is virtual and never stalls for the run.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

BEAT_S = 0.005
# A gap this long is the process's own stall, not the scheduler's ordinary lateness (a few ms on a busy host);
# below it the executor-tick check's own slack (two ticks back) covers any late read.
STALL_S = 0.05
KEEP = 256                # the latest stalls kept (a judgement looks only at the last few ticks)


@dataclass
class StallWatch:
    clock: Callable[[], float] = time.monotonic
    stalls: list[tuple[float, float]] = field(default_factory=list)     # (last beat before, first beat after)
    _last: float | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def beat(self, now: float) -> None:
        """One beat at `now` (the thread's; tests give their own)."""
        with self._lock:
            if self._last is not None and now - self._last > STALL_S:
                self.stalls.append((self._last, now))
                del self.stalls[:-KEEP]
            self._last = now

    def covers(self, at: float, after_s: float) -> bool:
        """Was the process stalled at `at`, or did a stall end at most `after_s` before it (frames read then
        may have waited through it)?"""
        with self._lock:
            return any(start <= at <= end + after_s for start, end in reversed(self.stalls))

    def start(self) -> "StallWatch":
        self._thread = threading.Thread(target=self._run, name="mmsched-stallwatch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)

    def _run(self) -> None:
        while not self._stop.wait(BEAT_S):
            self.beat(self.clock())
