"""The clock servo (normal mode's discipline) and the latency budget, on synthetic FIREs whose truth is known:
a profiler whose tick 0 began at host time BASE, write paths with a floor and a long tail, crystal drift,
and FIREs a stalled bench stamped too early."""

from __future__ import annotations

import numpy as np
import pytest

from mmsched.verdict.budget import Floor, apply_budget, budget_summary
from mmsched.model.event import Event
from mmsched.model.servo import ClockServo, confirmed_max, reference_bases

TICK = 0.0711
BASE = 100.0


def fires(n: int, drift: float = 0.0, seed: int = 0, path_floor: float = 10e-6, stalled: tuple[int, ...] = ()):
    """(written_at, stamp_s, path) of n FIREs one tick apart: profiler time = (host - BASE) * (1 + drift)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        w = BASE + 1.0 + k * TICK
        path = path_floor + rng.exponential(15e-6)
        stamp = (w + path - BASE) * (1 + drift)
        if k in stalled:
            stamp -= 800e-6                       # the bench lagged: the FIRE entered its past
        out.append((w, stamp, path))
    return out


def test_confirmed_max_skips_a_lone_outlier() -> None:
    assert confirmed_max([5.0, 1.0, 0.99, 0.5], 0.02) == 1.0
    assert confirmed_max([1.0, 0.99], 0.02) == 1.0
    assert confirmed_max([1.0, 0.5], 0.02) is None


def test_servo_places_ticks_to_the_fastest_path_without_drift() -> None:
    s = ClockServo(TICK)
    assert not s.ready and s.tick_start(10, BASE) is None
    for w, st, _ in fires(64):
        s.add(w, st)
    err = s.base(BASE + 5.0) - BASE                       # the fastest path reads as no delay
    assert -40e-6 < err <= -10e-6 + 1e-9
    assert s.drift == 0.0


def test_servo_ignores_a_stalled_fire() -> None:
    s = ClockServo(TICK)
    for w, st, _ in fires(40, stalled=(35,)):
        s.add(w, st)
    assert s.base(BASE + 4.0) - BASE < 0                  # never placed later than the truth: not early


def test_servo_follows_drift_over_a_long_run() -> None:
    s = ClockServo(TICK)
    data = fires(900, drift=50e-6)                          # 64 s
    for w, st, _ in data:
        s.add(w, st)
    assert s.drift == pytest.approx(-50e-6 * (1 + 1e-6) * 1.0, rel=0.2)
    at = data[-1][0]
    truth = at - (at - BASE) * (1 + 50e-6)                  # base as seen at `at` (profiler time = host time then)
    assert abs(s.base(at) - truth) < 40e-6


def test_servo_at_a_kilohertz_fits_the_drift_once_a_second_and_still_finds_it(monkeypatch) -> None:
    # a FIRE every 1 ms: an anchor every 16 ms; fitting over all of them at each cost the run's thread so much
    # that its events went out later and later (the fit is O(anchors), the anchors are 6 drift spans)
    import mmsched.model.servo as servo
    calls = []
    real = servo.fit_drift
    monkeypatch.setattr(servo, "fit_drift", lambda anchors: calls.append(len(anchors)) or real(anchors))
    rng = np.random.default_rng(1)
    s = ClockServo(TICK)
    for k in range(90_000):                                  # 90 s
        w = BASE + 1.0 + k * 0.001
        s.add(w, (w + 10e-6 + rng.exponential(15e-6) - BASE) * (1 + 50e-6))
    assert len(calls) <= 92                                  # once a second, not 5,600 times
    assert s.drift == pytest.approx(-50e-6, rel=0.2)


def test_reference_and_budget_add_up_to_each_latency() -> None:
    data = fires(120, stalled=(60,))
    events = []
    for k, (w, st, _) in enumerate(data):
        tc = int((w - BASE) / TICK) + 1
        e = Event(k, k + 1, k % 8, "normal", 1, tc, tc - 1, 0.0)
        e.fire_at, e.written_at, e.stamp_s = w - 3e-6, w, st
        e.latency_us = (st - tc * TICK) * 1e6
        e.finish("ok", None)
        e.measurable = k != 60
        events.append(e)
    assert apply_budget(events, TICK, 7.0) == 120
    for e in events:
        assert e.est_error_us + e.wakeup_us + e.write_us + e.line_us + e.floor_us == pytest.approx(e.latency_us, abs=0.01)
        assert e.write_us == 0.0                  # (no write's return known: all of the path is the line's)
        assert e.wakeup_us == pytest.approx(3.0, abs=0.01)
    lines = [e.line_us for e in events if e.measurable]
    assert min(lines) == pytest.approx(0.0, abs=0.01) and min(lines) >= -0.01   # the fastest path is the zero
    s = budget_summary(events, Floor([7.0, 7.0], "bench_inject"), disciplined=False)
    assert s["n"] == 119 and s["floor"]["us"] == 7.0 and s["target"] == "naive"
    assert s["parts"]["wakeup_us"]["p50"] == pytest.approx(3.0, abs=0.01)


def test_reference_bases_without_fires() -> None:
    assert reference_bases([None, None], [True, True], TICK, 0.0) == [None, None]


def test_servo_recovers_from_a_bench_that_fell_behind_within_eight_fires() -> None:
    """Ten FIREs in a row stamped 150 us early (the paced bench ran behind wall time, then caught up)."""
    s = ClockServo(TICK)
    data = fires(60, stalled=())
    for k, (w, st, _) in enumerate(data):
        s.add(w, st - (150e-6 if 20 <= k < 30 else 0.0))
        if k == 29:
            assert s.base(w) - BASE > 100e-6            # it followed the slipped clock, as a servo must
    assert s.base(data[-1][0]) - BASE < 0                 # 30 FIREs later: back on the true clock
    s2 = ClockServo(TICK)
    for k, (w, st, _) in enumerate(data[:38]):
        s2.add(w, st - (150e-6 if 20 <= k < 30 else 0.0))
    assert s2.base(data[37][0]) - BASE < 0                # 8 good FIREs after the step are enough


@pytest.mark.parametrize("ppm", [-5000, 5000])
def test_servo_with_a_profiler_half_a_percent_off_places_ticks_by_the_rate_it_is_given(ppm: int) -> None:
    # A Mega's resonator is off by up to 0.5 %, 25 times the drift the servo fits (at most 200 ppm): consecutive
    # FIREs' bounds, the stamps taken as host seconds, part by 355 us a tick, and no two agree. The run gives the
    # servo the rate it fitted from the TIMECODE arrivals (timecode.py), which it applies to each stamp
    rate = 1.0 + ppm * 1e-6                                # profiler seconds a host second
    s = ClockServo(TICK, clock=1.0 / rate)
    data = fires(120, drift=ppm * 1e-6)
    for w, st, _ in data:
        s.add(w, st)
    at = data[-1][0]
    for tc in (int((at - BASE) * rate / TICK) + k for k in (1, 2, 5)):
        truth = BASE + tc * TICK / rate
        assert -40e-6 < s.tick_start(tc, near=at) - truth <= 1e-9       # never later than the truth: not early


def test_servo_an_hour_into_a_run_keeps_its_ticks_as_the_fitted_rate_moves() -> None:
    # the fitted rate moves a little at each TIMECODE frame; an hour in, a stamp is 3,600 s of the profiler's
    # timer, and 0.3 ppm of that is 1 ms: the servo must not carry a rate change on the whole stamp
    rate, start = 1.0 - 3000e-6, 3600.0
    s = ClockServo(TICK)
    rng = np.random.default_rng(3)
    w = BASE
    for k in range(200):
        w = BASE + start + k * TICK
        s.clock = 1.0 / rate * (1.0 + rng.uniform(-0.3e-6, 0.3e-6))
        s.add(w, (w + 10e-6 + rng.exponential(15e-6) - BASE) * rate)
    tc = int((w - BASE) * rate / TICK) + 2
    assert -40e-6 < s.tick_start(tc, near=w) - (BASE + tc * TICK / rate) <= 1e-6
