"""The fault soak (`make soak-faults`, mmrig.faultsoak): a short one end to end on the lockstep bench, and its
checks shown able to fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmrig.faultsoak import Injection, Soak, check, main


@pytest.mark.long    # a soak of every fault kind, short as soaks go: 15 s
def test_a_short_soak_names_every_fault_and_accounts_for_every_event(tmp_path: Path, capsys) -> None:
    # a few seconds of wall time in lockstep: thousands of events and a dozen faults of every kind drawn
    assert main(["--minutes", "0.25", "--seed", "3", "--gap-ticks", "10..30", "--out", str(tmp_path)]) == 0, \
        capsys.readouterr().err
    report = json.loads((tmp_path / "results.json").read_text())
    assert report["injections"] >= 5 and report["events"] > 500 and not report["problems"], report
    assert (tmp_path / "faultsoak.csv").is_file() and (tmp_path / "faultsoak.json").is_file()
    # every fault the data names is one of the rig's, and the run says so
    assert report["invalid"] and set(report["faults_in_data"]) <= {
        "link_errors", "node_errors", "no_answer", "node_reset", "timecode_fault", "link_fault", "injected_delay"}


def test_a_fault_the_data_does_not_name_and_a_lost_file_fail_the_soak(tmp_path: Path) -> None:
    from mmsched.model.config import RunConfig
    from mmsched.model.result import RunResult

    soak = Soak.__new__(Soak)                      # the checks only read what was injected and what was found
    soak.problems = []
    soak.done = [Injection("reset-executor", 40, 12.0, 2.0, 12.1, 2.1, effect=None)]
    side = {"faults": [], "invariant": {"ok": True, "error": None}, "csv_sha256": "0" * 64}
    problems = check(soak, RunResult([], side, tmp_path / "gone.csv", tmp_path / "gone.json"), RunConfig(), 0.0711)
    assert any("reset-executor injected at tick 40" in p and "named by no fault" in p for p in problems), problems
    assert any("gone.csv is missing" in p for p in problems) and any("gone.json is missing" in p for p in problems)
