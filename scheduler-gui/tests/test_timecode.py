"""When a tick began, from TIMECODE arrivals (mmsched.model.timecode): the least delayed frame, the tick length fitted
against a crystal's offset, a fault rejected, an 8051's lead."""

from __future__ import annotations

import pytest

from mmsched.model.timecode import TimecodeTracker


def test_tick_start_estimate_is_the_least_delayed_frame() -> None:
    t = TimecodeTracker(tick_s=0.1, baud=9600)
    wire = t.wire_s
    delays = [0.003, 0.0, 0.010, 0.001, 0.0005]
    for k, d in enumerate(delays):
        t.update(20 + k, 5.0 + (20 + k) * 0.1 + wire + d)
    assert t.tick_start(30) == pytest.approx(5.0 + 3.0)
    assert t.phase(5.0 + 2.45, 24) == pytest.approx(0.5)
    assert t.update(28, 5.0 + 2.8 + wire + 0.002) == 28 and t.jumps == 1    # lost frames: counted, not hidden
    assert t.tick_start(30) == pytest.approx(5.0 + 3.002)                     # and the estimate starts afresh


@pytest.mark.parametrize("ppm", [-5000, -3000, 0, 3000, 5000])
def test_tick_length_is_fitted_from_arrivals_not_taken_from_hello(ppm: int) -> None:
    """A Mega's resonator is off by up to 0.5 %. Arrivals of a profiler whose clock is `ppm` fast, each delayed
    by 0..3 ms (exponential, the line and the OS) and every 40th by a 30 ms stall: once fitted, the start of a
    tick two ahead is never more than 100 us before the truth (a FIRE aimed at it is not early: the delays only
    make it later) nor later than the delays; with HELLO's length it was off by milliseconds."""
    import random
    rnd = random.Random(ppm)
    nominal = 0.0711111
    true_tick = nominal / (1 + ppm / 1e6)
    t = TimecodeTracker(tick_s=nominal, baud=9600)
    naive = TimecodeTracker(tick_s=nominal, baud=9600, fit_min_frames=10**9)   # no fit: the nominal tick
    errors, naive_errors = [], []
    for k in range(600):
        tc = 1000 + k
        delay = rnd.expovariate(1 / 0.0008) if k % 40 else 0.030
        at = 3.0 + tc * true_tick + t.wire_s + min(delay, 0.003 if k % 40 else delay)
        t.update(tc, at)
        naive.update(tc, at)
        if k >= t.fit_min_frames:
            assert t.fitted
            truth = 3.0 + (tc + 2) * true_tick
            errors.append(t.tick_start(tc + 2) - truth)
            naive_errors.append(naive.tick_start(tc + 2) - truth)
    assert min(errors) > -100e-6 and max(errors) < 3e-3
    assert t.fit_ppm == pytest.approx(ppm, abs=100)
    if ppm <= -3000:   # the check can fail: for a slow profiler HELLO's length puts the start milliseconds early
        assert min(naive_errors) < -1e-3


def test_tick_fit_ignores_a_fault_and_restarts_with_the_grid() -> None:
    t = TimecodeTracker(tick_s=0.1, baud=9600, fit_min_frames=8)
    for k in range(20):
        t.update(k, 1.0 + k * 0.1 * 1.05 + t.wire_s)   # 5 % off: no crystal is; a fault, nominal used
    assert not t.fitted and t.fits_rejected > 0 and t.tick_len_s == 0.1
    t.restart()
    for k in range(20):
        t.update(k, 1.0 + k * 0.1 * 1.001 + t.wire_s)
    assert t.fitted and t.fit_ppm == pytest.approx(-999, abs=1)
    t.update(25, 1.0 + 25 * 0.1 * 1.001 + t.wire_s)     # frames lost: the same grid, the fit stays
    assert t.fitted
    t.update(3, 9.0)                                      # went back (a reset the runner missed): fit again
    assert not t.fitted


def test_the_8051s_timecode_lead_is_taken_from_its_hello() -> None:
    """The 8051 sends TIMECODE's bytes with its loop's gaps: its frame ends 12.34 ms after the tick at the least,
    not the 10.42 ms of ten bytes back to back; the tracker of an 8051 profiler subtracts that."""
    from mmproto import HELLO_FLAG_8051, HELLO_FLAG_POLLED, Hello

    from mmsched.model.timecode import TIMECODE_LEAD_S

    avr = TimecodeTracker.for_profiler(Hello(4, 1, 0x100, 16_000_000, 16_000_000, 1_137_778, 9600, 1, 0))
    m51 = TimecodeTracker.for_profiler(Hello(4, 1, 0x100, 11_059_200, 921_600, 65_536, 9600,
                                             HELLO_FLAG_POLLED | HELLO_FLAG_8051, 0))
    assert avr.lead_s == 0.0 and avr.wire_s == pytest.approx(0.010417, abs=1e-6)
    assert m51.lead_s == TIMECODE_LEAD_S["8051"] and m51.wire_s == pytest.approx(0.012344, abs=1e-6)
    assert m51.tick_s == pytest.approx(65_536 / 921_600)
    m51.update(7, 1.0 + m51.wire_s)                    # an 8051 frame that met no delay: tick 7 began at 1.0
    assert m51.tick_start(7) == pytest.approx(1.0)
