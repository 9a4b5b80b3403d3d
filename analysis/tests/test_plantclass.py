"""A class of 20 groups planted from one student's runs (mmanalysis.plantclass: copied and varied, one corrupted,
one missing, one identical to another, one 8051, one short): the class report marks each group as planted. Here
from generated stand-ins (fast); scheduler-gui/tests/test_labkey.py does the same from a real key's runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import HANDIN_RUNS, check_planted, glance_rows, standin_key, standin_runs  # noqa: E402

from mmanalysis import classreport, plantclass, synth  # noqa: E402
from mmanalysis.reader import read_run  # noqa: E402


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    d = tmp_path_factory.mktemp("plant")
    source = standin_runs(d / "source", HANDIN_RUNS, count=60)
    synth._handin_run(source / "8051", "exp1-verification", "verification", "bench", 60, 5, profiler_kind="8051")
    key = standin_key(d / "key")
    out = d / "class"
    got = plantclass.plant_class(source, out, groups=20, key=key)
    return out, got


def test_the_planted_groups(planted):
    out, got = planted
    assert [p.what for p in got].count("clean") == 15
    assert {p.group: p.what for p in got if p.what != "clean"} == {
        "group-03": "corrupted", "group-05": "missing", "group-07": "copy of group-02", "group-09": "8051",
        "group-11": "short"}
    assert json.loads((out / "planted.json").read_text())[6] == {"group": "group-07", "what": "copy of group-02",
                                                                  "run": None}
    # varied: no two groups keep the same rows of a run, and what they keep is the source's, count and checksum anew
    shas = {}
    for g in ("group-01", "group-02", "group-04", "group-20"):
        csv = out / g / "results" / "exp1-verification.csv"
        rs = read_run(csv)                       # its csv_sha256 matches: readable
        shas[g] = json.loads(csv.with_suffix(".json").read_text())["csv_sha256"]
        assert len(rs.df) == 60 - bin(int(g[-2:])).count("1")
    assert len(set(shas.values())) == 4


def test_the_class_report_marks_each_group_as_planted(planted, tmp_path):
    out, got = planted
    rep = classreport.class_report(out, tmp_path / "rep", figures=False)
    md = rep.md.read_text()
    check_planted(md, json.loads((out / "planted.json").read_text()))
    rows = glance_rows(md)
    # the generated runs' figures are the key's kind: the clean groups pass
    assert rows["group-01"][1] == "passed", rows["group-01"]
    # the first page fits one screen: 20 lines of groups, a few of kinds, two sentences
    page = md.split("## Details", 1)[0]
    assert len(page.splitlines()) <= 45, len(page.splitlines())
