"""The example HIL script of docs/bench.md runs as a user would run it, on the paced bench."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.paced
def test_one_event_example_prints_the_latency_of_its_event() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "hil/examples/one_event.py")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    m = re.search(r"event 5 scheduled for tick (\d+), acked at tick (\d+), profiler saw it ([0-9.]+) us", done.stdout)
    assert m, done.stdout
    target, acked, latency = int(m[1]), int(m[2]), float(m[3])
    assert target - 2 <= acked < target          # the executor had it before its tick
    assert 0.0 < latency < 10.0                  # ISR dispatch: a few microseconds (the executor's target: < 10 us)
