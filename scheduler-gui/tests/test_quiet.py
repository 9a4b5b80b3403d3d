"""The interpreter's settings during a run's events (mmsched.host.quiet): no full collection, a short lock switch
interval, and both as they were afterwards, also when the run raises."""

from __future__ import annotations

import gc
import sys

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
