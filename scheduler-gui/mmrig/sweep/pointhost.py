"""The process a Dask worker runs its `mmrig sweep` points in (mmrig.sweep.task.run_points): a child of the worker,
started on the worker's first task and again every RECYCLE_POINTS points, so that what a point's run leaves
behind in memory goes with it rather than growing the worker for as long as the cluster lives.

Why a process and why recycled: a safety net. `run_point` left its process ~67 KB larger a point, the runs' reference
cycles frozen out of the collector's reach (docs/campaigns.md, "Memory across many runs"; fixed: 2,000 runs in one
process now grow it by 1.1 MB, scheduler-gui/perf/perf_runs_in_one_process.py), so a worker running its points
itself grew by some 400 MB over 5,000 points. Whatever a point's run may still leave behind goes with its host.
Started again every RECYCLE_POINTS points a host costs the worker one interpreter start with mmrig's imports
(0.7 s on the loaded 2-vCPU VM) per RECYCLE_POINTS points.

The host talks to its worker over a socket pair (pickled requests and replies, `multiprocessing.connection`
framing; the point function travels with cloudpickle, as Dask sends it) and watches a pipe only the worker holds:
when the worker dies, even mid-point, the host exits at once, and the point's bench with it (the bench watches
the host the same way, `hil/bench/parent.c`). A host that dies mid-point fails that point only; the next point
gets a new host.

Run as `python -m mmrig.sweep.pointhost CHANNEL_FD LIFELINE_FD SCRATCH_DIR`; nothing else starts it by hand."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Callable

RECYCLE_POINTS = 500


@dataclass
class PointHost:
    """One host process, its channel and its lifeline (the write end of the pipe it watches), and how many
    points it ran."""
    proc: subprocess.Popen
    channel: Connection
    lifeline: int
    scratch: str
    ran: int = 0

    @classmethod
    def start(cls, where: str) -> "PointHost":
        """A new host, told the worker's sys.path (so that it unpickles what the worker can) and `where`, the
        worker's own description for the points' `worker` field."""
        import cloudpickle

        ours, theirs = socket.socketpair()
        r, w = os.pipe()
        scratch = tempfile.mkdtemp(prefix="mmrig-pointhost-")
        try:
            # a session of its own, as the bench's: a signal to the worker's process group (Ctrl-C, a killpg) ends
            # the worker, and the host then sees its lifeline end and cleans up rather than dying mid-write
            proc = subprocess.Popen([sys.executable, "-m", "mmrig.sweep.pointhost", str(theirs.fileno()), str(r),
                                     scratch], pass_fds=(theirs.fileno(), r), stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except BaseException:
            ours.close()
            os.close(w)
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        finally:
            theirs.close()
            os.close(r)
        channel = Connection(ours.detach())
        channel.send_bytes(cloudpickle.dumps((list(sys.path), where)))
        return cls(proc, channel, w, scratch)

    def run(self, run_point: Callable[..., dict[str, Any]], fields: dict[str, Any], stem: str,
            **kwargs: Any) -> dict[str, Any]:
        """`run_point(fields, stem, **kwargs)` in the host: its result, or what it raised raised here. A host that
        ends mid-point (killed, crashed) gives the point an `error` and is closed; OSError if it cannot be
        reached at all."""
        import cloudpickle

        self.ran += 1
        self.channel.send_bytes(cloudpickle.dumps((run_point, fields, stem, kwargs)))
        try:
            kind, value = cloudpickle.loads(self.channel.recv_bytes())
        except (EOFError, OSError):
            code = self.proc.wait()
            self.close()
            return {"error": f"the point's process (mmrig.sweep.pointhost) ended mid-point, exit status {code}",
                    "worker": f"{socket.gethostname()}:{os.getpid()}"}
        if kind == "raised":
            raise value
        return value

    def close(self) -> None:
        """Ends the host: its channel closed (it exits when it reads the end), the lifeline too, then waited for
        (killed after 5 s), and its scratch folder removed."""
        self.channel.close()
        if self.lifeline >= 0:           # once: the fd number may be another file's after it is closed
            os.close(self.lifeline)
            self.lifeline = -1
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.scratch, ignore_errors=True)     # a host killed mid-point could not remove it


_hosts: dict[int, PointHost] = {}        # a worker thread's host, running a point or not (--nthreads N: N of them)
_hosts_lock = threading.Lock()


def run_in_host(run_point: Callable[..., dict[str, Any]], fields: dict[str, Any], stem: str, where: str,
                **kwargs: Any) -> dict[str, Any]:
    """`run_point(fields, stem, **kwargs)` in this thread's host: started if there is none, or if the last one
    ended or ran RECYCLE_POINTS points."""
    me = threading.get_ident()
    with _hosts_lock:
        host = _hosts.get(me)      # only this thread uses its entry: the lock guards the dict, not the host
    if host is not None and (host.ran >= RECYCLE_POINTS or host.proc.poll() is not None):
        _forget(me)
        host.close()
        host = None
    if host is None:
        host = PointHost.start(where)
        with _hosts_lock:
            _hosts[me] = host
    try:
        got = host.run(run_point, fields, stem, **kwargs)
    except BaseException:
        _forget(me)
        host.close()       # what it raised may have left it in any state: the next point gets a new one
        raise
    if host.proc.poll() is not None:
        _forget(me)
    return got


def _forget(me: int) -> None:
    with _hosts_lock:
        _hosts.pop(me, None)


def host_pids() -> list[int]:
    """The pids of this worker's point hosts now (what its memory figures add to its own, `make perf`)."""
    with _hosts_lock:
        return [h.proc.pid for h in _hosts.values()]


# ---- the host's side -------------------------------------------------------------------------------------
WORKER = ""     # the worker's description, for the points' `worker` field (mmrig.sweep.task._where)


def _watch(lifeline: int, scratch: str) -> None:
    """Exits the host when the worker is gone (the pipe's only write end was the worker's), its scratch folder
    (the points' temporary folders, mmrig.sweep.task.run_point) removed first: a point cut short leaves nothing."""
    try:
        while os.read(lifeline, 1):
            pass
    except OSError:
        pass
    shutil.rmtree(scratch, ignore_errors=True)
    os._exit(3)


def main(argv: list[str]) -> int:
    channel = Connection(int(argv[0]))
    tempfile.tempdir = argv[2]           # the worker made it; whichever of the two outlives the other removes it
    threading.Thread(target=_watch, args=(int(argv[1]), tempfile.tempdir), name="pointhost-lifeline",
                     daemon=True).start()
    try:
        return _serve(channel)
    finally:
        shutil.rmtree(tempfile.tempdir, ignore_errors=True)


def _serve(channel: Connection) -> int:
    global WORKER
    import pickle

    try:
        path, WORKER = pickle.loads(channel.recv_bytes())
    except (EOFError, OSError):
        return 0
    sys.path[:] = [p for p in path if p] + [p for p in sys.path if p not in path]
    import cloudpickle

    while True:
        try:
            request = channel.recv_bytes()
        except (EOFError, OSError):
            return 0                               # the worker closed the channel: this host is done
        try:
            run_point, fields, stem, kwargs = pickle.loads(request)
            reply = ("result", run_point(fields, stem, **kwargs))
        except Exception as exc:  # noqa: BLE001 - sent back and raised in the worker, as if it ran there
            reply = ("raised", exc)
        try:
            data = cloudpickle.dumps(reply)
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its type and words
            data = cloudpickle.dumps(("raised", RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}")))
        try:
            channel.send_bytes(data)
        except OSError:
            return 0


if __name__ == "__main__":
    # main of the module as mmrig.sweep.task imports it, not of __main__: WORKER is read there
    from mmrig.sweep.pointhost import main as _main

    raise SystemExit(_main(sys.argv[1:]))
