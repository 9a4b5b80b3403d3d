"""The class report's first page (mmanalysis.classsummary): one line a group (passed, missing, look at) with
what to look at (a failed check, an unreadable file, a byte-identical copy of another group's runs, a short run)
and the problems and notes counted by kind."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import HANDIN_RUNS, standin_runs  # noqa: E402

from mmanalysis import classreport, synth  # noqa: E402
from mmanalysis.classsummary import SHORT_SHARE  # noqa: E402


def _cut_to(csv: Path, events: int) -> None:
    """A run that stopped after EVENTS events: its first rows (the generated sidecar holds no checksum)."""
    lines = csv.read_text().splitlines(keepends=True)
    csv.write_text("".join(lines[:1 + events]))


@pytest.fixture(scope="module")
def glance_class(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("glance") / "class"
    for i, g in enumerate(("group-a", "group-c", "group-d", "group-e", "group-f")):
        standin_runs(d / g / "results", HANDIN_RUNS, seed=100 * i, count=60)
        (d / g / "lab.html").write_text(synth.LAB_HTML)
    shutil.copytree(d / "group-a", d / "group-b")                          # handed in group-a's files
    _cut_to(d / "group-c" / "results" / "exp3-mixed-1ahead.csv", 12)        # stopped after 12 events
    for ext in (".csv", ".json"):                                           # no experiment 5
        (d / "group-d" / "results" / f"exp5-mixed-2ahead-load{ext}").unlink()
    (d / "group-d" / "lab.html").unlink()
    synth.cut_short(d / "group-e" / "results" / "exp4-mixed-2ahead.csv")    # corrupted
    for name, experiment, valid in (("exp1-verification", "verification", True),
                                    ("exp4-mixed-2ahead", "mixed-2ahead", True),
                                    ("exp4-mixed-2ahead.attempt1", "mixed-2ahead", False)):   # step 6's demo
        synth._handin_run(d / "group-f" / "results" / "8051", name, experiment, "bench", 60, 7, valid=valid,
                          invalid_reason=None if valid else "a host stall", profiler_kind="8051")
    return d


@pytest.fixture(scope="module")
def report(glance_class, tmp_path_factory):
    return classreport.class_report(glance_class, tmp_path_factory.mktemp("rep") / "rep", figures=False)


def _glance(md: str) -> dict[str, list[str]]:
    page = md.split("## Groups at a glance\n", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in page.splitlines()
            if line.startswith("| group-")]
    return {r[0]: r for r in rows}


def test_one_line_a_group_says_what_to_look_at(report):
    md = report.md.read_text()
    assert md.index("## Groups at a glance") < md.index("## Details") < md.index("## Problems") \
        < md.index("## 7.2 ")
    g = _glance(md)
    assert list(g) == ["group-a", "group-b", "group-c", "group-d", "group-e", "group-f"]
    assert "copy of group-b (9 CSVs)" in g["group-a"][4] and "copy of group-a (9 CSVs)" in g["group-b"][4]
    assert "short: exp3-mixed-1ahead (12 events)" in g["group-c"][4] and 12 < SHORT_SHARE * 60
    assert g["group-d"][3] == "exp5, lab.html" and "copy" not in g["group-d"][4]
    assert "unreadable: exp4-mixed-2ahead.csv" in g["group-e"][4] and g["group-e"][1] == "look at"
    assert "exp4" in g["group-e"][3]                              # its only exp4 is unreadable: missing as a run
    for name in ("group-a", "group-c", "group-d", "group-e", "group-f"):
        assert g[name][3].split(", ")[0] != "exp1" and "exp2b" not in g[name][3]     # the nine runs are there
    # the generated normal mode is 14 ms: every group's exp2 checks fail, named once per group
    assert all("no: exp2 (mean, p99, max, on time)" in row[4] for row in g.values() if len(row[4]) < 80), g


def test_problems_and_notes_counted_by_kind(report):
    md = report.md.read_text()
    page = md.split("## Groups at a glance\n", 1)[1].split("\n## ", 1)[0]
    kinds = {r[0]: r for r in ([c.strip() for c in line.strip().strip("|").split("|")]
                               for line in page.splitlines() if line.startswith("| ") and "|---" not in line)
             if len(r) == 4}
    assert kinds["unreadable run"][1:] == ["problem", "1", "group-e"]
    assert kinds["no lab.html"][1:] == ["problem", "1", "group-d"]
    assert kinds["8051 run"][1:] == ["note", "1", "group-f"]          # three 8051 runs: one line
    assert "group-f: 3 runs of the 8051 profiler (docs/lab.md step 6: exp1-verification [8051], " \
        "exp4-mixed-2ahead.attempt1 [8051] (left out), exp4-mixed-2ahead [8051]), in rows of their own" in md
    # the first page fits a screen: a line a group, a line a kind, a few sentences
    assert len(page.splitlines()) < 40


def test_a_passing_group_is_passed(tmp_path):
    from mmanalysis.classsummary import group_line

    g = classreport.Group("group-x", tmp_path, runs=["group-x/exp1"], lab_html=tmp_path / "lab.html")
    assert group_line(g, [], [], [], []).status == "passed"
    assert group_line(g, [], ["exp2b"], [], []).status == "missing"
    assert group_line(g, [], ["exp2b"], [("group-y", 2)], []).cells[1:] == [
        "look at", "-", "exp2b", "copy of group-y (2 CSVs)"]
