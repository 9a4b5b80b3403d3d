"""A planted cause for the explanation's tests: a busy thread at SCHED_FIFO PRIO pinned to CPU, named NAME, that
sleeps until START (CLOCK_MONOTONIC seconds) and then spins for SECONDS. Prints the spin's own start and end.

    python spinner.py CPU PRIO START SECONDS NAME
"""

import ctypes
import os
import sys
import time


def main() -> None:
    cpu, prio, start, seconds, name = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), \
        sys.argv[5]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, name.encode()[:15], 0, 0, 0)          # PR_SET_NAME: the comm the trace shows
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
    while (left := start - time.monotonic()) > 0:
        time.sleep(min(left, 0.05))
    began = time.monotonic()
    end = began + seconds
    while (ended := time.monotonic()) < end:
        pass
    # back to SCHED_OTHER before anything else: the interpreter's exit at FIFO 90 held the CPU 4.7 ms more
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    print(f"{began:.9f} {ended:.9f}", flush=True)


if __name__ == "__main__":
    main()
