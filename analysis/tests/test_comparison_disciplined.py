"""The comparison with the paper (mmanalysis.report.comparison, the student's report and notebook) keeps exp2b,
normal mode fired by the clock servo (ours), apart from the paper's naive normal mode: pooled, a student's 7.3
row read n 387 and max 3,029 us, half of it a design the paper never had."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import HANDIN_RUNS, standin_runs  # noqa: E402

import mmanalysis as mm  # noqa: E402
from mmanalysis.report import comparison  # noqa: E402


def test_the_disciplined_normal_mode_is_a_row_of_its_own(tmp_path):
    standin_runs(tmp_path, {k: v for k, v in HANDIN_RUNS.items() if k.startswith("exp2")}, count=40)
    comp = comparison(mm.read_runs(tmp_path))
    normal = comp[comp["section"] == "7.3"]
    assert list(normal["runs"]) == ["exp2-normal", "exp2b-normal-disciplined"]
    naive, servo = normal.iloc[0], normal.iloc[1]
    assert naive["experiment"] == "normal mode (PC fires), 1 tick ahead" and naive["events"] == 40
    assert servo["experiment"].endswith("(disciplined: the clock servo, ours)") and servo["events"] == 40
    assert servo["verdict"].startswith("ours, not compared"), servo["verdict"]
