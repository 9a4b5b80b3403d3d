"""Which runs are compared with the paper: only the paper's executor design (events executed by the timecode
task, nothing above it) meets the paper's latency figures; ISR dispatch is ours, said so; a run with a task
above the timecode task is filed under no row of the paper's."""

from __future__ import annotations

from mmanalysis.paper import (BY_KEY, OTHER_DESIGN, OUR_DESIGN, PAPER_DESIGN, PAPER_EXECUTOR_LOAD, Observed, design,
                              verdict)


def cfg(**kw) -> dict:
    return {"mode": "mixed", "distance": 2, "load": "idle", "generation": "aligned", **kw}


def test_design_of_a_runs_config() -> None:
    assert design(cfg(dispatch="task", executor_load_text=PAPER_EXECUTOR_LOAD)) == PAPER_DESIGN
    assert design(cfg(dispatch="task", executor_load_text="none")) == PAPER_DESIGN
    assert design(cfg(dispatch="isr", executor_load_text="cpu")) == OUR_DESIGN
    assert design(cfg()) == OUR_DESIGN                       # a sidecar from before task dispatch existed
    assert design(cfg(dispatch="task", executor_load_text="cpu,periodic=10000/2000")) == OTHER_DESIGN


def test_a_task_above_the_timecode_task_is_filed_under_no_row_of_the_papers() -> None:
    traced_loaded = cfg(dispatch="task", executor_load_text="cpu,periodic=10000/2000")
    assert not BY_KEY["mixed2"].match(traced_loaded)
    assert BY_KEY["mixed2"].match(cfg(dispatch="task", executor_load_text=PAPER_EXECUTOR_LOAD))
    assert BY_KEY["mixed2"].match(cfg(dispatch="isr"))
    # normal mode has no executor in the events' path: any design is normal mode
    assert BY_KEY["normal"].match({"mode": "normal", "distance": 1, "load": "idle", "dispatch": "task",
                                   "executor_load_text": "cpu,periodic=10000/2000"})


def obs(design_: str | None, mean: float = 37.2, var: float = 1.6) -> Observed:
    return Observed(events=200, n=200, mean_us=mean, var_us2=var, ok=200, bench=True, design=design_)


def test_only_the_papers_design_gets_a_verdict_against_the_papers_figures() -> None:
    assert verdict(BY_KEY["mixed2"], obs(PAPER_DESIGN)) == "mean and variance lower than the paper's"
    ours = verdict(BY_KEY["mixed2"], obs(OUR_DESIGN, mean=1.5, var=0.1))
    assert ours.startswith("ours, not compared: ISR dispatch") and "mean 1.500 us" in ours
    assert "lower than the paper's" not in ours
    # the on-time share of 1 tick ahead does not depend on the dispatch: every design is judged on it
    one_ahead = Observed(events=100, n=50, mean_us=1.5, var_us2=0.0, ok=50, generation="free", design=OUR_DESIGN)
    assert "reproduces the paper's 'about half'" in verdict(BY_KEY["mixed1"], one_ahead)


def test_the_report_keeps_each_executor_design_in_a_row_of_its_own(tmp_path) -> None:
    """Task dispatch (the paper's) and ISR dispatch (ours) of the same experiment are never pooled: the paper's
    row comes first with a verdict against the paper's figures, ours beside it, not compared."""
    from mmanalysis import read_runs, synth
    from mmanalysis.report import comparison

    for name, dispatch, lat in (("task", "task", 37.0), ("isr", "isr", 1.5)):
        rows = synth.synthetic_events("mixed", 2, False, 40, seed=1)
        rows["outcome"], rows["reason"], rows["latency_us"] = "ok", "", lat
        meta = synth.sidecar(name, rows)
        meta["config"].update(dispatch=dispatch, executor_load_text=PAPER_EXECUTOR_LOAD)
        synth.write_run(tmp_path / name, rows, meta)
    table = comparison(read_runs(tmp_path))
    mine = table[table["section"] == "7.4"]
    two_ahead = mine[mine["experiment"].str.startswith("mixed, 2 ticks ahead")]
    assert list(two_ahead["runs"]) == ["task", "isr"]
    assert two_ahead.iloc[0]["experiment"] == "mixed, 2 ticks ahead"
    assert two_ahead.iloc[1]["experiment"] == "mixed, 2 ticks ahead (ISR dispatch, ours)"
    assert two_ahead.iloc[0]["verdict"].startswith("mean and variance lower than the paper's")
    assert two_ahead.iloc[1]["verdict"].startswith("ours, not compared")
