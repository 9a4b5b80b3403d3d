"""Mixed mode: the executor fires at the start of the tick the PC scheduled. Runs on every rig with an
executor: the paced bench, the lockstep bench, boards (`--rig ports --profiler P --executor E`).

    pytest hil/examples                      # the paced virtual bench
    pytest hil/examples --rig lockstep -n 2  # lockstep, two workers (each has its own bench)
"""

import pytest

pytestmark = pytest.mark.rig_needs("executor")


def test_two_ticks_ahead_isr_dispatch(run_experiment):
    run = run_experiment(mode="mixed", distance=2, dispatch="isr", count=50)
    assert run.on_time_share >= 0.99, run
    assert run.p99_us < 5.0, run


def test_one_event_two_ticks_ahead(rig):
    ev = rig.schedule(5, ticks_ahead=2, dispatch="isr")
    assert ev.on_time and ev.latency_us < 5.0, ev
    assert ev.ack_tc < ev.scheduled_tc == ev.fired_tc, ev      # acknowledged before its tick, fired in it


def test_twenty_events_all_on_time_under_5_us(rig):
    events = [rig.schedule(i % 8, ticks_ahead=2, dispatch="isr") for i in range(20)]
    assert all(ev.on_time and ev.latency_us < 5.0 for ev in events), events


def test_task_dispatch_costs_the_kernel_but_stays_on_time(rig):
    isr = rig.schedule(1, dispatch="isr")
    task = rig.schedule(1, dispatch="task")
    assert isr.on_time and task.on_time, (isr, task)
    assert isr.latency_us < task.latency_us < 50.0, (isr, task)
