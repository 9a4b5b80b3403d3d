"""Renicing every thread of a process: Linux's nice is per thread, so a process's running threads are each set
(threads it starts afterwards inherit the nice of the thread that starts them). Used by the run's own loop (loopnice.py), the
bench endpoint (the bench above the scheduler's load: mmhil.endpoint.raise_priority) and paced turns (the turn's
holder: mmhil.turns)."""

from __future__ import annotations

import os
import threading


def threads(pid: int | None = None) -> list[int]:
    """The thread ids of process `pid` (None: this process); the process's own id if /proc cannot tell."""
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid or 'self'}/task")]
    except OSError:
        return [pid if pid is not None else threading.get_native_id()]


def renice(nice: int, pid: int | None = None) -> tuple[dict[int, int], bool]:
    """Every thread of process `pid` (None: this one) at `nice`, where the host allows it: returns each changed
    thread's nice before, and whether every thread was changed (raising a priority needs CAP_SYS_NICE or an
    RLIMIT_NICE that allows it; a thread may also end meanwhile)."""
    before: dict[int, int] = {}
    tids = threads(pid)
    for tid in tids:
        try:
            old = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, nice)
            before[tid] = old
        except OSError:
            pass
    return before, len(before) == len(tids)


def restore(before: dict[int, int]) -> None:
    """Each thread back at the nice `renice` found it at (a thread that has ended is skipped; raising a nice back
    may be refused to a normal user)."""
    for tid, nice in before.items():
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        except OSError:
            pass
