"""How the key's runs are scheduled: as a student's (the default) or with the instructor's own privileges.

Students run `mmrig` as normal users: the paced bench asks for SCHED_FIFO, locked memory and nice -10 and gets
none of them (docs/lab.md, "Without root"). A key made as root got all three, so its paced runs were valid at
the first try where the students' were not (exp2 at the sixth). `as_student` runs in each `mmrig run` child
before it starts: it lowers RLIMIT_RTPRIO and RLIMIT_NICE to 0 (a normal user's defaults) and, for root, drops
CAP_SYS_NICE, CAP_IPC_LOCK and CAP_SYS_RESOURCE from the bounding set, so the program it runs has neither the
capability nor the limit. Measured here (root): a paced run then reports `bench.host.sched` other, `mlock`
false, `load.bench_priority` "none (not permitted)", as a student's does. RealtimeKit, which a student's
bench may ask too, is left as it is."""

from __future__ import annotations

import ctypes
import resource
from typing import Any

PR_CAPBSET_DROP = 24
CAP_IPC_LOCK, CAP_SYS_NICE, CAP_SYS_RESOURCE = 14, 23, 24
STUDENT = "as a student: no real-time priority, no locked memory, no nice -10 (--realtime: the instructor's own)"
OWN = "with the privileges of the user who made it (--realtime)"


def as_student() -> None:
    """In a child before exec: a normal user's scheduling limits (the module's text). A capability this process
    does not hold (a normal user) is not there to drop: prctl's EPERM is ignored."""
    for limit in (resource.RLIMIT_RTPRIO, resource.RLIMIT_NICE):
        resource.setrlimit(limit, (0, 0))
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_SYS_NICE, CAP_IPC_LOCK, CAP_SYS_RESOURCE):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def scheduling(metas: list[dict[str, Any]]) -> str:
    """What the paced runs' benches got, from their sidecars: `bench.host.sched` and `bench.host.mlock`, each
    value once ('other, mlock false'); '-' when no run was paced on the bench."""
    scheds, locks = [], []
    for m in metas:
        host = (m.get("bench") or {}).get("host") if isinstance(m.get("bench"), dict) else None
        if isinstance(host, dict) and host.get("sched"):
            scheds.append(str(host["sched"]))
            locks.append("mlock true" if host.get("mlock") else "mlock false")
    if not scheds:
        return "-"
    return ", ".join(sorted(set(scheds))) + "; " + ", ".join(sorted(set(locks)))
