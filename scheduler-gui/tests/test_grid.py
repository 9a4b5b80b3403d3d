"""The schedule grid (mmsched.model.grid): moments a whole number of the profiler's counts apart, inside ticks, and the
latency measured from each moment (protocol/SPEC.md section 7)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mmproto import (HELLO_FLAG_8051, HELLO_FLAG_CAPTURE, HELLO_FLAG_POLLED, RESULT_FLAG_FIRE, Hello, Result, TimeBase,
                     Timecode)
from mmproto.wiretime import wire_time_s
from mmsched.model.event import Event
from mmsched.model.grid import (AVR_FIRE_BUSY_S, AVR_RESULT_BUSY_S, LINE_MARGIN, Grid, fire_busy_s, holds_one_fire,
                                interval_counts, line_gap_s, line_limit_per_s, line_problem)
from mmsched.verdict.outcome import apply_result

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


def test_a_profiler_that_holds_one_fire_gets_its_fires_no_closer_than_its_result_and_a_timecode_take() -> None:
    """The 8051 frees its one FIRE only once that FIRE's RESULT has left, and a TIMECODE frame may be leaving
    first: two FIREs written 22 ms apart at 9600 baud lost the second in a paced run (the RESULT's 18.75 ms
    alone was the gap then). The AVR queues its FIREs' tags: the RESULT's line time is its gap."""
    avr = Hello(proto_version=6, node_kind=1, fw_version=768, cpu_hz=16_000_000, timer_hz=16_000_000,
                tick_counts=1_137_778, baud=9600, flags=HELLO_FLAG_CAPTURE, reset_cause=1)
    i8051 = replace(avr, flags=HELLO_FLAG_POLLED | HELLO_FLAG_8051, timer_hz=921_600, tick_counts=65_536)
    assert not holds_one_fire(avr) and holds_one_fire(i8051)
    result, timecode = wire_time_s(Result, 9600), wire_time_s(Timecode, 9600)
    assert line_gap_s(9600) == pytest.approx(result / LINE_MARGIN)
    assert fire_busy_s(9600) > result + timecode                     # the 8051's bytes leave with gaps
    assert fire_busy_s(9600) > 0.0364                                # the widest line gap that lost a FIRE
    assert line_gap_s(9600, one_fire=True) == pytest.approx(fire_busy_s(9600) / LINE_MARGIN)
    assert line_limit_per_s(9600, one_fire=True) < line_limit_per_s(9600)
    assert line_problem(1 / 35, 9600) is None and line_problem(1 / 35, 9600, one_fire=True) is not None


def test_the_avr_profilers_own_time_limits_a_normal_grid_at_any_fast_link_rate() -> None:
    """At 250000 baud and above the AVR's own time per event (a FIRE in, a RESULT out: 750 us, measured on the
    bench) is longer than a RESULT's line time: a faster link carries no more events, and the refusal says so and
    names a rate that fits instead of a link rate that does not. Mixed mode's edges bring no FIRE in."""
    for baud in (250000, 500000, 1000000):
        assert line_gap_s(baud) == pytest.approx((AVR_RESULT_BUSY_S + AVR_FIRE_BUSY_S) / LINE_MARGIN)
    assert line_limit_per_s(1000000) == pytest.approx(line_limit_per_s(500000), rel=0.01)
    assert line_limit_per_s(500000, fires=False) > line_limit_per_s(500000)
    assert line_problem(0.001, 500000) is None                      # a kilohertz fits, with the margin
    why = line_problem(0.0005, 1000000)
    assert why is not None and "its own CPU" in why and "--rate 0.84 ms or slower" in why and "--baud" not in why
    assert line_problem(0.0008, 500000, fires=False) is None         # mixed mode's 1,250 a second with RESULTs
    assert line_gap_s(115200) == pytest.approx(wire_time_s(Result, 115200) / LINE_MARGIN)   # the line's, below
