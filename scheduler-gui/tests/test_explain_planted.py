"""`mmrig explain` against a planted cause on the paced bench: a 1 kHz normal run (-p 80, --trace-host) whose
firing thread is pinned to CPU 1, where a SCHED_FIFO 90 spinner (analysis/tests/data/explain/spinner.py) spins
5 ms while events are being fired. The latest event whose moment came while it spun must have that thread as its
largest part, by name, pid and policy, its run on the CPU the 5 ms it spun, to the trace's resolution. (Not the
run's worst event: on a shared VM the host's own worst, a stall of the whole vCPU, can be longer than 5 ms.)"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmanalysis.explain import explain_run, format_explanation
from mmsched.run.hosttrace import refusal

ROOT = Path(__file__).resolve().parents[2]
SPINNER = ROOT / "analysis" / "tests" / "data" / "explain" / "spinner.py"
MMRIG = [sys.executable, "-m", "mmrig"]
CPU = 1
SPIN_S = 0.005
# the spinner's run as the trace bounds it against its own clock: its wake-up before its first stamp and its
# switch away after its last, tens of us on this VM; a switch the trace missed widens the bounds, not this
RESOLUTION_US = 200.0


def firing_thread(pid: int) -> int | None:
    """The native firing thread of process `pid` once events are being fired: its last thread at SCHED_FIFO (the
    reader threads, also at -p's priority, are made when the links open, the firing thread when firing begins;
    the timer slack it sets is no mark: the kernel gives every real-time thread 0)."""
    fifo = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if int((task / "stat").read_text().rsplit(")", 1)[1].split()[38]) == 1:     # SCHED_FIFO
                fifo.append(int(task.name))
        except (OSError, ValueError, IndexError):
            continue
    return max(fifo) if fifo else None


def spun_over(csv: Path, began: float, ended: float) -> int:
    """The event whose moment came while the spinner spun (CLOCK_MONOTONIC [began, ended]) and that waited longest
    for its write: the one the spinner held."""
    import json

    import pandas as pd

    df = pd.read_csv(csv)
    t0 = json.loads(csv.with_suffix(".json").read_text())["run_clock"]["t0_s"]
    moment = t0 + df["sent_s"] - df["wakeup_us"] / 1e6
    during = df[(moment >= began) & (moment <= ended)]
    assert not during.empty, f"no event's moment lies in the spin {began:.6f} .. {ended:.6f}"
    return int(during.loc[during["wakeup_us"].idxmax(), "event"])


def events_ended(partial: Path) -> int:
    try:
        return max(0, len(partial.read_bytes().splitlines()) - 1)
    except OSError:
        return 0


@pytest.fixture(scope="module")
def built() -> None:
    from mmhil.bench import ensure_built
    ensure_built()


@pytest.mark.paced
def test_the_worst_event_names_the_planted_spinner(tmp_path: Path, built: None) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: the planted SCHED_FIFO 90 thread, -p 80 and the kernel's trace")
    if (why := refusal()) is not None:
        pytest.skip(f"--trace-host cannot record here: {why}")
    if (os.cpu_count() or 1) < 2 or CPU not in os.sched_getaffinity(0):
        pytest.skip(f"needs CPU {CPU} beside another: the spinner holds it")
    out = tmp_path / "planted"
    run = subprocess.Popen([*MMRIG, "run", "--mode", "normal", "-m", "-p", "80", "-i", "1ms", "--baud", "500000",
                            "-l", "4000", "--trace-host", "-q", "-o", str(out)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # once events are being fired (the journal has rows): the firing thread pinned to CPU, then the spin there
        while events_ended(out.with_name("planted.partial.csv")) < 300 and run.poll() is None:
            time.sleep(0.05)
        tid = firing_thread(run.pid)
        assert tid is not None, f"the run's firing thread never appeared: {run.poll()}"
        os.sched_setaffinity(tid, {CPU})
        # 2 s ahead: the spinner is at SCHED_FIFO 90 and asleep before it spins, so that its switch-in (where the
        # trace gives a thread's priority: it cannot see sched_setscheduler) shows it at rt 90
        spin = subprocess.run([sys.executable, str(SPINNER), str(CPU), "90", f"{time.monotonic() + 2.0:.6f}",
                               str(SPIN_S), "mmspinner"], capture_output=True, text=True, timeout=60, check=True)
        began, ended = (float(x) for x in spin.stdout.split())
        stdout, stderr = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode in (0, 1, 3), stderr             # (3: a paced run the busy host made invalid)
    [ex] = explain_run(out.with_suffix(".csv"), spun_over(out.with_suffix(".csv"), began, ended))
    text = format_explanation(ex)
    held = ex.largest()
    assert held.key == "wakeup.held", text
    assert held.detail["comm"] == "mmspinner" and held.detail["policy"] == "rt 90" and held.detail["cpu"] == CPU, text
    spun_us = (ended - began) * 1e6
    assert held.detail["ran_us"] - RESOLUTION_US <= spun_us <= held.detail["ran_max_us"] + RESOLUTION_US, text
    assert abs(spun_us - SPIN_S * 1e6) < RESOLUTION_US
    assert ex.moment_mono_s is not None and began - 0.001 <= ex.moment_mono_s <= ended, text
