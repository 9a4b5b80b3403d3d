"""The paper's experiments defined once (mmrig.experiments): the demo runs each one's configuration, the lab
key its `mmrig run` options; both must be the same run."""

from __future__ import annotations

import dataclasses

import pytest

from mmsched.model.config import RunConfig

import mmrig.cli.run
from mmrig.cli import build_parser
from mmrig.cli.run import run_config
from mmrig.experiments import BY_NAME, EXPERIMENTS, Experiment


@pytest.mark.parametrize("ex", EXPERIMENTS, ids=lambda ex: ex.name)
def test_run_options_make_the_demos_configuration(ex: Experiment, monkeypatch) -> None:
    monkeypatch.setattr(mmrig.cli.run, "load_unavailable", lambda load: None)   # stress-ng not needed to compare
    args = build_parser().parse_args(["run", *ex.run_options(), "--count", "30"])
    from_options = dataclasses.asdict(run_config(args, ex.name))
    from_config = dataclasses.asdict(RunConfig(count=30, name=ex.name, **ex.config))
    assert from_options == from_config


def test_run_options_are_what_a_student_types() -> None:
    assert BY_NAME["exp3b-mixed-1ahead-free"].run_options() == (
        "--mode", "mixed", "--distance", "1", "--generation", "free", "--rate", "97", "--dispatch", "task",
        "--executor-load", "cpu")
    assert BY_NAME["exp2b-normal-disciplined"].run_options() == ("--mode", "normal", "--distance", "1",
                                                                 "--discipline")
    assert BY_NAME["exp5-mixed-2ahead-load"].loaded and not BY_NAME["exp4-mixed-2ahead"].loaded


def test_rows_compared_with_the_paper_run_the_papers_design_and_ours_differ_in_the_dispatch_alone() -> None:
    """The paper's executor executed events in its timecode thread (task dispatch) beside work of its own; our
    ISR rows keep everything else equal, so the difference between a pair is the dispatch."""
    from mmanalysis.paper import OUR_DESIGN, PAPER_DESIGN, design

    for ex in EXPERIMENTS:
        if ex.paper_key in ("executor", "mixed1", "mixed2", "loaded"):
            assert design(ex.config) == PAPER_DESIGN and ex.config["executor_load"] != "none", ex.name
    for ours, papers in (("exp1i-verification-isr", "exp1-verification"), ("exp4i-mixed-2ahead-isr", "exp4-mixed-2ahead")):
        a, b = BY_NAME[ours].config, BY_NAME[papers].config
        assert design(a) == OUR_DESIGN and BY_NAME[ours].paper is None
        assert {k: v for k, v in a.items() if k != "dispatch"} == {k: v for k, v in b.items() if k != "dispatch"}


def test_the_lab_key_runs_the_experiments_it_names_as_defined() -> None:
    from mmrig.labkey.runs import RUNS

    for run in RUNS:
        if run.name in BY_NAME:
            assert run.options == BY_NAME[run.name].run_options(), run.name
    assert {r.name for r in RUNS} >= set(BY_NAME) - {"exp2b-normal-disciplined"}
