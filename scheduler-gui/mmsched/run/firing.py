"""Normal mode's "timecode timer" (paper Table 1): the PC itself fires each event with a FIRE frame at
the moment it believes the event's tick begins.

Accuracy (the paper's slider, 0..100) decides how much CPU that moment costs: the thread sleeps
(threading.Condition.wait, i.e. a futex with a timeout) until `accuracy% of BUSY_MAX_S` before the
target, then busy-waits on time.monotonic() for the last stretch. 0 = plain timer sleep; 100 =
busy-wait over the last 20 ms of every event. The thread's own CPU time (time.thread_time) is summed,
so the cost of the setting is measured, not assumed.

What the thread does at the moment is only the write: the FIRE frame is encoded when the event is added
(its bytes come with it), and the thread asks Linux for a 1 ns timer slack (the default 50 us made every
sleeping wake-up up to 50 us late: docs/bench.md, "Normal mode: the part of the latency that is the rig's").

cyclictest's `-p PRIO -m` (`mmrig run -p/--priority, -m/--mlockall`, docs/normal-mode.md): the thread asks for
SCHED_FIFO at `priority` (for itself only: the run's other threads stay as they were) and the process locks its
memory (mlockall MCL_CURRENT | MCL_FUTURE) before the thread starts; what each got is kept (`sched`, `sched_why`,
`memory_locked`, `memory_locked_why`) for the sidecar (rtsched.py: `fifo_refusal` and `lock_memory` also let an entry
point refuse a run before it starts, as cyclictest does, when the host does not allow them).
"""

from __future__ import annotations

import heapq
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..model.event import Event
from ..host.rtsched import fifo_for, lock_memory, read_sched, set_nice, set_thread_fifo, set_thread_timer_slack_ns
from ..model.eventbytes import Basis, Sent
from ..model.tails import Tails

if TYPE_CHECKING:
    from .runstate import RunState

BUSY_MAX_S = 0.020


class AccuracySpin:
    """The accuracy slider's cost, the same for both firing threads: the last `busy_s` before a moment is spun."""

    accuracy: int
    interval_s: float | None

    @property
    def busy_s(self) -> float:
        return max(0, min(100, self.accuracy)) / 100.0 * BUSY_MAX_S

    def spins(self) -> bool:
        """Whether the thread would spin from one event to the next, never sleeping."""
        return self.interval_s is not None and self.busy_s >= self.interval_s


@dataclass
class Firer(AccuracySpin):
    """The Python firing thread (`--firing python`): what a Python application of the user's own gets. The default
    is the native thread (nativefirer.py), which has the same interface."""

    send: Callable[[Event, bytes], None]   # writes this event's prepared FIRE frame
    accuracy: int = 0
    on_error: Callable[[Event, BaseException], None] | None = None
    # Two writes at least this far apart: the time the profiler's line takes for the RESULT each FIRE makes.
    # After a stall the events that came due meanwhile would go out back to back, FIREs faster than their
    # RESULTs can leave (a FIRE is 9 bytes, a RESULT 18), and a stall of 64 ms at a kilohertz filled the
    # profiler's result ring (32) and lost results: a fault of the rig. Held so, an event goes out at most
    # `min_gap_s` after the one before, which was itself late by at least the interval less the gap.
    min_gap_s: float = 0.0
    priority: int | None = None            # SCHED_FIFO priority for this thread (cyclictest's -p); None: as it is
    mlockall: bool = False                 # lock the process's memory before the thread starts (cyclictest's -m)
    kind: str = field(default="python", init=False)
    # A grid's event is made this long before its moment (runner.generate_on_grid): the thread needs it in its
    # queue by then. 3 ms: its futex wait needs the interpreter lock to take a moment, and a longer queue only
    # holds more moments under that lock.
    lead_s: float = field(default=0.003, init=False)
    interval_s: float | None = None        # between two events (None: unknown): whether the thread ever sleeps
    tid: int | None = field(default=None, init=False)
    sched_via: str | None = field(default=None, init=False)   # how it got SCHED_FIFO: sched_setscheduler, rtkit
    held: int = field(default=0, init=False)          # writes the gap held back
    cpu_s: float = field(default=0.0, init=False)
    fired: int = field(default=0, init=False)
    late_wakeups_s: Tails = field(default_factory=Tails, init=False)   # write time - target
    timer_slack_ns: int | None = field(default=None, init=False)            # what the thread got
    sched: str | None = field(default=None, init=False)       # the thread's scheduling as it read it back: 'fifo 80'
    sched_why: str | None = field(default=None, init=False)   # why not the priority asked for
    memory_locked: bool = field(default=False, init=False)
    memory_locked_why: str | None = field(default=None, init=False)
    # the thread's nice (None: as it inherits): the process's own, not the run loop's (loopnice.py)
    nice: int | None = None
    _ready: threading.Event = field(default_factory=threading.Event, init=False)
    _heap: list = field(default_factory=list, init=False)
    _cv: threading.Condition = field(default_factory=threading.Condition, init=False)
    _stop: bool = field(default=False, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _n: int = field(default=0, init=False)

    def start(self) -> "Firer":
        """The memory locked if asked, the thread started; returns once the thread has its scheduling (`sched`)."""
        if self.mlockall:
            self.memory_locked_why = lock_memory()
            self.memory_locked = self.memory_locked_why is None
        self._thread = threading.Thread(target=self._run, name="mmsched-firer", daemon=True)
        self._thread.start()
        self._ready.wait(2.0)
        return self

    def add(self, event: Event, at: float, wire: bytes) -> None:
        """Fire `event` at host time `at` by writing `wire` (its FIRE frame, encoded now)."""
        with self._cv:
            heapq.heappush(self._heap, (at, self._n, event, wire))
            self._n += 1
            self._cv.notify()

    def pending(self) -> int:
        with self._cv:
            return len(self._heap)

    def collect(self) -> None:
        """(The Python thread books each write itself, through `send`: nothing waits here.)"""

    def stop(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join(2.0)

    def _run(self) -> None:
        cpu0 = time.thread_time()
        last = -1e9                           # the last write (the line's gap is kept from it)
        self.timer_slack_ns = 1 if set_thread_timer_slack_ns(1) else None
        self.tid = threading.get_native_id()
        set_nice(self.tid, self.nice)
        if self.priority is not None:
            refused = set_thread_fifo(self.priority)
            self.sched_via, self.sched_why = ("sched_setscheduler", None) if refused is None else \
                fifo_for(self.tid, self.priority, refused, self.spins())
        self.sched = read_sched(self.tid)
        self._ready.set()
        try:
            while True:
                with self._cv:
                    while not self._stop and not self._heap:
                        self._cv.wait()
                    if self._stop:
                        return
                    at, _, ev, wire = self._heap[0]
                    left = at - self.busy_s - time.monotonic()
                    if left > 0:
                        self._cv.wait(left)   # an earlier event may be added meanwhile: look again
                        continue
                    heapq.heappop(self._heap)
                while time.monotonic() < at:  # the last stretch: busy-wait
                    pass
                if self.min_gap_s and (free := last + self.min_gap_s) > time.monotonic():
                    self.held += 1            # still in the line's gap after the write before: wait it out
                    while time.monotonic() < free:
                        pass
                t = time.monotonic()
                try:
                    self.send(ev, wire)
                except Exception as exc:  # noqa: BLE001 - reported to the run, which ends the event
                    if self.on_error:
                        self.on_error(ev, exc)
                    continue
                finally:
                    last = time.monotonic()   # the gap from the write's end: a write held up (the GIL) counts
                self.fired += 1
                self.late_wakeups_s.append(t - at)
        finally:
            self.cpu_s = time.thread_time() - cpu0


def aim(st: RunState, ev: Event, discipline: bool, fires_sent: dict[float, Sent], count: Callable[[str], None]) -> float:
    """The host moment normal mode fires event `ev` at: its moment (its tick's start, or `due_counts` into it on
    a grid) by the paper's estimate (the TIMECODE
    arrivals' minimum filter, timecode.py), or disciplined by the clock servo on the profiler's own FIRE stamps
    once two FIREs agree (servo.py; before that the naive estimate, counted). Notes what the estimate rests on
    (validity by cause): the minimum filter's TIMECODE frame, or the servo's anchor FIRE."""
    into = ev.due_counts / st.timebase.tick_counts     # a grid's moment inside the tick (grid.py), else 0
    at = st.tracker.moment_start(ev.scheduled_tc, into)
    basis_tc, arrived = st.tracker.basis()
    ev.bytes.basis = Basis(basis_tc, st.tracker.tick_start(basis_tc), arrived)
    if discipline:
        st.servo.clock = st.profiler_clock
        disciplined = st.servo.tick_start(ev.scheduled_tc, near=at, into=into)
        if disciplined is None:
            count("discipline_unlocked")   # no two FIREs agree yet: the naive estimate
        else:
            anchor = st.servo.anchor_written_at(at)
            ev.bytes.anchor = fires_sent.get(anchor) if anchor is not None else None
            at = disciplined
    return at
