"""The schedule grid (mmsched.grid): moments a whole number of the profiler's counts apart, inside ticks, and the
latency measured from each moment (protocol/SPEC.md section 7)."""

from __future__ import annotations

import pytest

from mmproto import RESULT_FLAG_FIRE, Result, TimeBase
from mmsched.event import Event
from mmsched.grid import Grid, interval_counts
from mmsched.outcome import apply_result

AVR = TimeBase(16_000_000, 1_137_778)
I8051 = TimeBase(921_600, 65_536)


def test_one_millisecond_is_16000_counts_on_the_mega_and_the_nearest_922_on_the_8051() -> None:
    assert interval_counts(0.001, AVR.timer_hz) == 16_000
    assert interval_counts(0.001, I8051.timer_hz) == 922            # 921.6 rounded: 1.000434 ms, said as run
    assert Grid(0, 922, I8051.tick_counts, I8051.timer_hz).interval_us == pytest.approx(1000.434, abs=1e-3)
    assert interval_counts(1e-9, AVR.timer_hz) == 1                  # never zero: moments always move on


def test_moments_run_on_across_tick_boundaries_without_drift() -> None:
    g = Grid(first_tc=100, interval_counts=16_000, tick_counts=AVR.tick_counts, timer_hz=AVR.timer_hz)
    assert g.moment(0) == (100, 0)
    assert g.moment(71) == (100, 71 * 16_000)                        # 1,136,000: still in the first tick
    assert g.moment(72) == (101, 72 * 16_000 - AVR.tick_counts)      # 1,152,000 - 1,137,778 = 14,222 into the next
    # a million moments later the moment is still exactly k intervals after moment 0 (integer counts, no float)
    tc, due = g.moment(1_000_000)
    assert (tc - 100) * AVR.tick_counts + due == 16_000_000_000
    assert all(0 <= g.moment(k)[1] < AVR.tick_counts for k in range(0, 5000, 7))


def test_take_walks_the_moments_in_order_and_the_sidecar_counts_them() -> None:
    g = Grid(5, 922, I8051.tick_counts, I8051.timer_hz)
    taken = [g.take() for _ in range(80)]
    assert taken == [g.moment(k) for k in range(80)]
    g.skipped += 1
    side = g.sidecar()
    assert side["moments"] == 80 and side["skipped"] == 1 and side["interval_counts"] == 922
    assert side["per_s"] == pytest.approx(999.567, abs=1e-3)


def event(tc: int, due: int) -> Event:
    return Event(0, 1, 0, "normal", 1, tc, tc - 1, 0.0, due_counts=due)


@pytest.mark.parametrize("due", [0, 16_000, 1_100_000])
def test_latency_runs_from_the_moment_not_from_the_tick_start(due: int) -> None:
    # a FIRE stamped 250 us (4000 counts) after the moment, in the same tick or, past its end, in the next
    stamp = due + 4000
    r = Result(event_id=0, flags=RESULT_FLAG_FIRE, tag=1, timecode=7 + stamp // AVR.tick_counts, counts=stamp % AVR.tick_counts)
    ev = event(7, due)
    apply_result(ev, r, AVR, 1000.0)
    assert ev.latency_counts == 4000 and ev.latency_us == pytest.approx(250.0) and ev.outcome == "ok"


def test_a_stamp_before_the_moment_is_early_even_inside_the_tick() -> None:
    ev = event(7, 16_000)
    apply_result(ev, Result(event_id=0, flags=RESULT_FLAG_FIRE, tag=1, timecode=7, counts=15_000), AVR, 1000.0)
    assert ev.latency_counts == -1000 and ev.outcome == "early"
