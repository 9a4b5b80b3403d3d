"""Paced benches on one machine take turns (MMRIG_PACED_TURNS=FILE).

A paced bench simulates two 16 MHz AVRs against wall time at SCHED_FIFO 10 where the host grants it: measured on
a 2-vCPU VM (2026-11-27), an idle one takes 54 % of a CPU. Two at once take more than one of two CPUs at a
real-time priority, and the PC side each one measures (a normal-priority process) then waits for a CPU: firing
threads woke 1.5 s late, GUI runs timed out, and the runs were rightly invalid or not measurable. Not a fault of
either bench; a machine too small for two paced benches at once. With MMRIG_PACED_TURNS naming a file, every
paced bench started on the machine holds an exclusive lock on it for its lifetime (flock: released when the bench
closes or its process dies), so a second one waits its turn. `make test` sets it, so that its pytest workers
(WORKERS=2, where a machine has the CPUs) never run two paced benches together; a user running paced points on
several local Dask workers can set it too.
Lockstep and unpaced benches take no turn: they follow no clock.

With MMRIG_PACED_TURNS_NICE=N too, the process holding the turn runs at nice N (every thread it has, and so every
thread and child it starts) until it gives the turn back: the PC side a paced bench measures then comes before the
other worker's lockstep benches, GUIs and notebooks, as on a machine kept for the measurement (make test: -5, where
the host allows it; elsewhere nothing changes and the run's validity says what the host did).

Within one process the lock is counted (a process holding it may start another paced bench and not wait for
itself). A wait longer than MMRIG_PACED_TURNS_WAIT_S (default 900) gives up waiting and starts anyway, saying so
on stderr: a machine-wide lock must never hang a run."""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
from pathlib import Path

ENV = "MMRIG_PACED_TURNS"
WAIT_ENV = "MMRIG_PACED_TURNS_WAIT_S"
NICE_ENV = "MMRIG_PACED_TURNS_NICE"

_guard = threading.Lock()
_held = 0                    # this process's paced benches that hold the turn
_fd: int | None = None
_niced: dict[int, int] = {}  # thread id -> its nice before the turn


def _renice(nice: str | None) -> None:
    """Every thread of this process at `nice` (remembering what each had), where the host allows it."""
    if not nice:
        return
    try:
        value = int(nice)
    except ValueError:
        print(f"mmhil: {NICE_ENV}={nice!r} is not a whole number: the turn's holder keeps its nice", file=sys.stderr)
        return
    from mmsched.host import renice      # here, not at the top: a script that only starts a bench loads no scheduler core
    _niced.update(renice.renice(value)[0])


def _restore() -> None:
    if not _niced:
        return
    from mmsched.host import renice
    renice.restore(_niced)
    _niced.clear()


def take() -> bool:
    """Waits for this machine's turn to run a paced bench (if MMRIG_PACED_TURNS is set); True if a turn is now held
    (release() gives it back), False if none was asked for or the wait gave up."""
    global _held, _fd
    path = os.environ.get(ENV)
    if not path:
        return False
    with _guard:
        if _held:
            _held += 1
            return True
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        # read-only is enough for flock, and lets another user's run share a file the first one created; never
        # through a link or into a FIFO planted at the name (safefiles.lock_file)
        from mmanalysis.safefiles import lock_file

        fd = lock_file(path)
        deadline = time.monotonic() + float(os.environ.get(WAIT_ENV, "900"))
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    print(f"mmhil: {ENV}: no turn after {os.environ.get(WAIT_ENV, '900')} s: starting anyway",
                          file=sys.stderr)
                    return False
                time.sleep(0.05)         # (flock has no timeout of its own: a blocking one could hang a run)
        _fd, _held = fd, 1
        _renice(os.environ.get(NICE_ENV))
        return True


def release() -> None:
    """Gives back a turn take() returned True for; the last one held by this process unlocks the file."""
    global _held, _fd
    with _guard:
        if not _held:
            return
        _held -= 1
        if not _held and _fd is not None:
            _restore()
            os.close(_fd)        # closing the descriptor drops the flock
            _fd = None
