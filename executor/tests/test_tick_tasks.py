"""The FreeRTOS kernel tick against the number of tasks (the question of Kohout's "Hardware Support for Real-Time
Operating Systems", 2002; docs/executor-profile.md): its cost depends on how many tasks it wakes, not on how many
exist. Measured as perf/perf_tick_tasks.py does (the executor images with N = 0 and N = 8 extra tasks, make avr
EXTRA_TASKS=N; a short lockstep mixed run of each on the two-node bench with the executor trace on; each tick's own
cycles grouped by the tasks it woke). Lockstep runs are deterministic, so the figures are exact and repeatable: about
1 s of wall time.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "perf"))
import perf_tick_tasks as ptt  # noqa: E402  (it puts this checkout's packages first on sys.path)

from mmanalysis import exectrace  # noqa: E402

N = 8


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    out = {}
    for n in (0, N):
        b = ptt.build(n)
        trace = tmp_path_factory.mktemp(f"tick{n}") / "run.exectrace"
        ptt.run_traced(b["elf"], trace, count=20)
        tr = exectrace.read(trace)
        out[n] = {**b, **ptt.tick_costs(tr), "extra_runs": ptt.extra_runs(tr)}
    return out


def medians(m: dict) -> dict[int, float]:
    return {k: statistics.median(v) for k, v in m["by_woken"].items()}


def test_the_extra_tasks_are_traced_and_ticks_wake_0_to_n_of_them(measured):
    """The N = 8 image: tasks x1..x8 appear in the trace, and there are ticks that wake each k in 0..8 (the
    phase pattern of main.c; 9 when the status task's delay ends on a tick that wakes all 8), each group
    with enough ticks to be a figure; few ticks are left out."""
    m = measured[N]
    assert sorted(m["by_woken"]) == list(range(N + 1)) or sorted(m["by_woken"]) == list(range(N + 2))
    assert all(len(m["by_woken"][k]) >= 10 for k in range(N + 1)), {k: len(v) for k, v in m["by_woken"].items()}
    assert m["other_irq"] + m["not_idle"] < 0.25 * m["ticks"]
    assert len(m["extra_runs"]) >= 8 * N
    assert measured[0]["extra_runs"] == []
    assert m["data"] > measured[0]["data"] + N * 160, "each extra task has its own 160-byte stack"


def test_tick_cost_does_not_depend_on_how_many_tasks_exist(measured):
    """A tick that wakes no task costs the same with 5 + idle tasks and with 8 more (261 cycles, 16.3 us,
    measured), and so does one that wakes a single task: the number of tasks that exist does not enter."""
    base, more = medians(measured[0]), medians(measured[N])
    assert abs(base[0] - more[0]) <= 4, (base[0], more[0])
    assert abs(base[1] - more[1]) <= 4, (base[1], more[1])
    for n in (0, N):
        zero = measured[n]["by_woken"][0]
        assert max(zero) - min(zero) <= 8, f"N={n}: no-wake ticks spread {min(zero)}..{max(zero)}"


def test_tick_cost_grows_linearly_with_the_tasks_it_wakes(measured):
    """cost(k) = cost(1) + (k - 1) * c for k >= 1 (measured: c = 183 cycles, 11.4 us a task; the first woken
    task costs 306 cycles over none: its wake and the switch the tick then makes)."""
    med = medians(measured[N])
    ks = [k for k in med if k >= 1]
    c, icpt = statistics.linear_regression(ks, [med[k] for k in ks])
    assert 120 <= c <= 250, c
    for k in ks:
        assert abs(med[k] - (icpt + c * k)) <= 4, (k, med[k], icpt + c * k)
        assert max(measured[N]["by_woken"][k]) - min(measured[N]["by_woken"][k]) <= 8, k
    assert med[1] - med[0] > c, "the first woken task also costs the switch"
