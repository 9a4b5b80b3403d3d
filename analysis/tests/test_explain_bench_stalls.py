"""A late wake-up that lies inside a stall the bench recorded (mmanalysis.explain): the bench's simulation was its
CPU's current task and yet did not advance, so the CPU itself did not run the guest (the hypervisor's time, which
/proc/stat's 10 ms steal ticks round away): the explanation says so, and the bench is not taken for what held the
firing thread. Same recorded event as test_explain.py (a spinner planted on the firing thread's CPU)."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from mmanalysis.explain import bench_stalls_in, explain_event
from mmanalysis.schedtrace import parse_report

DATA = Path(__file__).parent / "data" / "explain"


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads((DATA / "event.json").read_text())


@pytest.fixture(scope="module")
def trace():
    return parse_report((DATA / "report.txt").read_text())


def with_stall(recorded: dict, from_moment_us: float, length_us: float, lag_us: float) -> tuple[dict, dict]:
    """The event's row and its sidecar with one bench stall starting `from_moment_us` after the event's moment."""
    row, sidecar = recorded["row"], copy.deepcopy(recorded["sidecar"])
    moment = sidecar["run_clock"]["t0_s"] + row["sent_s"] - row["wakeup_us"] / 1e6
    wall_start = moment - 10.0                  # the bench's virtual time 10 s is the event's moment
    v0 = 10.0 + from_moment_us / 1e6
    sidecar["bench"] = {"wall_start_s": wall_start, "stalls": [[v0, v0 + length_us / 1e6, lag_us]]}
    return row, sidecar


@pytest.mark.parametrize("traced", [True, False])
def test_a_bench_stall_inside_the_wakeup_is_named_with_its_length(recorded, trace, traced: bool) -> None:
    row, sidecar = with_stall(recorded, 100.0, 3000.0, 3100.0)
    ex = explain_event(row, sidecar, trace if traced else None)
    said = [n for n in ex.notes if "the bench recorded a stall" in n]
    assert len(said) == 1 and "from +100 to +3100 us" in said[0] and "3100 us behind" in said[0], ex.notes
    # the recorded trace shows the planted spinner, not the bench, on the firing thread's CPU: nothing more is said
    assert ("with --trace-host" in said[0]) is not traced
    assert "did not run the guest" not in said[0]
    assert math.isclose(sum(p.us for p in ex.parts), row["latency_us"], abs_tol=0.01)   # the parts unchanged


def test_a_stall_outside_the_wakeup_says_nothing(recorded, trace) -> None:
    row, sidecar = with_stall(recorded, -50_000.0, 3000.0, 3100.0)      # over 45 ms before the moment
    ex = explain_event(row, sidecar, trace)
    assert not [n for n in ex.notes if "the bench recorded a stall" in n]


def test_stalls_are_placed_on_the_run_clock_from_the_benchs_wall_start() -> None:
    sidecar = {"bench": {"wall_start_s": 100.0, "stalls": [[1.0, 1.002, 2500.0], [5.0, 5.001, 1200.0]]}}
    assert bench_stalls_in(sidecar, 100.5, 101.5) == [(101.0, 101.002, 2500.0)]
    assert bench_stalls_in(sidecar, 101.001, 101.0015) == [(101.0, 101.002, 2500.0)]
    assert bench_stalls_in(sidecar, 102.0, 104.0) == []
    assert bench_stalls_in({}, 0.0, 1e9) == []                      # boards: no bench, no stalls


def test_a_bench_that_was_its_cpus_task_through_its_own_stall_held_no_one(recorded) -> None:
    # a trace made for the case: the firing thread asleep on CPU 1 from before its moment, the bench (rt 10) CPU 1's
    # task until the thread is woken 4.3 ms late, the bench's own record saying it fell behind meanwhile
    row, sidecar = with_stall(recorded, 100.0, 4000.0, 4200.0)
    wrote = sidecar["run_clock"]["t0_s"] + row["sent_s"]
    moment = wrote - row["wakeup_us"] / 1e6
    tid = sidecar["cpu"]["firer_tid"]
    at = lambda t: f"{t:.9f}"                                                  # noqa: E731
    report = "\n".join([
        "cpus=2",
        f"mmrig-1:  firer-{tid}  [001] {at(moment - 0.001)}: sched_switch:  firer:{tid} [19] S ==> mmbench:5000 [89]",
        f"mmrig-1:  mmbench-5000  [001] {at(wrote - 50e-6)}: sched_waking:  comm=firer pid={tid} prio=19 "
        f"target_cpu=001",
        f"mmrig-1:  mmbench-5000  [001] {at(wrote - 40e-6)}: sched_switch:  mmbench:5000 [89] R ==> firer:{tid} [19]",
        f"mmrig-1:  firer-{tid}  [001] {at(wrote + 20e-6)}: sched_switch:  firer:{tid} [19] S ==> mmbench:5000 [89]",
    ]) + "\n"
    ex = explain_event(row, sidecar, parse_report(report))
    said = [n for n in ex.notes if "the bench recorded a stall" in n]
    assert len(said) == 1 and "CPU 1's task for 4000 us" in said[0] and "did not run the guest" in said[0], ex.notes
