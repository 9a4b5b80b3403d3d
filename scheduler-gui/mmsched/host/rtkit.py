"""RealtimeKit (rtkit), as PipeWire and PulseAudio use it for their audio threads: real-time scheduling for a user
who has no RLIMIT_RTPRIO (no limits.conf entry), asked of the system's rtkit-daemon over D-Bus (jeepney).

rtkit grants real-time scheduling (SCHED_RR: its policy, which behaves as SCHED_FIFO for a thread that sleeps
between its work) up to its ceiling (`MaxRealtimePriority`, 20 on Debian) to a thread of the caller's own processes, and a nice down to `MinNiceLevel` (-15), once polkit allows it (by default a user with a local or
remote login session; docs/normal-mode.md says what else) and only to a process whose RLIMIT_RTTIME hard limit is
at most `RTTimeUSecMax` (200 ms: a real-time thread that runs that long without sleeping is killed, rtkit's guard
against a runaway). `prepare_rttime` sets that limit; every request names the thread by its kernel thread id.

Every function answers in one line instead of raising: None (granted) or why not, so a caller falls back to what
it had and says so. MMRIG_RTKIT=off in the environment: rtkit is never asked (the kernel's own rules alone).
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from typing import Any, Callable

BUS_NAME = "org.freedesktop.RealtimeKit1"
OBJECT = "/org/freedesktop/RealtimeKit1"
TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Limits:
    """What the daemon grants at most."""

    max_realtime_priority: int
    min_nice_level: int
    rttime_usec_max: int


def _request(make: Callable[[Any], Any]) -> tuple[Any, str | None]:
    """One request to rtkit (`make(address)` builds it): (its reply's body, None) or (None, why not)."""
    if os.environ.get("MMRIG_RTKIT", "").lower() in ("off", "0", "no"):
        return None, "RealtimeKit not asked (MMRIG_RTKIT=off)"
    try:
        from jeepney import DBusAddress
        from jeepney.io.blocking import open_dbus_connection
    except ImportError:
        return None, "RealtimeKit is not reachable from this Python (no jeepney: make setup installs it)"
    addr = DBusAddress(OBJECT, bus_name=BUS_NAME, interface=BUS_NAME)
    try:
        with open_dbus_connection(bus="SYSTEM") as conn:
            reply = conn.send_and_get_reply(make(addr), timeout=TIMEOUT_S)
    except OSError as exc:
        return None, f"RealtimeKit is not reachable (no system D-Bus: {exc.strerror or exc})"
    except Exception as exc:  # noqa: BLE001 - jeepney's own failures (auth, protocol, timeout): said, never raised
        return None, f"RealtimeKit is not reachable ({type(exc).__name__}: {exc})"
    if reply.header.message_type.name == "error":
        name = str(reply.header.fields.get(4, "error")).rsplit(".", 1)[-1]   # (4: the error name's header field)
        if name == "ServiceUnknown":
            return None, "RealtimeKit is not installed or not running (Debian: apt-get install rtkit)"
        words = f": {reply.body[0]}" if reply.body else ""
        return None, f"RealtimeKit refused ({name}{words})"
    return reply.body, None


def _call(method: str, signature: str, args: tuple) -> str | None:
    from jeepney import new_method_call
    return _request(lambda addr: new_method_call(addr, method, signature, args))[1]


def limits() -> Limits | str:
    """The daemon's ceilings, or why it cannot be asked."""
    try:
        from jeepney import Properties
    except ImportError:
        return "RealtimeKit is not reachable from this Python (no jeepney: make setup installs it)"
    got: list[int] = []
    for prop in ("MaxRealtimePriority", "MinNiceLevel", "RTTimeUSecMax"):
        body, why = _request(lambda addr: Properties(addr).get(prop))
        if why is not None:
            return why
        got.append(int(body[0][1]))      # (a variant: (signature, value))
    return Limits(*got)


def prepare_rttime(usec: int, pid: int | None = None, soft_usec: int | None = None) -> str | None:
    """RLIMIT_RTTIME of process `pid` (None: this one) at `usec` (hard; soft `soft_usec`, default the same), as rtkit
    requires before it grants anything; None or why not. A process that can leave real-time by itself at the soft
    limit's SIGXCPU (the bench) gets a lower soft limit, so the hard one's SIGKILL never comes."""
    limits = (usec if soft_usec is None else min(soft_usec, usec), usec)
    try:
        if pid is None or pid == os.getpid():
            resource.setrlimit(resource.RLIMIT_RTTIME, limits)
        else:
            resource.prlimit(pid, resource.RLIMIT_RTTIME, limits)
    except (OSError, ValueError) as exc:
        return f"cannot set RLIMIT_RTTIME to {usec} us: {exc}"
    return None


def make_realtime(tid: int, priority: int, pid: int | None = None) -> str | None:
    """Thread `tid` (of process `pid`, None: this one) at SCHED_FIFO `priority`; None or why not."""
    if pid is None or pid == os.getpid():
        return _call("MakeThreadRealtime", "tu", (tid, priority))
    return _call("MakeThreadRealtimeWithPID", "ttu", (pid, tid, priority))


def make_high_priority(tid: int, nice: int, pid: int | None = None) -> str | None:
    """Thread `tid` (of process `pid`, None: this one) at nice `nice` (SCHED_OTHER); None or why not."""
    if pid is None or pid == os.getpid():
        return _call("MakeThreadHighPriority", "ti", (tid, nice))
    return _call("MakeThreadHighPriorityWithPID", "tti", (pid, tid, nice))


@dataclass(frozen=True)
class Grant:
    """What rtkit gave a thread: the priority (None: nothing) and why not more (None: all that was asked)."""

    priority: int | None
    why: str | None


def realtime(tid: int, wanted: int, pid: int | None = None, soft_usec: int | None = None) -> Grant:
    """Real-time priority `wanted` for thread `tid` through rtkit (SCHED_RR), or rtkit's ceiling if that is lower
    (said in `why`). Sets the process's RLIMIT_RTTIME to rtkit's bound first (soft: `soft_usec`, prepare_rttime)."""
    lim = limits()
    if isinstance(lim, str):
        return Grant(None, lim)
    why = prepare_rttime(lim.rttime_usec_max, pid, soft_usec)
    if why is not None:
        return Grant(None, why)
    prio = min(wanted, lim.max_realtime_priority)
    why = make_realtime(tid, prio, pid)
    if why is not None:
        return Grant(None, why)
    return Grant(prio, None if prio == wanted else f"real-time priority {wanted} asked, {prio} given: RealtimeKit's "
                                                   "ceiling (MaxRealtimePriority; root or 'rtprio' in limits.conf "
                                                   "for more)")
