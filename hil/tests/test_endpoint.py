"""The bench's endpoint policy: its bound per mode and distance, and the lag figures over a run's own window."""

from __future__ import annotations

from mmhil.endpoint import lag_bound_us, lag_summary


def test_lag_summary_uses_only_the_runs_own_samples() -> None:
    before = {"paced": True, "lag": {"histogram_us": [[5, 100], [1000, 2]], "exceeded": 2, "max_us": 1500.0,
                                     "bound_us": 1000.0}}
    after = {"paced": True, "lag": {"histogram_us": [[5, 300], [40, 10], [1000, 2]], "exceeded": 2, "max_us": 1500.0,
                                    "bound_us": 1000.0}}
    w = lag_summary(before, after)
    assert w["lag_samples"] == 210 and w["lag_max_us"] == 40.0 and w["lag_exceeded"] == 0
    assert "valid" not in w          # validity is judged per event (mmsched.verdict.validity), not from the lag
    after["lag"]["exceeded"] = 3
    after["lag"]["max_us"] = 2500.0
    w = lag_summary(before, after)
    assert w["lag_exceeded"] == 1 and w["lag_max_us"] == 2500.0


def test_lag_bound_is_a_tenth_of_the_spare_time_of_the_schedule() -> None:
    assert lag_bound_us("normal", 2) == 1000.0                 # lag enters normal-mode latency directly
    assert lag_bound_us("mixed", 1) == 4700.0                  # 47 ms to spare one tick ahead
    assert lag_bound_us("mixed", 2) == 11800.0                 # one tick (71.1 ms) more two ahead
    assert lag_bound_us("verification", 1) == lag_bound_us("mixed", 1)


def test_a_traced_runs_folder_is_made_for_the_benchs_vcd(tmp_path) -> None:
    """The bench writes OUT.vcd from its start, so the run's folder must exist before it starts; one that cannot
    be made is the endpoint's error (the run invalid, bench_failed), not a bench that exits before it is ready."""
    import pytest

    from mmhil.endpoint import BenchEndpoint
    from mmsched.model.config import RunConfig
    from mmsched.link.endpoint import EndpointError

    ep = BenchEndpoint()
    ep.trace_to(RunConfig(trace=True, out=tmp_path / "runs" / "a" / "r1"))
    assert ep.vcd == tmp_path / "runs" / "a" / "r1.vcd" and ep.vcd.parent.is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(EndpointError) as got:
        BenchEndpoint().trace_to(RunConfig(trace=True, out=tmp_path / "file" / "r1"))
    assert got.value.code == "bench_failed" and str(tmp_path / "file") in str(got.value)


def test_an_endpoint_around_a_started_bench_is_as_the_bench_and_leaves_it_to_its_starter(tmp_path) -> None:
    """A HIL script's Rig talks through the endpoint of the bench the script started: the endpoint takes the bench's
    rate, kind and Arduino mode, a lockstep bench's has its Stepper, and closing it does not close the bench."""
    from mmhil.bench import Bench
    from mmhil.endpoint import BenchEndpoint, LockstepEndpoint

    closed: list[Bench] = []

    class Started(Bench):
        def close(self) -> None:
            closed.append(self)

    paced = Started(baud=19200, arduino=True, run_dir=tmp_path / "p")
    ep = BenchEndpoint.around(paced)
    assert (ep.bench, ep.baud, ep.paced, ep.arduino, ep.wall_clock) == (paced, 19200, True, True, True)
    ep.close()
    lockstep = Started(lockstep=True, run_dir=tmp_path / "l")
    ls = LockstepEndpoint.around(lockstep)
    assert ls.paced is False and ls.wall_clock is False
    assert ls.stepper is not None and ls.stepper.bench is lockstep and ls.clock() == 0.0
    ls.close()
    assert closed == []
    assert BenchEndpoint.around(Started(paced=False, run_dir=tmp_path / "u")).paced is False
