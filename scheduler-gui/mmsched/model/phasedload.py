"""The PC's load in phases (mmsched.model.phaseplan): each phase's condition (mmsched.model.load's Load, one
stress-ng) from its boundary on the run's clock to the next, switched by a thread of its own; the same
start()/stop() contract as a Load.

The plan's 0 is the run's start (RunState.t0, where the CSV's sent_s counts from): `start()` is called there, on
the run's thread, and puts the first phase's condition in place before the first event is made (so none is
made before it; setup and normal mode's calibrations, earlier, run with nothing added). From then on a thread
waits on the run's clock (the host's monotonic clock: a lockstep run, on a virtual clock, refuses phases) for
each next boundary and switches: the old stress-ng is stopped (SIGTERM to its group, as Load.stop), then the next
one started. Neither happens on the run's own thread: stopping a `--cpu 2` stress-ng took about 25 ms here, which
would hold event creation up. The last phase's condition runs until `stop()`, at the run's end, after the events in
flight have ended, as a single Load does.

What happened is kept as PhaseSpans (phaseplan.py), moments relative to the run's start: `start_s` once the
condition is in place, `end_s` when the switch away from it began. A condition that cannot be started (stress-ng
gone, no network namespace) leaves its phase with nothing added and its `error` said; the run is then invalid
(mmsched.verdict.phasefigures).

`on_switch`, when given, gets the spans so far (a copy) each time they change: once a phase's condition is in
place (the first on the caller's thread, the others on the switching thread, after the switch: what the callback
costs, a file's fsync, delays neither the run's thread nor the boundary) and once more when `stop()` notes the
last phase's end. Whoever owns both sets it (the runner: the run's journal keeps them, so that a run killed in
its fifth hour still says where its phases began); it must not raise.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

from .load import Load
from .phaseplan import PhasePlan, PhaseSpan

# the thread's longest sleep between looks at the run's clock (a stop() is seen at once: the sleep is an Event's
# wait); the run's clock is the wall's (lockstep runs refuse phases: mmhil.endpoint), so the last sleep ends on
# the boundary itself
LOOK_S = 0.5


@dataclass
class PhasedLoad:
    plan: PhasePlan
    clock: Callable[[], float]                    # the run's clock (Endpoint.clock)
    origin: float                                 # the run's start on it (RunState.t0): the plan's 0
    timeout_s: float                              # each stress-ng's own --timeout: a safety net, never the switch
    log: Callable[[str], None] | None = None
    on_switch: Callable[[list[PhaseSpan]], None] | None = None    # the spans so far, each time they change
    spans: list[PhaseSpan] = field(default_factory=list, init=False)
    current: Load | None = field(default=None, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _stopped: bool = field(default=False, init=False, repr=False)

    @property
    def command(self) -> list[str] | None:
        """The running phase's stress-ng argv (None: idle), as Load.command is."""
        return self.current.command if self.current is not None and self.current.command else None

    def now_s(self) -> float:
        return round(self.clock() - self.origin, 6)

    def start(self) -> "PhasedLoad":
        """The first phase in place now (on the caller's thread), the thread that switches to the others started."""
        self._switch(0)
        if len(self.plan.phases) > 1:
            self._thread = threading.Thread(target=self._follow, name="mmrig-phases", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """The switching ended, the running condition stopped, the last phase's end noted. Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.spans and self.spans[-1].end_s is None:
            self._end_last()
            self._notify()
        if self.current is not None:
            self.current.stop()
            self.current = None

    def _notify(self) -> None:
        if self.on_switch is not None:
            self.on_switch(list(self.spans))

    def _follow(self) -> None:
        for k, start in enumerate(self.plan.starts_s[1:], 1):
            while (left := self.origin + start - self.clock()) > 0:
                if self._stop.wait(min(left, LOOK_S)):
                    return
            if self._stop.is_set():
                return
            self._switch(k)
        # the stress-ng this thread started ends when it does (load.dies_with): it waits for stop()
        self._stop.wait()

    def _end_last(self) -> None:
        last = self.spans[-1]
        self.spans[-1] = PhaseSpan(last.name, last.condition, last.command, last.start_s, self.now_s(), last.error)

    def _switch(self, k: int) -> None:
        phase = self.plan.phases[k]
        if self.spans:
            self._end_last()
        if self.current is not None:
            self.current.stop()
            self.current = None
        load, error = Load(self.timeout_s, phase.condition), None
        try:
            load.start()
        except (RuntimeError, OSError) as exc:        # Load.unavailable's words, or stress-ng could not be run
            load.stop()
            error = f"{phase.name}: {exc}"
        self.current = load
        command = list(load.command) if load.command and error is None else None
        self.spans.append(PhaseSpan(phase.name, phase.condition, command, self.now_s(), None, error))
        if self.log is not None:
            what = error if error is not None else (" ".join(command) if command else "nothing added")
            self.log(f"phase {k + 1}/{len(self.plan.phases)} {phase.name} from {self.spans[-1].start_s:.3f} s: {what}")
        self._notify()
