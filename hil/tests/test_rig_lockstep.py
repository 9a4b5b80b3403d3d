"""The Rig on a lockstep bench: a HIL script steps virtual time by waiting for frames, so its figures are
the firmware's whatever the host is doing."""

from __future__ import annotations

from pathlib import Path

import pytest

import mmproto as mp
from mmhil import Bench, Rig


def one_event_two_ahead(rig: Rig) -> tuple[float, float]:
    tb = rig.time_base()
    rig.send("executor", mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=mp.Dispatch.ISR, distance=0, period=0,
                                 random_ids=0))
    rig.wait_for("executor", mp.Status)
    rig.drain("profiler")
    _, now = rig.wait_for("profiler", mp.Timecode)
    target = now.timecode + 2
    rig.send("executor", mp.Schedule(tag=1, event_id=5, timecode=target))
    _, result = rig.wait_for("profiler", mp.Result, timeout=1.0)
    return tb.counts_to_us(tb.latency_counts(target, result)), rig.now()


def test_a_hil_script_steps_time_and_gets_the_same_answer_twice(tmp_path: Path) -> None:
    answers = []
    for k in range(2):
        with Bench(run_dir=tmp_path / f"run{k}", lockstep=True) as bench, Rig.on_bench(bench) as rig:
            assert rig.stepper is not None and rig.hellos["profiler"].node_kind == mp.NodeKind.PROFILER
            answers.append(one_event_two_ahead(rig))
            before = rig.now()
            rig.advance(0.5)
            assert 0.5 <= rig.now() - before < 0.5001
    (lat0, t0), (lat1, t1) = answers
    assert lat0 == lat1 == 1.375          # 22 cycles of ISR dispatch, on the simulated clock
    assert t0 == t1                       # the same virtual moment: nothing depended on the host


def test_cancel_takes_an_event_out_before_it_fires(tmp_path: Path) -> None:
    # CANCEL (SPEC.md, version 2): two events far ahead; one cancelled by tag never fires; then cancel-all
    # empties the list; a tag not pending removes nothing.
    from mmhil import frames

    with Bench(run_dir=tmp_path / "run", lockstep=True) as bench, Rig.on_bench(bench) as rig:
        rig.mode("mixed")
        now = rig.next_tick() - rig.tc_offset                   # the executor's timeline
        for tag, ahead in ((41, 6), (42, 8)):
            rig.send("executor", frames.schedule(event_id=3, timecode=now + ahead, tag=tag))
            rig.wait_for("executor", mp.Ack, where=lambda a, t=tag: a.tag == t)
        first = rig.cancel(41)
        assert (first.tag, first.removed, first.pending) == (41, 1, 1)
        assert rig.cancel(41).removed == 0                       # no longer there
        rest = rig.cancel()
        assert (rest.removed, rest.pending) == (1, 0)
        rig.advance(10 * rig.tick_s)                             # past both ticks
        fired = [a.message for a in rig.drain("executor") if isinstance(a.message, mp.Fired)]
        assert fired == []


def test_a_script_dials_the_executor_load(tmp_path: Path) -> None:
    # rig.mode(executor_load=...) reaches the executor (STATUS echoes it and counts the periodic
    # jobs), rig.schedule keeps it, and task dispatch then waits for the periodic job when a tick meets one.
    # (rig.schedule spreads its ticks over the load's period: test_schedule_samples_a_periodic_loads_phases)
    with Bench(run_dir=tmp_path / "run", lockstep=True) as bench, Rig.on_bench(bench) as rig:
        status = rig.mode("mixed", dispatch="task", executor_load="periodic=7300/3000")
        assert (status.cpu_load, status.periodic_period_us, status.periodic_exec_us) == (0, 7300, 3000)
        lat = [rig.schedule(i % 8, ticks_ahead=2, dispatch="task").latency_us for i in range(30)]
        assert rig.executor_load == "periodic=7300/3000"
        # 36.875: the idle task-dispatch figure (36.69 before the pin-change interrupt looked for a waiting
        # PERIODIC moment on every edge, 3 cycles)
        assert min(lat) == pytest.approx(36.875, abs=0.1) and max(lat) > 500      # some ticks met a job
        runs = rig.mode("mixed", dispatch="task").periodic_runs                  # load off, counts kept
        rig.advance(0.5)
        assert rig.mode("mixed", dispatch="task").periodic_runs == runs          # nothing ran since


def test_schedule_samples_a_periodic_loads_phases(tmp_path: Path) -> None:
    # Back to back, rig.schedule's events are 3 ticks apart (213.33 ms): a constant 3.33 ms step against a 10 ms
    # periodic task, three phases for ever (the bench's clocks are exact), all of which missed its 2 ms job: 60
    # events all ok at 37 us while the task ran 1,290 times. Spread over the period (a tick is 1.111 ms past a
    # multiple of 10 ms: 9 of the 10 tenths can begin a tick), the events meet the job.
    with Bench(run_dir=tmp_path / "run", lockstep=True) as bench, Rig.on_bench(bench) as rig:
        rig.sample_load_phases = False
        rig.mode("mixed", dispatch="task", executor_load="cpu,periodic=10ms/2ms")
        fixed = [rig.schedule(i % 8, dispatch="task") for i in range(12)]
        assert rig.phases_covered == 3 and all(ev.on_time and ev.latency_us < 40 for ev in fixed), fixed
        rig.sample_load_phases = True
        spread = [rig.schedule(i % 8, dispatch="task") for i in range(18)]
    assert rig.phases_covered == 9, rig.phase_bins
    assert len({round(ev.load_phase_us) for ev in spread}) == 9, [ev.load_phase_us for ev in spread]
    assert max(ev.latency_us for ev in spread) > 1000, spread     # the job delayed the task
    assert spread[-1].scheduled_tc - spread[0].scheduled_tc < 3 * len(spread) + 10   # a few ticks waited


def test_a_bench_that_fails_a_grant_reaches_the_script_as_the_benchs_own_error(tmp_path: Path) -> None:
    # The Rig steps time through the run's LockstepEndpoint, which says a failed bench as EndpointError for a run's
    # reasons; a script gets the bench's BenchError, from every wait (advance, recv, wait_for, drain).
    from mmhil.bench import BenchError

    def refused(*_args: object, **_kw: object) -> dict:
        raise BenchError("grant refused")

    with Bench(run_dir=tmp_path / "run", lockstep=True) as bench, Rig.on_bench(bench) as rig:
        bench.grant = refused                                   # type: ignore[method-assign]
        rig.drain("profiler")
        with pytest.raises(BenchError, match="grant refused"):
            rig.advance(0.5)
        with pytest.raises(BenchError, match="grant refused"):
            rig.wait_for("executor", mp.Status, timeout=0.5)
