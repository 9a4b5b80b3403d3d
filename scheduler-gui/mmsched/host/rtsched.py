"""A thread's real-time scheduling on Linux, as cyclictest asks for it (`-p PRIO -m`): SCHED_FIFO for the
calling thread, or RealtimeKit's SCHED_RR for a user without RLIMIT_RTPRIO (rtkit.py); the process's memory
locked (mlockall); a 1 ns timer slack; a thread's nice; and the scheduling read back as Linux says it. Each
returns None or why not, in words that say how to allow it (the kernel's word, the limit, limits.conf), so an
entry point can refuse a run before it starts. Used by normal mode's firing threads (firing.py, nativefirer.py)
and a line's reading thread (nativereader.py)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import threading

from . import rtkit

PR_SET_TIMERSLACK = 29      # prctl(2)


MCL_CURRENT, MCL_FUTURE = 1, 2   # mlockall(2); Python's os has no mlockall
SCHED_RESET_ON_FORK = 0x40000000  # sched(7): a flag in the policy RealtimeKit sets (children do not inherit it)
LIMITS_CONF = "/etc/security/limits.conf, docs/lab-instructor.md"


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def set_thread_timer_slack_ns(ns: int) -> bool:
    """The calling thread's timer slack (Linux prctl PR_SET_TIMERSLACK); False where it cannot be set."""
    try:
        return _libc().prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(ns), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def sched_text(policy: int, priority: int) -> str:
    """A scheduling as Linux says it: 'fifo N', 'rr N', or the policy's name ('other')."""
    names = {os.SCHED_FIFO: "fifo", os.SCHED_RR: "rr", os.SCHED_OTHER: "other",
             getattr(os, "SCHED_BATCH", -2): "batch", getattr(os, "SCHED_IDLE", -3): "idle"}
    name = names.get(policy, f"policy {policy}")
    return f"{name} {priority}" if policy in (os.SCHED_FIFO, os.SCHED_RR) else name


def thread_sched() -> str:
    """The calling thread's scheduling as Linux says it: 'fifo N', 'rr N', or the policy's name ('other')."""
    return read_sched(threading.get_native_id())


def _rlimit_text(which: int, scale: int = 1, unit: str = "") -> str:
    soft = resource.getrlimit(which)[0]
    return "unlimited" if soft == resource.RLIM_INFINITY else f"{soft // scale}{unit}"


def fifo_refused(priority: int, strerror: str) -> str:
    """Why a thread did not get SCHED_FIFO `priority`: the kernel's word and how to allow it."""
    return (f"SCHED_FIFO {priority} refused ({strerror}): run as root, or allow this user real-time priority "
            f"(RLIMIT_RTPRIO is {_rlimit_text(resource.RLIMIT_RTPRIO)}, `ulimit -r`; 'rtprio {priority}' "
            f"in {LIMITS_CONF})")


def set_thread_fifo(priority: int) -> str | None:
    """The calling thread at SCHED_FIFO `priority`; None, or why not (the kernel's word and how to allow it)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        return None
    except OSError as exc:
        return fifo_refused(priority, exc.strerror or str(exc))


def set_nice(tid: int, nice: int | None) -> None:
    """Thread `tid` at `nice` (None: left as it is); a firing thread lowered back to the process's own nice from the
    run loop's (loopnice.py), which anyone may do."""
    if nice is None:
        return
    try:
        os.setpriority(os.PRIO_PROCESS, tid, nice)
    except OSError:
        pass


def read_sched(tid: int) -> str:
    """Thread `tid`'s scheduling, read back (a change RealtimeKit made shows): 'fifo 20', 'other', ..."""
    policy = os.sched_getscheduler(tid) & ~SCHED_RESET_ON_FORK
    return sched_text(policy, os.sched_getparam(tid).sched_priority)


def fifo_for(tid: int, priority: int, refused: str, spins: bool) -> tuple[str | None, str | None]:
    """Real-time priority `priority` for thread `tid`, which the kernel refused SCHED_FIFO (`refused`: why), asked of
    RealtimeKit (rtkit.py: SCHED_RR) as PipeWire asks for its audio threads: (how it came, or None; why it is not
    all that was asked, or None). `spins`: the thread would never sleep (the accuracy slider's spin at least the interval between
    events), which rtkit's run limit punishes by killing the process: not asked then."""
    if spins:
        return None, (f"{refused}; not asked of RealtimeKit: at this accuracy the thread spins from one event to the "
                      "next and RealtimeKit kills a real-time thread that runs 200 ms without a sleep")
    grant = rtkit.realtime(tid, priority)
    if grant.priority is None:
        return None, f"{refused}; RealtimeKit: {grant.why}"
    return "rtkit", grant.why


def fifo_refusal(priority: int) -> str | None:
    """Whether this process may run a thread at SCHED_FIFO `priority` (None) or why not: tried in a thread of its
    own that ends at once, so the caller's scheduling is untouched; where the kernel refuses, RealtimeKit is asked
    for it (it may give a lower priority: its ceiling, said when the run's thread gets it)."""
    why: list[str | None] = []

    def probe() -> None:
        refused = set_thread_fifo(priority)
        if refused is not None:
            via, refused = fifo_for(threading.get_native_id(), priority, refused, spins=False)
            if via is not None:
                refused = None               # RealtimeKit gave it (perhaps lower: the run's thread says so)
        why.append(refused)
    t = threading.Thread(target=probe, name="mmsched-fifo-probe")
    t.start()
    t.join()
    return why[0] if why else "the probe thread did not run"


def lock_memory() -> str | None:
    """mlockall(MCL_CURRENT | MCL_FUTURE): the process's memory, now and to come, kept in RAM (no page fault on the
    firing path); None, or why not. Done again it is harmless."""
    try:
        libc = _libc()
        if libc.mlockall(MCL_CURRENT | MCL_FUTURE) == 0:
            return None
        err = ctypes.get_errno()
    except (OSError, AttributeError) as exc:
        return f"mlockall not available ({exc})"
    try:
        rss = next(int(line.split()[1]) // 1024 for line in open("/proc/self/status") if line.startswith("VmRSS:"))
        size = f"; this process holds {rss} MB"
    except (OSError, StopIteration, ValueError, IndexError):
        size = ""
    return (f"mlockall refused ({os.strerror(err)}): run as root, or allow this user to lock memory "
            f"(RLIMIT_MEMLOCK is {_rlimit_text(resource.RLIMIT_MEMLOCK, 1024, ' KB')}, `ulimit -l`{size}; "
            f"'memlock unlimited' in {LIMITS_CONF})")
