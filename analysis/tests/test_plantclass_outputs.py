"""mmanalysis.plantclass writes its class folder as every output of the project is written (mmanalysis.safefiles):
a link planted at the class folder's name is refused in one line, exit 2, and nothing is written through it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import HANDIN_RUNS, standin_runs  # noqa: E402

from mmanalysis import plantclass  # noqa: E402


def test_a_link_at_the_class_folder_is_refused_and_nothing_written_through_it(tmp_path: Path, capsys) -> None:
    source = standin_runs(tmp_path / "source", {"exp1-verification": HANDIN_RUNS["exp1-verification"]}, count=5)
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "class").symlink_to(victim)
    assert plantclass.main([str(source), str(tmp_path / "class"), "--groups", "2"]) == 2
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("plantclass: "), said
    assert list(victim.iterdir()) == []
