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
from mmanalysis.paper import BY_KEY  # noqa: E402
from mmanalysis.reader import read_run  # noqa: E402


pytestmark = pytest.mark.long    # a class of 20 groups planted from real runs and its report: 20 s


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


@pytest.fixture(scope="module")
def report(planted, tmp_path_factory):
    """The class report over the planted class, figures included, made once for the tests below."""
    out, _ = planted
    cr = classreport.read_class(out)
    return cr, classreport.class_report(cr, tmp_path_factory.mktemp("rep") / "rep")


def test_the_class_report_marks_each_group_as_planted(planted, report):
    out, got = planted
    _, rep = report
    md = rep.md.read_text()
    check_planted(md, json.loads((out / "planted.json").read_text()))
    rows = glance_rows(md)
    # the generated runs' figures are the key's kind: the clean groups pass
    assert rows["group-01"][1] == "passed", rows["group-01"]
    # the first page fits one screen: 20 lines of groups, a few of kinds, two sentences
    page = md.split("## Details", 1)[0]
    assert len(page.splitlines()) <= 45, len(page.splitlines())


def test_the_figures_scale_to_twenty_groups(report):
    """Past a few groups an experiment's figure is a row a group (classfigure), not a CDF line each: every row of
    the table is a row of the figure (a row without a result says why), the key's on top, the legend inside the
    axes above the rows, no label over another."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from test_figures import check_no_overlap

    cr, rep = report
    assert sorted(f.name for f in rep.figures.glob("*.png")) == sorted(
        f"groups-{p.key}.png" for p in classreport.PAPER)
    for p in classreport.PAPER:
        rows = rep.tables[p.key]
        fig = classreport.group_figure(cr, p, rows)
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels[::-1][:len(labels) - len(rows)] == [x for x in labels[::-1] if x.startswith("key")]
        assert labels[::-1][len(labels) - len(rows):] == [r.values["group"] for r in rows], p.key
        absent = {t.get_gid()[7:] for t in ax.texts if (t.get_gid() or "").startswith("absent:")}
        assert absent == {r.values["group"] for r in rows if not r.shown}, p.key
        FigureCanvasAgg(fig)
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        leg, frame = ax.get_legend().get_window_extent(r), ax.get_window_extent(r)
        assert frame.x0 <= leg.x0 and leg.x1 <= frame.x1 and frame.y0 <= leg.y0 and leg.y1 <= frame.y1, p.key
        check_no_overlap(fig)
    assert "group-03" in {t.get_gid()[7:] for t in classreport.group_figure(
        cr, BY_KEY["mixed2"], rep.tables["mixed2"]).axes[0].texts if t.get_gid()}
