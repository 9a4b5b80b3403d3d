"""Normal mode's firing from native code (the default; `--firing python` keeps the Python thread of firing.py).

The run hands each event's FIRE frame and moment to the C thread of native/firethread.c ahead of time (`add`); the
thread sleeps to the moment with clock_nanosleep, writes the frame on the profiler line's descriptor and stamps its
wake-up and the write's return on CLOCK_MONOTONIC, with no interpreter lock on that path. While it runs it is the
line's only writer: the link hands its own writes (a QUERY during the run) to it too (`Link.hand_writes_to`), so the
line's bytes keep one order, and each write is booked on the link in that order (`collect`), the FIREs' times given
to the run (`on_written`).

What a user of cyclictest expects of its thread it gets: SCHED_FIFO at `priority` (`-p`), the process's memory locked
(`-m`, done here for the whole process before the thread starts), a 1 ns timer slack; what it got is kept for the
sidecar as firing.Firer keeps it (`sched`, `sched_why`, `memory_locked`, ...). The accuracy slider keeps its meaning:
the thread spins the last `accuracy`% of 20 ms before each moment.
"""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass, field
from typing import Callable

from mmproto import Link, LinkError, Written

from ..host import firethread
from ..model.event import Event
from .firing import AccuracySpin
from ..host.rtsched import fifo_for, fifo_refused, lock_memory, read_sched, set_nice
from ..model.eventbytes import Fed
from ..model.tails import Tails


@dataclass
class NativeFirer(AccuracySpin):
    link: Link                                       # the profiler's link: the thread writes on its descriptor
    on_written: Callable[[Event, Written], None]     # an event's FIRE is on the line, booked on the link
    accuracy: int = 0
    on_error: Callable[[Event, BaseException], None] | None = None
    min_gap_s: float = 0.0                           # as firing.Firer's: the line's RESULT time between two writes
    priority: int | None = None
    mlockall: bool = False
    interval_s: float | None = None                  # between two events (None: unknown): whether it ever sleeps
    nice: int | None = None                          # the thread's (None: as it inherits): firing.Firer's
    kind: str = field(default="native", init=False)
    # A grid's event is made this long before its moment (runner.generate_on_grid). The run's own loop runs at
    # SCHED_OTHER beside whatever the machine does and is held off the CPU at times: at 1 kHz on the 2-vCPU VM up
    # to 51 ms idle and 100 ms beside `stress-ng --cpu 1` (perf_normal_khz_vs_cyclictest: with a 50 ms lead 9 % of
    # the events were queued after their moment there). The moments it queued meanwhile still go out on time. A
    # moment aimed half a second ahead rests on the tick length the run fitted (tickfit.py), a few ppm: well under
    # a microsecond of aim over that time.
    lead_s: float = field(default=0.500, init=False)
    held: int = field(default=0, init=False)
    cpu_s: float = field(default=0.0, init=False)
    fired: int = field(default=0, init=False)
    late_wakeups_s: Tails = field(default_factory=Tails, init=False)   # write began - moment
    # the clock when the sleep returned - the moment (the accuracy slider's spin left out), over the FIREs the thread
    # slept for: its wake-up as cyclictest samples its own, before the line's gap held any write back. A FIRE due
    # already when the thread took it (a late one before it, or queued late) is an overrun, as cyclictest counts
    # the periods it missed, not a wake-up
    woke_late_s: Tails = field(default_factory=Tails, init=False)
    overruns: int = field(default=0, init=False)
    timer_slack_ns: int | None = field(default=None, init=False)
    sched: str | None = field(default=None, init=False)
    sched_why: str | None = field(default=None, init=False)
    memory_locked: bool = field(default=False, init=False)
    memory_locked_why: str | None = field(default=None, init=False)
    tid: int | None = field(default=None, init=False)
    sched_via: str | None = field(default=None, init=False)   # how it got SCHED_FIFO: sched_setscheduler, rtkit
    _thread: firethread.FireThread | None = field(default=None, init=False)
    _tags: "itertools.count[int]" = field(default_factory=lambda: itertools.count(1), init=False)
    _events: dict[int, tuple[Event, bytes]] = field(default_factory=dict, init=False)
    _now: dict[int, bytes] = field(default_factory=dict, init=False)
    _now_done: dict[int, Written | BaseException] = field(default_factory=dict, init=False)
    _collect_lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def start(self) -> "NativeFirer":
        """The memory locked if asked, the thread started at its scheduling, the link's writes handed to it. Raises
        OSError when the thread cannot be had (no library: firethread.load says why)."""
        if self.mlockall:
            self.memory_locked_why = lock_memory()
            self.memory_locked = self.memory_locked_why is None
        self._start_thread()
        return self

    def _start_thread(self) -> None:
        """The C thread on the link's descriptor now, the link's writes handed to it."""
        self._thread = firethread.FireThread(self.link.port_fd(), self.priority, self.busy_s, self.min_gap_s,
                                             self.link.write_timeout_s)
        info = self._thread.info()
        self.tid = info.tid
        set_nice(info.tid, self.nice)
        self.timer_slack_ns = info.slack_ns if info.slack_ns > 0 else None
        if self.priority is not None:
            self.sched_via, self.sched_why = ("sched_setscheduler", None) if not info.sched_err else \
                fifo_for(info.tid, self.priority, fifo_refused(self.priority, os.strerror(info.sched_err)),
                         self.spins())
        self.sched = read_sched(info.tid)
        self.link.hand_writes_to(self._write_now, on_close=self._port_closing)

    def _port_closing(self) -> None:
        """(the link, closing its port: a reconnect) The thread stops before the descriptor goes; the moments it
        still held are never written (their events end as the run ends a FIRE it could not write). A moment added
        once the port is open again starts a thread on the new descriptor."""
        self._end_thread()
        for tag in list(self._events):
            ev, _ = self._events.pop(tag)
            if self.on_error:
                self.on_error(ev, LinkError("port_error", f"{self.link.node}: the port closed before its FIRE"))

    def add(self, event: Event, at: float, wire: bytes) -> None:
        """Fire `event` at host time `at` by writing `wire` (its FIRE frame, encoded now)."""
        if self._thread is None:          # the port was reopened since (a reconnect): a thread on the new one
            try:
                self._start_thread()
            except (OSError, LinkError) as exc:
                if self.on_error:
                    self.on_error(event, exc)
                return
        assert self._thread is not None
        tag = next(self._tags)
        self._events[tag] = (event, wire)
        event.bytes.fed = Fed(self.link.clock(), at)     # (a moment queued after it passed: the run's lateness)
        try:
            self._thread.add(tag, at, self.link.port_bytes(wire))
        except OSError as exc:          # the queue full: the event cannot be fired (counted by the run)
            del self._events[tag]
            if self.on_error:
                self.on_error(event, exc)

    def pending(self) -> int:
        return self._thread.pending() if self._thread is not None else 0

    def collect(self) -> None:
        """Books the thread's writes since the last collect on the link, in the order they were made; each FIRE's
        event gets its Written (`on_written`), or its failure (`on_error`)."""
        if self._thread is None:
            return
        with self._collect_lock:
            for s in self._thread.take():
                self._book(s)

    def _book(self, s: firethread.Stamp) -> None:
        if s.tag in self._now:
            wire = self._now.pop(s.tag)
            self._now_done[s.tag] = self._booked(s, wire)
            return
        ev, wire = self._events.pop(s.tag)
        got = self._booked(s, wire)
        if isinstance(got, BaseException):
            if self.on_error:
                self.on_error(ev, got)
            return
        self.fired += 1
        self.held += s.held
        if s.at is not None:
            self.late_wakeups_s.append(s.began - s.at)
            if s.slept:
                self.woke_late_s.append(s.woke - (s.at - self.busy_s))
            else:
                self.overruns += 1
        self.on_written(ev, got)

    def _booked(self, s: firethread.Stamp, wire: bytes) -> Written | LinkError:
        if s.err or s.written != s.size:
            why = os.strerror(s.err) if s.err else f"{s.written} of {s.size} bytes taken"
            return LinkError("port_error", f"{self.link.node}: write failed: {why}")
        return self.link.book(wire, s.began, s.ended)

    def _write_now(self, wire: bytes) -> Written:
        """(the link's writer) A frame written at once by the thread, after any write under way; booked with the
        thread's writes before it."""
        assert self._thread is not None
        tag = next(self._tags)
        self._now[tag] = wire
        try:
            self._thread.write_now(tag, self.link.port_bytes(wire), self.link.write_timeout_s + 1.0)
        except OSError as exc:
            raise LinkError("port_error", f"{self.link.node}: write failed: {exc.strerror or exc}") from exc
        self.collect()
        got = self._now_done.pop(tag)
        if isinstance(got, BaseException):
            raise got
        return got

    def stop(self) -> None:
        """The link writes again by itself; the thread ends (its queued moments dropped); its last writes booked."""
        self.link.hand_writes_to(None)
        self._end_thread()

    def _end_thread(self) -> None:
        if self._thread is None:
            return
        info = self._thread.stop()
        self.collect()
        self.cpu_s += info.cpu_s
        self._thread.close()
        self._thread = None
