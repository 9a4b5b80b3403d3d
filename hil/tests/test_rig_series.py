"""A periodic schedule from a HIL script (rig.series, PERIODIC of protocol version 5) on a lockstep bench: a
kilohertz series of events at moments inside ticks, every event accounted for, and each moment placed in the
tick the executor measures in its own clock, whatever its crystal's error. Unscaled, a moment at the end of a
71.1 ms tick would be 355 us off at 0.5 %; here the end of the tick keeps the start's latency within 2 us."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from mmhil import Bench, Rig, RigError


@pytest.mark.parametrize("ppm", [-5000, 0, 5000])
def test_a_kilohertz_series_lands_each_moment_in_the_executors_own_tick(tmp_path: Path, ppm: int) -> None:
    with Bench(run_dir=tmp_path / "run", lockstep=True, ppm_executor=ppm) as bench, Rig.on_bench(bench) as rig:
        rig.change_baud(500000)                    # a RESULT and a FIRED per event: 9600 baud carries 41 a second
        s = rig.series(400, 1.0)
        assert s.fired == 400 and not s.unjoined
        assert s.outcomes == {"ok": 400, "late": 0, "early": 0, "missed": 0, "lost": 0}
        tick = rig.time_base().tick_counts
        assert len({e.due_counts for e in s.events}) == 400 and s.period_us == 1000.0
        start = [e.latency_us for e in s.events if e.due_counts < 0.2 * tick]
        end = [e.latency_us for e in s.events if e.due_counts > 0.8 * tick]
        assert len(start) > 50 and len(end) > 50
        # the offset error at the end of a tick: within 2 us of the start's. Means, not medians: the board's
        # timer counts 4 us, so latencies take a few values 4 us apart and a median jumps between them
        assert abs(statistics.fmean(end) - statistics.fmean(start)) <= 2.0, (statistics.fmean(start),
                                                                             statistics.fmean(end))
        assert 1.0 < min(s.latencies_us) and max(s.latencies_us) < 50.0
        hist = s.histogram(1.0)
        assert sum(hist.values()) == 400 and min(hist) >= 1
        # the AVR profiler's own histogram of the series, at either clock error: the same cells
        ph = s.profiler_histogram
        assert ph is not None and ph["final"] and ph["agreement"]["agrees"], ph
        assert {i: c for i, c in enumerate(ph["counts"]) if c} == hist and ph["ok"] == 400


def test_a_series_is_refused_beside_listed_events_and_says_why(tmp_path: Path) -> None:
    from mmhil import frames

    with Bench(run_dir=tmp_path / "run", lockstep=True) as bench, Rig.on_bench(bench) as rig:
        rig.mode("mixed")
        now = rig.next_tick() - rig.tc_offset
        rig.send("executor", frames.schedule(event_id=3, timecode=now + 50, tag=7))
        with pytest.raises(RigError, match="list_full"):
            rig.series(10, 1.0)
        rig.cancel()
        assert rig.series(3, 20.0).outcomes["ok"] == 3          # 3 events, 20 ms apart: the line carries them
