"""cyclictest's `-p PRIO -m` on `mmrig run`: SCHED_FIFO for normal mode's firing thread and the run's memory locked
(mlockall), so that normal mode can be compared with cyclictest at the same priority.

As cyclictest does, a request the host refuses is refused: one line naming the option, what the kernel said and how
to allow it, exit 2, before any bench is started. What was in effect is recorded in the sidecar's `cpu` (the firing
thread's policy and priority as the thread read them back, whether the memory was locked) and in the .hist header.
Without the right (no CAP_SYS_NICE, RLIMIT_RTPRIO 0; no CAP_IPC_LOCK, a small RLIMIT_MEMLOCK) the run is refused:
checked as root by dropping those capabilities from the child's bounding set (setpriv), as a normal user directly."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mmrig.cli import build_parser
from mmsched.model.config import RunConfig
from mmsched.model.event import Event
from mmsched.run.firing import Firer
from mmsched.host.rtsched import fifo_refusal, thread_sched

MMRIG = [sys.executable, "-m", "mmrig"]


def unprivileged() -> list[str]:
    """The command prefix that runs a child without the right to SCHED_FIFO or to lock its memory."""
    if os.geteuid() != 0:
        if resource.getrlimit(resource.RLIMIT_RTPRIO)[0] >= 10:
            pytest.skip("this user may use SCHED_FIFO 10 (RLIMIT_RTPRIO): nothing to refuse")
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root, and no setpriv to drop CAP_SYS_NICE and CAP_IPC_LOCK with")
    return ["setpriv", "--bounding-set=-sys_nice,-ipc_lock", "--inh-caps=-sys_nice,-ipc_lock"]


def may_fifo() -> bool:
    return fifo_refusal(10) is None


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("mmrig run: "), \
        (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_the_options_parse_as_cyclictest_users_write_them() -> None:
    p = build_parser()
    a = p.parse_args(["run", "--mode", "normal", "-p", "80", "-m"])
    assert (a.priority, a.mlockall) == (80, True)
    a = p.parse_args(["run", "--mode", "normal", "--priority", "10", "--mlockall"])
    assert (a.priority, a.mlockall) == (10, True)
    a = p.parse_args(["run"])
    assert (a.priority, a.mlockall) == (None, False)


@pytest.mark.parametrize("value", ["0", "100", "-1"])
def test_a_priority_outside_1_99_is_one_line_and_exit_2(value: str, tmp_path: Path) -> None:
    proc = subprocess.run([*MMRIG, "run", "--mode", "normal", "-p", value, "-o", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MMRIG_ROOT": str(tmp_path / "no-checkout")})
    line = one_line(proc)
    assert "--priority" in line and "1..99" in line and value in line, line
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kw", [{"priority": 0}, {"priority": 100}, {"priority": 5.5}, {"priority": True}])
def test_runconfig_checks_the_priority(kw: dict) -> None:
    with pytest.raises(ValueError, match="--priority"):
        RunConfig(mode="normal", **kw)
    RunConfig(mode="normal", priority=1)
    RunConfig(mode="normal", priority=99, mlockall=True)


@pytest.mark.parametrize("mode", ["mixed", "verification"])
@pytest.mark.parametrize("option", [["-p", "10"], ["-m"]])
def test_priority_and_mlockall_are_refused_where_the_pc_does_not_fire(mode: str, option: list[str],
                                                                      tmp_path: Path) -> None:
    # mixed and verification: the executor fires; the PC's timing is not in the latency
    proc = subprocess.run([*MMRIG, "run", "--mode", mode, *option, "-o", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MMRIG_ROOT": str(tmp_path / "no-checkout")})
    line = one_line(proc)
    assert ("--priority" if option[0] == "-p" else "--mlockall") in line and "normal mode" in line, line


def test_without_the_right_to_sched_fifo_the_run_is_refused_as_cyclictest_does(tmp_path: Path) -> None:
    # (MMRIG_RTKIT=off: no RealtimeKit to ask either, as on a machine without it)
    proc = subprocess.run([*unprivileged(), *MMRIG, "run", "--mode", "normal", "-p", "80", "-o", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MMRIG_ROOT": str(tmp_path / "no-checkout"), "MMRIG_RTKIT": "off"})
    line = one_line(proc)
    assert "-p 80" in line and "SCHED_FIFO" in line and "RLIMIT_RTPRIO" in line, line
    assert "checkout" not in line                         # refused before any bench was looked for
    assert not list(tmp_path.iterdir())


def test_without_the_right_to_lock_memory_the_run_is_refused(tmp_path: Path) -> None:
    proc = subprocess.run([*unprivileged(), *MMRIG, "run", "--mode", "normal", "-m", "-o", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MMRIG_ROOT": str(tmp_path / "no-checkout")})
    line = one_line(proc)
    assert "-m" in line and "mlockall" in line and "RLIMIT_MEMLOCK" in line, line
    assert not list(tmp_path.iterdir())


def test_the_firing_thread_runs_at_the_priority_asked_and_says_so() -> None:
    if not may_fifo():
        pytest.skip("no right to SCHED_FIFO here")
    written = threading.Event()
    seen: list[str] = []

    def send(ev: Event, wire: bytes) -> None:
        seen.append(thread_sched())
        written.set()

    firer = Firer(send, priority=12).start()
    firer.add(Event(0, 1, 0, "normal", 1, 10, 9, 0.0), time.monotonic() + 0.01, b"\x00")
    assert written.wait(5.0)
    firer.stop()
    assert seen == ["fifo 12"] and firer.sched == "fifo 12" and firer.sched_why is None
    assert thread_sched() == "other"                       # the caller's thread is left as it was


def test_without_a_priority_the_firing_thread_says_other() -> None:
    firer = Firer(lambda e, w: None).start()
    time.sleep(0.05)
    firer.stop()
    assert firer.sched == "other" and firer.memory_locked is False


@pytest.mark.paced
def test_a_normal_run_at_fifo_with_memory_locked_records_what_was_in_effect(tmp_path: Path) -> None:
    if not may_fifo():
        pytest.skip("no right to SCHED_FIFO here: the refusal is what runs (above)")
    from mmhil.bench import ensure_built
    ensure_built()
    out = tmp_path / "rt"
    proc = subprocess.run([*MMRIG, "run", "--mode", "normal", "-p", "10", "-m", "--count", "3", "-q", "-o", str(out),
                           "--hist"], capture_output=True, text=True, timeout=180)
    assert proc.returncode in (0, 3), proc.stderr            # (3: a paced run a host stall made invalid)
    side = json.loads(out.with_suffix(".json").read_text())
    assert side["config"]["priority"] == 10 and side["config"]["mlockall"] is True
    cpu = side["cpu"]
    assert (cpu["firer_sched"], cpu["firer_sched_why"]) == ("fifo 10", None)
    assert (cpu["memory_locked"], cpu["memory_locked_why"]) == (True, None)
    header = [line for line in out.with_suffix(".hist").read_text().splitlines() if line.startswith("#")]
    assert "# firing thread: SCHED_FIFO 10, memory locked (mlockall)" in header, header
    assert any(line.startswith("# command: mmrig run --mode normal -p 10 -m") for line in header), header
