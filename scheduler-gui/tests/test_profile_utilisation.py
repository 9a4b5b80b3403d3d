"""`mmrig profile` on a real executor trace under a known load (`mmrig run --executor-load cpu,periodic=10ms/2ms
--trace`, lockstep): the utilisation it prints is the processor's share over the trace's span, so the CPU task,
which takes whatever the others leave, brings U up to the processor's whole and never past it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

MMRIG = [sys.executable, "-m", "mmrig"]


def test_profile_of_a_cpu_loaded_executor_never_passes_one(tmp_path: Path) -> None:
    from mmhil.bench import ensure_built

    ensure_built()
    run = subprocess.run([*MMRIG, "run", "--mode", "mixed", "--distance", "2", "--count", "20", "--unpaced",
                          "--executor-load", "cpu,periodic=10ms/2ms", "--trace", "--out", str(tmp_path / "loaded")],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    done = subprocess.run([*MMRIG, "profile", str(tmp_path / "loaded.exectrace")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    text = done.stdout
    m = re.search(r"\*\*([0-9.]+)\*\*; idle ([0-9.]+)% of ([0-9.]+) s", text)
    assert m, text
    u, idle, seconds = float(m[1]), float(m[2]) / 100, float(m[3])
    # every cycle of the trace ran a task or an interrupt, or slept: U and the idle share make the whole
    assert u <= 1.0 and u + idle == pytest.approx(1.0, abs=0.002), text
    rows = {cells[2]: cells for line in text.splitlines()
            if len(cells := [c.strip() for c in line.split("|")]) > 7 and cells[1] in ("task", "isr")}
    # the periodic job: 2 ms of every 10 ms while it ran (its instances x 10 ms of the trace's span)
    periodic = rows["load_periodic"]
    instances, u_periodic = int(periodic[4]), float(periodic[7])
    assert u_periodic == pytest.approx(0.2 * instances * 0.010 / seconds, rel=0.03), text
    assert float(rows["load_cpu"][7]) <= 1.0 - u_periodic
