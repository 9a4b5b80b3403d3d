"""The interpreter's settings during a run's events (mmsched.host.quiet): no full collection, a short lock switch
interval, and both as they were afterwards, also when the run raises."""

from __future__ import annotations

import gc
import sys
import weakref

import pytest

from mmsched.host.quiet import NEVER, SWITCH_INTERVAL_S, quiet_interpreter


def test_inside_a_run_the_oldest_generation_is_never_collected_and_the_switch_is_short() -> None:
    before, switch = gc.get_threshold(), sys.getswitchinterval()
    with quiet_interpreter():
        assert gc.get_threshold() == (before[0], before[1], NEVER)
        assert sys.getswitchinterval() <= SWITCH_INTERVAL_S
        assert gc.get_freeze_count() > 0               # what existed is out of the collector's way
        assert gc.isenabled()                          # the young generations are still collected
    assert gc.get_threshold() == before and sys.getswitchinterval() == switch and gc.get_freeze_count() == 0


def test_the_settings_come_back_when_the_run_fails() -> None:
    before, switch = gc.get_threshold(), sys.getswitchinterval()
    with pytest.raises(RuntimeError), quiet_interpreter():
        raise RuntimeError("a link failed")
    assert gc.get_threshold() == before and sys.getswitchinterval() == switch and gc.get_freeze_count() == 0


class _Cycle:
    """An object that refers to itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_garbage_left_before_a_run_is_freed_not_frozen_with_it() -> None:
    # the previous run's cycles, not yet collected when the next run starts: frozen with what lives, they would go
    # back to the oldest generation after the run and be frozen again by the next one, never collected in a process
    # running runs back to back. The automatic collector is off here, so that only what quiet_interpreter itself
    # does can free the cycle.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        dead = weakref.ref(_Cycle())
        assert dead() is not None
        with quiet_interpreter():
            assert dead() is None
    finally:
        if was_enabled:
            gc.enable()


def test_runs_back_to_back_keep_no_garbage_from_the_runs_before() -> None:
    # 20 such "runs" in one process, the collector on as in any process: each leaves one cycle; none of them is
    # left when the next run begins
    left: list[weakref.ref[_Cycle]] = []
    for _ in range(20):
        with quiet_interpreter():
            left.append(weakref.ref(_Cycle()))
    with quiet_interpreter():
        assert [r for r in left if r() is not None] == []
