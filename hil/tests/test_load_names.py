"""One name for each load: `executor_load` is the executor's (rig.mode, frames.mode, run_experiment, RunConfig),
`load` the PC's (run_experiment, RunConfig). The executor's former `load=` in rig.mode and frames.mode still works,
with a DeprecationWarning naming the new name."""

from __future__ import annotations

import inspect

import pytest

from mmhil import frames
from mmhil.rig import Rig


def test_the_executor_load_is_executor_load_in_rig_mode_and_frames_mode() -> None:
    assert "executor_load" in inspect.signature(Rig.mode).parameters
    assert "executor_load" in inspect.signature(frames.mode).parameters
    frame = frames.mode("mixed", dispatch="task", executor_load="cpu,periodic=10ms/2ms")
    assert (frame.cpu_load, frame.periodic_period_us, frame.periodic_exec_us) == (1, 10_000, 2_000)


def test_the_former_name_load_still_works_and_warns() -> None:
    with pytest.warns(DeprecationWarning, match=r"frames.mode\(load=...\) is now frames.mode\(executor_load=...\)"):
        frame = frames.mode("mixed", dispatch="task", load="cpu,periodic=10ms/2ms")
    assert frame == frames.mode("mixed", dispatch="task", executor_load="cpu,periodic=10ms/2ms")
    with pytest.raises(TypeError, match="unexpected keyword argument 'laod'"):
        frames.mode("mixed", laod="cpu")
