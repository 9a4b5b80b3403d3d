"""The short fault campaign `make test` runs (the full one is `make faults`, hil/mmhil/faultcampaign.py): lockstep
mixed runs with a fault of each kind that touches the events, each checked for no event blamed on the system
under test, the run invalid with the fault named, counters that agree with what was injected, and events
outside the fault's window on time."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmrig.faultcampaign import CLASSES, QUICK, run_one


@pytest.mark.parametrize("name", QUICK["classes"])
def test_a_rig_fault_is_never_a_miss_of_the_system_under_test(name: str, tmp_path: Path) -> None:
    fc = next(c for c in CLASSES if c.name == name)
    r = run_one("mixed", fc, count=40, at_tick=12, seed=18, out_dir=tmp_path)
    assert r.ok, (r.problems, r.figures)
    assert any(k.startswith("lost/") for k in r.figures["outcomes"]), r.figures   # the fault touched events
    assert r.figures["invalid"], r.figures                                        # and the run says so
