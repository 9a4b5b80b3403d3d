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


# ---- the checks themselves can fail -----------------------------------------------------------------------
def _sidecar(**over: object) -> dict:
    side = {"invariant": {"ok": True, "error": None}, "invalid_reasons": [], "faults": [],
            "counters": {"profiler": {}, "executor": {}, "scheduler": {}}}
    return {**side, **over}


def _status(delayed: int = 0, corrupted: int = 0) -> dict:
    uart = {"fault_delayed": [delayed, 0], "fault_corrupted": [corrupted, 0]}
    return {"nodes": {n: {"uart": uart} for n in ("profiler", "executor")}}


def _check(fc_name: str, events: list, sidecar: dict, marks: dict | None = None):
    from mmrig.faultcampaign import Outcome, check
    from mmsched.model.config import RunConfig
    from mmsched.model.result import RunResult

    fc = next(c for c in CLASSES if c.name == fc_name)
    cfg = RunConfig(mode="mixed", distance=2, count=40)
    marks = {"start": 20, "stop": 60, "before": _status(), "after": _status(), **(marks or {})}
    return check(Outcome("mixed", fc.name), fc, 40, cfg, RunResult(events, sidecar, None, None), marks)


def test_a_run_that_made_no_events_never_passes() -> None:
    r = _check("cut", [], _sidecar(invalid_reasons=[{"code": "port_error", "text": "gone"}]))
    assert not r.ok and any("made 0 of 40 events" in p for p in r.problems), r.problems


def test_spoiled_bytes_that_no_counter_saw_fail_and_unread_counters_fail() -> None:
    r = _check("corrupt", [], _sidecar(), {"after": _status(corrupted=5)})
    assert any("counted 0 bad frames in for 5 spoiled bytes" in p for p in r.problems), r.problems
    r = _check("corrupt", [], _sidecar(counters={"profiler": None, "executor": {}, "scheduler": {}}),
               {"after": _status(corrupted=5)})
    assert any("profiler's counters were not read" in p for p in r.problems), r.problems


def test_a_miss_of_a_delayed_frame_not_named_by_the_delay_fails() -> None:
    from mmsched.model.event import Event

    missed = Event(0, 1, 0, "mixed", 2, 30, 28, 0.1)
    missed.finish("missed", "past_due")
    r = _check("delay", [missed], _sidecar(), {"after": _status(delayed=3)})
    assert not r.ok and any("blamed on the system under test" in p for p in r.problems), r.problems
    assert any("no injected_delay names it" in p for p in r.problems), r.problems


def test_an_event_a_planted_delay_held_back_is_explained_as_the_rigs_fault(tmp_path: Path) -> None:
    # the bench's injected delay holds SCHEDULEs back (a planted cause of the rig's): each event it took is lost,
    # and its explanation names that fault, never a figure of the system under test
    from mmanalysis.runexplainer import Refused, RunExplainer

    fc = next(c for c in CLASSES if c.name == "delay")
    run_one("mixed", fc, count=40, at_tick=12, seed=18, out_dir=tmp_path)
    rx = RunExplainer.open(tmp_path / "mixed-delay.csv")
    held = rx.df[rx.df["reason"] == "injected_delay"]["event"].tolist()
    assert held
    for event in held:
        item = rx.explain(int(event))
        assert isinstance(item, Refused)
        assert "(lost: injected_delay): nothing to split; a fault of the rig, not of the system under test: the " \
               "bench's injected delay" in item.why, item.why
