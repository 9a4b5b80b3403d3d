"""Normal mode: no executor, the PC fires the event itself (a FIRE frame on the profiler's line). It
measures the PC against wall time, so it needs a paced rig (the bench or boards) and skips in lockstep.
A profiler alone is enough (`--rig ports --profiler P`)."""

import pytest

pytestmark = pytest.mark.rig_needs("paced")


def test_the_pc_fires_at_the_tick(rig):
    ev = rig.fire(3, ticks_ahead=1)
    assert ev.outcome in ("ok", "late"), ev            # the profiler stamped it: never missed, never early
    assert ev.latency_us < 71_111, ev                  # within its tick (the PC is not real-time: no tighter)


def test_a_normal_mode_run(run_experiment):
    run = run_experiment(mode="normal", count=10)
    assert run.count("missed") + run.count("lost") == 0, run
