"""A real-time simulation warned by RLIMIT_RTTIME leaves real-time instead of being killed (pacing.c): RealtimeKit,
the way to real-time for a user without RLIMIT_RTPRIO, sets that limit first, and a paced bench catching up after
a host stall may run past it. Here the limit is made small and the bench made to catch up (a stall of its own);
it must go on, out of real-time, and say so. Needs the right to SCHED_FIFO (root or RLIMIT_RTPRIO 10)."""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from helpers import fixture_bench  # noqa: E402


@pytest.mark.paced
def test_a_simulation_warned_by_rlimit_rttime_leaves_real_time_and_goes_on(tmp_path: Path) -> None:
    with fixture_bench(tmp_path, realtime=True) as bench:
        if not bench.status()["host"]["sched"].startswith("fifo"):
            pytest.skip("the bench could not get SCHED_FIFO here (root, CAP_SYS_NICE or RLIMIT_RTPRIO)")
        # soft 2 ms, hard 10 s: the warning comes as soon as the simulation runs 2 ms without a sleep
        resource.prlimit(bench.pid, resource.RLIMIT_RTTIME, (2_000, 10_000_000))
        deadline = time.monotonic() + 10
        while bench.status()["host"]["rt_limit_demotions"] == 0 and time.monotonic() < deadline:
            bench.sleep(300)              # a stall of its own: catching up it runs without sleeping
            time.sleep(0.5)
        host = bench.status()["host"]
        assert host["rt_limit_demotions"] >= 1, host
        assert not host["sched"].startswith(("fifo", "rr")), host
        assert bench.alive()
        assert "RLIMIT_RTTIME's warning" in bench.log_tail()
