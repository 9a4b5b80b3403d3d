"""Where a tick falls in the periodic executor load's period (Rig.load_phase_us), from the load rig.mode was given,
parsed once there: no bench, the profiler's time base given."""

from __future__ import annotations

import mmproto as mp

from mmhil.rig import Rig
from mmsched.model.exload import ExecutorLoad


def test_the_load_phase_comes_from_the_load_parsed_once(monkeypatch) -> None:
    rig = Rig("unused://", None)
    assert rig.load_phase_us(5) is None and rig._phase_bin(5) is None        # no periodic load
    rig.exload, rig.executor_load = ExecutorLoad.parse("periodic=10ms/2ms"), "periodic=10000/2000"
    monkeypatch.setattr(rig, "time_base", lambda: mp.TimeBase(16_000_000, 48_000))   # a 3 ms tick

    def no_parse(text: str) -> ExecutorLoad:
        raise AssertionError("parsed again for an event")

    monkeypatch.setattr(ExecutorLoad, "parse", staticmethod(no_parse))
    assert [rig.load_phase_us(tc) for tc in (0, 1, 3, 4)] == [0.0, 3000.0, 9000.0, 2000.0]
    assert [rig._phase_bin(tc) for tc in (0, 1, 3, 4)] == [0, 3, 9, 2]
