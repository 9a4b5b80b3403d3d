"""The run's own loop above the machine's other work: every thread of the scheduler's process at nice -10 for the
run, the firing thread (the PC's part that is measured) left at the nice the user's process had.

The loop makes the events and hands the firing thread each moment ahead of time (`NativeFirer.lead_s`); a moment
it queues after its time is the rig's lateness, and the event cannot be measured. At a kilohertz the loop needs about
half a CPU. On the 2-vCPU VM beside `stress-ng --cpu 1` (nice 0) at SCHED_OTHER and nice 0 it shared its CPU with the
hog and, with the paced bench's real-time threads on the other, fell 0.9 s behind once in a 60-second run: 15.7 % of
the events not measurable and the burst it then sent filled the profiler's result ring (perf_normal_khz_vs_cyclictest,
docs/kilohertz.md). At nice -10 the kernel's fair scheduler weighs it 9,548 against the hog's 1,024: the hog keeps
about a tenth of the CPU they share. Nice, not SCHED_FIFO: a real-time Python loop that once spun would starve the
bench's own threads (an earlier bench at SCHED_FIFO stopped answering for 5 s: mmhil.endpoint.raise_priority).

Lowering a nice needs root, CAP_SYS_NICE or an RLIMIT_NICE that allows it; otherwise RealtimeKit is asked, thread by
thread (it gives down to its MinNiceLevel, -15 on Debian). What the loop got, how and why not is the sidecar's
`cpu.loop`. The threads are put back at the run's end (raising a nice again is always allowed).

The firing thread starts from the loop's thread and would inherit its nice; without `-p` it measures what a normal
program of the user's gets, so it is set back to `measured_nice` (firing.Firer, nativefirer.NativeFirer)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from . import renice, rtkit

LOOP_NICE = -10


@dataclass
class LoopNice:
    wanted: int = LOOP_NICE
    measured_nice: int = field(default_factory=lambda: os.getpriority(os.PRIO_PROCESS, 0))   # the process's, before
    nice: int | None = field(default=None, init=False)        # what the loop's threads got (None: unchanged)
    via: str | None = field(default=None, init=False)         # setpriority, rtkit
    why: str | None = field(default=None, init=False)         # why not (all) of it
    _before: dict[int, int] = field(default_factory=dict, init=False)

    def raise_(self) -> "LoopNice":
        """Every thread of this process at `wanted` where the host allows it, else RealtimeKit's; threads started
        afterwards inherit it from the thread that starts them."""
        if self.measured_nice <= self.wanted:
            self.nice, self.why = self.measured_nice, None
            return self
        before, every = renice.renice(self.wanted)
        self._before.update(before)
        if before:
            self.nice, self.via = self.wanted, "setpriority"
        if every:
            return self
        refused = [tid for tid in renice.threads() if tid not in before]
        lim = rtkit.limits()
        if isinstance(lim, str):
            self.why = f"nice {self.wanted} refused (no CAP_SYS_NICE, RLIMIT_NICE) and {lim}"
            return self
        nice = max(self.wanted, lim.min_nice_level)
        for tid in refused:
            err = rtkit.make_high_priority(tid, nice)
            if err is None:
                self._before[tid] = self.measured_nice
            elif self.why is None:
                self.why = f"nice {self.wanted} refused (no CAP_SYS_NICE, RLIMIT_NICE) and {err}"
        if len(self._before) > len(before):
            self.nice, self.via = nice, "rtkit" if not before else "setpriority, rtkit"
            if nice != self.wanted and self.why is None:
                self.why = f"nice {self.wanted} asked, {nice} given: RealtimeKit's MinNiceLevel"
        return self

    def restore(self) -> None:
        renice.restore(self._before)
        self._before.clear()

    def section(self) -> dict[str, Any]:
        """The sidecar's `cpu.loop`."""
        return {"nice": self.nice, "via": self.via, "why": self.why, "measured_nice": self.measured_nice}
