"""Mixed mode against the executor's own load: a periodic job beside the firing (`executor_load`, as `mmrig run
--executor-load`). A test against a periodic load must meet the job at its phases: rig.schedule spreads its
events' ticks over the load's period and says how many tenths of it they sampled (`rig.phases_covered`).

    pytest hil/examples/test_executor_load.py --rig lockstep
"""

import pytest

pytestmark = pytest.mark.rig_needs("executor")


def test_task_dispatch_meets_a_periodic_job_at_its_phases(rig):
    rig.mode("mixed", dispatch="task", executor_load="cpu,periodic=10ms/2ms")
    events = [rig.schedule(i % 8, ticks_ahead=2, dispatch="task") for i in range(60)]
    # a tick is 1.111 ms past a multiple of 10 ms: 9 of the 10 tenths of the period can begin one
    assert rig.phases_covered >= 9, rig.phase_bins
    assert all(ev.outcome in ("ok", "late") for ev in events), events
    assert max(ev.latency_us for ev in events) > 1000, events     # the 2 ms job delays the kernel's task


def test_the_same_load_through_a_run(run_experiment):
    # a run's events come every tick, 1.111 ms further into the period each: they sample its phases too
    run = run_experiment(mode="mixed", distance=2, dispatch="task", executor_load="cpu,periodic=10ms/2ms", count=60)
    assert run.outcomes["late"] > 0 and run.p99_us > 1000, run
