"""The run's use of the host, the sidecar's `cpu`: wall time, the process's CPU and involuntary context switches
from the run's start, and normal mode's firing thread (its CPU, how late it woke, what it got of --priority and
--mlockall, and which thread fired)."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, field
from typing import Any

from ..model.tails import Tails
from .firing import Firer
from .nativefirer import NativeFirer


def tails_us(values: Tails | None) -> dict[str, float] | None:
    """p50, p99, p99.9 (nearest rank, to tails.BIN_S) and the maximum of `values`, in us; None for none."""
    if not values:
        return None
    return {"p50": round(values.quantile(0.5) * 1e6, 3), "p99": round(values.quantile(0.99) * 1e6, 3),
            "p99.9": round(values.quantile(0.999) * 1e6, 3), "max": round(values.max * 1e6, 3), "n": len(values)}


@dataclass
class Usage:
    """The run's use of the host, from its start: wall time, process CPU, involuntary context switches."""

    wall0: float = field(default_factory=time.monotonic)
    cpu0: float = field(default_factory=time.process_time)
    ru0: Any = field(default_factory=lambda: resource.getrusage(resource.RUSAGE_SELF))

    def section(self, firer: Firer | NativeFirer | None, accuracy: int | None,
                firing_why: str | None = None) -> dict[str, Any]:
        """The sidecar's `cpu`, now (normal mode's firing thread's CPU and wake-ups with it)."""
        wall = time.monotonic() - self.wall0
        cpu = time.process_time() - self.cpu0
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        return {"normal_mode_cpu_s": firer.cpu_s if firer else 0.0, "wall_s": wall,
                "process_cpu_s": cpu, "process_cpu_share": cpu / wall if wall > 0 else None,
                "normal_mode_cpu_share": (firer.cpu_s / wall) if firer and wall > 0 else None,
                "involuntary_context_switches": ru1.ru_nivcsw - self.ru0.ru_nivcsw, "accuracy": accuracy,
                "fire_wakeup_late_us_max": firer.late_wakeups_s.max * 1e6 if firer and firer.late_wakeups_s else None,
                # the native thread's own wake-up (its sleep's return after the moment it slept to), as cyclictest
                # samples its thread's (over the FIREs it slept for; the others, due already, are overruns as
                # cyclictest counts missed periods): p50, p99, p99.9, max in us; None for the Python thread
                "fire_woke_late_us": tails_us(getattr(firer, "woke_late_s", None)),
                "fire_overruns": getattr(firer, "overruns", None),   # FIREs due already when the thread took them
                "firer_timer_slack_ns": firer.timer_slack_ns if firer else None,
                # what was in effect of --priority and --mlockall (cyclictest's -p, -m), and why not
                "firer_sched": firer.sched if firer else None,
                "firer_sched_why": firer.sched_why if firer else None,
                "firer_sched_via": firer.sched_via if firer else None,
                "memory_locked": firer.memory_locked if firer else None,
                "memory_locked_why": firer.memory_locked_why if firer else None,
                "fires_held_for_line": firer.held if firer else None,
                # which thread fired (native: C, nativefirer.py; python: firing.py) and why not the one asked for
                "firing": firer.kind if firer else None, "firing_why": firing_why,
                "firer_tid": firer.tid if firer else None}
