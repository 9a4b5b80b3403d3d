"""The class report's grading (mmanalysis.classreport.GRADING, grading_rows): the key's figure of each question
read from the one run it names, the group's from the runs of the same experiment and executor design, ranges as
bounds a better figure passes, a host stall's miss counted as the rig's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import standin_key  # noqa: E402

from mmanalysis import classreport  # noqa: E402
from mmanalysis.reader import RunSet  # noqa: E402
from mmanalysis.stats import summarize  # noqa: E402

# which of the key's runs each graded experiment is read from: the paper's design (task dispatch), paced where
# the key has the experiment paced too (the students' runs are paced)
KEY_RUN = {"executor": "exp1-verification", "normal": "exp2-normal", "mixed1": "exp3b-mixed-1ahead-free",
           "mixed2": "exp4p-mixed-2ahead-paced", "loaded": "exp5-mixed-2ahead-load"}


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    folder = standin_key(tmp_path_factory.mktemp("class") / classreport.KEY_FOLDER)
    data, problems = classreport.read_key(folder.parent)
    assert not problems and len(data.runs) == 9
    return data


def test_the_keys_figures_are_read_from_the_run_they_name(key):
    for f in classreport.GRADING:
        run = classreport.key_run(key, f)
        assert run == KEY_RUN[f.experiment], f
        alone = key.df[key.df["run"] == run].assign(run=run)
        want = summarize(RunSet(alone, {run: key.meta[run]}), by="run")
        assert len(want) == 1
        got = classreport.key_figure(key, f)
        assert got == pytest.approx(want.iloc[0][f.stat], nan_ok=True), (f.what, got, want.iloc[0][f.stat])
