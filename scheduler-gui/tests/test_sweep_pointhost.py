"""The point host (mmrig.sweep.pointhost): a worker's points run in a process of its own, the same one from point
to point until RECYCLE_POINTS, then a new one; what a point raises is raised in the worker; a host killed
mid-point fails that point only; a host whose worker is gone ends at once, its scratch folder removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmrig.sweep import pointhost
from mmrig.sweep.pointhost import run_in_host


def where_point(fields, stem, *, paced, profiler_kind="avr"):
    """A stand-in for run_point: the process it ran in, and what the task module says of where."""
    from mmrig.sweep.task import _where

    return {"pid": os.getpid(), "ppid": os.getppid(), "fields": fields, "stem": stem, "paced": paced,
            "profiler_kind": profiler_kind, "where": _where()}


def raising_point(fields, stem, *, paced, profiler_kind="avr"):
    raise ValueError(f"bad point {stem}")


def dying_point(fields, stem, *, paced, profiler_kind="avr"):
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.fixture(autouse=True)
def no_hosts_left():
    yield
    for host in list(pointhost._hosts.values()):
        host.close()
    pointhost._hosts.clear()


def test_points_run_in_one_host_process_until_it_is_recycled(monkeypatch) -> None:
    monkeypatch.setattr(pointhost, "RECYCLE_POINTS", 3)
    got = [run_in_host(where_point, {"n": i}, f"p{i}", "worker-x", paced=False, profiler_kind="8051")
           for i in range(7)]
    pids = [g["pid"] for g in got]
    assert all(g["ppid"] == os.getpid() for g in got) and os.getpid() not in pids
    assert pids[0] == pids[1] == pids[2] != pids[3] == pids[4] == pids[5] != pids[6], pids
    assert [g["fields"]["n"] for g in got] == list(range(7)) and got[6]["stem"] == "p6"
    assert got[0]["profiler_kind"] == "8051" and got[0]["paced"] is False
    assert got[0]["where"] == f"worker-x, point host {pids[0]}"
    for pid in set(pids[:6]):           # the recycled hosts ended
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_what_a_point_raises_is_raised_in_the_worker_and_the_next_point_gets_a_new_host() -> None:
    first = run_in_host(where_point, {}, "a", "w", paced=False)
    with pytest.raises(ValueError, match="bad point b"):
        run_in_host(raising_point, {}, "b", "w", paced=False)
    assert run_in_host(where_point, {}, "c", "w", paced=False)["pid"] != first["pid"]


def test_a_host_killed_mid_point_fails_that_point_only_and_leaves_no_scratch_folder() -> None:
    import threading

    run_in_host(where_point, {}, "first", "w", paced=False)
    scratch = Path(pointhost._hosts[threading.get_ident()].scratch)
    assert scratch.is_dir()
    got = run_in_host(dying_point, {}, "a", "w", paced=False)
    assert "ended mid-point" in got["error"] and "-9" in got["error"], got
    assert not scratch.exists()
    assert run_in_host(where_point, {}, "b", "w", paced=False)["stem"] == "b"


def test_a_host_whose_worker_is_gone_ends_at_once_and_leaves_no_scratch_folder(tmp_path) -> None:
    """A stand-in worker (a process that starts a host and hands it a point that sleeps 30 s) SIGKILLed: the
    host ends within seconds, not after its point, and its scratch folder (the points' temporary folders) goes."""
    script = tmp_path / "worker.py"
    script.write_text(
        "import os, sys, tempfile, time\n"
        "from mmrig.sweep.pointhost import run_in_host\n"
        "def sleeper(fields, stem, *, paced, profiler_kind):\n"
        "    d = tempfile.mkdtemp()\n"
        "    print(os.getpid(), tempfile.gettempdir(), flush=True)\n"
        "    time.sleep(30)\n"
        "run_in_host(sleeper, {}, 's', 'w', paced=False, profiler_kind='avr')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    worker = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, env=env, text=True)
    try:
        host_pid, scratch = worker.stdout.readline().split()
        assert Path(scratch).is_dir() and Path(scratch).name.startswith("mmrig-pointhost-")
        worker.kill()
        worker.wait()
        deadline = time.monotonic() + 5
        while Path(f"/proc/{host_pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(f"/proc/{host_pid}").exists(), "the host outlived its worker"
        assert not Path(scratch).exists()
    finally:
        worker.kill()


def sleepy_point(fields, stem, *, paced, profiler_kind="avr"):
    time.sleep(1.0)
    return {"pid": os.getpid()}


def test_host_pids_names_the_host_while_it_runs_a_point_and_after() -> None:
    """What `make perf` adds to a worker's memory: its host, also in the middle of a point."""
    import threading

    box: list[dict] = []
    t = threading.Thread(target=lambda: box.append(run_in_host(sleepy_point, {}, "a", "w", paced=False)))
    t.start()
    deadline = time.monotonic() + 10
    while not pointhost.host_pids() and time.monotonic() < deadline:
        time.sleep(0.01)
    during, running = pointhost.host_pids(), t.is_alive()
    t.join()
    assert running, "the point ended before its host was seen"
    assert len(during) == 1 and box and during == [box[0]["pid"]] == pointhost.host_pids()


class LockedError(Exception):
    """An exception that does not pickle (it holds a lock)."""

    def __init__(self) -> None:
        import threading

        super().__init__("holds a lock")
        self.lock = threading.Lock()


def unpicklable_raising_point(fields, stem, *, paced, profiler_kind="avr"):
    raise LockedError()


def test_an_exception_that_does_not_pickle_comes_back_as_its_type_and_words() -> None:
    with pytest.raises(RuntimeError, match="LockedError: holds a lock"):
        run_in_host(unpicklable_raising_point, {}, "a", "w", paced=False)
